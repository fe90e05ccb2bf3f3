// kernc_first_calls_bench: concurrent first calls in one process (issue 35, item 3). T
// threads of one process share an Engine and compile N distinct generated programs of a
// spec file (default examples/kernels.json, N spread evenly over its variants), each
// program the first call of its key, taking the next program as they finish one; wall time
// from the threads' common start to the last compile, for T = 1, 4, 16 (--threads), with the
// engine compiling in this process (KERNC_COMPILE_WORKERS=0) and in T worker processes
// (KERNC_COMPILE_WORKERS=T, NOTE [ compile workers of an engine ] in
// src/kernels/compile_worker_program.cpp). The workers' start is part of their time: a
// fresh process pays it. Compiles go through the engine's compiler and cache as
// Engine::load does once it has the device's target, so no GPU or driver is needed.
//
// The driver's compute cache is off (CUDA_CACHE_DISABLE=1 is set before NVRTC is loaded,
// and kernc passes -no-cache): every compile is a real one. Each run has an engine of its
// own on a fresh cache directory (precompiled headers, like a library host, in process).
//
// "vs 1 thread" is the first of --threads in the same mode; "vs first run" the first row
// (one thread in this process, by default).
//
// Usage: kernc_first_calls_bench [--spec FILE] [--target sm_90] [--programs N]
//                                [--threads 1,4,16] [--worker KERNC] [--mode both|threads|workers]
//   --worker KERNC  the worker program (KERNC_COMPILE_WORKER); default: the kernc CLI found
//                   beside libkernc (the build tree's tools/kernc/kernc)
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "kernc/engine.hpp"
#include "kernc/spec_file.hpp"

using namespace kernc;

namespace {

struct Options {
  std::string spec = std::string(KERNC_SOURCE_DIR) + "/examples/kernels.json";
  std::string target = "sm_90";
  std::size_t programs = 32;
  std::vector<int> threads = {1, 4, 16};
  std::string worker;
  std::string mode = "both";
};

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) values.push_back(std::stoi(item));
  return values;
}

Options parse(int argc, char** argv) {
  Options options;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    auto next = [&]() -> std::string {
      if (k + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++k];
    };
    if (arg == "--spec") options.spec = next();
    else if (arg == "--target") options.target = next();
    else if (arg == "--programs") options.programs = std::stoul(next());
    else if (arg == "--threads") options.threads = parse_list(next());
    else if (arg == "--worker") options.worker = next();
    else if (arg == "--mode") options.mode = next();
    else throw std::runtime_error("unknown argument " + arg);
  }
  return options;
}

double cpu_seconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(usage.ru_utime) + s(usage.ru_stime);
}

struct Run {
  double wall_s = 0;
  double cpu_s = 0;  // this process and its reaped children (the workers, once the engine is gone)
  std::uint64_t compiles = 0;
};

// One engine, `threads` threads, every program compiled once.
Run run(const Options& options, const std::vector<const Program*>& programs, int threads, bool workers,
        const std::string& directory) {
  std::map<std::string, std::string> settings = {{"KERNC_CACHE_DIR", directory},
                                                 {"KERNC_COMPILE_WORKERS", workers ? std::to_string(threads) : "0"}};
  if (!options.worker.empty()) settings["KERNC_COMPILE_WORKER"] = options.worker;
  const Config config = Config::from_environment([&](const char* name) -> const char* {
    if (auto found = settings.find(name); found != settings.end()) return found->second.c_str();
    const std::string n = name;
    if (n == "KERNC_CACHE_PATH" || n == "KERNC_REMOTE_CACHE" || n == "KERNC_CACHE_DISABLE") return nullptr;
    return std::getenv(name);
  });
  const Target target = Target::parse(options.target);
  const double cpu0 = cpu_seconds(RUSAGE_SELF) + cpu_seconds(RUSAGE_CHILDREN);
  Run result;
  {
    Engine engine(config);
    engine.compiler(target.backend());  // the compiler's load is not a compile: outside the clock
    std::atomic<std::size_t> next{0};
    std::atomic<int> waiting{threads};
    std::mutex mutex;
    std::string failure;
    std::vector<std::thread> pool;
    std::chrono::steady_clock::time_point start;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        if (--waiting == 0) start = std::chrono::steady_clock::now();
        while (waiting.load() > 0) std::this_thread::yield();
        try {
          for (std::size_t k; (k = next++) < programs.size();) {
            engine.cache().get_or_compile(*programs[k], target, engine.compiler(target.backend()));
          }
        } catch (const std::exception& error) {
          std::lock_guard<std::mutex> lock(mutex);
          failure = error.what();
        }
      });
    }
    for (auto& thread : pool) thread.join();
    result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!failure.empty()) throw std::runtime_error(failure);
    result.compiles = engine.cache().stats().compiles;
  }
  result.cpu_s = cpu_seconds(RUSAGE_SELF) + cpu_seconds(RUSAGE_CHILDREN) - cpu0;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    ::setenv("CUDA_CACHE_DISABLE", "1", 1);  // before NVRTC is loaded: real compiles only
    const Options options = parse(argc, argv);
    const Spec spec = load_spec(options.spec);
    const std::vector<SpecVariant> variants = spec.variants();
    const std::size_t n = std::min(options.programs, variants.size());
    std::vector<const Program*> programs;
    for (std::size_t k = 0; k < n; ++k) programs.push_back(&variants[k * variants.size() / n].program);
    const std::string root = fmt::format("/tmp/kernc-first-calls-{}", ::getpid());
    fmt::print("{} distinct programs of {} ({} variants, spread evenly) for {}, each compiled once, on {} hardware "
               "threads; the driver's compute cache off (CUDA_CACHE_DISABLE=1, -no-cache)\n",
               n, options.spec, variants.size(), options.target, std::thread::hardware_concurrency());
    fmt::print("{:<24} {:>7} {:>9} {:>10} {:>12} {:>12} {:>9} {:>9}\n", "compiles in", "threads", "wall s", "programs/s",
               "vs 1 thread", "vs first run", "CPU s", "compiles");
    int run_number = 0;
    double baseline = 0;  // the first run: one thread compiling in this process, by default
    for (const bool workers : {false, true}) {
      if ((workers && options.mode == "threads") || (!workers && options.mode == "workers")) continue;
      double one_thread = 0;
      for (const int threads : options.threads) {
        const std::string directory = fmt::format("{}/{}", root, run_number++);
        const Run r = run(options, programs, threads, workers, directory);
        std::filesystem::remove_all(directory);
        if (one_thread == 0) one_thread = r.wall_s;  // the first of --threads (1 by default)
        if (baseline == 0) baseline = r.wall_s;
        const std::string label = workers ? fmt::format("{} worker process{}", threads, threads == 1 ? "" : "es") : "this process (threads)";
        fmt::print("{:<24} {:>7} {:>9.2f} {:>10.2f} {:>11.2f}x {:>11.2f}x {:>9.1f} {:>9}\n", label, threads, r.wall_s,
                   static_cast<double>(n) / r.wall_s, one_thread / r.wall_s, baseline / r.wall_s, r.cpu_s, r.compiles);
        std::fflush(stdout);
      }
    }
    std::filesystem::remove_all(root);
    return 0;
  } catch (const std::exception& error) {
    fmt::print(stderr, "kernc_first_calls_bench: {}\n", error.what());
    return 1;
  }
}
