// The precompile flow on a GPU: precompile examples/kernels.json into a fresh cache for
// this device's target, then call its kernels through an Engine on that cache. Every
// call must be answered by the cache (no compile), and give the right results.

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "gpu_helpers.hpp"
#include "kernc/config.hpp"
#include "kernc/spec_file.hpp"

namespace kernc::gpu_test {

TEST_CASE("precompile of examples/kernels.json serves saxpy, sum_of_squares and raw kernels without compiling") {
  KERNC_GPU_RANDOM(random, "precompile flow");
  TempDir dir;
  Config config = Config::from_environment();
  config.cache_dir.set(dir.path() + "/cache", "test");
  config.cache_disabled.set(false, "test");
  Engine engine(config);
  REQUIRE_MESSAGE(engine.cache().disk_problem().empty(), engine.cache().disk_problem());
  Device dev = engine.device(0);
  const Target target = dev.target();
  INFO("target " << target.str());

  const Spec spec = load_spec(std::string(KERNC_SOURCE_DIR) + "/examples/kernels.json");
  const unsigned jobs = std::max(2u, std::thread::hardware_concurrency());
  const PrecompileSummary summary =
      precompile(spec, {target}, engine.cache(), [&](Backend backend) -> const Compiler& { return engine.compiler(backend); },
                 jobs);
  std::string failures;
  for (const auto& failure : summary.failures) {
    failures += "\n  " + failure.kernel + " " + failure.description + ": " +
                (failure.error ? failure.error->what() : "?");
  }
  CHECK_MESSAGE(summary.failed == 0, summary.failed << " variant(s) failed:" << failures);
  CHECK(summary.total == spec.variants().size());
  CHECK(summary.compiled + summary.hits == summary.total);
  MESSAGE("precompiled " << summary.total << " variants for " << target.str() << " in " << summary.seconds << " s");

  const CacheStats before = engine.cache().stats();
  const std::size_t modules_before = engine.loaded_modules();
  CallOptions options;
  options.engine = &engine;

  // saxpy, "scalar float32, float32, float32 -> float32": contiguous, then strided (transposed).
  const auto& saxpy = std::get<ElementwiseKernel>(spec.find("saxpy").kernel);
  const std::int64_t n = 1001;
  const auto x = random.uniform<float>(n);
  const auto y = random.uniform<float>(n);
  const auto dx = upload(DType::float32, {n}, x);
  const auto dy = upload(DType::float32, {n}, y);
  std::vector<double> want(x.size()), scale(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    want[i] = 2.5 * x[i] + y[i];
    scale[i] = 2.5 * std::fabs(x[i]) + std::fabs(y[i]);
  }
  auto z = saxpy({2.5f, dx, dy}, {}, options);
  expect_close(as_doubles(download<float>(z[0])), want, 1e-5, "saxpy from the spec", scale);
  auto out = poisoned(DType::float32, {n});
  saxpy({2.5f, dx, dy}, {out}, options);
  expect_close(as_doubles(download<float>(out)), want, 1e-5, "saxpy from the spec into a passed output", scale);
  const auto x2 = random.uniform<float>(77 * 13);
  const auto y2 = random.uniform<float>(77 * 13);
  const auto dx2 = upload(DType::float32, {77, 13}, x2);
  const auto dy2 = upload(DType::float32, {13, 77}, y2);
  const ArrayRef x2t = dx2.ref().transposed();
  const auto x2t_host = host_view(x2, dx2.ref().data, x2t);
  std::vector<double> want2(y2.size()), scale2(y2.size());
  for (std::size_t i = 0; i < y2.size(); ++i) {
    want2[i] = 2.5 * x2t_host[i] + y2[i];
    scale2[i] = 2.5 * std::fabs(x2t_host[i]) + std::fabs(y2[i]);  // the terms' size bounds a rounding
  }
  expect_close(as_doubles(download<float>(saxpy({2.5f, x2t, dy2}, {}, options)[0])), want2, 1e-5,
               "saxpy from the spec on a transposed input (strided layout)", scale2);

  // sum_of_squares, "float32 -> float32": full (contiguous) and over axis 0 (generic).
  const auto& sum_of_squares = std::get<ReductionKernel>(spec.find("sum_of_squares").kernel);
  long double total = 0;
  for (auto v : x) total += static_cast<long double>(v) * v;
  expect_close(as_doubles(download<float>(sum_of_squares({dx}, std::nullopt, false, {}, options)[0])),
               {static_cast<double>(total)}, 1e-5, "sum_of_squares from the spec");
  std::vector<double> columns(13, 0.0);
  for (std::size_t i = 0; i < x2.size(); ++i) columns[i % 13] += static_cast<double>(x2[i]) * x2[i];
  expect_close(as_doubles(download<float>(sum_of_squares({dx2}, std::vector<int>{0}, false, {}, options)[0])), columns,
               1e-5, "sum_of_squares from the spec over axis 0");

  // The raw kernel "fill" and the module "scaling" (axpby<float>).
  const auto& fill = std::get<RawKernel>(spec.find("fill").kernel);
  auto filled = poisoned(DType::float32, {n});
  LaunchConfig launch;
  launch.block[0] = 256;
  launch.grid[0] = static_cast<unsigned>((n + 255) / 256);
  fill(launch, {filled, 0.75f, n}, options);
  expect_equal(download<float>(filled), std::vector<float>(static_cast<std::size_t>(n), 0.75f), "fill from the spec");
  const auto& scaling = std::get<RawModule>(spec.find("scaling").kernel);
  auto yy = upload(DType::float32, {n}, y);
  scaling.launch("axpby<float>", launch, {2.0f, dx, -1.0f, yy, n}, options);
  std::vector<double> axpby(x.size()), axpby_scale(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    axpby[i] = 2.0 * x[i] - y[i];
    axpby_scale[i] = 2.0 * std::fabs(x[i]) + std::fabs(y[i]);
  }
  expect_close(as_doubles(download<float>(yy)), axpby, 1e-6, "axpby<float> from the spec", axpby_scale);

  const CacheStats after = engine.cache().stats();
  CHECK_MESSAGE(after.compiles == before.compiles,
                (after.compiles - before.compiles) << " compile(s) after precompiling: a call asked for a program the spec "
                                                    "did not produce");
  CHECK(after.compile_failures == before.compile_failures);
  CHECK(after.memory_hits + after.disk_hits > before.memory_hits + before.disk_hits);
  CHECK(engine.loaded_modules() > modules_before);

  // A second engine on the same directory finds everything on disk.
  Engine second(config);
  CallOptions second_options;
  second_options.engine = &second;
  const Spec again = load_spec(std::string(KERNC_SOURCE_DIR) + "/examples/kernels.json");
  const auto& saxpy_again = std::get<ElementwiseKernel>(again.find("saxpy").kernel);
  expect_close(as_doubles(download<float>(saxpy_again({2.5f, dx, dy}, {}, second_options)[0])), want, 1e-5,
               "saxpy through a second engine", scale);
  CHECK(second.cache().stats().compiles == 0);
  CHECK(second.cache().stats().disk_hits >= 1);
}

}  // namespace kernc::gpu_test
