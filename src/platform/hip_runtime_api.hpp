#pragma once
// The HIP runtime (libamdhip64) through a dlopen table; see NOTE [ dlopen tables ] in
// nvrtc_api.hpp. Only built with KERNC_WITH_HIP.

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>

#include <string>
#include <vector>

#include "platform/dynamic_library.hpp"

#define KERNC_HIP_REQUIRED(X)  \
  X(hipInit)                   \
  X(hipGetErrorName)           \
  X(hipGetErrorString)         \
  X(hipGetDeviceCount)         \
  X(hipGetDeviceProperties)    \
  X(hipDeviceGetAttribute)     \
  X(hipSetDevice)              \
  X(hipGetDevice)              \
  X(hipFree)                   \
  X(hipMemcpyHtoDAsync)        \
  X(hipMemcpyDtoHAsync)        \
  X(hipMemcpyDtoDAsync)        \
  X(hipMemsetD8Async)          \
  X(hipDeviceSynchronize)      \
  X(hipStreamSynchronize)      \
  X(hipStreamCreate)           \
  X(hipStreamDestroy)          \
  X(hipEventCreate)            \
  X(hipEventDestroy)           \
  X(hipEventRecord)            \
  X(hipEventSynchronize)       \
  X(hipEventElapsedTime)       \
  X(hipModuleLoadData)         \
  X(hipModuleUnload)           \
  X(hipModuleGetFunction)      \
  X(hipModuleGetGlobal)        \
  X(hipFuncGetAttribute)       \
  X(hipModuleLaunchKernel)     \
  X(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor) \
  X(hipPointerGetAttributes)

namespace kernc::platform {

struct HipRuntimeApi {
#define KERNC_DECLARE(fn) decltype(&::fn) fn = nullptr;
  KERNC_HIP_REQUIRED(KERNC_DECLARE)
#undef KERNC_DECLARE
  // hipMalloc is overloaded in the C++ header (a template for typed pointers), so its
  // type is spelled out: the C entry point the library exports.
  hipError_t (*hipMalloc)(void**, size_t) = nullptr;
  DynamicLibrary library;

  /// Loads the HIP runtime: `override_path` alone if non-empty, else libamdhip64 by soname
  /// (ROCm 6, then 5) and /opt/rocm/lib.
  static HipRuntimeApi load(const std::string& override_path);
};

}  // namespace kernc::platform
