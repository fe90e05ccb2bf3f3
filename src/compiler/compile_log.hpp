#pragma once
// Reading compiler logs.

#include <string>
#include <vector>

namespace kernc::compiler {

/// The first line of a compiler log that reports an error, trimmed; or the first line.
std::string first_error_line(const std::string& log);

}  // namespace kernc::compiler
