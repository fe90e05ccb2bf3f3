// Does NVRTC compile in parallel inside one process? N threads of one process, then N
// processes, each compile the same number of programs; wall and CPU seconds of both are
// printed side by side. If threads scale like processes, NVRTC does not serialize; if
// threads take N times the wall of one while processes do not, it does (issue 35, item 3).
//
// Usage: kernc_nvrtc_threads [--arch sm_90] [--per-worker M] [--source FILE] [-I DIR]... N...
// The default source includes cuda_fp16.h and instantiates a few templates, about the size
// of one of kernc's generated programs. Run with CUDA_CACHE_DISABLE=1 where a driver is
// installed, or the driver's compute cache answers repeated compiles (NOTES.md, v28).

#include <nvrtc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

const char* const kDefaultSource = R"(
#include <cuda_fp16.h>
template <class T, int N> struct Sum {
  __device__ static T of(const T* x, long i) { return x[i] + Sum<T, N - 1>::of(x, i + 1); }
};
template <class T> struct Sum<T, 0> {
  __device__ static T of(const T*, long) { return T(0); }
};
template <class T> __global__ void kernel(const T* x, T* y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i + 16 < n) y[i] = Sum<T, 16>::of(x, i);
}
template __global__ void kernel<float>(const float*, float*, long);
template __global__ void kernel<double>(const double*, double*, long);
template __global__ void kernel<__half>(const __half*, __half*, long);
)";

struct Options {
  std::string arch = "sm_90";
  int per_worker = 4;
  std::string source = kDefaultSource;
  std::vector<std::string> include_dirs;
  std::vector<int> counts;
};

// One compile of the source; exits the process on failure (a probe, not a library).
void compile_once(const Options& options) {
  std::vector<std::string> flags = {"-arch=" + options.arch, "-std=c++17"};
  for (const auto& dir : options.include_dirs) flags.push_back("-I" + dir);
  std::vector<const char*> argv;
  for (const auto& flag : flags) argv.push_back(flag.c_str());
  nvrtcProgram program = nullptr;
  if (nvrtcCreateProgram(&program, options.source.c_str(), "probe.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    std::fprintf(stderr, "nvrtcCreateProgram failed\n");
    std::exit(1);
  }
  if (nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data()) != NVRTC_SUCCESS) {
    std::size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    std::fprintf(stderr, "compile failed:\n%s\n", log.c_str());
    std::exit(1);
  }
  nvrtcDestroyProgram(&program);
}

double cpu_seconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + 1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

struct Timing {
  double wall = 0, cpu = 0;
};

Timing in_threads(const Options& options, int count) {
  const double cpu_before = cpu_seconds(RUSAGE_SELF);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < count; ++t) {
    threads.emplace_back([&options] {
      for (int k = 0; k < options.per_worker; ++k) compile_once(options);
    });
  }
  for (auto& thread : threads) thread.join();
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
          cpu_seconds(RUSAGE_SELF) - cpu_before};
}

Timing in_processes(const Options& options, int count) {
  const double cpu_before = cpu_seconds(RUSAGE_CHILDREN);
  const auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> children;
  for (int p = 0; p < count; ++p) {
    const pid_t pid = fork();
    if (pid == 0) {
      for (int k = 0; k < options.per_worker; ++k) compile_once(options);
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "a worker process failed\n");
      std::exit(1);
    }
  }
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
          cpu_seconds(RUSAGE_CHILDREN) - cpu_before};
}

Options parse(int argc, char** argv) {
  Options options;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++k];
    };
    if (arg == "--arch") {
      options.arch = value();
    } else if (arg == "--per-worker") {
      options.per_worker = std::atoi(value().c_str());
    } else if (arg == "--source") {
      std::ifstream file(value());
      std::stringstream text;
      text << file.rdbuf();
      options.source = text.str();
    } else if (arg == "-I") {
      options.include_dirs.push_back(value());
    } else {
      options.counts.push_back(std::atoi(arg.c_str()));
    }
  }
  if (options.include_dirs.empty()) options.include_dirs.push_back("/usr/local/cuda/include");
  if (options.counts.empty()) options.counts = {1, 2};
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  compile_once(options);  // loads NVRTC and its builtins once before timing, in the parent
  std::printf("%d compile(s) per worker, %s; wall and CPU seconds (CPU/wall = cores kept busy)\n",
              options.per_worker, options.arch.c_str());
  std::printf("%8s | %22s | %22s | %s\n", "workers", "threads: wall  CPU", "processes: wall  CPU",
              "threads/processes wall");
  for (int count : options.counts) {
    const Timing threads = in_threads(options, count);
    const Timing processes = in_processes(options, count);
    std::printf("%8d | %9.2f %6.2f (%.1f) | %9.2f %6.2f (%.1f) | %.2f\n", count, threads.wall, threads.cpu,
                threads.cpu / threads.wall, processes.wall, processes.cpu, processes.cpu / processes.wall,
                threads.wall / processes.wall);
  }
  return 0;
}
