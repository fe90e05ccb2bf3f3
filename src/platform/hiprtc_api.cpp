#include "platform/hiprtc_api.hpp"

#if __has_include(<amd_comgr.h>)
#include <amd_comgr.h>
#define KERNC_HAVE_COMGR_HEADER 1
#endif

namespace kernc::platform {

std::vector<std::string> HiprtcApi::candidates(const std::string& override_path) {
  if (!override_path.empty()) return {override_path};
  return {"libhiprtc.so.7",          "libhiprtc.so.6",          "libamdhip64.so.6",
          "libamdhip64.so.5",        "/opt/rocm/lib/libhiprtc.so", "/opt/rocm/lib/libamdhip64.so"};
}

HiprtcApi HiprtcApi::load(const std::string& override_path) {
  HiprtcApi api;
  api.library = DynamicLibrary::open_first("HIPRTC (libhiprtc / libamdhip64)", candidates(override_path));
#define KERNC_REQUIRE(fn) api.fn = reinterpret_cast<decltype(api.fn)>(api.library.require(KERNC_SYMBOL_NAME(fn)));
  KERNC_HIPRTC_REQUIRED(KERNC_REQUIRE)
#undef KERNC_REQUIRE
  return api;
}

std::vector<std::string> comgr_isa_names() {
  std::vector<std::string> names;
#ifdef KERNC_HAVE_COMGR_HEADER
  // comgr is a dependency of HIPRTC and already mapped: opening it again only adds a reference.
  for (const auto& path : loaded_libraries_matching({"libamd_comgr"})) {
    DynamicLibrary lib;
    try {
      lib = DynamicLibrary::open_first("libamd_comgr", {path});
    } catch (...) {
      continue;
    }
    auto count_fn = reinterpret_cast<decltype(&amd_comgr_get_isa_count)>(lib.find("amd_comgr_get_isa_count"));
    auto name_fn = reinterpret_cast<decltype(&amd_comgr_get_isa_name)>(lib.find("amd_comgr_get_isa_name"));
    if (!count_fn || !name_fn) continue;
    size_t count = 0;
    if (count_fn(&count) != AMD_COMGR_STATUS_SUCCESS) continue;
    for (size_t i = 0; i < count; ++i) {
      const char* name = nullptr;
      if (name_fn(i, &name) == AMD_COMGR_STATUS_SUCCESS && name) names.emplace_back(name);
    }
    break;
  }
#endif
  return names;
}

}  // namespace kernc::platform
