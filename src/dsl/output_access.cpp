#include "dsl/output_access.hpp"

#include <cctype>

#include "core/source_text.hpp"
#include "dsl/params.hpp"

namespace kernc::dsl {

namespace {

// Where the word `word` first stands alone in `text`, or npos.
size_t find_word(std::string_view text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !core::is_word_char(text[at - 1])) && (end == text.size() || !core::is_word_char(text[end]))) return at;
  }
  return std::string_view::npos;
}

size_t skip_space_forward(std::string_view text, size_t at) {
  while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  return at;
}

// Whether the output `name` is assigned before anything can read or skip it.
bool assigned_first(std::string_view op, std::string_view name) {
  const size_t at = find_word(op, name);
  if (at == std::string_view::npos) return false;
  const std::string_view before = op.substr(0, at);
  size_t last = before.find_last_not_of(" \t\r\n\f\v");
  if (last != std::string_view::npos && before[last] != ';') return false;
  if (before.find_first_of("{}") != std::string_view::npos) return false;
  for (std::string_view word : {"continue", "switch", "case", "default"}) {
    if (find_word(before, word) != std::string_view::npos) return false;
  }
  const size_t eq = skip_space_forward(op, at + name.size());
  if (eq >= op.size() || op[eq] != '=' || (eq + 1 < op.size() && op[eq + 1] == '=')) return false;
  std::string_view rest = op.substr(eq + 1);
  rest = rest.substr(0, rest.find(';'));
  return find_word(rest, name) == std::string_view::npos;
}

}  // namespace

OutputAccess scan_output_access(std::string_view operation, std::string_view preamble, std::string_view loop_prep,
                                const std::vector<std::string>& outputs) {
  OutputAccess access;
  access.write_only.assign(outputs.size(), false);
  const std::string op = core::blank_comments(operation);
  for (std::string_view word : {"return", "break", "goto", "throw", "asm"}) {
    if (find_word(op, word) != std::string_view::npos) return access;
  }
  // An output read or written through its raw view in the operation (`y = x * 2; z =
  // _raw_y[i] + 1;`): as in CuPy, `y` is the memory `_raw_y` views, so it is never a register.
  for (const std::string& name : outputs) {
    if (find_word(op, "_raw_" + name) != std::string_view::npos) return access;
  }
  access.in_registers = true;
  const bool macros = names_word(operation, "define") || names_word(preamble, "define") || names_word(loop_prep, "define");
  if (macros || op.find_first_of("\"'") != std::string::npos) return access;
  for (size_t k = 0; k < outputs.size(); ++k) access.write_only[k] = assigned_first(op, outputs[k]);
  return access;
}

}  // namespace kernc::dsl
