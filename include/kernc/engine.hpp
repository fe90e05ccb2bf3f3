#pragma once
/// \file
/// The engine ties the pipeline together for launches: configuration, the cache, the
/// compilers, and the modules loaded on each device (once per device and cache key).
/// Thread-safe. Engine::global() is built from the environment on first use; a host
/// program may build its own from a Config instead and pass it in CallOptions.

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kernc/array.hpp"
#include "kernc/cache.hpp"
#include "kernc/config.hpp"
#include "kernc/runtime.hpp"
#include "kernc/export.hpp"

namespace kernc {

class KERNC_API Engine {
 public:
  explicit Engine(Config config);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// The process-wide engine, from the environment (Config::from_environment()).
  static Engine& global();

  const Config& config() const noexcept { return config_; }
  Cache& cache() noexcept { return *cache_; }
  /// The compiler of a backend, loaded on first use.
  const Compiler& compiler(Backend backend);
  /// A device by ordinal (the driver is loaded on first use).
  Device device(int ordinal = 0);

  /// A program compiled for a device and loaded into it.
  struct Loaded {
    Module module;
    std::shared_ptr<const CompiledProgram> program;
    CacheOutcome outcome = CacheOutcome::compiled;  ///< how the binary was found the first time
    std::string key;
    std::string location;  ///< the cache directory it came from; empty for memory and compiles
    /// How the binary was chosen: "sm_90 cubin", "sm_80 cubin (same major as sm_86)",
    /// "compute_80 PTX, JIT-compiled by the driver (no cubin for sm_90)".
    std::string choice;
  };
  /// The binary of `program` for `device`, loaded once per (device, key): the first rung
  /// of binary_ladder(device) that any cache holds (no compiler needed); otherwise, unless
  /// the compile policy is "never", compiled for the device's own architecture. With
  /// "never", a program in no cache is an Error(not_precompiled) naming the architecture.
  Loaded load(const Program& program, const Device& device);

  /// Modules loaded by this engine so far (for tests and `kernc run`).
  std::size_t loaded_modules() const;
  /// Every module loaded so far, in key order, with how its binary was chosen.
  std::vector<Loaded> loaded() const;

 private:
  Config config_;
  std::unique_ptr<Cache> cache_;
  mutable std::mutex mutex_;
  std::map<Backend, std::shared_ptr<const Compiler>> compilers_;
  std::map<std::pair<int, std::string>, Loaded> modules_;
};

/// Options every kernel call takes.
struct KERNC_API CallOptions {
  /// The stream to launch on; the default is the legacy default stream (see runtime.hpp).
  StreamRef stream;
  /// The GPU the arrays live on.
  int device = 0;
  /// ElementwiseKernel only: the loop size when every array parameter is raw (CuPy's size=).
  std::optional<std::int64_t> size;
  /// Explicit placeholder bindings, for placeholders no array decides ("T" → float32).
  std::map<std::string, DType> bindings;
  /// The engine to use; nullptr means Engine::global().
  Engine* engine = nullptr;
};

/// An argument of a kernel call: an array (view or owning) or a scalar.
class KERNC_API Arg {
 public:
  Arg(const ArrayRef& array) : array_(array), is_array_(true) {}
  Arg(const DeviceArray& array) : array_(array.ref()), is_array_(true) {}
  Arg(const Scalar& scalar) : scalar_(scalar) {}
  template <class T, class = decltype(Scalar(std::declval<T>()))>
  Arg(T value) : scalar_(Scalar(value)) {}
  /// A raw pointer is not an argument (it would convert to the bool scalar `true`): pass
  /// device memory as an ArrayRef, e.g. ArrayRef::contiguous(pointer, DType::float32, {n}),
  /// or an address as a std::uint64_t scalar.
  template <class T>
  Arg(T* pointer) = delete;

  bool is_array() const noexcept { return is_array_; }
  const ArrayRef& array() const noexcept { return array_; }
  const Scalar& scalar() const noexcept { return scalar_; }

 private:
  ArrayRef array_;
  Scalar scalar_;
  bool is_array_ = false;
};

}  // namespace kernc
