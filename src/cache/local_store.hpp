#pragma once
// The local disk store: one file per entry under <root>/entries/<2 hex>/<key>.
//
// NOTE [ lock-free readers ]
// Writers write a unique temp file in the entry's directory and rename it into place,
// so a reader sees a whole old entry, a whole new one, or none; readers take no lock.
// Eviction removes files under a try-lock (<root>/cleanup.lock): if another process
// holds it, this one skips cleanup instead of waiting. A reader that opened a file just
// before it was evicted still reads it whole (unlinked files stay readable).
// LRU order is the files' mtime, refreshed on every hit.
//
// NOTE [ entry trust ]
// An entry is code that will run on the GPU, so whoever can write it decides what runs.
// A reader loads an entry only if it is a regular file (not a symlink, not a directory),
// owned by the current user or root, not writable by group or others, and passes its
// checksum; anything else is a miss that is counted and reported (and, in the writable
// cache, replaced by the next compile). A read-only tier (KERNC_CACHE_PATH) must itself
// be owned by root or the current user and not writable by group or others.

#include <cstdint>
#include <ctime>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/store.hpp"
#include "cache/variant_index.hpp"
#include "kernc/cache_directory.hpp"
#include "kernc/cache_stats.hpp"

namespace kernc::cache {

// The public report types (include/kernc/cache_directory.hpp), by their store names.
using EntryFile = CacheEntryFile;
using VerifyReport = CacheVerifyReport;
using PruneReport = CachePruneReport;

class LocalStore final : public Store {
 public:
  enum class Mode {
    writable,   ///< the user's cache: created if missing, must be owned by this user
    read_only,  ///< a KERNC_CACHE_PATH tier: never written or touched; owned by root or this user
  };

  /// Writable: creates <root>/entries with mode 0700 if needed. Throws kernc::Error(io)
  /// when the directory cannot be created or used, or fails the trust rule (NOTE [ entry trust ]).
  LocalStore(std::string root, std::uint64_t max_size, Mode mode = Mode::writable);

  StoreLookup get(const std::string& key) override;
  std::vector<std::string> find_program(const std::string& program_key) const override;
  std::uint64_t put(const std::string& key, std::string_view encoded) override;
  const std::string& location() const noexcept override { return root_; }

  /// Writes `source` next to the entry of `key` (<entry>.cu) for people to read; removed with the entry.
  void put_source(const std::string& key, std::string_view source);
  /// The path put_source writes to.
  std::string source_path(const std::string& key) const { return entry_path(key) + ".cu"; }

  /// Whether entries can be written here (false: read-only, hits still served).
  bool writable() const noexcept override { return writable_; }
  const std::string& root() const noexcept { return root_; }
  std::string entry_path(const std::string& key) const;

  /// Every entry file, oldest use first; also what stands in an entry's place without
  /// being a regular file (EntryFile::regular), and entries of older formats.
  std::vector<EntryFile> list() const;
  /// Checks every entry (trust rule, then decoding); with `remove`, deletes the bad ones.
  VerifyReport verify(bool remove) const;
  /// Removes least recently used entries until at most `max_size` bytes remain, and
  /// temp files abandoned more than an hour ago. Waits for the cleanup lock.
  PruneReport prune(std::uint64_t max_size);
  /// Removes every entry, the variant index and the precompiled headers; returns how many entries.
  std::uint64_t clear();
  /// Removes the files compilers keep in <root>/pch (named pch-*; NOTE [ host precompiled
  /// headers ], src/compiler/host_pch.hpp) last modified more than `max_age` seconds ago,
  /// or all of them when `max_age` is 0.
  void remove_precompiled_headers(std::time_t max_age);
  /// How many such files there are and their bytes: `kernc cache stats` shows them beside
  /// the entries, whose size cap they are outside of.
  std::pair<std::uint64_t, std::uint64_t> precompiled_header_usage() const;
  /// The variant index (NOTE [ variant index ]) of a writable store whose build of kernc
  /// has a build ID; nullptr otherwise.
  const VariantIndex* variant_index() const noexcept {
    return writable_ && index_.enabled() ? &index_ : nullptr;
  }
  /// The full key of the one entry whose key starts with `prefix`; throws
  /// kernc::Error(not_found) or (invalid_argument) when none or several match.
  std::string resolve(const std::string& prefix) const;

  /// Adds `delta` to the counters in <root>/stats.json (under a short lock that entry
  /// readers never take).
  void add_stats(const CacheStats& delta);
  CacheStats read_stats() const;
  void reset_stats();

 private:
  std::uint64_t evict_if_needed();
  PruneReport prune_locked(std::uint64_t max_size);

  std::string root_;
  std::string entries_;
  VariantIndex index_;
  std::uint64_t max_size_;
  Mode mode_;
  bool writable_ = true;
  // Approximate bytes in the store, from a scan at the first put plus every put since.
  std::mutex size_mutex_;
  std::optional<std::uint64_t> size_estimate_;
};

}  // namespace kernc::cache
