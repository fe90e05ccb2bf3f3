#pragma once
// The storage interface behind the Cache facade: the user's writable disk cache and the
// read-only tiers of KERNC_CACHE_PATH are LocalStores; the Redis tier is a RemoteStore.
// A miss is not an error; a corrupt or untrusted entry is a miss that is reported; a tier
// that cannot answer now (a remote server down) is unavailable, also a miss.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/entry_format.hpp"

namespace kernc::cache {

struct StoreLookup {
  enum class Status { hit, miss, corrupt, unavailable };
  Status status = Status::miss;
  std::optional<StoredEntry> entry;  ///< set on hit
  std::string problem;               ///< set on corrupt: what was wrong
  std::string encoded;               ///< set on hit: the entry file's bytes (to back-fill or copy)
};

class Store {
 public:
  virtual ~Store() = default;
  /// Never throws for a missing or damaged entry; those are miss / corrupt.
  virtual StoreLookup get(const std::string& key) = 0;
  /// The keys of entries built from one program key by any compiler, best candidate
  /// first (most recently used); none of them is read or checked yet.
  virtual std::vector<std::string> find_program(const std::string& program_key) const = 0;
  /// Stores encoded entry bytes; returns how many entries were evicted to make room.
  /// Throws kernc::Error(io) if the entry cannot be written.
  virtual std::uint64_t put(const std::string& key, std::string_view encoded) = 0;
  /// Whether put() can work.
  virtual bool writable() const noexcept = 0;
  /// Where the store is, for messages ("/home/u/.cache/kernc").
  virtual const std::string& location() const noexcept = 0;
};

}  // namespace kernc::cache
