#include "codegen/snippets.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>

#include "core/source_text.hpp"
#include "kernc/diagnostics.hpp"

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

namespace {

// The snippet names wrap_snippet is given (see NOTE [ snippet lines ]).
constexpr std::string_view kSnippetNames[] = {"operation", "preamble",    "loop_prep",     "after_loop",
                                              "map_expr",  "reduce_expr", "post_map_expr", "identity"};

// Digits of `log` from `pos`; returns how many (0 when none).
size_t digits_at(std::string_view log, size_t pos) {
  size_t end = pos;
  while (end < log.size() && std::isdigit(static_cast<unsigned char>(log[end]))) ++end;
  return end - pos;
}

// The snippet name that starts at `pos`, or an empty view.
std::string_view snippet_name_at(std::string_view log, size_t pos) {
  for (std::string_view name : kSnippetNames) {
    if (log.compare(pos, name.size(), name) == 0) return name;
  }
  return {};
}

}  // namespace

// A single forward scan, linear in the log's length and with no recursion: compiler logs
// quote user tokens of any length, and std::regex recurses once per character (issue 15).
std::string map_log_to_snippets(const std::string& text) {
  // NVRTC writes `<kernel> <snippet>(12): `, clang (HIPRTC) `<kernel> <snippet>:12:5: `.
  const std::string_view log = text;
  std::string out;
  out.reserve(log.size() + 64);
  size_t copied = 0;  // log[0, copied) is in `out`
  for (size_t space = log.find(' '); space != std::string_view::npos; space = log.find(' ', space + 1)) {
    if (space == 0 || !core::is_word_char(log[space - 1])) continue;  // `<kernel>` is a word before the space
    const std::string_view name = snippet_name_at(log, space + 1);
    if (name.empty()) continue;
    const size_t after = space + 1 + name.size();
    std::string replacement;
    size_t end = after;
    if (after < log.size() && log[after] == '(') {
      const size_t line = digits_at(log, after + 1);
      if (line == 0 || log.compare(after + 1 + line, 3, "): ") != 0) continue;
      replacement = fmt::format(", line {}: ", log.substr(after + 1, line));
      end = after + 1 + line + 3;
    } else if (after < log.size() && log[after] == ':') {
      const size_t line = digits_at(log, after + 1);
      if (line == 0 || after + 1 + line >= log.size() || log[after + 1 + line] != ':') continue;
      const size_t column = digits_at(log, after + 2 + line);
      if (column == 0 || log.compare(after + 2 + line + column, 2, ": ") != 0) continue;
      replacement = fmt::format(", line {}, column {}: ", log.substr(after + 1, line), log.substr(after + 2 + line, column));
      end = after + 2 + line + column + 2;
    } else {
      continue;
    }
    out.append(log.substr(copied, after - copied));
    out += replacement;
    copied = end;
    space = end - 1;  // the next match starts after this one, as regex_replace's would
  }
  out.append(log.substr(copied));
  return out;
}

namespace {

// Whether a log line starts a diagnostic: NVRTC's "x.cu(3): error: ...", a compiler's
// "x.cu:3:5: warning: ...", and the same once mapped to a snippet.
bool starts_diagnostic(std::string_view line) {
  if (line.empty() || line[0] == ' ' || line[0] == '\t') return false;
  for (std::string_view kind : {": error", ": warning", ": remark", ": note", ": catastrophic error"}) {
    if (line.find(kind) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

namespace codegen {

// A snippet that is spliced into generated code twice (the contiguous kernel's vector and
// scalar paths) or into two instantiations draws the same diagnostic twice from a compiler
// that reports each: the user's error reads once (issue 34).
std::string drop_repeated_diagnostics(const std::string& log) {
  std::string out;
  std::vector<std::string_view> seen;
  bool dropping = false;
  std::size_t start = 0;
  const std::string_view text = log;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    const std::string_view line = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    const bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t' || line[0] == '^');
    if (starts_diagnostic(line)) {
      dropping = std::find(seen.begin(), seen.end(), line) != seen.end();
      if (!dropping) seen.push_back(line);
    } else if (!indented && !line.empty()) {
      dropping = false;  // a line of its own ("In function ...", "1 error detected ..."): kept
    }
    // A dropped diagnostic takes its quoted source and caret lines, and the blank line after them.
    if (!dropping) {
      out.append(line.data(), line.size());
      if (end != std::string_view::npos) out += '\n';
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  // A log that did not end in a newline does not end in one after a dropped last line.
  if (!out.empty() && out.back() == '\n' && !log.empty() && log.back() != '\n') out.pop_back();
  return out;
}

}  // namespace codegen

Error map_error_to_snippets(const Error& error) {
  const CompileFailure* failure = error.compile_failure();
  if (!failure) return error;
  CompileFailure mapped = *failure;
  mapped.log = codegen::drop_repeated_diagnostics(map_log_to_snippets(failure->log));
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
