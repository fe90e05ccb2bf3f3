#pragma once
// HIPRTC through a dlopen table; see NOTE [ dlopen tables ] in nvrtc_api.hpp.
// Only built when hip/hiprtc.h is available (KERNC_WITH_HIP).

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hiprtc.h>

#include <string>
#include <vector>

#include "platform/dynamic_library.hpp"

#define KERNC_HIPRTC_REQUIRED(X) \
  X(hiprtcGetErrorString)        \
  X(hiprtcVersion)               \
  X(hiprtcCreateProgram)         \
  X(hiprtcDestroyProgram)        \
  X(hiprtcCompileProgram)        \
  X(hiprtcGetProgramLogSize)     \
  X(hiprtcGetProgramLog)         \
  X(hiprtcGetCodeSize)           \
  X(hiprtcGetCode)               \
  X(hiprtcAddNameExpression)     \
  X(hiprtcGetLoweredName)

namespace kernc::platform {

struct HiprtcApi {
#define KERNC_DECLARE(fn) decltype(&::fn) fn = nullptr;
  KERNC_HIPRTC_REQUIRED(KERNC_DECLARE)
#undef KERNC_DECLARE
  DynamicLibrary library;

  /// Loads HIPRTC: `override_path` alone if non-empty, else libhiprtc (ROCm >= 6 ships it
  /// separately), then libamdhip64 (ROCm 5, Debian), then /opt/rocm/lib.
  static HiprtcApi load(const std::string& override_path);
  static std::vector<std::string> candidates(const std::string& override_path);
};

/// libamd_comgr, the AMD code-object manager that does HIPRTC's code generation. HIPRTC
/// loads it lazily, so kernc opens it itself: the one already mapped if any, else by soname.
/// Throws kernc::Error(library_not_found) if it cannot be found.
DynamicLibrary open_comgr();

/// The ISA names comgr knows ("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", ...); empty if
/// this build has no amd_comgr.h or the library lacks the functions.
std::vector<std::string> comgr_isa_names(const DynamicLibrary& comgr);

/// The version comgr reports ("2.4"); empty if this build or the library cannot say.
std::string comgr_version(const DynamicLibrary& comgr);

}  // namespace kernc::platform
