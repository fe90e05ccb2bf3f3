#pragma once
// The shared tier on a Redis server (KERNC_REMOTE_CACHE), behind the same Store interface
// as the disk tiers. docs/remote-cache.md is the user's side of this file.
//
// Keys, all under the configured prefix (default "kernc:"):
//   <prefix>entry:<key>                 the head record below, with the entry inline if small
//   <prefix>chunk:<sha256 hex>:<i>      chunk i of a larger entry, named by the entry's hash
//   <prefix>program:<program key>       sorted set of the keys built from one program key
//                                       (any compiler), scored by publish time: find_program
//
// Head record (little-endian):
//   0   8   magic "KERNCRH1"
//   8   8   entry size E (bytes of the cache entry file, cache/FORMAT.md)
//   16  4   chunk count C (0: the entry follows the head)
//   20  4   signature block size S (0, or 32-byte public key + 64-byte Ed25519 signature)
//   24  32  SHA-256 of the entry
//   56  S   signature block
//   56+S    the entry, when C is 0
// Chunks are written before the head, so a reader that finds a head finds its chunks
// unless the server evicted them since; a missing chunk is a rejected entry, i.e. a miss.
//
// NOTE [ remote entry trust ]
// Whoever can write the shared tier decides what every reader runs. The entry inside a
// head is checked exactly as a disk entry is (checksum, format, its own key equal to the
// key asked for), so damage, truncation, foreign data and an entry copied under another
// key are misses. A *valid* entry with hostile code is stopped only by signatures: with
// trusted_signers set, a head must carry an Ed25519 signature of
//   "kernc remote entry v1\n" || key || "\n" || SHA-256(entry)
// by one of the listed public keys, or it is rejected. Production readers should also be
// read_only, with a prefix per trust domain and a Redis ACL user that cannot write.
//
// NOTE [ remote failures ]
// The tier may fail, never the caller: a request that fails (refused, reset, timed out,
// a protocol error) drops its connection, is counted, and makes the tier skip every
// request for backoff_ms; so a dead or stalled server costs one timeout per backoff
// period, not one per lookup. An error reply to a write (maxmemory's OOM) is counted and
// the write given up, without backing off: reads still work.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/store.hpp"
#include "kernc/cache_stats.hpp"
#include "kernc/remote_cache.hpp"

namespace kernc::platform {
class RedisConnection;
class Ed25519Signer;
}  // namespace kernc::platform

namespace kernc::cache {

class RemoteStore final : public Store {
 public:
  /// `count` receives the remote_* counters of every request. Throws kernc::Error when the
  /// tier cannot work at all: hiredis missing (backend_disabled / library_not_found), a
  /// signing key or trusted signers file unreadable or invalid (io / invalid_argument).
  /// Connects lazily: a server that is down is not an error here.
  RemoteStore(RemoteCacheConfig config, std::function<void(const CacheStats&)> count);
  ~RemoteStore() override;

  StoreLookup get(const std::string& key) override;
  std::vector<std::string> find_program(const std::string& program_key) const override;
  /// Publishes `encoded` (an entry file); returns 0. Skipped (returns 0) while backing off;
  /// throws kernc::Error(io) when the request fails or the server refuses the write.
  std::uint64_t put(const std::string& key, std::string_view encoded) override;
  bool writable() const noexcept override { return !config_.read_only; }
  /// The redacted URL: never the password.
  const std::string& location() const noexcept override { return location_; }

  const RemoteCacheConfig& config() const noexcept { return config_; }
  /// The head record for `encoded` under `key`, with the entry inline or not (exposed for tests).
  std::string make_head(const std::string& key, std::string_view encoded, bool inline_entry) const;

 private:
  class Lease;
  // Why the tier is skipped now (empty if it is not): inside a backoff period.
  bool backing_off() const;
  void record_failure(const std::string& doing, const std::exception& failure, bool timed_out) const;
  std::unique_ptr<platform::RedisConnection> connect() const;
  StoreLookup read_entry(platform::RedisConnection& connection, const std::string& key, std::string head) const;
  /// Restarts the ttl of an entry's head and its `chunks` chunks.
  void refresh_ttl(platform::RedisConnection& connection, const std::string& key, std::string_view encoded,
                   std::uint64_t chunks) const;

  RemoteCacheConfig config_;
  std::string location_;
  std::function<void(const CacheStats&)> count_;
  std::unique_ptr<platform::Ed25519Signer> signer_;
  std::vector<std::string> trusted_signers_;  // raw public keys; empty: signatures not required
  mutable std::mutex mutex_;                  // guards idle_
  mutable std::vector<std::unique_ptr<platform::RedisConnection>> idle_;
  mutable std::atomic<std::int64_t> skip_until_ns_{0};  // steady_clock time
};

}  // namespace kernc::cache
