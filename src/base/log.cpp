#include "base/log.hpp"

#include "kernc/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace kernc::detail {

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    if (auto existing = spdlog::get("kernc")) return existing;
    auto created = spdlog::stderr_color_mt("kernc");
    created->set_level(spdlog::level::warn);
    created->set_pattern("kernc: %l: %v");
    return created;
  }();
  return *instance;
}

}  // namespace kernc::detail

namespace kernc {

void set_log_level(const std::string& level) { detail::logger().set_level(spdlog::level::from_str(level)); }

}  // namespace kernc
