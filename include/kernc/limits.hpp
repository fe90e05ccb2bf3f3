#pragma once
// What the library accepts, in bytes and counts. Input past a limit is refused with a
// kernc::Error(invalid_argument) that names the limit and what exceeded it; nothing is
// truncated. The limits are far beyond real kernels; they exist so that hostile or broken
// input (a spec file from a CI job, a generated snippet) costs a clear error, never a
// crash or a multi-gigabyte compile.

#include <cstddef>

namespace kernc::limits {

/// Longest name: a kernel, a parameter, a RawModule name expression (characters).
inline constexpr std::size_t kMaxNameLength = 1024;
/// Most parameters of an ElementwiseKernel or ReductionKernel, inputs and outputs together.
inline constexpr std::size_t kMaxParams = 256;
/// Longest in_params or out_params string (bytes).
inline constexpr std::size_t kMaxParamsText = 64 * 1024;
/// Largest piece of source: one snippet (operation, map_expr, preamble, ...) or a raw
/// kernel's or module's code (bytes).
inline constexpr std::size_t kMaxSourceBytes = std::size_t{16} << 20;
/// Most name expressions of one RawModule.
inline constexpr std::size_t kMaxNameExpressions = 4096;
/// Largest spec file read (bytes).
inline constexpr std::size_t kMaxSpecFileBytes = std::size_t{64} << 20;

}  // namespace kernc::limits
