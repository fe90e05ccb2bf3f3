#include "kernc/engine.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cache/cache_internals.hpp"
#include "cache/cache_key.hpp"
#include "kernc/error.hpp"
#include "kernc/profiling.hpp"
#include "kernels/compile_worker_program.hpp"
#include "base/log.hpp"
#include "base/nvtx_range.hpp"

namespace kernc {

namespace {
std::uint64_t next_engine_id() {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

// Says how a rung of the ladder relates to the device, for people.
std::string describe_choice(const Target& served, const Target& device) {
  if (served == device) return fmt::format("{} {}", served.str(), to_string(served.binary_kind()));
  if (served.binary_kind() == BinaryKind::ptx) {
    return fmt::format("{} PTX, JIT-compiled by the driver (no cubin for {} in any cache)", served.str(), device.str());
  }
  if (served.backend() == Backend::hip) {
    return fmt::format("{} code object (built for any features of {})", served.str(), device.str());
  }
  if (served.backend() == Backend::cpu) {
    return fmt::format("{} shared object (a lower ISA level than {}, no {} binary in any cache)", served.str(),
                       device.str(), device.str());
  }
  return fmt::format("{} cubin (same major as {}, no {} cubin in any cache)", served.str(), device.str(), device.str());
}

}  // namespace

// NOTE [ architecture ladder ]
// A device runs more binaries than those built for exactly its architecture: a cubin for
// sm_XY runs on every sm_XZ with Z >= Y, and PTX for compute_NN runs on every device of
// capability >= NN through the driver's JIT. load() climbs binary_ladder(device) through
// every cache tier before it considers compiling, so that a cache precompiled in CI for
// `sm_80,sm_90,compute_90` serves every GPU from sm_80 up with no compiler on the host.
// A binary the driver refuses (PTX newer than the driver, a cubin of a newer toolkit) is
// passed over, logged, and the next rung is tried. The choice is visible: Loaded::choice,
// a debug log line, and CacheStats::fallback_hits.

// Everything behind the engine's accessors. Its member functions are defined in the class:
// Engine is exported, and a nested class's out-of-line members would be exported with it.
struct Engine::Impl {
  mutable std::mutex mutex;
  std::map<Backend, std::shared_ptr<const Compiler>> compilers;  // under mutex
  std::map<std::tuple<Backend, int, std::string>, Loaded> modules;  // under mutex
  // Images loaded once for every device of a backend, by cache key (NOTE [ load once for
  // every GPU ], src/runtime/cuda_driver.cpp); under mutex.
  std::map<std::pair<Backend, std::string>, Library> libraries;
  // Devices opened so far, by ordinal: published once, never replaced while the engine lives.
  // By backend (cuda, hip, cpu), then ordinal.
  std::atomic<const Device*> device_slots[3][kDeviceSlots] = {};
  std::vector<std::unique_ptr<Device>> opened_devices;  // owns what device_slots points at; under mutex

  // Offers a cache hit (or a fresh compile) to the driver: on success `loaded` holds the
  // module (the one loaded before for this device and key, if any); a cached binary the
  // driver refuses is described in `refusals` and false returned.
  bool try_load(const CacheResult& result, const Device& device, std::optional<Loaded>& loaded,
                std::string& refusals) {
    const auto slot_key = std::make_tuple(device.backend(), device.ordinal(), result.key);
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (auto found = modules.find(slot_key); found != modules.end()) {
        loaded = found->second;
        return true;
      }
    }
    Loaded fresh;
    try {
      fresh.module = load_module(result, device);
    } catch (const Error& error) {
      if (result.outcome == CacheOutcome::compiled) throw;
      refusals += fmt::format("; the driver refused {} from {}: {}", result.program->target.str(),
                              result.location.empty() ? "memory" : result.location, error.what());
      detail::logger().warn("cache entry {} passed over: the driver cannot load it: {}", result.key, error.what());
      return false;
    }
    fresh.program = result.program;
    fresh.outcome = result.outcome;
    fresh.key = result.key;
    fresh.location = result.location;
    fresh.choice = describe_choice(result.program->target, device.target());
    std::lock_guard<std::mutex> lock(mutex);
    loaded = modules.emplace(slot_key, std::move(fresh)).first->second;  // a racing load of the key wins once
    return true;
  }

  // The device's module of a cache hit: from the image loaded once for every device of the
  // backend where the driver can (a second device's first load then costs only the driver's
  // per-context load), else loaded into this device alone.
  Module load_module(const CacheResult& result, const Device& device) {
    const detail::NvtxRange range([&] {
      return detail::nvtx_range_name(detail::NvtxPhase::module_load, detail::nvtx_subject_or(result.key),
                                     result.program->target.str());
    });
    const auto library_key = std::make_pair(device.backend(), result.key);
    Library library;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (auto found = libraries.find(library_key); found != libraries.end()) library = found->second;
    }
    if (!library.valid()) {
      library = device.load_library(result.program->binary);
      if (!library.valid()) return device.load(result.program->binary);
      std::lock_guard<std::mutex> lock(mutex);
      library = libraries.emplace(library_key, library).first->second;  // a racing load of the key wins once
    }
    return device.load(library);
  }
};

Engine::Engine(Config config)
    : id_(next_engine_id()),
      config_(std::move(config)),
      cache_(std::make_unique<Cache>(config_.cache_config())),
      impl_(std::make_unique<Impl>()) {
  check_compile_policy(config_.compile_policy.value, "the compile policy");
  if (config_.compile_workers.value < 0 || config_.compile_workers.value > kMaxCompileWorkers) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{} must be a number of compile worker processes from 0 to {}, not {}",
                            config_.compile_workers.source == "default" ? std::string("Config::compile_workers")
                                                                         : config_.compile_workers.source,
                            kMaxCompileWorkers, config_.compile_workers.value));
  }
  // KERNC_NVTX is a process-wide switch: an engine made from a Config that sets it applies it
  // (the global engine's is the environment's). A build without NVTX warns, once per engine,
  // rather than failing a program that was only asked to be profiled.
  if (config_.nvtx.source != "default") {
    if (nvtx_ranges_built()) {
      set_nvtx_ranges(config_.nvtx.value);
    } else if (config_.nvtx.value) {
      detail::logger().warn("{}=1: this build of kernc has no NVTX (the CUDA toolkit's nvtx3 headers were missing "
                            "when it was built); no ranges are opened",
                            config_.nvtx.source);
    }
  }
}

Engine::~Engine() = default;

Engine& Engine::global() {
  // Never destroyed: kernels may run from static destructors of the host program.
  static Engine* engine = [] {
    Config config = Config::from_environment();
    // KERNC_LOG_LEVEL is documented as the library logger's level: a host program that
    // uses the global engine gets it applied; one that builds its own Config decides.
    if (config.log_level.source != "default") set_log_level(config.log_level.value);
    return new Engine(std::move(config));
  }();
  return *engine;
}

const Compiler& Engine::compiler(Backend backend) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto& slot = impl_->compilers[backend];
  if (slot) return *slot;
  // NOTE [ compile workers of an engine ] (src/kernels/compile_worker_program.cpp): the host
  // backend's compiler already runs as a process of its own.
  if (config_.compile_workers.value > 0 && backend != Backend::cpu) {
    slot = compile_in_workers(backend, config_.compiler_paths(), compile_worker_command(config_),
                              static_cast<unsigned>(config_.compile_workers.value));
  } else {
    slot = load_compiler(backend, config_.compiler_paths());
  }
  return *slot;
}

Backend Engine::runtime_backend() const noexcept {
  return config_.runtime.value == "hip" ? Backend::hip : config_.runtime.value == "cpu" ? Backend::cpu : Backend::cuda;
}

Device Engine::device(int ordinal, std::optional<Backend> backend) {
  // Every kernel call asks for its device: after the first time, a lock-free read.
  const Backend chosen = backend ? *backend : runtime_backend();
  auto& slots = impl_->device_slots[static_cast<int>(chosen)];
  const bool slotted = ordinal >= 0 && ordinal < kDeviceSlots;
  if (slotted) {
    if (const Device* known = slots[ordinal].load(std::memory_order_acquire)) return *known;
  }
  Device device = chosen == Backend::hip   ? Device::get(ordinal, config_.hip_runtime_library.value, Backend::hip)
                  : chosen == Backend::cpu ? Device::get(ordinal, "", Backend::cpu)
                                           : Device::get(ordinal, config_.cuda_driver_library.value, Backend::cuda);
  if (slotted) {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (slots[ordinal].load(std::memory_order_relaxed) == nullptr) {
      impl_->opened_devices.push_back(std::make_unique<Device>(device));
      slots[ordinal].store(impl_->opened_devices.back().get(), std::memory_order_release);
    }
  }
  return device;
}

Engine::Loaded Engine::load(const Program& program, const Device& device) {
  // The caller's subject (a kernel call's), else the program's name (NOTE [ NVTX ranges ]).
  const detail::NvtxSubject subject([&] { return std::string(detail::nvtx_subject_or(program.name)); });
  const Target target = device.target();
  std::optional<Loaded> loaded;
  std::string refusals;
  auto offer = [&](const CacheResult& result) { return impl_->try_load(result, device, loaded, refusals); };
  const std::vector<Target> ladder = binary_ladder(target);
  if (cache_->find(program, ladder, offer)) {
    detail::logger().debug("{} on device {} ({}): {} from {}", program.name, device.ordinal(), target.str(),
                           loaded->choice, loaded->location.empty() ? "memory" : loaded->location);
    return *loaded;
  }
  if (config_.compile_policy.value == "never") {
    const std::vector<std::string> searched = cache_->locations();
    std::vector<std::string> rungs;
    for (const auto& rung : ladder) rungs.push_back(rung.str());
    throw Error(ErrorCode::not_precompiled,
                fmt::format("no cache holds {} for {} (device {}), and compiling is off ({} = never); searched {} "
                            "for {}{}",
                            program.name, target.str(), device.ordinal(), config_.compile_policy.source,
                            searched.empty() ? std::string("no cache directory") : fmt::format("{}", fmt::join(searched, ", ")),
                            fmt::join(rungs, ", "), refusals));
  }
  const Compiler& compiler = this->compiler(target.backend());
  // The cache answers from memory after the first call; compiling happens outside any
  // lock of the engine, so loads of other programs never wait for it.
  CacheResult result = cache_->get_or_compile(program, target, compiler);
  impl_->try_load(result, device, loaded, refusals);
  detail::logger().debug("{} on device {} ({}): {} ({})", program.name, device.ordinal(), target.str(),
                         loaded->choice, to_string(result.outcome));
  return *loaded;
}

Engine::Loaded Engine::load(const std::string& variant, const std::function<Program()>& make_program,
                            const Device& device) {
  const cache::LocalStore* disk = variant.empty() ? nullptr : cache::disk_store(*cache_);
  const cache::VariantIndex* index = disk ? disk->variant_index() : nullptr;
  if (index) {
    if (const auto digest = index->find(variant)) {
      std::optional<Loaded> loaded;
      std::string refusals;
      auto offer = [&](const CacheResult& result) { return impl_->try_load(result, device, loaded, refusals); };
      if (cache_->find_digest(*digest, "program " + digest->substr(0, 12), binary_ladder(device.target()), offer)) {
        return *loaded;
      }
      // A program no tier holds any more (pruned, cleared): generated, and recorded again.
    }
  }
  const Program program = make_program();
  Loaded loaded = load(program, device);
  if (index && program.options.include_dirs.empty()) index->record(variant, cache::program_digest(program));
  return loaded;
}

std::vector<Engine::Loaded> Engine::loaded() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  std::vector<Loaded> all;
  for (const auto& [slot, loaded] : impl_->modules) all.push_back(loaded);
  return all;
}

std::size_t Engine::loaded_modules() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->modules.size();
}

}  // namespace kernc
