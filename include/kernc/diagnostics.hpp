#pragma once
/// \file
/// Compile errors in the user's terms: generated-code locations mapped back to the
/// snippets they came from (NOTE [ snippet lines ], src/codegen/snippets.hpp).

#include <string>

#include "kernc/error.hpp"
#include "kernc/export.hpp"

namespace kernc {

/// The compile log with generated-code locations turned into the user's own: a line like
/// `saxpy operation(1): error: ...` (NVRTC) or `saxpy operation:1:5: error: ...` (HIPRTC)
/// reads `saxpy operation, line 1: error: ...`.
KERNC_API std::string map_log_to_snippets(const std::string& log);

/// The same error with map_log_to_snippets applied to its message and log (others unchanged).
KERNC_API Error map_error_to_snippets(const Error& error);

/// `source` with each line prefixed by its number, for showing generated code.
KERNC_API std::string number_lines(const std::string& source);

}  // namespace kernc
