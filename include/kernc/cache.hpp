#pragma once
/// \file
/// The compile cache: a memory layer over the user's disk cache and any read-only tiers
/// (KERNC_CACHE_PATH), keyed by everything that reaches the compiler (see NOTE [ cache key ]
/// in src/cache/cache_key.hpp and cache/FORMAT.md).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <vector>

#include "kernc/compiler.hpp"
#include "kernc/program.hpp"
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
};

/// Where a lookup was answered.
enum class CacheOutcome { memory_hit, disk_hit, compiled };
KERNC_API const char* to_string(CacheOutcome outcome) noexcept;

/// Counters of one Cache object (this process), or summed over processes on disk.
struct KERNC_API CacheStats {
  std::uint64_t memory_hits = 0;
  std::uint64_t disk_hits = 0;       ///< hits in the user's disk cache
  std::uint64_t read_only_hits = 0;  ///< hits in a read-only tier (KERNC_CACHE_PATH)
  std::uint64_t fallback_hits = 0;   ///< hits of a lower rung of the architecture ladder (also counted above)
  std::uint64_t compiles = 0;
  std::uint64_t compile_failures = 0;
  double compile_ms = 0;       ///< total wall time spent compiling
  double load_ms = 0;          ///< total wall time spent reading and checking disk entries
  std::uint64_t corrupt_entries = 0;  ///< entries that failed their checks (damaged or untrusted): misses
  std::uint64_t evictions = 0;
  std::uint64_t store_failures = 0;   ///< entries that could not be written

  CacheStats& operator+=(const CacheStats& other);
};

/// The answer to a lookup.
struct KERNC_API CacheResult {
  std::shared_ptr<const CompiledProgram> program;
  CacheOutcome outcome = CacheOutcome::compiled;
  std::string key;        ///< "<64 hex>-<16 hex>" (see NOTE [ cache key ])
  double elapsed_ms = 0;  ///< time spent answering, compile included
  std::string location;   ///< the directory of the tier that answered; empty for memory and compiles
};

namespace cache {
class LocalStore;
class Store;
}

/// The facade over memory and disk. Thread-safe: lookups of different keys never wait
/// for each other; concurrent lookups of one key compile it once.
class KERNC_API Cache {
 public:
  /// Never throws for an unusable directory: the disk layer is switched off and
  /// disk_problem() says why (logged once as a warning on the "kernc" logger).
  explicit Cache(CacheConfig config);
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  /// The compiled program for (program, target) from memory, disk, or a fresh compile.
  /// Throws kernc::Error(compile_failed) when the source does not compile (not cached).
  CacheResult get_or_compile(const Program& program, const Target& target, const Compiler& compiler);

  /// A binary of `program` for the first of `targets` that has one, built by any compiler
  /// release, from memory or any tier; nothing is compiled, no compiler is needed. Each hit
  /// is offered to `accept` (e.g. a module load); a rejected one is passed over. Returns
  /// std::nullopt when no target has an accepted binary.
  std::optional<CacheResult> find(const Program& program, const std::vector<Target>& targets,
                                  const std::function<bool(const CacheResult&)>& accept = {});

  /// The key get_or_compile would use, without compiling anything.
  std::string key(const Program& program, const Target& target, const Compiler& compiler) const;
  /// The tagged material that key() hashes, readable, for explaining a miss.
  std::string key_material(const Program& program, const Target& target, const Compiler& compiler) const;

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
  /// The directories searched, in order: the user's cache (if on), then the read-only tiers.
  std::vector<std::string> locations() const;
  /// The disk store, or nullptr when the disk layer is off.
  cache::LocalStore* store() noexcept { return store_.get(); }

 private:
  struct Memory;
  /// The disk tiers in search order: the user's cache, then the read-only ones.
  std::vector<cache::LocalStore*> tiers() const;
  /// Applies `update` to this object's counters and to those not yet saved.
  void count(const std::function<void(CacheStats&)>& update);
  /// Counts a damaged or untrusted entry and logs it once per process.
  void report_corrupt(const cache::LocalStore& tier, const std::string& problem);

  CacheConfig config_;
  std::string disk_problem_;
  std::vector<std::string> tier_problems_;
  std::unique_ptr<cache::LocalStore> store_;
  std::vector<std::unique_ptr<cache::LocalStore>> read_only_;
  std::unique_ptr<Memory> memory_;
  mutable std::mutex stats_mutex_;
  CacheStats stats_;
  CacheStats unsaved_;
};

/// One entry file of a cache directory.
struct KERNC_API CacheEntryFile {
  std::string key;
  std::string path;
  bool regular = true;        ///< false: a directory, symlink or other thing stands in its place
  std::uint64_t size = 0;
  std::int64_t last_used = 0;  ///< mtime, seconds since the epoch
  long last_used_nsec = 0;     ///< mtime, nanoseconds within the second (LRU order within a burst)
};

/// What CacheDirectory::verify found.
struct KERNC_API CacheVerifyReport {
  std::uint64_t checked = 0;
  std::vector<std::pair<std::string, std::string>> bad;  ///< path, problem
  std::uint64_t removed = 0;
};

/// What CacheDirectory::prune removed.
struct KERNC_API CachePruneReport {
  std::uint64_t removed = 0;
  std::uint64_t freed_bytes = 0;
  std::uint64_t remaining_bytes = 0;
  std::uint64_t temp_files_removed = 0;
};

/// A decoded entry: its metadata (the JSON object of cache/FORMAT.md, as text) and program.
struct KERNC_API CacheEntryContents {
  std::string key;
  std::string metadata_json;
  CompiledProgram program;
};

/// Looking after one writable cache directory (what `kernc cache` does): statistics,
/// listing, verification, pruning, inspection. Entries are checked against the same trust
/// rule as lookups (NOTE [ entry trust ], src/cache/local_store.hpp).
class KERNC_API CacheDirectory {
 public:
  /// The user's cache directory of `config`. Throws kernc::Error(io) when none is
  /// configured, or it cannot be created or used, or fails the trust rule: looking after
  /// the cache is the point here, so an unusable directory is an error, not a warning.
  explicit CacheDirectory(const CacheConfig& config);
  ~CacheDirectory();
  CacheDirectory(CacheDirectory&&) noexcept;
  CacheDirectory& operator=(CacheDirectory&&) noexcept;

  const std::string& root() const noexcept;
  /// Every entry file, oldest use first (also what stands in an entry's place).
  std::vector<CacheEntryFile> list() const;
  /// The entry at `file`, decoded and checked; std::nullopt with `problem` set when it is
  /// damaged or untrusted. Throws kernc::Error(io) when it cannot be read.
  std::optional<CacheEntryContents> read(const CacheEntryFile& file, std::string* problem) const;
  /// Checks every entry; with `remove`, deletes the bad ones.
  CacheVerifyReport verify(bool remove) const;
  /// Removes least recently used entries until at most `max_size` bytes remain, and
  /// abandoned temp files.
  CachePruneReport prune(std::uint64_t max_size);
  /// Removes every entry; returns how many.
  std::uint64_t clear();
  /// The one entry whose key starts with `prefix`; throws kernc::Error(not_found) or
  /// (invalid_argument) when none or several match.
  CacheEntryFile find(const std::string& prefix) const;
  /// Where KERNC_SAVE_SOURCE keeps the source of `key` (it may not exist).
  std::string source_path(const std::string& key) const;
  /// The counters summed over processes in the directory's stats file.
  CacheStats read_stats() const;
  void add_stats(const CacheStats& delta);
  void reset_stats();

 private:
  std::unique_ptr<cache::LocalStore> store_;
};

}  // namespace kernc
