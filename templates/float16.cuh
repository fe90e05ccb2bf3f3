// kernc::float16 and kernc::bfloat16: storage types with float arithmetic.
// Every operation converts to float, computes, and rounds back, which for +, -, * and /
// gives the correctly rounded half result (float has more than twice the bits).
// Mixed with other arithmetic types they promote like float does.
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

#define KERNC_HALF_TYPE(Name, to_bits, from_bits)                                                        \
  struct Name {                                                                                           \
    unsigned short bits;                                                                                  \
    Name() = default;                                                                                     \
    template <class U, class = typename detail::enable_if<detail::is_arithmetic<U>::value>::type>        \
    KERNC_DEVICE Name(U value) : bits(to_bits(static_cast<float>(value))) {}                             \
    KERNC_DEVICE operator float() const { return from_bits(bits); }                                      \
    KERNC_DEVICE static Name from_raw(unsigned short raw) { Name h; h.bits = raw; return h; }            \
    KERNC_DEVICE Name& operator+=(Name o) { return *this = Name(float(*this) + float(o)); }              \
    KERNC_DEVICE Name& operator-=(Name o) { return *this = Name(float(*this) - float(o)); }              \
    KERNC_DEVICE Name& operator*=(Name o) { return *this = Name(float(*this) * float(o)); }              \
    KERNC_DEVICE Name& operator/=(Name o) { return *this = Name(float(*this) / float(o)); }              \
  };                                                                                                      \
  KERNC_DEVICE Name operator-(Name a) { return Name(-float(a)); }                                        \
  KERNC_DEVICE Name operator+(Name a, Name b) { return Name(float(a) + float(b)); }                      \
  KERNC_DEVICE Name operator-(Name a, Name b) { return Name(float(a) - float(b)); }                      \
  KERNC_DEVICE Name operator*(Name a, Name b) { return Name(float(a) * float(b)); }                      \
  KERNC_DEVICE Name operator/(Name a, Name b) { return Name(float(a) / float(b)); }                      \
  KERNC_DEVICE bool operator==(Name a, Name b) { return float(a) == float(b); }                          \
  KERNC_DEVICE bool operator!=(Name a, Name b) { return float(a) != float(b); }                          \
  KERNC_DEVICE bool operator<(Name a, Name b) { return float(a) < float(b); }                            \
  KERNC_DEVICE bool operator<=(Name a, Name b) { return float(a) <= float(b); }                          \
  KERNC_DEVICE bool operator>(Name a, Name b) { return float(a) > float(b); }                            \
  KERNC_DEVICE bool operator>=(Name a, Name b) { return float(a) >= float(b); }                          \
  KERNC_HALF_MIXED(Name, +) KERNC_HALF_MIXED(Name, -) KERNC_HALF_MIXED(Name, *) KERNC_HALF_MIXED(Name, /) \
  KERNC_HALF_MIXED(Name, ==) KERNC_HALF_MIXED(Name, !=) KERNC_HALF_MIXED(Name, <)                         \
  KERNC_HALF_MIXED(Name, <=) KERNC_HALF_MIXED(Name, >) KERNC_HALF_MIXED(Name, >=)

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

}  // namespace kernc
