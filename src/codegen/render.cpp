#include "codegen/render.hpp"

#include <cctype>
#include <set>

#include <fmt/format.h>

#include "core/templates.hpp"
#include "kernc/error.hpp"

namespace kernc::codegen {

std::string render(std::string_view template_name, std::string_view text, const RenderValues& values) {
  std::string out;
  out.reserve(text.size() + 256);
  std::set<std::string> used;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = text.find("${", pos);
    if (open == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    out.append(text.substr(pos, open - pos));
    size_t close = text.find('}', open + 2);
    std::string_view name = close == std::string_view::npos ? std::string_view() : text.substr(open + 2, close - open - 2);
    bool valid = !name.empty();
    for (char c : name) valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!valid) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("template {}: malformed placeholder at offset {}: expected ${{name}}", template_name, open));
    }
    auto found = values.find(std::string(name));
    if (found == values.end()) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("template {}: placeholder ${{{}}} has no value", template_name, name));
    }
    out += found->second;
    used.insert(found->first);
    pos = close + 1;
  }
  for (const auto& [name, value] : values) {
    if (!used.count(name)) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("template {}: value for ${{{}}} given but the template has no such placeholder",
                              template_name, name));
    }
  }
  return out;
}


}  // namespace kernc::codegen
