#pragma once
// The storage interface behind the Cache facade. Today there is one implementation,
// the local disk store; remote tiers (HTTP, Redis, ...) will be further Stores.
// A miss is not an error; a corrupt entry is a miss that is reported.

#include <optional>
#include <string>
#include <string_view>

#include "cache/entry_format.hpp"

namespace kernc::cache {

struct StoreLookup {
  enum class Status { hit, miss, corrupt };
  Status status = Status::miss;
  std::optional<StoredEntry> entry;  ///< set on hit
  std::string problem;               ///< set on corrupt: what was wrong
};

class Store {
 public:
  virtual ~Store() = default;
  /// Never throws for a missing or damaged entry; those are miss / corrupt.
  virtual StoreLookup get(const std::string& key) = 0;
  /// Stores encoded entry bytes; returns how many entries were evicted to make room.
  /// Throws kernc::Error(io) if the entry cannot be written.
  virtual std::uint64_t put(const std::string& key, std::string_view encoded) = 0;
};

}  // namespace kernc::cache
