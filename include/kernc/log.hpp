#pragma once
/// \file
/// What the library says, and where it goes: a level (warn by default) and a sink (stderr by
/// default, or the host program's own logger through set_log_sink). The library prints
/// nothing else (NOTE [ log route ], src/base/log.cpp).

#include <functional>
#include <string>
#include <string_view>

#include "kernc/export.hpp"

namespace kernc {

/// How much the library says, least to most severe; `off` says nothing.
enum class LogLevel { trace, debug, info, warn, error, critical, off };

/// The level's name: "trace", "debug", "info", "warn", "error", "critical" or "off".
KERNC_API const char* to_string(LogLevel level) noexcept;

/// Reads a level name: one of the names to_string gives, in any case ("WARN", "Debug"),
/// or "warning" for warn. Anything else throws kernc::Error(invalid_argument) naming the
/// text and the valid names.
KERNC_API LogLevel parse_log_level(std::string_view name);

/// Sets the level below which the library's messages are dropped; the library logs
/// warnings only by default.
KERNC_API void set_log_level(LogLevel level) noexcept;

/// Sets the level by name (parse_log_level): an unknown name throws
/// kernc::Error(invalid_argument) listing the valid ones, and the level is left as it was.
KERNC_API void set_log_level(std::string_view level);

/// The level now in force.
KERNC_API LogLevel log_level() noexcept;

/// Receives one message of the library at a time: its level and its text (one line or
/// more, no trailing newline, no "kernc:" prefix).
using LogSink = std::function<void(LogLevel level, std::string_view message)>;

/// Sends every message the library logs at or above log_level() to `sink` instead of
/// stderr; an empty sink restores the default (stderr, as "kernc: warning: ..."). The sink
/// is called one message at a time, on the thread that logs, and never after
/// set_log_sink has returned with another one, so the old sink's state may go then. It
/// must not call back into kernc; an exception it throws is dropped.
KERNC_API void set_log_sink(LogSink sink);

}  // namespace kernc
