#include "kernc/cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <future>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "cache/cache_internals.hpp"
#include "cache/cache_key.hpp"
#include "cache/entry_format.hpp"
#include "cache/local_store.hpp"
#include "cache/remote_store.hpp"
#include "cache/store.hpp"
#include "compiler/pch_compiler.hpp"
#include "kernc/error.hpp"
#include "base/log.hpp"
#include "base/nvtx_range.hpp"
#include "platform/files.hpp"

namespace kernc {

using ProgramPtr = std::shared_ptr<const CompiledProgram>;

// The memory layer: an LRU map bounded in bytes, plus the keys being compiled right now
// so that concurrent lookups of one key compile it once (single flight). The mutex
// guards only map operations, never a compile or a disk read: a hit never waits
// behind another key's compile.
struct MemoryLayer {
  std::mutex mutex;
  std::list<std::string> lru;  // front = most recently used
  struct Slot {
    ProgramPtr program;
    std::list<std::string>::iterator position;
  };
  std::unordered_map<std::string, Slot> entries;
  std::unordered_map<std::string, std::shared_future<ProgramPtr>> in_flight;
  // <program> part of a key → the whole key of an entry held here (see NOTE [ cache key ]).
  std::unordered_map<std::string, std::string> by_program;
  std::unordered_map<std::string, bool> warned;  // entry paths already reported as bad
  std::uint64_t bytes = 0;
  std::uint64_t max_bytes = 0;
  std::atomic<bool> warned_store_failure{false};

  ProgramPtr find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = entries.find(key);
    if (found == entries.end()) return nullptr;
    lru.splice(lru.begin(), lru, found->second.position);
    return found->second.program;
  }

  // An entry of any compiler for `program_key`: its key and program, or nothing.
  std::pair<std::string, ProgramPtr> find_program(const std::string& program_key) {
    std::lock_guard<std::mutex> lock(mutex);
    auto named = by_program.find(program_key);
    if (named == by_program.end()) return {};
    auto found = entries.find(named->second);
    if (found == entries.end()) return {};
    lru.splice(lru.begin(), lru, found->second.position);
    return {named->second, found->second.program};
  }

  // True the first time `problem` is seen: a bad entry is logged once per process.
  bool first_report(const std::string& problem) {
    std::lock_guard<std::mutex> lock(mutex);
    return warned.emplace(problem, true).second;
  }

  void insert(const std::string& key, ProgramPtr program) {
    std::lock_guard<std::mutex> lock(mutex);
    if (entries.count(key)) return;
    lru.push_front(key);
    bytes += program->binary.size();
    entries[key] = Slot{std::move(program), lru.begin()};
    by_program[key.substr(0, cache::kProgramKeyLength)] = key;
    while (bytes > max_bytes && lru.size() > 1) {
      auto victim = entries.find(lru.back());
      bytes -= victim->second.program->binary.size();
      auto named = by_program.find(lru.back().substr(0, cache::kProgramKeyLength));
      if (named != by_program.end() && named->second == lru.back()) by_program.erase(named);
      entries.erase(victim);
      lru.pop_back();
    }
  }
};

// Everything behind the facade. Its member functions are defined in the class: Cache is
// exported, and a nested class's out-of-line members would be exported with it.
struct Cache::Impl {
  // Declared before the stores, so destroyed after them: the remote store reports its
  // counters through count().
  mutable std::mutex stats_mutex;
  CacheStats stats;
  CacheStats unsaved;
  MemoryLayer memory;
  bool save_sources = false;
  bool copy_read_only_hits = false;
  std::unique_ptr<cache::LocalStore> store;  // the user's cache; null when the disk layer is off
  std::vector<std::unique_ptr<cache::LocalStore>> read_only;
  std::unique_ptr<cache::RemoteStore> remote;

  // Every tier in search order: the user's cache, the read-only ones, the remote one.
  std::vector<cache::Store*> tiers() const {
    std::vector<cache::Store*> tiers;
    if (store) tiers.push_back(store.get());
    for (const auto& tier : read_only) tiers.push_back(tier.get());
    if (remote) tiers.push_back(remote.get());
    return tiers;
  }

  // The NVTX range of a look-up in `tier` (NOTE [ NVTX ranges ]).
  detail::NvtxPhase nvtx_phase(const cache::Store* tier) const noexcept {
    return tier == store.get()    ? detail::NvtxPhase::cache_disk
           : tier == remote.get() ? detail::NvtxPhase::cache_remote
                                  : detail::NvtxPhase::cache_read_only;
  }

  // Applies `update` to this object's counters and to those not yet saved.
  template <class Update>
  void count(const Update& update) {
    std::lock_guard<std::mutex> lock(stats_mutex);
    update(stats);
    update(unsaved);
  }

  // Counts a damaged or untrusted entry and logs it once per process.
  void report_corrupt(const cache::Store& tier, const std::string& problem) {
    const bool is_remote = &tier == remote.get();
    if (memory.first_report(problem)) {
      detail::logger().warn("corrupt cache entry passed over{}: {}",
                            &tier == store.get() ? " (a compile replaces it)"
                            : is_remote          ? fmt::format(" in the remote cache {}", tier.location())
                                                 : std::string(" in a read-only tier"),
                            problem);
    }
    // The remote tier counts its own rejections (remote_rejected).
    if (!is_remote) count([](CacheStats& s) { ++s.corrupt_entries; });
  }

  // Takes a hit of `tier` into memory and counts it; a remote hit (and a read-only tier's,
  // with copy_read_only_hits) is also written to the user's disk cache (back-fill), so the
  // next process finds it locally. `encoded` is the entry file's bytes, as the tier checked them.
  void take_hit(cache::Store& tier, const std::string& key, ProgramPtr program, const std::string& encoded,
                CacheResult& result, double load_ms, bool fallback) {
    const bool is_remote = &tier == remote.get();
    const bool own = &tier == store.get();
    result.key = key;
    result.program = std::move(program);
    result.outcome = is_remote ? CacheOutcome::remote_hit : CacheOutcome::disk_hit;
    result.location = tier.location();
    result.read_only = !is_remote && !own;
    memory.insert(key, result.program);
    count([own, is_remote, load_ms, fallback](CacheStats& s) {
      if (!is_remote) ++(own ? s.disk_hits : s.read_only_hits);
      s.fallback_hits += fallback ? 1 : 0;
      s.load_ms += is_remote ? 0 : load_ms;
    });
    const bool copy = is_remote || (!own && copy_read_only_hits);
    if (copy && store && store->writable() && !encoded.empty()) {
      try {
        auto evicted = store->put(key, encoded);
        count([evicted](CacheStats& s) { s.evictions += evicted; });
      } catch (const Error& error) {
        count([](CacheStats& s) { ++s.store_failures; });
        if (!memory.warned_store_failure.exchange(true)) {
          detail::logger().warn("cannot write a {} hit to the disk cache: {}", is_remote ? "remote" : "read-only tier's",
                                error.what());
        }
      }
    }
  }

  // Where compilers create precompiled headers: <root>/pch, private to this user; empty
  // when PCH is off or the disk cache cannot hold it (NOTE [ precompiled headers ],
  // src/compiler/nvrtc_pch.hpp). Made once; files a crashed creation left behind go then.
  std::once_flag pch_once;
  std::string pch_directory;
  bool pch_enabled = true;

  const std::string& pch_workspace() {
    std::call_once(pch_once, [this] {
      if (!pch_enabled || !store || !store->writable()) return;
      const std::string directory = store->root() + "/pch";
      try {
        platform::make_directories(directory, 0700);
      } catch (const Error& error) {
        detail::logger().debug("no precompiled headers: {}", error.what());
        return;
      }
      struct stat info {};
      if (::lstat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::geteuid() ||
          (info.st_mode & (S_IWGRP | S_IWOTH))) {
        detail::logger().debug("no precompiled headers: {} is not a private directory of this user", directory);
        return;
      }
      store->remove_precompiled_headers(3600);  // unused for an hour: a crash's leftovers, stale host PCHs
      pch_directory = directory;
    });
    return pch_directory;
  }

  // Compiles, through precompiled headers where the compiler has them and they are on.
  CompiledProgram compile(const Compiler& compiler, const Program& program, const Target& target) {
    const auto* pch = dynamic_cast<const compiler::PchCompiler*>(&compiler);
    if (pch && !pch_workspace().empty()) return pch->compile_with_pch(program, target, pch_directory);
    return compiler.compile(program, target);
  }

  // Writes a freshly compiled entry to the disk cache and publishes it to the remote tier.
  void store_compiled(const std::string& key, const std::string& encoded, const Program& program) {
    if (store && store->writable()) {
      try {
        auto evicted = store->put(key, encoded);
        count([evicted](CacheStats& s) { s.evictions += evicted; });
        if (save_sources) store->put_source(key, program.source);
      } catch (const Error& error) {
        count([](CacheStats& s) { ++s.store_failures; });
        if (!memory.warned_store_failure.exchange(true)) {
          detail::logger().warn("cannot write to the disk cache, keeping compiled kernels in memory: {}",
                                error.what());
        }
      }
    }
    if (remote && remote->writable()) {
      try {
        remote->put(key, encoded);
      } catch (const Error& error) {
        // Counted by the store (remote_errors); a failed publish costs others a compile, no more.
        detail::logger().warn("{}", error.what());
      }
    }
  }
};

Cache::Cache(CacheConfig config) : config_(std::move(config)), impl_(std::make_unique<Impl>()) {
  impl_->memory.max_bytes = config_.memory_max_size;
  impl_->save_sources = config_.save_sources;
  impl_->pch_enabled = config_.precompiled_headers;
  impl_->copy_read_only_hits = config_.copy_read_only_hits;
  if (config_.remote) {
    try {
      Impl* impl = impl_.get();
      impl_->remote = std::make_unique<cache::RemoteStore>(
          *config_.remote, [impl](const CacheStats& delta) { impl->count([&delta](CacheStats& s) { s += delta; }); });
    } catch (const Error& error) {
      remote_problem_ = fmt::format("{}: the remote cache is off", error.what());
      detail::logger().warn("{}", remote_problem_);
    }
  }
  if (!config_.disk_enabled) return;
  try {
    impl_->store = std::make_unique<cache::LocalStore>(config_.directory, config_.max_size);
    if (!impl_->store->writable()) {
      disk_problem_ = fmt::format("cache directory {} is not writable: existing entries are used, new ones are "
                                  "kept in memory only", config_.directory);
    }
  } catch (const Error& error) {
    disk_problem_ = fmt::format("{}: the disk cache is off, compiled kernels are kept in memory only", error.what());
  }
  if (!disk_problem_.empty()) detail::logger().warn("{}", disk_problem_);
  for (const auto& directory : config_.read_only_directories) {
    try {
      impl_->read_only.push_back(
          std::make_unique<cache::LocalStore>(directory, 0, cache::LocalStore::Mode::read_only));
    } catch (const Error& error) {
      tier_problems_.push_back(fmt::format("{}: this read-only tier is left out", error.what()));
      detail::logger().warn("{}", tier_problems_.back());
    }
  }
}

bool Cache::uses_disk() const noexcept { return impl_->store != nullptr; }

cache::LocalStore* detail::CacheInternals::disk_store(Cache& cache) noexcept { return cache.impl_->store.get(); }

std::vector<std::string> Cache::locations() const {
  std::vector<std::string> locations;
  for (const auto* tier : impl_->tiers()) locations.push_back(tier->location());
  return locations;
}

std::optional<CacheResult> Cache::find(const Program& program, const std::vector<Target>& targets,
                                       const std::function<bool(const CacheResult&)>& accept) {
  validate(program.options);
  return find_digest(cache::program_digest(program), program.name, targets, accept);
}

std::optional<CacheResult> Cache::find_digest(const std::string& digest, const std::string& name,
                                              const std::vector<Target>& targets,
                                              const std::function<bool(const CacheResult&)>& accept) {
  auto start = std::chrono::steady_clock::now();
  auto answer = [&](CacheResult& result) {
    result.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return !accept || accept(result);
  };
  const std::vector<cache::Store*> tiers = impl_->tiers();
  for (size_t rung = 0; rung < targets.size(); ++rung) {
    const Target& target = targets[rung];
    const std::string program_key = cache::program_key(digest, target);
    detail::logger().debug("{}: looking for {} (program key {}) in memory and {} tier(s)", name, target.str(),
                           program_key, tiers.size());
    CacheResult result;
    // One NVTX range per tier looked in, closed before a hit is offered: the module load
    // that takes it is not the cache's (NOTE [ NVTX ranges ]).
    std::optional<detail::NvtxRange> range;
    auto look_in = [&](detail::NvtxPhase phase) {
      range.emplace([&] { return detail::nvtx_range_name(phase, detail::nvtx_subject_or(name), target.str()); });
    };
    look_in(detail::NvtxPhase::cache_memory);
    auto [memory_key, memory_program] = impl_->memory.find_program(program_key);
    range.reset();
    if (memory_program) {
      result.key = memory_key;
      result.program = memory_program;
      result.outcome = CacheOutcome::memory_hit;
      if (answer(result)) {
        impl_->count([rung](CacheStats& s) {
          ++s.memory_hits;
          s.fallback_hits += rung > 0 ? 1 : 0;
        });
        return result;
      }
    }
    for (cache::Store* tier : tiers) {
      look_in(impl_->nvtx_phase(tier));
      for (const std::string& key : tier->find_program(program_key)) {
        if (!range) look_in(impl_->nvtx_phase(tier));  // after an offer that was refused
        auto load_start = std::chrono::steady_clock::now();
        auto lookup = tier->get(key);
        double load_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
        if (lookup.status == cache::StoreLookup::Status::corrupt) {
          impl_->report_corrupt(*tier, lookup.problem);
          continue;
        }
        if (lookup.status != cache::StoreLookup::Status::hit) continue;
        range.reset();
        // Offered before it is kept: a binary the caller rejects stays out of memory and disk.
        CacheResult offered;
        offered.key = key;
        offered.program = std::make_shared<const CompiledProgram>(std::move(lookup.entry->program));
        offered.outcome = tier == impl_->remote.get() ? CacheOutcome::remote_hit : CacheOutcome::disk_hit;
        offered.location = tier->location();
        if (!answer(offered)) continue;
        impl_->take_hit(*tier, key, offered.program, lookup.encoded, result, load_ms, rung > 0);
        result.elapsed_ms = offered.elapsed_ms;
        detail::logger().info("{}: {} binary {} from {} ({:.2f} ms)", name, target.str(), key,
                              tier->location(), load_ms);
        return result;
      }
      range.reset();
    }
  }
  return std::nullopt;
}

Cache::~Cache() {
  try {
    flush_stats();
  } catch (...) {
    // Counters are advisory; losing them at exit must not throw from a destructor.
  }
}

std::string Cache::key(const Program& program, const Target& target, const Compiler& compiler) const {
  return cache::compute_key(program, target, compiler.identity());
}

std::string Cache::key_material(const Program& program, const Target& target, const Compiler& compiler) const {
  std::string material;
  std::string digest = cache::compute_key(program, target, compiler.identity(), &material);
  return material + fmt::format("{:<12} {}\n", "key", digest);
}

std::vector<std::pair<std::string, std::string>> Cache::key_inputs(const Program& program, const Target& target,
                                                                   const Compiler& compiler) const {
  std::vector<std::pair<std::string, std::string>> inputs;
  for (auto& input : cache::key_inputs(program, target, compiler.identity())) {
    inputs.emplace_back(std::move(input.field), std::move(input.value));
  }
  return inputs;
}

CacheResult Cache::get_or_compile(const Program& program, const Target& target, const Compiler& compiler) {
  auto start = std::chrono::steady_clock::now();
  auto elapsed_ms = [&start] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  compiler.check_target(target);
  validate(program.options);
  CacheResult result;
  result.key = key(program, target, compiler);
  // NOTE [ log levels ]: info says what was compiled or loaded from where; debug adds why
  // (key material, misses, the binary chosen). Both are off at the default level (warn).
  if (detail::logger().should_log(spdlog::level::debug)) {
    detail::logger().debug("{} for {}: key {}; key material:\n{}", program.name, target.str(), result.key,
                           key_material(program, target, compiler));
  }

  std::optional<detail::NvtxRange> range;  // one tier's look-up (NOTE [ NVTX ranges ])
  auto look_in = [&](detail::NvtxPhase phase) {
    range.emplace([&] { return detail::nvtx_range_name(phase, detail::nvtx_subject_or(program.name), target.str()); });
  };
  look_in(detail::NvtxPhase::cache_memory);
  result.program = impl_->memory.find(result.key);
  range.reset();
  if (result.program) {
    result.outcome = CacheOutcome::memory_hit;
    impl_->count([](CacheStats& s) { ++s.memory_hits; });
    result.elapsed_ms = elapsed_ms();
    return result;
  }

  // Single flight: the first caller of a key does the work; others wait for its result.
  std::promise<ProgramPtr> promise;
  std::shared_future<ProgramPtr> pending;
  bool leader = false;
  {
    std::lock_guard<std::mutex> lock(impl_->memory.mutex);
    auto found = impl_->memory.in_flight.find(result.key);
    if (found != impl_->memory.in_flight.end()) {
      pending = found->second;
    } else {
      pending = promise.get_future().share();
      impl_->memory.in_flight.emplace(result.key, pending);
      leader = true;
    }
  }
  if (!leader) {
    result.program = pending.get();  // rethrows the leader's compile error
    result.outcome = CacheOutcome::memory_hit;
    impl_->count([](CacheStats& s) { ++s.memory_hits; });
    result.elapsed_ms = elapsed_ms();
    return result;
  }

  auto finish_flight = [this, &result] {
    std::lock_guard<std::mutex> lock(impl_->memory.mutex);
    impl_->memory.in_flight.erase(result.key);
  };
  try {
    const std::vector<cache::Store*> tiers = impl_->tiers();
    for (cache::Store* tier : tiers) {
      auto load_start = std::chrono::steady_clock::now();
      look_in(impl_->nvtx_phase(tier));
      auto lookup = tier->get(result.key);
      range.reset();
      double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
      if (lookup.status == cache::StoreLookup::Status::hit) {
        impl_->take_hit(*tier, result.key, std::make_shared<const CompiledProgram>(std::move(lookup.entry->program)),
                 lookup.encoded, result, load_ms, false);
        detail::logger().info("{} for {}: {} in {} ({:.2f} ms)", program.name, target.str(), to_string(result.outcome),
                              tier->location(), load_ms);
        break;
      }
      if (lookup.status == cache::StoreLookup::Status::corrupt) impl_->report_corrupt(*tier, lookup.problem);
    }
    if (!result.program) {
      detail::logger().debug("{} for {}: in no cache ({} tier(s) searched), compiling with {}", program.name,
                             target.str(), tiers.size(), compiler.identity().str());
      CompiledProgram compiled;
      try {
        const detail::NvtxRange compiling([&] {
          return detail::nvtx_range_name(detail::NvtxPhase::compile, detail::nvtx_subject_or(program.name), target.str());
        });
        compiled = impl_->compile(compiler, program, target);
      } catch (const Error& error) {
        if (error.code() == ErrorCode::compile_failed) impl_->count([](CacheStats& s) { ++s.compile_failures; });
        throw;
      }
      impl_->count([&compiled](CacheStats& s) {
        if (compiled.driver_cache_hit) {  // NOTE [ the driver's compute cache ]: not a compile
          ++s.driver_cache_hits;
          return;
        }
        ++s.compiles;
        s.compile_ms += compiled.compile_ms;
      });
      result.program = std::make_shared<const CompiledProgram>(std::move(compiled));
      result.outcome = CacheOutcome::compiled;
      detail::logger().info("{} for {}: {} by {} in {:.1f} ms ({} bytes), key {}", program.name, target.str(),
                            result.program->driver_cache_hit ? "taken from the CUDA driver's compute cache" : "compiled",
                            compiler.identity().str(), result.program->compile_ms, result.program->binary.size(),
                            result.key);
      if ((impl_->store && impl_->store->writable()) || (impl_->remote && impl_->remote->writable())) {
        impl_->store_compiled(result.key, cache::encode_entry(result.key, *result.program, compiler.identity(),
                                                                 cache::describe_entry(program, target, compiler.identity())),
                              program);
      }
      impl_->memory.insert(result.key, result.program);
    }
    promise.set_value(result.program);
    finish_flight();
  } catch (...) {
    promise.set_exception(std::current_exception());
    finish_flight();
    throw;
  }
  result.elapsed_ms = elapsed_ms();
  return result;
}

bool Cache::stored(const std::string& key) const {
  if (!impl_->store) return false;
  struct stat info {};
  return ::lstat(impl_->store->entry_path(key).c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

CacheStats Cache::stats() const {
  std::lock_guard<std::mutex> lock(impl_->stats_mutex);
  return impl_->stats;
}

void Cache::flush_stats() {
  CacheStats delta;
  {
    std::lock_guard<std::mutex> lock(impl_->stats_mutex);
    delta = impl_->unsaved;
    impl_->unsaved = {};
  }
  if (impl_->store && impl_->store->writable()) impl_->store->add_stats(delta);
}

}  // namespace kernc
