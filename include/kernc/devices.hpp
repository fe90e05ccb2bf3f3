#pragma once
/// \file
/// What the CUDA driver reports about this machine's GPUs (for `kernc info`).

#include <cstdint>
#include <string>
#include <vector>
#include "kernc/export.hpp"

namespace kernc {

struct KERNC_API GpuInfo {
  int ordinal = 0;
  std::string name;
  int compute_capability = 0;  ///< e.g. 90 for an H100
  std::uint64_t memory_bytes = 0;
};

struct KERNC_API DriverInfo {
  std::string library_path;
  int version = 0;  ///< e.g. 13000
  std::vector<GpuInfo> gpus;
};

/// Loads libcuda and lists the GPUs. Throws kernc::Error(library_not_found) when there is
/// no driver, or (compiler_api) naming the driver's error when cuInit fails (e.g. no device).
KERNC_API DriverInfo probe_cuda_driver(const std::string& library_override);

}  // namespace kernc
