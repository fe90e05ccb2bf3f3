#include "dsl/params.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "base/log.hpp"
#include "kernc/error.hpp"
#include "kernc/limits.hpp"

namespace kernc::dsl {

namespace {

Error bad(std::string message) { return Error(ErrorCode::invalid_argument, std::move(message)); }

bool is_identifier(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    size_t start = pos;
    while (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    if (pos > start) words.push_back(text.substr(start, pos - start));
  }
  return words;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

bool looks_like_type(std::string_view word) {
  return parse_dtype(word).has_value() || (word.size() == 1 && std::isalpha(static_cast<unsigned char>(word[0])));
}

void check_param_name(std::string_view name, std::string_view param, std::string_view which) {
  check_size(fmt::format("{}: a parameter name", which), name, limits::kMaxNameLength);
  if (!is_identifier(name)) {
    throw bad(fmt::format("{}: \"{}\": the name \"{}\" is not a C identifier", which, param, name));
  }
  if (name == "i") {
    throw bad(fmt::format("{}: \"{}\": the name i is reserved for the element index", which, param));
  }
  if (name.front() == '_') {
    throw bad(fmt::format("{}: \"{}\": names starting with _ are reserved for kernc", which, param));
  }
  if (is_cpp_keyword(name)) {
    throw bad(fmt::format("{}: \"{}\": \"{}\" is a C++ keyword and cannot name a parameter", which, param, name));
  }
  // Names the generated code uses unqualified: a parameter must not hide them.
  static const char* kBuiltins[] = {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "kernc"};
  for (const char* builtin : kBuiltins) {
    if (name == builtin) {
      throw bad(fmt::format("{}: \"{}\": \"{}\" is reserved: it names a CUDA built-in or kernc's "
                            "namespace, which the generated code uses",
                            which, param, name));
    }
  }
}

Param parse_one(std::string_view text, std::string_view which, bool output) {
  auto words = split_words(text);
  Param param;
  param.text = std::string(text);
  param.output = output;
  if (words.size() == 3) {
    if (words[0] != "raw") {
      throw bad(fmt::format("{}: \"{}\": unknown modifier \"{}\"; the only modifier is raw", which, text, words[0]));
    }
    param.raw = true;
    words.erase(words.begin());
  } else if (words.size() > 3) {
    // The usual cause is a missing comma: "float32 x float32 y".
    for (size_t k = 2; k + 1 < words.size(); ++k) {
      if (looks_like_type(words[k]) || words[k] == "raw") {
        throw bad(fmt::format("{}: \"{}\": expected \"[raw] TYPE NAME\"; is a comma missing before \"{}\"?", which,
                              text, words[k]));
      }
    }
    throw bad(fmt::format("{}: \"{}\": expected \"[raw] TYPE NAME\", found {} words", which, text, words.size()));
  } else if (words.size() < 2) {
    throw bad(fmt::format("{}: \"{}\": expected \"[raw] TYPE NAME\"{}", which, text,
                          words.size() == 1 ? ": a type and a name" : ", found an empty parameter (a stray comma?)"));
  }
  std::string_view type = words[0];
  if (auto dtype = parse_dtype(type)) {
    param.dtype = dtype;
    // NOTE [ ambiguous float ] (src/core/signature.cpp): a parameter keeps CuPy's meaning,
    // so that CuPy kernels port verbatim, but never silently.
    if (type == "float") {
      detail::logger().warn("{}: \"{}\": \"float\" is NumPy's float64 here, as in CuPy; CUDA's float is float32: "
                            "write float32 or float64 to say which",
                            which, text);
    }
  } else if (type.size() == 1 && std::isalpha(static_cast<unsigned char>(type[0]))) {
    param.placeholder = std::string(type);
  } else {
    throw bad(fmt::format("{}: \"{}\": unknown type \"{}\"; expected a dtype (bool, int8 ... uint64, "
                          "float8_e4m3fn, float8_e5m2, float16, bfloat16, float32, float64, complex64, "
                          "complex128, or a NumPy alias such as float or int) or a one-letter type placeholder "
                          "such as T",
                          which, text, type));
  }
  param.name = std::string(words[1]);
  check_param_name(param.name, text, which);
  return param;
}

}  // namespace

bool is_cpp_keyword(std::string_view word) {
  static const char* kKeywords[] = {
      "alignas", "alignof", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const", "constexpr",
      "const_cast", "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
      "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long",
      "mutable", "namespace", "new", "noexcept", "nullptr", "operator", "private", "protected", "public",
      "register", "reinterpret_cast", "return", "short", "signed", "sizeof", "static", "static_assert",
      "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef",
      "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while"};
  return std::any_of(std::begin(kKeywords), std::end(kKeywords), [word](const char* k) { return word == k; });
}

std::vector<Param> parse_params(std::string_view text, std::string_view which, bool output) {
  check_size(which, text, limits::kMaxParamsText);
  std::vector<Param> params;
  if (trim(text).empty()) return params;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    std::string_view piece = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    params.push_back(parse_one(trim(piece), which, output));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return params;
}

void check_size(std::string_view what, std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return;
  constexpr std::size_t kShown = 40;
  throw bad(fmt::format("{} is {} bytes long (\"{}...\"), over kernc's limit of {} bytes (see kernc/limits.hpp)", what,
                        text.size(), text.substr(0, kShown), limit));
}

bool names_word(std::string_view text, std::string_view word) {
  auto is_word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !is_word_char(text[at - 1])) && (end == text.size() || !is_word_char(text[end]))) return true;
  }
  return false;
}

void check_raw_kernel_name(std::string_view name) {
  check_size("the kernel name", name, limits::kMaxNameLength);
  if (!is_identifier(name)) {
    throw bad(fmt::format("kernel name \"{}\" is not a C identifier (letters, digits and _, not starting with a digit)",
                          name));
  }
  if (is_cpp_keyword(name)) throw bad(fmt::format("kernel name \"{}\" is a C++ keyword", name));
}

void check_kernel_name(std::string_view name) {
  check_raw_kernel_name(name);
  // Generated code names its own helpers _ind, _raw_x, _reduce_groups, ...: a kernel named
  // _something could collide with one.
  if (name.front() == '_') throw bad(fmt::format("kernel name \"{}\": names starting with _ are reserved", name));
}

Signature parse_signature(std::string_view in_params, std::string_view out_params, std::string_view kernel_name) {
  check_kernel_name(kernel_name);
  Signature signature;
  signature.in = parse_params(in_params, "in_params", false);
  signature.out = parse_params(out_params, "out_params", true);
  if (signature.in.size() + signature.out.size() > limits::kMaxParams) {
    throw bad(fmt::format("{}: {} parameters, over kernc's limit of {} (see kernc/limits.hpp)", kernel_name,
                          signature.in.size() + signature.out.size(), limits::kMaxParams));
  }
  std::vector<const Param*> all;
  for (const auto& p : signature.in) all.push_back(&p);
  for (const auto& p : signature.out) all.push_back(&p);
  for (size_t a = 0; a < all.size(); ++a) {
    for (size_t b = a + 1; b < all.size(); ++b) {
      if (all[a]->name == all[b]->name) {
        throw bad(fmt::format("{}: the name {} is used twice (\"{}\" and \"{}\")", kernel_name, all[a]->name,
                              all[a]->text, all[b]->text));
      }
    }
  }
  return signature;
}

std::vector<std::string> Signature::placeholders() const {
  std::vector<std::string> letters;
  auto add = [&letters](const std::vector<Param>& params) {
    for (const auto& p : params) {
      if (!p.placeholder.empty() && std::find(letters.begin(), letters.end(), p.placeholder) == letters.end()) {
        letters.push_back(p.placeholder);
      }
    }
  };
  add(out);
  add(in);
  return letters;
}

}  // namespace kernc::dsl
