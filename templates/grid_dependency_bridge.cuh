// NOTE [ grid dependency bridge ]
// Under nvcc, cudaGridDependencySynchronize() and cudaTriggerProgrammaticLaunchCompletion()
// (programmatic dependent launch, LaunchConfig::programmatic_dependent_launch) come from
// cuda_device_runtime_api.h, which nvcc includes into every translation unit; NVRTC includes
// nothing, and that header, included by hand, warns that it includes an internal one. A raw
// program that names either function gets this file first (src/codegen/grid_dependency_bridge.cpp):
// the same two one-instruction functions, griddepcontrol, which is sm_90+ PTX. Before sm_90
// (where the CUDA driver launches in plain stream order: the previous kernel has finished)
// and on AMD GPUs (HIP, likewise in order) there is nothing to wait for or to trigger. The
// host backend defines its own (templates/host_cuda.cuh), and a program that includes
// cuda_device_runtime_api.h itself is left alone.
#pragma once

#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)
static __device__ __forceinline__ void cudaGridDependencySynchronize() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
static __device__ __forceinline__ void cudaTriggerProgrammaticLaunchCompletion() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}
#endif
