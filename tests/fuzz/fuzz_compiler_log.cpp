// libFuzzer target: the scanners that read text of any length — the compiler-log
// rewriter (snippet lines) and the raw-kernel declaration and template-instance readers. Neither may recurse or
// take more than linear time (issue 15, item 1).
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernc/kernels.hpp"
#include "kernels/raw_state.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)kernc::map_log_to_snippets(text);
  (void)kernc::number_lines(text);
  // The kernel name: the first word of the input, as a user might pass any string.
  const std::string name = text.substr(0, text.find_first_of(" \n(", 0));
  (void)kernc::detail::declared_params(text, name);
  (void)kernc::detail::declared_params(text, "k");
  // A name expression's template instance: the expression is the input's first line (a
  // user's string), the source the whole input.
  const std::string expression = text.substr(0, text.find('\n'));
  (void)kernc::detail::instance_params(text, expression);
  (void)kernc::detail::instance_params(text, "k<float *, 4>");
  return 0;
}
