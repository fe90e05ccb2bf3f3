// libFuzzer target: the SOURCE syntax of `kernc run --in` (random:, arange:, zeros:, ones:,
// scalar literals with an optional dtype, NumPy-like views such as [::-1, None].T), then
// the summary and element printing of what it made. Files are not read (a fuzzed path could name any file), and generated arrays
// are kept small so that the fuzzer spends its time on the syntax, not on filling memory.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "kernc/error.hpp"
#include "run_display.hpp"
#include "run_sources.hpp"

namespace {

constexpr std::int64_t kMaxFuzzedElements = 1 << 16;

// True when `text` would make an array larger than the fuzzer should fill.
bool too_large(const std::string& text) {
  std::size_t first = text.find(':');
  if (first == std::string::npos) return false;
  std::size_t second = text.find(':', first + 1);
  try {
    auto shape = kernc::cli::parse_shape(text.substr(first + 1, second == std::string::npos ? std::string::npos
                                                                                               : second - first - 1));
    return kernc::element_count(shape) > kMaxFuzzedElements;
  } catch (const kernc::Error&) {
    return false;  // not a shape: load_source must say so itself
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find("npy") != std::string::npos || too_large(text)) return 0;
  try {
    kernc::cli::SourceValue value = kernc::cli::load_source(text);
    if (value.is_array) {
      // The view's elements, gathered through its strides: an offset or stride that leaves
      // the source's bytes is an out-of-bounds read the sanitizer reports.
      const std::string elements = value.c_order_data();
      (void)kernc::cli::summarize(value.dtype, elements, value.size());
      if (value.size() > 0) (void)kernc::cli::format_element(value.dtype, kernc::cli::element_at(value.dtype, elements, 0));
    } else {
      (void)kernc::cli::format_scalar(value.scalar);
    }
  } catch (const kernc::Error&) {
    // A clear error is the expected answer to bad input; anything else escapes and crashes.
  }
  return 0;
}
