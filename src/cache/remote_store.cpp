#include "cache/remote_store.hpp"

#include <cstring>
#include <exception>

#include <fmt/format.h>

#include "cache/cache_key.hpp"
#include "cache/entry_format.hpp"
#include "kernc/error.hpp"
#include "platform/ed25519.hpp"
#include "platform/redis_connection.hpp"
#include "platform/sha256.hpp"
#include "base/log.hpp"

namespace kernc::cache {

namespace {

using platform::RedisConnection;
using platform::RedisFailure;
using platform::RedisReply;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kHeadMagic = "KERNCRH1";
constexpr size_t kHeadSize = 56;
constexpr size_t kSignatureBlockSize = platform::kEd25519PublicKeySize + platform::kEd25519SignatureSize;
// An entry larger than this is not a kernel binary: refuse it before allocating.
constexpr std::uint64_t kMaxEntrySize = 1ull << 30;
// Connections kept open between requests, per store.
constexpr size_t kMaxIdleConnections = 8;

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
std::uint64_t get_le(std::string_view bytes, size_t offset, size_t size) {
  std::uint64_t v = 0;
  for (size_t i = 0; i < size; ++i) v |= std::uint64_t(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  return v;
}

std::string to_hex(std::string_view raw) {
  std::string hex;
  for (unsigned char c : raw) hex += fmt::format("{:02x}", c);
  return hex;
}

std::string signed_message(const std::string& key, std::string_view sha256_raw) {
  std::string message = "kernc remote entry v1\n";
  message += key;
  message += '\n';
  message.append(sha256_raw.data(), sha256_raw.size());
  return message;
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

// A connection taken from the idle list (or opened) for one request, given back when the
// request succeeded. A failed one is dropped by not giving it back.
class RemoteStore::Lease {
 public:
  explicit Lease(const RemoteStore& store) : store_(store), exceptions_(std::uncaught_exceptions()) {
    {
      std::lock_guard<std::mutex> lock(store.mutex_);
      if (!store.idle_.empty()) {
        connection_ = std::move(store.idle_.back());
        store.idle_.pop_back();
      }
    }
    if (!connection_) connection_ = store.connect();
  }
  ~Lease() {
    // Leaving by an exception: the request did not finish, the connection's state is unknown.
    if (!connection_ || failed_ || std::uncaught_exceptions() > exceptions_) return;
    std::lock_guard<std::mutex> lock(store_.mutex_);
    if (store_.idle_.size() < kMaxIdleConnections) store_.idle_.push_back(std::move(connection_));
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  RedisConnection& operator*() { return *connection_; }
  void fail() { failed_ = true; }

 private:
  const RemoteStore& store_;
  std::unique_ptr<RedisConnection> connection_;
  int exceptions_;
  bool failed_ = false;
};

RemoteStore::RemoteStore(RemoteCacheConfig config, std::function<void(const CacheStats&)> count)
    : config_(std::move(config)), location_(config_.redacted()), count_(std::move(count)) {
  if (std::string problem = platform::hiredis_problem(); !problem.empty()) {
    throw Error(ErrorCode::backend_disabled, fmt::format("remote cache {}: {}", location_, problem));
  }
  if (!config_.signing_key.empty()) {
    signer_ = std::make_unique<platform::Ed25519Signer>(platform::Ed25519Signer::from_pem_file(config_.signing_key));
  }
  if (!config_.trusted_signers.empty()) trusted_signers_ = platform::read_ed25519_public_keys(config_.trusted_signers);
}

RemoteStore::~RemoteStore() = default;

bool RemoteStore::backing_off() const {
  return Clock::now().time_since_epoch().count() < skip_until_ns_.load(std::memory_order_relaxed);
}

void RemoteStore::record_failure(const std::string& doing, const std::exception& failure, bool timed_out) const {
  auto until = Clock::now() + std::chrono::milliseconds(config_.backoff_ms);
  std::int64_t previous = skip_until_ns_.exchange(
      std::chrono::duration_cast<Clock::duration>(until.time_since_epoch()).count(), std::memory_order_relaxed);
  {
    // Connections opened before the failure are suspect too (a restarted server).
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.clear();
  }
  CacheStats delta;
  delta.remote_errors = 1;
  delta.remote_timeouts = timed_out ? 1 : 0;
  count_(delta);
  // One warning per backoff period, not one per thread that saw the same outage.
  if (previous < Clock::now().time_since_epoch().count()) {
    detail::logger().warn("remote cache {}: {} failed: {}; skipping it for {} ms", location_, doing, failure.what(),
                          config_.backoff_ms);
  }
}

std::unique_ptr<RedisConnection> RemoteStore::connect() const {
  platform::RedisEndpoint endpoint{config_.host, config_.port, config_.socket_path};
  auto connection = std::make_unique<RedisConnection>(endpoint, std::chrono::milliseconds(config_.connect_timeout_ms),
                                                      std::chrono::milliseconds(config_.operation_timeout_ms));
  std::vector<std::vector<std::string_view>> setup;
  if (!config_.password.empty()) {
    if (config_.user.empty()) setup.push_back({"AUTH", config_.password});
    else setup.push_back({"AUTH", config_.user, config_.password});
  }
  std::string database = std::to_string(config_.database);
  if (config_.database != 0) setup.push_back({"SELECT", database});
  if (setup.empty()) return connection;
  auto replies = connection->pipeline(setup);
  for (size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].type == RedisReply::Type::error) {
      // The server's words ("WRONGPASS invalid username-password pair") never hold the password.
      throw RedisFailure(fmt::format("{} refused: {}", setup[i][0], replies[i].str), false);
    }
  }
  return connection;
}

std::string RemoteStore::make_head(const std::string& key, std::string_view encoded, bool inline_entry) const {
  const std::string digest = platform::sha256_raw(encoded);
  const std::uint64_t chunks = inline_entry ? 0 : (encoded.size() + config_.chunk_size - 1) / config_.chunk_size;
  std::string head(kHeadMagic);
  put_u64(head, encoded.size());
  put_u32(head, static_cast<std::uint32_t>(chunks));
  put_u32(head, signer_ ? static_cast<std::uint32_t>(kSignatureBlockSize) : 0);
  head += digest;
  if (signer_) head += signer_->public_key() + signer_->sign(signed_message(key, digest));
  if (inline_entry) head.append(encoded.data(), encoded.size());
  return head;
}

StoreLookup RemoteStore::get(const std::string& key) {
  StoreLookup lookup;
  if (backing_off()) {
    CacheStats delta;
    delta.remote_skipped = 1;
    count_(delta);
    lookup.status = StoreLookup::Status::unavailable;
    return lookup;
  }
  auto start = Clock::now();
  CacheStats delta;
  try {
    Lease connection(*this);
    RedisReply reply = (*connection).command({"GET", config_.prefix + "entry:" + key});
    if (reply.type == RedisReply::Type::nil) {
      delta.remote_misses = 1;
    } else if (reply.type == RedisReply::Type::string) {
      delta.remote_bytes_read += reply.str.size();
      const std::string head = reply.str.substr(0, kHeadSize);
      lookup = read_entry(*connection, key, std::move(reply.str));
      if (lookup.status == StoreLookup::Status::hit) {
        delta.remote_hits = 1;
        const std::uint64_t chunks = get_le(head, 16, 4);
        if (chunks > 0) delta.remote_bytes_read += lookup.encoded.size();  // inline bytes came with the head
        if (config_.ttl_seconds > 0) {
          // A hit keeps its entry alive. Best effort: a failure here costs the connection,
          // never the hit, and starts no backoff.
          try {
            // The writer's chunking, from the head: it may have had another chunk_size.
            refresh_ttl(*connection, key, lookup.encoded, chunks);
          } catch (const RedisFailure&) {
            connection.fail();
          }
        }
      } else {
        delta.remote_rejected = 1;
      }
    } else if (reply.str.rfind("WRONGTYPE", 0) == 0) {
      lookup.status = StoreLookup::Status::corrupt;
      lookup.problem = fmt::format("remote entry {}: the key holds something other than an entry", key);
      delta.remote_rejected = 1;
    } else {
      connection.fail();
      throw RedisFailure(fmt::format("GET answered {}", reply.type == RedisReply::Type::error ? reply.str : "not a string"),
                         false);
    }
  } catch (const RedisFailure& failure) {
    record_failure("looking up " + key, failure, failure.timed_out());
    lookup = {};
    lookup.status = StoreLookup::Status::unavailable;
  }
  delta.remote_ms = ms_since(start);
  count_(delta);
  return lookup;
}

StoreLookup RemoteStore::read_entry(RedisConnection& connection, const std::string& key, std::string head) const {
  StoreLookup lookup;
  lookup.status = StoreLookup::Status::corrupt;
  auto reject = [&](const std::string& why) {
    lookup.problem = fmt::format("remote entry {}: {}", key, why);
    return lookup;
  };
  if (head.size() < kHeadSize || std::string_view(head).substr(0, 8) != kHeadMagic) {
    return reject("not a kernc remote entry (no KERNCRH1 head)");
  }
  const std::uint64_t size = get_le(head, 8, 8);
  const std::uint64_t chunks = get_le(head, 16, 4);
  const std::uint64_t signature_size = get_le(head, 20, 4);
  const std::string digest = head.substr(24, 32);
  if (size > kMaxEntrySize) return reject(fmt::format("claims {} bytes, more than the 1 GiB limit", size));
  if (signature_size != 0 && signature_size != kSignatureBlockSize) return reject("bad signature block size");
  if (head.size() < kHeadSize + signature_size) return reject("truncated head");
  const std::string signer = head.substr(kHeadSize, signature_size ? platform::kEd25519PublicKeySize : 0);
  const std::string signature =
      head.substr(kHeadSize + signer.size(), signature_size ? platform::kEd25519SignatureSize : 0);
  const size_t body = kHeadSize + signature_size;
  if (!trusted_signers_.empty()) {
    if (signature_size == 0) return reject("unsigned, and this tier trusts only signed entries");
    bool known = false;
    for (const auto& trusted : trusted_signers_) known = known || trusted == signer;
    if (!known) return reject(fmt::format("signed by key {}, which is not a trusted signer", to_hex(signer).substr(0, 16)));
    if (!platform::ed25519_verify(signer, signed_message(key, digest), signature)) {
      return reject("its signature does not match its key and contents");
    }
  }
  std::string entry;
  if (chunks == 0) {
    if (head.size() - body != size) {
      return reject(fmt::format("holds {} bytes of entry, its head says {}", head.size() - body, size));
    }
    entry = head.substr(body);
  } else {
    if (head.size() != body) return reject("a chunked entry with bytes after its head");
    if (chunks > size || chunks > (kMaxEntrySize >> 10)) return reject("an impossible chunk count");
    std::vector<std::string> names;
    const std::string prefix = config_.prefix + "chunk:" + to_hex(digest) + ":";
    for (std::uint64_t i = 0; i < chunks; ++i) names.push_back(prefix + std::to_string(i));
    std::vector<std::string_view> mget = {"MGET"};
    for (const auto& name : names) mget.push_back(name);
    RedisReply parts = connection.command(mget);
    if (parts.type != RedisReply::Type::array || parts.elements.size() != chunks) {
      throw RedisFailure("MGET of the chunks answered " + (parts.type == RedisReply::Type::error ? parts.str : "no array"),
                         false);
    }
    entry.reserve(size);
    for (std::uint64_t i = 0; i < chunks; ++i) {
      if (parts.elements[i].type != RedisReply::Type::string) {
        return reject(fmt::format("chunk {} of {} is missing (evicted or expired?)", i + 1, chunks));
      }
      entry += parts.elements[i].str;
      if (entry.size() > size) break;
    }
    if (entry.size() != size) return reject(fmt::format("its chunks hold {} bytes, its head says {}", entry.size(), size));
  }
  if (platform::sha256_raw(entry) != digest) return reject("its bytes do not match the SHA-256 in its head");
  std::string problem;
  auto decoded = decode_entry(entry, key, &problem, EntryMetadata::for_loading);
  if (!decoded) return reject(problem);
  lookup.status = StoreLookup::Status::hit;
  lookup.entry = std::move(decoded);
  lookup.encoded = std::move(entry);
  return lookup;
}

void RemoteStore::refresh_ttl(RedisConnection& connection, const std::string& key, std::string_view encoded,
                              std::uint64_t chunks) const {
  const std::string ttl = std::to_string(config_.ttl_seconds);
  std::vector<std::string> names = {config_.prefix + "entry:" + key};
  const std::string digest_hex = chunks ? to_hex(platform::sha256_raw(encoded)) : "";
  for (std::uint64_t i = 0; i < chunks; ++i) {
    names.push_back(config_.prefix + "chunk:" + digest_hex + ":" + std::to_string(i));
  }
  std::vector<std::vector<std::string_view>> touch;
  for (const auto& name : names) touch.push_back({"EXPIRE", name, ttl});
  connection.pipeline(touch);
}

std::vector<std::string> RemoteStore::find_program(const std::string& program_key) const {
  std::vector<std::string> keys;
  if (backing_off()) {
    CacheStats delta;
    delta.remote_skipped = 1;
    count_(delta);
    return keys;
  }
  auto start = Clock::now();
  try {
    Lease connection(*this);
    RedisReply reply = (*connection).command({"ZREVRANGE", config_.prefix + "program:" + program_key, "0", "15"});
    if (reply.type == RedisReply::Type::array) {
      for (const auto& element : reply.elements) {
        // Only well-formed keys of this program: the set is written by others.
        if (element.type == RedisReply::Type::string && element.str.size() == kKeyLength &&
            element.str.compare(0, program_key.size(), program_key) == 0) {
          keys.push_back(element.str);
        }
      }
    } else if (reply.type == RedisReply::Type::error && reply.str.rfind("WRONGTYPE", 0) != 0) {
      connection.fail();
      throw RedisFailure("ZREVRANGE answered " + reply.str, false);
    }
  } catch (const RedisFailure& failure) {
    record_failure("finding binaries of program " + program_key.substr(0, 16), failure, failure.timed_out());
  }
  CacheStats delta;
  delta.remote_ms = ms_since(start);
  count_(delta);
  return keys;
}

std::uint64_t RemoteStore::put(const std::string& key, std::string_view encoded) {
  if (config_.read_only) throw Error(ErrorCode::io, fmt::format("remote cache {} is read-only", location_));
  CacheStats delta;
  if (backing_off()) {
    delta.remote_skipped = 1;
    count_(delta);
    return 0;
  }
  auto start = Clock::now();
  const bool inline_entry = encoded.size() <= config_.chunk_size;
  const std::string head = make_head(key, encoded, inline_entry);
  const std::string ttl = std::to_string(config_.ttl_seconds);
  auto with_ttl = [&](std::vector<std::string_view> command) {
    if (config_.ttl_seconds > 0) {
      command.push_back("EX");
      command.push_back(ttl);
    }
    return command;
  };
  auto refused = [&](const std::string& what, const RedisReply& reply) {
    delta.remote_errors += 1;
    delta.remote_ms = ms_since(start);
    count_(delta);
    return Error(ErrorCode::io, fmt::format("remote cache {}: the server refused {} of {}: {}", location_, what, key,
                                            reply.str));
  };
  try {
    Lease connection(*this);
    if (!inline_entry) {
      // Chunks first, and only then the head that names them (see the head record above).
      const std::string digest_hex = to_hex(head.substr(24, 32));
      std::vector<std::string> names;
      std::vector<std::vector<std::string_view>> commands;
      for (size_t offset = 0, i = 0; offset < encoded.size(); offset += config_.chunk_size, ++i) {
        names.push_back(config_.prefix + "chunk:" + digest_hex + ":" + std::to_string(i));
      }
      for (size_t i = 0; i < names.size(); ++i) {
        commands.push_back(with_ttl({"SET", names[i], encoded.substr(i * config_.chunk_size, config_.chunk_size)}));
      }
      for (const auto& reply : (*connection).pipeline(commands)) {
        if (reply.type == RedisReply::Type::error) throw refused("a chunk", reply);
      }
    }
    const std::string head_key = config_.prefix + "entry:" + key;
    const std::string program_set = config_.prefix + "program:" + key.substr(0, kProgramKeyLength);
    const std::string score = std::to_string(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
    std::vector<std::vector<std::string_view>> commands = {with_ttl({"SET", head_key, head}),
                                                           {"ZADD", program_set, score, key}};
    if (config_.ttl_seconds > 0) commands.push_back({"EXPIRE", program_set, ttl});
    auto replies = (*connection).pipeline(commands);
    if (replies[0].type == RedisReply::Type::error) throw refused("the entry", replies[0]);
    if (replies[1].type == RedisReply::Type::error) throw refused("the program index", replies[1]);
  } catch (const RedisFailure& failure) {
    record_failure("publishing " + key, failure, failure.timed_out());
    throw Error(ErrorCode::io, fmt::format("remote cache {}: publishing {} failed: {}", location_, key, failure.what()));
  }
  delta.remote_writes = 1;
  delta.remote_bytes_written = head.size() + (inline_entry ? 0 : encoded.size());
  delta.remote_ms = ms_since(start);
  count_(delta);
  return 0;
}

}  // namespace kernc::cache

namespace kernc {

RemoteCacheSupport remote_cache_support() {
  RemoteCacheSupport support;
  support.problem = platform::hiredis_problem();
  support.available = support.problem.empty();
  support.library = platform::hiredis_library_path();
  return support;
}

}  // namespace kernc
