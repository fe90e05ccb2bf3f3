#include "parallel_floor.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <new>
#include <stdexcept>
#include <string>

namespace bench {

ParallelRun compile_in_forked_processes(const std::vector<const kernc::Program*>& longest_first, int jobs,
                                        const kernc::Compiler& compiler, const kernc::Target& target) {
  // The queue's head, in memory the children share: a lock-free atomic works across processes.
  static_assert(std::atomic<size_t>::is_always_lock_free, "the shared queue needs a lock-free counter");
  void* shared = ::mmap(nullptr, sizeof(std::atomic<size_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) throw std::runtime_error("mmap of the shared queue failed");
  auto* next = new (shared) std::atomic<size_t>(0);
  const auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> children;
  for (int k = 0; k < jobs; ++k) {
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      int status = 0;
      try {
        for (size_t i; (i = next->fetch_add(1)) < longest_first.size();) compiler.compile(*longest_first[i], target);
      } catch (...) {
        status = 1;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  ParallelRun run;
  run.jobs = jobs;
  bool failed = false;
  for (const pid_t pid : children) {
    int status = 0;
    rusage usage{};
    ::wait4(pid, &status, 0, &usage);
    failed = failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    auto s = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
    run.cpu_s += s(usage.ru_utime) + s(usage.ru_stime);
  }
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::munmap(shared, sizeof(std::atomic<size_t>));
  if (failed) throw std::runtime_error("a forked compile process failed");
  return run;
}

}  // namespace bench
