// libFuzzer target: the parameter grammar, type resolution and code generation of an
// ElementwiseKernel and a ReductionKernel whose strings come from the input (split at NUL
// bytes into in_params, out_params, the operation and a call signature). No compiler runs.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> parts(4);
  std::size_t part = 0;
  for (std::size_t k = 0; k < size; ++k) {
    if (data[k] == 0 && part + 1 < parts.size()) {
      ++part;
    } else {
      parts[part] += static_cast<char>(data[k]);
    }
  }
  try {
    kernc::CallTypes types = kernc::parse_call_signature(parts[3]);
    kernc::ElementwiseKernel elementwise(parts[0], parts[1], parts[2], "fuzzed");
    for (const auto& layout : kernc::Layout::elementwise_classes()) (void)kernc::program(elementwise, types, layout);
  } catch (const kernc::Error&) {
  }
  try {
    kernc::CallTypes types = kernc::parse_call_signature(parts[3]);
    kernc::ReductionKernel reduction(parts[0], parts[1], parts[2], "a + b", "y = a", "0", "fuzzed");
    for (const auto& layout : kernc::Layout::reduction_classes()) (void)kernc::program(reduction, types, layout);
  } catch (const kernc::Error&) {
  }
  return 0;
}
