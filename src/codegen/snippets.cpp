#include "codegen/snippets.hpp"

#include <regex>

#include <fmt/format.h>

#include "kernc/kernels.hpp"

namespace kernc::codegen {

namespace {
constexpr std::string_view kRestoreMarker = "#line KERNC_RESTORE";
}

std::string wrap_snippet(std::string_view kernel_name, std::string_view snippet_name, std::string_view text,
                         std::string_view suffix) {
  if (text.empty()) return {};
  std::string out = fmt::format("#line 1 \"{} {}\"\n", kernel_name, snippet_name);
  out.append(text);
  out.append(suffix);
  out += '\n';
  out.append(kRestoreMarker);
  out += '\n';
  return out;
}

std::string finish_line_directives(std::string source, std::string_view program_name) {
  size_t line = 1;
  size_t pos = 0;
  std::string out;
  out.reserve(source.size() + 256);
  while (pos < source.size()) {
    size_t end = source.find('\n', pos);
    std::string_view text(source.data() + pos, (end == std::string::npos ? source.size() : end) - pos);
    if (text == kRestoreMarker) {
      // The directive names the line that follows it.
      out += fmt::format("#line {} \"{}\"", line + 1, program_name);
    } else {
      out.append(text);
    }
    if (end == std::string::npos) break;
    out += '\n';
    pos = end + 1;
    ++line;
  }
  return out;
}

}  // namespace kernc::codegen

namespace kernc {

std::string map_log_to_snippets(const std::string& log) {
  // NVRTC: `name what(12): error` ; HIPRTC (clang): `name what:12:5: error`.
  static const std::regex kNvrtc(R"((\w+ (?:operation|preamble|loop_prep|after_loop|map_expr|reduce_expr|post_map_expr|identity))\((\d+)\): )");
  static const std::regex kClang(R"((\w+ (?:operation|preamble|loop_prep|after_loop|map_expr|reduce_expr|post_map_expr|identity)):(\d+):(\d+): )");
  std::string mapped = std::regex_replace(log, kNvrtc, "$1, line $2: ");
  return std::regex_replace(mapped, kClang, "$1, line $2, column $3: ");
}

Error map_error_to_snippets(const Error& error) {
  const CompileFailure* failure = error.compile_failure();
  if (!failure) return error;
  CompileFailure mapped = *failure;
  mapped.log = map_log_to_snippets(failure->log);
  return Error(map_log_to_snippets(error.what()), std::move(mapped));
}

std::string number_lines(const std::string& source) {
  std::string out;
  size_t line = 1, pos = 0;
  while (pos <= source.size()) {
    size_t end = source.find('\n', pos);
    out += fmt::format("{:>5} | {}\n", line++, source.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

}  // namespace kernc
