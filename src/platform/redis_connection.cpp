#include "platform/redis_connection.hpp"

#include <fmt/format.h>

#ifdef KERNC_WITH_HIREDIS
#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>

#include "kernc/error.hpp"
#include "platform/dynamic_library.hpp"

// See NOTE [ dlopen tables ] in platform/nvrtc_api.hpp.
#define KERNC_HIREDIS_REQUIRED(X) \
  X(redisConnectWithTimeout)      \
  X(redisConnectUnixWithTimeout)  \
  X(redisSetTimeout)              \
  X(redisFree)                    \
  X(redisAppendCommandArgv)       \
  X(redisGetReply)                \
  X(freeReplyObject)

#define KERNC_STRINGIFY(x) KERNC_STRINGIFY_EXPANDED(x)
#define KERNC_STRINGIFY_EXPANDED(x) #x

namespace kernc::platform {

namespace {

struct HiredisApi {
#define KERNC_DECLARE(fn) decltype(&::fn) fn = nullptr;
  KERNC_HIREDIS_REQUIRED(KERNC_DECLARE)
#undef KERNC_DECLARE
  DynamicLibrary library;
  std::string problem;
};

const HiredisApi& hiredis() {
  static HiredisApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      api.library = DynamicLibrary::open_first("hiredis", {hiredis_soname()});
#define KERNC_REQUIRE(fn) api.fn = reinterpret_cast<decltype(api.fn)>(api.library.require(KERNC_SYMBOL_NAME(fn)));
      KERNC_HIREDIS_REQUIRED(KERNC_REQUIRE)
#undef KERNC_REQUIRE
    } catch (const Error& error) {
      api.problem = fmt::format("{} (install Debian's libhiredis{})", error.what(), HIREDIS_SONAME);
    }
  });
  return api;
}

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

// NOTE [ SIGPIPE ]
// hiredis writes with write(2): a server that closed the connection would raise SIGPIPE,
// whose default action kills the host program. A library must not change the process's
// signal dispositions, so SIGPIPE is blocked in this thread for the duration of a
// request, and one raised meanwhile is consumed before the old mask comes back.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigset_t pending;
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlock() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      timespec zero{};
      while (sigtimedwait(&pipe_, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

RedisReply copy_reply(const redisReply& reply) {
  RedisReply copy;
  switch (reply.type) {
    case REDIS_REPLY_STRING: copy.type = RedisReply::Type::string; break;
    case REDIS_REPLY_ARRAY: copy.type = RedisReply::Type::array; break;
    case REDIS_REPLY_INTEGER: copy.type = RedisReply::Type::integer; break;
    case REDIS_REPLY_STATUS: copy.type = RedisReply::Type::status; break;
    case REDIS_REPLY_ERROR: copy.type = RedisReply::Type::error; break;
    default: copy.type = RedisReply::Type::nil; break;
  }
  if (reply.str) copy.str.assign(reply.str, reply.len);
  copy.integer = reply.integer;
  for (size_t i = 0; i < reply.elements; ++i) copy.elements.push_back(copy_reply(*reply.element[i]));
  return copy;
}

}  // namespace

std::string hiredis_problem() { return hiredis().problem; }
std::string hiredis_library_path() { return hiredis().library.loaded() ? hiredis().library.path() : ""; }
std::string hiredis_soname() { return "libhiredis.so." KERNC_STRINGIFY(HIREDIS_SONAME); }

struct RedisConnection::Context {
  redisContext* redis = nullptr;
  ~Context() {
    if (redis) hiredis().redisFree(redis);
  }
  // The failure of the last call: hiredis's message, and whether it was a timeout.
  [[noreturn]] void fail(const char* doing, int saved_errno) const {
    bool timed_out = saved_errno == EAGAIN || saved_errno == EWOULDBLOCK || saved_errno == ETIMEDOUT ||
                     std::strstr(redis->errstr, "timed out") || std::strstr(redis->errstr, "temporarily unavailable");
    throw RedisFailure(fmt::format("{}: {}{}", doing, redis->errstr[0] ? redis->errstr : "connection lost",
                                   timed_out ? " (timed out)" : ""),
                       timed_out);
  }
};

RedisConnection::RedisConnection(const RedisEndpoint& endpoint, std::chrono::milliseconds connect_timeout,
                                 std::chrono::milliseconds operation_timeout)
    : context_(std::make_unique<Context>()) {
  const HiredisApi& api = hiredis();
  if (!api.problem.empty()) throw RedisFailure(api.problem, false);
  SigpipeBlock block;
  errno = 0;
  context_->redis = endpoint.socket_path.empty()
                        ? api.redisConnectWithTimeout(endpoint.host.c_str(), endpoint.port, to_timeval(connect_timeout))
                        : api.redisConnectUnixWithTimeout(endpoint.socket_path.c_str(), to_timeval(connect_timeout));
  if (!context_->redis) throw RedisFailure("cannot connect: hiredis could not allocate a context", false);
  if (context_->redis->err) context_->fail("cannot connect", errno);
  if (api.redisSetTimeout(context_->redis, to_timeval(operation_timeout)) != REDIS_OK) {
    context_->fail("cannot set the operation timeout", errno);
  }
}

RedisConnection::~RedisConnection() = default;

std::vector<RedisReply> RedisConnection::pipeline(const std::vector<std::vector<std::string_view>>& commands) {
  const HiredisApi& api = hiredis();
  SigpipeBlock block;
  for (const auto& args : commands) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (std::string_view arg : args) {
      argv.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    if (api.redisAppendCommandArgv(context_->redis, static_cast<int>(argv.size()), argv.data(), lengths.data()) !=
        REDIS_OK) {
      context_->fail("cannot queue a command", errno);
    }
  }
  std::vector<RedisReply> replies;
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    errno = 0;
    if (api.redisGetReply(context_->redis, &raw) != REDIS_OK || !raw) context_->fail("request failed", errno);
    std::unique_ptr<redisReply, void (*)(void*)> reply(static_cast<redisReply*>(raw), api.freeReplyObject);
    replies.push_back(copy_reply(*reply));
  }
  return replies;
}

}  // namespace kernc::platform

#else  // no hiredis headers at build time

namespace kernc::platform {

namespace {
const char* kNoHiredis =
    "this kernc was built without hiredis (its headers were not found at build time; install Debian's "
    "libhiredis-dev and rebuild)";
}

std::string hiredis_problem() { return kNoHiredis; }
std::string hiredis_library_path() { return ""; }
std::string hiredis_soname() { return ""; }

struct RedisConnection::Context {};

RedisConnection::RedisConnection(const RedisEndpoint&, std::chrono::milliseconds, std::chrono::milliseconds) {
  throw RedisFailure(kNoHiredis, false);
}
RedisConnection::~RedisConnection() = default;
std::vector<RedisReply> RedisConnection::pipeline(const std::vector<std::vector<std::string_view>>&) {
  throw RedisFailure(kNoHiredis, false);
}

}  // namespace kernc::platform

#endif
