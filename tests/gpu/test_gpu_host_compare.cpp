// The host backend against the GPU: the same kernel objects called on the same random
// data on GPU 0 and on the cpu device (CallOptions::backend), results compared.
// NOTE [ host and GPU results ]
// Integer kernels agree bit for bit: integer arithmetic is defined the same way on both.
// Floating point agrees within a bound that says why it differs:
//  - elementwise float arithmetic: NVRTC contracts a * b + c into a fused multiply-add
//    (--fmad=true), the host never does (-ffp-contract=off, NOTE [ host compiler ]), so a
//    result may differ by a rounding of the product (rtol 2^-22);
//  - math functions: CUDA's sinf/expf/... have documented errors of up to 2 ulp (CUDA C
//    Programming Guide, "Mathematical Functions"), glibc's are within 1 ulp: rtol 2^-20;
//  - reductions of floats: the GPU and the host add in different orders (tree over
//    warps and blocks; lanes over fixed chunks), so a sum of n terms differs by up to
//    about n * 2^-24 of the sum of magnitudes; the bound used is 1e-5 of it;
//  - float16 stores round the same float result once: equal unless the float results
//    differed, then by one half ulp (rtol 2^-10).

#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {
namespace {

Device host() { return kernc::device(0, Backend::cpu); }

CallOptions on_host() {
  CallOptions options;
  options.backend = Backend::cpu;
  return options;
}

// Both devices, or a message saying why the comparison cannot run.
bool have_both() {
  if (device().backend() == Backend::cpu) {
    MESSAGE("skipped: this compares the host backend with a GPU, and this run's device is the host");
    return false;
  }
  return true;
}

template <class T>
DeviceArray on(const Device& where, DType dtype, const std::vector<std::int64_t>& shape, const std::vector<T>& values) {
  return DeviceArray::from_host(where, dtype, shape, values.data());
}

template <class T>
std::vector<double> as_doubles(const std::vector<T>& values) {
  return std::vector<double>(values.begin(), values.end());
}

TEST_CASE("host vs gpu: integer elementwise kernels agree bit for bit") {
  if (!have_both()) return;
  KERNC_GPU_RANDOM(random, "host vs gpu int elementwise");
  const std::int64_t n = 100'003;
  const auto x = random.integers<std::int32_t>(n, -1'000'000, 1'000'000);
  const auto y = random.integers<std::int32_t>(n, -50, 50);
  const ElementwiseKernel mix("T x, T y", "T z", "z = (x * 7 + y) ^ (x >> 2); if (y != 0) z += x / y - x % y;",
                              "compare_int_mix");
  const auto gpu = mix({on(device(), DType::int32, {n}, x), on(device(), DType::int32, {n}, y)}).front();
  const auto cpu = mix({on(host(), DType::int32, {n}, x), on(host(), DType::int32, {n}, y)}, {}, on_host()).front();
  CHECK(cpu.device().backend() == Backend::cpu);
  expect_equal(cpu.to_host_vector<std::int32_t>(), gpu.to_host_vector<std::int32_t>(), "int32 mix");
}

TEST_CASE("host vs gpu: integer reductions over every axis agree bit for bit") {
  if (!have_both()) return;
  KERNC_GPU_RANDOM(random, "host vs gpu int reductions");
  const std::vector<std::int64_t> shape{37, 129, 65};
  const auto x = random.integers<std::int32_t>(37 * 129 * 65, -100'000, 100'000);
  const ReductionKernel sum("T x", "int64 y", "x", "a + b", "y = a", "0", "compare_int_sum");
  const ReductionKernel largest("T x", "T y", "x", "a > b ? a : b", "y = a", "", "compare_int_max");
  const auto gpu_x = on(device(), DType::int32, shape, x), cpu_x = on(host(), DType::int32, shape, x);
  for (const auto& axes : std::vector<std::optional<std::vector<int>>>{std::nullopt, {{0}}, {{1}}, {{2}}, {{0, 2}}}) {
    const std::string what = axes ? "axes of size " + std::to_string(axes->size()) + " first " + std::to_string(axes->front())
                                   : std::string("every axis");
    CAPTURE(what);
    expect_equal(sum({cpu_x}, axes, false, {}, on_host()).front().to_host_vector<std::int64_t>(),
                 sum({gpu_x}, axes).front().to_host_vector<std::int64_t>(), "int64 sum, " + what);
    expect_equal(largest({cpu_x}, axes, false, {}, on_host()).front().to_host_vector<std::int32_t>(),
                 largest({gpu_x}, axes).front().to_host_vector<std::int32_t>(), "int32 max, " + what);
  }
}

TEST_CASE("host vs gpu: a raw kernel with shared memory, barriers, shuffles and atomics agrees bit for bit") {
  if (!have_both()) return;
  KERNC_GPU_RANDOM(random, "host vs gpu raw block reduction");
  const RawKernel block_sum(R"(
extern "C" __global__ void block_sum(const int* x, unsigned long long* total, int* per_block, int n) {
  __shared__ int partial[8];
  int sum = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) sum += x[i];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    int block = 0;
    for (int w = 0; w < blockDim.x / 32; ++w) block += partial[w];
    per_block[blockIdx.x] = block;
    atomicAdd(total, (unsigned long long)(long long)block);
  }
}
)",
                                "block_sum");
  const int n = 1'000'003, blocks = 40;
  const auto x = random.integers<std::int32_t>(n, -1000, 1000);
  LaunchConfig config;
  config.grid[0] = blocks;
  config.block[0] = 256;
  auto run = [&](const Device& where, const CallOptions& options) {
    auto input = on(where, DType::int32, {n}, x);
    auto total = on(where, DType::uint64, {1}, std::vector<std::uint64_t>{0});
    auto per_block = DeviceArray::empty(where, DType::int32, {blocks});
    block_sum(config, {input, total, per_block, n}, options);
    return std::make_pair(total.to_host_vector<std::uint64_t>(), per_block.to_host_vector<std::int32_t>());
  };
  const auto gpu = run(device(), {});
  const auto cpu = run(host(), on_host());
  expect_equal(cpu.first, gpu.first, "total");
  expect_equal(cpu.second, gpu.second, "per block");
  long long expected = 0;
  for (int v : x) expected += v;
  CHECK(static_cast<long long>(cpu.first.front()) == expected);
}

TEST_CASE("host vs gpu: float kernels agree within the documented bounds") {
  if (!have_both()) return;
  KERNC_GPU_RANDOM(random, "host vs gpu float");
  const std::int64_t n = 200'001;
  const auto x = random.uniform<float>(n), y = random.uniform<float>(n);
  const ElementwiseKernel fused("T x, T y", "T z", "z = x * y + x", "compare_fma");
  const ElementwiseKernel math("T x, T y", "T z", "z = sinf(x) * expf(y) + sqrtf(fabsf(x))", "compare_math");
  auto both = [&](const ElementwiseKernel& kernel) {
    const auto gpu = kernel({on(device(), DType::float32, {n}, x), on(device(), DType::float32, {n}, y)}).front();
    const auto cpu =
        kernel({on(host(), DType::float32, {n}, x), on(host(), DType::float32, {n}, y)}, {}, on_host()).front();
    return std::make_pair(as_doubles(cpu.to_host_vector<float>()), as_doubles(gpu.to_host_vector<float>()));
  };
  const std::vector<double> unit(static_cast<std::size_t>(n), 1.0);
  const auto [fma_cpu, fma_gpu] = both(fused);
  expect_close(fma_cpu, fma_gpu, std::ldexp(1.0, -22), "x * y + x", unit);
  const auto [math_cpu, math_gpu] = both(math);
  expect_close(math_cpu, math_gpu, std::ldexp(1.0, -20), "sinf * expf + sqrtf", unit);

  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "compare_float_sum");
  const double gpu_sum = sum({on(device(), DType::float32, {n}, x)}).front().to_host_vector<float>().front();
  const double cpu_sum =
      sum({on(host(), DType::float32, {n}, x)}, std::nullopt, false, {}, on_host()).front().to_host_vector<float>().front();
  double magnitude = 0;
  for (float v : x) magnitude += std::fabs(v);
  CHECK(std::fabs(cpu_sum - gpu_sum) <= 1e-5 * magnitude);

  const auto hx = random.halves(n), hy = random.halves(n);
  const ElementwiseKernel half_fma("T x, T y", "T z", "z = x * y + x", "compare_half");
  const auto gpu_half = half_fma({on(device(), DType::float16, {n}, hx), on(device(), DType::float16, {n}, hy)}).front();
  const auto cpu_half =
      half_fma({on(host(), DType::float16, {n}, hx), on(host(), DType::float16, {n}, hy)}, {}, on_host()).front();
  expect_close(halves_as_doubles(cpu_half.to_host_vector<std::uint16_t>()),
               halves_as_doubles(gpu_half.to_host_vector<std::uint16_t>()), std::ldexp(1.0, -10), "float16 x * y + x",
               unit);

  const auto cx = random.complex64(n), cy = random.complex64(n);
  const ElementwiseKernel product("T x, T y", "T z", "z = x * y", "compare_complex");
  const auto gpu_c = product({on(device(), DType::complex64, {n}, cx), on(device(), DType::complex64, {n}, cy)}).front();
  const auto cpu_c =
      product({on(host(), DType::complex64, {n}, cx), on(host(), DType::complex64, {n}, cy)}, {}, on_host()).front();
  std::vector<double> gpu_parts, cpu_parts;
  for (const auto& v : gpu_c.to_host_vector<std::complex<float>>()) {
    gpu_parts.push_back(v.real());
    gpu_parts.push_back(v.imag());
  }
  for (const auto& v : cpu_c.to_host_vector<std::complex<float>>()) {
    cpu_parts.push_back(v.real());
    cpu_parts.push_back(v.imag());
  }
  expect_close(cpu_parts, gpu_parts, std::ldexp(1.0, -21), "complex64 x * y",
               std::vector<double>(gpu_parts.size(), 1.0));
}

}  // namespace
}  // namespace kernc::gpu_test
