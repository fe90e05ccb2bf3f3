// The 8-bit floats on a GPU (issue 32): a quantize/dequantize elementwise kernel with a
// scale (float32 -> float8_e4m3fn / float8_e5m2 and back), every one of the 256 codes
// decoded, and encodes of floats and doubles at every value, midpoint and edge, each
// compared bit for bit with the reference of tests/unit/float8_reference.hpp (cuda_fp8.h's
// rules written from the formats' definitions); a float8 reduction and strided views.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "../unit/float8_reference.hpp"
#include "gpu_helpers.hpp"
#include "kernc/scalar.hpp"

namespace kernc::gpu_test {
namespace {

using test::bits_of_float;
using test::float8_reference_encode;
using test::float8_value;

constexpr DType kFormats[] = {DType::float8_e4m3fn, DType::float8_e5m2};

std::string hex(unsigned code) {
  std::ostringstream out;
  out << "0x" << std::hex << code;
  return out.str();
}

// Reports the first few mismatches of `got` against `want`, and checks there are none.
template <class Show>
void expect_codes(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want, const std::string& what,
                  Show&& show) {
  REQUIRE(got.size() == want.size());
  std::size_t failures = 0;
  for (std::size_t k = 0; k < got.size(); ++k) {
    if (got[k] != want[k] && ++failures <= 8) {
      FAIL_CHECK(what << ": element " << k << " (" << show(k) << "): got " << hex(got[k]) << ", want " << hex(want[k]));
    }
  }
  CHECK_MESSAGE(failures == 0, what << ": " << failures << " of " << got.size() << " differ");
}

}  // namespace

TEST_CASE("float8: quantize/dequantize with a scale matches cuda_fp8.h's rules bit for bit, at sizes 1, odd and large") {
  KERNC_GPU_RANDOM(random, "float8 quantize");
  const ElementwiseKernel quantize("float32 x, float32 inv_scale", "T q", "q = x * inv_scale", "gpu_float8_quantize");
  const ElementwiseKernel dequantize("T q, float32 scale", "float32 y", "y = q * scale", "gpu_float8_dequantize");
  for (DType dtype : kFormats) {
    for (std::int64_t n : sizes()) {
      const std::string dtype_name = to_string(dtype);
      CAPTURE(dtype_name);
      CAPTURE(n);
      // Activations with outliers: most in range after scaling, some past it (saturating).
      std::vector<float> x = random.uniform<float>(n, -12.0, 12.0);
      for (std::size_t k = 7; k < x.size(); k += 97) x[k] *= 300.0f;
      if (n > 8) {
        x[1] = INFINITY;
        x[2] = -1e30f;
        x[3] = NAN;
        x[4] = -0.0f;
      }
      const float scale = dtype == DType::float8_e5m2 ? 1.0f / 4096.0f : 0.03125f, inv_scale = 1.0f / scale;
      const DeviceArray q = poisoned(dtype, {n});
      quantize({upload(DType::float32, {n}, x), inv_scale}, {q});
      const auto codes = download<std::uint8_t>(q);
      const auto y = download<float>(dequantize({q, scale})[0]);
      std::vector<std::uint8_t> want(x.size());
      for (std::size_t k = 0; k < x.size(); ++k) want[k] = float8_reference_encode(dtype, x[k] * inv_scale, true);
      expect_codes(codes, want, std::string(to_string(dtype)) + " quantize", [&](std::size_t k) { return show(x[k]); });
      std::size_t failures = 0;
      for (std::size_t k = 0; k < x.size(); ++k) {
        const float expected = static_cast<float>(float8_value(dtype, want[k])) * scale;
        const bool same = std::isnan(expected) ? std::isnan(y[k]) : bits_of_float(y[k]) == bits_of_float(expected);
        if (!same && ++failures <= 8) FAIL_CHECK("dequantize " << k << ": got " << show(y[k]) << ", want " << show(expected));
      }
      CHECK(failures == 0);
    }
  }
}

TEST_CASE("float8: every code decodes exactly and every value, midpoint and edge encodes as the reference") {
  KERNC_GPU_RANDOM(random, "float8 codes");
  const ElementwiseKernel decode("T q", "float32 y", "y = q", "gpu_float8_decode");
  const ElementwiseKernel encode("F x", "T q", "q = x", "gpu_float8_encode");
  for (DType dtype : kFormats) {
    const std::string dtype_name = to_string(dtype);
    CAPTURE(dtype_name);
    std::vector<std::uint8_t> all(256);
    for (unsigned k = 0; k < 256; ++k) all[k] = static_cast<std::uint8_t>(k);
    const auto decoded = download<float>(decode({upload(dtype, {256}, all)})[0]);
    for (unsigned code = 0; code < 256; ++code) {
      CAPTURE(hex(code));
      const double value = float8_value(dtype, code);
      CHECK(bits_of_float(decoded[code]) == (std::isnan(value) ? 0x7fffffffu : bits_of_float(static_cast<float>(value))));
    }

    // Values, midpoints and the floats beside them, the edges, then random bit patterns.
    std::vector<float> xs;
    const unsigned max_code = test::float8_max_code(dtype);
    for (unsigned code = 0; code <= max_code; ++code) {
      const double value = float8_value(dtype, code);
      const double next = code < max_code ? float8_value(dtype, code + 1) : 2 * value - float8_value(dtype, code - 1);
      for (double v : {value, (value + next) / 2}) {
        const auto f = static_cast<float>(v);
        for (float g : {f, std::nextafter(f, 0.0f), std::nextafter(f, INFINITY)}) {
          xs.push_back(g);
          xs.push_back(-g);
        }
      }
    }
    for (float f : {INFINITY, -INFINITY, NAN, -NAN, 0.0f, -0.0f, 1e-45f, 3e38f}) xs.push_back(f);
    for (int k = 0; k < 100000; ++k) xs.push_back(test::float_of_bits(static_cast<std::uint32_t>(random.engine()())));
    const auto n = static_cast<std::int64_t>(xs.size());
    const DeviceArray q = poisoned(dtype, {n});
    encode({upload(DType::float32, {n}, xs)}, {q});
    std::vector<std::uint8_t> want(xs.size());
    for (std::size_t k = 0; k < xs.size(); ++k) want[k] = float8_reference_encode(dtype, xs[k], true);
    expect_codes(download<std::uint8_t>(q), want, std::string(to_string(dtype)) + " from float32",
                 [&](std::size_t k) { return show(xs[k]); });

    // Doubles: the direct conversion, which a float8 of a double must not do through float.
    std::vector<double> ds(xs.begin(), xs.end());
    for (unsigned code = 0; code < max_code; ++code) {
      const double mid = (float8_value(dtype, code) + float8_value(dtype, code + 1)) / 2;
      ds.push_back(std::nextafter(mid, 0.0));
      ds.push_back(-std::nextafter(mid, INFINITY));
    }
    const auto m = static_cast<std::int64_t>(ds.size());
    const DeviceArray qd = poisoned(dtype, {m});
    encode({upload(DType::float64, {m}, ds)}, {qd});
    std::vector<std::uint8_t> want_d(ds.size());
    for (std::size_t k = 0; k < ds.size(); ++k) want_d[k] = float8_reference_encode(dtype, ds[k], false);
    expect_codes(download<std::uint8_t>(qd), want_d, std::string(to_string(dtype)) + " from float64",
                 [&](std::size_t k) { return show(ds[k]); });
  }
}

TEST_CASE("float8: a sum over an axis of a float8 matrix and a strided float8 view") {
  KERNC_GPU_RANDOM(random, "float8 reduction");
  const ReductionKernel sum("T x", "float32 y", "x", "a + b", "y = a", "0", "gpu_float8_sum");
  const ElementwiseKernel twice("T x", "T y", "y = x * 2", "gpu_float8_twice");
  const std::int64_t rows = 257, cols = 1003;
  for (DType dtype : kFormats) {
    const std::string dtype_name = to_string(dtype);
    CAPTURE(dtype_name);
    // Values on a 1/4 grid in [-8, 8], so that every order of summing gives the same float.
    const auto ints = random.integers<int>(rows * cols, -32, 32);
    std::vector<std::uint8_t> codes(ints.size());
    for (std::size_t k = 0; k < ints.size(); ++k) codes[k] = float8_reference_encode(dtype, ints[k] / 4.0, true);
    const DeviceArray x = upload(dtype, {rows, cols}, codes);
    const auto got = download<float>(sum({x}, std::vector<int>{1})[0]);
    REQUIRE(got.size() == static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) {
      double want = 0;
      for (std::int64_t c = 0; c < cols; ++c) want += float8_value(dtype, codes[static_cast<std::size_t>(r * cols + c)]);
      CHECK(got[static_cast<std::size_t>(r)] == static_cast<float>(want));
    }
    // Every other column of the transpose: a strided input, a contiguous output.
    const auto doubled = download<std::uint8_t>(twice({x.ref().transposed().sliced(0, 0, cols, 2)})[0]);
    std::vector<std::uint8_t> want;
    for (std::int64_t c = 0; c < cols; c += 2) {
      for (std::int64_t r = 0; r < rows; ++r) {
        const double v = float8_value(dtype, codes[static_cast<std::size_t>(r * cols + c)]);
        want.push_back(float8_reference_encode(dtype, static_cast<float>(v) * 2, true));
      }
    }
    expect_codes(doubled, want, std::string(to_string(dtype)) + " doubled", [](std::size_t k) { return std::to_string(k); });
  }
}

}  // namespace kernc::gpu_test
