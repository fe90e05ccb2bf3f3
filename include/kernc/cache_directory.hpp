#pragma once
/// \file
/// Looking after one writable cache directory, what `kernc cache` does: listing,
/// verifying, pruning, merging and reading entries, and the directory's stats file.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernc/cache.hpp"
#include "kernc/cache_stats.hpp"
#include "kernc/export.hpp"
#include "kernc/program.hpp"

namespace kernc {

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

/// The compilers' precompiled headers a cache directory keeps in its private pch/ (the host
/// compiler's outlive the process). Not entries: outside list(), the size cap and prune;
/// removed by clear() and by the cache's cleanup when unused for an hour.
struct KERNC_API CachePrecompiledHeaders {
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
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
  /// Removes every entry, and the precompiled headers; returns how many entries.
  std::uint64_t clear();
  /// The precompiled headers in the directory now.
  CachePrecompiledHeaders precompiled_headers() const;
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
