#pragma once
// An independent reference for the 8-bit floats (NOTE [ float8 conversions ],
// templates/float8.cuh), written from the formats' definitions rather than from bit
// tricks: decode a code by its sign, exponent and mantissa fields; encode by searching
// every finite value for the nearest (ties to the even code), then cuda_fp8.h's
// saturation and NaN rules. Slow and obvious, for tests only (unit and GPU suites).

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernc/dtype.hpp"

namespace kernc::test {

struct Float8Spec {
  int exponent_bits, mantissa_bits, bias;
  bool e5m2;  // IEEE-like: exponent all ones is infinity / NaN; else (E4M3FN) only S.1111.111 is NaN
};

inline Float8Spec float8_spec(DType dtype) {
  return dtype == DType::float8_e5m2 ? Float8Spec{5, 2, 15, true} : Float8Spec{4, 3, 7, false};
}

// The value of `code` as a double; NaN codes give NaN.
inline double float8_value(DType dtype, unsigned code) {
  const Float8Spec s = float8_spec(dtype);
  const unsigned exponent = (code >> s.mantissa_bits) & ((1u << s.exponent_bits) - 1u);
  const unsigned mantissa = code & ((1u << s.mantissa_bits) - 1u);
  const double sign = (code & 0x80u) ? -1.0 : 1.0;
  const unsigned all_ones = (1u << s.exponent_bits) - 1u;
  if (s.e5m2 && exponent == all_ones) return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (!s.e5m2 && exponent == all_ones && mantissa == (1u << s.mantissa_bits) - 1u) return std::numeric_limits<double>::quiet_NaN();
  const double fraction = static_cast<double>(mantissa) / static_cast<double>(1u << s.mantissa_bits);
  if (exponent == 0) return sign * std::ldexp(fraction, 1 - s.bias);
  return sign * std::ldexp(1.0 + fraction, static_cast<int>(exponent) - s.bias);
}

// The largest finite code: 0x7e (448) for E4M3FN, 0x7b (57344) for E5M2.
inline unsigned float8_max_code(DType dtype) { return dtype == DType::float8_e5m2 ? 0x7bu : 0x7eu; }

// cuda_fp8.h's result for `x` (from_float: x came as a float, whose NaN becomes 0x7f;
// a double NaN keeps its sign and, E5M2, the top two payload bits, quiet).
inline std::uint8_t float8_reference_encode(DType dtype, double x, bool from_float) {
  std::uint64_t bits;
  std::memcpy(&bits, &x, 8);
  const unsigned sign = static_cast<unsigned>(bits >> 63) << 7;
  if (std::isnan(x)) {
    if (from_float) return 0x7f;
    return static_cast<std::uint8_t>(sign | (dtype == DType::float8_e5m2 ? 0x7eu | static_cast<unsigned>((bits >> 50) & 3u) : 0x7fu));
  }
  // Past the largest value (infinity too) the nearest finite value is the largest:
  // saturation. Said first, so that the search below never compares huge distances.
  // The finite values by code, decoded once: the search runs millions of times a suite
  // (most of the float8 tests' time under ASan at -O0 when each step decoded its code).
  static const auto values = [] {
    std::array<std::array<double, 128>, 2> table{};
    for (unsigned code = 0; code < 128; ++code) {
      table[0][code] = float8_value(DType::float8_e4m3fn, code);
      table[1][code] = float8_value(DType::float8_e5m2, code);
    }
    return table;
  }();
  const auto& value = values[dtype == DType::float8_e5m2 ? 1 : 0];
  const long double magnitude = std::fabs(static_cast<long double>(x));
  if (magnitude >= value[float8_max_code(dtype)]) return static_cast<std::uint8_t>(sign | float8_max_code(dtype));
  unsigned best = 0;
  long double best_distance = magnitude;  // to code 0
  for (unsigned code = 1; code <= float8_max_code(dtype); ++code) {
    const long double distance = std::fabs(static_cast<long double>(value[code]) - magnitude);
    if (distance < best_distance || (distance == best_distance && (code & 1u) == 0)) {
      best = code;
      best_distance = distance;
    }
  }
  return static_cast<std::uint8_t>(sign | best);
}

inline float float_of_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline std::uint32_t bits_of_float(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace kernc::test
