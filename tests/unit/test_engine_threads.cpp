// 32 host threads sharing one Engine and its kernel objects, as a host program's worker
// pool would: every thread resolves types, generates programs, loads the compiler and
// looks its programs up through the engine's cache, all at once. Built into the unit
// suite and, alone, into kernc_thread_tests, which tools/sanitize --thread runs under
// ThreadSanitizer. Launching from many threads is checked on a GPU by
// tests/gpu/test_gpu_threads.cpp.

#include <atomic>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "cache/cache_internals.hpp"
#include "cache/local_store.hpp"
#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "temp_dir.hpp"

namespace {

using kernc::ArgType;
using kernc::CallTypes;
using kernc::DType;
using kernc::Layout;
using kernc::Program;

constexpr int kThreads = 32;
constexpr int kRounds = 3;

// One lookup a thread makes: a program from one of the shared kernel objects.
struct ThreadJob {
  std::string what;
  std::function<Program()> make;
};

CallTypes arrays(std::vector<DType> inputs) {
  CallTypes types;
  for (DType dtype : inputs) types.inputs.push_back(ArgType::array(dtype));
  return types;
}

}  // namespace

TEST_CASE("threads::32 threads sharing one Engine compile each program once and all get its binary") {
  kernc::test::TempDir dir;
  const std::string cache_dir = dir / "cache";
  kernc::Engine engine(kernc::Config::from_environment([&](const char* name) -> const char* {
    if (std::string(name) == "KERNC_CACHE_DIR") return cache_dir.c_str();
    if (std::string(name) == "KERNC_CACHE_PATH" || std::string(name) == "KERNC_COMPILE") return nullptr;
    return std::getenv(name);
  }));

  // Kernel objects shared by every thread: two dtypes of an elementwise and a reduction
  // kernel, a raw kernel, and four kernels each shared by a quarter of the threads.
  const kernc::ElementwiseKernel add("T x, T y", "T z", "z = x + y", "threads_add");
  const kernc::ReductionKernel sum_of_squares("T x", "T y", "x * x", "a + b", "y = a", "0", "threads_sum_of_squares");
  const kernc::RawKernel raw("extern \"C\" __global__ void threads_raw(float* x, int n) {\n"
                             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "  if (i < n) x[i] *= 2.0f;\n"
                             "}\n",
                             "threads_raw");
  std::vector<kernc::ElementwiseKernel> scales;
  for (int k = 0; k < 4; ++k) {
    scales.emplace_back("T x", "T y", "y = x * " + std::to_string(k + 2), "threads_scale" + std::to_string(k));
  }
  const Layout contiguous = Layout::parse("contiguous-i32");
  const Layout generic = Layout::parse("generic-i64");
  std::vector<ThreadJob> shared = {
      {"add float32", [&] { return kernc::program(add, arrays({DType::float32, DType::float32}), contiguous); }},
      {"add float64", [&] { return kernc::program(add, arrays({DType::float64, DType::float64}), contiguous); }},
      {"sum of squares float32", [&] { return kernc::program(sum_of_squares, arrays({DType::float32}), generic); }},
      {"sum of squares float64", [&] { return kernc::program(sum_of_squares, arrays({DType::float64}), generic); }},
      {"raw", [&] { return kernc::program(raw); }},
  };
  const std::size_t distinct_programs = shared.size() + scales.size();

  std::atomic<int> waiting{kThreads};
  std::mutex mutex;
  std::map<std::string, std::set<std::string>> binaries_by_key;  // every binary a thread got, per key
  std::map<std::string, std::set<std::string>> keys_by_job;      // every key a job got
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<ThreadJob> jobs = shared;
      jobs.push_back({"scale " + std::to_string(t % 4),
                      [&, t] { return kernc::program(scales[static_cast<std::size_t>(t % 4)], arrays({DType::float32}), contiguous); }});
      --waiting;
      while (waiting.load() > 0) std::this_thread::yield();  // start together
      try {
        for (int round = 0; round < kRounds; ++round) {
          for (std::size_t j = 0; j < jobs.size(); ++j) {
            const ThreadJob& job = jobs[(j + static_cast<std::size_t>(t)) % jobs.size()];  // each thread its own order
            const kernc::Compiler& compiler = engine.compiler(kernc::Backend::cuda);
            kernc::CacheResult result = engine.cache().get_or_compile(job.make(), kernc::Target::parse("sm_90"), compiler);
            std::lock_guard<std::mutex> lock(mutex);
            binaries_by_key[result.key].insert(result.program->binary);
            keys_by_job[job.what].insert(result.key);
          }
        }
      } catch (const std::exception& error) {
        std::lock_guard<std::mutex> lock(mutex);
        errors.push_back("thread " + std::to_string(t) + ": " + error.what());
      }
    });
  }
  for (auto& thread : threads) thread.join();

  for (const auto& error : errors) FAIL_CHECK(error);
  REQUIRE(errors.empty());
  CHECK(keys_by_job.size() == distinct_programs);
  for (const auto& job_keys : keys_by_job) {
    INFO("job " << job_keys.first);
    CHECK(job_keys.second.size() == 1);  // the same program text from every thread
  }
  REQUIRE(binaries_by_key.size() == distinct_programs);
  for (const auto& key_binaries : binaries_by_key) {
    INFO("key " << key_binaries.first);
    const std::set<std::string>& binaries = key_binaries.second;
    REQUIRE(binaries.size() == 1);
    CHECK(binaries.begin()->find(".target sm_90") == std::string::npos);  // a cubin, not PTX
    CHECK(binaries.begin()->compare(0, 4, "\x7f" "ELF") == 0);
  }
  const kernc::CacheStats stats = engine.cache().stats();
  CHECK(stats.compiles == distinct_programs);  // concurrent lookups of one key compiled it once
  CHECK(stats.compile_failures == 0);
  CHECK(stats.memory_hits == kThreads * kRounds * (shared.size() + 1) - distinct_programs);
  CHECK(kernc::cache::disk_store(engine.cache())->list().size() == distinct_programs);
}
