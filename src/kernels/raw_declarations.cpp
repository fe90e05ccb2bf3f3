// Reading a raw kernel's declared parameters from its source, for argument checks.
//
// A plain forward scanner: sources can be megabytes long and std::regex recurses once per
// character it matches, so a long source (or a long token in it) overflowed the stack
// (issue 15). Everything here is linear in the source's length.

#include <algorithm>
#include <cctype>
#include <string_view>

#include "core/source_text.hpp"
#include "kernels/raw_state.hpp"

namespace kernc::detail {

namespace {

size_t skip_space(std::string_view text, size_t pos) {
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  return pos;
}

// True when `word` stands at `pos` as a whole word.
// Skips `__launch_bounds__ ( ... )` and the space after it, if it stands at `pos`.
size_t skip_launch_bounds(std::string_view text, size_t pos) {
  constexpr std::string_view kBounds = "__launch_bounds__";
  if (!core::word_at(text, pos, kBounds)) return pos;
  size_t open = skip_space(text, pos + kBounds.size());
  if (open >= text.size() || text[open] != '(') return pos;
  size_t close = text.find(')', open);
  if (close == std::string_view::npos) return pos;
  return skip_space(text, close + 1);
}

// Where the parameter list of `__global__ [bounds] void [bounds] name (` starts (just after
// the parenthesis), or npos; `global_at` (when given) receives where its `__global__` is.
size_t parameter_list_of(std::string_view source, std::string_view name, size_t* global_at = nullptr) {
  constexpr std::string_view kGlobal = "__global__", kVoid = "void";
  for (size_t at = source.find(kGlobal); at != std::string_view::npos; at = source.find(kGlobal, at + 1)) {
    if (global_at) *global_at = at;
    if (!core::word_at(source, at, kGlobal)) continue;
    size_t pos = skip_space(source, at + kGlobal.size());
    if (pos == at + kGlobal.size()) continue;  // needs space after __global__
    pos = skip_launch_bounds(source, pos);
    if (!core::word_at(source, pos, kVoid)) continue;
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
      if (core::word_at(text, pos, word)) {
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
      // cuda_fp8.h's types: a scalar converts to them as to the float8 dtypes (the same bits).
      {"__nv_fp8_e4m3", DType::float8_e4m3fn}, {"__nv_fp8_e5m2", DType::float8_e5m2},
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

// The source as the compiler reads it: `spliced` holds the spliced copy when one is needed.
std::string_view read_as_compiled(const std::string& source_text, std::string& spliced) {
  // CuPy's own tests write kernels as macros continued with backslashes.
  if (source_text.find("\\\n") != std::string::npos || source_text.find("\\\r\n") != std::string::npos) {
    spliced = spliced_lines(source_text);
    return spliced;
  }
  return source_text;
}

// The pieces between the top-level commas of a bracketed list whose text starts at `pos`
// (just after its opening bracket); std::nullopt when the brackets do not balance.
std::optional<std::vector<std::string_view>> list_pieces(std::string_view text, size_t pos) {
  int depth = 1;
  size_t start = pos;
  std::vector<std::string_view> pieces;
  for (; pos < text.size() && depth > 0; ++pos) {
    char c = text[pos];
    if (c == '(' || c == '<' || c == '[') ++depth;
    if (c == ')' || c == '>' || c == ']') --depth;
    if ((c == ',' && depth == 1) || depth == 0) {
      pieces.push_back(text.substr(start, pos - start));
      start = pos + 1;
    }
  }
  if (depth != 0) return std::nullopt;
  return pieces;
}

// One parameter per piece of a parameter list (the text between its commas).
std::vector<DeclaredParam> params_of(const std::vector<std::string_view>& pieces) {
  std::vector<DeclaredParam> params;
  if (pieces.size() == 1 && core::squeeze_spaces(pieces[0]).empty()) return params;
  for (const auto& piece : pieces) {
    DeclaredParam param;
    param.text = core::squeeze_spaces(piece);
    param.name = declared_name(param.text);
    param.pointer = piece.find_first_of("*&[") != std::string_view::npos;
    param.const_pointee = param.pointer && points_to_const(param.text);
    if (!param.pointer) {
      std::string type = core::squeeze_spaces(strip_words(piece, {"const", "volatile", "__restrict__", "register"}));
      auto last_space = type.find_last_of(' ');
      std::string without_name = last_space == std::string::npos ? type : type.substr(0, last_space);
      param.dtype = scalar_type(without_name);
      if (!param.dtype) param.dtype = scalar_type(type);  // a parameter without a name
    }
    params.push_back(std::move(param));
  }
  return params;
}

// One parameter of a template header: `typename T = float` is {T, type, "float"}.
struct TemplateParam {
  std::string name;
  bool type = false;
  std::string default_value;
};

// The parameters of the `template <...>` header that ends just before `global_at` (words
// such as `static` between them allowed), or std::nullopt when there is none or it is one
// this reader does not take (a parameter pack).
std::optional<std::vector<TemplateParam>> template_header_before(std::string_view source, size_t global_at) {
  size_t end = global_at;
  auto skip_back_space = [&] {
    while (end > 0 && std::isspace(static_cast<unsigned char>(source[end - 1]))) --end;
  };
  skip_back_space();
  for (std::string_view word : {"static", "inline", "__forceinline__"}) {
    if (end >= word.size() && core::word_at(source, end - word.size(), word)) {
      end -= word.size();
      skip_back_space();
    }
  }
  if (end == 0 || source[end - 1] != '>') return std::nullopt;
  int depth = 0;
  size_t open = end;
  while (open > 0) {
    --open;
    if (source[open] == '>') ++depth;
    if (source[open] == '<' && --depth == 0) break;
  }
  if (depth != 0) return std::nullopt;
  size_t before = open;
  while (before > 0 && std::isspace(static_cast<unsigned char>(source[before - 1]))) --before;
  constexpr std::string_view kTemplate = "template";
  if (before < kTemplate.size() || !core::word_at(source, before - kTemplate.size(), kTemplate)) return std::nullopt;
  auto pieces = list_pieces(source.substr(0, end), open + 1);
  if (!pieces) return std::nullopt;
  std::vector<TemplateParam> params;
  for (std::string_view piece : *pieces) {
    if (piece.find("...") != std::string_view::npos) return std::nullopt;
    TemplateParam param;
    const size_t eq = piece.find('=');
    if (eq != std::string_view::npos) param.default_value = core::squeeze_spaces(piece.substr(eq + 1));
    const std::string head = core::squeeze_spaces(piece.substr(0, eq));
    param.type = head.rfind("typename", 0) == 0 || head.rfind("class", 0) == 0;
    size_t name_start = head.size();
    while (name_start > 0 && core::is_word_char(head[name_start - 1])) --name_start;
    param.name = head.substr(name_start);
    if (param.name.empty() || param.name == "typename" || param.name == "class") return std::nullopt;
    params.push_back(std::move(param));
  }
  return params;
}

// `text` with every whole-word `word` replaced by `replacement`.
std::string replace_word(std::string_view text, std::string_view word, std::string_view replacement) {
  std::string out;
  for (size_t pos = 0; pos < text.size();) {
    if (core::word_at(text, pos, word)) {
      out += replacement;
      pos += word.size();
    } else {
      out += text[pos++];
    }
  }
  return out;
}

}  // namespace

std::optional<std::vector<DeclaredParam>> declared_params(const std::string& source_text, const std::string& name) {
  std::string spliced;
  const std::string_view source = read_as_compiled(source_text, spliced);
  size_t pos = parameter_list_of(source, name);
  if (pos == std::string_view::npos || name.empty()) return std::nullopt;
  auto pieces = list_pieces(source, pos);
  if (!pieces) return std::nullopt;
  return params_of(*pieces);
}

std::optional<std::vector<DeclaredParam>> instance_params(const std::string& source_text, const std::string& expression) {
  const std::string name = template_name(expression);
  const size_t open = expression.find('<');
  const size_t close = expression.rfind('>');
  if (name.empty() || open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  auto args = list_pieces(std::string_view(expression).substr(0, close + 1), open + 1);
  if (!args) return std::nullopt;
  if (args->size() == 1 && core::squeeze_spaces((*args)[0]).empty()) args->clear();  // k<>
  std::string spliced;
  const std::string_view source = read_as_compiled(source_text, spliced);
  size_t global_at = 0;
  size_t pos = parameter_list_of(source, name, &global_at);
  if (pos == std::string_view::npos) return std::nullopt;
  auto header = template_header_before(source, global_at);
  // Each type parameter is one pass over the parameter list: a bound keeps hostile input linear.
  constexpr std::size_t kMostTemplateParams = 64;
  if (!header || args->size() > header->size() || header->size() > kMostTemplateParams) return std::nullopt;
  auto pieces = list_pieces(source, pos);
  if (!pieces) return std::nullopt;
  // Each type parameter's name in the declaration becomes the instance's argument (or its
  // default): `T p` of `k<float *>` reads as `float * p`.
  std::vector<std::string> substituted(pieces->begin(), pieces->end());
  for (size_t k = 0; k < header->size(); ++k) {
    const TemplateParam& param = (*header)[k];
    const std::string value = k < args->size() ? core::squeeze_spaces((*args)[k]) : param.default_value;
    if (value.empty()) return std::nullopt;  // deduced, or not given: not readable here
    if (!param.type) continue;
    for (std::string& piece : substituted) piece = replace_word(piece, param.name, value + " ");
  }
  return params_of(std::vector<std::string_view>(substituted.begin(), substituted.end()));
}

}  // namespace kernc::detail
