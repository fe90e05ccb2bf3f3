#pragma once
// NOTE [ runtime backends ]
// The Device layer (include/kernc/runtime.hpp, src/runtime/device.cpp) talks to a GPU
// only through this interface; src/runtime/cuda_driver.cpp implements it over libcuda,
// src/runtime/hip_driver.cpp over libamdhip64 (compile-tested; never run on AMD
// hardware), src/runtime/host_driver.cpp over the host's memory and cores. Handles are opaque pointers of the backend's own types. Every call throws
// kernc::Error(driver) naming the call and the backend's error, except the release_*
// functions, which destructors call and which ignore errors (the driver may already be
// shut down at process exit).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernc/runtime.hpp"
#include "kernc/target.hpp"

namespace kernc::detail {

struct DeviceProperties {
  std::string name;
  std::string target;  ///< "sm_90", "gfx90a:sramecc+:xnack-"
  int compute_capability = 0;
  int multiprocessors = 0;
  int max_threads_per_block = 0;
  int max_shared_per_block = 0;
  int max_shared_per_block_optin = 0;
  int max_grid[3] = {0, 0, 0};
  int max_block[3] = {0, 0, 0};
  std::uint64_t total_memory = 0;  ///< bytes of device memory; 0 when the backend does not say
  /// Whether launch() can take LaunchConfig::cooperative on this device.
  bool cooperative_launch = false;
  /// Why not, when it cannot: the end of a sentence ("this GPU does not support it").
  std::string cooperative_launch_missing;
  // Launch attributes (NOTE [ launch attributes ], src/runtime/device.cpp).
  /// Whether launch() can take LaunchConfig::cluster other than {1, 1, 1}; why not, when not.
  bool cluster_launch = false;
  std::string cluster_launch_missing = "this kernc runtime backend has no thread-block clusters";
  /// The range of LaunchConfig::priority: greatest (the most urgent, a lower number) to least.
  int greatest_priority = 0;
  int least_priority = 0;
  /// Whether kernels can address pageable host memory the driver was never told of
  /// (HMM or ATS: CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS); the host backend can.
  bool pageable_memory_access = false;
};

class Driver {
 public:
  virtual ~Driver() = default;
  virtual Backend backend() const noexcept = 0;
  virtual const DeviceProperties& properties() const noexcept = 0;
  /// Makes this device's context current on the calling thread (cheap when it is).
  virtual void make_current() = 0;

  virtual std::uint64_t allocate(std::size_t bytes) = 0;
  /// Stream-ordered allocation; 0 when the backend has none (the caller falls back).
  virtual std::uint64_t allocate_async(std::size_t bytes, void* stream) = 0;
  virtual void release_memory(std::uint64_t address, bool stream_ordered, void* stream) noexcept = 0;
  virtual void copy_to_device(std::uint64_t dst, const void* src, std::size_t bytes, void* stream) = 0;
  /// Copies and waits for the copy: the host reads `dst` next.
  virtual void copy_to_host(void* dst, std::uint64_t src, std::size_t bytes, void* stream) = 0;
  virtual void copy_device(std::uint64_t dst, std::uint64_t src, std::size_t bytes, void* stream) = 0;
  virtual void fill_bytes(std::uint64_t dst, unsigned char value, std::size_t bytes, void* stream) = 0;
  virtual void synchronize() = 0;
  virtual void synchronize_stream(void* stream) = 0;
  virtual bool is_device_pointer(std::uint64_t address) noexcept = 0;
  /// Where `address` lives as this backend's driver sees it (NOTE [ arrays know their
  /// device ], src/kernels/device_check.cpp): a device of the backend, shared memory
  /// (managed, page-locked host), the host ({cpu, 0}: memory the driver does not know),
  /// or unknown when the driver cannot tell. The default cannot tell.
  virtual DeviceId locate(std::uint64_t address) noexcept;
  /// Peer access from this device to `other`'s memory (CUDA): whether the hardware allows
  /// it, and enabling it (idempotent). The defaults say it cannot be done.
  virtual bool can_access_peer(Driver& other) noexcept;
  virtual void enable_peer_access(Driver& other);

  virtual void* create_stream() = 0;
  virtual void release_stream(void* stream) noexcept = 0;
  virtual void* create_event() = 0;
  virtual void release_event(void* event) noexcept = 0;
  virtual void record_event(void* event, void* stream) = 0;
  virtual void synchronize_event(void* event) = 0;
  virtual float elapsed_ms(void* start, void* stop) = 0;

  virtual void* load_module(const std::string& image) = 0;
  virtual void release_module(void* module) noexcept = 0;
  /// nullptr when the module has no such function.
  virtual void* find_function(void* module, const std::string& name) = 0;
  /// False when the module has no such global.
  virtual bool find_global(void* module, const std::string& name, std::uint64_t* address, std::size_t* bytes) = 0;

  virtual FunctionAttributes attributes(void* function) = 0;
  virtual void set_max_dynamic_shared(void* function, int bytes) = 0;
  /// `percent` is -1 or 0..100 (checked by the caller).
  virtual void set_preferred_shared_carveout(void* function, int percent) = 0;
  virtual int max_active_blocks_per_multiprocessor(void* function, int block_threads, std::size_t dynamic_shared) = 0;
  /// The function's own dynamic shared-memory limit (raised by set_max_dynamic_shared).
  virtual int dynamic_shared_limit(void* function) noexcept = 0;
  /// Empty when the backend cannot say.
  virtual std::vector<std::size_t> parameter_sizes(void* function, std::optional<std::size_t> count) = 0;
  /// A cooperative config launches cooperatively (the caller checked the grid's size).
  virtual void launch(void* function, const LaunchConfig& config, void** args) = 0;

  // Graph capture (NOTE [ graph capture ], include/kernc/runtime.hpp). A backend without
  // it keeps these defaults, which say so.
  /// Starts a thread-local capture on `stream` (never the legacy default stream).
  virtual void begin_capture(void* stream);
  /// Ends the capture on `stream`; returns its instantiated graph.
  virtual void* end_capture(void* stream);
  virtual void launch_graph(void* graph, void* stream);
  virtual void release_graph(void* graph) noexcept;

  // Context-independent loading (NOTE [ load once for every GPU ], src/runtime/cuda_driver.cpp).
  // A backend without it keeps these defaults: load_library answers nullptr, and the
  // caller loads a module per device instead.
  /// The image loaded once for every device of the backend, or nullptr.
  virtual void* load_library(const std::string& image);
  virtual void release_library(void* library) noexcept;
  /// The library's module in this device's context (owned by the library: never released
  /// on its own). Throws when the driver cannot load it for this device.
  virtual void* library_module(void* library);

  // Thread-block clusters (NOTE [ launch attributes ]): reached only when
  // DeviceProperties::cluster_launch is true; the default throws.
  /// How many clusters of `config` (its cluster, block and shared memory) can be resident
  /// at once on the device; a cluster of more than 8 blocks is first allowed on the function.
  virtual int max_active_clusters(void* function, const LaunchConfig& config);
};

/// The driver of GPU `ordinal` of a backend. Throws kernc::Error(no_device) when the
/// library cannot be loaded or initialised, or the ordinal does not exist.
std::unique_ptr<Driver> open_cuda_driver(int ordinal, const std::string& library);
std::unique_ptr<Driver> open_hip_driver(int ordinal, const std::string& library);
/// The host's own cores as device 0 of Backend::cpu (src/runtime/host_driver.cpp).
std::unique_ptr<Driver> open_host_driver(int ordinal);

/// A device of `backend` this process has open already (none is opened): a host call asks
/// it where a raw address lives (NOTE [ arrays know their device ]).
std::optional<Device> open_device(Backend backend);

/// Makes `driver` GPU `ordinal` of `backend` for Device::get while the returned state
/// lives (nothing else holds it): the unit tests' way to check the Device layer's own
/// checks against a fake driver, with no GPU. Throws invalid_argument when that GPU is
/// already open.
std::shared_ptr<DeviceState> register_device(Backend backend, int ordinal, std::unique_ptr<Driver> driver);

}  // namespace kernc::detail
