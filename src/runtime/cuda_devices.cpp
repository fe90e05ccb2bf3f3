#include <fmt/format.h>

#include "kernc/devices.hpp"
#include "kernc/error.hpp"
#include "platform/cuda_driver_api.hpp"

namespace kernc {

DriverInfo probe_cuda_driver(const std::string& library_override) {
  auto api = platform::CudaDriverApi::load(library_override);
  auto check = [&api](CUresult status, const char* call) {
    if (status == CUDA_SUCCESS) return;
    const char* name = nullptr;
    api.cuGetErrorName(status, &name);
    throw Error(ErrorCode::compiler_api, fmt::format("{} failed: {}", call, name ? name : "unknown error"));
  };
  DriverInfo info;
  info.library_path = api.library.path();
  check(api.cuDriverGetVersion(&info.version), "cuDriverGetVersion");
  check(api.cuInit(0), "cuInit");
  int count = 0;
  check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    check(api.cuDeviceGet(&device, ordinal), "cuDeviceGet");
    GpuInfo gpu;
    gpu.ordinal = ordinal;
    char name[256] = {};
    check(api.cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName");
    gpu.name = name;
    int major = 0, minor = 0;
    check(api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device), "cuDeviceGetAttribute");
    check(api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device), "cuDeviceGetAttribute");
    gpu.compute_capability = major * 10 + minor;
    size_t bytes = 0;
    check(api.cuDeviceTotalMem(&bytes, device), "cuDeviceTotalMem");
    gpu.memory_bytes = bytes;
    info.gpus.push_back(gpu);
  }
  return info;
}

}  // namespace kernc
