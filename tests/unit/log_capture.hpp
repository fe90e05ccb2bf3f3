#pragma once
// Captures what the library logs while in scope, through the host's route
// (kernc::set_log_sink), so that a test can check a warning was given (and the test
// output stays quiet). Restores the default route (stderr) at the end.

#include <mutex>
#include <sstream>
#include <string>

#include "kernc/log.hpp"

namespace kernc::test {

class LogCapture {
 public:
  LogCapture() {
    set_log_sink([this](LogLevel level, std::string_view message) {
      std::lock_guard<std::mutex> lock(mutex_);
      // spdlog's names, as kernc prints them on stderr ("warning: ...").
      stream_ << (level == LogLevel::warn ? "warning" : to_string(level)) << ": " << message << '\n';
    });
  }
  ~LogCapture() { set_log_sink({}); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  /// Everything logged so far, one "level: message" line per record.
  std::string text() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stream_.str();
  }

 private:
  std::mutex mutex_;
  std::ostringstream stream_;
};

}  // namespace kernc::test
