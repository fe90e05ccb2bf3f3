// The library's log as a host program sees it (include/kernc/log.hpp): level names checked,
// messages routed to the host's sink, and back to stderr (NOTE [ log route ]).

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "kernc/cache.hpp"
#include "kernc/config.hpp"
#include "kernc/error.hpp"
#include "kernc/log.hpp"
#include "temp_dir.hpp"

using namespace kernc;
using kernc::test::contains;

namespace {

// Puts the level and the sink back as the tests found them (warn, stderr).
struct RestoreLog {
  ~RestoreLog() {
    set_log_sink({});
    set_log_level(LogLevel::warn);
  }
};

// A cache whose directory cannot be made (its parent is a file): the library warns once,
// the warning it gives any host whose cache directory is unusable.
CacheConfig unusable_cache(const kernc::test::TempDir& dir) {
  CacheConfig config;
  config.directory = dir.write("a-file", "not a directory") + "/cache";
  config.disk_enabled = true;
  return config;
}

// Runs `body` with file descriptor 2 written to a file, and returns what was written there.
template <class Body>
std::string stderr_of(const kernc::test::TempDir& dir, Body&& body) {
  const std::string path = dir / "stderr.txt";
  std::fflush(stderr);
  const int saved = ::dup(2);
  const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(saved >= 0);
  REQUIRE(file >= 0);
  ::dup2(file, 2);
  ::close(file);
  body();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("log::parse_log_level reads every level name in any case, and warning for warn") {
  CHECK(parse_log_level("trace") == LogLevel::trace);
  CHECK(parse_log_level("debug") == LogLevel::debug);
  CHECK(parse_log_level("info") == LogLevel::info);
  CHECK(parse_log_level("warn") == LogLevel::warn);
  CHECK(parse_log_level("error") == LogLevel::error);
  CHECK(parse_log_level("critical") == LogLevel::critical);
  CHECK(parse_log_level("off") == LogLevel::off);
  CHECK(parse_log_level("WARN") == LogLevel::warn);
  CHECK(parse_log_level("Debug") == LogLevel::debug);
  CHECK(parse_log_level("warning") == LogLevel::warn);
  CHECK(parse_log_level("WARNING") == LogLevel::warn);
  for (LogLevel level : {LogLevel::trace, LogLevel::debug, LogLevel::info, LogLevel::warn, LogLevel::error,
                         LogLevel::critical, LogLevel::off}) {
    CHECK(parse_log_level(to_string(level)) == level);
  }
}

TEST_CASE("log::set_log_level refuses an unknown name, listing the valid ones, and keeps the level") {
  RestoreLog restore;
  set_log_level(LogLevel::error);
  for (const char* name : {"verbose", "warnings", "err", "", " warn", "3"}) {
    INFO("name = \"" << name << "\"");
    try {
      set_log_level(name);
      FAIL("no error");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::invalid_argument);
      const std::string message = error.what();
      CHECK(contains(message, "\"" + std::string(name) + "\""));
      CHECK(contains(message, "trace, debug, info, warn (or warning), error, critical and off"));
    }
    CHECK(log_level() == LogLevel::error);
  }
  set_log_level("INFO");
  CHECK(log_level() == LogLevel::info);
}

TEST_CASE("log::Config refuses an unknown KERNC_LOG_LEVEL, naming the variable, and keeps a known one's name") {
  auto with_level = [](const char* level) {
    return Config::from_environment([level](const char* name) -> const char* {
      return std::string(name) == "KERNC_LOG_LEVEL" ? level : nullptr;
    });
  };
  CHECK(with_level("WARN").log_level.value == "warn");
  CHECK(with_level("Warning").log_level.value == "warn");
  CHECK(with_level("debug").log_level.source == "KERNC_LOG_LEVEL");
  try {
    with_level("verbose");
    FAIL("no error");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::invalid_argument);
    CHECK(contains(error.what(), "KERNC_LOG_LEVEL"));
    CHECK(contains(error.what(), "\"verbose\""));
    CHECK(contains(error.what(), "trace, debug, info, warn"));
  }
}

TEST_CASE("log::set_log_sink receives the library's real warnings, at the level set, and an empty sink restores stderr") {
  RestoreLog restore;
  kernc::test::TempDir dir;
  std::vector<std::pair<LogLevel, std::string>> received;
  set_log_sink([&received](LogLevel level, std::string_view message) { received.emplace_back(level, message); });

  std::string problem;
  const std::string printed = stderr_of(dir, [&] {
    Cache cache(unusable_cache(dir));
    CHECK(!cache.uses_disk());
    problem = cache.disk_problem();
  });
  REQUIRE(!problem.empty());
  REQUIRE(received.size() == 1);
  CHECK(received[0].first == LogLevel::warn);
  CHECK(received[0].second == problem);  // the text alone: no "kernc: warning:" prefix, no newline
  CHECK(printed.empty());                // the sink took it: nothing on stderr

  SUBCASE("below the level, the sink is not called") {
    set_log_level("error");
    Cache quiet(unusable_cache(dir));
    CHECK(!quiet.uses_disk());
    CHECK(received.size() == 1);
  }
  SUBCASE("more detail reaches the sink when the level asks for it") {
    set_log_level(LogLevel::debug);
    Cache cache(CacheConfig{});
    Program program;
    program.name = "quiet.cu";
    program.source = "extern \"C\" __global__ void k() {}";
    CHECK(!cache.find(program, {Target::parse("sm_80")}, {}).has_value());
    bool debug_seen = false;
    for (const auto& [level, message] : received) debug_seen = debug_seen || (level == LogLevel::debug && contains(message, "quiet.cu"));
    CHECK(debug_seen);
  }
  SUBCASE("an empty sink restores stderr, in the default format") {
    set_log_sink({});
    const std::string restored = stderr_of(dir, [&] { Cache again(unusable_cache(dir)); });
    CHECK(received.size() == 1);
    CHECK(contains(restored, "kernc: warning: " + problem));
  }
  SUBCASE("a sink that throws loses its message, not the caller's call") {
    set_log_sink([](LogLevel, std::string_view) { throw std::runtime_error("host logger down"); });
    CHECK_NOTHROW(Cache(unusable_cache(dir)));
  }
}
