// A custom reduction: the L2 norm of each row of a matrix, and of the whole matrix,
// with a float64 accumulator for float32 data. Exits 77 without a GPU;
// KERNC_RUNTIME=cpu runs it on the host.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"

int main() {
  // KERNC_RUNTIME=cpu runs the kernels on the host's own cores instead (Backend::cpu).
  const bool on_host = kernc::Config::from_environment().runtime.value == "cpu";
  if (!kernc::Device::available("", on_host ? kernc::Backend::cpu : kernc::Backend::cuda)) {
    std::printf("custom_reduction: no usable GPU, skipped\n");
    return 77;
  }
  const std::int64_t rows = 1000, cols = 4097;
  std::vector<float> host(rows * cols);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (auto& v : host) v = uniform(rng);
  try {
    kernc::ReductionOptions options;
    options.reduce_type = "float64";
    kernc::ReductionKernel l2("T x", "float64 y", "double(x) * double(x)", "a + b", "y = sqrt(a)", "0", "l2_norm",
                              options);
    auto device = kernc::Engine::global().device();
    auto matrix = kernc::DeviceArray::from_host(device, kernc::DType::float32, {rows, cols}, host.data());
    auto per_row = l2({matrix}, std::vector<int>{1})[0].to_host_vector<double>();
    auto total = l2({matrix})[0].to_host_vector<double>();
    double worst = 0, all = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (std::int64_t c = 0; c < cols; ++c) sum += double(host[r * cols + c]) * host[r * cols + c];
      all += sum;
      worst = std::max(worst, std::fabs(per_row[r] - std::sqrt(sum)) / std::sqrt(sum));
    }
    double total_error = std::fabs(total[0] - std::sqrt(all)) / std::sqrt(all);
    std::printf("custom_reduction: row norms max rel error %.3g, total %.6f (rel error %.3g)\n", worst, total[0],
                total_error);
    return worst < 1e-12 && total_error < 1e-12 ? 0 : 1;
  } catch (const kernc::Error& error) {
    std::printf("kernc: %s\n", error.what());
    return 1;
  }
}
