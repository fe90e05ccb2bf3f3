// kernc::float16 and kernc::bfloat16: storage types with CuPy's float semantics.
// NOTE [ half arithmetic is float arithmetic ]
// As CuPy's float16 (cupy/_core/include/cupy/float16.cuh), a half has no arithmetic of its
// own: it converts to float, so `z = x * y + x` is computed in float and rounded to half
// once, when it is stored. A kernel ported from CuPy gives CuPy's bits. The opt-in
// `native_half_arithmetic` (ElementwiseOptions, ReductionOptions) defines
// KERNC_NATIVE_HALF_ARITHMETIC before this header: then float16 +, - and * of two halves
// are one native half instruction on sm_53+ and give a half (NOTE [ native half
// arithmetic ]), which rounds after every operation of a compound expression.
// Mixed with other arithmetic types a half promotes like float does, either way.
#pragma once

namespace kernc {
namespace detail {
template <class T> struct is_arithmetic { static constexpr bool value = false; };
#define KERNC_ARITHMETIC(T) template <> struct is_arithmetic<T> { static constexpr bool value = true; };
KERNC_ARITHMETIC(bool) KERNC_ARITHMETIC(char) KERNC_ARITHMETIC(signed char) KERNC_ARITHMETIC(unsigned char)
KERNC_ARITHMETIC(short) KERNC_ARITHMETIC(unsigned short) KERNC_ARITHMETIC(int) KERNC_ARITHMETIC(unsigned int)
KERNC_ARITHMETIC(long) KERNC_ARITHMETIC(unsigned long) KERNC_ARITHMETIC(long long)
KERNC_ARITHMETIC(unsigned long long) KERNC_ARITHMETIC(float) KERNC_ARITHMETIC(double)
#undef KERNC_ARITHMETIC
template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { typedef T type; };
}  // namespace detail

// NOTE [ native half arithmetic ]
// float16 +, - and * run as one native half instruction on NVIDIA GPUs that have them
// (sm_53 and later), instead of two conversions to float, the float operation and one back:
// a float16 reduction converted six times per element, and that bound it below the memory
// (tools/bench/NOTES.md v17). The bits are the same: a product of two halves is exact in
// float, so rounding it once is correct rounding; a sum is exact in float unless one term
// is below 2^-13 of the other, and then both ways give the larger term. Division, and
// bfloat16 (native only from sm_90), keep the float path.
KERNC_DEVICE unsigned short float16_add_bits(unsigned short a, unsigned short b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
  unsigned short r;
  asm("add.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b));
  return r;
#else
  return float_to_half_bits(half_bits_to_float(a) + half_bits_to_float(b));
#endif
}
KERNC_DEVICE unsigned short float16_sub_bits(unsigned short a, unsigned short b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
  unsigned short r;
  asm("sub.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b));
  return r;
#else
  return float_to_half_bits(half_bits_to_float(a) - half_bits_to_float(b));
#endif
}
KERNC_DEVICE unsigned short float16_mul_bits(unsigned short a, unsigned short b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
  unsigned short r;
  asm("mul.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b));
  return r;
#else
  return float_to_half_bits(half_bits_to_float(a) * half_bits_to_float(b));
#endif
}
KERNC_DEVICE unsigned short bfloat16_add_bits(unsigned short a, unsigned short b) {
  return float_to_bfloat16_bits(bfloat16_bits_to_float(a) + bfloat16_bits_to_float(b));
}
KERNC_DEVICE unsigned short bfloat16_sub_bits(unsigned short a, unsigned short b) {
  return float_to_bfloat16_bits(bfloat16_bits_to_float(a) - bfloat16_bits_to_float(b));
}
KERNC_DEVICE unsigned short bfloat16_mul_bits(unsigned short a, unsigned short b) {
  return float_to_bfloat16_bits(bfloat16_bits_to_float(a) * bfloat16_bits_to_float(b));
}

#define KERNC_HALF_TYPE(Name, to_bits, from_bits)                                                        \
  struct Name {                                                                                           \
    unsigned short bits;                                                                                  \
    Name() = default;                                                                                     \
    template <class U, class = typename detail::enable_if<detail::is_arithmetic<U>::value>::type>        \
    KERNC_DEVICE Name(U value) : bits(to_bits(static_cast<float>(value))) {}                             \
    KERNC_DEVICE operator float() const { return from_bits(bits); }                                      \
    KERNC_DEVICE static Name from_raw(unsigned short raw) { Name h; h.bits = raw; return h; }            \
    KERNC_HALF_COMPOUND(Name, +=, +) KERNC_HALF_COMPOUND(Name, -=, -)                                   \
    KERNC_HALF_COMPOUND(Name, *=, *) KERNC_HALF_COMPOUND(Name, /=, /)                                   \
  };                                                                                                      \
  KERNC_HALF_NATIVE_OPERATORS(Name)                                                                       \
  KERNC_DEVICE bool operator==(Name a, Name b) { return float(a) == float(b); }                          \
  KERNC_DEVICE bool operator!=(Name a, Name b) { return float(a) != float(b); }                          \
  KERNC_DEVICE bool operator<(Name a, Name b) { return float(a) < float(b); }                            \
  KERNC_DEVICE bool operator<=(Name a, Name b) { return float(a) <= float(b); }                          \
  KERNC_DEVICE bool operator>(Name a, Name b) { return float(a) > float(b); }                            \
  KERNC_DEVICE bool operator>=(Name a, Name b) { return float(a) >= float(b); }                          \
  KERNC_HALF_MIXED(Name, +) KERNC_HALF_MIXED(Name, -) KERNC_HALF_MIXED(Name, *) KERNC_HALF_MIXED(Name, /) \
  KERNC_HALF_MIXED(Name, ==) KERNC_HALF_MIXED(Name, !=) KERNC_HALF_MIXED(Name, <)                         \
  KERNC_HALF_MIXED(Name, <=) KERNC_HALF_MIXED(Name, >) KERNC_HALF_MIXED(Name, >=)

// `h op= v` is `h = h op v` for any v a half can be combined with (as in CuPy): with a
// half v, the op is float's or, opted in, the native one.
#define KERNC_HALF_COMPOUND(Name, op_assign, op)                                                         \
  template <class U>                                                                                      \
  KERNC_DEVICE Name& operator op_assign(const U& o) { return *this = Name(*this op o); }

#if defined(KERNC_NATIVE_HALF_ARITHMETIC)
// Two halves give a half: +, - and * natively (NOTE [ native half arithmetic ]); / and
// negation through float, correctly rounded.
#define KERNC_HALF_NATIVE_OPERATORS(Name)                                                                \
  KERNC_DEVICE Name operator-(Name a) { return Name(-float(a)); }                                        \
  KERNC_DEVICE Name operator+(Name a, Name b) { return Name::from_raw(Name##_add_bits(a.bits, b.bits)); } \
  KERNC_DEVICE Name operator-(Name a, Name b) { return Name::from_raw(Name##_sub_bits(a.bits, b.bits)); } \
  KERNC_DEVICE Name operator*(Name a, Name b) { return Name::from_raw(Name##_mul_bits(a.bits, b.bits)); } \
  KERNC_DEVICE Name operator/(Name a, Name b) { return Name(float(a) / float(b)); }
#else
// CuPy's semantics (NOTE [ half arithmetic is float arithmetic ]): no operator of two
// halves, so the built-in float one applies through `operator float()` and the result is
// a float.
#define KERNC_HALF_NATIVE_OPERATORS(Name)
#endif

// Half with another arithmetic type: computed as float with that type (C promotion).
#define KERNC_HALF_MIXED(Name, op)                                                                        \
  template <class U, class = typename detail::enable_if<detail::is_arithmetic<U>::value>::type>          \
  KERNC_DEVICE auto operator op(Name a, U b)->decltype(float(a) op b) { return float(a) op b; }          \
  template <class U, class = typename detail::enable_if<detail::is_arithmetic<U>::value>::type>          \
  KERNC_DEVICE auto operator op(U a, Name b)->decltype(a op float(b)) { return a op float(b); }

KERNC_HALF_TYPE(float16, float_to_half_bits, half_bits_to_float)
KERNC_HALF_TYPE(bfloat16, float_to_bfloat16_bits, bfloat16_bits_to_float)

#undef KERNC_HALF_MIXED
#undef KERNC_HALF_TYPE
#undef KERNC_HALF_NATIVE_OPERATORS
#undef KERNC_HALF_COMPOUND

}  // namespace kernc
