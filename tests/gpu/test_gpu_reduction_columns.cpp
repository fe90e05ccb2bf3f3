// The reductions' columns kernel (NOTE [ reduction columns ], src/dsl/reduction_plan.cpp):
// outer and middle axes of float32, float16 (into a float32 sum), float64, int8 and int32
// inputs, each reduced once from an aligned buffer (the columns kernel) and once from the
// same elements one item further on (the one-output kernel): the two results must be the
// same bits, and match the host.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {
namespace {

using Shape = std::vector<std::int64_t>;

struct Layout2 {
  Shape shape;
  std::vector<int> axes;
};

// Shapes whose innermost kept extent is a multiple of 16 (every column count) and some whose
// is not (the one-output kernel throughout): outer axes with few and many outputs, a middle
// axis, two reduced axes; and a long outer axis with many outputs, whose rows the host
// backend cuts into chunks (a second pass).
const Layout2 kLayouts[] = {{{4099, 64}, {0}},   {{257, 2048}, {0}},  {{6, 1000, 48}, {1}},
                            {{33, 5, 17, 32}, {0, 2}}, {{1000, 24}, {0}}, {{999, 40}, {0}},
                            {{2053, 272}, {0}}};

// Host sums over `axes` of `x` (C order over `shape`), in double.
template <class T, class Value>
std::vector<double> host_sums(const std::vector<T>& x, const Shape& shape, const std::vector<int>& axes, Value value) {
  std::vector<std::int64_t> out_stride(shape.size(), 0);
  std::int64_t out_size = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    bool reduced = false;
    for (int a : axes) reduced = reduced || a == d;
    if (reduced) continue;
    out_stride[d] = out_size;
    out_size *= shape[d];
  }
  std::vector<double> out(out_size, 0.0);
  std::size_t flat = 0;
  for_each_index(shape, [&](const std::vector<std::int64_t>& index) {
    std::int64_t o = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) o += index[d] * out_stride[d];
    out[o] += value(x[flat++]);
  });
  return out;
}

// Uploads `x` twice: at the start of a buffer, and one item into another.
template <class T>
std::pair<DeviceArray, DeviceArray> aligned_and_offset(DType dtype, const std::vector<T>& x) {
  std::vector<T> shifted(1, T{});
  shifted.insert(shifted.end(), x.begin(), x.end());
  const auto n = static_cast<std::int64_t>(x.size());
  return {upload(dtype, {n}, x), upload(dtype, {n + 1}, shifted)};
}

template <class T>
std::pair<ArrayRef, ArrayRef> views(const std::pair<DeviceArray, DeviceArray>& buffers, DType dtype, const Shape& shape) {
  return {ArrayRef::contiguous(buffers.first.ref().data, dtype, shape),
          ArrayRef::contiguous(buffers.second.ref().data + sizeof(T), dtype, shape)};
}

}  // namespace

TEST_CASE("reduction columns: outer and middle axes give the one-output kernel's bits and the host's values") {
  KERNC_GPU_RANDOM(random, "reduction columns");
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "gpu_columns_sum");
  const ReductionKernel wide_sum("float16 x", "float32 y", "float(x)", "a + b", "y = a", "0", "gpu_columns_wide_sum");
  const ReductionKernel dot("float16 h, float32 f", "float32 y", "float(h) * f", "a + b", "y = a", "0",
                            "gpu_columns_mixed");
  for (const Layout2& c : kLayouts) {
    const std::int64_t n = element_count(c.shape);
    const std::string where = "shape of " + std::to_string(c.shape.size()) + " axes, last " +
                              std::to_string(c.shape.back()) + ", first " + std::to_string(c.shape.front());
    CAPTURE(where);
    {  // float32: 4 columns
      const auto x = random.uniform<float>(n);
      auto buffers = aligned_and_offset(DType::float32, x);
      auto [aligned, offset] = views<float>(buffers, DType::float32, c.shape);
      const auto got = download<float>(sum({aligned}, c.axes)[0]);
      expect_equal(got, download<float>(sum({offset}, c.axes)[0]), "float32: columns and one-output bits");
      const auto magnitude = host_sums(x, c.shape, c.axes, [](float v) { return std::fabs(static_cast<double>(v)); });
      expect_close(as_doubles(got), host_sums(x, c.shape, c.axes, [](float v) { return static_cast<double>(v); }), 1e-5,
                   "float32 sums", magnitude);
    }
    {  // float64: 2 columns
      const auto x = random.uniform<double>(n);
      auto buffers = aligned_and_offset(DType::float64, x);
      auto [aligned, offset] = views<double>(buffers, DType::float64, c.shape);
      const auto got = download<double>(sum({aligned}, c.axes)[0]);
      expect_equal(got, download<double>(sum({offset}, c.axes)[0]), "float64: columns and one-output bits");
      const auto magnitude = host_sums(x, c.shape, c.axes, [](double v) { return std::fabs(v); });
      expect_close(got, host_sums(x, c.shape, c.axes, [](double v) { return v; }), 1e-12, "float64 sums", magnitude);
    }
    {  // int8 (16 columns) and int32 (4): wrap-around sums in the input type, exact in any order
      const auto x8 = random.integers<std::int8_t>(n, -128, 127);
      auto buffers8 = aligned_and_offset(DType::int8, x8);
      auto [aligned8, offset8] = views<std::int8_t>(buffers8, DType::int8, c.shape);
      const auto got8 = download<std::int8_t>(sum({aligned8}, c.axes)[0]);
      expect_equal(got8, download<std::int8_t>(sum({offset8}, c.axes)[0]), "int8: columns and one-output");
      std::vector<std::int8_t> want8;
      for (double v : host_sums(x8, c.shape, c.axes, [](std::int8_t v) { return static_cast<double>(v); })) {
        want8.push_back(static_cast<std::int8_t>(static_cast<std::uint8_t>(static_cast<std::int64_t>(v) & 0xff)));
      }
      expect_equal(got8, want8, "int8 sums modulo 256");

      const auto x32 = random.integers<std::int32_t>(n, -100000, 100000);
      auto buffers32 = aligned_and_offset(DType::int32, x32);
      auto [aligned32, offset32] = views<std::int32_t>(buffers32, DType::int32, c.shape);
      std::vector<std::int32_t> want32;
      for (double v : host_sums(x32, c.shape, c.axes, [](std::int32_t v) { return static_cast<double>(v); })) {
        want32.push_back(static_cast<std::int32_t>(v));  // |sum| < 2^31 here: exact in double
      }
      expect_equal(download<std::int32_t>(sum({aligned32}, c.axes)[0]), want32, "int32 sums");
      expect_equal(download<std::int32_t>(sum({offset32}, c.axes)[0]), want32, "int32 sums, offset");
    }
    {  // float16 into float32 (8 columns), and float16 with float32 (4: 16 bytes of the wider)
      const auto h = random.halves(n);
      const auto f = random.uniform<float>(n);
      auto hb = aligned_and_offset(DType::float16, h);
      auto fb = aligned_and_offset(DType::float32, f);
      auto [ha, ho] = views<std::uint16_t>(hb, DType::float16, c.shape);
      auto [fa, fo] = views<float>(fb, DType::float32, c.shape);
      const auto got = download<float>(wide_sum({ha}, c.axes)[0]);
      expect_equal(got, download<float>(wide_sum({ho}, c.axes)[0]), "float16 -> float32: columns and one-output bits");
      auto half = [](std::uint16_t bits) { return static_cast<double>(half_to_float(bits)); };
      const auto magnitude = host_sums(h, c.shape, c.axes, [&](std::uint16_t v) { return std::fabs(half(v)); });
      expect_close(as_doubles(got), host_sums(h, c.shape, c.axes, half), 1e-5, "float16 sums", magnitude);

      const auto mixed = download<float>(dot({ha, fa}, c.axes)[0]);
      expect_equal(mixed, download<float>(dot({ho, fo}, c.axes)[0]), "float16 x float32: columns and one-output bits");
      std::vector<double> products(n), sizes(n);
      for (std::int64_t k = 0; k < n; ++k) {
        products[k] = half(h[k]) * f[k];
        sizes[k] = std::fabs(products[k]);
      }
      expect_close(as_doubles(mixed), host_sums(products, c.shape, c.axes, [](double v) { return v; }), 1e-5,
                   "float16 x float32 sums", host_sums(sizes, c.shape, c.axes, [](double v) { return v; }));
    }
  }
}

}  // namespace kernc::gpu_test
