#pragma once
/// \file
/// The compile cache. A lookup searches, in order: a memory layer, the user's disk cache
/// (KERNC_CACHE_DIR), the read-only disk tiers (KERNC_CACHE_PATH) and the remote Redis
/// tier (KERNC_REMOTE_CACHE), and compiles on a miss. Entries are keyed by everything that
/// reaches the compiler (see NOTE [ cache key ] in src/cache/cache_key.hpp and
/// cache/FORMAT.md). The counters are in cache_stats.hpp, the remote tier's settings in
/// remote_cache.hpp, and looking after a cache directory in cache_directory.hpp.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernc/cache_stats.hpp"
#include "kernc/compiler.hpp"
#include "kernc/program.hpp"
#include "kernc/remote_cache.hpp"
#include "kernc/target.hpp"
#include "kernc/export.hpp"

namespace kernc {

/// How the cache is set up; filled from the environment by Config (config.hpp).
struct KERNC_API CacheConfig {
  std::string directory;                               ///< the disk store's root
  /// Read-only tiers searched after `directory`, in order, never written (KERNC_CACHE_PATH).
  std::vector<std::string> read_only_directories;
  std::uint64_t max_size = 4ull << 30;                 ///< disk cap in bytes, enforced by LRU eviction
  bool disk_enabled = true;                            ///< false: memory only (KERNC_CACHE_DISABLE=1)
  std::uint64_t memory_max_size = 256ull << 20;        ///< memory layer cap in bytes
  /// Also write each compiled program's source next to its entry (<entry>.cu), so
  /// generated code can be read (KERNC_SAVE_SOURCE=1, `kernc compile --save-source`).
  bool save_sources = false;
  /// Let the compiler keep precompiled headers of programs' leading #include lines for
  /// its later compiles, created in <directory>/pch (KERNC_PCH; NVRTC 12.8+, needs the
  /// disk cache). The binaries are the same bytes either way.
  bool precompiled_headers = true;
  /// Also copy an entry found in a read-only tier into `directory`, as a remote hit always
  /// is (after the read-only tier's trust checks and checksum). `kernc precompile` sets it:
  /// its artifact is the directory, and a tier's entry copied costs no compile.
  bool copy_read_only_hits = false;
  /// A shared tier on Redis after the disk tiers (KERNC_REMOTE_CACHE); none when empty.
  std::optional<RemoteCacheConfig> remote;
};

/// The answer to a lookup.
struct KERNC_API CacheResult {
  std::shared_ptr<const CompiledProgram> program;
  CacheOutcome outcome = CacheOutcome::compiled;
  std::string key;        ///< "<64 hex>-<16 hex>" (see NOTE [ cache key ])
  double elapsed_ms = 0;  ///< time spent answering, compile included
  std::string location;   ///< the directory (or redacted remote URL) of the tier that answered; empty for memory and compiles
  bool read_only = false;  ///< answered by a read-only tier (KERNC_CACHE_PATH)
};

namespace detail {
struct CacheInternals;  // kernc's own code reaches the tiers through it (src/cache/cache_internals.hpp)
}

/// The facade over every tier: memory, the user's disk cache, the read-only tiers and the
/// remote tier, searched in that order. Thread-safe: lookups of different keys never wait
/// for each other; concurrent lookups of one key compile it once.
class KERNC_API Cache {
 public:
  /// Never throws for an unusable directory: the disk layer is switched off and
  /// disk_problem() says why (logged once as a warning on the "kernc" logger).
  explicit Cache(CacheConfig config);
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  /// The compiled program for (program, target) from memory, a tier, or a fresh compile.
  /// Throws kernc::Error(compile_failed) when the source does not compile (not cached).
  CacheResult get_or_compile(const Program& program, const Target& target, const Compiler& compiler);

  /// A binary of `program` for the first of `targets` that has one, built by any compiler
  /// release, from memory or any tier; nothing is compiled, no compiler is needed. Each hit
  /// is offered to `accept` (e.g. a module load); a rejected one is passed over. Returns
  /// std::nullopt when no target has an accepted binary.
  std::optional<CacheResult> find(const Program& program, const std::vector<Target>& targets,
                                  const std::function<bool(const CacheResult&)>& accept = {});
  /// The same for a program known by its digest (the "program" field of key_material)
  /// rather than its source; `name` is the program's, for log lines.
  std::optional<CacheResult> find_digest(const std::string& program_digest, const std::string& name,
                                         const std::vector<Target>& targets,
                                         const std::function<bool(const CacheResult&)>& accept = {});

  /// The key get_or_compile would use, without compiling anything.
  std::string key(const Program& program, const Target& target, const Compiler& compiler) const;
  /// The tagged material that key() hashes, readable, for explaining a miss.
  std::string key_material(const Program& program, const Target& target, const Compiler& compiler) const;
  /// The same inputs as (field, value) pairs, the options one field per option, as an
  /// entry records them under "inputs" (cache/FORMAT.md): what `kernc cache explain`
  /// compares with a cached entry's to say which input differs.
  std::vector<std::pair<std::string, std::string>> key_inputs(const Program& program, const Target& target,
                                                              const Compiler& compiler) const;

  /// Whether the user's disk cache holds an entry file for `key` now (read-only tiers and
  /// memory do not count): what a precompile leaves behind.
  bool stored(const std::string& key) const;

  /// This object's counters.
  CacheStats stats() const;
  /// Adds this object's counters not yet saved to the directory's stats file (also done on destruction).
  void flush_stats();

  const CacheConfig& config() const noexcept { return config_; }
  /// Empty if the disk layer works; otherwise why it is off or read-only.
  const std::string& disk_problem() const noexcept { return disk_problem_; }
  /// Why each unusable read-only tier was left out (one line per tier; empty if none).
  const std::vector<std::string>& tier_problems() const noexcept { return tier_problems_; }
  /// Empty if no remote tier is configured or it is on; otherwise why it is off (hiredis
  /// missing, a key file unreadable); logged once as a warning.
  const std::string& remote_problem() const noexcept { return remote_problem_; }
  /// The tiers searched, in order: the user's cache (if on), the read-only tiers, then the
  /// remote tier as its redacted URL.
  std::vector<std::string> locations() const;
  /// Whether the user's disk cache is in use: configured and usable, perhaps read-only
  /// (disk_problem() then says so). False when the disk layer is off or failed.
  bool uses_disk() const noexcept;

 private:
  friend struct detail::CacheInternals;
  struct Impl;  // the tiers, the memory layer and the counters (src/cache/cache.cpp)

  // What the accessors above return, fixed at construction.
  CacheConfig config_;
  std::string disk_problem_;
  std::vector<std::string> tier_problems_;
  std::string remote_problem_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kernc
