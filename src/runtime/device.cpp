// The Device layer over a backend's Driver (see NOTE [ runtime backends ] in driver.hpp).

#include <atomic>
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
  /// Bit k: peer access to GPU k of the same backend is enabled (Device::enable_peer_access).
  std::atomic<std::uint64_t> peers{0};
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

std::shared_ptr<DeviceState> register_device(Backend backend, int ordinal, std::unique_ptr<Driver> driver) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& slot = r.devices[{backend, ordinal}];
  if (!slot.expired()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("GPU {} of {} is already open", ordinal, to_string(backend)));
  }
  auto state = std::make_shared<DeviceState>();
  state->ordinal = ordinal;
  state->driver = std::move(driver);
  slot = state;
  return state;
}

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
  switch (backend) {
    case Backend::cuda: state->driver = detail::open_cuda_driver(ordinal, driver_library); break;
    case Backend::hip: state->driver = detail::open_hip_driver(ordinal, driver_library); break;
    case Backend::cpu: state->driver = detail::open_host_driver(ordinal); break;
  }
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
bool Device::supports_cooperative_launch() const noexcept { return state_->driver->properties().cooperative_launch; }
bool Device::supports_clusters() const noexcept { return state_->driver->properties().cluster_launch; }
std::pair<int, int> Device::priority_range() const noexcept {
  const auto& p = state_->driver->properties();
  return {p.greatest_priority, p.least_priority};
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

Library Device::load_library(const std::string& image) const {
  Library library;
  void* raw = state_->driver->load_library(image);
  if (!raw) return library;
  auto device = state_;  // the library is the process's, released through the driver that loaded it
  library.handle_ = std::shared_ptr<void>(raw, [device](void* handle) { device->driver->release_library(handle); });
  library.backend_ = backend();
  return library;
}

Module Device::load(const Library& library) const {
  if (!library.valid() || library.backend_ != backend()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("Device::load(library): {} library for a {} device",
                            library.valid() ? std::string("a ") + to_string(library.backend_) : std::string("an empty"),
                            to_string(backend())));
  }
  void* raw = state_->driver->library_module(library.handle_.get());
  Module module;
  module.device_ = state_;
  // Aliasing: the module handle is this context's, and holding it keeps the library loaded.
  module.handle_ = std::shared_ptr<void>(library.handle_, raw);
  return module;
}

bool Device::is_device_pointer(std::uint64_t address) const noexcept {
  return state_->driver->is_device_pointer(address);
}

DeviceId Device::id() const noexcept { return {backend(), ordinal()}; }

DeviceId Device::locate(std::uint64_t address) const noexcept { return state_->driver->locate(address); }

bool Device::pageable_memory_access() const noexcept { return state_->driver->properties().pageable_memory_access; }

bool Device::can_access_peer(const Device& other) const {
  if (other.state_ == state_) return true;
  return other.backend() == backend() && state_->driver->can_access_peer(*other.state_->driver);
}

void Device::enable_peer_access(const Device& other) const {
  if (other.state_ == state_) return;  // a device always reaches its own memory
  if (other.backend() != backend()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("peer access from {} to {}: the devices are of different backends",
                                                         id().str(), other.id().str()));
  }
  if (other.ordinal() >= 64) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("peer access from {} to {}: kernc tracks peers below ordinal 64", id().str(), other.id().str()));
  }
  // Done already: not asked again (the driver would answer with an error code, which
  // compute-sanitizer reports as an API error).
  if (peer_access_enabled(other.id())) return;
  if (!state_->driver->can_access_peer(*other.state_->driver)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("peer access from {} to {} is not possible: the driver says {} cannot address {}'s memory "
                            "(cuDeviceCanAccessPeer; no NVLink or PCIe peer path between them)",
                            id().str(), other.id().str(), id().str(), other.id().str()));
  }
  state_->driver->enable_peer_access(*other.state_->driver);
  state_->peers.fetch_or(std::uint64_t{1} << other.ordinal(), std::memory_order_acq_rel);
}

bool Device::peer_access_enabled(const DeviceId& other) const noexcept {
  if (other.backend != backend()) return false;
  if (other.ordinal == ordinal()) return true;
  if (other.ordinal < 0 || other.ordinal >= 64) return false;
  return (state_->peers.load(std::memory_order_acquire) >> other.ordinal) & 1;
}

Device Device::from_state(std::shared_ptr<detail::DeviceState> state) {
  Device device;
  device.state_ = std::move(state);
  return device;
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

void Device::begin_capture(StreamRef stream) const {
  if (!stream.handle) {
    throw Error(ErrorCode::invalid_argument,
                "graph capture needs a created stream (Device::create_stream): the legacy default stream cannot be "
                "captured");
  }
  state_->driver->begin_capture(stream.handle);
}

Graph Device::end_capture(StreamRef stream) const {
  if (!stream.handle) {
    throw Error(ErrorCode::invalid_argument, "end_capture: the legacy default stream is never captured");
  }
  Graph graph;
  graph.device_ = state_;
  graph.handle_ = state_->driver->end_capture(stream.handle);
  return graph;
}

Graph::Graph(Graph&& other) noexcept : device_(std::move(other.device_)), handle_(other.handle_) { other.handle_ = nullptr; }

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this != &other) {
    this->~Graph();
    new (this) Graph(std::move(other));
  }
  return *this;
}

Graph::~Graph() {
  if (handle_ && device_) device_->driver->release_graph(handle_);
}

void Graph::launch(StreamRef stream) const {
  if (!handle_) throw Error(ErrorCode::invalid_argument, "Graph::launch: this graph is empty (moved from, or never captured)");
  device_->driver->launch_graph(handle_, stream.handle);
}

// The defaults of a backend that cannot capture graphs.
namespace detail {

namespace {
[[noreturn]] void no_graphs(Backend backend) {
  throw Error(ErrorCode::driver, fmt::format("{} GPUs: this kernc runtime backend cannot capture or launch graphs",
                                             to_string(backend)));
}
}  // namespace

DeviceId Driver::locate(std::uint64_t) noexcept { return DeviceId::unknown(); }
bool Driver::can_access_peer(Driver&) noexcept { return false; }
void Driver::enable_peer_access(Driver& other) {
  throw Error(ErrorCode::invalid_argument, fmt::format("peer access from a {} device to a {} device is not possible",
                                                  to_string(backend()), to_string(other.backend())));
}

std::optional<Device> open_device(Backend backend) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& [key, weak] : r.devices) {
    if (key.first != backend) continue;
    if (auto state = weak.lock()) return Device::from_state(std::move(state));
  }
  return std::nullopt;
}

void Driver::begin_capture(void*) { no_graphs(backend()); }
void* Driver::end_capture(void*) { no_graphs(backend()); }
void Driver::launch_graph(void*, void*) { no_graphs(backend()); }
void Driver::release_graph(void*) noexcept {}

// The defaults of a backend without context-independent loading or clusters.
void* Driver::load_library(const std::string&) { return nullptr; }
void Driver::release_library(void*) noexcept {}
void* Driver::library_module(void*) {
  throw Error(ErrorCode::driver, fmt::format("{} GPUs: this kernc runtime backend loads no libraries", to_string(backend())));
}
int Driver::max_active_clusters(void*, const LaunchConfig&) {
  throw Error(ErrorCode::launch_config, fmt::format("{} GPUs: {}", to_string(backend()), properties().cluster_launch_missing));
}

}  // namespace detail

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
  if (bytes < 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: {} bytes of dynamic shared memory asked for: a size cannot be negative", name_, bytes));
  }
  // The driver's rule: dynamic plus static shared memory within the opt-in limit per block.
  const auto& p = device_->driver->properties();
  const int static_bytes = device_->driver->attributes(handle_).static_shared_bytes;
  const int allowed = p.max_shared_per_block_optin - static_bytes;
  if (bytes > allowed) {
    throw Error(ErrorCode::launch_config,
                fmt::format("{}: {} bytes of dynamic shared memory asked for; {} allows at most {} bytes of shared memory "
                            "per block, and the kernel's static shared memory takes {}, so at most {} can be dynamic",
                            name_, bytes, p.name, p.max_shared_per_block_optin, static_bytes, allowed));
  }
  device_->driver->set_max_dynamic_shared(handle_, bytes);
}

void Function::set_preferred_shared_carveout(int percent) const {
  if (percent < -1 || percent > 100) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: a shared-memory carveout of {}: give a percentage from 0 (most L1 cache) to 100 (most "
                            "shared memory), or -1 for no preference",
                            name_, percent));
  }
  device_->driver->set_preferred_shared_carveout(handle_, percent);
}

int Function::max_active_blocks_per_multiprocessor(int block_threads, std::size_t dynamic_shared_bytes) const {
  const auto& d = device_->driver->properties();
  if (block_threads < 1 || block_threads > d.max_threads_per_block) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: blocks of {} threads: {} allows 1 to {}", name_, block_threads,
                                                         d.name, d.max_threads_per_block));
  }
  return device_->driver->max_active_blocks_per_multiprocessor(handle_, block_threads, dynamic_shared_bytes);
}

namespace {

constexpr unsigned long long kPortableClusterBlocks = 8;
constexpr unsigned long long kMaxClusterBlocks = 16;  // Hopper's non-portable limit

// NOTE [ cooperative launch ]
// grid.sync() is a barrier across every block of the grid, so every block must be resident
// at once: the driver refuses a cooperative grid larger than the occupancy calculator's
// blocks per multiprocessor times the multiprocessors (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
// which names no number). kernc checks first and names both. CuPy instead shrinks a
// too-large 1-D grid with a warning (cupy/cuda/function.pyx, _launch), which silently
// changes gridDim for the kernel; kernc does not change a launch behind the caller's back.
// The compiled code is the same as for an ordinary launch: since CUDA 11, grid.sync()
// reads its workspace from the driver (cooperative_groups/details/driver_abi.h) and needs
// neither relocatable device code nor cudadevrt, and CuPy dropped its -rdc flag for it
// (commit 164e4d393, "cooperative groups do not need rdc (anymore)"). So a cooperative
// launch adds nothing to a program's cache key (NOTE [ cache key ], src/cache/cache_key.hpp).
void check_cooperative_grid(detail::Driver& driver, void* handle, const std::string& name, const LaunchConfig& c,
                            unsigned long long threads) {
  const auto& d = driver.properties();
  if (!d.cooperative_launch) {
    throw Error(ErrorCode::launch_config,
                fmt::format("{}: a cooperative launch on {}: {}", name, d.name, d.cooperative_launch_missing));
  }
  const unsigned long long blocks = 1ull * c.grid[0] * c.grid[1] * c.grid[2];
  const int per_multiprocessor =
      driver.max_active_blocks_per_multiprocessor(handle, static_cast<int>(threads), c.shared_bytes);
  const unsigned long long resident = 1ull * static_cast<unsigned>(per_multiprocessor) * static_cast<unsigned>(d.multiprocessors);
  if (blocks > resident) {
    throw Error(ErrorCode::launch_config,
                fmt::format("{}: a cooperative launch of {} blocks (grid {} x {} x {}) exceeds the {} that can be resident "
                            "at once on {}: {} per multiprocessor x {} multiprocessors, with {} threads and {} bytes of "
                            "dynamic shared memory per block (grid.sync() needs every block resident; shrink the grid "
                            "or the blocks)",
                            name, blocks, c.grid[0], c.grid[1], c.grid[2], resident, d.name, per_multiprocessor,
                            d.multiprocessors, threads, c.shared_bytes));
  }
}

// NOTE [ launch attributes ]
// Thread-block clusters, programmatic dependent launch (PDL) and launch priority are not
// parameters of cuLaunchKernel: they are attributes of cuLaunchKernelEx (CUDA 12.0). The
// CUDA driver launches with Ex only when a LaunchConfig sets one (or is cooperative and
// Ex exists, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, so that a cooperative launch can carry the
// others too); every other launch stays one cuLaunchKernel, so the kept plan's per-call
// cost does not change. The driver answers a bad cluster with CUDA_ERROR_INVALID_VALUE or
// CUDA_ERROR_INVALID_CLUSTER_SIZE, which name nothing, so kernc checks first and names the
// limit: clusters need a GPU that has them (sm_90+, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH);
// each grid extent must be a multiple of the cluster's; a cluster of more than 8 blocks is
// beyond the portable size, allowed up to 16 where the GPU has them (kernc sets the
// kernel's CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, per function and context,
// as for the dynamic shared-memory opt-in); and, like a cooperative grid, every block of a
// cluster must be resident at once on one GPU processing cluster, so
// cuOccupancyMaxActiveClusters must find room for at least one cluster of the launch's
// blocks and shared memory. PDL and priority need no check beyond the priority's range:
// PDL on a GPU without it (before sm_90) is an ordinary launch in stream order, which is
// also what the host backend does (it runs launches in order), and both accept a priority
// they ignore. Where the driver has no cuLaunchKernelEx, a launch with attributes is an
// error saying so.
void check_cluster(detail::Driver& driver, void* handle, const std::string& name, const LaunchConfig& c,
                   unsigned long long threads) {
  static const char* kAxis = "xyz";
  const auto& d = driver.properties();
  if (c.cluster[0] == 1 && c.cluster[1] == 1 && c.cluster[2] == 1) return;
  if (!d.cluster_launch) {
    throw Error(ErrorCode::launch_config, fmt::format("{}: a cluster of {} x {} x {} blocks on {}: {}", name, c.cluster[0],
                                                      c.cluster[1], c.cluster[2], d.name, d.cluster_launch_missing));
  }
  for (int k = 0; k < 3; ++k) {
    if (c.cluster[k] == 0) {
      throw Error(ErrorCode::launch_config,
                  fmt::format("{}: cluster.{} = 0: cluster sizes must be at least 1", name, kAxis[k]));
    }
    if (c.grid[k] % c.cluster[k] != 0) {
      throw Error(ErrorCode::launch_config,
                  fmt::format("{}: grid.{} = {} is not a multiple of cluster.{} = {}: the grid must be made of whole "
                              "clusters",
                              name, kAxis[k], c.grid[k], kAxis[k], c.cluster[k]));
    }
  }
  const unsigned long long blocks = 1ull * c.cluster[0] * c.cluster[1] * c.cluster[2];
  if (blocks > kMaxClusterBlocks) {
    throw Error(ErrorCode::launch_config,
                fmt::format("{}: a cluster of {} blocks ({} x {} x {}): at most {} blocks (8 portably; more where the GPU "
                            "allows non-portable cluster sizes)",
                            name, blocks, c.cluster[0], c.cluster[1], c.cluster[2], kMaxClusterBlocks));
  }
  const int resident = driver.max_active_clusters(handle, c);
  if (resident < 1) {
    throw Error(ErrorCode::launch_config,
                fmt::format("{}: a cluster of {} blocks ({} x {} x {}) of {} threads and {} bytes of dynamic shared memory "
                            "each cannot be resident at once on {}{} (every block of a cluster must be; use smaller "
                            "clusters, fewer threads or less shared memory)",
                            name, blocks, c.cluster[0], c.cluster[1], c.cluster[2], threads, c.shared_bytes, d.name,
                            blocks > kPortableClusterBlocks ? fmt::format(", beyond the portable size of {}", kPortableClusterBlocks)
                                                            : std::string()));
  }
}

void check_priority(const detail::DeviceProperties& d, const std::string& name, const LaunchConfig& c) {
  if (!c.priority) return;
  const int p = *c.priority;
  if (p < d.greatest_priority || p > d.least_priority) {
    throw Error(ErrorCode::launch_config,
                fmt::format("{}: priority {}: {} takes priorities from {} (the most urgent) to {} (the least)", name, p,
                            d.name, d.greatest_priority, d.least_priority));
  }
}

}  // namespace

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
      const int static_bytes = device_->driver->attributes(handle_).static_shared_bytes;
      throw Error(ErrorCode::launch_config,
                  fmt::format("{}: {} bytes of dynamic shared memory exceed the limit of {} (raise it up to {} with "
                              "set_max_dynamic_shared_bytes)",
                              name_, c.shared_bytes, std::max(allowed, d.max_shared_per_block),
                              d.max_shared_per_block_optin - static_bytes));
    }
  }
  if (c.cooperative) check_cooperative_grid(*device_->driver, handle_, name_, c, threads);
  if (c.has_attributes()) {
    check_cluster(*device_->driver, handle_, name_, c, threads);
    check_priority(d, name_, c);
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
