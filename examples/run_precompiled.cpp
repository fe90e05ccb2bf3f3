// The second half of the precompile-in-CI flow (see precompile_flow.sh): run kernels of
// examples/kernels.json from a cache that `kernc precompile` filled on a machine without
// a GPU, and report how many compiles that took — zero when the cache was complete.
// Usage: run_precompiled SPEC CACHE_DIR. Exits 77 without a GPU;
// KERNC_RUNTIME=cpu runs it on the host.
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"
#include "kernc/spec_file.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: run_precompiled SPEC CACHE_DIR\n");
    return 2;
  }
  // KERNC_RUNTIME=cpu runs the kernels on the host's own cores instead (Backend::cpu).
  const bool on_host = kernc::Config::from_environment().runtime.value == "cpu";
  if (!kernc::Device::available("", on_host ? kernc::Backend::cpu : kernc::Backend::cuda)) {
    std::printf("run_precompiled: no usable GPU, skipped\n");
    return 77;
  }
  try {
    kernc::Config config = kernc::Config::from_environment();
    config.cache_dir.set(argv[2], "command line");
    kernc::Engine engine(config);
    kernc::CallOptions options;
    options.engine = &engine;
    kernc::Spec spec = kernc::load_spec(argv[1]);
    const auto& saxpy = std::get<kernc::ElementwiseKernel>(spec.find("saxpy").kernel);
    const auto& sum_of_squares = std::get<kernc::ReductionKernel>(spec.find("sum_of_squares").kernel);

    auto device = engine.device();
    const std::int64_t n = 1 << 16;
    std::vector<float> x(n), y(n);
    for (std::int64_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>(std::sin(0.001 * i));
      y[i] = static_cast<float>(std::cos(0.002 * i));
    }
    auto dx = kernc::DeviceArray::from_host(device, kernc::DType::float32, {n}, x.data());
    auto dy = kernc::DeviceArray::from_host(device, kernc::DType::float32, {n}, y.data());
    auto z = saxpy({3.0f, dx, dy}, {}, options)[0];
    auto s = sum_of_squares({z}, std::nullopt, false, {}, options)[0].to_host_vector<float>();
    double expected = 0;
    for (std::int64_t i = 0; i < n; ++i) expected += (3.0 * x[i] + y[i]) * (3.0 * x[i] + y[i]);
    auto stats = engine.cache().stats();
    std::printf("run_precompiled: sum of squares %.6g (expected %.6g); compiles: %llu, disk hits: %llu\n", s[0], expected,
                static_cast<unsigned long long>(stats.compiles), static_cast<unsigned long long>(stats.disk_hits));
    bool right = std::fabs(s[0] - expected) / expected < 1e-4;
    return right && stats.compiles == 0 ? 0 : 1;
  } catch (const kernc::Error& error) {
    std::printf("kernc: %s\n", error.what());
    return 1;
  }
}
