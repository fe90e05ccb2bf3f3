#pragma once
// Captures what the library logs on its "kernc" logger while in scope, so that a test
// can check a warning was given (and the test output stays quiet).

#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>

#include "base/log.hpp"

namespace kernc::test {

class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_)) {
    sink_->set_pattern("%l: %v");
    auto& sinks = detail::logger().sinks();
    saved_ = sinks;
    sinks.assign({sink_});
  }
  ~LogCapture() { detail::logger().sinks() = saved_; }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  /// Everything logged so far, one "level: message" line per record.
  std::string text() {
    detail::logger().flush();
    return stream_.str();
  }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
  std::vector<spdlog::sink_ptr> saved_;
};

}  // namespace kernc::test
