#pragma once
/// \file
/// The file helpers kernc itself uses, for host programs and tools that write what kernc
/// reads (kernel sources, headers, extracted binaries): whole-file reads and atomic writes.

#include <string>
#include <string_view>

#include "kernc/export.hpp"

namespace kernc {

/// The whole file; throws kernc::Error(io) naming the path and the reason.
KERNC_API std::string read_file(const std::string& path);

/// Writes `bytes` to a unique temporary file next to `path`, then renames it over `path`:
/// readers see the old file or the new one, never a mix. Throws kernc::Error(io) (the
/// temporary file removed) on failure.
KERNC_API void write_file_atomic(const std::string& path, std::string_view bytes, unsigned mode = 0600);

/// Creates `path` and missing parents with `mode`; throws kernc::Error(io) on failure.
KERNC_API void make_directories(const std::string& path, unsigned mode = 0700);

}  // namespace kernc
