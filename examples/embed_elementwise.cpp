// Embedding kernc in a host program that owns its device memory: the buffers come from
// cudaMalloc (the CUDA runtime), kernc only wraps the pointers and launches on them.
// Exits 77 when there is no GPU (ctest reports that as skipped).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernc/kernels.hpp"

int main() {
  if (!kernc::Device::available()) {
    std::printf("embed_elementwise: no usable GPU, skipped\n");
    return 77;
  }
  const std::int64_t n = 1 << 20;
  std::vector<float> x(n), y(n);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (auto& v : x) v = uniform(rng);
  for (auto& v : y) v = uniform(rng);

  float *d_x = nullptr, *d_y = nullptr, *d_z = nullptr;
  if (cudaMalloc(&d_x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&d_y, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&d_z, n * sizeof(float)) != cudaSuccess) {
    std::printf("cudaMalloc failed\n");
    return 1;
  }
  cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_y, y.data(), n * sizeof(float), cudaMemcpyHostToDevice);

  try {
    kernc::ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "saxpy");
    auto view = [](float* p) { return kernc::ArrayRef::contiguous(p, kernc::DType::float32, {n}); };
    // Our own output buffer: kernc writes into it and allocates nothing.
    saxpy({2.0f, view(d_x), view(d_y)}, {view(d_z)});
    cudaDeviceSynchronize();
  } catch (const kernc::Error& error) {
    std::printf("kernc: %s\n", error.what());
    return 1;
  }
  std::vector<float> z(n);
  cudaMemcpy(z.data(), d_z, n * sizeof(float), cudaMemcpyDeviceToHost);
  double worst = 0;
  for (std::int64_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(double(z[i]) - (2.0 * x[i] + y[i])));
  cudaFree(d_x);
  cudaFree(d_y);
  cudaFree(d_z);
  std::printf("embed_elementwise: %lld elements, max abs error %.3g\n", static_cast<long long>(n), worst);
  return worst < 1e-5 ? 0 : 1;
}
