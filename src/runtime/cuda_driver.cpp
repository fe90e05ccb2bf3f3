// The CUDA implementation of detail::Driver over libcuda (see NOTE [ runtime backends ]).

#include <mutex>

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "platform/cuda_driver_api.hpp"
#include "runtime/driver.hpp"

namespace kernc::detail {

namespace {

void check(const platform::CudaDriverApi& api, CUresult status, const char* call, const std::string& what = {}) {
  if (status == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  api.cuGetErrorName(status, &name);
  api.cuGetErrorString(status, &text);
  throw Error(ErrorCode::driver, fmt::format("{}{}{} failed: {} ({})", what, what.empty() ? "" : ": ", call,
                                             name ? name : "unknown error", text ? text : "no description"));
}

// libcuda, loaded and initialised once per process.
std::shared_ptr<platform::CudaDriverApi> cuda_api(const std::string& library) {
  static std::mutex mutex;
  static std::shared_ptr<platform::CudaDriverApi> api;
  std::lock_guard<std::mutex> lock(mutex);
  if (api) return api;
  try {
    auto loaded = std::make_shared<platform::CudaDriverApi>(platform::CudaDriverApi::load(library));
    check(*loaded, loaded->cuInit(0), "cuInit", "initialising the CUDA driver");
    api = loaded;
  } catch (const Error& error) {
    throw Error(ErrorCode::no_device, fmt::format("no usable NVIDIA GPU: {}", error.what()));
  }
  return api;
}

class CudaDriver final : public Driver {
 public:
  CudaDriver(std::shared_ptr<platform::CudaDriverApi> api, int ordinal) : api_(std::move(api)) {
    int count = 0;
    check(*api_, api_->cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (ordinal < 0 || ordinal >= count) {
      throw Error(ErrorCode::no_device, fmt::format("no GPU with ordinal {}: the driver sees {} GPU(s)", ordinal, count));
    }
    check(*api_, api_->cuDeviceGet(&device_, ordinal), "cuDeviceGet");
    char name[256] = {};
    check(*api_, api_->cuDeviceGetName(name, sizeof name, device_), "cuDeviceGetName");
    props_.name = name;
    auto attribute = [this](CUdevice_attribute which) {
      int value = 0;
      check(*api_, api_->cuDeviceGetAttribute(&value, which, device_), "cuDeviceGetAttribute");
      return value;
    };
    props_.compute_capability = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
                                attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    props_.target = fmt::format("sm_{}", props_.compute_capability);
    props_.multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    props_.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    props_.max_shared_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    props_.max_shared_per_block_optin = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    props_.max_grid[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    props_.max_grid[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    props_.max_grid[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    props_.max_block[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
    props_.max_block[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
    props_.max_block[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    check(*api_, api_->cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    // Scratch memory (allocate_async) comes from the default pool, which by default hands
    // freed memory back to the system at every synchronisation, so each reduction would
    // map its scratch anew. Keep it (the standard advice for stream-ordered allocation).
    if (api_->cuDeviceGetDefaultMemPool && api_->cuMemPoolSetAttribute) {
      CUmemoryPool pool = nullptr;
      if (api_->cuDeviceGetDefaultMemPool(&pool, device_) == CUDA_SUCCESS) {
        cuuint64_t keep = ~cuuint64_t{0};
        api_->cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
      }
    }
  }

  ~CudaDriver() override {
    if (context_) api_->cuDevicePrimaryCtxRelease(device_);  // errors at exit are ignored
  }

  Backend backend() const noexcept override { return Backend::cuda; }
  const DeviceProperties& properties() const noexcept override { return props_; }

  void make_current() override {
    CUcontext current = nullptr;
    if (api_->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context_) return;
    check(*api_, api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  }

  std::uint64_t allocate(std::size_t bytes) override {
    make_current();
    CUdeviceptr address = 0;
    check(*api_, api_->cuMemAlloc(&address, bytes), "cuMemAlloc", fmt::format("allocating {} bytes", bytes));
    return address;
  }

  std::uint64_t allocate_async(std::size_t bytes, void* stream) override {
    if (!api_->cuMemAllocAsync || !api_->cuMemFreeAsync) return 0;
    make_current();
    CUdeviceptr address = 0;
    check(*api_, api_->cuMemAllocAsync(&address, bytes, static_cast<CUstream>(stream)), "cuMemAllocAsync",
          fmt::format("allocating {} bytes of scratch memory", bytes));
    return address;
  }

  void release_memory(std::uint64_t address, bool stream_ordered, void* stream) noexcept override {
    api_->cuCtxSetCurrent(context_);
    if (stream_ordered) {
      api_->cuMemFreeAsync(address, static_cast<CUstream>(stream));
    } else {
      api_->cuMemFree(address);
    }
  }

  void copy_to_device(std::uint64_t dst, const void* src, std::size_t bytes, void* stream) override {
    make_current();
    check(*api_, api_->cuMemcpyHtoDAsync(dst, src, bytes, static_cast<CUstream>(stream)), "cuMemcpyHtoDAsync",
          "copying to the device");
  }

  void copy_to_host(void* dst, std::uint64_t src, std::size_t bytes, void* stream) override {
    make_current();
    auto s = static_cast<CUstream>(stream);
    check(*api_, api_->cuMemcpyDtoHAsync(dst, src, bytes, s), "cuMemcpyDtoHAsync", "copying to the host");
    check(*api_, api_->cuStreamSynchronize(s), "cuStreamSynchronize", "copying to the host");
  }

  void copy_device(std::uint64_t dst, std::uint64_t src, std::size_t bytes, void* stream) override {
    make_current();
    check(*api_, api_->cuMemcpyDtoDAsync(dst, src, bytes, static_cast<CUstream>(stream)), "cuMemcpyDtoDAsync",
          "copying on the device");
  }

  void fill_bytes(std::uint64_t dst, unsigned char value, std::size_t bytes, void* stream) override {
    make_current();
    check(*api_, api_->cuMemsetD8Async(dst, value, bytes, static_cast<CUstream>(stream)), "cuMemsetD8Async");
  }

  void synchronize() override {
    make_current();
    check(*api_, api_->cuCtxSynchronize(), "cuCtxSynchronize");
  }

  void synchronize_stream(void* stream) override {
    make_current();
    check(*api_, api_->cuStreamSynchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
  }

  bool is_device_pointer(std::uint64_t address) noexcept override {
    unsigned int type = 0;
    api_->cuCtxSetCurrent(context_);
    CUresult status = api_->cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address);
    return status == CUDA_SUCCESS && (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED);
  }

  void* create_stream() override {
    make_current();
    CUstream handle = nullptr;
    check(*api_, api_->cuStreamCreate(&handle, CU_STREAM_DEFAULT), "cuStreamCreate");
    return handle;
  }
  void release_stream(void* stream) noexcept override { api_->cuStreamDestroy(static_cast<CUstream>(stream)); }

  void* create_event() override {
    make_current();
    CUevent handle = nullptr;
    check(*api_, api_->cuEventCreate(&handle, CU_EVENT_DEFAULT), "cuEventCreate");
    return handle;
  }
  void release_event(void* event) noexcept override { api_->cuEventDestroy(static_cast<CUevent>(event)); }
  void record_event(void* event, void* stream) override {
    make_current();
    check(*api_, api_->cuEventRecord(static_cast<CUevent>(event), static_cast<CUstream>(stream)), "cuEventRecord");
  }
  void synchronize_event(void* event) override {
    check(*api_, api_->cuEventSynchronize(static_cast<CUevent>(event)), "cuEventSynchronize");
  }
  float elapsed_ms(void* start, void* stop) override {
    float ms = 0;
    check(*api_, api_->cuEventElapsedTime(&ms, static_cast<CUevent>(start), static_cast<CUevent>(stop)),
          "cuEventElapsedTime");
    return ms;
  }

  void* load_module(const std::string& image) override {
    make_current();
    CUmodule module = nullptr;
    // PTX must be NUL-terminated for the driver; a cubin is read by its ELF header.
    std::string terminated = image + '\0';
    check(*api_, api_->cuModuleLoadData(&module, terminated.data()), "cuModuleLoadData", "loading a module");
    return module;
  }
  void release_module(void* module) noexcept override { api_->cuModuleUnload(static_cast<CUmodule>(module)); }

  void* find_function(void* module, const std::string& name) override {
    make_current();
    CUfunction function = nullptr;
    CUresult status = api_->cuModuleGetFunction(&function, static_cast<CUmodule>(module), name.c_str());
    if (status == CUDA_ERROR_NOT_FOUND) return nullptr;
    check(*api_, status, "cuModuleGetFunction", "finding kernel " + name);
    return function;
  }

  bool find_global(void* module, const std::string& name, std::uint64_t* address, std::size_t* bytes) override {
    make_current();
    CUdeviceptr found = 0;
    size_t size = 0;
    CUresult status = api_->cuModuleGetGlobal(&found, &size, static_cast<CUmodule>(module), name.c_str());
    if (status == CUDA_ERROR_NOT_FOUND) return false;
    check(*api_, status, "cuModuleGetGlobal", "finding global " + name);
    *address = found;
    *bytes = size;
    return true;
  }

  FunctionAttributes attributes(void* function) override {
    auto get = [&](CUfunction_attribute which) {
      int value = 0;
      check(*api_, api_->cuFuncGetAttribute(&value, which, static_cast<CUfunction>(function)), "cuFuncGetAttribute");
      return value;
    };
    FunctionAttributes a;
    a.registers = get(CU_FUNC_ATTRIBUTE_NUM_REGS);
    a.static_shared_bytes = get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    a.max_dynamic_shared_bytes = get(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    a.max_threads_per_block = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    a.local_bytes = get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    a.const_bytes = get(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
    return a;
  }

  void set_max_dynamic_shared(void* function, int bytes) override {
    check(*api_, api_->cuFuncSetAttribute(static_cast<CUfunction>(function), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          bytes),
          "cuFuncSetAttribute");
  }

  int dynamic_shared_limit(void* function) noexcept override {
    int allowed = 0;
    api_->cuFuncGetAttribute(&allowed, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<CUfunction>(function));
    return allowed;
  }

  std::vector<std::size_t> parameter_sizes(void* function, std::optional<std::size_t> count) override {
    std::vector<std::size_t> sizes;
    if (!api_->cuFuncGetParamInfo) return sizes;
    for (size_t index = 0; !count || index < *count; ++index) {
      size_t offset = 0, size = 0;
      if (api_->cuFuncGetParamInfo(static_cast<CUfunction>(function), index, &offset, &size) != CUDA_SUCCESS) break;
      sizes.push_back(size);
    }
    return sizes;
  }

  void launch(void* function, const LaunchConfig& c, void** args) override {
    make_current();
    check(*api_, api_->cuLaunchKernel(static_cast<CUfunction>(function), c.grid[0], c.grid[1], c.grid[2], c.block[0],
                                      c.block[1], c.block[2], c.shared_bytes, static_cast<CUstream>(c.stream.handle), args,
                                      nullptr),
          "cuLaunchKernel");
  }

 private:
  std::shared_ptr<platform::CudaDriverApi> api_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  DeviceProperties props_;
};

}  // namespace

std::unique_ptr<Driver> open_cuda_driver(int ordinal, const std::string& library) {
  return std::make_unique<CudaDriver>(cuda_api(library), ordinal);
}

}  // namespace kernc::detail
