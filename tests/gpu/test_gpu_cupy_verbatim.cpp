// CuPy's own kernels, second tier (issue 36), run on fresh random data against host
// references that compute what CuPy computes. Their GPU-free twins are in
// tests/unit/test_cupy_verbatim.cpp.

#include <complex>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {

namespace {

float half_value(std::uint16_t bits) { return half_to_float(bits); }

}  // namespace

TEST_CASE("CuPy verbatim: float16 x * y + x is computed in float and rounded once, as CuPy's float16") {
  KERNC_GPU_RANDOM(random, "verbatim half float");
  const ElementwiseKernel cupy("T x, T y", "T z", "z = x * y + x", "gpu_verbatim_half");
  ElementwiseOptions native_options;
  native_options.native_half_arithmetic = true;
  const ElementwiseKernel native("T x, T y", "T z", "z = x * y + x", "gpu_verbatim_half_native", native_options);
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    auto x = random.halves(n, -4.0, 4.0);
    auto y = random.halves(n, -4.0, 4.0);
    auto dx = upload(DType::float16, {n}, x);
    auto dy = upload(DType::float16, {n}, y);
    auto got = download<std::uint16_t>(cupy({dx, dy})[0]);
    auto got_native = download<std::uint16_t>(native({dx, dy})[0]);
    std::int64_t differ = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      const float fx = half_value(x[k]), fy = half_value(y[k]);
      // CuPy: one rounding, of the float result (the product of two halves is exact in
      // float, so a fused multiply-add gives the same float).
      const std::uint16_t once = float_to_half(fx * fy + fx);
      // Native: the product rounded to half, then the sum.
      const std::uint16_t each = float_to_half(half_value(float_to_half(fx * fy)) + fx);
      REQUIRE_MESSAGE(got[k] == once, "element " << k << ": x " << fx << " y " << fy);
      REQUIRE_MESSAGE(got_native[k] == each, "element " << k << ": x " << fx << " y " << fy);
      differ += once != each;
    }
    // The two semantics must really differ on such data, or this test tells nothing.
    if (n > 1000) CHECK(differ > n / 100);
  }
}

TEST_CASE("CuPy verbatim: with reduce_dims=False, _ind.get() indexes the broadcast shape with its extent-1 axes") {
  KERNC_GPU_RANDOM(random, "verbatim reduce dims");
  ElementwiseOptions keep;
  keep.reduce_dims = false;
  const ElementwiseKernel coords("T x", "T y",
                                 "const auto* c = _ind.get();\n"
                                 "y = x + c[0] * 1000 + c[1] * 100 + c[2] * 10 + c[3]",
                                 "gpu_verbatim_coords", keep);
  const std::int64_t rows = 3, cols = 4;
  auto x = random.uniform<float>(rows * cols);
  auto y = poisoned(DType::float32, {2, 1, rows, cols});
  coords({upload(DType::float32, {rows, cols}, x)}, {y.ref()});
  auto got = download<float>(y);
  std::vector<float> want;
  for_each_index({2, 1, rows, cols}, [&](const std::vector<std::int64_t>& c) {
    want.push_back(x[c[2] * cols + c[3]] + static_cast<float>(c[0] * 1000 + c[1] * 100 + c[2] * 10 + c[3]));
  });
  expect_equal(got, want, "y");
}

TEST_CASE("CuPy verbatim: an output read back through its raw view sees the value just assigned") {
  KERNC_GPU_RANDOM(random, "verbatim raw readback");
  const ElementwiseKernel readback("T x", "T y, T z", "y = x * 2; z = _raw_y[i] + 1", "gpu_verbatim_readback");
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    auto x = random.uniform<float>(n);
    auto out = readback({upload(DType::float32, {n}, x)});
    auto y = download<float>(out[0]);
    auto z = download<float>(out[1]);
    std::vector<float> want_y(x.size()), want_z(x.size());
    for (std::size_t k = 0; k < x.size(); ++k) {
      want_y[k] = x[k] * 2;
      want_z[k] = want_y[k] + 1;
    }
    expect_equal(y, want_y, "y");
    expect_equal(z, want_z, "z");
  }
}

TEST_CASE("CuPy verbatim: a reduction's _j is CuPy's flat input index, _J * out_size + _i") {
  KERNC_GPU_RANDOM(random, "verbatim reduction j");
  const ReductionKernel weighted("T x", "T y", "x * (_j % 7) + _J", "a + b", "y = a", "0", "gpu_verbatim_j");
  const std::int64_t rows = 37, cols = 1029;
  auto x = random.integers<std::int32_t>(rows * cols, -100, 100);
  auto dx = upload(DType::int32, {rows, cols}, x);
  for (int axis : {0, 1}) {
    CAPTURE(axis);
    const std::int64_t out_size = axis == 1 ? rows : cols, reduce_size = axis == 1 ? cols : rows;
    auto got = download<std::int32_t>(weighted({dx}, std::vector<int>{axis})[0]);
    std::vector<std::int32_t> want(static_cast<std::size_t>(out_size), 0);
    for (std::int64_t i = 0; i < out_size; ++i) {
      for (std::int64_t J = 0; J < reduce_size; ++J) {
        const std::int64_t r = axis == 1 ? i : J, c = axis == 1 ? J : i;
        want[i] += x[r * cols + c] * static_cast<std::int32_t>((J * out_size + i) % 7) + static_cast<std::int32_t>(J);
      }
    }
    expect_equal(got, want, "y");
  }
}

TEST_CASE("CuPy verbatim: a raw array indexed with a braced list, x[{i % rows, i / rows}]") {
  KERNC_GPU_RANDOM(random, "verbatim brace index");
  const ElementwiseKernel transpose("raw T x, int32 rows", "T y", "y = x[{i % rows, i / rows}]", "gpu_verbatim_brace");
  const std::int64_t rows = 61, cols = 129;
  auto x = random.uniform<double>(rows * cols);
  auto y = poisoned(DType::float64, {cols, rows});
  transpose({upload(DType::float64, {rows, cols}, x), Scalar(static_cast<std::int32_t>(rows))}, {y.ref()});
  auto got = download<double>(y);
  std::vector<double> want;
  for (std::int64_t c = 0; c < cols; ++c) {
    for (std::int64_t r = 0; r < rows; ++r) want.push_back(x[r * cols + c]);
  }
  expect_equal(got, want, "y");
}

TEST_CASE("CuPy verbatim: a template instance k<float *> takes the array for its T parameter") {
  KERNC_GPU_RANDOM(random, "verbatim template pointer");
  const RawModule module(R"(
template <typename T>
__global__ void twice(T p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 2 * p[i];
}
)",
                         {}, {"twice<float *>"}, "gpu_verbatim_template");
  const std::int64_t n = 1001;
  auto x = random.uniform<float>(n);
  auto dx = upload(DType::float32, {n}, x);
  LaunchConfig config;
  config.grid[0] = 4;
  config.block[0] = 256;
  module.launch("twice<float *>", config, {dx, static_cast<int>(n)});
  auto got = download<float>(dx);
  std::vector<float> want(x.size());
  for (std::size_t k = 0; k < x.size(); ++k) want[k] = 2 * x[k];
  expect_equal(got, want, "p");
}

TEST_CASE("CuPy verbatim: CuPy's test_addf_scalar, cuCadd on cuComplex values (translate_cucomplex)") {
  KERNC_GPU_ONLY("<cuComplex.h> (which translate_cucomplex includes) is a CUDA toolkit header: the host compiler "
                 "has none, or finds a stray one in /usr/local/include that clashes with host_cuda.cuh's vector types");
  KERNC_GPU_RANDOM(random, "verbatim cucomplex");
  const RawKernel add(R"(#include <cuComplex.h>
#define N 100
extern "C" __global__ void test_addf_scalar(cuComplex* arr, cuComplex scalar, cuComplex* out) {
  int tid = blockDim.x * blockIdx.x + threadIdx.x;
  if (tid < N) out[tid] = cuCadd(arr[tid], scalar);
}
)",
                      "test_addf_scalar");
  const std::int64_t n = 100;
  auto a = random.complex64(n);
  auto out = poisoned(DType::complex64, {n});
  LaunchConfig config;
  config.grid[0] = 1;
  config.block[0] = 128;
  const std::complex<float> b(2.0f, 3.0f);  // CuPy's cupy.complex64(2 + 3j)
  add(config, {upload(DType::complex64, {n}, a), b, out.ref()});
  auto got = download<std::complex<float>>(out);
  std::vector<float> got_parts, want_parts;  // real and imaginary parts, exactly
  for (std::size_t k = 0; k < a.size(); ++k) {
    const std::complex<float> want = a[k] + b;
    got_parts.insert(got_parts.end(), {got[k].real(), got[k].imag()});
    want_parts.insert(want_parts.end(), {want.real(), want.imag()});
  }
  expect_equal(got_parts, want_parts, "out");
}

TEST_CASE("CuPy verbatim: log1p, log2, expm1, rint, min and max of complex128 as CuPy's complex.cuh defines them") {
  KERNC_GPU_RANDOM(random, "verbatim complex extras");
  const ElementwiseKernel extras("T z, T u", "T a, T b, T c, T d, T e",
                                 "a = log1p(z); b = log2(z); c = expm1(z); d = rint(z * 3.0); e = max(z, u) - min(z, u)",
                                 "gpu_verbatim_complex_extras");
  const std::int64_t n = 1001;
  auto z = random.uniform<double>(2 * n, -2.0, 2.0);
  auto u = random.uniform<double>(2 * n, -2.0, 2.0);
  for (std::int64_t k = 0; k < n; k += 10) u[2 * k] = z[2 * k];  // ties on the real part
  std::vector<std::complex<double>> zc(n), uc(n);
  for (std::int64_t k = 0; k < n; ++k) {
    zc[k] = {z[2 * k], z[2 * k + 1]};
    uc[k] = {u[2 * k], u[2 * k + 1]};
  }
  auto out = extras({upload(DType::complex128, {n}, zc), upload(DType::complex128, {n}, uc)});
  std::vector<double> got, want, scale;
  auto add = [&](std::complex<double> g, std::complex<double> w) {
    got.insert(got.end(), {g.real(), g.imag()});
    want.insert(want.end(), {w.real(), w.imag()});
    scale.insert(scale.end(), {std::abs(w), std::abs(w)});
  };
  std::vector<std::vector<std::complex<double>>> results;
  for (auto& array : out) results.push_back(download<std::complex<double>>(array));
  auto lexicographic_less = [](std::complex<double> x, std::complex<double> y) {
    return x.real() != y.real() ? x.real() < y.real() : x.imag() < y.imag();
  };
  for (std::int64_t k = 0; k < n; ++k) {
    const auto x = zc[k], y = uc[k];
    add(results[0][k], std::log(x + 1.0));
    add(results[1][k], std::log(x) / std::log(2.0));
    add(results[2][k], std::exp(x) - 1.0);
    add(results[3][k], {std::rint(x.real() * 3.0), std::rint(x.imag() * 3.0)});
    const auto big = lexicographic_less(x, y) ? y : x, small = lexicographic_less(x, y) ? x : y;
    add(results[4][k], big - small);
  }
  // A few ulp of double: CUDA's log, exp and their complex composition (no cancellation is
  // judged against a result smaller than its terms: `scale` is |result|).
  expect_close(got, want, 1e-13, "complex extras", scale);
}

}  // namespace kernc::gpu_test
