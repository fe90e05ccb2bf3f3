#pragma once
// Source-side preparation of a kernel program for the host backend (Backend::cpu): pure
// functions over the program's text, run before it is compiled with templates/host_cuda.cuh
// (NOTE [ host CUDA environment ]).

#include <string>
#include <string_view>

namespace kernc::compiler {

/// Whether the program needs per-thread state (NOTE [ host fibers ], src/runtime/host_threads.hpp):
/// it names a barrier, a warp function, grid sync or cooperative groups outside comments and
/// string literals. An over-approximation; a miss fails the launch cleanly at run time.
bool needs_threads(std::string_view source);

/// The source with each `extern __shared__ T name[];` (qualifiers and `__align__(n)` allowed,
/// at namespace or function scope) made a thread-local pointer to the worker's dynamic shared
/// memory, `kernc_host_dynamic_shared()`. Lines keep their numbers, so that compile errors
/// still point at the user's lines.
std::string rewrite_dynamic_shared(std::string_view source);

}  // namespace kernc::compiler
