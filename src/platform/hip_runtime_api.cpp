#include "platform/hip_runtime_api.hpp"

namespace kernc::platform {

HipRuntimeApi HipRuntimeApi::load(const std::string& override_path) {
  HipRuntimeApi api;
  std::vector<std::string> candidates = {override_path};
  if (override_path.empty()) candidates = {"libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"};
  api.library = DynamicLibrary::open_first("the HIP runtime (libamdhip64)", candidates);
#define KERNC_REQUIRE(fn) api.fn = reinterpret_cast<decltype(api.fn)>(api.library.require(KERNC_SYMBOL_NAME(fn)));
  KERNC_HIP_REQUIRED(KERNC_REQUIRE)
#undef KERNC_REQUIRE
  api.hipMalloc = reinterpret_cast<decltype(api.hipMalloc)>(api.library.require("hipMalloc"));
  return api;
}

}  // namespace kernc::platform
