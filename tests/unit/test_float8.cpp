// The 8-bit floats (float8_e4m3fn, float8_e5m2): the host library's conversions
// (src/core/float8.cpp) and the device header's (templates/float8.cuh, compiled by the host
// compiler on the cpu backend, and by NVRTC/HIPRTC), each against the reference of
// float8_reference.hpp, bit for bit: every one of the 256 codes, and floats and doubles at
// every value, midpoint and edge plus many random ones. A quantize/dequantize kernel with a
// scale runs on the host backend against the same reference.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "float8_reference.hpp"
#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "kernc/scalar.hpp"
#include "kernc/signature.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using namespace kernc;
using kernc::test::bits_of_float;
using kernc::test::float8_reference_encode;
using kernc::test::float8_value;
using kernc::test::float_of_bits;

namespace {

constexpr DType kFormats[] = {DType::float8_e4m3fn, DType::float8_e5m2};

std::uint8_t host_encode(DType dtype, float x) {
  return dtype == DType::float8_e5m2 ? float_to_float8_e5m2(x) : float_to_float8_e4m3fn(x);
}
std::uint8_t host_encode(DType dtype, double x) {
  return dtype == DType::float8_e5m2 ? double_to_float8_e5m2(x) : double_to_float8_e4m3fn(x);
}
float host_decode(DType dtype, std::uint8_t code) {
  return dtype == DType::float8_e5m2 ? float8_e5m2_to_float(code) : float8_e4m3fn_to_float(code);
}

// The decoded value's float bits as the reference says: exact, and NaN is 0x7fffffff.
std::uint32_t reference_decoded_bits(DType dtype, unsigned code) {
  const double value = float8_value(dtype, code);
  return std::isnan(value) ? 0x7fffffffu : bits_of_float(static_cast<float>(value));
}

// Floats that test every rounding decision: each finite value, the midpoints between
// neighbours and the floats on either side of them, the saturation edge (the largest value
// plus half an ulp), the subnormal edge, zeros, infinities, NaNs, float subnormals; then
// random bit patterns, random values across the range and random magnitudes of every
// exponent the format has and a few beyond.
std::vector<float> test_floats(DType dtype, std::size_t random_count) {
  std::vector<float> xs;
  const unsigned max_code = test::float8_max_code(dtype);
  auto add = [&xs](float x) {
    for (float v : {x, -x, std::nextafter(x, 0.0f), std::nextafter(x, INFINITY), -std::nextafter(x, INFINITY)}) xs.push_back(v);
  };
  for (unsigned code = 0; code <= max_code; ++code) {
    const double value = float8_value(dtype, code);
    add(static_cast<float>(value));
    const double next = code < max_code ? float8_value(dtype, code + 1)
                                        : 2 * value - float8_value(dtype, code - 1);  // max + one ulp
    add(static_cast<float>((value + next) / 2));  // exact: a midpoint has one more mantissa bit
  }
  const double max = float8_value(dtype, max_code);
  for (double x : {max * 2, 1e30, 3.4e38, 1e-30, 1e-45, 1.1754943508222875e-38, 5.877471754111438e-39}) add(static_cast<float>(x));
  for (float x : {INFINITY, -INFINITY, 0.0f, -0.0f}) xs.push_back(x);
  for (std::uint32_t nan : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu, 0x7fa00000u}) {
    xs.push_back(float_of_bits(nan));
  }
  std::mt19937_64 rng(20261127);
  for (std::size_t k = 0; k < random_count; ++k) xs.push_back(float_of_bits(static_cast<std::uint32_t>(rng())));
  std::uniform_real_distribution<double> across(-1.25 * max, 1.25 * max);
  for (std::size_t k = 0; k < random_count; ++k) xs.push_back(static_cast<float>(across(rng)));
  std::uniform_real_distribution<double> exponent(-20.0, 18.0);
  for (std::size_t k = 0; k < random_count; ++k) {
    xs.push_back(static_cast<float>((rng() & 1 ? -1 : 1) * std::exp2(exponent(rng))));
  }
  return xs;
}

// The same for doubles, plus values a float cannot hold (so the double path's own
// rounding is tested: just above and below each midpoint by less than a float ulp) and
// NaNs with every sign and top payload bits.
std::vector<double> test_doubles(DType dtype, std::size_t random_count) {
  std::vector<double> xs;
  for (float f : test_floats(dtype, random_count)) xs.push_back(f);
  const unsigned max_code = test::float8_max_code(dtype);
  for (unsigned code = 0; code < max_code; ++code) {
    const double mid = (float8_value(dtype, code) + float8_value(dtype, code + 1)) / 2;
    for (double x : {std::nextafter(mid, 0.0), std::nextafter(mid, INFINITY)}) {
      xs.push_back(x);
      xs.push_back(-x);
    }
  }
  for (std::uint64_t nan : {0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff4000000000000ull, 0xfffc000000000000ull,
                            0x7ff0000000000001ull, 0x7ffc000000000000ull}) {
    double d;
    std::memcpy(&d, &nan, 8);
    xs.push_back(d);
  }
  std::mt19937_64 rng(7);
  for (std::size_t k = 0; k < random_count; ++k) {
    const std::uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, 8);
    xs.push_back(d);
  }
  return xs;
}

std::string hex(unsigned code) { return fmt::format("0x{:02x}", code); }

}  // namespace

TEST_CASE("float8 reference: the formats' landmarks, so that the reference itself is right") {
  using test::float8_value;
  CHECK(float8_value(DType::float8_e4m3fn, 0x7e) == 448.0);
  CHECK(std::isnan(float8_value(DType::float8_e4m3fn, 0x7f)));
  CHECK(std::isnan(float8_value(DType::float8_e4m3fn, 0xff)));
  CHECK(float8_value(DType::float8_e4m3fn, 0x78) == 256.0);  // no infinity: S.1111.000 is a number
  CHECK(float8_value(DType::float8_e4m3fn, 0x01) == std::ldexp(1.0, -9));
  CHECK(float8_value(DType::float8_e4m3fn, 0x08) == std::ldexp(1.0, -6));
  CHECK(float8_value(DType::float8_e4m3fn, 0x38) == 1.0);
  CHECK(float8_value(DType::float8_e5m2, 0x7b) == 57344.0);
  CHECK(float8_value(DType::float8_e5m2, 0x7c) == INFINITY);
  CHECK(float8_value(DType::float8_e5m2, 0xfc) == -INFINITY);
  CHECK(std::isnan(float8_value(DType::float8_e5m2, 0x7d)));
  CHECK(float8_value(DType::float8_e5m2, 0x01) == std::ldexp(1.0, -16));
  CHECK(float8_value(DType::float8_e5m2, 0x3c) == 1.0);
  CHECK(std::signbit(float8_value(DType::float8_e5m2, 0x80)));
  // cuda_fp8.h's documented behaviour at the edges, as the reference encodes it.
  CHECK(float8_reference_encode(DType::float8_e4m3fn, 464.0, true) == 0x7e);      // tie: to even, 448
  CHECK(float8_reference_encode(DType::float8_e4m3fn, 1e9, true) == 0x7e);        // saturates
  CHECK(float8_reference_encode(DType::float8_e4m3fn, -INFINITY, true) == 0xfe);  // saturates
  CHECK(float8_reference_encode(DType::float8_e5m2, 61440.0, true) == 0x7b);      // tie above the largest: saturates
  CHECK(float8_reference_encode(DType::float8_e5m2, INFINITY, true) == 0x7b);
  CHECK(float8_reference_encode(DType::float8_e4m3fn, std::ldexp(1.0, -10), true) == 0x00);  // half the smallest: even
  CHECK(float8_reference_encode(DType::float8_e4m3fn, -std::ldexp(1.0, -10), true) == 0x80);  // -0
  CHECK(float8_reference_encode(DType::float8_e4m3fn, std::ldexp(3.0, -11), true) == 0x01);
  CHECK(float8_reference_encode(DType::float8_e5m2, -NAN, true) == 0x7f);
  CHECK(float8_reference_encode(DType::float8_e5m2, -NAN, false) == 0xfe);  // -qNaN: payload 10
}

TEST_CASE("float8: host decoding of every code is exact, NaN codes give 0x7fffffff") {
  for (DType dtype : kFormats) {
    const std::string dtype_name = to_string(dtype);
    CAPTURE(dtype_name);
    for (unsigned code = 0; code < 256; ++code) {
      CAPTURE(hex(code));
      CHECK(bits_of_float(host_decode(dtype, static_cast<std::uint8_t>(code))) == reference_decoded_bits(dtype, code));
    }
  }
}

TEST_CASE("float8: host encoding of floats and doubles matches the reference bit for bit") {
  for (DType dtype : kFormats) {
    const std::string dtype_name = to_string(dtype);
    CAPTURE(dtype_name);
    // Every code's value goes back to that code (but NaN codes, which have their own rule).
    for (unsigned code = 0; code < 256; ++code) {
      if (std::isnan(float8_value(dtype, code))) continue;
      CAPTURE(hex(code));
      const float value = host_decode(dtype, static_cast<std::uint8_t>(code));
      const unsigned expected = std::isinf(value) ? (code & 0x80u) | test::float8_max_code(dtype) : code;
      CHECK(host_encode(dtype, value) == expected);
      CHECK(host_encode(dtype, static_cast<double>(value)) == expected);
    }
    std::size_t failures = 0;
    for (float x : test_floats(dtype, 100000)) {
      const unsigned want = float8_reference_encode(dtype, x, true), got = host_encode(dtype, x);
      if (got != want && ++failures <= 10) FAIL_CHECK(fmt::format("float {} ({:#010x}): got {}, want {}", x, bits_of_float(x), hex(got), hex(want)));
    }
    for (double x : test_doubles(dtype, 100000)) {
      const unsigned want = float8_reference_encode(dtype, x, false), got = host_encode(dtype, x);
      if (got != want && ++failures <= 10) FAIL_CHECK(fmt::format("double {}: got {}, want {}", x, hex(got), hex(want)));
    }
    CHECK(failures == 0);
  }
}

TEST_CASE("float8: Scalar converts to and from the float8 dtypes as cuda_fp8.h does") {
  unsigned char byte = 0;
  Scalar(1000.0f).convert_to(DType::float8_e4m3fn, &byte);
  CHECK(byte == 0x7e);  // saturated
  Scalar(-1e6).convert_to(DType::float8_e5m2, &byte);
  CHECK(byte == 0xfb);
  Scalar(static_cast<long long>(3)).convert_to(DType::float8_e4m3fn, &byte);
  CHECK(byte == 0x44);  // 3 = 1.5 * 2^1
  Scalar(-std::numeric_limits<double>::quiet_NaN()).convert_to(DType::float8_e4m3fn, &byte);
  CHECK(byte == 0xff);  // a double NaN keeps its sign
  Scalar(-std::numeric_limits<double>::quiet_NaN()).convert_to(DType::float8_e5m2, &byte);
  CHECK(byte == 0xfe);
  Scalar(-std::numeric_limits<float>::quiet_NaN()).convert_to(DType::float8_e5m2, &byte);
  CHECK(byte == 0x7f);  // a float NaN does not
  CHECK(Scalar::of(DType::float8_e4m3fn, 0.3).real == 0.3125L);
  CHECK(Scalar::of(DType::float8_e5m2, 0.3).real == 0.3125L);
  const unsigned char code = 0xd5;  // e4m3fn: -1.625 * 2^3
  CHECK(Scalar::from_bytes(DType::float8_e4m3fn, &code).real == -13.0L);
  CHECK(Scalar::from_bytes(DType::float8_e4m3fn, &code).dtype == DType::float8_e4m3fn);
  CHECK(parse_dtype("float8_e4m3fn") == DType::float8_e4m3fn);
  CHECK(parse_dtype("float8_e5m2") == DType::float8_e5m2);
  CHECK(itemsize(DType::float8_e5m2) == 1);
  CHECK(is_floating(DType::float8_e4m3fn));
  CHECK(std::string(device_type(DType::float8_e5m2)) == "kernc::float8_e5m2");
}

namespace {

// One engine on the cpu runtime, its cache in a temporary directory.
struct Float8Host {
  test::TempDir dir;
  std::string cache_dir = dir.path() + "/cache";
  std::unique_ptr<Engine> engine = std::make_unique<Engine>(Config::from_environment([this](const char* name) -> const char* {
    const std::string n = name;
    if (n == "KERNC_CACHE_DIR") return cache_dir.c_str();
    if (n == "KERNC_RUNTIME") return "cpu";
    if (n == "KERNC_CACHE_PATH" || n == "KERNC_COMPILE" || n == "KERNC_REMOTE_CACHE") return nullptr;
    return std::getenv(name);
  }));
  CallOptions options() const {
    CallOptions options;
    options.engine = engine.get();
    return options;
  }
};

Float8Host& float8_host() {
  static Float8Host engine;
  return engine;
}

}  // namespace

TEST_CASE("float8: the device header on the host backend converts every code and float as the reference") {
  const Device device = float8_host().engine->device(0);
  const ElementwiseKernel decode("T q", "float32 y", "y = q", "float8_decode");
  const ElementwiseKernel encode("F x", "T q", "q = x", "float8_encode");
  for (DType dtype : kFormats) {
    const std::string dtype_name = to_string(dtype);
    CAPTURE(dtype_name);
    std::vector<std::uint8_t> codes(256);
    for (unsigned k = 0; k < 256; ++k) codes[k] = static_cast<std::uint8_t>(k);
    const auto decoded = decode({DeviceArray::from_host(device, dtype, {256}, codes.data())}, {}, float8_host().options())[0]
                             .to_host_vector<float>();
    for (unsigned code = 0; code < 256; ++code) {
      CAPTURE(hex(code));
      CHECK(bits_of_float(decoded[code]) == reference_decoded_bits(dtype, code));
    }

    const std::vector<float> xs = test_floats(dtype, 100000);
    const auto n = static_cast<std::int64_t>(xs.size());
    const DeviceArray q = DeviceArray::empty(device, dtype, {n});
    encode({DeviceArray::from_host(device, DType::float32, {n}, xs.data())}, {q}, float8_host().options());
    const auto got = q.to_host_vector<std::uint8_t>();
    std::size_t failures = 0;
    for (std::size_t k = 0; k < xs.size(); ++k) {
      const unsigned want = float8_reference_encode(dtype, xs[k], true);
      if (got[k] != want && ++failures <= 10) {
        FAIL_CHECK(fmt::format("float {} ({:#010x}): got {}, want {}", xs[k], bits_of_float(xs[k]), hex(got[k]), hex(want)));
      }
    }
    const std::vector<double> ds = test_doubles(dtype, 20000);
    const auto m = static_cast<std::int64_t>(ds.size());
    const DeviceArray qd = DeviceArray::empty(device, dtype, {m});
    encode({DeviceArray::from_host(device, DType::float64, {m}, ds.data())}, {qd}, float8_host().options());
    const auto got_d = qd.to_host_vector<std::uint8_t>();
    for (std::size_t k = 0; k < ds.size(); ++k) {
      const unsigned want = float8_reference_encode(dtype, ds[k], false);
      if (got_d[k] != want && ++failures <= 10) FAIL_CHECK(fmt::format("double {}: got {}, want {}", ds[k], hex(got_d[k]), hex(want)));
    }
    CHECK(failures == 0);
  }
}

TEST_CASE("float8: a quantize/dequantize kernel with a scale on the host backend, bit for bit") {
  // The inference server's pair: q = x / scale rounded to float8 (saturating), y = q * scale.
  const Device device = float8_host().engine->device(0);
  const ElementwiseKernel quantize("float32 x, float32 inv_scale", "T q", "q = x * inv_scale", "float8_quantize");
  const ElementwiseKernel dequantize("T q, float32 scale", "float32 y", "y = q * scale", "float8_dequantize");
  for (DType dtype : kFormats) {
    for (std::int64_t n : {1, 1001, 1 << 18}) {
      const std::string dtype_name = to_string(dtype);
      CAPTURE(dtype_name);
      CAPTURE(n);
      std::mt19937 rng(static_cast<unsigned>(n));
      std::normal_distribution<float> normal(0.0f, 3.0f);
      std::vector<float> x(static_cast<std::size_t>(n));
      for (auto& v : x) v = normal(rng);
      if (n > 8) {  // outliers past the range saturate; NaN stays NaN
        x[1] = 1e6f;
        x[2] = -INFINITY;
        x[3] = NAN;
      }
      const float scale = dtype == DType::float8_e5m2 ? 1.0f / 2048.0f : 0.0234375f, inv_scale = 1.0f / scale;
      const DeviceArray q = DeviceArray::empty(device, dtype, {n});
      quantize({DeviceArray::from_host(device, DType::float32, {n}, x.data()), inv_scale}, {q}, float8_host().options());
      const auto codes = q.to_host_vector<std::uint8_t>();
      const auto y = dequantize({q, scale}, {}, float8_host().options())[0].to_host_vector<float>();
      std::size_t failures = 0;
      for (std::size_t k = 0; k < x.size(); ++k) {
        const float scaled = x[k] * inv_scale;
        const unsigned want = float8_reference_encode(dtype, scaled, true);
        const float want_y = static_cast<float>(float8_value(dtype, want)) * scale;
        const bool same_y = std::isnan(want_y) ? std::isnan(y[k]) : bits_of_float(y[k]) == bits_of_float(want_y);
        if ((codes[k] != want || !same_y) && ++failures <= 10) {
          FAIL_CHECK(fmt::format("x[{}] = {}: code {} (want {}), y {} (want {})", k, x[k], hex(codes[k]), hex(want), y[k], want_y));
        }
      }
      CHECK(failures == 0);
    }
  }
}

TEST_CASE("float8: arithmetic, comparisons, conversions between storage floats and a reduction on the host backend") {
  const Device device = float8_host().engine->device(0);
  // Two float8s compute in float and round once when stored; a float8 converts to and
  // from the other storage floats through float; a double scalar converts directly.
  const ElementwiseKernel mix("T a, T b, float16 h, bfloat16 g", "T c, U d, float32 e",
                              "c = a * b + a; d = a; T t = h; d += t; e = (a < b) + (a == b ? 10.0f : 0.0f) + float(T(g))",
                              "float8_mix");
  std::vector<std::uint8_t> a_codes, b_codes;
  for (unsigned k = 0; k < 256; ++k) {
    a_codes.push_back(static_cast<std::uint8_t>(k));
    b_codes.push_back(static_cast<std::uint8_t>((k * 37 + 11) & 0xff));
  }
  std::vector<std::uint16_t> halves(256, float_to_half(1.5f)), bhalves(256, float_to_bfloat16(-2.75f));
  for (DType dtype : kFormats) {
    const DType other = dtype == DType::float8_e5m2 ? DType::float8_e4m3fn : DType::float8_e5m2;
    const std::string dtype_name = to_string(dtype);
    CAPTURE(dtype_name);
    const DeviceArray c = DeviceArray::empty(device, dtype, {256}), d = DeviceArray::empty(device, other, {256}),
                      e = DeviceArray::empty(device, DType::float32, {256});
    mix({DeviceArray::from_host(device, dtype, {256}, a_codes.data()), DeviceArray::from_host(device, dtype, {256}, b_codes.data()),
         DeviceArray::from_host(device, DType::float16, {256}, halves.data()),
         DeviceArray::from_host(device, DType::bfloat16, {256}, bhalves.data())},
        {c, d, e}, float8_host().options());
    const auto cs = c.to_host_vector<std::uint8_t>(), ds = d.to_host_vector<std::uint8_t>();
    const auto es = e.to_host_vector<float>();
    for (unsigned k = 0; k < 256; ++k) {
      CAPTURE(hex(k));
      const float a = static_cast<float>(float8_value(dtype, a_codes[k])), b = static_cast<float>(float8_value(dtype, b_codes[k]));
      const float ab = a * b + a, ab_fused = std::fma(a, b, a);
      const unsigned c1 = float8_reference_encode(dtype, ab, true), c2 = float8_reference_encode(dtype, ab_fused, true);
      CHECK((cs[k] == c1 || cs[k] == c2));
      const float t = static_cast<float>(float8_value(dtype, float8_reference_encode(dtype, 1.5, true)));
      const float d0 = static_cast<float>(float8_value(other, float8_reference_encode(other, a, true)));
      CHECK(ds[k] == float8_reference_encode(other, d0 + t, true));
      const float g = static_cast<float>(float8_value(dtype, float8_reference_encode(dtype, -2.75, true)));
      const float want_e = static_cast<float>(a < b) + (a == b ? 10.0f : 0.0f) + g;
      CHECK(bits_of_float(es[k]) == bits_of_float(want_e));
    }
  }

  // A sum of float8 values in float: values on a 1/8 grid, so that any order gives the same sum.
  const ReductionKernel sum("T x", "float32 y", "x", "a + b", "y = a", "0", "float8_sum");
  std::vector<std::uint8_t> codes(5000);
  std::mt19937 rng(3);
  double want = 0;
  for (auto& code : codes) {
    const float v = static_cast<float>(static_cast<int>(rng() % 129) - 64) / 8.0f;  // -8 .. 8
    code = float_to_float8_e4m3fn(v);
    want += float8_e4m3fn_to_float(code);
  }
  const auto total = sum({DeviceArray::from_host(device, DType::float8_e4m3fn, {5000}, codes.data())}, std::nullopt, false, {},
                         float8_host().options())[0]
                         .to_host_vector<float>();
  CHECK(total[0] == static_cast<float>(want));
}

TEST_CASE("bfloat16: y = x * a + b computes as float16 does (in float, rounded once when stored)") {
  const Device device = float8_host().engine->device(0);
  const ElementwiseKernel affine("T x, T a, T b", "T y", "y = x * a + b", "half_affine");
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  const std::int64_t n = 1003;
  for (DType dtype : {DType::float16, DType::bfloat16}) {
    const std::string dtype_name = to_string(dtype);
    CAPTURE(dtype_name);
    auto to = [dtype](float v) { return dtype == DType::float16 ? float_to_half(v) : float_to_bfloat16(v); };
    auto from = [dtype](std::uint16_t v) { return dtype == DType::float16 ? half_to_float(v) : bfloat16_to_float(v); };
    std::vector<std::uint16_t> x(static_cast<std::size_t>(n));
    for (auto& v : x) v = to(dist(rng));
    const Scalar a = Scalar::of(dtype, 1.3), b = Scalar::of(dtype, -0.7);
    const auto y = affine({DeviceArray::from_host(device, dtype, {n}, x.data()), a, b}, {}, float8_host().options())[0]
                       .to_host_vector<std::uint16_t>();
    const float fa = static_cast<float>(a.real), fb = static_cast<float>(b.real);
    for (std::size_t k = 0; k < x.size(); ++k) {
      const float xf = from(x[k]);
      CHECK((y[k] == to(xf * fa + fb) || y[k] == to(std::fma(xf, fa, fb))));
    }
  }
}

TEST_CASE("float8: kernels compile with NVRTC (and HIPRTC where built)") {
  const ElementwiseKernel quantize("float32 x, float32 inv_scale", "T q", "q = x * inv_scale", "float8_quantize_rtc");
  const ElementwiseKernel dequantize("T q, float64 scale", "float32 y", "y = q * scale; T r = scale; y += r", "float8_dequantize_rtc");
  for (const char* sig : {"float32, float32 -> float8_e4m3fn", "float32, float32 -> float8_e5m2"}) {
    CAPTURE(sig);
    const auto program = kernc::program(quantize, parse_call_signature(sig), Layout{});
    CHECK(test::contains(program.source, "kernc/float8.cuh"));
    CHECK(test::starts_with(test::nvrtc().compile(program, Target::parse("sm_90")).binary, test::kElfMagic));
    CHECK(test::starts_with(test::nvrtc().compile(program, Target::parse("sm_80")).binary, test::kElfMagic));
#ifdef KERNC_WITH_HIP
    CHECK(test::starts_with(test::hiprtc().compile(program, Target::parse("gfx90a")).binary, test::kElfMagic));
#endif
  }
  for (const char* sig : {"float8_e4m3fn, float64 -> float32", "float8_e5m2, float64 -> float32"}) {
    CAPTURE(sig);
    const auto program = kernc::program(dequantize, parse_call_signature(sig), Layout{});
    CHECK(test::starts_with(test::nvrtc().compile(program, Target::parse("sm_90")).binary, test::kElfMagic));
#ifdef KERNC_WITH_HIP
    CHECK(test::starts_with(test::hiprtc().compile(program, Target::parse("gfx90a")).binary, test::kElfMagic));
#endif
  }
}
