// 32 host threads calling kernels through one Engine at once, each on its own stream and
// its own random data: the same kernel objects and different ones, first calls (compile
// and load) racing each other. Every result is checked against a host reference. The
// compile side of the same pattern runs under ThreadSanitizer in CI
// (tests/unit/test_engine_threads.cpp, tools/sanitize thread).

#include <atomic>
#include <cmath>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {

TEST_CASE("32 threads sharing one Engine call the same and different kernels and all get right answers") {
  constexpr int kThreads = 32;
  constexpr int kRounds = 4;
  constexpr std::int64_t n = 100'003;
  Random seeds("threads sharing an engine");
  const std::uint64_t base = seeds.seed();

  Engine engine(Config::from_environment());
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "gpu_threads_saxpy");
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "gpu_threads_sum");
  std::vector<ElementwiseKernel> scales;  // each shared by a quarter of the threads
  for (int k = 0; k < 4; ++k) {
    scales.emplace_back("T x", "T y", "y = x * " + std::to_string(k + 2), "gpu_threads_scale" + std::to_string(k));
  }

  std::atomic<int> waiting{kThreads};
  std::mutex mutex;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto fail = [&](const std::string& what) {
        std::lock_guard<std::mutex> lock(mutex);
        failures.push_back("thread " + std::to_string(t) + ": " + what);
      };
      try {
        std::mt19937_64 random(base + static_cast<std::uint64_t>(t));
        std::uniform_real_distribution<double> uniform(-1.0, 1.0);
        Device gpu = engine.device(0);
        Stream stream = gpu.create_stream();
        CallOptions options;
        options.engine = &engine;
        options.stream = stream;
        --waiting;
        while (waiting.load() > 0) std::this_thread::yield();  // first calls race each other
        for (int round = 0; round < kRounds; ++round) {
          std::vector<double> x(n), y(n);
          for (auto& v : x) v = uniform(random);
          for (auto& v : y) v = uniform(random);
          DeviceArray dx = DeviceArray::from_host(gpu, DType::float64, {n}, x.data(), stream);
          DeviceArray dy = DeviceArray::from_host(gpu, DType::float64, {n}, y.data(), stream);
          const double a = 1.0 + t;
          auto z = saxpy({a, dx, dy}, {}, options)[0].to_host_vector<double>(stream);
          const int k = t % 4;
          auto scaled = scales[static_cast<std::size_t>(k)]({dx}, {}, options)[0].to_host_vector<double>(stream);
          auto total = sum({dy}, std::nullopt, false, {}, options)[0].to_host_vector<double>(stream);
          double want_total = 0;
          for (std::int64_t i = 0; i < n; ++i) {
            const auto u = static_cast<std::size_t>(i);
            want_total += y[u];
            if (z[u] != a * x[u] + y[u] && std::fabs(z[u] - (a * x[u] + y[u])) > 1e-15 * (std::fabs(a * x[u]) + std::fabs(y[u]))) {
              return fail("saxpy element " + std::to_string(i) + " is " + std::to_string(z[u]));
            }
            if (scaled[u] != x[u] * (k + 2)) return fail("scale element " + std::to_string(i) + " is " + std::to_string(scaled[u]));
          }
          if (std::fabs(total[0] - want_total) > 1e-9 * n) {
            return fail("sum is " + std::to_string(total[0]) + ", want " + std::to_string(want_total));
          }
        }
      } catch (const std::exception& error) {
        fail(error.what());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& failure : failures) FAIL_CHECK(failure);
  CHECK(failures.empty());
  // One module per program (saxpy, the full reduction, four scales), however many threads
  // asked first; each compiled at most once (none on a warm disk cache). Threads that race
  // on a disk hit may each read the entry: only compiles are collapsed (Cache::find is not
  // single-flight).
  CHECK(engine.loaded_modules() == 6);
  CHECK(engine.cache().stats().compiles <= engine.loaded_modules());
  CHECK(engine.cache().stats().compile_failures == 0);
}

}  // namespace kernc::gpu_test
