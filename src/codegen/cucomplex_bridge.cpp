#include "codegen/cucomplex_bridge.hpp"

#include <cctype>
#include <string_view>

#include "core/templates.hpp"

namespace kernc::codegen {

namespace {

constexpr std::string_view kCucomplexBridge = "kernc/cucomplex_bridge.cuh";

// Whether `line` is `#include <cuComplex.h>`, with any spaces around the '#' and the words.
bool includes_cucomplex(std::string_view line) {
  size_t pos = 0;
  auto skip = [&] {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
  };
  auto take = [&](std::string_view word) {
    skip();
    if (line.compare(pos, word.size(), word) != 0) return false;
    pos += word.size();
    return true;
  };
  return take("#") && take("include") && take("<cuComplex.h>");
}

}  // namespace

void bridge_cucomplex(Program& program) {
  if (program.source.find("cuComplex.h") == std::string::npos) return;
  std::string out;
  out.reserve(program.source.size() + 128);
  bool bridged = false;
  size_t line_number = 0;
  for (size_t start = 0; start < program.source.size();) {
    size_t end = program.source.find('\n', start);
    const bool last = end == std::string::npos;
    if (last) end = program.source.size();
    const std::string_view line(program.source.data() + start, end - start);
    ++line_number;
    out.append(line);
    out += '\n';
    if (includes_cucomplex(line)) {
      out += "#include \"";
      out += kCucomplexBridge;
      out += "\"\n#line " + std::to_string(line_number + 1) + "\n";
      bridged = true;
    }
    start = end + 1;
    if (last) break;
  }
  if (!bridged) return;  // named in a comment or a string: nothing to bridge
  if (program.source.empty() || program.source.back() != '\n') out.pop_back();
  program.source = std::move(out);
  program.options.headers[std::string(kCucomplexBridge)] = std::string(template_file("cucomplex_bridge.cuh"));
}

}  // namespace kernc::codegen
