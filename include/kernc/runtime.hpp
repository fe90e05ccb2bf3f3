#pragma once
/// \file
/// The thin CUDA driver-API layer: a device's primary context, streams, events, device
/// memory, loaded modules and kernel functions. libcuda is loaded with dlopen on first use.
///
/// Thread safety: Device objects, Modules and Functions may be used from several host
/// threads at once; each call makes the device's primary context current on the calling
/// thread. Streams and Events are plain handles: the driver serialises work per stream.
///
/// Default stream: a default-constructed StreamRef is CUDA's legacy default stream
/// (stream 0), which synchronises with the other blocking streams of the context, as in
/// CuPy. Pass a Stream for overlap.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernc/array_ref.hpp"
#include "kernc/program.hpp"
#include "kernc/target.hpp"
#include "kernc/export.hpp"

namespace kernc {

namespace detail {
struct DeviceState;
}

/// A stream handle as the driver sees it (CUstream); nullptr is the legacy default stream.
struct KERNC_API StreamRef {
  void* handle = nullptr;
};

class Device;

/// Device memory owned by this object; freed on destruction (tolerating a driver that has
/// already shut down at process exit). Move-only.
class KERNC_API DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  std::uint64_t address() const noexcept { return address_; }
  void* data() const noexcept { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address_)); }
  std::size_t size() const noexcept { return size_; }

 private:
  friend class Device;
  std::shared_ptr<detail::DeviceState> device_;
  std::uint64_t address_ = 0;
  std::size_t size_ = 0;
  bool stream_ordered_ = false;  // freed with cuMemFreeAsync on free_stream_
  void* free_stream_ = nullptr;
};

/// A stream created by kernc; destroyed with the object. Move-only.
class KERNC_API Stream {
 public:
  Stream() = default;
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  StreamRef ref() const noexcept { return {handle_}; }
  operator StreamRef() const noexcept { return ref(); }
  void synchronize() const;

 private:
  friend class Device;
  std::shared_ptr<detail::DeviceState> device_;
  void* handle_ = nullptr;
};

/// NOTE [ graph capture ]
/// A CUDA graph captured from a stream: Device::begin_capture(stream), then any kernc
/// calls on that stream (they are recorded, not run), then Device::end_capture(stream)
/// returns the instantiated graph, which launch() replays as often as wanted, each time
/// with the arguments' memory as it is then (the addresses are fixed at capture). What a
/// call does on the host (planning, checks) happens once, at capture.
/// A call is capturable when it only launches: kernels already loaded on the device (a
/// first launch or a kept plan's launch before capturing loads them), outputs passed
/// rather than allocated. Stream-ordered scratch (a split reduction's partials) is
/// captured as graph memory nodes. Anything else the capture cannot record (an
/// allocation, a synchronization, a copy to the host) makes that call throw a driver error
/// and the capture invalid; end_capture then throws too, saying why. Move-only.
class KERNC_API Graph {
 public:
  Graph() = default;
  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) noexcept;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();
  /// Replays the captured work on `stream` (any stream of the same GPU).
  void launch(StreamRef stream = {}) const;
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  friend class Device;
  std::shared_ptr<detail::DeviceState> device_;
  void* handle_ = nullptr;
};

/// A timing event. Move-only.
class KERNC_API Event {
 public:
  Event() = default;
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();
  void record(StreamRef stream = {}) const;
  void synchronize() const;
  /// Milliseconds from `start` to this event (both recorded and complete).
  float elapsed_ms_since(const Event& start) const;

 private:
  friend class Device;
  std::shared_ptr<detail::DeviceState> device_;
  void* handle_ = nullptr;
};

/// What the driver reports about a kernel function (CuPy's RawKernel.attributes; the
/// CuPy name of each is given). A value the backend does not report is -1.
struct KERNC_API FunctionAttributes {
  int registers = 0;                 ///< num_regs, per thread
  int static_shared_bytes = 0;       ///< shared_size_bytes: `__shared__` arrays, per block
  int max_dynamic_shared_bytes = 0;  ///< max_dynamic_shared_size_bytes: settable
  int max_threads_per_block = 0;     ///< max_threads_per_block this kernel can launch with
  int local_bytes = 0;               ///< local_size_bytes, per thread
  int const_bytes = 0;               ///< const_size_bytes: `__constant__` memory
  int ptx_version = -1;              ///< ptx_version: the PTX ISA's major * 10 + minor
  int binary_version = -1;           ///< binary_version: the cubin's architecture, major * 10 + minor (90)
  int cache_mode_ca = -1;            ///< cache_mode_ca: 1 when compiled with -Xptxas=-dlcm=ca, else 0
  /// preferred_shared_memory_carveout: settable; percent of the unified L1/shared
  /// memory to give to shared memory, -1 for no preference (the default).
  int preferred_shared_carveout = -1;
};

/// Grid, block, dynamic shared memory and stream of one launch.
struct KERNC_API LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  StreamRef stream;
  /// Launch through cuLaunchCooperativeKernel (CuPy's enable_cooperative_groups=True), so
  /// that `cooperative_groups::this_grid().sync()` works: every block of the grid must be
  /// resident at once, and a larger grid is a launch_config error naming the limit (see
  /// Function::max_active_blocks_per_multiprocessor). Nothing changes in the compiled code.
  bool cooperative = false;
  // Launch attributes (NOTE [ launch attributes ], src/runtime/device.cpp): a launch that
  // sets any of them goes through cuLaunchKernelEx (CUDA 12.0+ drivers); one that sets
  // none stays a plain cuLaunchKernel.
  /// Thread-block cluster dimensions (CUDA, sm_90+): the blocks of each cluster of
  /// cluster[0] x cluster[1] x cluster[2] run at once on one GPU processing cluster and
  /// may read and write each other's shared memory (`cooperative_groups::this_cluster()`,
  /// `map_shared_rank`). {1, 1, 1}, the default, is no cluster. Each grid extent must be
  /// a multiple of the cluster's; a cluster of at most 8 blocks is portable, up to 16 runs
  /// where the GPU allows it (kernc then sets the kernel's non-portable-size attribute);
  /// one that cannot be resident is a launch_config error. Refused by the HIP and host backends.
  unsigned cluster[3] = {1, 1, 1};
  /// Programmatic dependent launch (CUDA, sm_90+): this kernel may start while the previous
  /// kernel on its stream still runs; it must call `cudaGridDependencySynchronize()` before
  /// reading what that kernel writes (and the previous one may call
  /// `cudaTriggerProgrammaticLaunchCompletion()` to let it start earlier). On older GPUs
  /// and on the host backend the launch is simply in stream order.
  bool programmatic_dependent_launch = false;
  /// The launch's scheduling priority, in the device's stream-priority range (lower numbers
  /// are higher priorities; 0 is the default priority). Unset: the stream's. A hint: the
  /// host backend, which runs launches in order, accepts and ignores it.
  std::optional<int> priority = std::nullopt;

  /// Whether any launch attribute above is set.
  bool has_attributes() const noexcept {
    return cluster[0] != 1 || cluster[1] != 1 || cluster[2] != 1 || programmatic_dependent_launch || priority.has_value();
  }
};

/// A kernel function of a loaded module; cheap to copy. launch() is argument packing plus
/// cuLaunchKernel: nothing is parsed, rendered or hashed.
class KERNC_API Function {
 public:
  Function() = default;
  const std::string& name() const noexcept { return name_; }
  bool valid() const noexcept { return handle_ != nullptr; }
  FunctionAttributes attributes() const;
  /// The byte size of each parameter, when the driver can say (cuFuncGetParamInfo,
  /// CUDA 12.4+); empty otherwise.
  /// With `count`, exactly that many are asked; without, the driver is asked until it
  /// answers CUDA_ERROR_INVALID_VALUE (there is no parameter-count query), which
  /// compute-sanitizer reports as an API error.
  std::vector<std::size_t> parameter_sizes(std::optional<std::size_t> count = std::nullopt) const;
  /// Raises the dynamic shared-memory limit (needed above 48 KiB). At most the device's
  /// opt-in limit per block less this kernel's static shared memory: more is a
  /// launch_config error naming both; a negative count is invalid_argument.
  void set_max_dynamic_shared_bytes(int bytes) const;
  /// Sets the preferred share of the unified L1/shared memory given to shared memory, in
  /// percent (0 to 100), or -1 for no preference; a hint the driver may round up to a
  /// supported split. Another value is invalid_argument. No effect on AMD GPUs.
  void set_preferred_shared_carveout(int percent) const;
  /// How many blocks of `block_threads` threads with `dynamic_shared_bytes` each can be
  /// resident on one multiprocessor at once (cuOccupancyMaxActiveBlocksPerMultiprocessor).
  /// Times Device::multiprocessors(), the largest grid a cooperative launch may have.
  int max_active_blocks_per_multiprocessor(int block_threads, std::size_t dynamic_shared_bytes = 0) const;
  /// Launches with `args[k]` pointing at the k-th parameter's bytes. Checks the
  /// configuration first: an empty grid or block, too many threads, too much shared
  /// memory, a cooperative grid larger than can be resident are errors naming the limit.
  void launch(const LaunchConfig& config, void** args) const;

 private:
  friend class Module;
  std::shared_ptr<detail::DeviceState> device_;
  std::shared_ptr<void> module_;  // keeps the module loaded
  void* handle_ = nullptr;
  std::string name_;
};

/// A module loaded into a device's primary context; unloaded with its last reference.
class KERNC_API Module {
 public:
  Module() = default;
  /// The function named `name` (a lowered name for templates); throws kernc::Error(not_found).
  Function function(const std::string& name) const;
  /// Address and size of a __device__ / __constant__ global; throws kernc::Error(not_found).
  std::pair<std::uint64_t, std::size_t> global(const std::string& name) const;
  bool valid() const noexcept { return handle_ != nullptr; }

 private:
  friend class Device;
  std::shared_ptr<detail::DeviceState> device_;
  std::shared_ptr<void> handle_;
};

/// A binary image loaded once for every GPU of a backend (CUDA 12's cuLibraryLoadData;
/// NOTE [ load once for every GPU ], src/runtime/cuda_driver.cpp): Device::load(library)
/// gives each GPU its Module of it, without reading or checking the image again. Empty
/// (valid() false) where the backend or driver cannot: HIP, the host backend, CUDA drivers
/// before 12.0, or KERNC_CUDA_LOAD_ONCE=0; load the image per device then. Unloaded with
/// its last reference, Modules and Functions included. Cheap to copy.
class KERNC_API Library {
 public:
  Library() = default;
  bool valid() const noexcept { return handle_ != nullptr; }

 private:
  friend class Device;
  std::shared_ptr<void> handle_;
  Backend backend_ = Backend::cuda;
};

/// One GPU through its primary context. Device objects are cheap handles to shared state.
class KERNC_API Device {
 public:
  /// The device with this ordinal, of a backend: CUDA through libcuda, HIP through
  /// libamdhip64 (compile-tested only: never run on AMD hardware). Throws
  /// kernc::Error(no_device) when the driver cannot be loaded or there is no such GPU.
  static Device get(int ordinal = 0, const std::string& driver_library = "", Backend backend = Backend::cuda);
  /// Whether a driver of the backend and at least one GPU are usable, without throwing.
  static bool available(const std::string& driver_library = "", Backend backend = Backend::cuda) noexcept;

  Backend backend() const noexcept;
  int ordinal() const noexcept;
  const std::string& name() const noexcept;
  int compute_capability() const noexcept;  ///< e.g. 90
  int multiprocessors() const noexcept;
  std::uint64_t total_memory_bytes() const noexcept;  ///< device memory in all; 0 when the backend does not say
  int max_threads_per_block() const noexcept;
  int max_shared_bytes_per_block() const noexcept;       ///< without opt-in
  int max_shared_bytes_per_block_optin() const noexcept;
  /// Whether the device can launch cooperative kernels (LaunchConfig::cooperative).
  bool supports_cooperative_launch() const noexcept;
  /// Whether the device can launch thread-block clusters (LaunchConfig::cluster; sm_90+).
  bool supports_clusters() const noexcept;
  /// LaunchConfig::priority's range: {greatest, least}, the most urgent first (a lower
  /// number; {-5, 0} on recent NVIDIA GPUs). The HIP and host backends take any priority.
  std::pair<int, int> priority_range() const noexcept;
  /// The compile target of this device: "sm_90" (cubin), or the AMD ISA ("gfx90a:...").
  Target target() const;

  DeviceBuffer allocate(std::size_t bytes) const;
  /// Scratch memory ordered on `stream` (cuMemAllocAsync): usable by work queued on it
  /// and freed on it when the buffer goes, without waiting for the device. Falls back to
  /// allocate() on drivers without memory pools.
  DeviceBuffer allocate_on(StreamRef stream, std::size_t bytes) const;
  void copy_to_device(std::uint64_t dst, const void* src, std::size_t bytes, StreamRef stream = {}) const;
  void copy_to_host(void* dst, std::uint64_t src, std::size_t bytes, StreamRef stream = {}) const;
  void copy_device(std::uint64_t dst, std::uint64_t src, std::size_t bytes, StreamRef stream = {}) const;
  void fill_bytes(std::uint64_t dst, unsigned char value, std::size_t bytes, StreamRef stream = {}) const;
  void synchronize() const;
  void synchronize(StreamRef stream) const;
  Stream create_stream() const;
  Event create_event() const;
  /// Starts capturing the work issued to `stream` into a graph (NOTE [ graph capture ]).
  /// `stream` must be a created stream: the legacy default stream cannot be captured.
  /// Only this thread's uncapturable calls break the capture (thread-local mode).
  void begin_capture(StreamRef stream) const;
  /// Ends the capture begun on `stream` and instantiates its graph.
  Graph end_capture(StreamRef stream) const;
  /// Loads a cubin or PTX image (CUDA), or an AMD code object (HIP).
  Module load(const std::string& image) const;
  /// Loads `image` once for every GPU of this device's backend (see Library); an empty
  /// Library where that is not possible. Errors as load(image).
  Library load_library(const std::string& image) const;
  /// This device's module of `library` (of this device's backend, else invalid_argument):
  /// the driver loads it into this GPU's context; a binary this GPU cannot run is a
  /// driver error here, as from load(image).
  Module load(const Library& library) const;
  /// Whether `address` is device memory this context can use (false for host pointers).
  bool is_device_pointer(std::uint64_t address) const noexcept;
  /// This device as arrays name it ({backend, ordinal}: "cuda:1").
  DeviceId id() const noexcept;
  /// Where `address` lives as this device's driver sees it: a device of the backend,
  /// DeviceId::shared (managed or page-locked host memory), {cpu, 0} for host memory the
  /// driver was never told of, or unknown when the driver cannot tell (HIP for memory it
  /// does not know; the host backend). A call looks a raw address up this way, once (NOTE [ arrays know their
  /// device ]).
  DeviceId locate(std::uint64_t address) const noexcept;
  /// Whether kernels on this device can address pageable host memory (HMM or ATS).
  bool pageable_memory_access() const noexcept;

  /// Whether kernels on this device could address `other`'s memory once peer access is
  /// enabled (cuDeviceCanAccessPeer); true for the device itself, false across backends.
  bool can_access_peer(const Device& other) const;
  /// Lets kernels on this device read and write `other`'s memory (cuCtxEnablePeerAccess in
  /// this device's context), so that a call on this device accepts arrays of `other`.
  /// One direction only: enable it on `other` too for the reverse. Idempotent; throws
  /// kernc::Error(invalid_argument) naming both devices when the hardware has no peer path.
  void enable_peer_access(const Device& other) const;
  /// Whether enable_peer_access succeeded from this device to `other` (true for itself).
  bool peer_access_enabled(const DeviceId& other) const noexcept;

  const std::shared_ptr<detail::DeviceState>& state() const noexcept { return state_; }
  /// The device over an open state (the registry's; not for users).
  static Device from_state(std::shared_ptr<detail::DeviceState> state);

 private:
  std::shared_ptr<detail::DeviceState> state_;
};

}  // namespace kernc
