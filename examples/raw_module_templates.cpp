// A RawModule with templated kernels reached through name expressions, and a
// __constant__ table filled from the host. Exits 77 without a GPU;
// KERNC_RUNTIME=cpu runs it on the host.
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"

static const char* kSource = R"(
__constant__ double coefficients[4];

template <typename T>
__global__ void polynomial(const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    T v = x[i];
    y[i] = T(coefficients[0]) + v * (T(coefficients[1]) + v * (T(coefficients[2]) + v * T(coefficients[3])));
  }
}
)";

int main() {
  // KERNC_RUNTIME=cpu runs the kernels on the host's own cores instead (Backend::cpu).
  const bool on_host = kernc::Config::from_environment().runtime.value == "cpu";
  if (!kernc::Device::available("", on_host ? kernc::Backend::cpu : kernc::Backend::cuda)) {
    std::printf("raw_module_templates: no usable GPU, skipped\n");
    return 77;
  }
  try {
    kernc::RawModule module(kSource, {}, {"polynomial<float>", "polynomial<double>"});
    auto device = kernc::Engine::global().device();
    const double coefficients[4] = {1.0, -2.0, 0.5, 0.25};
    auto [address, bytes] = module.get_global("coefficients");
    device.copy_to_device(address, coefficients, bytes);

    const int n = 10001;
    std::vector<double> x(n);
    for (int i = 0; i < n; ++i) x[i] = -1.0 + 2.0 * i / (n - 1);
    auto dx = kernc::DeviceArray::from_host(device, kernc::DType::float64, {n}, x.data());
    auto dy = kernc::DeviceArray::empty(device, kernc::DType::float64, {n});
    kernc::LaunchConfig config;
    config.block[0] = 256;
    config.grid[0] = (n + 255) / 256;
    module.launch("polynomial<double>", config, {dx, dy, n});
    auto y = dy.to_host_vector<double>();
    double worst = 0;
    for (int i = 0; i < n; ++i) {
      double v = x[i];
      worst = std::max(worst, std::fabs(y[i] - (1.0 + v * (-2.0 + v * (0.5 + v * 0.25)))));
    }
    std::printf("raw_module_templates: polynomial<double> is %s, max abs error %.3g\n",
                module.get_function("polynomial<double>").name().c_str(), worst);
    return worst < 1e-12 ? 0 : 1;
  } catch (const kernc::Error& error) {
    std::printf("kernc: %s\n", error.what());
    return 1;
  }
}
