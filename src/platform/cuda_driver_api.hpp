#pragma once
// The CUDA driver API (libcuda.so.1) through a dlopen table; see NOTE [ dlopen tables ]
// in nvrtc_api.hpp. libcuda comes with the driver, never with the toolkit, so it is
// looked up only by soname (or the KERNC_CUDA_LIBRARY override).

#include <cuda.h>

#include <string>
#include <vector>

#include "platform/dynamic_library.hpp"

#define KERNC_CUDA_REQUIRED(X) \
  X(cuInit)                    \
  X(cuDriverGetVersion)        \
  X(cuGetErrorName)            \
  X(cuGetErrorString)          \
  X(cuDeviceGetCount)          \
  X(cuDeviceGet)               \
  X(cuDeviceGetName)           \
  X(cuDeviceGetAttribute)      \
  X(cuDeviceTotalMem)          \
  X(cuDevicePrimaryCtxRetain)  \
  X(cuDevicePrimaryCtxRelease) \
  X(cuCtxSetCurrent)           \
  X(cuCtxGetCurrent)           \
  X(cuCtxSynchronize)          \
  X(cuModuleLoadData)          \
  X(cuModuleUnload)            \
  X(cuModuleGetFunction)       \
  X(cuModuleGetGlobal)         \
  X(cuFuncGetAttribute)        \
  X(cuFuncSetAttribute)        \
  X(cuLaunchKernel)            \
  X(cuLaunchCooperativeKernel) \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
  X(cuMemAlloc)                \
  X(cuMemFree)                 \
  X(cuMemcpyHtoDAsync)         \
  X(cuMemcpyDtoHAsync)         \
  X(cuMemcpyDtoDAsync)         \
  X(cuMemsetD8Async)           \
  X(cuMemGetInfo)              \
  X(cuPointerGetAttribute)     \
  X(cuPointerGetAttributes)    \
  X(cuDeviceCanAccessPeer)     \
  X(cuCtxEnablePeerAccess)     \
  X(cuStreamCreate)            \
  X(cuStreamDestroy)           \
  X(cuStreamSynchronize)       \
  X(cuEventCreate)             \
  X(cuEventDestroy)            \
  X(cuEventRecord)             \
  X(cuEventSynchronize)        \
  X(cuEventElapsedTime)

// Newer than the oldest driver kernc supports: capabilities, nullptr when absent.
#define KERNC_CUDA_OPTIONAL(X) \
  X(cuFuncGetParamInfo)         \
  X(cuMemAllocAsync)            \
  X(cuMemFreeAsync)             \
  X(cuDeviceGetDefaultMemPool)  \
  X(cuMemPoolSetAttribute)      \
  X(cuStreamBeginCapture)       \
  X(cuStreamEndCapture)         \
  X(cuGraphInstantiate)         \
  X(cuGraphLaunch)              \
  X(cuGraphExecDestroy)         \
  X(cuGraphDestroy)             \
  KERNC_CUDA_LIBRARY_LOADING(X) \
  KERNC_CUDA_LAUNCH_EX(X)

// CUDA 12.0's context-independent loading (NOTE [ load once for every GPU ],
// src/runtime/cuda_driver.cpp): all three or none are used.
#define KERNC_CUDA_LIBRARY_LOADING(X) \
  X(cuLibraryLoadData)                \
  X(cuLibraryGetModule)               \
  X(cuLibraryUnload)

// CUDA 12.0's launch with attributes (NOTE [ launch attributes ], src/runtime/device.cpp).
#define KERNC_CUDA_LAUNCH_EX(X)   \
  X(cuLaunchKernelEx)             \
  X(cuOccupancyMaxActiveClusters) \
  X(cuCtxGetStreamPriorityRange)

namespace kernc::platform {

struct CudaDriverApi {
#define KERNC_DECLARE(fn) decltype(&::fn) fn = nullptr;
  KERNC_CUDA_REQUIRED(KERNC_DECLARE)
  KERNC_CUDA_OPTIONAL(KERNC_DECLARE)
#undef KERNC_DECLARE
  DynamicLibrary library;

  static CudaDriverApi load(const std::string& override_path);
  static std::vector<std::string> candidates(const std::string& override_path);
};

}  // namespace kernc::platform
