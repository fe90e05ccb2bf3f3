#include "core/source_text.hpp"

#include <cctype>

namespace kernc::core {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool word_at(std::string_view text, std::size_t pos, std::string_view word) {
  if (pos > text.size() || text.compare(pos, word.size(), word) != 0) return false;
  if (pos > 0 && is_word_char(text[pos - 1])) return false;
  const std::size_t end = pos + word.size();
  return end >= text.size() || !is_word_char(text[end]);
}

std::string squeeze_spaces(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::size_t skip_comment_or_literal(std::string_view text, std::size_t pos) {
  if (text.compare(pos, 2, "//") == 0) {
    std::size_t end = text.find('\n', pos);
    return end == std::string_view::npos ? text.size() : end;
  }
  if (text.compare(pos, 2, "/*") == 0) {
    std::size_t end = text.find("*/", pos + 2);
    return end == std::string_view::npos ? text.size() : end + 2;
  }
  if (text[pos] == '"' || text[pos] == '\'') {
    // A raw string R"delim( ... )delim" (the prefix letters were passed as a word).
    if (text[pos] == '"' && pos > 0 && text[pos - 1] == 'R') {
      std::size_t open = text.find('(', pos);
      if (open != std::string_view::npos) {
        std::string close = ")" + std::string(text.substr(pos + 1, open - pos - 1)) + "\"";
        std::size_t end = text.find(close, open);
        return end == std::string_view::npos ? text.size() : end + close.size();
      }
    }
    const char quote = text[pos];
    for (std::size_t at = pos + 1; at < text.size(); ++at) {
      if (text[at] == '\\') {
        ++at;
      } else if (text[at] == quote || text[at] == '\n') {
        return at + 1;
      }
    }
    return text.size();
  }
  return pos;
}

std::string blank_comments(std::string_view text) {
  std::string out(text);
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = skip_comment_or_literal(text, pos);
    if (end == pos) {
      ++pos;
      continue;
    }
    if (text[pos] == '/') {
      for (std::size_t k = pos; k < end; ++k) {
        if (out[k] != '\n') out[k] = ' ';
      }
    }
    pos = end;
  }
  return out;
}

}  // namespace kernc::core
