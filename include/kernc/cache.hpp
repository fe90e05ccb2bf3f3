#pragma once
/// \file
/// The compile cache. A lookup searches, in order: a memory layer, the user's disk cache
/// (KERNC_CACHE_DIR), the read-only disk tiers (KERNC_CACHE_PATH) and the remote Redis
/// tier (KERNC_REMOTE_CACHE), and compiles on a miss. Entries are keyed by everything that
/// reaches the compiler (see NOTE [ cache key ] in src/cache/cache_key.hpp and
/// cache/FORMAT.md).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernc/compiler.hpp"
#include "kernc/program.hpp"
#include "kernc/target.hpp"
#include "kernc/export.hpp"

namespace kernc {

/// A shared cache tier on a Redis server, searched after the disk tiers (KERNC_REMOTE_CACHE);
/// docs/remote-cache.md has the URL's options and the trust model. Entries are the same
/// checksummed files as on disk; a bad remote entry is a counted miss, and a server that is
/// down or slow costs at most one timeout before the tier is skipped for `backoff_ms`.
struct KERNC_API RemoteCacheConfig {
  /// The URL as given. It may hold a password: show redacted() instead.
  std::string url;
  std::string host;         ///< TCP host (redis://); empty for a unix socket
  int port = 6379;
  std::string socket_path;  ///< unix:// socket path; empty for TCP
  int database = 0;         ///< SELECTed after connecting
  std::string user;         ///< AUTH user (Redis 6 ACL); empty: AUTH with the password alone
  std::string password;     ///< empty: no AUTH
  bool read_only = false;   ///< look entries up, never publish
  std::string prefix = "kernc:";  ///< every key starts with it: one namespace per project or trust domain
  std::uint32_t connect_timeout_ms = 200;
  std::uint32_t operation_timeout_ms = 2000;  ///< per read or write on the connection
  std::uint32_t backoff_ms = 30000;           ///< how long the tier is skipped after a failure
  std::uint64_t ttl_seconds = 0;              ///< 0: entries do not expire (the server's eviction bounds them)
  std::uint64_t chunk_size = 1 << 20;         ///< larger entries are stored in chunks of this size
  /// PEM file of an Ed25519 private key: entries this process publishes are signed with it.
  std::string signing_key;
  /// PEM file of Ed25519 public keys: when set, only entries signed by one of them are loaded.
  std::string trusted_signers;

  /// The URL with any password replaced by "***": what messages and `kernc info` show.
  std::string redacted() const;
};

/// Reads a remote cache URL: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?OPTIONS] or
/// unix://[[USER]:PASSWORD@]/SOCKET[?OPTIONS], OPTIONS being NAME=VALUE pairs joined by
/// '&': read_only, prefix, connect_timeout, timeout, backoff, ttl, chunk_size, db,
/// signing_key, trusted_signers. Throws kernc::Error(invalid_argument) naming what is wrong
/// (never the password).
KERNC_API RemoteCacheConfig parse_remote_cache_url(const std::string& url);

/// Whether this build and machine can use a remote cache: hiredis built in and its
/// library loadable. Loads libhiredis on the first call.
struct KERNC_API RemoteCacheSupport {
  bool available = false;
  std::string library;  ///< the file loaded, when available
  std::string problem;  ///< why not, otherwise
};
KERNC_API RemoteCacheSupport remote_cache_support();

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
  /// A shared tier on Redis after the disk tiers (KERNC_REMOTE_CACHE); none when empty.
  std::optional<RemoteCacheConfig> remote;
};

/// Where a lookup was answered.
enum class CacheOutcome { memory_hit, disk_hit, remote_hit, compiled };
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
  // The remote tier (KERNC_REMOTE_CACHE).
  std::uint64_t remote_hits = 0;
  std::uint64_t remote_misses = 0;
  std::uint64_t remote_rejected = 0;  ///< damaged, foreign, poisoned or unsigned remote entries: misses
  std::uint64_t remote_errors = 0;    ///< failed requests: down, timed out, refused writes (e.g. maxmemory)
  std::uint64_t remote_timeouts = 0;  ///< of remote_errors, the timeouts
  std::uint64_t remote_skipped = 0;   ///< lookups and writes skipped while the tier backs off after an error
  std::uint64_t remote_writes = 0;    ///< entries published
  std::uint64_t remote_bytes_read = 0;
  std::uint64_t remote_bytes_written = 0;
  double remote_ms = 0;  ///< total wall time spent in remote requests

  CacheStats& operator+=(const CacheStats& other);
};

/// The answer to a lookup.
struct KERNC_API CacheResult {
  std::shared_ptr<const CompiledProgram> program;
  CacheOutcome outcome = CacheOutcome::compiled;
  std::string key;        ///< "<64 hex>-<16 hex>" (see NOTE [ cache key ])
  double elapsed_ms = 0;  ///< time spent answering, compile included
  std::string location;   ///< the directory (or redacted remote URL) of the tier that answered; empty for memory and compiles
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

/// What CacheDirectory::merge_from did.
struct KERNC_API CacheMergeReport {
  std::uint64_t copied = 0;
  std::uint64_t already_present = 0;  ///< valid entries of the same key were here already
  std::uint64_t bytes_copied = 0;
  std::uint64_t evicted = 0;          ///< entries the size cap evicted to make room
  std::vector<std::pair<std::string, std::string>> bad;  ///< path, problem: not copied
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
  /// Copies every entry of another cache directory (a CI shard's artifact) that this one
  /// lacks. Each is checked as a look-up checks it (trust rule, checksum, its key) before
  /// it is copied, and written atomically; a bad one is reported and skipped. Throws
  /// kernc::Error(io) when `directory` is not a kernc cache, fails the read-only tier
  /// rule (owned by root or this user, not group/other-writable), or is this directory.
  CacheMergeReport merge_from(const std::string& directory);
  /// Where KERNC_SAVE_SOURCE keeps the source of `key` (it may not exist).
  std::string source_path(const std::string& key) const;
  /// The counters summed over processes in the directory's stats file.
  CacheStats read_stats() const;
  void add_stats(const CacheStats& delta);
  void reset_stats();

 private:
  struct Impl;  // the directory's disk store (src/cache/cache_directory.cpp)
  std::unique_ptr<Impl> impl_;
};

}  // namespace kernc
