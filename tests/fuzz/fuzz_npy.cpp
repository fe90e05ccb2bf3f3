// libFuzzer target: the .npy reader (header dictionary, shape, dtype, sizes).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kernc/error.hpp"
#include "kernc/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    kernc::NpyArray array = kernc::decode_npy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzzed.npy");
    (void)array.size();
  } catch (const kernc::Error&) {
  }
  return 0;
}
