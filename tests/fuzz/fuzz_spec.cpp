// libFuzzer target: the spec-file reader and the planner of every variant it lists
// (parse_spec, then each variant's Program rendered; no compiler is called).
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernc/error.hpp"
#include "kernc/spec_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    kernc::Spec spec = kernc::parse_spec(std::string(reinterpret_cast<const char*>(data), size), "/nonexistent");
    std::size_t bytes = 0;
    for (const auto& variant : spec.variants()) bytes += variant.program.source.size();
    (void)bytes;
  } catch (const kernc::Error&) {
    // A clear error is the expected answer to bad input; anything else escapes and crashes.
  }
  return 0;
}
