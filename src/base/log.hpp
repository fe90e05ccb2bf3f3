#pragma once
// The library's one logger, named "kernc", level warn unless the host program says
// otherwise. The library logs; it never prints. See NOTE [ errors ] in kernc/error.hpp.

#include <memory>

#include <spdlog/logger.h>

namespace kernc::detail {

/// The "kernc" logger, registered with spdlog on first use so hosts can reconfigure it.
spdlog::logger& logger();

}  // namespace kernc::detail
