// kernc::float8_e4m3fn and kernc::float8_e5m2: 8-bit storage floats with cuda_fp8.h's
// conversions and float16's arithmetic (float). Included after float16.cuh.
//
// NOTE [ float8 conversions ]
// The rules are those of cuda_fp8.h's __nv_fp8_e4m3 / __nv_fp8_e5m2 constructors
// (__nv_cvt_float_to_fp8 / __nv_cvt_double_to_fp8 with __NV_SATFINITE), written here in
// portable integer code, one text for NVRTC, HIPRTC and the host compiler:
//  - float or double to float8 rounds to nearest even as if the exponent were unbounded;
//    a result past the largest finite value (448 for E4M3, 57344 for E5M2), and an
//    infinity, become that value with the input's sign (saturation, never inf or NaN);
//  - values at or below half the smallest subnormal (2^-10, 2^-17) become zeros of the
//    input's sign; -0 stays -0;
//  - a float NaN becomes 0x7f for both formats (cuda_fp8.h makes it the canonical NaN
//    first, sign dropped); a double NaN keeps its sign, and E5M2 keeps the two top bits of
//    its payload, made quiet (0x7e | bits);
//  - integers and the 16-bit floats convert through float, as cuda_fp8.h's do;
//  - float8 to float is exact; a NaN code (E4M3 0x7f/0xff, E5M2 0x7d-0x7f, 0xfd-0xff)
//    gives the float NaN 0x7fffffff, sign dropped as cuda_fp8.h's does.
// No hardware cvt (sm_89+): the software path is the same bits everywhere and a quantize
// kernel stays memory-bound. The host library's copy of these rules is
// src/core/float8.cpp; tests/unit/test_float8.cpp checks both against a reference of its
// own, every code and many floats.
#pragma once

namespace kernc {
namespace detail {

// The magnitude code of a value whose IEEE bits with the sign cleared are `magnitude`:
// rounded to nearest even (FractionBits fraction bits and exponent bias SourceBias in,
// MantissaBits and Bias out), then clamped to MaxFinite (which saturates infinity too).
template <class Bits, int FractionBits, int SourceBias, int MantissaBits, int Bias, unsigned MaxFinite>
KERNC_DEVICE unsigned int round_to_float8(Bits magnitude) {
  const int exponent = static_cast<int>(magnitude >> FractionBits) - SourceBias;
  if (exponent > 16) return MaxFinite;  // past every float8's range, infinity included
  const int min_exponent = 1 - Bias;
  const int shift = FractionBits - MantissaBits + (exponent < min_exponent ? min_exponent - exponent : 0);
  if (shift > FractionBits + 1) return 0u;  // below half the smallest subnormal (source subnormals too)
  const Bits one = 1;
  const Bits significand = (magnitude & ((one << FractionBits) - one)) | (one << FractionBits);
  Bits q = significand >> shift;
  const Bits rest = significand & ((one << shift) - one), half = one << (shift - 1);
  if (rest > half || (rest == half && (q & one))) ++q;
  const Bits code = (exponent < min_exponent ? Bits(0) : static_cast<Bits>(exponent - min_exponent) << MantissaBits) + q;
  return code < Bits(MaxFinite) ? static_cast<unsigned int>(code) : MaxFinite;
}

}  // namespace detail

KERNC_DEVICE unsigned char float_to_float8_e4m3fn_bits(float f) {
  const unsigned int u = float_bits(f), magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return 0x7f;
  return static_cast<unsigned char>(((u >> 24) & 0x80u) |
                                    detail::round_to_float8<unsigned int, 23, 127, 3, 7, 0x7eu>(magnitude));
}

KERNC_DEVICE unsigned char float_to_float8_e5m2_bits(float f) {
  const unsigned int u = float_bits(f), magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return 0x7f;
  return static_cast<unsigned char>(((u >> 24) & 0x80u) |
                                    detail::round_to_float8<unsigned int, 23, 127, 2, 15, 0x7bu>(magnitude));
}

KERNC_DEVICE unsigned char double_to_float8_e4m3fn_bits(double d) {
  const unsigned long long u = double_bits(d), magnitude = u & 0x7fffffffffffffffull;
  const unsigned int sign = static_cast<unsigned int>(u >> 56) & 0x80u;
  if (magnitude > 0x7ff0000000000000ull) return static_cast<unsigned char>(sign | 0x7fu);
  return static_cast<unsigned char>(sign | detail::round_to_float8<unsigned long long, 52, 1023, 3, 7, 0x7eu>(magnitude));
}

KERNC_DEVICE unsigned char double_to_float8_e5m2_bits(double d) {
  const unsigned long long u = double_bits(d), magnitude = u & 0x7fffffffffffffffull;
  const unsigned int sign = static_cast<unsigned int>(u >> 56) & 0x80u;
  if (magnitude > 0x7ff0000000000000ull) return static_cast<unsigned char>(sign | 0x7eu | (static_cast<unsigned int>(u >> 50) & 3u));
  return static_cast<unsigned char>(sign | detail::round_to_float8<unsigned long long, 52, 1023, 2, 15, 0x7bu>(magnitude));
}

KERNC_DEVICE float float8_e4m3fn_bits_to_float(unsigned char b) {
  const unsigned int sign = static_cast<unsigned int>(b & 0x80u) << 24, magnitude = b & 0x7fu;
  if (magnitude == 0x7fu) return bits_float(0x7fffffffu);
  if (magnitude < 0x08u) return bits_float(float_bits(static_cast<float>(magnitude) * 0.001953125f) | sign);  // m * 2^-9
  return bits_float(sign | ((magnitude + (120u << 3)) << 20));
}

KERNC_DEVICE float float8_e5m2_bits_to_float(unsigned char b) {
  const unsigned int sign = static_cast<unsigned int>(b & 0x80u) << 24, magnitude = b & 0x7fu;
  if (magnitude > 0x7cu) return bits_float(0x7fffffffu);
  if (magnitude == 0x7cu) return bits_float(sign | 0x7f800000u);
  if (magnitude < 0x04u) return bits_float(float_bits(static_cast<float>(magnitude) * 1.52587890625e-05f) | sign);  // m * 2^-16
  return bits_float(sign | ((magnitude + (112u << 2)) << 21));
}

struct float8_e4m3fn;
struct float8_e5m2;

namespace detail {
// What a float8 converts from through float besides C's arithmetic types: the other
// storage floats, which float holds exactly (so there is one rounding).
template <class T> struct is_float8_source { static constexpr bool value = is_arithmetic<T>::value; };
template <> struct is_float8_source<float16> { static constexpr bool value = true; };
template <> struct is_float8_source<bfloat16> { static constexpr bool value = true; };
template <> struct is_float8_source<float8_e4m3fn> { static constexpr bool value = true; };
template <> struct is_float8_source<float8_e5m2> { static constexpr bool value = true; };
}  // namespace detail

// As float16 without native arithmetic (NOTE [ half arithmetic is float arithmetic ],
// float16.cuh): no operator of two float8s, so arithmetic is float's (double's, with a
// double) and rounds once, when stored; mixed with a C arithmetic type, C's promotion of
// float. A double converts directly (cuda_fp8.h's double constructor), not through float.
#define KERNC_FLOAT8_TYPE(Name)                                                                              \
  struct Name {                                                                                              \
    unsigned char bits;                                                                                      \
    Name() = default;                                                                                        \
    template <class U, class = typename detail::enable_if<detail::is_float8_source<U>::value>::type>        \
    KERNC_DEVICE Name(U value) : bits(float_to_##Name##_bits(static_cast<float>(value))) {}                 \
    KERNC_DEVICE Name(double value) : bits(double_to_##Name##_bits(value)) {}                               \
    KERNC_DEVICE operator float() const { return Name##_bits_to_float(bits); }                              \
    KERNC_DEVICE static Name from_raw(unsigned char raw) { Name h; h.bits = raw; return h; }                \
    template <class U> KERNC_DEVICE Name& operator+=(const U& o) { return *this = Name(*this + o); }        \
    template <class U> KERNC_DEVICE Name& operator-=(const U& o) { return *this = Name(*this - o); }        \
    template <class U> KERNC_DEVICE Name& operator*=(const U& o) { return *this = Name(*this * o); }        \
    template <class U> KERNC_DEVICE Name& operator/=(const U& o) { return *this = Name(*this / o); }        \
  };                                                                                                         \
  KERNC_DEVICE bool operator==(Name a, Name b) { return float(a) == float(b); }                             \
  KERNC_DEVICE bool operator!=(Name a, Name b) { return float(a) != float(b); }                             \
  KERNC_DEVICE bool operator<(Name a, Name b) { return float(a) < float(b); }                               \
  KERNC_DEVICE bool operator<=(Name a, Name b) { return float(a) <= float(b); }                             \
  KERNC_DEVICE bool operator>(Name a, Name b) { return float(a) > float(b); }                               \
  KERNC_DEVICE bool operator>=(Name a, Name b) { return float(a) >= float(b); }                             \
  KERNC_FLOAT8_MIXED(Name, +) KERNC_FLOAT8_MIXED(Name, -) KERNC_FLOAT8_MIXED(Name, *)                       \
  KERNC_FLOAT8_MIXED(Name, /) KERNC_FLOAT8_MIXED(Name, ==) KERNC_FLOAT8_MIXED(Name, !=)                     \
  KERNC_FLOAT8_MIXED(Name, <) KERNC_FLOAT8_MIXED(Name, <=) KERNC_FLOAT8_MIXED(Name, >)                      \
  KERNC_FLOAT8_MIXED(Name, >=)

#define KERNC_FLOAT8_MIXED(Name, op)                                                                          \
  template <class U, class = typename detail::enable_if<detail::is_arithmetic<U>::value>::type>            \
  KERNC_DEVICE auto operator op(Name a, U b)->decltype(float(a) op b) { return float(a) op b; }            \
  template <class U, class = typename detail::enable_if<detail::is_arithmetic<U>::value>::type>            \
  KERNC_DEVICE auto operator op(U a, Name b)->decltype(a op float(b)) { return a op float(b); }

KERNC_FLOAT8_TYPE(float8_e4m3fn)
KERNC_FLOAT8_TYPE(float8_e5m2)

#undef KERNC_FLOAT8_MIXED
#undef KERNC_FLOAT8_TYPE

}  // namespace kernc
