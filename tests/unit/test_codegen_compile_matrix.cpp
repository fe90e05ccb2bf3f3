// Every template variant for every dtype compiles: for each of the 17 dtypes, an
// elementwise kernel in every Layout::elementwise_classes() and a reduction in every
// Layout::reduction_classes(), with NVRTC for sm_90 and (when built) HIPRTC for gfx90a.
// Each compile must succeed with a non-empty ELF binary that defines the kernel, and
// without a single warning.
//
// That is 17 * (16 + 4) = 340 programs per target. They go through one kernc::Cache on a
// directory that outlives the test process, so only the first run on a machine (or the
// first after a change to templates/, codegen or the compiler) pays for the compiles:
//   KERNC_TEST_CACHE_DIR  the cache directory, if set; else /tmp/kernc-test-cache-<uid>.
// NVRTC compiles run on several threads. HIPRTC compiles take turns within a process (see
// NOTE [ HIPRTC threads ]), so the HIP list gets a thread of its own beside the NVRTC ones
// and, when many of its programs are not cached yet, child processes that compile shares
// of it into the same cache directory. Part of the doctest suite "slow" (-tse=slow skips it).

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cache/cache_internals.hpp"
#include "cache/local_store.hpp"
#include "child_process.hpp"
#include "kernc/cache.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "platform/files.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::ArgType;
using kernc::CacheOutcome;
using kernc::CallTypes;
using kernc::DType;
using kernc::Layout;
using kernc::Program;
using kernc::Target;
using kernc::test::contains;

namespace {

std::string persistent_cache_dir() {
  if (const char* dir = std::getenv("KERNC_TEST_CACHE_DIR"); dir != nullptr && *dir != '\0') return dir;
  return "/tmp/kernc-test-cache-" + std::to_string(::getuid());
}

// One program to compile for one target, and what came of it.
struct Job {
  Job(std::string what_, std::vector<std::string> symbols_, Program program_, Target target_,
      const kernc::Compiler& compiler_)
      : what(std::move(what_)),
        symbols(std::move(symbols_)),
        program(std::move(program_)),
        target(std::move(target_)),
        compiler(&compiler_) {}
  std::string what;                  // "float16 elementwise strided3-i64 for sm_90"
  std::vector<std::string> symbols;  // the kernels the binary must define
  Program program;
  Target target;
  const kernc::Compiler* compiler;
  // Results, written by the worker that ran the job.
  bool done = false;
  std::string error;
  std::string binary;
  std::string log;
  std::string key;
  CacheOutcome outcome = CacheOutcome::compiled;
};

// An elementwise and a reduction kernel that are valid C++ for `dtype`.
kernc::ElementwiseKernel elementwise_for(DType dtype) {
  return kernc::ElementwiseKernel("T x, T y", "T z", dtype == DType::bool_ ? "z = x || y" : "z = x + y", "matrix_add");
}

kernc::ReductionKernel reduction_for(DType dtype) {
  bool is_bool = dtype == DType::bool_;
  return kernc::ReductionKernel("T x", "T y", "x", is_bool ? "a || b" : "a + b", "y = a", is_bool ? "false" : "0",
                                "matrix_sum");
}

void add_jobs(std::vector<Job>& jobs, const Target& target, const kernc::Compiler& compiler) {
  std::size_t count = 0;
  const DType* dtypes = kernc::all_dtypes(&count);
  for (std::size_t d = 0; d < count; ++d) {
    const DType dtype = dtypes[d];
    const std::string name = kernc::to_string(dtype);
    CallTypes two;
    two.inputs = {ArgType::array(dtype), ArgType::array(dtype)};
    auto elementwise = elementwise_for(dtype);
    for (const auto& layout : Layout::elementwise_classes()) {
      jobs.emplace_back(name + " elementwise " + layout.str() + " for " + target.str(),
                        std::vector<std::string>{"matrix_add"}, kernc::program(elementwise, two, layout), target, compiler);
    }
    CallTypes one;
    one.inputs = {ArgType::array(dtype)};
    auto reduction = reduction_for(dtype);
    for (const auto& layout : Layout::reduction_classes()) {
      jobs.emplace_back(name + " reduction " + layout.str() + " for " + target.str(),
                        std::vector<std::string>{"matrix_sum", "matrix_sum_finish"}, kernc::program(reduction, one, layout),
                        target, compiler);
    }
  }
}

void run_job(Job& job, kernc::Cache& cache) {
  try {
    auto result = cache.get_or_compile(job.program, job.target, *job.compiler);
    job.outcome = result.outcome;
    job.key = result.key;
    if (result.program) {
      job.binary = result.program->binary;
      job.log = result.program->log;
    }
  } catch (const kernc::Error& error) {
    const kernc::Error mapped = kernc::map_error_to_snippets(error);
    job.error = mapped.what();
    if (const auto* failure = mapped.compile_failure()) job.error += "\n" + failure->log;
  }
  job.done = true;
}

// Runs the jobs `pick` selects on `threads` threads; join the returned threads.
template <class Pick>
std::vector<std::thread> start_pool(std::vector<Job>& jobs, Pick pick, unsigned threads, kernc::Cache& cache,
                                    std::atomic<std::size_t>& next) {
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&jobs, pick, &cache, &next] {
      for (std::size_t k = next++; k < jobs.size(); k = next++) {
        if (pick(jobs[k], k)) run_job(jobs[k], cache);
      }
    });
  }
  return pool;
}

kernc::CacheConfig matrix_cache_config() {
  kernc::CacheConfig config;
  config.directory = persistent_cache_dir();
  config.max_size = 512ull << 20;
  return config;
}

#ifdef KERNC_WITH_HIP
// HIPRTC compiles take turns within a process, so on a cold cache the HIP half of the
// matrix is shared out to child processes, each compiling every n-th HIP program into the
// same cache directory; the parent then finds their entries there and checks them
// itself. A child that fails only costs time: whatever it left out, the parent compiles.
constexpr const char* kShardVariable = "KERNC_TEST_MATRIX_SHARD";  // "i/n"

std::vector<Job> hip_jobs() {
  std::vector<Job> jobs;
  add_jobs(jobs, Target::parse("gfx90a"), kernc::test::hiprtc());
  return jobs;
}
#endif

}  // namespace

#ifdef KERNC_WITH_HIP
// Helper for the compile matrix below: does nothing unless KERNC_TEST_MATRIX_SHARD is set.
TEST_CASE("helper::compile a shard of the HIP compile matrix" * doctest::skip()) {
  const std::string shard = kernc::test::env(kShardVariable);
  REQUIRE_MESSAGE(!shard.empty(), "started by the compile matrix test only (" << kShardVariable << ")");
  const std::size_t index = std::stoul(shard.substr(0, shard.find('/')));
  const std::size_t count = std::stoul(shard.substr(shard.find('/') + 1));
  REQUIRE(index < count);
  kernc::Cache cache(matrix_cache_config());
  REQUIRE_MESSAGE(cache.disk_problem().empty(), cache.disk_problem());
  auto jobs = hip_jobs();
  for (std::size_t k = index; k < jobs.size(); k += count) run_job(jobs[k], cache);
}
#endif

TEST_CASE("codegen: every template variant for every dtype compiles without warnings" * doctest::test_suite("slow")) {
  const auto start = std::chrono::steady_clock::now();
  const kernc::CacheConfig config = matrix_cache_config();
  kernc::Cache cache(config);
  WARN_MESSAGE(cache.disk_problem().empty(), "the compile cache is not kept across runs: " << cache.disk_problem());

  std::vector<Job> jobs;
  add_jobs(jobs, Target::parse("sm_90"), kernc::test::nvrtc());
  const std::size_t nvrtc_jobs = jobs.size();
  std::size_t dtype_count = 0;
  kernc::all_dtypes(&dtype_count);
  CHECK(dtype_count == 17);  // this file's comments count them
  CHECK(nvrtc_jobs == dtype_count * (16 + 4));
  const auto is_nvrtc = [nvrtc_jobs](const Job&, std::size_t k) { return k < nvrtc_jobs; };
  std::atomic<std::size_t> next_nvrtc{0};
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());

#ifdef KERNC_WITH_HIP
  {
    auto hip = hip_jobs();
    CHECK(hip.size() == nvrtc_jobs);
    for (auto& job : hip) jobs.push_back(std::move(job));
  }
  // Shard the HIP jobs only when many are missing from the cache.
  std::size_t missing = 0;
  for (std::size_t k = nvrtc_jobs; k < jobs.size() && cache.uses_disk(); ++k) {
    const std::string key = cache.key(jobs[k].program, jobs[k].target, *jobs[k].compiler);
    missing += !std::filesystem::exists(kernc::cache::disk_store(cache)->entry_path(key));
  }
  const std::size_t shards = missing >= 16 ? std::clamp<std::size_t>(cores, 2, 8) : 1;
  kernc::test::TempDir logs;
  std::vector<kernc::test::ChildProcess> children;
  for (std::size_t i = 1; i < shards; ++i) {
    children.emplace_back(
        "helper::compile a shard of the HIP compile matrix",
        std::map<std::string, std::string>{{kShardVariable, std::to_string(i) + "/" + std::to_string(shards)},
                                           {"KERNC_TEST_CACHE_DIR", config.directory}},
        logs / ("shard" + std::to_string(i)));
  }
  std::atomic<std::size_t> next_hip{nvrtc_jobs};
  auto hip_pool = start_pool(
      jobs,
      [nvrtc_jobs, shards](const Job&, std::size_t k) { return k >= nvrtc_jobs && (k - nvrtc_jobs) % shards == 0; }, 1,
      cache, next_hip);
#endif
  auto nvrtc_pool = start_pool(jobs, is_nvrtc, cores, cache, next_nvrtc);
  for (auto& thread : nvrtc_pool) thread.join();
#ifdef KERNC_WITH_HIP
  for (auto& thread : hip_pool) thread.join();
  for (std::size_t i = 1; i < shards; ++i) {
    const std::string output =
        kernc::platform::read_file_if_exists(logs / ("shard" + std::to_string(i))).value_or("(no output)");
    INFO("shard " << i << " output:\n" << output);
    CHECK(children[i - 1].wait() == 0);
  }
  // The children's programs: disk hits, or compiled here if a child left them out.
  std::atomic<std::size_t> next_rest{nvrtc_jobs};
  auto rest = start_pool(
      jobs, [](const Job& job, std::size_t) { return !job.done; }, 1, cache, next_rest);
  for (auto& thread : rest) thread.join();
#endif
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::set<std::string> keys;
  std::size_t compiled = 0;
  for (const auto& job : jobs) {
    CAPTURE(job.what);
    REQUIRE(job.done);
    CHECK_MESSAGE(job.error.empty(), job.error);
    if (!job.error.empty()) continue;
    CHECK(kernc::test::is_cache_key(job.key));
    keys.insert(job.key);
    compiled += job.outcome == CacheOutcome::compiled;
    REQUIRE(job.binary.size() > 64);
    // cubins and HSA code objects are both ELF files.
    CHECK(kernc::test::starts_with(job.binary, kernc::test::kElfMagic));
    for (const auto& symbol : job.symbols) {
      CAPTURE(symbol);
      CHECK(contains(job.binary, symbol + std::string(1, '\0')));  // in the string table
    }
    CHECK_MESSAGE(!contains(job.log, "warning"), job.log);
  }
  // Every (dtype, layout, target) is a program of its own.
  CHECK(keys.size() == jobs.size());
  std::size_t shard_count = 1;
#ifdef KERNC_WITH_HIP
  shard_count = shards;
#endif
  MESSAGE(jobs.size() << " programs (" << compiled << " compiled here, " << jobs.size() - compiled
                      << " from the cache in " << config.directory << "; HIP in " << shard_count << " process(es)) in "
                      << seconds << " s");
}
