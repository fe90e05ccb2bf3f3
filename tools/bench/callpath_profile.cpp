// kernc's own host cost per launch, without a GPU (issue 14, item 4: "the call path near a
// raw launch"). A fake detail::Driver (the unit tests' tests/unit/fake_driver.hpp) stands in
// for libcuda as GPU 0: it accepts any module image, finds any function, and its launch
// does nothing, so what is timed and counted is kernc's code alone. The kernels are really
// compiled (NVRTC, for the fake GPU's sm_90) into the cache directory, so the first run
// compiles and later ones find the binaries there.
//
// The four call paths of tools/bench/bench.cpp's per-call rows, same argument shapes:
//   raw       Function::launch(config, void** args)
//   rawkernel RawKernel::operator()(config, {2.0f, x, x, z, n})
//   plan      ElementwiseKernel::launch(plan, {2.0f, x, x}, {z})
//   call      ElementwiseKernel::operator()({2.0f, x, x}, {z})
// each twice: the argument lists built per call as bench.cpp writes them, and built once
// before the loop ("prebuilt"), which leaves kernc's own cost. Prints per call: wall-clock
// nanoseconds, heap allocations (a counting operator new), and the fake driver's calls.
//
// Instruction counts: run under callgrind; every loop is bracketed by CALLGRIND_ZERO_STATS
// and CALLGRIND_DUMP_STATS_AT(label), so each callgrind.out.PID.N file holds one loop:
//   valgrind --tool=callgrind --callgrind-out-file=cg.out build/tools/bench/kernc_callpath_profile 20000
//   callgrind_annotate --inclusive=yes cg.out.N
// (tools/bench/NOTES.md, "callpath (CPU, callgrind on a fake driver)").
// Usage: kernc_callpath_profile [N] (default 100000). KERNC_CACHE_DIR is honoured; unset,
// the cache is $TMPDIR/kernc-callpath-cache.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <vector>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(label) ((void)(label))
#endif

#include "fake_driver.hpp"  // tests/unit: the fake GPU the unit tests use
#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"
#include "runtime/driver.hpp"

// Every heap allocation of the process (the harness is single-threaded while counting).
// GCC's -Wmismatched-new-delete sees free() in a replaced operator delete; it is the pair
// of the malloc() in the replaced operator new.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
static std::atomic<unsigned long long> g_allocations{0};

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

using namespace kernc;

// A GPU that exists only here (tests/unit/fake_driver.hpp: an H100's limits, a bump
// allocator, launches that do nothing) that launches cooperatively and counts every call
// kernc makes on the way to a launch.
class FakeDriver final : public test::FakeGpuDriver {
 public:
  FakeDriver() : FakeGpuDriver("Fake H100 (callpath_profile)") { props().cooperative_launch = true; }

  // Calls that reach the driver, by kind (what a real driver would be asked per launch).
  unsigned long long launches = 0, make_currents = 0, attribute_queries = 0, other_calls = 0;

  void make_current() override { ++make_currents; }
  std::uint64_t allocate(std::size_t bytes) override {
    ++other_calls;
    return FakeGpuDriver::allocate(bytes);
  }
  void release_memory(std::uint64_t, bool, void*) noexcept override { ++other_calls; }
  void copy_to_device(std::uint64_t, const void*, std::size_t, void*) override { ++other_calls; }
  void copy_to_host(void*, std::uint64_t, std::size_t, void*) override { ++other_calls; }
  void copy_device(std::uint64_t, std::uint64_t, std::size_t, void*) override { ++other_calls; }
  void fill_bytes(std::uint64_t, unsigned char, std::size_t, void*) override { ++other_calls; }
  void synchronize() override { ++other_calls; }
  void synchronize_stream(void*) override { ++other_calls; }
  void* find_function(void* module, const std::string& name) override {
    ++other_calls;
    return FakeGpuDriver::find_function(module, name);
  }
  FunctionAttributes attributes(void*) override {
    ++attribute_queries;
    FunctionAttributes a;
    a.max_dynamic_shared_bytes = 48 * 1024;
    a.max_threads_per_block = 1024;
    return a;
  }
  void set_max_dynamic_shared(void*, int) override { ++other_calls; }
  void set_preferred_shared_carveout(void*, int) override { ++other_calls; }
  int max_active_blocks_per_multiprocessor(void*, int, std::size_t) override {
    ++attribute_queries;
    return 8;
  }
  int dynamic_shared_limit(void* function) noexcept override {
    ++attribute_queries;
    return FakeGpuDriver::dynamic_shared_limit(function);
  }
  std::vector<std::size_t> parameter_sizes(void*, std::optional<std::size_t>) override {
    ++attribute_queries;
    return {};
  }
  void launch(void*, const LaunchConfig&, void**) override { ++launches; }

  unsigned long long total() const { return launches + make_currents + attribute_queries + other_calls; }
};

struct Result {
  const char* label;
  double ns;
  double allocations;
  double driver_calls;
};

// Runs `body` n times (after a warm-up), between callgrind's zero and dump requests.
template <class Body>
Result measure(const char* label, long n, FakeDriver& driver, Body&& body) {
  for (int k = 0; k < 100; ++k) body();
  const unsigned long long allocations = g_allocations.load();
  const unsigned long long calls = driver.total();
  CALLGRIND_ZERO_STATS;
  const auto start = std::chrono::steady_clock::now();
  for (long k = 0; k < n; ++k) body();
  const auto stop = std::chrono::steady_clock::now();
  CALLGRIND_DUMP_STATS_AT(label);
  return {label, std::chrono::duration<double, std::nano>(stop - start).count() / static_cast<double>(n),
          static_cast<double>(g_allocations.load() - allocations) / static_cast<double>(n),
          static_cast<double>(driver.total() - calls) / static_cast<double>(n)};
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 100000;
  if (n <= 0) {
    std::fprintf(stderr, "usage: %s [N]\n", argv[0]);
    return 2;
  }
  const std::string cache = (std::filesystem::temp_directory_path() / "kernc-callpath-cache").string();
  setenv("KERNC_CACHE_DIR", cache.c_str(), 0);

  auto owned = std::make_unique<FakeDriver>();
  FakeDriver& driver = *owned;
  // GPU 0 of CUDA is the fake one while `state` lives: Engine::global() finds it there.
  auto state = detail::register_device(Backend::cuda, 0, std::move(owned));
  Device device = Engine::global().device(0);

  auto small_x = DeviceArray::empty(device, DType::float32, {1024});
  auto small_z = DeviceArray::empty(device, DType::float32, {1024});
  ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "saxpy");
  CallOptions plan_options;
  plan_options.multiprocessors = device.multiprocessors();
  const Call plan = saxpy.plan({2.0f, small_x, small_x}, {small_z}, plan_options);

  RawKernel raw("extern \"C\" __global__ void raw_saxpy(float a, const float* x, const float* y, float* z, int n) {\n"
                "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) z[i] = a * x[i] + y[i];\n}\n",
                "raw_saxpy");
  Function raw_fn = raw.function();
  float a = 2.0f;
  std::uint64_t px = small_x.ref().data, pz = small_z.ref().data;
  int small_n = 1024;
  void* args[] = {&a, &px, &px, &pz, &small_n};
  LaunchConfig small;
  small.block[0] = 256;
  small.grid[0] = 4;

  const std::vector<Arg> raw_args = {2.0f, small_x, small_x, small_z, small_n};
  const std::vector<Arg> inputs = {2.0f, small_x, small_x};
  const std::vector<ArrayRef> outputs = {small_z};

  std::vector<Result> results;
  results.push_back(measure("a raw Function::launch", n, driver, [&] { raw_fn.launch(small, args); }));
  results.push_back(measure("b RawKernel::operator()", n, driver,
                            [&] { raw(small, {2.0f, small_x, small_x, small_z, small_n}); }));
  results.push_back(measure("c ElementwiseKernel::launch(plan)", n, driver,
                            [&] { plan.launch({2.0f, small_x, small_x}, {small_z}); }));
  results.push_back(measure("d ElementwiseKernel::operator()", n, driver,
                            [&] { saxpy({2.0f, small_x, small_x}, {small_z}); }));
  results.push_back(measure("b' RawKernel::operator() prebuilt", n, driver, [&] { raw(small, raw_args); }));
  results.push_back(measure("c' launch(plan) prebuilt", n, driver, [&] { plan.launch(inputs, outputs); }));
  results.push_back(measure("c\" launch_into(plan)", n, driver,
                            [&] { plan.launch_into({2.0f, small_x, small_x}, {small_z}); }));
  results.push_back(measure("d' operator() prebuilt", n, driver, [&] { saxpy(inputs, outputs); }));
  // e: kernc's part of bench.cpp's "warm-disk first call": the first call of a new kernel
  // object through a new Engine on the same cache directory, which finds the binary on
  // disk (the driver's module load, about 0.16 ms on an H100, is not in it). Only the call
  // is timed, as in bench.cpp; making and closing the Engine are not.
  {
    const Config warm_config = Engine::global().config();
    const long rounds = std::max(1L, n / 1000);
    double ns = 0;
    unsigned long long allocations = 0, driver_calls = 0;
    for (long k = 0; k < rounds; ++k) {
      Engine engine(warm_config);
      CallOptions options;
      options.engine = &engine;
      const ElementwiseKernel fresh("T a, T x, T y", "T z", "z = a * x + y", "saxpy");
      const unsigned long long allocations_before = g_allocations.load(), calls_before = driver.total();
      CALLGRIND_ZERO_STATS;
      const auto start = std::chrono::steady_clock::now();
      fresh({2.0f, small_x, small_x}, {small_z}, options);
      ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
      CALLGRIND_DUMP_STATS_AT("e first call: new Engine, warm disk");
      allocations += g_allocations.load() - allocations_before;
      driver_calls += driver.total() - calls_before;
    }
    const double per_round = static_cast<double>(rounds);
    results.push_back({"e first call: new Engine, warm disk", ns / per_round,
                       static_cast<double>(allocations) / per_round, static_cast<double>(driver_calls) / per_round});
  }
  std::printf("%-36s %10s %12s %14s\n", "call path", "ns/call", "allocs/call", "driver calls");
  for (const auto& r : results) {
    std::printf("%-36s %10.1f %12.2f %14.2f\n", r.label, r.ns, r.allocations, r.driver_calls);
  }
  std::printf("(N = %ld; launches reaching the fake driver: %llu)\n", n, driver.launches);
  return 0;
}
