#pragma once
// Running another program (the host C++ compiler) and reading what it printed.

#include <string>
#include <vector>

namespace kernc::platform {

struct ProcessResult {
  int exit_status = -1;  ///< the exit code; 128 + N when killed by signal N
  std::string output;    ///< stdout and stderr together, in order
};

/// Runs `argv` (argv[0] searched on PATH when it has no '/') in directory `cwd` with
/// stdin from /dev/null, and waits for it. Throws kernc::Error(io) when it cannot be
/// started, naming the program and why.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd);

/// The full path of `program` as run_process would find it, or "" when it is not found.
std::string find_program(const std::string& program);

}  // namespace kernc::platform
