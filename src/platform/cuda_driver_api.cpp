#include "platform/cuda_driver_api.hpp"

namespace kernc::platform {

std::vector<std::string> CudaDriverApi::candidates(const std::string& override_path) {
  if (!override_path.empty()) return {override_path};
  return {"libcuda.so.1", "libcuda.so"};
}

CudaDriverApi CudaDriverApi::load(const std::string& override_path) {
  CudaDriverApi api;
  api.library = DynamicLibrary::open_first("the CUDA driver (libcuda)", candidates(override_path));
#define KERNC_REQUIRE(fn) api.fn = reinterpret_cast<decltype(api.fn)>(api.library.require(KERNC_SYMBOL_NAME(fn)));
  KERNC_CUDA_REQUIRED(KERNC_REQUIRE)
#undef KERNC_REQUIRE
#define KERNC_FIND(fn) api.fn = reinterpret_cast<decltype(api.fn)>(api.library.find(KERNC_SYMBOL_NAME(fn)));
  KERNC_CUDA_OPTIONAL(KERNC_FIND)
#undef KERNC_FIND
  return api;
}

}  // namespace kernc::platform
