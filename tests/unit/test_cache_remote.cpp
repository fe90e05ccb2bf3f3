// The shared Redis tier (NOTE [ remote entry trust ], NOTE [ remote failures ] in
// src/cache/remote_store.hpp), against a real redis-server started by each test: hits,
// misses and back-fill between two cache directories, chunked entries, poisoned and
// unsigned entries, a server that is down, killed, stalled or full.

#include <doctest/doctest.h>

#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cache/cache_key.hpp"
#include "cache/entry_format.hpp"
#include "cache/local_store.hpp"
#include "kernc/cache.hpp"
#include "kernc/cache_directory.hpp"
#include "kernc/error.hpp"
#include "log_capture.hpp"
#include "platform/files.hpp"
#include "platform/redis_connection.hpp"
#include "redis_server.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::Cache;
using kernc::CacheConfig;
using kernc::CacheOutcome;
using kernc::Program;
using kernc::Target;
using kernc::platform::RedisReply;
using kernc::test::cache_config_in;
using kernc::test::contains;
using kernc::test::nvrtc;
using kernc::test::RedisServer;
using kernc::test::TempDir;

namespace {

Program sample_program(int variant = 0) {
  Program program;
  program.name = "kernels.cu";
  program.source = kernc::test::test_data("kernels.cu");
  program.name_expressions = {"scale<float>"};
  program.options.defines["KERNC_TEST_VARIANT"] = std::to_string(variant);
  return program;
}

const Target& sm80_target() {
  static const Target target = Target::parse("sm_80");
  return target;
}

// A cache in <dir>/<name> with the remote tier at `url`.
CacheConfig with_remote(const TempDir& dir, const std::string& name, const std::string& url) {
  CacheConfig config = cache_config_in(dir, name);
  config.remote = kernc::parse_remote_cache_url(url);
  return config;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::string head_key(const std::string& key, const std::string& prefix = "kernc:") { return prefix + "entry:" + key; }

long long dbsize(const RedisServer& server) { return server.command({"DBSIZE"}).integer; }

// Writes a new Ed25519 key pair as PEM files <dir>/<name>.pem and <dir>/<name>.pub.pem.
void make_key_pair(const TempDir& dir, const std::string& name) {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  REQUIRE(key != nullptr);
  for (bool is_public : {false, true}) {
    std::string path = dir / (name + (is_public ? ".pub.pem" : ".pem"));
    FILE* file = std::fopen(path.c_str(), "w");
    REQUIRE(file != nullptr);
    int ok = is_public ? PEM_write_PUBKEY(file, key)
                       : PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(file);
    REQUIRE(ok == 1);
  }
  EVP_PKEY_free(key);
}

}  // namespace

#ifndef KERNC_WITH_HIREDIS

TEST_CASE("cache::RemoteStore in a build without hiredis: the tier is off and says why") {
  TempDir dir;
  Cache cache(with_remote(dir, "a", "redis://127.0.0.1:1"));
  CHECK(contains(cache.remote_problem(), "built without hiredis"));
  CHECK(cache.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
}

#else

TEST_CASE("cache::RemoteStore: a second cache directory gets remote hits, no compile, and back-fills its disk") {
  RedisServer server;
  TempDir dir;
  std::string key;
  std::string binary;
  {
    Cache first(with_remote(dir, "machine-a", server.url()));
    CHECK(first.remote_problem().empty());
    auto result = first.get_or_compile(sample_program(), sm80_target(), nvrtc());
    CHECK(result.outcome == CacheOutcome::compiled);
    key = result.key;
    binary = result.program->binary;
    CHECK(first.stats().remote_misses == 1);
    CHECK(first.stats().remote_writes == 1);
    CHECK(first.stats().remote_bytes_written > binary.size());
    CHECK(server.command({"EXISTS", head_key(key)}).integer == 1);
  }
  Cache second(with_remote(dir, "machine-b", server.url()));
  CHECK_FALSE(second.stored(key));
  auto hit = second.get_or_compile(sample_program(), sm80_target(), nvrtc());
  CHECK(hit.outcome == CacheOutcome::remote_hit);
  CHECK(hit.key == key);
  CHECK(hit.location == server.url());
  CHECK(hit.program->binary == binary);
  CHECK(second.stats().compiles == 0);
  CHECK(second.stats().remote_hits == 1);
  CHECK(second.stats().remote_writes == 0);
  // What was read: the head and the entry inside it, once.
  CHECK(second.stats().remote_bytes_read == server.command({"STRLEN", head_key(key)}).integer);
  CHECK(second.stored(key));  // back-filled
  second.flush_stats();

  // The next process of machine B finds it on its own disk and asks the server nothing.
  Cache again(with_remote(dir, "machine-b", server.url()));
  CHECK(again.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::disk_hit);
  CHECK(again.stats().remote_hits + again.stats().remote_misses == 0);
  // The counters of machine B's processes add up in its stats file.
  kernc::CacheDirectory directory(cache_config_in(dir, "machine-b"));
  CHECK(directory.read_stats().remote_hits == 1);
}

TEST_CASE("cache::RemoteStore: Cache::find looks up binaries without a compiler through the program index") {
  RedisServer server;
  TempDir dir;
  std::string binary;
  {
    Cache builder(with_remote(dir, "ci", server.url()));
    binary = builder.get_or_compile(sample_program(3), Target::parse("sm_80"), nvrtc()).program->binary;
  }
  Cache gpu_host(with_remote(dir, "gpu-host", server.url("read_only=1")));
  // An sm_86 device: its own rung misses, the sm_80 cubin is the first that exists.
  auto found = gpu_host.find(sample_program(3), kernc::binary_ladder(Target::parse("sm_86")));
  REQUIRE(found.has_value());
  CHECK(found->outcome == CacheOutcome::remote_hit);
  CHECK(found->program->binary == binary);
  CHECK(gpu_host.stats().fallback_hits == 1);
  CHECK(gpu_host.stored(found->key));
  // A binary the caller turns down (a module that would not load) is neither kept nor back-filled.
  Cache picky(with_remote(dir, "picky", server.url("read_only=1")));
  CHECK_FALSE(picky.find(sample_program(3), {Target::parse("sm_80")}, [](const kernc::CacheResult&) { return false; }));
  CHECK_FALSE(picky.stored(found->key));
}

TEST_CASE("cache::RemoteStore: read_only never publishes; prefixes keep namespaces apart; ttl expires entries") {
  RedisServer server;
  TempDir dir;
  {
    Cache reader(with_remote(dir, "r", server.url("read_only=1")));
    CHECK(reader.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
    CHECK(reader.stats().remote_misses == 1);
    CHECK(dbsize(server) == 0);
  }
  std::string key;
  {
    Cache team_a(with_remote(dir, "a", server.url("prefix=team-a&ttl=1h")));
    key = team_a.get_or_compile(sample_program(), sm80_target(), nvrtc()).key;
    long long ttl = server.command({"TTL", head_key(key, "team-a:")}).integer;
    CHECK(ttl > 3500);
    CHECK(ttl <= 3600);
    CHECK(server.command({"TTL", "team-a:program:" + key.substr(0, kernc::cache::kProgramKeyLength)}).integer > 3500);
  }
  Cache team_b(with_remote(dir, "b", server.url("prefix=team-b")));
  CHECK(team_b.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(server.command({"TTL", head_key(key, "team-b:")}).integer == -1);  // no ttl: kept until evicted
  Cache team_a_again(with_remote(dir, "a2", server.url("prefix=team-a")));
  CHECK(team_a_again.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::remote_hit);
}

TEST_CASE("cache::RemoteStore: large entries travel in chunks; a missing chunk is a counted miss") {
  RedisServer server;
  TempDir dir;
  std::string key;
  std::string binary;
  {
    Cache writer(with_remote(dir, "w", server.url("chunk_size=1K")));
    auto result = writer.get_or_compile(sample_program(), sm80_target(), nvrtc());
    key = result.key;
    binary = result.program->binary;
  }
  auto chunks = server.command({"KEYS", "kernc:chunk:*"});
  REQUIRE(chunks.elements.size() >= 3);  // a cubin is several KiB
  {
    Cache reader(with_remote(dir, "r1", server.url("chunk_size=1K")));
    auto hit = reader.get_or_compile(sample_program(), sm80_target(), nvrtc());
    CHECK(hit.outcome == CacheOutcome::remote_hit);
    CHECK(hit.program->binary == binary);
  }
  server.command({"DEL", chunks.elements[1].str});
  kernc::test::LogCapture log;
  Cache reader(with_remote(dir, "r2", server.url("chunk_size=1K")));
  auto result = reader.get_or_compile(sample_program(), sm80_target(), nvrtc());
  CHECK(result.outcome == CacheOutcome::compiled);
  CHECK(result.program->binary == binary);
  CHECK(reader.stats().remote_rejected == 1);
  CHECK(contains(log.text(), "is missing (evicted or expired?)"));
  // The compile published it again, whole.
  Cache healed(with_remote(dir, "r3", server.url("chunk_size=1K")));
  CHECK(healed.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::remote_hit);
}

TEST_CASE("cache::RemoteStore: a hit restarts the ttl of the head and of every chunk") {
  RedisServer server;
  TempDir dir;
  std::string key;
  {
    Cache writer(with_remote(dir, "w", server.url("chunk_size=1K&ttl=1h")));
    key = writer.get_or_compile(sample_program(), sm80_target(), nvrtc()).key;
  }
  auto chunks = server.command({"KEYS", "kernc:chunk:*"});
  REQUIRE(chunks.elements.size() >= 3);
  std::vector<std::string> names = {head_key(key)};
  for (const auto& chunk : chunks.elements) names.push_back(chunk.str);
  for (const auto& name : names) server.command({"EXPIRE", name, "100"});
  // A reader with another chunk_size: the head says how the writer chunked.
  Cache reader(with_remote(dir, "r", server.url("ttl=1h")));
  CHECK(reader.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::remote_hit);
  for (const auto& name : names) {
    CAPTURE(name);
    CHECK(server.command({"TTL", name}).integer > 3500);
  }
}

TEST_CASE("cache::RemoteStore: poisoned entries are counted misses, never loaded") {
  RedisServer server;
  TempDir dir;
  std::string key;
  std::string other_key;
  std::string binary;
  {
    Cache writer(with_remote(dir, "w", server.url()));
    auto result = writer.get_or_compile(sample_program(0), sm80_target(), nvrtc());
    key = result.key;
    binary = result.program->binary;
    other_key = writer.get_or_compile(sample_program(1), sm80_target(), nvrtc()).key;
  }
  const std::string genuine = server.command({"GET", head_key(key)}).str;
  const std::string other = server.command({"GET", head_key(other_key)}).str;
  std::string flipped = genuine;
  flipped[flipped.size() - 10] ^= 0x01;
  std::string truncated = genuine.substr(0, genuine.size() - 100);
  std::string lying_size = genuine;
  lying_size[8] ^= 0x01;

  struct Poison {
    const char* what;
    std::string value;
    const char* problem;
  };
  std::vector<Poison> poisons = {
      {"garbage", "not a kernc entry at all", "no KERNCRH1 head"},
      {"another program's entry", other, "key"},
      {"a flipped bit", flipped, "do not match the SHA-256"},
      {"a truncated value", truncated, "bytes of entry"},
      {"a head lying about the size", lying_size, "bytes of entry"},
  };
  int round = 0;
  for (const auto& poison : poisons) {
    CAPTURE(poison.what);
    server.command({"SET", head_key(key), poison.value});
    kernc::test::LogCapture log;
    Cache reader(with_remote(dir, fmt::format("r{}", round++), server.url("read_only=1")));
    auto result = reader.get_or_compile(sample_program(0), sm80_target(), nvrtc());
    CHECK(result.outcome == CacheOutcome::compiled);
    CHECK(result.program->binary == binary);
    CHECK(reader.stats().remote_rejected == 1);
    CHECK(reader.stats().remote_hits == 0);
    CHECK(contains(log.text(), poison.problem));
  }
  // Something that is not a string under the key.
  server.command({"DEL", head_key(key)});
  server.command({"RPUSH", head_key(key), "x"});
  Cache reader(with_remote(dir, "list", server.url("read_only=1")));
  CHECK(reader.get_or_compile(sample_program(0), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(reader.stats().remote_rejected == 1);
  CHECK(reader.stats().remote_errors == 0);
}

TEST_CASE("cache::RemoteStore: with trusted_signers, only entries signed by a listed key are loaded") {
  RedisServer server;
  TempDir dir;
  make_key_pair(dir, "ci");
  make_key_pair(dir, "intruder");
  const std::string trusted = "trusted_signers=" + (dir / "ci.pub.pem");
  std::string key;
  std::string binary;
  {
    Cache ci(with_remote(dir, "ci", server.url("signing_key=" + (dir / "ci.pem"))));
    CHECK(ci.remote_problem().empty());
    auto result = ci.get_or_compile(sample_program(), sm80_target(), nvrtc());
    key = result.key;
    binary = result.program->binary;
  }
  {
    Cache reader(with_remote(dir, "r1", server.url("read_only=1&" + trusted)));
    auto hit = reader.get_or_compile(sample_program(), sm80_target(), nvrtc());
    CHECK(hit.outcome == CacheOutcome::remote_hit);
    CHECK(hit.program->binary == binary);
  }
  const std::string signed_head = server.command({"GET", head_key(key)}).str;

  struct Writer {
    const char* what;
    std::string options;
    const char* problem;
  };
  for (const auto& writer : std::vector<Writer>{{"unsigned", "", "unsigned"},
                                                 {"signed by another key", "signing_key=" + (dir / "intruder.pem"),
                                                  "not a trusted signer"}}) {
    CAPTURE(writer.what);
    server.command({"FLUSHALL"});
    {
      Cache other(with_remote(dir, std::string("w-") + writer.what, server.url(writer.options)));
      other.get_or_compile(sample_program(), sm80_target(), nvrtc());
    }
    kernc::test::LogCapture log;
    Cache reader(with_remote(dir, std::string("r-") + writer.what, server.url("read_only=1&" + trusted)));
    CHECK(reader.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
    CHECK(reader.stats().remote_rejected == 1);
    CHECK(contains(log.text(), writer.problem));
  }
  // The trusted key's head with its signature bytes altered.
  std::string forged = signed_head;
  forged[56 + 32 + 5] ^= 0x40;
  server.command({"SET", head_key(key), forged});
  kernc::test::LogCapture log;
  Cache reader(with_remote(dir, "r-forged", server.url("read_only=1&" + trusted)));
  CHECK(reader.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(contains(log.text(), "signature does not match"));

  // A signers file that cannot be read turns the tier off (it never trusts by default).
  Cache misconfigured(with_remote(dir, "m", server.url("trusted_signers=" + (dir / "missing.pem"))));
  CHECK(contains(misconfigured.remote_problem(), "missing.pem"));
  CHECK(misconfigured.locations().size() == 1);
}

TEST_CASE("cache::RemoteStore: a server that is down costs one connect timeout, then is skipped") {
  TempDir dir;
  int port = 0;
  {
    RedisServer server;  // a port that was just free and is closed again
    port = server.port();
  }
  kernc::test::LogCapture log;
  Cache cache(with_remote(dir, "a", fmt::format("redis://127.0.0.1:{}?connect_timeout=300ms&backoff=1h", port)));
  auto start = std::chrono::steady_clock::now();
  CHECK(cache.get_or_compile(sample_program(0), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(cache.get_or_compile(sample_program(1), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(cache.get_or_compile(sample_program(2), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  MESSAGE("three compiles with the server down: ", ms_since(start), " ms");
  auto stats = cache.stats();
  CHECK(stats.compiles == 3);
  CHECK(stats.remote_errors == 1);  // the first lookup; everything after it is skipped
  CHECK(stats.remote_skipped == 5);  // 2 lookups + 3 publishes
  CHECK(stats.remote_ms < 300 + 200);
  CHECK(contains(log.text(), "skipping it for 3600000 ms"));
}

TEST_CASE("cache::RemoteStore: a server that accepts no connection costs one connect timeout") {
  // A listening socket with a backlog of 0 that never accepts: once its queue is full,
  // the kernel drops further SYNs and a connect hangs until the client gives up.
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(listener, 0) == 0);
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size) == 0);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    fillers.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  TempDir dir;
  Cache cache(with_remote(dir, "a", fmt::format("redis://127.0.0.1:{}?connect_timeout=400ms&backoff=1h",
                                                 ntohs(address.sin_port))));
  auto start = std::chrono::steady_clock::now();
  CHECK(cache.get_or_compile(sample_program(0), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(cache.get_or_compile(sample_program(1), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  MESSAGE("two compiles, connects hanging: ", ms_since(start), " ms; remote ", cache.stats().remote_ms, " ms");
  CHECK(cache.stats().remote_errors == 1);
  CHECK(cache.stats().remote_timeouts == 1);
  CHECK(cache.stats().remote_ms >= 390);
  CHECK(cache.stats().remote_ms < 400 + 250);
  for (int fd : fillers) ::close(fd);
  ::close(listener);
}

TEST_CASE("platform::RedisConnection: writing to a server that died raises no SIGPIPE in the host program") {
  // Without NOTE [ SIGPIPE ]'s guard, the second large write below kills this process.
  auto server = std::make_unique<RedisServer>();
  auto connection = server->connect();
  server->stop();
  const std::string big(8 << 20, 'x');
  bool failed = false;
  for (int i = 0; i < 3 && !failed; ++i) {
    try {
      connection.command({"SET", "k", big});
    } catch (const kernc::platform::RedisFailure& failure) {
      failed = true;
      CHECK_FALSE(failure.timed_out());
    }
  }
  CHECK(failed);
}

TEST_CASE("cache::RemoteStore: a server killed mid-run is skipped after one error, and the run goes on") {
  auto server = std::make_unique<RedisServer>();
  TempDir dir;
  Cache cache(with_remote(dir, "a", server->url("backoff=400ms&connect_timeout=300ms")));
  CHECK(cache.get_or_compile(sample_program(0), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(cache.stats().remote_writes == 1);
  server->stop();  // the idle connection now points at a dead server: a write raises SIGPIPE
  auto start = std::chrono::steady_clock::now();
  CHECK(cache.get_or_compile(sample_program(1), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(cache.get_or_compile(sample_program(2), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  MESSAGE("two compiles after the kill: ", ms_since(start), " ms, of which remote ", cache.stats().remote_ms, " ms");
  CHECK(cache.stats().remote_errors == 1);
  CHECK(cache.stats().remote_skipped >= 2);
  // After the backoff the tier is tried again (and fails again, once).
  std::this_thread::sleep_for(std::chrono::milliseconds(450));
  CHECK(cache.get_or_compile(sample_program(3), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(cache.stats().remote_errors == 2);
}

TEST_CASE("cache::RemoteStore: a stalled server costs one operation timeout per backoff period") {
  RedisServer server;
  TempDir dir;
  std::string binary;
  {
    Cache writer(with_remote(dir, "w", server.url()));
    binary = writer.get_or_compile(sample_program(0), sm80_target(), nvrtc()).program->binary;
  }
  Cache cache(with_remote(dir, "a", server.url("timeout=300ms&backoff=1s")));
  server.pause();  // accepts connections (the kernel does) but never answers
  auto start = std::chrono::steady_clock::now();
  CHECK(cache.get_or_compile(sample_program(0), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(cache.get_or_compile(sample_program(1), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  double stalled_ms = ms_since(start);
  MESSAGE("two compiles against a stalled server: ", stalled_ms, " ms; remote ", cache.stats().remote_ms, " ms");
  CHECK(cache.stats().remote_timeouts == 1);
  CHECK(cache.stats().remote_errors == 1);
  CHECK(cache.stats().remote_ms >= 290);
  CHECK(cache.stats().remote_ms < 300 + 250);
  server.resume();
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  Cache fresh_process(with_remote(dir, "b", server.url("timeout=300ms&backoff=1s")));
  CHECK(fresh_process.get_or_compile(sample_program(0), sm80_target(), nvrtc()).outcome == CacheOutcome::remote_hit);
  // And the first cache, once its backoff is over, uses the server again.
  Cache& first = cache;
  CHECK(first.get_or_compile(sample_program(2), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(first.stats().remote_writes == 1);
}

TEST_CASE("cache::RemoteStore: a full server (maxmemory) refuses writes without failing reads or compiles") {
  RedisServer server;
  TempDir dir;
  {
    Cache writer(with_remote(dir, "w", server.url()));
    writer.get_or_compile(sample_program(0), sm80_target(), nvrtc());
  }
  SUBCASE("noeviction: publishes are refused, counted, and reads go on") {
    server.command({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
    server.command({"CONFIG", "SET", "maxmemory", "1"});
    kernc::test::LogCapture log;
    Cache cache(with_remote(dir, "a", server.url()));
    CHECK(cache.get_or_compile(sample_program(1), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
    CHECK(cache.stats().remote_errors == 1);
    CHECK(cache.stats().remote_writes == 0);
    CHECK(contains(log.text(), "OOM"));
    // No backoff for a refused write: the next lookup still reaches the server.
    CHECK(cache.get_or_compile(sample_program(0), sm80_target(), nvrtc()).outcome == CacheOutcome::remote_hit);
    CHECK(cache.stats().remote_skipped == 0);
  }
  SUBCASE("allkeys-random: evicted entries and chunks are misses, what is served is whole") {
    server.command({"CONFIG", "SET", "maxmemory-policy", "allkeys-random"});
    server.command({"CONFIG", "SET", "maxmemory", "1300000"});
    std::vector<std::string> binaries;
    {
      Cache writer(with_remote(dir, "w2", server.url("chunk_size=1K")));
      for (int variant = 0; variant < 40; ++variant) {
        binaries.push_back(writer.get_or_compile(sample_program(variant), sm80_target(), nvrtc()).program->binary);
      }
    }
    kernc::test::LogCapture log;  // one warning per evicted entry
    auto info = server.command({"INFO", "stats"}).str;
    CHECK(contains(info, "evicted_keys:"));
    CHECK_FALSE(contains(info, "evicted_keys:0\r"));
    Cache reader(with_remote(dir, "r", server.url("chunk_size=1K&read_only=1")));
    int hits = 0;
    for (int variant = 0; variant < 40; ++variant) {
      auto result = reader.get_or_compile(sample_program(variant), sm80_target(), nvrtc());
      CHECK(result.program->binary == binaries[variant]);
      hits += result.outcome == CacheOutcome::remote_hit;
    }
    MESSAGE("after eviction: ", hits, " of 40 served remotely, ", reader.stats().remote_rejected,
            " rejected (chunks evicted), ", reader.stats().remote_misses, " missing");
    CHECK(hits + reader.stats().remote_rejected + reader.stats().remote_misses == 40);
    CHECK(hits < 40);
  }
}

TEST_CASE("cache::RemoteStore: AUTH with user and password; credentials never appear in logs or errors") {
  RedisServer server({"--requirepass", "hunter2-secret"});
  TempDir dir;
  kernc::test::LogCapture log;
  {
    Cache denied(with_remote(dir, "d", fmt::format("redis://:wrong-secret@127.0.0.1:{}", server.port())));
    CHECK(denied.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
    CHECK(denied.stats().remote_errors == 1);
    for (const auto& location : denied.locations()) CHECK_FALSE(contains(location, "wrong-secret"));
  }
  {
    Cache anonymous(with_remote(dir, "n", server.url()));
    CHECK(anonymous.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
    CHECK(anonymous.stats().remote_errors == 1);
  }
  std::string text = log.text();
  CHECK(contains(text, "WRONGPASS"));
  CHECK(contains(text, "NOAUTH"));
  CHECK_FALSE(contains(text, "wrong-secret"));
  CHECK_FALSE(contains(text, "hunter2"));
  const std::string url = fmt::format("redis://default:hunter2-secret@127.0.0.1:{}/2", server.port());
  {
    Cache writer(with_remote(dir, "w", url));
    CHECK(writer.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::compiled);
    CHECK(writer.stats().remote_writes == 1);
  }
  Cache reader(with_remote(dir, "r", url));
  CHECK(reader.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::remote_hit);
  CHECK(server.command({"DBSIZE"}, "hunter2-secret").integer == 0);  // SELECT 2 was honoured: db 0 is empty
  CHECK_FALSE(contains(log.text(), "hunter2"));
}

TEST_CASE("cache::RemoteStore: a unix socket works like TCP") {
  RedisServer server;
  TempDir dir;
  const std::string url = "unix://" + server.socket_path();
  {
    Cache writer(with_remote(dir, "w", url));
    writer.get_or_compile(sample_program(), sm80_target(), nvrtc());
    CHECK(writer.stats().remote_writes == 1);
  }
  Cache reader(with_remote(dir, "r", url));
  CHECK(reader.get_or_compile(sample_program(), sm80_target(), nvrtc()).outcome == CacheOutcome::remote_hit);
}

TEST_CASE("cache::RemoteStore: threads sharing one cache all get the entry, over several connections") {
  RedisServer server;
  TempDir dir;
  {
    Cache writer(with_remote(dir, "w", server.url()));
    for (int variant = 0; variant < 8; ++variant) writer.get_or_compile(sample_program(variant), sm80_target(), nvrtc());
  }
  Cache reader(with_remote(dir, "r", server.url("read_only=1")));
  std::vector<std::thread> threads;
  std::vector<int> outcomes(8, -1);
  for (int variant = 0; variant < 8; ++variant) {
    threads.emplace_back([&, variant] {
      outcomes[variant] = static_cast<int>(reader.get_or_compile(sample_program(variant), sm80_target(), nvrtc()).outcome);
    });
  }
  for (auto& thread : threads) thread.join();
  for (int outcome : outcomes) CHECK(outcome == static_cast<int>(CacheOutcome::remote_hit));
  CHECK(reader.stats().compiles == 0);
}

#endif
