#pragma once
// NOTE [ dlopen tables ]
// Each vendor library is reached only through a table of function pointers filled by
// dlsym. The list of functions is an X-macro and each pointer's type is
// decltype(&fn) of the vendor header's own declaration, so a signature is never
// retyped by hand. Required symbols missing from the library are an error naming the
// symbol and the file; optional ones are capabilities (nullptr when absent).
// Nothing outside src/platform and the backend's own files includes these headers.

#include <nvrtc.h>

#include <string>
#include <vector>

#include "platform/dynamic_library.hpp"

#define KERNC_NVRTC_REQUIRED(X) \
  X(nvrtcGetErrorString)        \
  X(nvrtcVersion)               \
  X(nvrtcCreateProgram)         \
  X(nvrtcDestroyProgram)        \
  X(nvrtcCompileProgram)        \
  X(nvrtcGetProgramLogSize)     \
  X(nvrtcGetProgramLog)         \
  X(nvrtcGetPTXSize)            \
  X(nvrtcGetPTX)                \
  X(nvrtcAddNameExpression)     \
  X(nvrtcGetLoweredName)

// The PCH functions came with NVRTC 12.8; without them kernc compiles without precompiled
// headers (NOTE [ precompiled headers ], src/compiler/nvrtc_pch.hpp).
#define KERNC_NVRTC_OPTIONAL(X) \
  X(nvrtcGetCUBINSize)          \
  X(nvrtcGetCUBIN)              \
  X(nvrtcGetNumSupportedArchs)  \
  X(nvrtcGetSupportedArchs)     \
  X(nvrtcGetPCHCreateStatus)    \
  X(nvrtcGetPCHHeapSizeRequired)

namespace kernc::platform {

struct NvrtcApi {
#define KERNC_DECLARE(fn) decltype(&::fn) fn = nullptr;
  KERNC_NVRTC_REQUIRED(KERNC_DECLARE)
  KERNC_NVRTC_OPTIONAL(KERNC_DECLARE)
#undef KERNC_DECLARE
  DynamicLibrary library;

  /// Loads libnvrtc: `override_path` alone if non-empty, else the versioned sonames, then
  /// `cuda_home`/lib64 and /usr/local/cuda/lib64.
  static NvrtcApi load(const std::string& override_path, const std::string& cuda_home);
  /// The search list load() uses, for `kernc info` and error messages.
  static std::vector<std::string> candidates(const std::string& override_path,
                                             const std::string& cuda_home);
};

}  // namespace kernc::platform
