// The remote cache URL (KERNC_REMOTE_CACHE): what it reads, what it refuses, and that a
// password never shows in what kernc prints.

#include <doctest/doctest.h>

#include <string>

#include "kernc/config.hpp"
#include "kernc/error.hpp"
#include "kernc/remote_cache.hpp"
#include "temp_dir.hpp"

using kernc::parse_remote_cache_url;
using kernc::test::contains;

namespace {

// The message of the error `url` raises ("" if it is accepted).
std::string refusal(const std::string& url) {
  try {
    parse_remote_cache_url(url);
  } catch (const kernc::Error& error) {
    CHECK(error.code() == kernc::ErrorCode::invalid_argument);
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("cache::parse_remote_cache_url reads hosts, ports, databases, sockets and credentials") {
  auto plain = parse_remote_cache_url("redis://cache.example");
  CHECK(plain.host == "cache.example");
  CHECK(plain.port == 6379);
  CHECK(plain.database == 0);
  CHECK(plain.password.empty());
  CHECK(plain.prefix == "kernc:");
  CHECK_FALSE(plain.read_only);

  auto full = parse_remote_cache_url("redis://ci:s3cr%40t@10.0.0.7:6380/3");
  CHECK(full.host == "10.0.0.7");
  CHECK(full.port == 6380);
  CHECK(full.database == 3);
  CHECK(full.user == "ci");
  CHECK(full.password == "s3cr@t");

  auto bare_password = parse_remote_cache_url("redis://hunter2@host:1");
  CHECK(bare_password.user.empty());
  CHECK(bare_password.password == "hunter2");

  auto ipv6 = parse_remote_cache_url("redis://[::1]:7000/1");
  CHECK(ipv6.host == "::1");
  CHECK(ipv6.port == 7000);
  CHECK(ipv6.database == 1);

  auto socket = parse_remote_cache_url("unix://:pw@/run/redis/redis.sock?db=2");
  CHECK(socket.socket_path == "/run/redis/redis.sock");
  CHECK(socket.host.empty());
  CHECK(socket.database == 2);
  CHECK(socket.password == "pw");
}

TEST_CASE("cache::parse_remote_cache_url reads every option") {
  auto config = parse_remote_cache_url(
      "redis://h/0?read_only=1&prefix=team-a&connect_timeout=150ms&timeout=3s&backoff=2m&ttl=7d&chunk_size=64K"
      "&trusted_signers=/etc/kernc/signers.pem");
  CHECK(config.read_only);
  CHECK(config.prefix == "team-a:");
  CHECK(config.connect_timeout_ms == 150);
  CHECK(config.operation_timeout_ms == 3000);
  CHECK(config.backoff_ms == 120000);
  CHECK(config.ttl_seconds == 7 * 86400);
  CHECK(config.chunk_size == 64 * 1024);
  CHECK(config.trusted_signers == "/etc/kernc/signers.pem");
  CHECK(parse_remote_cache_url("redis://h?prefix=proj:ci:").prefix == "proj:ci:");
  CHECK(parse_remote_cache_url("redis://h?signing_key=/k.pem").signing_key == "/k.pem");
  CHECK(parse_remote_cache_url("redis://h?backoff=0s").backoff_ms == 0);
}

TEST_CASE("cache::parse_remote_cache_url names what is wrong") {
  CHECK(contains(refusal("http://h"), "must start with redis:// or unix://"));
  CHECK(contains(refusal("cache.example:6379"), "must start with redis://"));
  CHECK(contains(refusal("rediss://h"), "TLS"));
  CHECK(contains(refusal("redis://"), "no host"));
  CHECK(contains(refusal("redis://h:"), "followed by a port"));
  CHECK(contains(refusal("redis://h:0"), "1 to 65535"));
  CHECK(contains(refusal("redis://h:70000"), "the port must be at most 65535"));
  CHECK(contains(refusal("redis://h:6379/x"), "the database number must be a whole number"));
  CHECK(contains(refusal("redis://[::1:6379"), "closing ']'"));
  CHECK(contains(refusal("unix://relative.sock"), "absolute socket path"));
  CHECK(contains(refusal("redis://h?colour=blue"), "unknown option \"colour\""));
  CHECK(contains(refusal("redis://h?timeout"), "has no value"));
  CHECK(contains(refusal("redis://h?timeout=5"), "with a unit"));
  CHECK(contains(refusal("redis://h?timeout=0ms"), "more than 0"));
  CHECK(contains(refusal("redis://h?timeout=2h"), "at most 1h"));
  CHECK(contains(refusal("redis://h?ttl=1500ms"), "whole seconds"));
  CHECK(contains(refusal("redis://h?read_only=yes"), "read_only must be 1, 0, true or false"));
  CHECK(contains(refusal("redis://h?prefix=a b"), "option prefix must be"));
  CHECK(contains(refusal("redis://h?chunk_size=10"), "between 1K and 256M"));
  CHECK(contains(refusal("redis://h?ttl=1d&ttl=2d"), "given twice"));
  CHECK(contains(refusal("redis://h?read_only=1&signing_key=/k.pem"), "read_only"));
  CHECK(contains(refusal("redis://u:p%4@h"), "two hex digits"));
}

TEST_CASE("cache::RemoteCacheConfig::redacted never shows the password, and errors do not either") {
  CHECK(parse_remote_cache_url("redis://ci:hunter2@h:1/2?prefix=p").redacted() == "redis://ci:***@h:1/2?prefix=p");
  CHECK(parse_remote_cache_url("redis://hunter2@h").redacted() == "redis://***@h");
  CHECK(parse_remote_cache_url("unix://:hunter2@/s.sock").redacted() == "unix://:***@/s.sock");
  CHECK(parse_remote_cache_url("redis://h:1").redacted() == "redis://h:1");
  for (const char* url : {"redis://ci:hunter2@h:x", "redis://hunter2@h?bad=1", "redis://u:hunter2@h/db?timeout=1"}) {
    std::string message = refusal(url);
    CHECK_FALSE(message.empty());
    CHECK_FALSE(contains(message, "hunter2"));
  }
}

TEST_CASE("config::from_environment reads KERNC_REMOTE_CACHE and names it in errors") {
  auto config = kernc::Config::from_environment([](const char* name) -> const char* {
    return std::string(name) == "KERNC_REMOTE_CACHE" ? "redis://u:pw@h:7/1?read_only=1" : nullptr;
  });
  REQUIRE(config.remote_cache.value.has_value());
  CHECK(config.remote_cache.source == "KERNC_REMOTE_CACHE");
  CHECK(config.cache_config().remote->read_only);
  CHECK(config.cache_config().remote->port == 7);
  try {
    kernc::Config::from_environment([](const char* name) -> const char* {
      return std::string(name) == "KERNC_REMOTE_CACHE" ? "redis://u:pw@h:7?nope=1" : nullptr;
    });
    FAIL("a bad KERNC_REMOTE_CACHE was accepted");
  } catch (const kernc::Error& error) {
    CHECK(contains(error.what(), "KERNC_REMOTE_CACHE: remote cache URL: unknown option \"nope\""));
  }
  CHECK_FALSE(kernc::Config::from_environment([](const char*) -> const char* { return nullptr; })
                  .remote_cache.value.has_value());
}
