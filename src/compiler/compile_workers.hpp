#pragma once
// Compiles in worker processes: the client (a Compiler) and the worker's loop. Public
// entry points: compile_in_workers and serve_compile_requests (include/kernc/compiler.hpp).
// See NOTE [ compile worker processes ] in compile_workers.cpp.

#include <cstdint>
#include <string>

namespace kernc::compiler {

/// The file descriptor a worker process talks on: its end of the socket pair, dup'ed there
/// by the client before the worker's program starts.
constexpr int kWorkerFd = 3;

/// Largest frame either side accepts (a program's source and headers, or a binary and
/// its log): a worker's reply of a bigger size is a broken worker, not an allocation.
constexpr std::uint64_t kMaxFrameBytes = 1ull << 30;

}  // namespace kernc::compiler
