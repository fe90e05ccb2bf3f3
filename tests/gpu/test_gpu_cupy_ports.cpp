// CuPy user kernels ported verbatim (issue 13), run on fresh random data against host
// references. Their compile-only twins are in tests/unit/test_cupy_ports.cpp.

#include <complex>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {

TEST_CASE("CuPy port: size= with a raw input allocates a (size,) output and reverses it") {
  KERNC_GPU_RANDOM(random, "cupy size reverse");
  const ElementwiseKernel reverse("raw T x", "T y", "y = x[_ind.size() - i - 1]", "gpu_cupy_reverse");
  const std::int64_t n = 4099;
  auto x = random.uniform<float>(n);
  CallOptions call;
  call.size = n;
  auto out = reverse({upload(DType::float32, {n}, x)}, {}, call);
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape() == std::vector<std::int64_t>{n});
  auto y = download<float>(out[0]);
  for (std::int64_t k = 0; k < n; ++k) REQUIRE(y[k] == x[n - 1 - k]);
}

TEST_CASE("CuPy port: size= allocates a raw output of shape (size,)") {
  KERNC_GPU_RANDOM(random, "cupy raw output");
  const ElementwiseKernel twice("raw T x", "raw T y", "y[i] = x[i] * 2", "gpu_cupy_raw_out");
  const std::int64_t n = 1000, size = 777;
  auto x = random.uniform<double>(n);
  CallOptions call;
  call.size = size;
  auto out = twice({upload(DType::float64, {n}, x)}, {}, call);
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape() == std::vector<std::int64_t>{size});
  auto y = download<double>(out[0]);
  for (std::int64_t k = 0; k < size; ++k) REQUIRE(y[k] == 2 * x[k]);
}

TEST_CASE("CuPy port: inputs broadcast up to a larger output that is passed") {
  KERNC_GPU_RANDOM(random, "cupy broadcast to output");
  const ElementwiseKernel scale("T x, T a", "T y", "y = a * x", "gpu_cupy_to_output");
  const std::int64_t rows = 33, cols = 517;
  auto x = random.uniform<float>(cols);
  auto y = DeviceArray::empty(device(), DType::float32, {rows, cols});
  poison(y.ref());
  scale({upload(DType::float32, {cols}, x), 3.0f}, {y.ref()});
  auto got = download<float>(y);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) REQUIRE(got[r * cols + c] == 3.0f * x[c]);
  }
}

TEST_CASE("CuPy port: a raw 2-D input read through a ptrdiff_t multi-index (a transpose)") {
  KERNC_GPU_RANDOM(random, "cupy ptrdiff_t index");
  const ElementwiseKernel transpose("raw T x, int32 rows", "T y",
                                    "ptrdiff_t idx[] = {i % rows, i / rows};\ny = x[idx];", "gpu_cupy_transpose");
  const std::int64_t rows = 61, cols = 129;
  auto x = random.uniform<double>(rows * cols);
  auto y = DeviceArray::empty(device(), DType::float64, {cols, rows});
  transpose({upload(DType::float64, {rows, cols}, x), Scalar(static_cast<std::int32_t>(rows))}, {y.ref()});
  auto got = download<double>(y);
  for (std::int64_t c = 0; c < cols; ++c) {
    for (std::int64_t r = 0; r < rows; ++r) REQUIRE(got[c * rows + r] == x[r * cols + c]);
  }
}

TEST_CASE("CuPy port: a RawModule including <cuda/std/complex> and <cuda_fp16.h> runs") {
  KERNC_GPU_ONLY("CUDA toolkit headers (<cuda/std/complex>, <cuda_fp16.h>): the host compiler has none");
  KERNC_GPU_RANDOM(random, "cupy cccl include");
  const RawModule module(
      "#include <cuda/std/complex>\n"
      "#include <cuda_fp16.h>\n"
      "extern \"C\" __global__ void gpu_cupy_magnitude(const cuda::std::complex<float>* z, float* out, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = __half2float(__float2half(cuda::std::abs(z[i])));\n"
      "}\n");
  const int n = 5000;
  auto re = random.uniform<float>(n), im = random.uniform<float>(n);
  std::vector<std::complex<float>> z(n);
  for (int k = 0; k < n; ++k) z[k] = {re[k], im[k]};
  auto dz = upload(DType::complex64, {n}, z);
  auto out = DeviceArray::empty(device(), DType::float32, {n});
  LaunchConfig config;
  config.grid[0] = (n + 255) / 256;
  config.block[0] = 256;
  module.launch("gpu_cupy_magnitude", config, {dz, out, n});
  auto got = download<float>(out);
  for (int k = 0; k < n; ++k) {
    // Through binary16: 11 significant bits.
    REQUIRE(got[k] == doctest::Approx(std::abs(z[k])).epsilon(1.0 / 1024));
  }
}

}  // namespace kernc::gpu_test

namespace kernc::gpu_test {

TEST_CASE("CuPy port: an argmax whose reduce_type is a struct of the preamble, over each row") {
  KERNC_GPU_RANDOM(random, "cupy argmax");
  ReductionOptions options;
  options.preamble =
      "struct ValueIndex { float value; long long index; };\n"
      "__device__ ValueIndex pick(const ValueIndex& a, const ValueIndex& b) {\n"
      "  return (b.value > a.value || (b.value == a.value && b.index < a.index)) ? b : a;\n"
      "}\n";
  options.reduce_type = "ValueIndex";
  const ReductionKernel argmax("float32 x", "int64 y", "ValueIndex{x, (long long)_J}", "pick(a, b)", "y = a.index", "",
                               "gpu_cupy_argmax", options);
  const std::int64_t rows = 37, cols = 4133;
  auto x = random.uniform<float>(rows * cols);
  auto out = argmax({upload(DType::float32, {rows, cols}, x)}, std::vector<int>{1});
  REQUIRE(out.size() == 1);
  auto got = download<std::int64_t>(out[0]);
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t best = 0;
    for (std::int64_t c = 1; c < cols; ++c) {
      if (x[r * cols + c] > x[r * cols + best]) best = c;
    }
    REQUIRE(got[r] == best);
  }
}

TEST_CASE("CuPy port: loop_prep and after_loop written without a semicolon run, and block_size= is honoured") {
  KERNC_GPU_RANDOM(random, "cupy loop_prep");
  ElementwiseOptions options;
  options.loop_prep = "const T bias = static_cast<T>(blockDim.x)";  // CuPy adds the ';'
  options.after_loop = "(void)bias";
  const ElementwiseKernel add("T x", "T y", "y = x + bias", "gpu_cupy_loop_prep", options);
  for (unsigned block : {1u, 96u, 1024u}) {
    CAPTURE(block);
    const std::int64_t n = 20011;
    auto x = random.uniform<double>(n);
    CallOptions call;
    call.block_size = block;
    auto out = add({upload(DType::float64, {n}, x)}, {}, call);
    auto y = download<double>(out[0]);
    for (std::int64_t k = 0; k < n; ++k) REQUIRE(y[k] == x[k] + block);
  }
}

}  // namespace kernc::gpu_test
