#include "kernels/compile_worker_program.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernc/compiler.hpp"
#include "kernc/error.hpp"

namespace kernc::detail {

// NOTE [ compile workers of an engine ]
// NVRTC holds a process-wide lock for about a quarter of every compile (NOTE [ compile
// worker processes ], src/compiler/compile_workers.cpp): 16 threads of one process that
// each make a first call compile at 5.9x one thread, worker processes at 10.8x
// (tools/bench/NOTES.md). An Engine compiles in worker processes when Config::
// compile_workers (KERNC_COMPILE_WORKERS) is above 0, through compile_in_workers, so keys,
// binaries and the single flight per key are those of in-process compiles.
//
// Off by default, for a library: starting processes is the host program's business (its
// sandbox may forbid it, its SIGCHLD handler may reap them, its process limits count
// them), the worker program is an executable that a library may be shipped without, and a
// lone first call pays a worker's start (about 70 ms of CPU, tools/bench/NOTES.md,
// first-calls-v1) on top of its compile. A host that makes many first calls at once (a
// server warming up, a test suite) turns it on; the kernc CLI names itself as the worker
// program, so `KERNC_COMPILE_WORKERS=N kernc run` needs nothing else.
//
// The worker program is `PROGRAM __compile-worker`: Config::compile_worker
// (KERNC_COMPILE_WORKER) when set, else the kernc CLI found beside the library that holds
// this code (dladdr): the install's bin directory, as CMake's LIBDIR and BINDIR place it,
// then the build tree's tools/kernc/kernc. A worker of another build is refused at its
// hello (compile_workers.cpp checks the kernc version and the compiler's identity); none
// found is an Error naming each path tried and the variable to set, at the first compile
// that needs a worker, so that an engine that only loads cached binaries never looks.

namespace {

bool is_executable_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : slash == 0 ? std::string("/") : path.substr(0, slash);
}

}  // namespace

std::string kernc_library_path() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&kernc_library_path), &info) != 0 && info.dli_fname && *info.dli_fname) {
    char resolved[PATH_MAX];
    if (::realpath(info.dli_fname, resolved)) return resolved;
  }
  // A static kernc in a program started by a relative name dladdr cannot resolve.
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  return n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : std::string();
}

std::vector<std::string> worker_program_candidates(const std::string& library_path) {
  if (library_path.empty()) return {};
  const std::string directory = directory_of(library_path);
  return {directory + "/" KERNC_RELATIVE_BINDIR "/kernc", directory + "/../tools/kernc/kernc"};
}

std::vector<std::string> compile_worker_command(const Config& config, const std::vector<std::string>& candidates) {
  if (!config.compile_worker.value.empty()) {
    if (!is_executable_file(config.compile_worker.value)) {
      throw Error(ErrorCode::library_not_found,
                  fmt::format("{} names {} as the compile worker program, which is not an executable file; name "
                              "the kernc executable of this build, or set {} = 0 to compile in this process",
                              config.compile_worker.source, config.compile_worker.value,
                              config.compile_workers.source));
    }
    return {config.compile_worker.value, kCompileWorkerArgument};
  }
  for (const auto& candidate : candidates) {
    if (is_executable_file(candidate)) return {candidate, kCompileWorkerArgument};
  }
  throw Error(ErrorCode::library_not_found,
              fmt::format("{} = {} asks for compile worker processes, but no worker program was found: looked for "
                          "the kernc executable beside this library at {}; set KERNC_COMPILE_WORKER (Config::"
                          "compile_worker) to the kernc executable of this build, or {} = 0 to compile in this process",
                          config.compile_workers.source, config.compile_workers.value,
                          candidates.empty() ? std::string("no path (this library's file is unknown)")
                                             : fmt::format("{}", fmt::join(candidates, ", ")),
                          config.compile_workers.source));
}

}  // namespace kernc::detail

namespace kernc {

std::vector<std::string> compile_worker_command(const Config& config) {
  return detail::compile_worker_command(config, detail::worker_program_candidates(detail::kernc_library_path()));
}

}  // namespace kernc
