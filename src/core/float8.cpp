// Host-side 8-bit float conversions (kernc/scalar.hpp), the same rules as the device's
// (NOTE [ float8 conversions ], templates/float8.cuh), written again here because the
// library cannot include device templates. tests/unit/test_float8.cpp checks both against
// a reference of its own.

#include <cstring>

#include "kernc/scalar.hpp"

namespace kernc {

namespace {

// One format: its mantissa width, exponent bias and largest finite code.
struct Float8Format {
  int mantissa_bits;
  int bias;
  unsigned max_finite;
};

constexpr Float8Format kE4M3{3, 7, 0x7e};
constexpr Float8Format kE5M2{2, 15, 0x7b};

// The magnitude code of a finite or infinite value whose IEEE bits, sign cleared, are
// `magnitude` (a format of `fraction_bits` fraction bits and exponent bias `source_bias`):
// rounded to nearest even in an unbounded exponent range, then anything past the largest
// finite value (infinity too) clamped to it (__NV_SATFINITE).
unsigned round_to_float8(std::uint64_t magnitude, int fraction_bits, int source_bias, Float8Format format) {
  const int exponent = static_cast<int>(magnitude >> fraction_bits) - source_bias;
  if (exponent > 16) return format.max_finite;  // past every float8's range, infinity included
  const int min_exponent = 1 - format.bias;
  const int shift = fraction_bits - format.mantissa_bits + (exponent < min_exponent ? min_exponent - exponent : 0);
  if (shift > fraction_bits + 1) return 0;  // below half the smallest subnormal (source subnormals too)
  const std::uint64_t significand = (magnitude & ((std::uint64_t{1} << fraction_bits) - 1)) | (std::uint64_t{1} << fraction_bits);
  std::uint64_t q = significand >> shift;
  const std::uint64_t rest = significand & ((std::uint64_t{1} << shift) - 1), half = std::uint64_t{1} << (shift - 1);
  if (rest > half || (rest == half && (q & 1))) ++q;
  const std::uint64_t code =
      (exponent < min_exponent ? 0 : static_cast<std::uint64_t>(exponent - min_exponent) << format.mantissa_bits) + q;
  return code < format.max_finite ? static_cast<unsigned>(code) : format.max_finite;
}

std::uint8_t from_float(float value, Float8Format format) {
  std::uint32_t u;
  std::memcpy(&u, &value, 4);
  const std::uint32_t magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return 0x7f;  // cuda_fp8.h: a float NaN becomes the positive NaN 0x7f
  return static_cast<std::uint8_t>(((u >> 24) & 0x80u) | round_to_float8(magnitude, 23, 127, format));
}

std::uint8_t from_double(double value, Float8Format format, bool e5m2) {
  std::uint64_t u;
  std::memcpy(&u, &value, 8);
  const std::uint64_t magnitude = u & 0x7fffffffffffffffull;
  const auto sign = static_cast<unsigned>((u >> 56) & 0x80u);
  if (magnitude > 0x7ff0000000000000ull) {
    // cuda_fp8.h's __nv_cvt_double_to_fp8: the sign is kept; E5M2 keeps the top two payload bits, made quiet.
    return static_cast<std::uint8_t>(sign | (e5m2 ? 0x7eu | static_cast<unsigned>((u >> 50) & 3u) : 0x7fu));
  }
  return static_cast<std::uint8_t>(sign | round_to_float8(magnitude, 52, 1023, format));
}

float with_sign(float value, std::uint8_t code) { return (code & 0x80u) ? -value : value; }

float bits_to_float(std::uint32_t u) {
  float value;
  std::memcpy(&value, &u, 4);
  return value;
}

}  // namespace

std::uint8_t float_to_float8_e4m3fn(float value) noexcept { return from_float(value, kE4M3); }
std::uint8_t float_to_float8_e5m2(float value) noexcept { return from_float(value, kE5M2); }
std::uint8_t double_to_float8_e4m3fn(double value) noexcept { return from_double(value, kE4M3, false); }
std::uint8_t double_to_float8_e5m2(double value) noexcept { return from_double(value, kE5M2, true); }

float float8_e4m3fn_to_float(std::uint8_t bits) noexcept {
  const unsigned magnitude = bits & 0x7fu;
  if (magnitude == 0x7fu) return bits_to_float(0x7fffffffu);  // NaN, sign dropped as cuda_fp8.h does
  if (magnitude < 0x08u) return with_sign(static_cast<float>(magnitude) * 0x1p-9f, bits);
  return bits_to_float((static_cast<std::uint32_t>(bits & 0x80u) << 24) | ((magnitude + (120u << 3)) << 20));
}

float float8_e5m2_to_float(std::uint8_t bits) noexcept {
  const unsigned magnitude = bits & 0x7fu;
  if (magnitude > 0x7cu) return bits_to_float(0x7fffffffu);
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x80u) << 24;
  if (magnitude == 0x7cu) return bits_to_float(sign | 0x7f800000u);
  if (magnitude < 0x04u) return with_sign(static_cast<float>(magnitude) * 0x1p-16f, bits);
  return bits_to_float(sign | ((magnitude + (112u << 2)) << 21));
}

}  // namespace kernc
