#include "base/log.hpp"

#include "kernc/log.hpp"

#include <cctype>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "kernc/error.hpp"

namespace kernc::detail {

// NOTE [ log route ]
// The library never writes to stdout or stderr itself: everything it says goes through
// one spdlog logger, "kernc", whose only sink is the RouteSink below, fixed for the life of
// the process. The route sends each record either to the host's LogSink (set_log_sink) or,
// by default, to stderr as "kernc: warning: ...". Swapping the route takes the route's
// lock, which every record also takes, so a host's sink is never called after
// set_log_sink has replaced it, and the logger's sink list is never changed while another
// thread logs (spdlog's is not guarded). The logger is kernc's own and not in spdlog's
// registry: a host's spdlog::set_level or spdlog::drop_all leaves it alone, and the level is
// kernc's to set (set_log_level, KERNC_LOG_LEVEL). spdlog's own error handler, which would
// print to stderr, is replaced by one that drops the record.
namespace {

LogLevel from_spdlog(spdlog::level::level_enum level) noexcept {
  switch (level) {
    case spdlog::level::trace: return LogLevel::trace;
    case spdlog::level::debug: return LogLevel::debug;
    case spdlog::level::info: return LogLevel::info;
    case spdlog::level::warn: return LogLevel::warn;
    case spdlog::level::err: return LogLevel::error;
    case spdlog::level::critical: return LogLevel::critical;
    default: return LogLevel::off;
  }
}

spdlog::level::level_enum to_spdlog(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::trace: return spdlog::level::trace;
    case LogLevel::debug: return spdlog::level::debug;
    case LogLevel::info: return spdlog::level::info;
    case LogLevel::warn: return spdlog::level::warn;
    case LogLevel::error: return spdlog::level::err;
    case LogLevel::critical: return spdlog::level::critical;
    case LogLevel::off: return spdlog::level::off;
  }
  return spdlog::level::off;
}

class RouteSink final : public spdlog::sinks::sink {
 public:
  void log(const spdlog::details::log_msg& msg) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!host_) {
      stderr_sink().log(msg);
      return;
    }
    try {
      host_(from_spdlog(msg.level), std::string_view(msg.payload.data(), msg.payload.size()));
    } catch (...) {
      // A host sink that throws loses its message; the library's caller must not see it.
    }
  }
  void flush() override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!host_ && stderr_sink_) stderr_sink_->flush();
  }
  void set_pattern(const std::string& pattern) override {
    std::lock_guard<std::mutex> lock(mutex_);
    stderr_sink().set_pattern(pattern);
  }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    std::lock_guard<std::mutex> lock(mutex_);
    stderr_sink().set_formatter(std::move(formatter));
  }

  /// Replaces the host's sink (empty: back to stderr); the old one is destroyed outside
  /// the lock, after no record can reach it.
  void route(LogSink sink) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      host_.swap(sink);
    }
    // `sink` now holds the old one, destroyed here.
  }

 private:
  std::mutex mutex_;
  LogSink host_;  // under mutex_
  // Made when the first record goes to stderr, not with the logger: a process's first
  // kernel call reaches the logger (a debug record the level drops), and making a color
  // sink (terminal checks, a color string per level) was 6% of a warm-disk first call
  // (tools/bench/first_call_split.cpp, NOTES compile-v4).
  spdlog::sinks::stderr_color_sink_st& stderr_sink() {
    if (!stderr_sink_) {
      stderr_sink_ = std::make_shared<spdlog::sinks::stderr_color_sink_st>();
      stderr_sink_->set_pattern("kernc: %l: %v");
    }
    return *stderr_sink_;
  }

  std::shared_ptr<spdlog::sinks::stderr_color_sink_st> stderr_sink_;  // under mutex_; made on first use
};

const std::shared_ptr<RouteSink>& route_sink() {
  // Never destroyed: static destructors of the host may still log through kernc.
  static const auto* sink = new std::shared_ptr<RouteSink>(std::make_shared<RouteSink>());
  return *sink;
}

}  // namespace

spdlog::logger& logger() {
  // Never destroyed, as the route.
  static spdlog::logger* instance = [] {
    auto* created = new spdlog::logger("kernc", route_sink());
    created->set_level(spdlog::level::warn);
    created->set_error_handler([](const std::string&) {});
    return created;
  }();
  return *instance;
}

}  // namespace kernc::detail

namespace kernc {

namespace {
constexpr LogLevel kLevels[] = {LogLevel::trace, LogLevel::debug, LogLevel::info, LogLevel::warn,
                                LogLevel::error, LogLevel::critical, LogLevel::off};
}  // namespace

const char* to_string(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::trace: return "trace";
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
    case LogLevel::critical: return "critical";
    case LogLevel::off: return "off";
  }
  return "?";
}

LogLevel parse_log_level(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "warning") return LogLevel::warn;
  for (LogLevel level : kLevels) {
    if (lower == to_string(level)) return level;
  }
  throw Error(ErrorCode::invalid_argument,
              fmt::format("unknown log level \"{}\"; the levels are trace, debug, info, warn (or warning), error, "
                          "critical and off, in any case",
                          name));
}

void set_log_level(LogLevel level) noexcept { detail::logger().set_level(detail::to_spdlog(level)); }

void set_log_level(std::string_view level) { set_log_level(parse_log_level(level)); }

LogLevel log_level() noexcept { return detail::from_spdlog(detail::logger().level()); }

void set_log_sink(LogSink sink) { detail::route_sink()->route(std::move(sink)); }

}  // namespace kernc
