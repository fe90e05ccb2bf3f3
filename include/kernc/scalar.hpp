#pragma once
/// \file
/// Scalar: a host value with the C type it came from, converted to its parameter's dtype
/// at launch; host float16/bfloat16/float8 conversions.

#include <complex>
#include <cstdint>

#include "kernc/dtype.hpp"
#include "kernc/export.hpp"

namespace kernc {

/// A scalar argument: a value with the C type it came from. It is converted to its
/// parameter's dtype with C's conversion rules, except that an integer value outside an
/// integer parameter's range is refused where kernc converts it (fits()), as CuPy 14
/// refuses a Python integer out of bounds (NumPy 2's NEP 50) instead of wrapping it.
struct KERNC_API Scalar {
  DType dtype = DType::float64;
  long double real = 0;  ///< bool, integer and floating values (exact for 64-bit integers)
  long double imag = 0;
  std::uint64_t bits = 0;  ///< exact unsigned/signed 64-bit value for integer dtypes

  Scalar() = default;
  Scalar(bool v) : dtype(DType::bool_), real(v), bits(v) {}
  Scalar(signed char v) : dtype(DType::int8), real(v), bits(static_cast<std::uint64_t>(static_cast<std::int64_t>(v))) {}
  Scalar(short v) : dtype(DType::int16), real(v), bits(static_cast<std::uint64_t>(static_cast<std::int64_t>(v))) {}
  Scalar(int v) : dtype(DType::int32), real(v), bits(static_cast<std::uint64_t>(static_cast<std::int64_t>(v))) {}
  Scalar(long v) : dtype(DType::int64), real(v), bits(static_cast<std::uint64_t>(v)) {}
  Scalar(long long v) : dtype(DType::int64), real(v), bits(static_cast<std::uint64_t>(v)) {}
  Scalar(unsigned char v) : dtype(DType::uint8), real(v), bits(v) {}
  Scalar(unsigned short v) : dtype(DType::uint16), real(v), bits(v) {}
  Scalar(unsigned int v) : dtype(DType::uint32), real(v), bits(v) {}
  Scalar(unsigned long v) : dtype(DType::uint64), real(v), bits(v) {}
  Scalar(unsigned long long v) : dtype(DType::uint64), real(v), bits(v) {}
  Scalar(float v) : dtype(DType::float32), real(v) {}
  Scalar(double v) : dtype(DType::float64), real(v) {}
  Scalar(std::complex<float> v) : dtype(DType::complex64), real(v.real()), imag(v.imag()) {}
  Scalar(std::complex<double> v) : dtype(DType::complex128), real(v.real()), imag(v.imag()) {}
  /// A scalar of a dtype with no C++ type of its own (float16, bfloat16, float8_e4m3fn,
  /// float8_e5m2), from a double: it holds that dtype's value nearest `value`.
  static Scalar of(DType dtype, double value);

  /// The value of `dtype` whose bytes (itemsize(dtype) of them, little-endian, as
  /// convert_to writes them) are at `bytes`, as a Scalar of that dtype.
  static Scalar from_bytes(DType dtype, const void* bytes);

  /// The bytes of this value converted to `target` (C conversion), itemsize(target) long.
  void convert_to(DType target, unsigned char* out) const;
  /// False for an integer (or bool) value and an integer `target` whose range does not
  /// hold it (-1 for uint8, 2^31 for int32): converting it would wrap; and for a NaN going
  /// to an integer `target` (CuPy raises there too). Other floating values truncate and
  /// saturate, and any value fits a floating, complex or bool target.
  bool fits(DType target) const noexcept;
};

/// Host-side binary16 / bfloat16 conversions (round to nearest even), as the device does.
KERNC_API std::uint16_t float_to_half(float value) noexcept;
KERNC_API float half_to_float(std::uint16_t bits) noexcept;
KERNC_API std::uint16_t float_to_bfloat16(float value) noexcept;
KERNC_API float bfloat16_to_float(std::uint16_t bits) noexcept;

/// Host-side 8-bit float conversions, as the device's kernc::float8_e4m3fn / float8_e5m2
/// convert (NOTE [ float8 conversions ], templates/float8.cuh; cuda_fp8.h's rules): to
/// nearest even, a finite value past the largest (448, 57344) and infinity saturate to it
/// (__NV_SATFINITE), a float NaN becomes 0x7f, a double NaN keeps its sign (and, E5M2, its
/// top two payload bits, quiet). float8 to float is exact; a NaN code gives the float NaN
/// 0x7fffffff.
KERNC_API std::uint8_t float_to_float8_e4m3fn(float value) noexcept;
KERNC_API std::uint8_t float_to_float8_e5m2(float value) noexcept;
KERNC_API std::uint8_t double_to_float8_e4m3fn(double value) noexcept;
KERNC_API std::uint8_t double_to_float8_e5m2(double value) noexcept;
KERNC_API float float8_e4m3fn_to_float(std::uint8_t bits) noexcept;
KERNC_API float float8_e5m2_to_float(std::uint8_t bits) noexcept;

}  // namespace kernc
