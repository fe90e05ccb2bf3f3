#pragma once
// Small scanners for C++ source text (kernel code, snippets, declarations), shared by the
// layers that read it: none parses C++, each only steps over what must not be read as code.

#include <cstddef>
#include <string>
#include <string_view>

namespace kernc::core {

/// A letter, digit or underscore: a character of an identifier.
bool is_word_char(char c);

/// Whether `word` stands at `pos` of `text` as a whole identifier (no word character
/// right before or after it).
bool word_at(std::string_view text, std::size_t pos, std::string_view word);

/// `text` with each run of whitespace made one space, and none at either end.
std::string squeeze_spaces(std::string_view text);

/// Where the code after a comment or literal starting at `pos` resumes (a `//` comment
/// stops before its newline; raw strings R"d(...)d" are known), or `pos` when none starts
/// there. An unterminated one runs to the end of `text`.
std::size_t skip_comment_or_literal(std::string_view text, std::size_t pos);

/// `text` with every comment made spaces, newlines kept (so lines and columns stay where
/// they were), and string and character literals kept as they are.
std::string blank_comments(std::string_view text);

}  // namespace kernc::core
