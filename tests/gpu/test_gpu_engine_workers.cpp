// Kernel calls through an Engine that compiles in worker processes (Config::compile_workers;
// NOTE [ compile workers of an engine ], src/kernels/compile_worker_program.cpp): threads
// whose first calls race each other, each with a kernel of its own and its own random data,
// get right answers from binaries the workers built, loaded through Engine::load. The worker
// program is left to be found: the kernc CLI beside the shared library (in the build tree,
// tools/kernc/kernc). The compile side alone is unit-tested (tests/unit/test_engine_workers.cpp).

#include <atomic>
#include <cmath>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {

TEST_CASE("first calls from 8 threads compile in 4 worker processes and compute what the host computes") {
  KERNC_GPU_ONLY("the host backend compiles in processes of its own: its engine has no compile workers");
  constexpr int kThreads = 8;
  constexpr std::int64_t n = 70'001;
  Random seeds("engine compile workers");
  const std::uint64_t base = seeds.seed();
  TempDir dir;
  Config config = Config::from_environment();
  config.cache_dir.set(dir.path() + "/cache", "test");
  config.cache_disabled.set(false, "test");
  config.cache_path.set("", "test");
  config.remote_cache.set(std::nullopt, "test");
  config.compile_workers.set(4, "test");
  config.compile_worker.set("", "test");  // found beside libkernc
  Engine engine(config);

  std::vector<ElementwiseKernel> kernels;  // one each: every thread's first call compiles
  for (int t = 0; t < kThreads; ++t) {
    kernels.emplace_back("T x, T y", "T z", "z = x * " + std::to_string(t + 2) + " - y",
                         "gpu_workers_axpy" + std::to_string(t));
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
        std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
        Device gpu = engine.device(0);
        Stream stream = gpu.create_stream();
        CallOptions options;
        options.engine = &engine;
        options.stream = stream;
        std::vector<float> x(n), y(n);
        for (auto& v : x) v = uniform(random);
        for (auto& v : y) v = uniform(random);
        DeviceArray dx = DeviceArray::from_host(gpu, DType::float32, {n}, x.data(), stream);
        DeviceArray dy = DeviceArray::from_host(gpu, DType::float32, {n}, y.data(), stream);
        --waiting;
        while (waiting.load() > 0) std::this_thread::yield();  // first calls race each other
        auto z = kernels[static_cast<std::size_t>(t)]({dx, dy}, {}, options)[0].to_host_vector<float>(stream);
        const float k = static_cast<float>(t + 2);
        for (std::int64_t i = 0; i < n; ++i) {
          const auto u = static_cast<std::size_t>(i);
          const float want = x[u] * k - y[u];
          if (std::fabs(z[u] - want) > 1e-6f * (std::fabs(x[u] * k) + std::fabs(y[u]))) {
            return fail("element " + std::to_string(i) + " is " + std::to_string(z[u]) + ", want " + std::to_string(want));
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
  CHECK(engine.loaded_modules() == kThreads);
  CHECK(engine.cache().stats().compiles == kThreads);
  CHECK(engine.cache().stats().compile_failures == 0);
  for (const auto& loaded : engine.loaded()) CHECK(loaded.outcome == CacheOutcome::compiled);
}

}  // namespace kernc::gpu_test
