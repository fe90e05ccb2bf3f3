#pragma once
/// \file
/// The engine ties the pipeline together for launches: configuration, the cache, the
/// compilers, and the modules loaded on each device (once per device and cache key).
/// Thread-safe. Engine::global() is built from the environment on first use; a host
/// program may build its own from a Config instead and pass it in CallOptions.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
  /// A number no other Engine of this process has had. Kernels remember what they loaded
  /// per engine by it: an address can be reused by a later Engine, which must not be
  /// handed the functions of a dead one (loaded under another cache and policy).
  std::uint64_t id() const noexcept { return id_; }
  Cache& cache() noexcept { return *cache_; }
  /// The compiler of a backend, loaded on first use. With Config::compile_workers above 0,
  /// NVRTC's and HIPRTC's compiles run in that many worker processes of
  /// Config::compile_worker (compile_in_workers): same keys and binaries, and concurrent
  /// first calls use the machine's cores. Throws Error(library_not_found) when workers are
  /// asked for and no worker program is found.
  const Compiler& compiler(Backend backend);
  /// A device by ordinal, of `backend` (unset: the engine's runtime, Config::runtime —
  /// KERNC_RUNTIME, cuda by default). The driver is loaded on first use. After the first
  /// call for an ordinal below kDeviceSlots, one atomic load: no lock, no allocation.
  Device device(int ordinal = 0, std::optional<Backend> backend = std::nullopt);
  /// The backend devices come from when a call does not name one (Config::runtime).
  Backend runtime_backend() const noexcept;
  static constexpr int kDeviceSlots = 64;

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
  /// A generated program named by its variant: text that says exactly what the program is
  /// made from within this build of kernc (a kernel's definition, a call's resolved types,
  /// its layout). The same as load(make_program(), device), except that a variant the
  /// cache directory's index knows (NOTE [ variant index ]) is found by its program digest
  /// without running make_program. An empty variant is not looked up or recorded.
  Loaded load(const std::string& variant, const std::function<Program()>& make_program, const Device& device);

  /// Modules loaded by this engine so far (for tests and `kernc run`).
  std::size_t loaded_modules() const;
  /// Every module loaded so far, in key order, with how its binary was chosen.
  std::vector<Loaded> loaded() const;

 private:
  struct Impl;  // the lock, the compilers, the loaded modules, the opened devices (src/kernels/engine.cpp)

  // What id(), config() and cache() return, held here: kernel calls ask for them per launch.
  const std::uint64_t id_;
  Config config_;
  std::unique_ptr<Cache> cache_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kernc
