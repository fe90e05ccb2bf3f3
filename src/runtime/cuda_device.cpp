#include <map>
#include <mutex>

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "kernc/runtime.hpp"
#include "runtime/device_state.hpp"

namespace kernc {

namespace detail {

void check_driver(const platform::CudaDriverApi& api, CUresult status, const char* call, const std::string& what) {
  if (status == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  api.cuGetErrorName(status, &name);
  api.cuGetErrorString(status, &text);
  throw Error(ErrorCode::driver, fmt::format("{}{}{} failed: {} ({})", what, what.empty() ? "" : ": ", call,
                                             name ? name : "unknown error", text ? text : "no description"));
}

void DeviceState::check(CUresult status, const char* call, const std::string& what) const {
  check_driver(*api, status, call, what);
}

void DeviceState::make_current() const {
  CUcontext current = nullptr;
  if (api->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context) return;
  check(api->cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

DeviceState::~DeviceState() {
  // At process exit the driver may already be gone (CUDA_ERROR_DEINITIALIZED): ignore.
  if (context) api->cuDevicePrimaryCtxRelease(device);
}

namespace {
struct Registry {
  std::mutex mutex;
  std::shared_ptr<platform::CudaDriverApi> api;
  std::string api_error;
  std::map<int, std::weak_ptr<DeviceState>> devices;
};

Registry& registry() {
  static Registry* instance = new Registry();  // never destroyed: device states may outlive statics
  return *instance;
}

std::shared_ptr<platform::CudaDriverApi> load_driver(Registry& r, const std::string& library) {
  if (r.api) return r.api;
  try {
    auto api = std::make_shared<platform::CudaDriverApi>(platform::CudaDriverApi::load(library));
    check_driver(*api, api->cuInit(0), "cuInit", "initialising the CUDA driver");
    r.api = api;
  } catch (const Error& error) {
    throw Error(ErrorCode::no_device, fmt::format("no usable NVIDIA GPU: {}", error.what()));
  }
  return r.api;
}
}  // namespace

}  // namespace detail

Device Device::get(int ordinal, const std::string& driver_library) {
  auto& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto api = detail::load_driver(r, driver_library);
  if (auto existing = r.devices[ordinal].lock()) {
    Device device;
    device.state_ = existing;
    return device;
  }
  int count = 0;
  detail::check_driver(*api, api->cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count) {
    throw Error(ErrorCode::no_device, fmt::format("no GPU with ordinal {}: the driver sees {} GPU(s)", ordinal, count));
  }
  auto state = std::make_shared<detail::DeviceState>();
  state->api = api;
  state->ordinal = ordinal;
  state->check(api->cuDeviceGet(&state->device, ordinal), "cuDeviceGet");
  char name[256] = {};
  state->check(api->cuDeviceGetName(name, sizeof name, state->device), "cuDeviceGetName");
  state->name = name;
  auto attribute = [&](CUdevice_attribute which) {
    int value = 0;
    state->check(api->cuDeviceGetAttribute(&value, which, state->device), "cuDeviceGetAttribute");
    return value;
  };
  state->compute_capability = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
                              attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  state->multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  state->max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  state->max_shared_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  state->max_shared_per_block_optin = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  state->max_grid[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  state->max_grid[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  state->max_grid[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  state->max_block[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  state->max_block[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  state->max_block[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  state->check(api->cuDevicePrimaryCtxRetain(&state->context, state->device), "cuDevicePrimaryCtxRetain");
  // Scratch memory (allocate_on) comes from the default pool; by default the pool hands
  // freed memory back to the system at every synchronisation, so each reduction would map
  // its scratch anew. Keep it instead (the standard advice for stream-ordered allocation).
  if (api->cuDeviceGetDefaultMemPool && api->cuMemPoolSetAttribute) {
    CUmemoryPool pool = nullptr;
    if (api->cuDeviceGetDefaultMemPool(&pool, state->device) == CUDA_SUCCESS) {
      cuuint64_t keep = ~cuuint64_t{0};
      api->cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
    }
  }
  r.devices[ordinal] = state;
  Device device;
  device.state_ = std::move(state);
  return device;
}

bool Device::available(const std::string& driver_library) noexcept {
  try {
    get(0, driver_library);
    return true;
  } catch (...) {
    return false;
  }
}

int Device::ordinal() const noexcept { return state_->ordinal; }
const std::string& Device::name() const noexcept { return state_->name; }
int Device::compute_capability() const noexcept { return state_->compute_capability; }
int Device::multiprocessors() const noexcept { return state_->multiprocessors; }
int Device::max_threads_per_block() const noexcept { return state_->max_threads_per_block; }
int Device::max_shared_bytes_per_block() const noexcept { return state_->max_shared_per_block; }
int Device::max_shared_bytes_per_block_optin() const noexcept { return state_->max_shared_per_block_optin; }
Target Device::target() const { return Target::parse(fmt::format("sm_{}", state_->compute_capability)); }

DeviceBuffer Device::allocate(std::size_t bytes) const {
  DeviceBuffer buffer;
  buffer.device_ = state_;
  buffer.size_ = bytes;
  if (bytes == 0) return buffer;
  state_->make_current();
  CUdeviceptr address = 0;
  state_->check(state_->api->cuMemAlloc(&address, bytes), "cuMemAlloc", fmt::format("allocating {} bytes", bytes));
  buffer.address_ = address;
  return buffer;
}

DeviceBuffer Device::allocate_on(StreamRef stream, std::size_t bytes) const {
  if (!state_->api->cuMemAllocAsync || !state_->api->cuMemFreeAsync || bytes == 0) return allocate(bytes);
  state_->make_current();
  DeviceBuffer buffer;
  buffer.device_ = state_;
  buffer.size_ = bytes;
  CUdeviceptr address = 0;
  state_->check(state_->api->cuMemAllocAsync(&address, bytes, static_cast<CUstream>(stream.handle)), "cuMemAllocAsync",
                fmt::format("allocating {} bytes of scratch memory", bytes));
  buffer.address_ = address;
  buffer.stream_ordered_ = true;
  buffer.free_stream_ = stream.handle;
  return buffer;
}

void Device::copy_to_device(std::uint64_t dst, const void* src, std::size_t bytes, StreamRef stream) const {
  if (bytes == 0) return;
  state_->make_current();
  state_->check(state_->api->cuMemcpyHtoDAsync(dst, src, bytes, static_cast<CUstream>(stream.handle)),
                "cuMemcpyHtoDAsync", "copying to the device");
}

void Device::copy_to_host(void* dst, std::uint64_t src, std::size_t bytes, StreamRef stream) const {
  if (bytes == 0) return;
  state_->make_current();
  auto s = static_cast<CUstream>(stream.handle);
  state_->check(state_->api->cuMemcpyDtoHAsync(dst, src, bytes, s), "cuMemcpyDtoHAsync", "copying to the host");
  // The host buffer is pageable memory the caller reads next: finish the copy.
  state_->check(state_->api->cuStreamSynchronize(s), "cuStreamSynchronize", "copying to the host");
}

void Device::copy_device(std::uint64_t dst, std::uint64_t src, std::size_t bytes, StreamRef stream) const {
  if (bytes == 0) return;
  state_->make_current();
  state_->check(state_->api->cuMemcpyDtoDAsync(dst, src, bytes, static_cast<CUstream>(stream.handle)),
                "cuMemcpyDtoDAsync", "copying on the device");
}

void Device::fill_bytes(std::uint64_t dst, unsigned char value, std::size_t bytes, StreamRef stream) const {
  if (bytes == 0) return;
  state_->make_current();
  state_->check(state_->api->cuMemsetD8Async(dst, value, bytes, static_cast<CUstream>(stream.handle)), "cuMemsetD8Async");
}

void Device::synchronize() const {
  state_->make_current();
  state_->check(state_->api->cuCtxSynchronize(), "cuCtxSynchronize");
}

void Device::synchronize(StreamRef stream) const {
  state_->make_current();
  state_->check(state_->api->cuStreamSynchronize(static_cast<CUstream>(stream.handle)), "cuStreamSynchronize");
}

Stream Device::create_stream() const {
  state_->make_current();
  Stream stream;
  stream.device_ = state_;
  CUstream handle = nullptr;
  state_->check(state_->api->cuStreamCreate(&handle, CU_STREAM_DEFAULT), "cuStreamCreate");
  stream.handle_ = handle;
  return stream;
}

Event Device::create_event() const {
  state_->make_current();
  Event event;
  event.device_ = state_;
  CUevent handle = nullptr;
  state_->check(state_->api->cuEventCreate(&handle, CU_EVENT_DEFAULT), "cuEventCreate");
  event.handle_ = handle;
  return event;
}

Module Device::load(const std::string& image) const {
  state_->make_current();
  CUmodule raw = nullptr;
  // PTX must be NUL-terminated for the driver; a cubin is read by its ELF header.
  std::string terminated = image + '\0';
  state_->check(state_->api->cuModuleLoadData(&raw, terminated.data()), "cuModuleLoadData", "loading a module");
  auto api = state_->api;
  auto device = state_;
  Module module;
  module.device_ = state_;
  module.handle_ = std::shared_ptr<void>(raw, [device](void* handle) {
    device->api->cuModuleUnload(static_cast<CUmodule>(handle));  // errors at exit are ignored
  });
  return module;
}

bool Device::is_device_pointer(std::uint64_t address) const noexcept {
  unsigned int type = 0;
  state_->make_current();
  CUresult status = state_->api->cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address);
  return status == CUDA_SUCCESS && (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED);
}

// ---- handles ------------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : device_(std::move(other.device_)),
      address_(other.address_),
      size_(other.size_),
      stream_ordered_(other.stream_ordered_),
      free_stream_(other.free_stream_) {
  other.address_ = 0;
  other.size_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    this->~DeviceBuffer();
    new (this) DeviceBuffer(std::move(other));
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (address_ && device_) {
    device_->api->cuCtxSetCurrent(device_->context);
    // Errors (CUDA_ERROR_DEINITIALIZED at exit) are ignored: a destructor must not throw.
    if (stream_ordered_) {
      device_->api->cuMemFreeAsync(address_, static_cast<CUstream>(free_stream_));
    } else {
      device_->api->cuMemFree(address_);
    }
  }
}

Stream::Stream(Stream&& other) noexcept : device_(std::move(other.device_)), handle_(other.handle_) {
  other.handle_ = nullptr;
}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    this->~Stream();
    new (this) Stream(std::move(other));
  }
  return *this;
}

Stream::~Stream() {
  if (handle_ && device_) device_->api->cuStreamDestroy(static_cast<CUstream>(handle_));
}

void Stream::synchronize() const {
  device_->check(device_->api->cuStreamSynchronize(static_cast<CUstream>(handle_)), "cuStreamSynchronize");
}

Event::Event(Event&& other) noexcept : device_(std::move(other.device_)), handle_(other.handle_) { other.handle_ = nullptr; }

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    this->~Event();
    new (this) Event(std::move(other));
  }
  return *this;
}

Event::~Event() {
  if (handle_ && device_) device_->api->cuEventDestroy(static_cast<CUevent>(handle_));
}

void Event::record(StreamRef stream) const {
  device_->make_current();
  device_->check(device_->api->cuEventRecord(static_cast<CUevent>(handle_), static_cast<CUstream>(stream.handle)),
                 "cuEventRecord");
}

void Event::synchronize() const {
  device_->check(device_->api->cuEventSynchronize(static_cast<CUevent>(handle_)), "cuEventSynchronize");
}

float Event::elapsed_ms_since(const Event& start) const {
  float ms = 0;
  device_->check(device_->api->cuEventElapsedTime(&ms, static_cast<CUevent>(start.handle_), static_cast<CUevent>(handle_)),
                 "cuEventElapsedTime");
  return ms;
}

// ---- modules and functions -----------------------------------------------------------------

Function Module::function(const std::string& name) const {
  device_->make_current();
  CUfunction raw = nullptr;
  CUresult status = device_->api->cuModuleGetFunction(&raw, static_cast<CUmodule>(handle_.get()), name.c_str());
  if (status == CUDA_ERROR_NOT_FOUND) {
    throw Error(ErrorCode::not_found, fmt::format("the module has no kernel named {} (is it extern \"C\", or did you "
                                                  "mean a name expression's lowered name?)",
                                                  name));
  }
  device_->check(status, "cuModuleGetFunction", "finding kernel " + name);
  Function function;
  function.device_ = device_;
  function.module_ = handle_;
  function.handle_ = raw;
  function.name_ = name;
  return function;
}

std::pair<std::uint64_t, std::size_t> Module::global(const std::string& name) const {
  device_->make_current();
  CUdeviceptr address = 0;
  size_t bytes = 0;
  CUresult status = device_->api->cuModuleGetGlobal(&address, &bytes, static_cast<CUmodule>(handle_.get()), name.c_str());
  if (status == CUDA_ERROR_NOT_FOUND) {
    throw Error(ErrorCode::not_found, fmt::format("the module has no __device__ or __constant__ global named {}", name));
  }
  device_->check(status, "cuModuleGetGlobal", "finding global " + name);
  return {address, bytes};
}

FunctionAttributes Function::attributes() const {
  auto get = [this](CUfunction_attribute which) {
    int value = 0;
    device_->check(device_->api->cuFuncGetAttribute(&value, which, static_cast<CUfunction>(handle_)), "cuFuncGetAttribute");
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

std::vector<std::size_t> Function::parameter_sizes() const {
  std::vector<std::size_t> sizes;
  if (!device_->api->cuFuncGetParamInfo) return sizes;
  for (size_t index = 0;; ++index) {
    size_t offset = 0, size = 0;
    if (device_->api->cuFuncGetParamInfo(static_cast<CUfunction>(handle_), index, &offset, &size) != CUDA_SUCCESS) break;
    sizes.push_back(size);
  }
  return sizes;
}

void Function::set_max_dynamic_shared_bytes(int bytes) const {
  if (bytes > device_->max_shared_per_block_optin) {
    throw Error(ErrorCode::launch_config,
                fmt::format("{}: {} bytes of dynamic shared memory asked for; {} allows at most {} per block", name_,
                            bytes, device_->name, device_->max_shared_per_block_optin));
  }
  device_->check(device_->api->cuFuncSetAttribute(static_cast<CUfunction>(handle_),
                                                  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
                 "cuFuncSetAttribute");
}

void Function::launch(const LaunchConfig& c, void** args) const {
  const auto& d = *device_;
  static const char* kAxis = "xyz";
  unsigned long long threads = 1ull * c.block[0] * c.block[1] * c.block[2];
  for (int k = 0; k < 3; ++k) {
    if (c.grid[k] == 0 || c.block[k] == 0) {
      throw Error(ErrorCode::launch_config, fmt::format("{}: grid and block sizes must be at least 1 (grid.{} = {}, "
                                                        "block.{} = {})",
                                                        name_, kAxis[k], c.grid[k], kAxis[k], c.block[k]));
    }
    if (c.grid[k] > static_cast<unsigned>(d.max_grid[k])) {
      throw Error(ErrorCode::launch_config,
                  fmt::format("{}: grid.{} = {} exceeds the device limit of {}", name_, kAxis[k], c.grid[k], d.max_grid[k]));
    }
    if (c.block[k] > static_cast<unsigned>(d.max_block[k])) {
      throw Error(ErrorCode::launch_config, fmt::format("{}: block.{} = {} exceeds the device limit of {}", name_,
                                                        kAxis[k], c.block[k], d.max_block[k]));
    }
  }
  if (threads > static_cast<unsigned long long>(d.max_threads_per_block)) {
    throw Error(ErrorCode::launch_config, fmt::format("{}: {} threads per block exceed the device limit of {}", name_,
                                                      threads, d.max_threads_per_block));
  }
  if (c.shared_bytes > static_cast<unsigned>(d.max_shared_per_block)) {
    int allowed = 0;
    d.api->cuFuncGetAttribute(&allowed, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<CUfunction>(handle_));
    if (c.shared_bytes > static_cast<unsigned>(allowed)) {
      throw Error(ErrorCode::launch_config,
                  fmt::format("{}: {} bytes of dynamic shared memory exceed the limit of {} (raise it up to {} with "
                              "set_max_dynamic_shared_bytes)",
                              name_, c.shared_bytes, std::max(allowed, d.max_shared_per_block), d.max_shared_per_block_optin));
    }
  }
  d.make_current();
  d.check(d.api->cuLaunchKernel(static_cast<CUfunction>(handle_), c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1],
                                c.block[2], c.shared_bytes, static_cast<CUstream>(c.stream.handle), args, nullptr),
          "cuLaunchKernel", "launching " + name_);
}

}  // namespace kernc
