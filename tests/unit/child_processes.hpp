#pragma once
// The children of the test process whose command line holds a given argument: how the
// compile-worker tests (test_compile_workers.cpp, test_engine_workers.cpp) see which worker
// processes are running, and that none is left behind.

#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace kernc::test {

/// The pids of this process's children whose arguments contain `argument`:
/// /proc/<pid>/stat's fourth field is the parent, /proc/<pid>/cmdline the arguments
/// (NUL-separated).
inline std::vector<pid_t> children_with_argument(std::string_view argument) {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos || close + 2 > text.size()) continue;
    std::istringstream fields(text.substr(close + 2));
    std::string state;
    long parent = 0;
    fields >> state >> parent;
    if (parent != ::getpid()) continue;
    std::ifstream cmdline(entry.path() / "cmdline");
    const std::string args((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    if (args.find(argument) != std::string::npos) found.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return found;
}

}  // namespace kernc::test
