// The HIP implementation of detail::Driver over libamdhip64 (see NOTE [ runtime backends ]).
// Compile-tested in CI (Debian's ROCm 5.2 headers); it has never run on AMD hardware.

#include <limits>
#include <mutex>

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "platform/hip_runtime_api.hpp"
#include "runtime/driver.hpp"

namespace kernc::detail {

namespace {

void check(const platform::HipRuntimeApi& api, hipError_t status, const char* call, const std::string& what = {}) {
  if (status == hipSuccess) return;
  const char* name = api.hipGetErrorName(status);
  const char* text = api.hipGetErrorString(status);
  throw Error(ErrorCode::driver, fmt::format("{}{}{} failed: {} ({})", what, what.empty() ? "" : ": ", call,
                                             name ? name : "unknown error", text ? text : "no description"));
}

std::shared_ptr<platform::HipRuntimeApi> hip_api(const std::string& library) {
  static std::mutex mutex;
  static std::shared_ptr<platform::HipRuntimeApi> api;
  std::lock_guard<std::mutex> lock(mutex);
  if (api) return api;
  try {
    auto loaded = std::make_shared<platform::HipRuntimeApi>(platform::HipRuntimeApi::load(library));
    check(*loaded, loaded->hipInit(0), "hipInit", "initialising the HIP runtime");
    api = loaded;
  } catch (const Error& error) {
    throw Error(ErrorCode::no_device, fmt::format("no usable AMD GPU: {}", error.what()));
  }
  return api;
}

hipStream_t stream_of(void* stream) { return static_cast<hipStream_t>(stream); }
hipDeviceptr_t device_ptr(std::uint64_t address) { return reinterpret_cast<hipDeviceptr_t>(static_cast<std::uintptr_t>(address)); }

class HipDriver final : public Driver {
 public:
  HipDriver(std::shared_ptr<platform::HipRuntimeApi> api, int ordinal) : api_(std::move(api)), ordinal_(ordinal) {
    int count = 0;
    check(*api_, api_->hipGetDeviceCount(&count), "hipGetDeviceCount");
    if (ordinal < 0 || ordinal >= count) {
      throw Error(ErrorCode::no_device, fmt::format("no GPU with ordinal {}: the HIP runtime sees {} GPU(s)", ordinal, count));
    }
    hipDeviceProp_t prop{};
    check(*api_, api_->hipGetDeviceProperties(&prop, ordinal), "hipGetDeviceProperties");
    props_.name = prop.name;
    props_.target = prop.gcnArchName;  // e.g. "gfx90a:sramecc+:xnack-"
    props_.compute_capability = prop.major * 10 + prop.minor;
    props_.multiprocessors = prop.multiProcessorCount;
    props_.max_threads_per_block = prop.maxThreadsPerBlock;
    props_.max_shared_per_block = static_cast<int>(prop.sharedMemPerBlock);
    props_.max_shared_per_block_optin = static_cast<int>(prop.sharedMemPerBlock);
    for (int k = 0; k < 3; ++k) {
      props_.max_grid[k] = prop.maxGridSize[k];
      props_.max_block[k] = prop.maxThreadsDim[k];
    }
    // hipModuleLaunchCooperativeKernel is newer than the ROCm 5.2 headers this backend is
    // built against (which have only the runtime API's hipLaunchCooperativeKernel, taking
    // a host function, not a module's); CuPy refuses cooperative groups on ROCm too.
    props_.cooperative_launch = false;
    props_.cooperative_launch_missing = "kernc's HIP backend has no cooperative launch (as CuPy on ROCm)";
    // NOTE [ launch attributes ] (src/runtime/device.cpp): no clusters on AMD GPUs; a
    // programmatic dependent launch runs in stream order, and a priority is ignored.
    props_.cluster_launch_missing = "AMD GPUs have no thread-block clusters (kernc's HIP backend refuses them)";
    props_.greatest_priority = std::numeric_limits<int>::min();
    props_.least_priority = std::numeric_limits<int>::max();
  }

  Backend backend() const noexcept override { return Backend::hip; }
  const DeviceProperties& properties() const noexcept override { return props_; }

  void make_current() override {
    int current = -1;
    if (api_->hipGetDevice(&current) == hipSuccess && current == ordinal_) return;
    check(*api_, api_->hipSetDevice(ordinal_), "hipSetDevice");
  }

  std::uint64_t allocate(std::size_t bytes) override {
    make_current();
    void* address = nullptr;
    check(*api_, api_->hipMalloc(&address, bytes), "hipMalloc", fmt::format("allocating {} bytes", bytes));
    return reinterpret_cast<std::uintptr_t>(address);
  }
  // No stream-ordered allocation through this table: callers fall back to allocate().
  std::uint64_t allocate_async(std::size_t, void*) override { return 0; }
  void release_memory(std::uint64_t address, bool, void*) noexcept override {
    (void)api_->hipSetDevice(ordinal_);  // errors at exit are ignored (see driver.hpp)
    (void)api_->hipFree(device_ptr(address));
  }

  void copy_to_device(std::uint64_t dst, const void* src, std::size_t bytes, void* stream) override {
    make_current();
    check(*api_, api_->hipMemcpyHtoDAsync(device_ptr(dst), const_cast<void*>(src), bytes, stream_of(stream)),
          "hipMemcpyHtoDAsync", "copying to the device");
  }
  void copy_to_host(void* dst, std::uint64_t src, std::size_t bytes, void* stream) override {
    make_current();
    check(*api_, api_->hipMemcpyDtoHAsync(dst, device_ptr(src), bytes, stream_of(stream)), "hipMemcpyDtoHAsync",
          "copying to the host");
    check(*api_, api_->hipStreamSynchronize(stream_of(stream)), "hipStreamSynchronize", "copying to the host");
  }
  void copy_device(std::uint64_t dst, std::uint64_t src, std::size_t bytes, void* stream) override {
    make_current();
    check(*api_, api_->hipMemcpyDtoDAsync(device_ptr(dst), device_ptr(src), bytes, stream_of(stream)),
          "hipMemcpyDtoDAsync", "copying on the device");
  }
  void fill_bytes(std::uint64_t dst, unsigned char value, std::size_t bytes, void* stream) override {
    make_current();
    check(*api_, api_->hipMemsetD8Async(device_ptr(dst), value, bytes, stream_of(stream)), "hipMemsetD8Async");
  }
  void synchronize() override {
    make_current();
    check(*api_, api_->hipDeviceSynchronize(), "hipDeviceSynchronize");
  }
  void synchronize_stream(void* stream) override {
    make_current();
    check(*api_, api_->hipStreamSynchronize(stream_of(stream)), "hipStreamSynchronize");
  }
  bool is_device_pointer(std::uint64_t address) noexcept override {
    hipPointerAttribute_t attributes{};
    if (api_->hipPointerGetAttributes(&attributes, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(address))) !=
        hipSuccess) {
      return false;
    }
    return attributes.memoryType == hipMemoryTypeDevice;
  }
  // NOTE [ arrays know their device ] (src/kernels/device_check.cpp). HIP answers an error
  // for memory it does not know, which may be pageable memory the GPU reaches: unknown.
  DeviceId locate(std::uint64_t address) noexcept override {
    hipPointerAttribute_t attributes{};
    if (api_->hipPointerGetAttributes(&attributes, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(address))) !=
        hipSuccess) {
      return DeviceId::unknown();
    }
    if (attributes.isManaged || attributes.memoryType == hipMemoryTypeHost) return DeviceId::shared(Backend::hip);
    if (attributes.memoryType == hipMemoryTypeDevice) return {Backend::hip, attributes.device};
    return DeviceId::unknown();
  }

  void* create_stream() override {
    make_current();
    hipStream_t stream = nullptr;
    check(*api_, api_->hipStreamCreate(&stream), "hipStreamCreate");
    return stream;
  }
  void release_stream(void* stream) noexcept override { (void)api_->hipStreamDestroy(stream_of(stream)); }
  void* create_event() override {
    make_current();
    hipEvent_t event = nullptr;
    check(*api_, api_->hipEventCreate(&event), "hipEventCreate");
    return event;
  }
  void release_event(void* event) noexcept override { (void)api_->hipEventDestroy(static_cast<hipEvent_t>(event)); }
  void record_event(void* event, void* stream) override {
    make_current();
    check(*api_, api_->hipEventRecord(static_cast<hipEvent_t>(event), stream_of(stream)), "hipEventRecord");
  }
  void synchronize_event(void* event) override {
    check(*api_, api_->hipEventSynchronize(static_cast<hipEvent_t>(event)), "hipEventSynchronize");
  }
  float elapsed_ms(void* start, void* stop) override {
    float ms = 0;
    check(*api_, api_->hipEventElapsedTime(&ms, static_cast<hipEvent_t>(start), static_cast<hipEvent_t>(stop)),
          "hipEventElapsedTime");
    return ms;
  }

  void* load_module(const std::string& image) override {
    make_current();
    hipModule_t module = nullptr;
    check(*api_, api_->hipModuleLoadData(&module, image.data()), "hipModuleLoadData", "loading a code object");
    return module;
  }
  void release_module(void* module) noexcept override { (void)api_->hipModuleUnload(static_cast<hipModule_t>(module)); }
  void* find_function(void* module, const std::string& name) override {
    make_current();
    hipFunction_t function = nullptr;
    hipError_t status = api_->hipModuleGetFunction(&function, static_cast<hipModule_t>(module), name.c_str());
    if (status == hipErrorNotFound) return nullptr;
    check(*api_, status, "hipModuleGetFunction", "finding kernel " + name);
    return function;
  }
  bool find_global(void* module, const std::string& name, std::uint64_t* address, std::size_t* bytes) override {
    make_current();
    hipDeviceptr_t found = nullptr;
    size_t size = 0;
    hipError_t status = api_->hipModuleGetGlobal(&found, &size, static_cast<hipModule_t>(module), name.c_str());
    if (status == hipErrorNotFound) return false;
    check(*api_, status, "hipModuleGetGlobal", "finding global " + name);
    *address = reinterpret_cast<std::uintptr_t>(found);
    *bytes = size;
    return true;
  }

  FunctionAttributes attributes(void* function) override {
    auto get = [&](hipFunction_attribute which) {
      int value = 0;
      check(*api_, api_->hipFuncGetAttribute(&value, which, static_cast<hipFunction_t>(function)), "hipFuncGetAttribute");
      return value;
    };
    FunctionAttributes a;
    a.registers = get(HIP_FUNC_ATTRIBUTE_NUM_REGS);
    a.static_shared_bytes = get(HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    a.max_dynamic_shared_bytes = get(HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    a.max_threads_per_block = get(HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    a.local_bytes = get(HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    a.const_bytes = get(HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
    // ptx_version, binary_version, cache_mode_ca: NVIDIA notions, left at -1 (not reported);
    // the carveout stays -1 (no preference): AMD GPUs have no L1/shared-memory split to set.
    return a;
  }
  void set_preferred_shared_carveout(void*, int) override {}  // a hint, with nothing to act on here
  int max_active_blocks_per_multiprocessor(void* function, int block_threads, std::size_t dynamic_shared) override {
    make_current();
    int blocks = 0;
    check(*api_, api_->hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, static_cast<hipFunction_t>(function),
                                                                          block_threads, dynamic_shared),
          "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor");
    return blocks;
  }
  void set_max_dynamic_shared(void*, int bytes) override {
    // AMD GPUs have no opt-in above the per-block limit; within it nothing needs raising.
    if (bytes > props_.max_shared_per_block) {
      throw Error(ErrorCode::launch_config, fmt::format("{} bytes of dynamic shared memory exceed {}'s limit of {}",
                                                        bytes, props_.name, props_.max_shared_per_block));
    }
  }
  int dynamic_shared_limit(void*) noexcept override { return props_.max_shared_per_block; }
  std::vector<std::size_t> parameter_sizes(void*, std::optional<std::size_t>) override { return {}; }  // HIP cannot say
  void launch(void* function, const LaunchConfig& c, void** args) override {
    if (c.cooperative) throw Error(ErrorCode::launch_config, "a cooperative launch: " + props_.cooperative_launch_missing);
    make_current();
    check(*api_, api_->hipModuleLaunchKernel(static_cast<hipFunction_t>(function), c.grid[0], c.grid[1], c.grid[2],
                                             c.block[0], c.block[1], c.block[2], c.shared_bytes, stream_of(c.stream.handle),
                                             args, nullptr),
          "hipModuleLaunchKernel");
  }

 private:
  std::shared_ptr<platform::HipRuntimeApi> api_;
  int ordinal_;
  DeviceProperties props_;
};

}  // namespace

std::unique_ptr<Driver> open_hip_driver(int ordinal, const std::string& library) {
  return std::make_unique<HipDriver>(hip_api(library), ordinal);
}

}  // namespace kernc::detail
