#include <cctype>

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "kernc/signature.hpp"

namespace kernc {

int Layout::view_rank() const noexcept {
  switch (kind) {
    case LayoutKind::contiguous: return 0;
    case LayoutKind::strided:
    case LayoutKind::tiled: return rank;
    case LayoutKind::generic: return -1;
  }
  return -1;
}

std::string Layout::str() const {
  const char* bits = index64 ? "i64" : "i32";
  switch (kind) {
    case LayoutKind::contiguous: return fmt::format("contiguous-{}", bits);
    case LayoutKind::strided: return fmt::format("strided{}-{}", rank, bits);
    case LayoutKind::tiled: return fmt::format("tiled{}-{}", rank, bits);
    case LayoutKind::generic: return fmt::format("generic-{}", bits);
  }
  return "unknown";
}

Layout Layout::parse(const std::string& text) {
  for (const auto& layout : elementwise_classes()) {
    if (layout.str() == text) return layout;
  }
  throw Error(ErrorCode::invalid_argument,
              fmt::format("unknown layout class \"{}\": expected contiguous-i32, strided1-i32 ... strided{}-i64, "
                          "tiled2-i32 ... tiled{}-i64, generic-i32 or generic-i64",
                          text, kMaxStridedRank, kMaxTiledRank));
}

std::vector<Layout> Layout::elementwise_classes() {
  std::vector<Layout> layouts;
  for (bool wide : {false, true}) {
    layouts.push_back({LayoutKind::contiguous, 0, wide});
    for (int rank = 1; rank <= kMaxStridedRank; ++rank) layouts.push_back({LayoutKind::strided, rank, wide});
    for (int rank = 2; rank <= kMaxTiledRank; ++rank) layouts.push_back({LayoutKind::tiled, rank, wide});
    layouts.push_back({LayoutKind::generic, 0, wide});
  }
  return layouts;
}

std::vector<Layout> Layout::reduction_classes() {
  return {{LayoutKind::contiguous, 0, false},
          {LayoutKind::generic, 0, false},
          {LayoutKind::contiguous, 0, true},
          {LayoutKind::generic, 0, true}};
}

namespace {
std::string trim(const std::string& text) {
  size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  if (trim(text).empty()) return items;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    items.push_back(trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

DType signature_dtype(const std::string& item, const std::string& whole) {
  // NOTE [ ambiguous float ]
  // "float" is float64 to NumPy (and to parse_dtype) and float32 to every CUDA programmer.
  // Where it names the dtype of data — a signature here, a dtype name of the CLI
  // (parse_dtype_name, src/host/host_values.cpp) — it is refused rather than guessed. A
  // kernel parameter keeps CuPy's float64 so that CuPy kernels port verbatim, with a
  // warning (src/dsl/params.cpp); docs/spec-format.md says the same.
  if (item == "float") {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("signature \"{}\": \"float\" is ambiguous (NumPy's float is float64, CUDA's float is "
                            "float32): write float32 or float64",
                            whole));
  }
  auto dtype = parse_dtype(item);
  if (!dtype) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("signature \"{}\": \"{}\" is not a dtype (expected e.g. float32, or \"scalar float32\")",
                            whole, item));
  }
  return *dtype;
}
}  // namespace

CallTypes parse_call_signature(const std::string& text) {
  auto arrow = text.find("->");
  if (arrow == std::string::npos || text.find("->", arrow + 2) != std::string::npos) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("signature \"{}\": expected \"INPUTS -> OUTPUTS\", e.g. \"float32, scalar float32 -> "
                            "float32\"",
                            text));
  }
  CallTypes types;
  for (const auto& item : split_commas(text.substr(0, arrow))) {
    if (item.empty()) throw Error(ErrorCode::invalid_argument, fmt::format("signature \"{}\": empty input type", text));
    if (item.rfind("scalar ", 0) == 0) {
      types.inputs.push_back(ArgType::scalar_of(signature_dtype(trim(item.substr(7)), text)));
    } else {
      types.inputs.push_back(ArgType::array(signature_dtype(item, text)));
    }
  }
  for (const auto& item : split_commas(text.substr(arrow + 2))) {
    if (item == "_") {
      types.outputs.emplace_back(std::nullopt);
    } else {
      types.outputs.emplace_back(signature_dtype(item, text));
    }
  }
  return types;
}

std::string format_call_signature(const CallTypes& types) {
  std::string out;
  for (size_t k = 0; k < types.inputs.size(); ++k) {
    out += fmt::format("{}{}{}", k ? ", " : "", types.inputs[k].scalar ? "scalar " : "", to_string(types.inputs[k].dtype));
  }
  out += " ->";
  for (size_t k = 0; k < types.outputs.size(); ++k) {
    out += fmt::format("{} {}", k ? "," : "", types.outputs[k] ? to_string(*types.outputs[k]) : "_");
  }
  return out;
}

}  // namespace kernc
