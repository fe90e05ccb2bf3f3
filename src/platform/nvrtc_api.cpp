#include "platform/nvrtc_api.hpp"

namespace kernc::platform {

std::vector<std::string> NvrtcApi::candidates(const std::string& override_path,
                                              const std::string& cuda_home) {
  if (!override_path.empty()) return {override_path};
  // Newest first: a machine may carry several toolkits side by side.
  const std::vector<std::string> sonames = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                            "libnvrtc.so"};
  std::vector<std::string> list = sonames;
  for (const std::string& home : {cuda_home, std::string("/usr/local/cuda")}) {
    if (home.empty()) continue;
    for (const auto& soname : sonames) list.push_back(home + "/lib64/" + soname);
  }
  return list;
}

NvrtcApi NvrtcApi::load(const std::string& override_path, const std::string& cuda_home) {
  NvrtcApi api;
  api.library = DynamicLibrary::open_first("NVRTC (libnvrtc)", candidates(override_path, cuda_home));
#define KERNC_REQUIRE(fn) api.fn = reinterpret_cast<decltype(api.fn)>(api.library.require(KERNC_SYMBOL_NAME(fn)));
#define KERNC_FIND(fn) api.fn = reinterpret_cast<decltype(api.fn)>(api.library.find(KERNC_SYMBOL_NAME(fn)));
  KERNC_NVRTC_REQUIRED(KERNC_REQUIRE)
  KERNC_NVRTC_OPTIONAL(KERNC_FIND)
#undef KERNC_REQUIRE
#undef KERNC_FIND
  return api;
}

}  // namespace kernc::platform
