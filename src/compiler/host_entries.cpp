#include "compiler/host_entries.hpp"
#include "core/source_text.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

#include <fmt/format.h>

namespace kernc::compiler {

namespace {

bool contains_word(std::string_view text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    if (core::word_at(text, at, word)) return true;
  }
  return false;
}

bool says_extern_c(std::string_view text) {
  for (size_t at = text.find("extern"); at != std::string_view::npos; at = text.find("extern", at + 1)) {
    size_t k = at + 6;
    while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
    if (text.compare(k, 3, "\"C\"") == 0) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> extern_c_kernels(const std::string& source) {
  const std::string text = core::blank_comments(source);
  std::vector<std::string> names;
  // Each open brace: whether it opens an `extern "C" {` block, and whether it is a scope
  // where kernels are declared (namespace or extern "C"), as opposed to a body.
  struct Brace {
    bool extern_c;
    bool declarations;
  };
  std::vector<Brace> braces;
  size_t statement = 0;  // where the current declaration starts
  for (size_t k = 0; k < text.size(); ++k) {
    const char c = text[k];
    if (c == '"' || c == '\'') {
      for (++k; k < text.size() && text[k] != c && text[k] != '\n'; k += text[k] == '\\' ? 2 : 1) {
      }
      continue;
    }
    if (c == '#' ) {  // a preprocessor line is not part of a declaration
      while (k < text.size() && text[k] != '\n') k += text[k] == '\\' ? 2 : 1;
      statement = k + 1;
      continue;
    }
    if (c == '{') {
      const std::string_view head(text.data() + statement, k - statement);
      const bool in_declarations = braces.empty() || braces.back().declarations;
      const bool extern_block = in_declarations && says_extern_c(head) && head.find('(') == std::string_view::npos;
      const bool name_space = in_declarations && contains_word(head, "namespace");
      braces.push_back({extern_block, extern_block || name_space});
      statement = k + 1;
      continue;
    }
    if (c == '}') {
      if (!braces.empty()) braces.pop_back();
      statement = k + 1;
      continue;
    }
    if (c == ';') {
      statement = k + 1;
      continue;
    }
    if (c != '_' || !core::word_at(text, k, "__global__")) continue;
    if (!braces.empty() && !braces.back().declarations) continue;
    const std::string_view head(text.data() + statement, k - statement);
    const bool in_extern_block =
        std::any_of(braces.begin(), braces.end(), [](const Brace& brace) { return brace.extern_c; });
    if (contains_word(head, "template") || (!in_extern_block && !says_extern_c(head))) continue;
    // The name is the identifier before the first '(' that is not an attribute's.
    size_t pos = k + 10;
    while (pos < text.size()) {
      const size_t paren = text.find('(', pos);
      if (paren == std::string::npos) break;
      size_t end = paren;
      while (end > pos && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
      size_t begin = end;
      while (begin > pos && core::is_word_char(text[begin - 1])) --begin;
      const std::string name = text.substr(begin, end - begin);
      if (name == "__launch_bounds__" || name == "__attribute__" || name == "__align__" || name.empty()) {
        int depth = 0;  // skip the attribute's argument list
        for (pos = paren; pos < text.size(); ++pos) {
          if (text[pos] == '(') ++depth;
          if (text[pos] == ')' && --depth == 0) break;
        }
        ++pos;
        continue;
      }
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      break;
    }
  }
  return names;
}

std::string host_lowered_name(std::size_t index) { return fmt::format("kernc_host_expr_{}", index); }

std::string host_entries(const std::vector<std::string>& kernels, const std::vector<std::string>& name_expressions,
                         bool needs_threads, const std::string& target) {
  std::string text = "\n#line 1 \"kernc host entries\"\n";
  text += "namespace kernc_host_entries {\n";
  text += "template <auto P> constexpr kernc_host_entry entry_of() {\n";
  text += "  if constexpr (std::is_function<typename std::remove_pointer<decltype(P)>::type>::value) {\n";
  text += "    return &kernc_host_run<P>;\n";
  text += "  } else {\n";
  text += "    return nullptr;\n";
  text += "  }\n";
  text += "}\n";
  text += "template <auto P> constexpr kernc_host_global global_of(const char* name) {\n";
  text += "  if constexpr (std::is_function<typename std::remove_pointer<decltype(P)>::type>::value) {\n";
  text += "    return kernc_host_global{nullptr, nullptr, 0};\n";
  text += "  } else {\n";
  text += "    return kernc_host_global{name, (void*)P, sizeof(*P)};\n";
  text += "  }\n";
  text += "}\n";
  text += "}  // namespace kernc_host_entries\n";
  text += "extern \"C\" const unsigned kernc_host_abi_version = KERNC_HOST_ABI_VERSION;\n";
  text += fmt::format("extern \"C\" const int kernc_host_needs_threads = {};\n", needs_threads ? 1 : 0);
  text += fmt::format("extern \"C\" const char kernc_host_target[] = \"{}\";\n", target);
  auto address_of = [](const std::string& expression) {
    return expression.rfind('&', 0) == 0 ? expression : "&" + expression;
  };
  text += "extern \"C\" const kernc_host_kernel kernc_host_kernels[] = {\n";
  for (const auto& name : kernels) text += fmt::format("    {{\"{}\", &kernc_host_run<&{}>}},\n", name, name);
  for (size_t k = 0; k < name_expressions.size(); ++k) {
    text += fmt::format("    {{\"{}\", kernc_host_entries::entry_of<{}>()}},\n", host_lowered_name(k),
                        address_of(name_expressions[k]));
  }
  text += "    {nullptr, nullptr}};\n";
  text += "extern \"C\" const kernc_host_global kernc_host_globals[] = {\n";
  for (size_t k = 0; k < name_expressions.size(); ++k) {
    text += fmt::format("    kernc_host_entries::global_of<{}>(\"{}\"),\n", address_of(name_expressions[k]),
                        host_lowered_name(k));
  }
  text += "    {nullptr, nullptr, 0}};\n";
  return text;
}

}  // namespace kernc::compiler
