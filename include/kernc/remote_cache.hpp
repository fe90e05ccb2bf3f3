#pragma once
/// \file
/// The remote cache tier's configuration: a shared cache on a Redis server, searched after
/// the disk tiers (KERNC_REMOTE_CACHE). docs/remote-cache.md has the URL's options and the
/// trust model.

#include <cstdint>
#include <string>

#include "kernc/export.hpp"

namespace kernc {

/// A shared cache tier on a Redis server, searched after the disk tiers (KERNC_REMOTE_CACHE).
/// Entries are the same checksummed files as on disk; a bad remote entry is a counted miss,
/// and a server that is down or slow costs at most one timeout before the tier is skipped
/// for `backoff_ms`.
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

}  // namespace kernc
