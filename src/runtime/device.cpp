// The Device layer over a backend's Driver (see NOTE [ runtime backends ] in driver.hpp).

#include <map>
#include <mutex>

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "kernc/runtime.hpp"
#include "runtime/driver.hpp"

namespace kernc {

namespace detail {

struct DeviceState {
  std::unique_ptr<Driver> driver;
  int ordinal = 0;
};

namespace {
struct Registry {
  std::mutex mutex;
  std::map<std::pair<Backend, int>, std::weak_ptr<DeviceState>> devices;
};

Registry& registry() {
  static Registry* instance = new Registry();  // never destroyed: device states may outlive statics
  return *instance;
}
}  // namespace

}  // namespace detail

Device Device::get(int ordinal, const std::string& driver_library, Backend backend) {
  auto& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& slot = r.devices[{backend, ordinal}];
  if (auto existing = slot.lock()) {
    Device device;
    device.state_ = std::move(existing);
    return device;
  }
  auto state = std::make_shared<detail::DeviceState>();
  state->ordinal = ordinal;
  state->driver = backend == Backend::cuda ? detail::open_cuda_driver(ordinal, driver_library)
                                           : detail::open_hip_driver(ordinal, driver_library);
  slot = state;
  Device device;
  device.state_ = std::move(state);
  return device;
}

bool Device::available(const std::string& driver_library, Backend backend) noexcept {
  try {
    get(0, driver_library, backend);
    return true;
  } catch (...) {
    return false;
  }
}

Backend Device::backend() const noexcept { return state_->driver->backend(); }
int Device::ordinal() const noexcept { return state_->ordinal; }
const std::string& Device::name() const noexcept { return state_->driver->properties().name; }
int Device::compute_capability() const noexcept { return state_->driver->properties().compute_capability; }
int Device::multiprocessors() const noexcept { return state_->driver->properties().multiprocessors; }
std::uint64_t Device::total_memory_bytes() const noexcept { return state_->driver->properties().total_memory; }
int Device::max_threads_per_block() const noexcept { return state_->driver->properties().max_threads_per_block; }
int Device::max_shared_bytes_per_block() const noexcept { return state_->driver->properties().max_shared_per_block; }
int Device::max_shared_bytes_per_block_optin() const noexcept {
  return state_->driver->properties().max_shared_per_block_optin;
}
Target Device::target() const { return Target::parse(state_->driver->properties().target); }

DeviceBuffer Device::allocate(std::size_t bytes) const {
  DeviceBuffer buffer;
  buffer.device_ = state_;
  buffer.size_ = bytes;
  if (bytes > 0) buffer.address_ = state_->driver->allocate(bytes);
  return buffer;
}

DeviceBuffer Device::allocate_on(StreamRef stream, std::size_t bytes) const {
  if (bytes == 0) return allocate(0);
  std::uint64_t address = state_->driver->allocate_async(bytes, stream.handle);
  if (address == 0) return allocate(bytes);  // no memory pools on this driver
  DeviceBuffer buffer;
  buffer.device_ = state_;
  buffer.size_ = bytes;
  buffer.address_ = address;
  buffer.stream_ordered_ = true;
  buffer.free_stream_ = stream.handle;
  return buffer;
}

void Device::copy_to_device(std::uint64_t dst, const void* src, std::size_t bytes, StreamRef stream) const {
  if (bytes > 0) state_->driver->copy_to_device(dst, src, bytes, stream.handle);
}

void Device::copy_to_host(void* dst, std::uint64_t src, std::size_t bytes, StreamRef stream) const {
  if (bytes > 0) state_->driver->copy_to_host(dst, src, bytes, stream.handle);
}

void Device::copy_device(std::uint64_t dst, std::uint64_t src, std::size_t bytes, StreamRef stream) const {
  if (bytes > 0) state_->driver->copy_device(dst, src, bytes, stream.handle);
}

void Device::fill_bytes(std::uint64_t dst, unsigned char value, std::size_t bytes, StreamRef stream) const {
  if (bytes > 0) state_->driver->fill_bytes(dst, value, bytes, stream.handle);
}

void Device::synchronize() const { state_->driver->synchronize(); }
void Device::synchronize(StreamRef stream) const { state_->driver->synchronize_stream(stream.handle); }

Stream Device::create_stream() const {
  Stream stream;
  stream.device_ = state_;
  stream.handle_ = state_->driver->create_stream();
  return stream;
}

Event Device::create_event() const {
  Event event;
  event.device_ = state_;
  event.handle_ = state_->driver->create_event();
  return event;
}

Module Device::load(const std::string& image) const {
  void* raw = state_->driver->load_module(image);
  auto device = state_;
  Module module;
  module.device_ = state_;
  module.handle_ = std::shared_ptr<void>(raw, [device](void* handle) { device->driver->release_module(handle); });
  return module;
}

bool Device::is_device_pointer(std::uint64_t address) const noexcept {
  return state_->driver->is_device_pointer(address);
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
  if (address_ && device_) device_->driver->release_memory(address_, stream_ordered_, free_stream_);
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
  if (handle_ && device_) device_->driver->release_stream(handle_);
}

void Stream::synchronize() const { device_->driver->synchronize_stream(handle_); }

Event::Event(Event&& other) noexcept : device_(std::move(other.device_)), handle_(other.handle_) { other.handle_ = nullptr; }

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    this->~Event();
    new (this) Event(std::move(other));
  }
  return *this;
}

Event::~Event() {
  if (handle_ && device_) device_->driver->release_event(handle_);
}

void Event::record(StreamRef stream) const { device_->driver->record_event(handle_, stream.handle); }
void Event::synchronize() const { device_->driver->synchronize_event(handle_); }
float Event::elapsed_ms_since(const Event& start) const { return device_->driver->elapsed_ms(start.handle_, handle_); }

// ---- modules and functions -----------------------------------------------------------------

Function Module::function(const std::string& name) const {
  void* raw = device_->driver->find_function(handle_.get(), name);
  if (!raw) {
    throw Error(ErrorCode::not_found, fmt::format("the module has no kernel named {} (is it extern \"C\", or did you "
                                                  "mean a name expression's lowered name?)",
                                                  name));
  }
  Function function;
  function.device_ = device_;
  function.module_ = handle_;
  function.handle_ = raw;
  function.name_ = name;
  return function;
}

std::pair<std::uint64_t, std::size_t> Module::global(const std::string& name) const {
  std::uint64_t address = 0;
  std::size_t bytes = 0;
  if (!device_->driver->find_global(handle_.get(), name, &address, &bytes)) {
    throw Error(ErrorCode::not_found, fmt::format("the module has no __device__ or __constant__ global named {}", name));
  }
  return {address, bytes};
}

FunctionAttributes Function::attributes() const { return device_->driver->attributes(handle_); }

std::vector<std::size_t> Function::parameter_sizes(std::optional<std::size_t> count) const {
  return device_->driver->parameter_sizes(handle_, count);
}

void Function::set_max_dynamic_shared_bytes(int bytes) const {
  const auto& p = device_->driver->properties();
  if (bytes > p.max_shared_per_block_optin) {
    throw Error(ErrorCode::launch_config,
                fmt::format("{}: {} bytes of dynamic shared memory asked for; {} allows at most {} per block", name_,
                            bytes, p.name, p.max_shared_per_block_optin));
  }
  device_->driver->set_max_dynamic_shared(handle_, bytes);
}

void Function::launch(const LaunchConfig& c, void** args) const {
  const auto& d = device_->driver->properties();
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
    int allowed = device_->driver->dynamic_shared_limit(handle_);
    if (c.shared_bytes > static_cast<unsigned>(allowed)) {
      throw Error(ErrorCode::launch_config,
                  fmt::format("{}: {} bytes of dynamic shared memory exceed the limit of {} (raise it up to {} with "
                              "set_max_dynamic_shared_bytes)",
                              name_, c.shared_bytes, std::max(allowed, d.max_shared_per_block), d.max_shared_per_block_optin));
    }
  }
  try {
    device_->driver->launch(handle_, c, args);
  } catch (const Error& error) {
    // A device fault is the GPU's, not this launch's: every call repeats it word for word
    // (NOTE [ sticky device faults ], src/runtime/cuda_driver.cpp).
    if (error.code() == ErrorCode::device_fault) throw;
    throw Error(error.code(), fmt::format("launching {}: {}", name_, error.what()));
  }
}

}  // namespace kernc
