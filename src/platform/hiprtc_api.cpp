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

DynamicLibrary open_comgr() {
  std::vector<std::string> candidates = loaded_libraries_matching({"libamd_comgr"});
  for (const char* soname : {"libamd_comgr.so.3", "libamd_comgr.so.2", "/opt/rocm/lib/libamd_comgr.so"}) {
    candidates.emplace_back(soname);
  }
  return DynamicLibrary::open_first("the AMD code object manager (libamd_comgr)", candidates);
}

std::vector<std::string> comgr_isa_names(const DynamicLibrary& comgr) {
  std::vector<std::string> names;
#ifdef KERNC_HAVE_COMGR_HEADER
  auto count_fn = reinterpret_cast<decltype(&amd_comgr_get_isa_count)>(comgr.find("amd_comgr_get_isa_count"));
  auto name_fn = reinterpret_cast<decltype(&amd_comgr_get_isa_name)>(comgr.find("amd_comgr_get_isa_name"));
  size_t count = 0;
  if (!count_fn || !name_fn || count_fn(&count) != AMD_COMGR_STATUS_SUCCESS) return names;
  for (size_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    if (name_fn(i, &name) == AMD_COMGR_STATUS_SUCCESS && name) names.emplace_back(name);
  }
#else
  (void)comgr;
#endif
  return names;
}

std::string comgr_version(const DynamicLibrary& comgr) {
#ifdef KERNC_HAVE_COMGR_HEADER
  auto version_fn = reinterpret_cast<decltype(&amd_comgr_get_version)>(comgr.find("amd_comgr_get_version"));
  if (!version_fn) return {};
  size_t major = 0, minor = 0;
  version_fn(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
#else
  (void)comgr;
  return {};
#endif
}

}  // namespace kernc::platform
