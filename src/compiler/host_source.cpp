// A forward scanner, linear in the source's length, like src/kernels/raw_declarations.cpp:
// sources can be megabytes long.

#include "compiler/host_source.hpp"
#include "core/source_text.hpp"

#include <algorithm>
#include <cctype>

namespace kernc::compiler {

namespace {

// Calls `visit(word, begin)` for each identifier outside comments and literals; stops when
// it returns false.
template <class Visit>
void for_each_word(std::string_view text, Visit visit) {
  for (size_t pos = 0; pos < text.size();) {
    size_t skipped = core::skip_comment_or_literal(text, pos);
    if (skipped != pos) {
      pos = skipped;
      continue;
    }
    if (core::is_word_char(text[pos])) {
      size_t end = pos;
      while (end < text.size() && core::is_word_char(text[end])) ++end;
      if (!std::isdigit(static_cast<unsigned char>(text[pos])) && !visit(text.substr(pos, end - pos), pos)) return;
      pos = end;
      continue;
    }
    ++pos;
  }
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

bool names_thread_function(std::string_view word) {
  static constexpr std::string_view kPrefixes[] = {"__syncthreads", "__syncwarp", "__shfl", "__match_"};
  static constexpr std::string_view kWords[] = {
      "__all_sync",       "__any_sync",      "__ballot_sync",   "__uni_sync",        "__activemask",
      "cooperative_groups", "this_grid",     "this_thread_block", "tiled_partition", "coalesced_threads",
      "shuffle_down",     "grid_group",      "thread_block_tile"};
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes), [&](std::string_view p) { return starts_with(word, p); }) ||
         std::any_of(std::begin(kWords), std::end(kWords), [&](std::string_view w) { return word == w; });
}

// The replacement of the declaration `statement` (from `extern` to just before its `;`), or
// "" when it is not `extern ... __shared__ ... name [] [dims...]`.
std::string dynamic_shared_pointer(std::string_view statement) {
  // Drop the words extern and __shared__, and __align__(...).
  std::string type;
  size_t pos = 0;
  bool shared = false;
  while (pos < statement.size()) {
    if (core::is_word_char(statement[pos]) && (pos == 0 || !core::is_word_char(statement[pos - 1]))) {
      size_t end = pos;
      while (end < statement.size() && core::is_word_char(statement[end])) ++end;
      std::string_view word = statement.substr(pos, end - pos);
      if (word == "extern") {
        pos = end;
        continue;
      }
      if (word == "__shared__") {
        shared = true;
        pos = end;
        continue;
      }
      if (word == "__align__") {
        size_t open = statement.find_first_not_of(" \t\r\n", end);
        if (open == std::string_view::npos || statement[open] != '(') return {};
        int depth = 0;
        for (pos = open; pos < statement.size(); ++pos) {
          if (statement[pos] == '(') ++depth;
          if (statement[pos] == ')' && --depth == 0) break;
        }
        ++pos;
        continue;
      }
    }
    type += statement[pos++];
  }
  if (!shared) return {};
  // type now is "T name [] [dims]...": split off the name and the brackets.
  std::string text = core::squeeze_spaces(type);
  size_t bracket = text.find('[');
  if (bracket == std::string::npos) return {};
  std::string head = text.substr(0, bracket), dims = text.substr(bracket);
  while (!head.empty() && head.back() == ' ') head.pop_back();
  size_t name_start = head.size();
  while (name_start > 0 && core::is_word_char(head[name_start - 1])) --name_start;
  std::string name = head.substr(name_start), element = core::squeeze_spaces(head.substr(0, name_start));
  std::string first = core::squeeze_spaces(dims.substr(0, dims.find(']') + 1));
  if (name.empty() || element.empty() || (first != "[]" && first != "[ ]")) return {};
  std::string rest = dims.substr(dims.find(']') + 1);
  // "T (* const name)[32]" for an array of arrays; "T* const name" (no parentheses to warn of) else.
  std::string declarator = rest.empty() ? "* const " + name : " (* const " + name + ")" + rest;
  std::string pointer = rest.empty() ? "*" : " (*)" + rest;
  return "static thread_local " + element + declarator + " = static_cast<" + element + pointer +
         ">(kernc_host_dynamic_shared())";
}

}  // namespace

bool needs_threads(std::string_view source) {
  bool found = false;
  for_each_word(source, [&](std::string_view word, size_t) {
    found = names_thread_function(word);
    return !found;
  });
  return found;
}

std::string rewrite_dynamic_shared(std::string_view source) {
  std::string out;
  size_t copied = 0;
  for_each_word(source, [&](std::string_view word, size_t at) {
    if (word != "extern" || at < copied) return true;
    size_t end = source.find(';', at);
    if (end == std::string_view::npos) return true;
    std::string_view statement = source.substr(at, end - at);
    if (statement.find("__shared__") == std::string_view::npos || statement.find('{') != std::string_view::npos) {
      return true;
    }
    std::string replacement = dynamic_shared_pointer(statement);
    if (replacement.empty()) return true;
    out.append(source.substr(copied, at - copied));
    out += replacement;
    out.append(static_cast<size_t>(std::count(statement.begin(), statement.end(), '\n')), '\n');
    copied = end;  // the ';' stays
    return true;
  });
  out.append(source.substr(copied));
  return out;
}

}  // namespace kernc::compiler
