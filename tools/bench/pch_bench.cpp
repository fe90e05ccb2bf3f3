// Precompiled headers before and after (NOTE [ precompiled headers ], src/compiler/nvrtc_pch.hpp),
// with real NVRTC compiles and no GPU: the CPU time of each compile (this thread's, so a
// loaded machine does not inflate it) through a Cache with KERNC_PCH's setting off and on,
// each side with a compiler and cache directory of its own, and whether every binary of the
// two sides is the same bytes.
//
//   kernc_pch_bench [SPEC.json] [--target sm_90]
//
// Rows: two distinct raw kernels that include <cub/block/block_reduce.cuh>, first and
// second; then, for SPEC (default examples/kernels.json), the median and total over its
// programs, in the spec's order. Set CUDA_CACHE_DISABLE=1 where a driver is present.

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernc/cache.hpp"
#include "kernc/compiler.hpp"
#include "kernc/error.hpp"
#include "kernc/spec_file.hpp"

namespace {

double thread_cpu_ms() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

std::string temp_directory() {
  std::string pattern = "/tmp/kernc-pch-bench.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

kernc::Program cub_program(const std::string& name, const std::string& type, int threads) {
  kernc::Program program;
  program.name = name + ".cu";
  program.source = fmt::format(
      "#include <cub/block/block_reduce.cuh>\n\n"
      "extern \"C\" __global__ void {0}(const {1}* x, {1}* out, int n) {{\n"
      "  using Reduce = cub::BlockReduce<{1}, {2}>;\n"
      "  __shared__ typename Reduce::TempStorage scratch;\n"
      "  {1} v = threadIdx.x < n ? x[threadIdx.x] : {1}(0);\n"
      "  {1} s = Reduce(scratch).Sum(v);\n"
      "  if (threadIdx.x == 0) *out = s;\n"
      "}}\n",
      name, type, threads);
  return program;
}

// One side of the comparison: its own compiler object (PCHs live in it) and cache directory.
struct Side {
  std::shared_ptr<const kernc::Compiler> compiler;
  std::unique_ptr<kernc::Cache> cache;
  std::string directory;

  explicit Side(bool pch) : directory(temp_directory()) {
    kernc::CompilerLibraryPaths paths;
    if (const char* home = std::getenv("CUDA_HOME")) paths.cuda_home = home;
    compiler = kernc::load_compiler(kernc::Backend::cuda, paths);
    kernc::CacheConfig config;
    config.directory = directory;
    config.precompiled_headers = pch;
    cache = std::make_unique<kernc::Cache>(config);
  }
  ~Side() {
    std::error_code ignored;
    std::filesystem::remove_all(directory, ignored);
  }

  // The CPU time of one compile, and its binary.
  std::pair<double, std::string> compile(const kernc::Program& program, const kernc::Target& target) {
    const double start = thread_cpu_ms();
    auto result = cache->get_or_compile(program, target, *compiler);
    return {thread_cpu_ms() - start, result.program->binary};
  }
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n == 0 ? 0 : n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string spec_path = "examples/kernels.json";
  std::string target_name = "sm_90";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--target" && i + 1 < argc) {
      target_name = argv[++i];
    } else {
      spec_path = arg;
    }
  }
  try {
    const kernc::Target target = kernc::Target::parse(target_name);
    Side without(false), with(true);
    fmt::print("pch before/after, NVRTC {}, {}, CPU ms of this thread per compile\n",
               with.compiler->identity().version, target.str());
    fmt::print("{:<44} {:>10} {:>10} {:>8}  {}\n", "row", "no PCH", "PCH", "ratio", "same bytes");
    bool all_same = true;
    auto row = [&all_same](const std::string& name, double before, double after, bool same) {
      all_same = all_same && same;
      fmt::print("{:<44} {:>10.0f} {:>10.0f} {:>7.2f}x  {}\n", name, before, after, after > 0 ? before / after : 0,
                 same ? "yes" : "NO");
    };

    const auto first = cub_program("cub_sum_float", "float", 256), second = cub_program("cub_sum_double", "double", 128);
    auto [first_before, first_bytes] = without.compile(first, target);
    auto [second_before, second_bytes] = without.compile(second, target);
    auto [first_after, first_pch] = with.compile(first, target);
    auto [second_after, second_pch] = with.compile(second, target);
    row("cub block_reduce: first program", first_before, first_after, first_bytes == first_pch);
    row("cub block_reduce: second distinct program", second_before, second_after, second_bytes == second_pch);
    fmt::print("  with PCH, the second program against the first: {:.2f}x faster\n", first_after / second_after);

    const kernc::Spec spec = kernc::load_spec(spec_path);
    std::vector<double> before, after;
    size_t same = 0, count = 0;
    for (const auto& variant : spec.variants()) {
      auto [cpu_before, bytes_before] = without.compile(variant.program, target);
      auto [cpu_after, bytes_after] = with.compile(variant.program, target);
      before.push_back(cpu_before);
      after.push_back(cpu_after);
      same += bytes_before == bytes_after ? 1 : 0;
      ++count;
    }
    double total_before = 0, total_after = 0;
    for (double ms : before) total_before += ms;
    for (double ms : after) total_after += ms;
    const std::string name = spec_path.substr(spec_path.find_last_of('/') + 1);
    row(fmt::format("{}: median of {} programs", name, count), median(before), median(after), same == count);
    row(fmt::format("{}: total", name), total_before, total_after, same == count);
    fmt::print("  {} of {} binaries the same bytes\n", same, count);
    return all_same ? 0 : 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "kernc_pch_bench: %s\n", error.what());
    return 2;
  }
}
