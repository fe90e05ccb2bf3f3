#pragma once
// Shared state behind Device handles: the driver table, the primary context, limits.

#include <mutex>
#include <string>

#include "platform/cuda_driver_api.hpp"

namespace kernc::detail {

struct DeviceState {
  std::shared_ptr<platform::CudaDriverApi> api;
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string name;
  int compute_capability = 0;
  int multiprocessors = 0;
  int max_threads_per_block = 0;
  int max_shared_per_block = 0;
  int max_shared_per_block_optin = 0;
  int max_grid[3] = {0, 0, 0};
  int max_block[3] = {0, 0, 0};

  ~DeviceState();
  /// Makes the primary context current on this thread (cheap when it already is).
  void make_current() const;
  /// Throws kernc::Error(driver) naming `call`, `what` kernc was doing, and the driver's error.
  void check(CUresult status, const char* call, const std::string& what = {}) const;
};

/// Throws kernc::Error(driver) for a failed call; used where no DeviceState exists yet.
void check_driver(const platform::CudaDriverApi& api, CUresult status, const char* call, const std::string& what = {});

}  // namespace kernc::detail
