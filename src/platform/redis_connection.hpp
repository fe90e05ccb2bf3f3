#pragma once
// One blocking connection to a Redis server through hiredis, loaded with dlopen.
//
// NOTE [ hiredis ]
// hiredis is optional twice over: at build time (its headers: without them this file's
// functions say "built without hiredis") and at run time (libhiredis is dlopen'd by the
// soname of the headers the build saw, so the structs this file reads match the library).
// kernc links nothing of it, so a host program that never sets a remote cache needs no
// hiredis at all. Only redis_connection.cpp includes hiredis.h; callers see plain values.
//
// A failure (refused, reset, timed out, protocol error) leaves the connection unusable:
// the caller drops it and decides when to try again. An error *reply* ("-OOM ...") is
// not a failure of the connection; it comes back as a reply of type error.

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kernc::platform {

/// Where a Redis server listens: a TCP host and port, or a unix socket path.
struct RedisEndpoint {
  std::string host;
  int port = 6379;
  std::string socket_path;  ///< non-empty: a unix socket, host and port unused
};

/// A reply, copied out of hiredis.
struct RedisReply {
  enum class Type { string, array, integer, nil, status, error };
  Type type = Type::nil;
  std::string str;  ///< string, status and error replies
  long long integer = 0;
  std::vector<RedisReply> elements;
};

/// A connection that failed; `timed_out` when the server did not answer in time.
class RedisFailure : public std::runtime_error {
 public:
  RedisFailure(const std::string& message, bool timed_out) : std::runtime_error(message), timed_out_(timed_out) {}
  bool timed_out() const noexcept { return timed_out_; }

 private:
  bool timed_out_;
};

/// Empty when hiredis can be used; otherwise why not (built without its headers, or the
/// library cannot be loaded). Loads the library on the first call.
std::string hiredis_problem();
/// The file of the loaded libhiredis ("" if none), and the soname this build asks for.
std::string hiredis_library_path();
std::string hiredis_soname();

class RedisConnection {
 public:
  /// Connects within `connect_timeout`; every later read or write waits at most
  /// `operation_timeout`. Throws RedisFailure.
  RedisConnection(const RedisEndpoint& endpoint, std::chrono::milliseconds connect_timeout,
                  std::chrono::milliseconds operation_timeout);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  /// Sends every command in one write and reads their replies in order. Throws
  /// RedisFailure (the connection is then unusable).
  std::vector<RedisReply> pipeline(const std::vector<std::vector<std::string_view>>& commands);
  RedisReply command(const std::vector<std::string_view>& args) { return pipeline({args}).front(); }

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace kernc::platform
