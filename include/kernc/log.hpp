#pragma once
/// \file
/// The library's logger: spdlog's "kernc", level warn by default, on stderr. The library
/// never prints otherwise.

#include <string>

#include "kernc/export.hpp"

namespace kernc {

/// Sets the level of the library's "kernc" logger ("trace" ... "off"); the library logs
/// warnings only by default and never prints otherwise.
KERNC_API void set_log_level(const std::string& level);

}  // namespace kernc
