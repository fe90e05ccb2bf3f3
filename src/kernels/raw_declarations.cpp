// Reading a raw kernel's declared parameters from its source, for argument checks.
//
// A plain forward scanner: sources can be megabytes long and std::regex recurses once per
// character it matches, so a long source (or a long token in it) overflowed the stack
// (issue 15). Everything here is linear in the source's length.

#include <algorithm>
#include <cctype>
#include <string_view>

#include "kernels/raw_state.hpp"

namespace kernc::detail {

namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

size_t skip_space(std::string_view text, size_t pos) {
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  return pos;
}

// True when `word` stands at `pos` as a whole word.
bool word_at(std::string_view text, size_t pos, std::string_view word) {
  if (text.compare(pos, word.size(), word) != 0) return false;
  if (pos > 0 && is_word_char(text[pos - 1])) return false;
  size_t end = pos + word.size();
  return end >= text.size() || !is_word_char(text[end]);
}

// Skips `__launch_bounds__ ( ... )` and the space after it, if it stands at `pos`.
size_t skip_launch_bounds(std::string_view text, size_t pos) {
  constexpr std::string_view kBounds = "__launch_bounds__";
  if (!word_at(text, pos, kBounds)) return pos;
  size_t open = skip_space(text, pos + kBounds.size());
  if (open >= text.size() || text[open] != '(') return pos;
  size_t close = text.find(')', open);
  if (close == std::string_view::npos) return pos;
  return skip_space(text, close + 1);
}

// Where the parameter list of `__global__ [bounds] void [bounds] name (` starts (just after
// the parenthesis), or npos.
size_t parameter_list_of(std::string_view source, std::string_view name) {
  constexpr std::string_view kGlobal = "__global__", kVoid = "void";
  for (size_t at = source.find(kGlobal); at != std::string_view::npos; at = source.find(kGlobal, at + 1)) {
    if (!word_at(source, at, kGlobal)) continue;
    size_t pos = skip_space(source, at + kGlobal.size());
    if (pos == at + kGlobal.size()) continue;  // needs space after __global__
    pos = skip_launch_bounds(source, pos);
    if (!word_at(source, pos, kVoid)) continue;
    size_t after_void = pos + kVoid.size();
    pos = skip_space(source, after_void);
    if (pos == after_void) continue;
    pos = skip_launch_bounds(source, pos);
    if (source.compare(pos, name.size(), name) != 0) continue;
    pos = skip_space(source, pos + name.size());
    if (pos < source.size() && source[pos] == '(') return pos + 1;
  }
  return std::string_view::npos;
}

// `text` with each of `words` (whole words only) replaced by a space.
std::string strip_words(std::string_view text, std::initializer_list<std::string_view> words) {
  std::string out;
  for (size_t pos = 0; pos < text.size();) {
    bool stripped = false;
    for (std::string_view word : words) {
      if (word_at(text, pos, word)) {
        out += ' ';
        pos += word.size();
        stripped = true;
        break;
      }
    }
    if (!stripped) out += text[pos++];
  }
  return out;
}

std::string squeeze(std::string_view text) {
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

std::optional<DType> scalar_type(const std::string& type) {
  static const std::pair<const char*, DType> kTypes[] = {
      {"bool", DType::bool_},           {"char", DType::int8},           {"signed char", DType::int8},
      {"int8_t", DType::int8},          {"unsigned char", DType::uint8}, {"uint8_t", DType::uint8},
      {"short", DType::int16},          {"int16_t", DType::int16},       {"unsigned short", DType::uint16},
      {"uint16_t", DType::uint16},      {"int", DType::int32},           {"int32_t", DType::int32},
      {"unsigned", DType::uint32},      {"unsigned int", DType::uint32}, {"uint32_t", DType::uint32},
      {"long", DType::int64},           {"long long", DType::int64},     {"int64_t", DType::int64},
      {"ptrdiff_t", DType::int64},      {"unsigned long", DType::uint64}, {"unsigned long long", DType::uint64},
      {"uint64_t", DType::uint64},      {"size_t", DType::uint64},       {"float", DType::float32},
      {"double", DType::float64},       {"__half", DType::float16},      {"half", DType::float16},
      {"__nv_bfloat16", DType::bfloat16}, {"long int", DType::int64},    {"long long int", DType::int64},
      // <cuComplex.h>'s types (float2 and double2): a scalar converts to them as to complex64/128.
      {"cuFloatComplex", DType::complex64}, {"cuComplex", DType::complex64}, {"cuDoubleComplex", DType::complex128},
  };
  for (const auto& [name, dtype] : kTypes) {
    if (type == name) return dtype;
  }
  return std::nullopt;
}

// The name a parameter is declared with ("" when the declaration has none): the last
// identifier before any "[" or "=", unless it is a type word or the only word.
std::string declared_name(std::string_view text) {
  std::string declaration(text.substr(0, text.find_first_of("[=")));
  while (!declaration.empty() && declaration.back() == ' ') declaration.pop_back();
  std::size_t start = declaration.size();
  while (start > 0 && (std::isalnum(static_cast<unsigned char>(declaration[start - 1])) || declaration[start - 1] == '_')) {
    --start;
  }
  std::string name = declaration.substr(start);
  std::string type = declaration.substr(0, start);
  static const char* const kTypeWords[] = {"int",      "long",   "short",    "char",        "float", "double", "bool",
                                           "unsigned", "signed", "const",    "volatile",    "__restrict__"};
  bool type_word = std::any_of(std::begin(kTypeWords), std::end(kTypeWords), [&](const char* w) { return name == w; });
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || type_word ||
      type.find_first_not_of(' ') == std::string::npos) {
    return {};
  }
  return name;
}

// Whether a pointer parameter's elements are const ("const float* x"): the kernel only reads them.
bool points_to_const(std::string_view text) {
  std::string before(text.substr(0, text.find_first_of("*&[")));
  return (" " + before + " ").find(" const ") != std::string::npos;
}

}  // namespace

std::string template_name(const std::string& expression) {
  std::string base = expression.substr(0, expression.find('<'));
  while (!base.empty() && std::isspace(static_cast<unsigned char>(base.back()))) base.pop_back();
  return base;
}

namespace {

// The source with each backslash-newline removed (the C preprocessor's line splicing), so
// that a declaration continued over lines reads as the compiler reads it.
std::string spliced_lines(const std::string& source) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t pos = 0; pos < source.size(); ++pos) {
    if (source[pos] == '\\') {
      std::size_t next = pos + 1;
      if (next < source.size() && source[next] == '\r') ++next;
      if (next < source.size() && source[next] == '\n') {
        pos = next;
        continue;
      }
    }
    out += source[pos];
  }
  return out;
}

}  // namespace

std::optional<std::vector<DeclaredParam>> declared_params(const std::string& source_text, const std::string& name) {
  // CuPy's own tests write kernels as macros continued with backslashes.
  const std::string spliced = source_text.find("\\\n") != std::string::npos || source_text.find("\\\r\n") != std::string::npos
                                  ? spliced_lines(source_text)
                                  : std::string();
  const std::string_view source = spliced.empty() ? std::string_view(source_text) : std::string_view(spliced);
  size_t pos = parameter_list_of(source, name);
  if (pos == std::string_view::npos || name.empty()) return std::nullopt;
  int depth = 1;
  size_t start = pos;
  std::vector<std::string_view> pieces;
  for (; pos < source.size() && depth > 0; ++pos) {
    char c = source[pos];
    if (c == '(' || c == '<' || c == '[') ++depth;
    if (c == ')' || c == '>' || c == ']') --depth;
    if ((c == ',' && depth == 1) || depth == 0) {
      pieces.push_back(source.substr(start, pos - start));
      start = pos + 1;
    }
  }
  if (depth != 0) return std::nullopt;
  std::vector<DeclaredParam> params;
  if (pieces.size() == 1 && squeeze(pieces[0]).empty()) return params;
  for (const auto& piece : pieces) {
    DeclaredParam param;
    param.text = squeeze(piece);
    param.name = declared_name(param.text);
    param.pointer = piece.find_first_of("*&[") != std::string_view::npos;
    param.const_pointee = param.pointer && points_to_const(param.text);
    if (!param.pointer) {
      std::string type = squeeze(strip_words(piece, {"const", "volatile", "__restrict__", "register"}));
      auto last_space = type.find_last_of(' ');
      std::string without_name = last_space == std::string::npos ? type : type.substr(0, last_space);
      param.dtype = scalar_type(without_name);
      if (!param.dtype) param.dtype = scalar_type(type);  // a parameter without a name
    }
    params.push_back(std::move(param));
  }
  return params;
}

}  // namespace kernc::detail
