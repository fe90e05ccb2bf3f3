#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "kernc/scalar.hpp"
#include "kernc/error.hpp"

namespace kernc {

std::uint16_t float_to_half(float value) noexcept {
  std::uint32_t f;
  std::memcpy(&f, &value, 4);
  std::uint32_t sign = (f >> 16) & 0x8000u;
  std::uint32_t magnitude = f & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN
  if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow → inf
  if (magnitude < 0x38800000u) {  // subnormal or zero in half
    float abs_value = std::fabs(value);
    // Scale so that one half-subnormal ulp (2^-24) is 1, then round to nearest even.
    float scaled = abs_value * 16777216.0f;
    auto rounded = static_cast<std::uint32_t>(std::nearbyint(scaled));
    return static_cast<std::uint16_t>(sign | rounded);
  }
  std::uint32_t exponent = ((magnitude >> 23) - 112) << 10;
  std::uint32_t mantissa = magnitude & 0x7fffffu;
  std::uint32_t half = exponent | (mantissa >> 13);
  std::uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // round to nearest even
  return static_cast<std::uint16_t>(sign | half);
}

float half_to_float(std::uint16_t bits) noexcept {
  std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  std::uint32_t exponent = (bits >> 10) & 0x1fu;
  std::uint32_t mantissa = bits & 0x3ffu;
  float value;
  if (exponent == 0) {
    value = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    value = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    value = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  }
  std::uint32_t f;
  std::memcpy(&f, &value, 4);
  f |= sign;
  std::memcpy(&value, &f, 4);
  return value;
}

std::uint16_t float_to_bfloat16(float value) noexcept {
  std::uint32_t u;
  std::memcpy(&u, &value, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

float bfloat16_to_float(std::uint16_t bits) noexcept {
  std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &u, 4);
  return value;
}

Scalar Scalar::of(DType dtype, double value) {
  if (is_integer(dtype) || dtype == DType::bool_) {
    throw Error(ErrorCode::invalid_argument,
                "Scalar::of is for float16, bfloat16 and the float8 types; use the C++ integer types");
  }
  Scalar s(value);
  s.dtype = dtype;
  // A half-precision scalar holds a half-precision value, whatever it is converted to later.
  if (dtype == DType::float16) s.real = half_to_float(float_to_half(static_cast<float>(value)));
  if (dtype == DType::bfloat16) s.real = bfloat16_to_float(float_to_bfloat16(static_cast<float>(value)));
  if (dtype == DType::float8_e4m3fn) s.real = float8_e4m3fn_to_float(double_to_float8_e4m3fn(value));
  if (dtype == DType::float8_e5m2) s.real = float8_e5m2_to_float(double_to_float8_e5m2(value));
  return s;
}

namespace {

template <class T>
void store(unsigned char* out, T value) {
  std::memcpy(out, &value, sizeof value);
}

// Floating value to an integer type as the GPU converts it: truncation toward zero,
// saturating at the type's limits, NaN to 0 (C leaves out-of-range conversions undefined).
template <class T>
T saturate(long double value) {
  if (std::isnan(value)) return 0;
  if (value <= static_cast<long double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (value >= static_cast<long double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(value);
}

}  // namespace

Scalar Scalar::from_bytes(DType dtype, const void* bytes) {
  auto get = [bytes](auto value) {
    std::memcpy(&value, bytes, sizeof value);
    return value;
  };
  switch (dtype) {
    case DType::bool_: return Scalar(get(std::uint8_t{0}) != 0);
    case DType::int8: return Scalar(get(static_cast<signed char>(0)));
    case DType::int16: return Scalar(get(static_cast<short>(0)));
    case DType::int32: return Scalar(get(0));
    case DType::int64: return Scalar(get(0LL));
    case DType::uint8: return Scalar(get(static_cast<unsigned char>(0)));
    case DType::uint16: return Scalar(get(static_cast<unsigned short>(0)));
    case DType::uint32: return Scalar(get(0u));
    case DType::uint64: return Scalar(get(0ULL));
    case DType::float8_e4m3fn: return Scalar::of(dtype, float8_e4m3fn_to_float(get(std::uint8_t{0})));
    case DType::float8_e5m2: return Scalar::of(dtype, float8_e5m2_to_float(get(std::uint8_t{0})));
    case DType::float16: return Scalar::of(dtype, half_to_float(get(std::uint16_t{0})));
    case DType::bfloat16: return Scalar::of(dtype, bfloat16_to_float(get(std::uint16_t{0})));
    case DType::float32: return Scalar(get(0.0f));
    case DType::float64: return Scalar(get(0.0));
    case DType::complex64: return Scalar(get(std::complex<float>()));
    case DType::complex128: return Scalar(get(std::complex<double>()));
  }
  throw Error(ErrorCode::invalid_argument, "Scalar::from_bytes: not a dtype");
}

bool Scalar::fits(DType target) const noexcept {
  if (!is_integer(target)) return true;
  if (!(is_integer(dtype) || dtype == DType::bool_)) return !std::isnan(real);
  const std::size_t bits_wide = itemsize(target) * 8;
  if (is_unsigned(dtype) || dtype == DType::bool_) {
    // 0 .. 2^64 - 1: fits below the target's maximum.
    const std::uint64_t max = is_unsigned(target) ? (bits_wide == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits_wide) - 1)
                                                  : (std::uint64_t{1} << (bits_wide - 1)) - 1;
    return bits <= max;
  }
  const auto value = static_cast<std::int64_t>(bits);
  if (is_unsigned(target)) return value >= 0 && (bits_wide == 64 || static_cast<std::uint64_t>(value) < (std::uint64_t{1} << bits_wide));
  if (bits_wide == 64) return true;
  const std::int64_t limit = std::int64_t{1} << (bits_wide - 1);
  return value >= -limit && value < limit;
}

void Scalar::convert_to(DType target, unsigned char* out) const {
  const bool from_integer = is_integer(dtype) || dtype == DType::bool_;
  const bool from_float = is_floating(dtype) && dtype != DType::float64;
  // Integers convert by their bits (two's complement wrap-around, as C does on every
  // compiler kernc supports); floating values truncate and saturate.
  auto integer = [&](auto type_tag) {
    using T = decltype(type_tag);
    store<T>(out, from_integer ? static_cast<T>(bits) : saturate<T>(real));
  };
  long double value = from_integer ? (is_unsigned(dtype) ? static_cast<long double>(bits)
                                                          : static_cast<long double>(static_cast<std::int64_t>(bits)))
                                   : real;
  switch (target) {
    case DType::bool_: store<bool>(out, from_integer ? bits != 0 : (real != 0 || imag != 0)); break;
    case DType::int8: integer(std::int8_t{}); break;
    case DType::int16: integer(std::int16_t{}); break;
    case DType::int32: integer(std::int32_t{}); break;
    case DType::int64: integer(std::int64_t{}); break;
    case DType::uint8: integer(std::uint8_t{}); break;
    case DType::uint16: integer(std::uint16_t{}); break;
    case DType::uint32: integer(std::uint32_t{}); break;
    case DType::uint64: integer(std::uint64_t{}); break;
    // A float8 value from a float (or a narrower float) converts as cuda_fp8.h converts a
    // float, anything else as it converts a double (the two differ only for NaN).
    case DType::float8_e4m3fn:
      store<std::uint8_t>(out, from_float ? float_to_float8_e4m3fn(static_cast<float>(value))
                                          : double_to_float8_e4m3fn(static_cast<double>(value)));
      break;
    case DType::float8_e5m2:
      store<std::uint8_t>(out, from_float ? float_to_float8_e5m2(static_cast<float>(value))
                                          : double_to_float8_e5m2(static_cast<double>(value)));
      break;
    case DType::float16: store<std::uint16_t>(out, float_to_half(static_cast<float>(value))); break;
    case DType::bfloat16: store<std::uint16_t>(out, float_to_bfloat16(static_cast<float>(value))); break;
    case DType::float32: store<float>(out, static_cast<float>(value)); break;
    case DType::float64: store<double>(out, static_cast<double>(value)); break;
    case DType::complex64:
      store<float>(out, static_cast<float>(value));
      store<float>(out + 4, static_cast<float>(imag));
      break;
    case DType::complex128:
      store<double>(out, static_cast<double>(value));
      store<double>(out + 8, static_cast<double>(imag));
      break;
  }
}

}  // namespace kernc
