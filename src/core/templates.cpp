#include "core/templates.hpp"

#include <fmt/format.h>

#include "kernc/error.hpp"

namespace kernc::codegen {

std::string_view template_file(std::string_view name) {
  for (const auto& file : embedded_templates()) {
    if (file.name == name) return file.content;
  }
  std::string known;
  for (const auto& file : embedded_templates()) known += fmt::format("{}{}", known.empty() ? "" : ", ", file.name);
  throw Error(ErrorCode::not_found, fmt::format("no template named {} is built in; there are: {}", name, known));
}

}  // namespace kernc::codegen
