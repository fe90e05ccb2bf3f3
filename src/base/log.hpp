#pragma once
// The library's one logger, named "kernc", level warn unless the host program says
// otherwise. The library logs; it never prints: the logger's records go where
// kernc::set_log_sink says, stderr by default (NOTE [ log route ], src/base/log.cpp).

#include <memory>

#include <spdlog/logger.h>

namespace kernc::detail {

/// The "kernc" logger, made on first use; kernc's own (not in spdlog's registry).
spdlog::logger& logger();

}  // namespace kernc::detail
