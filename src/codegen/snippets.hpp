#pragma once
// NOTE [ snippet lines ]
// Each user snippet is spliced into generated code between two #line directives:
//   #line 1 "<kernel> <snippet>"      so the compiler reports the snippet's own lines,
//   <snippet text>
//   #line <n> "<program name>"         back to the generated file's real numbering.
// The second directive's number is only known once the whole source is rendered, so
// wrap_snippet leaves a marker and finish_line_directives fills it in.
// map_log_to_snippets (kernels.hpp) turns "<kernel> <snippet>(3)" into
// "<kernel> <snippet>, line 3" in compiler logs.

#include <string>
#include <string_view>

namespace kernc::codegen {

/// `text` wrapped for splicing, ending in a newline; empty text gives an empty string.
std::string wrap_snippet(std::string_view kernel_name, std::string_view snippet_name, std::string_view text,
                         std::string_view suffix = "");

/// Replaces the markers wrap_snippet left with real line numbers of `source`.
std::string finish_line_directives(std::string source, std::string_view program_name);

/// `log` without a diagnostic that repeats an earlier one word for word (with its quoted
/// source and caret lines): map_error_to_snippets applies it.
std::string drop_repeated_diagnostics(const std::string& log);

}  // namespace kernc::codegen
