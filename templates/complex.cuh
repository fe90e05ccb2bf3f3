// kernc::complex<T>: the complex64 / complex128 element types (layout: real, imag), with
// the function set of CuPy's complex (thrust's): arithmetic mixed with reals and with the
// other precision, NumPy's ordering, exp, log, log10, pow, sqrt, the trigonometric and
// hyperbolic functions and their inverses, abs, arg, conj, norm, polar, proj, isnan,
// isinf and isfinite.
//
// NOTE [ complex functions ]
// - Unqualified calls find them: argument-dependent lookup does for a kernc::complex
//   argument, and the using-declarations at the end put `complex` and the functions at
//   global scope, as CuPy's header does with thrust's, so that CuPy kernels that write
//   `complex<float>` compile unchanged. Every function is a template on the part type:
//   for a real argument deduction fails, and `exp(x)` for a float x still calls the
//   CUDA (HIP) math function.
// - Inside namespace kernc an unqualified exp(x) would find only the templates here, so
//   the parts' math goes through detail::complex_math<T>, which names the C functions
//   (expf and the other float ones for float: complex64 stays in single precision).
// - Special values (infinities, NaN, signed zeros, branch cuts) follow C99 Annex G, as
//   std::complex does; the algorithms are W. Kahan's ("Branch Cuts for Complex Elementary
//   Functions", 1987) where the textbook formula cancels or overflows.
// - tests/unit/test_cupy_complex.cpp compiles this file with the host compiler
//   (KERNC_DEVICE defined as inline) and compares it with std::complex, so it uses only
//   math functions that both the CUDA/HIP device libraries and the C library have.
#pragma once

namespace kernc {

template <class T>
struct complex;
// Used by detail:: before their definitions below.
template <class T> KERNC_DEVICE complex<T> sqrt(const complex<T>& z);
template <class T> KERNC_DEVICE complex<T> exp(const complex<T>& z);
template <class T> KERNC_DEVICE complex<T> log(const complex<T>& z);
template <class T> KERNC_DEVICE complex<T> polar(const T& m, const T& theta = T());

namespace detail {

template <bool B, class T = void> struct complex_enable_if {};
template <class T> struct complex_enable_if<true, T> { typedef T type; };

// The real types that mix with a complex in arithmetic and pow.
template <class T> struct complex_scalar { static const bool value = false; };
#define KERNC_COMPLEX_SCALAR(T) template <> struct complex_scalar<T> { static const bool value = true; };
KERNC_COMPLEX_SCALAR(bool) KERNC_COMPLEX_SCALAR(char) KERNC_COMPLEX_SCALAR(signed char)
KERNC_COMPLEX_SCALAR(unsigned char) KERNC_COMPLEX_SCALAR(short) KERNC_COMPLEX_SCALAR(unsigned short)
KERNC_COMPLEX_SCALAR(int) KERNC_COMPLEX_SCALAR(unsigned int) KERNC_COMPLEX_SCALAR(long)
KERNC_COMPLEX_SCALAR(unsigned long) KERNC_COMPLEX_SCALAR(long long) KERNC_COMPLEX_SCALAR(unsigned long long)
KERNC_COMPLEX_SCALAR(float) KERNC_COMPLEX_SCALAR(double)
#undef KERNC_COMPLEX_SCALAR

// The part type of a result mixing complex<T> with U (a real or the other part type):
// double if either is double, else T. An integer exponent or factor keeps complex64 in
// single precision (thrust would make that complex<int>).
template <class T, class U> struct complex_promote { typedef T type; };
template <> struct complex_promote<float, double> { typedef double type; };

// The parts' math; see NOTE [ complex functions ]. F is the C suffix (f for float).
// Constants: the largest finite value; log of it (exp overflows above); |x| above which
// tanh(x) is +-1 in T; |z| above which atanh(z) is 1/z + i pi/2 in T and (1 - x)^2 might
// overflow; the scale (an even power of two) that lifts tiny parts out of the subnormals.
template <class T> struct complex_math;
#define KERNC_COMPLEX_MATH(T, F, kMax, kTiny, kLogMax, kTanhBig, kAtanhBig, kScale)                       \
  template <>                                                                                          \
  struct complex_math<T> {                                                                             \
    static KERNC_DEVICE T exp(T x) { return ::exp##F(x); }                                            \
    static KERNC_DEVICE T log(T x) { return ::log##F(x); }                                            \
    static KERNC_DEVICE T log1p(T x) { return ::log1p##F(x); }                                        \
    static KERNC_DEVICE T sqrt(T x) { return ::sqrt##F(x); }                                          \
    static KERNC_DEVICE T hypot(T x, T y) { return ::hypot##F(x, y); }                                \
    static KERNC_DEVICE T atan(T x) { return ::atan##F(x); }                                          \
    static KERNC_DEVICE T atan2(T y, T x) { return ::atan2##F(y, x); }                                \
    static KERNC_DEVICE T asinh(T x) { return ::asinh##F(x); }                                        \
    static KERNC_DEVICE T sinh(T x) { return ::sinh##F(x); }                                          \
    static KERNC_DEVICE T cosh(T x) { return ::cosh##F(x); }                                          \
    static KERNC_DEVICE T tan(T x) { return ::tan##F(x); }                                            \
    static KERNC_DEVICE void sincos(T x, T* s, T* c) { ::sincos##F(x, s, c); }                        \
    static KERNC_DEVICE T pow(T x, T y) { return ::pow##F(x, y); }                                    \
    static KERNC_DEVICE T fma(T x, T y, T z) { return ::fma##F(x, y, z); }                           \
    static KERNC_DEVICE T fabs(T x) { return ::fabs##F(x); }                                          \
    static KERNC_DEVICE T copysign(T x, T y) { return ::copysign##F(x, y); }                          \
    static KERNC_DEVICE bool isnan(T x) { return x != x; }                                            \
    static KERNC_DEVICE bool isfinite(T x) { return ::fabs##F(x) <= kMax; }                           \
    static KERNC_DEVICE bool isinf(T x) { return ::fabs##F(x) > kMax; }                               \
    static KERNC_DEVICE T max_finite() { return kMax; }                                              \
    static KERNC_DEVICE T tiny() { return kTiny; }                                                    \
    static KERNC_DEVICE T log_max() { return kLogMax; }                                               \
    static KERNC_DEVICE T tanh_big() { return kTanhBig; }                                             \
    static KERNC_DEVICE T atanh_big() { return kAtanhBig; }                                           \
    static KERNC_DEVICE T scale() { return kScale; }                                                  \
    static KERNC_DEVICE T half_pi() { return static_cast<T>(1.57079632679489661923); }                \
    static KERNC_DEVICE T log10_e() { return static_cast<T>(0.434294481903251827651); }               \
  };
KERNC_COMPLEX_MATH(float, f, 3.40282347e+38f, 4.7e-38f, 88.7228391f, 9.0f, 1.0e18f, 16777216.0f)
KERNC_COMPLEX_MATH(double, , 1.7976931348623157e+308, 8.9e-308, 709.782712893383973, 22.0, 1.0e153, 18014398509481984.0)
#undef KERNC_COMPLEX_MATH

// e^x * c without overflowing e^x first where the product is finite.
template <class T>
KERNC_DEVICE T complex_exp_times(T x, T c) {
  typedef complex_math<T> M;
  if (x <= M::log_max()) return M::exp(x) * c;
  const T h = M::exp(x * T(0.5));
  return (h * c) * h;
}

// ln |x + iy|. Near |z| = 1 the log of the rounded hypot would be all rounding error, so
// there it is log1p(d), d = x^2 + y^2 - 1 = (|x| - 1)(|x| + 1) + y^2 for |x| >= |y|, formed
// so that its one rounding is relative to d itself: |x| - 1 is exact (|x| is in [0.5, 2]),
// |x| + 1 = u + eu exactly, y^2 = hy + ly exactly, and d = fma(|x| - 1, u, hy) + the
// small rest. Then ln |z| keeps its digits even on the unit circle's doorstep.
template <class T>
KERNC_DEVICE T complex_log_abs(T x, T y) {
  typedef complex_math<T> M;
  T ax = M::fabs(x), ay = M::fabs(y);
  if (ax < ay) {
    const T t = ax;
    ax = ay;
    ay = t;
  }
  const T n = ax * ax + ay * ay;
  if (n > T(0.5) && n < T(2)) {
    const T am1 = ax - T(1), u = ax + T(1), eu = ax - (u - T(1));
    const T hy = ay * ay, ly = M::fma(ay, ay, -hy);
    return T(0.5) * M::log1p(M::fma(am1, u, hy) + (ly + am1 * eu));
  }
  return M::log(M::hypot(ax, ay));
}

// asin(x + iy) for finite x and y (Kahan): with sqrt(1 - z) = a1 + i b1 and
// sqrt(1 + z) = a2 + i b2, Re = atan(x / (a1 a2 - b1 b2)), Im = asinh(a1 b2 - b1 a2); the
// two products of each difference have opposite signs, so nothing cancels.
template <class T>
KERNC_DEVICE complex<T> complex_asin_finite(T x, T y) {
  typedef complex_math<T> M;
  const complex<T> s1 = sqrt(complex<T>(T(1) - x, -y));
  const complex<T> s2 = sqrt(complex<T>(T(1) + x, y));
  return complex<T>(M::atan(x / (s1.re * s2.re - s1.im * s2.im)), M::asinh(s1.re * s2.im - s1.im * s2.re));
}

// asinh for z with an infinite or NaN part (Annex G's table for casinh).
template <class T>
KERNC_DEVICE complex<T> complex_asinh_special(T x, T y) {
  typedef complex_math<T> M;
  if (M::isinf(x) || M::isinf(y)) {
    const T inf = M::isinf(x) ? M::fabs(x) : M::fabs(y);
    if (M::isnan(x)) return complex<T>(inf, x);
    if (M::isnan(y)) return complex<T>(M::copysign(inf, x), y);
    return complex<T>(M::copysign(inf, x), M::atan2(y, M::fabs(x)));
  }
  if (y == T(0)) return complex<T>(x, y);
  return complex<T>(x + y, x + y);
}

template <class T>
KERNC_DEVICE complex<T> complex_acos_special(T x, T y) {
  // acos = pi/2 - asin, and asin(z) = -i asinh(iz).
  const complex<T> a = complex_asinh_special(-y, x);
  return complex<T>(complex_math<T>::half_pi() - a.im, a.re);
}

template <class T>
KERNC_DEVICE complex<T> complex_pow_complex(const complex<T>& x, const complex<T>& y) {
  if (x.re == T(0) && x.im == T(0)) {
    if (y.re == T(0) && y.im == T(0)) return complex<T>(T(1), T(0));
    if (y.re > T(0)) return complex<T>(T(0), T(0));
  }
  return exp(y * log(x));
}

template <class T>
KERNC_DEVICE complex<T> complex_pow_real(const complex<T>& x, T y) {
  typedef complex_math<T> M;
  if (x.im == T(0) && x.re > T(0)) return complex<T>(M::pow(x.re, y), T(0));
  if (x.re == T(0) && x.im == T(0)) {
    if (y == T(0)) return complex<T>(T(1), T(0));
    if (y > T(0)) return complex<T>(T(0), T(0));
  }
  return polar(complex_exp_times(y * complex_log_abs(x.re, x.im), T(1)), y * M::atan2(x.im, x.re));
}

template <class T>
KERNC_DEVICE complex<T> complex_real_pow(T x, const complex<T>& y) {
  typedef complex_math<T> M;
  if (x > T(0)) return polar(M::pow(x, y.re), y.im * M::log(x));
  return complex_pow_complex(complex<T>(x, T(0)), y);
}

}  // namespace detail

template <class T>
struct complex {
  typedef T value_type;
  T re, im;
  complex() = default;
  KERNC_DEVICE complex(T real, T imag = T(0)) : re(real), im(imag) {}
  template <class U>
  KERNC_DEVICE complex(const complex<U>& o) : re(static_cast<T>(o.re)), im(static_cast<T>(o.im)) {}
  KERNC_DEVICE T real() const { return re; }
  KERNC_DEVICE T imag() const { return im; }
  KERNC_DEVICE void real(T value) { re = value; }
  KERNC_DEVICE void imag(T value) { im = value; }
  KERNC_DEVICE complex& operator+=(const complex& o) { re += o.re; im += o.im; return *this; }
  KERNC_DEVICE complex& operator-=(const complex& o) { re -= o.re; im -= o.im; return *this; }
  KERNC_DEVICE complex& operator*=(const complex& o) { return *this = *this * o; }
  KERNC_DEVICE complex& operator/=(const complex& o) { return *this = *this / o; }
  // With a real: the real's zero imaginary part takes no part (1e300 * (inf + 0i) is not NaN).
  KERNC_DEVICE complex& operator+=(T o) { re += o; return *this; }
  KERNC_DEVICE complex& operator-=(T o) { re -= o; return *this; }
  KERNC_DEVICE complex& operator*=(T o) { re *= o; im *= o; return *this; }
  KERNC_DEVICE complex& operator/=(T o) { re /= o; im /= o; return *this; }

  // Hidden friends: found only through a complex argument, and (not being templates) they
  // take any real that converts to T, so `z * 2` and `z * 2.0` compile for complex<float>.
  friend KERNC_DEVICE complex operator+(const complex& a) { return a; }
  friend KERNC_DEVICE complex operator-(const complex& a) { return complex(-a.re, -a.im); }
  friend KERNC_DEVICE complex operator+(const complex& a, const complex& b) { return complex(a.re + b.re, a.im + b.im); }
  friend KERNC_DEVICE complex operator-(const complex& a, const complex& b) { return complex(a.re - b.re, a.im - b.im); }
  friend KERNC_DEVICE complex operator*(const complex& a, const complex& b) {
    return complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
  }
  friend KERNC_DEVICE complex operator/(const complex& a, const complex& b) {
    typedef detail::complex_math<T> M;
    // Smith's algorithm: no overflow in the intermediate |b|^2 for large b.
    if (M::fabs(b.re) >= M::fabs(b.im)) {
      T r = b.im / b.re, d = b.re + b.im * r;
      return complex((a.re + a.im * r) / d, (a.im - a.re * r) / d);
    }
    T r = b.re / b.im, d = b.re * r + b.im;
    return complex((a.re * r + a.im) / d, (a.im * r - a.re) / d);
  }
  friend KERNC_DEVICE complex operator+(const complex& a, T b) { return complex(a.re + b, a.im); }
  friend KERNC_DEVICE complex operator+(T a, const complex& b) { return complex(a + b.re, b.im); }
  friend KERNC_DEVICE complex operator-(const complex& a, T b) { return complex(a.re - b, a.im); }
  friend KERNC_DEVICE complex operator-(T a, const complex& b) { return complex(a - b.re, -b.im); }
  friend KERNC_DEVICE complex operator*(const complex& a, T b) { return complex(a.re * b, a.im * b); }
  friend KERNC_DEVICE complex operator*(T a, const complex& b) { return complex(a * b.re, a * b.im); }
  friend KERNC_DEVICE complex operator/(const complex& a, T b) { return complex(a.re / b, a.im / b); }
  friend KERNC_DEVICE complex operator/(T a, const complex& b) { return complex(a, T(0)) / b; }

  friend KERNC_DEVICE bool operator==(const complex& a, const complex& b) { return a.re == b.re && a.im == b.im; }
  friend KERNC_DEVICE bool operator!=(const complex& a, const complex& b) { return !(a == b); }
  friend KERNC_DEVICE bool operator==(const complex& a, T b) { return a.re == b && a.im == T(0); }
  friend KERNC_DEVICE bool operator==(T a, const complex& b) { return b == a; }
  friend KERNC_DEVICE bool operator!=(const complex& a, T b) { return !(a == b); }
  friend KERNC_DEVICE bool operator!=(T a, const complex& b) { return !(b == a); }
  // NumPy's (and CuPy's) order: by real part, then by imaginary part.
  friend KERNC_DEVICE bool operator<(const complex& a, const complex& b) {
    return a.re < b.re || (a.re == b.re && a.im < b.im);
  }
  friend KERNC_DEVICE bool operator>(const complex& a, const complex& b) { return b < a; }
  friend KERNC_DEVICE bool operator<=(const complex& a, const complex& b) { return a == b || a < b; }
  friend KERNC_DEVICE bool operator>=(const complex& a, const complex& b) { return a == b || b < a; }
  friend KERNC_DEVICE bool operator<(const complex& a, T b) { return a < complex(b); }
  friend KERNC_DEVICE bool operator<(T a, const complex& b) { return complex(a) < b; }
  friend KERNC_DEVICE bool operator>(const complex& a, T b) { return complex(b) < a; }
  friend KERNC_DEVICE bool operator>(T a, const complex& b) { return b < complex(a); }
  friend KERNC_DEVICE bool operator<=(const complex& a, T b) { return a <= complex(b); }
  friend KERNC_DEVICE bool operator<=(T a, const complex& b) { return complex(a) <= b; }
  friend KERNC_DEVICE bool operator>=(const complex& a, T b) { return a >= complex(b); }
  friend KERNC_DEVICE bool operator>=(T a, const complex& b) { return complex(a) >= b; }
};

// complex64 with complex128: computed in double (the hidden friends above take one type).
#define KERNC_COMPLEX_MIXED(op)                                                                       \
  template <class T, class U>                                                                         \
  KERNC_DEVICE complex<typename detail::complex_promote<T, U>::type> operator op(const complex<T>& a, \
                                                                                const complex<U>& b) { \
    typedef typename detail::complex_promote<T, U>::type P;                                           \
    return complex<P>(a) op complex<P>(b);                                                            \
  }
KERNC_COMPLEX_MIXED(+) KERNC_COMPLEX_MIXED(-) KERNC_COMPLEX_MIXED(*) KERNC_COMPLEX_MIXED(/)
#undef KERNC_COMPLEX_MIXED

template <class T> KERNC_DEVICE T real(const complex<T>& z) { return z.re; }
template <class T> KERNC_DEVICE T imag(const complex<T>& z) { return z.im; }
template <class T> KERNC_DEVICE complex<T> conj(const complex<T>& z) { return complex<T>(z.re, -z.im); }
template <class T> KERNC_DEVICE T norm(const complex<T>& z) { return z.re * z.re + z.im * z.im; }
template <class T> KERNC_DEVICE T abs(const complex<T>& z) { return detail::complex_math<T>::hypot(z.re, z.im); }
template <class T> KERNC_DEVICE T arg(const complex<T>& z) { return detail::complex_math<T>::atan2(z.im, z.re); }

template <class T> KERNC_DEVICE bool isnan(const complex<T>& z) { return z.re != z.re || z.im != z.im; }
template <class T> KERNC_DEVICE bool isinf(const complex<T>& z) {
  return detail::complex_math<T>::isinf(z.re) || detail::complex_math<T>::isinf(z.im);
}
template <class T> KERNC_DEVICE bool isfinite(const complex<T>& z) {
  return detail::complex_math<T>::isfinite(z.re) && detail::complex_math<T>::isfinite(z.im);
}

/// The complex number of magnitude `m` and phase `theta` (radians).
template <class T>
KERNC_DEVICE complex<T> polar(const T& m, const T& theta) {
  T s, c;
  detail::complex_math<T>::sincos(theta, &s, &c);
  return complex<T>(m * c, m * s);
}

/// The projection onto the Riemann sphere: every infinity becomes +inf + i(+-0).
template <class T>
KERNC_DEVICE complex<T> proj(const complex<T>& z) {
  typedef detail::complex_math<T> M;
  if (M::isinf(z.re)) return complex<T>(M::fabs(z.re), M::copysign(T(0), z.im));
  if (M::isinf(z.im)) return complex<T>(M::fabs(z.im), M::copysign(T(0), z.im));
  return z;
}

template <class T>
KERNC_DEVICE complex<T> exp(const complex<T>& z) {
  typedef detail::complex_math<T> M;
  const T x = z.re, y = z.im;
  if (y == T(0)) return complex<T>(M::exp(x), y);  // exact real axis, sign of the zero kept
  if (M::isinf(x) && !M::isfinite(y)) return x < T(0) ? complex<T>(T(0), M::copysign(T(0), y)) : complex<T>(x, y - y);
  T s, c;
  M::sincos(y, &s, &c);
  return complex<T>(detail::complex_exp_times(x, c), detail::complex_exp_times(x, s));
}

template <class T>
KERNC_DEVICE complex<T> log(const complex<T>& z) {
  return complex<T>(detail::complex_log_abs(z.re, z.im), detail::complex_math<T>::atan2(z.im, z.re));
}

template <class T>
KERNC_DEVICE complex<T> log10(const complex<T>& z) {
  return log(z) * detail::complex_math<T>::log10_e();
}

/// The principal square root: Re >= 0, the sign of Im that of z's imaginary part (so
/// sqrt(-4 - 0i) = 0 - 2i, as std::sqrt gives).
template <class T>
KERNC_DEVICE complex<T> sqrt(const complex<T>& z) {
  typedef detail::complex_math<T> M;
  T x = z.re, y = z.im;
  if (x == T(0) && y == T(0)) return complex<T>(T(0), y);
  if (M::isinf(y)) return complex<T>(M::fabs(y), y);
  if (M::isnan(x)) return complex<T>(x, x + y);
  if (M::isinf(x)) {
    if (x > T(0)) return complex<T>(x, M::isnan(y) ? y : M::copysign(T(0), y));
    return complex<T>(M::isnan(y) ? y : T(0), M::copysign(-x, y));
  }
  if (M::isnan(y)) return complex<T>(y, y);
  // |x| + |z| must neither overflow nor lose bits in the subnormals: scale by an even
  // power of two, whose square root is exact.
  const T big = M::fabs(x) > M::fabs(y) ? M::fabs(x) : M::fabs(y);
  T unscale = T(1);
  if (big > T(0.25) * M::max_finite()) {
    x *= T(0.25);
    y *= T(0.25);
    unscale = T(2);
  } else if (big < M::tiny()) {
    x *= M::scale() * M::scale();
    y *= M::scale() * M::scale();
    unscale = T(1) / M::scale();
  }
  const T t = M::sqrt((M::fabs(x) + M::hypot(x, y)) * T(0.5));
  if (x >= T(0)) return complex<T>(t * unscale, y / (T(2) * t) * unscale);
  return complex<T>(M::fabs(y) / (T(2) * t) * unscale, M::copysign(t, y) * unscale);
}

template <class T>
KERNC_DEVICE complex<T> pow(const complex<T>& x, const complex<T>& y) {
  return detail::complex_pow_complex(x, y);
}
template <class T, class U>
KERNC_DEVICE complex<typename detail::complex_promote<T, U>::type> pow(const complex<T>& x, const complex<U>& y) {
  typedef typename detail::complex_promote<T, U>::type P;
  return detail::complex_pow_complex(complex<P>(x), complex<P>(y));
}
template <class T, class U>
KERNC_DEVICE typename detail::complex_enable_if<detail::complex_scalar<U>::value,
                                                complex<typename detail::complex_promote<T, U>::type> >::type
pow(const complex<T>& x, const U& y) {
  typedef typename detail::complex_promote<T, U>::type P;
  return detail::complex_pow_real(complex<P>(x), static_cast<P>(y));
}
template <class T, class U>
KERNC_DEVICE typename detail::complex_enable_if<detail::complex_scalar<T>::value,
                                                complex<typename detail::complex_promote<U, T>::type> >::type
pow(const T& x, const complex<U>& y) {
  typedef typename detail::complex_promote<U, T>::type P;
  return detail::complex_real_pow(static_cast<P>(x), complex<P>(y));
}

// sinh(x + iy) = sinh x cos y + i cosh x sin y.
template <class T>
KERNC_DEVICE complex<T> sinh(const complex<T>& z) {
  typedef detail::complex_math<T> M;
  const T x = z.re, y = z.im;
  if (y == T(0)) return complex<T>(M::sinh(x), y);
  if (M::isfinite(x) && M::isfinite(y)) {
    T s, c;
    M::sincos(y, &s, &c);
    if (M::fabs(x) <= M::log_max()) return complex<T>(M::sinh(x) * c, M::cosh(x) * s);
    // cosh x and |sinh x| are e^|x| / 2 here, and overflow before the products do.
    const T re = detail::complex_exp_times(M::fabs(x), T(0.5) * c);
    return complex<T>(x < T(0) ? -re : re, detail::complex_exp_times(M::fabs(x), T(0.5) * s));
  }
  if (x == T(0)) return complex<T>(x, y - y);
  if (M::isinf(x)) {
    if (!M::isfinite(y)) return complex<T>(x, y - y);
    T s, c;
    M::sincos(y, &s, &c);
    return complex<T>(x * c, M::fabs(x) * s);
  }
  return complex<T>((x - x) * (y - y), (x - x) * (y - y));  // NaN
}

// cosh(x + iy) = cosh x cos y + i sinh x sin y.
template <class T>
KERNC_DEVICE complex<T> cosh(const complex<T>& z) {
  typedef detail::complex_math<T> M;
  const T x = z.re, y = z.im;
  if (y == T(0)) return complex<T>(M::cosh(x), M::copysign(T(1), x) * y);
  if (M::isfinite(x) && M::isfinite(y)) {
    T s, c;
    M::sincos(y, &s, &c);
    if (M::fabs(x) <= M::log_max()) return complex<T>(M::cosh(x) * c, M::sinh(x) * s);
    const T im = detail::complex_exp_times(M::fabs(x), T(0.5) * s);
    return complex<T>(detail::complex_exp_times(M::fabs(x), T(0.5) * c), x < T(0) ? -im : im);
  }
  if (x == T(0)) return complex<T>(y - y, x);
  if (M::isinf(x)) {
    if (!M::isfinite(y)) return complex<T>(M::fabs(x), y - y);
    T s, c;
    M::sincos(y, &s, &c);
    return complex<T>(M::fabs(x) * c, x * s);
  }
  return complex<T>((x - x) * (y - y), (x - x) * (y - y));  // NaN
}

// tanh(x + iy) by Kahan's formula: with t = tan y, b = 1 + t^2, s = sinh x and
// r = sqrt(1 + s^2), tanh z = (b r s + i t) / (1 + b s^2); no cancellation, and no
// overflow below the |x| where tanh x is +-1 in T.
template <class T>
KERNC_DEVICE complex<T> tanh(const complex<T>& z) {
  typedef detail::complex_math<T> M;
  const T x = z.re, y = z.im;
  if (M::isinf(x)) {
    T im = y;
    if (M::isfinite(y)) {
      T s, c;
      M::sincos(y, &s, &c);
      im = s * c;
    }
    return complex<T>(M::copysign(T(1), x), M::copysign(T(0), im));
  }
  if (M::isnan(x)) return complex<T>(x, y == T(0) ? y : x);
  if (!M::isfinite(y)) return complex<T>(x == T(0) ? x : y - y, y - y);
  if (M::fabs(x) > M::tanh_big()) {
    T s, c;
    M::sincos(y, &s, &c);
    return complex<T>(M::copysign(T(1), x), T(4) * s * c * M::exp(T(-2) * M::fabs(x)));
  }
  const T t = M::tan(y), b = T(1) + t * t, s = M::sinh(x), r = M::sqrt(T(1) + s * s);
  const T d = T(1) + b * s * s;
  return complex<T>(b * r * s / d, t / d);
}

// The circular functions are the hyperbolic ones turned a quarter: sin z = -i sinh(iz),
// cos z = cosh(iz), tan z = -i tanh(iz), with iz = -y + ix.
template <class T>
KERNC_DEVICE complex<T> sin(const complex<T>& z) {
  const complex<T> w = sinh(complex<T>(-z.im, z.re));
  return complex<T>(w.im, -w.re);
}
template <class T>
KERNC_DEVICE complex<T> cos(const complex<T>& z) {
  return cosh(complex<T>(-z.im, z.re));
}
template <class T>
KERNC_DEVICE complex<T> tan(const complex<T>& z) {
  const complex<T> w = tanh(complex<T>(-z.im, z.re));
  return complex<T>(w.im, -w.re);
}

template <class T>
KERNC_DEVICE complex<T> asin(const complex<T>& z) {
  typedef detail::complex_math<T> M;
  if (M::isfinite(z.re) && M::isfinite(z.im)) return detail::complex_asin_finite(z.re, z.im);
  const complex<T> w = detail::complex_asinh_special(-z.im, z.re);
  return complex<T>(w.im, -w.re);
}

template <class T>
KERNC_DEVICE complex<T> asinh(const complex<T>& z) {
  typedef detail::complex_math<T> M;
  if (!M::isfinite(z.re) || !M::isfinite(z.im)) return detail::complex_asinh_special(z.re, z.im);
  const complex<T> w = detail::complex_asin_finite(-z.im, z.re);  // asinh z = -i asin(iz)
  return complex<T>(w.im, -w.re);
}

// acos z (Kahan): with sqrt(1 - z) = a1 + i b1 and sqrt(1 + z) = a2 + i b2,
// Re = 2 atan(a1 / a2), Im = asinh(a2 b1 - b2 a1).
template <class T>
KERNC_DEVICE complex<T> acos(const complex<T>& z) {
  typedef detail::complex_math<T> M;
  const T x = z.re, y = z.im;
  if (!M::isfinite(x) || !M::isfinite(y)) return detail::complex_acos_special(x, y);
  const complex<T> s1 = sqrt(complex<T>(T(1) - x, -y));
  const complex<T> s2 = sqrt(complex<T>(T(1) + x, y));
  return complex<T>(T(2) * M::atan(s1.re / s2.re), M::asinh(s2.re * s1.im - s2.im * s1.re));
}

// acosh z (Kahan): with sqrt(z - 1) = a1 + i b1 and sqrt(z + 1) = a2 + i b2,
// Re = asinh(a1 a2 + b1 b2), Im = 2 atan(b1 / a2).
template <class T>
KERNC_DEVICE complex<T> acosh(const complex<T>& z) {
  typedef detail::complex_math<T> M;
  const T x = z.re, y = z.im;
  if (!M::isfinite(x) || !M::isfinite(y)) {
    if (M::isnan(y) && M::isfinite(x) && x != T(0)) return complex<T>(y, y);
    // acosh z = +-i acos z, the sign making Re >= 0; Im takes the sign of y.
    const complex<T> a = detail::complex_acos_special(x, y);
    return complex<T>(M::fabs(a.im), M::copysign(a.re, y));
  }
  const complex<T> s1 = sqrt(complex<T>(x - T(1), y));
  const complex<T> s2 = sqrt(complex<T>(x + T(1), y));
  return complex<T>(M::asinh(s1.re * s2.re + s1.im * s2.im), T(2) * M::atan(s1.im / s2.re));
}

// atanh z for x >= 0 (odd symmetry gives the rest, and keeps 1 + x from cancelling):
// Re = log1p(4x / ((1 - x)^2 + y^2)) / 4, Im = atan2(2y, (1 - x)(1 + x) - y^2) / 2; for
// huge |z|, atanh z = 1/z + i pi/2 sign(y) in T.
template <class T>
KERNC_DEVICE complex<T> atanh(const complex<T>& z) {
  typedef detail::complex_math<T> M;
  const T x = z.re, y = z.im;
  if (M::isinf(x) || M::isinf(y)) return complex<T>(M::copysign(T(0), x), M::isnan(y) ? y : M::copysign(M::half_pi(), y));
  if (M::isnan(x) || M::isnan(y)) return x == T(0) ? complex<T>(x, y) : complex<T>(x + y, x + y);
  const bool negate = M::copysign(T(1), x) < T(0);
  const T ax = M::fabs(x), ay = negate ? -y : y;
  T re, im;
  if (ax > M::atanh_big() || M::fabs(ay) > M::atanh_big()) {
    const T h = M::hypot(ax, ay);
    re = ax / h / h;
    im = M::copysign(M::half_pi(), ay);
  } else {
    const T one_minus = T(1) - ax;
    re = T(0.25) * M::log1p(T(4) * ax / (one_minus * one_minus + ay * ay));
    im = T(0.5) * M::atan2(T(2) * ay, one_minus * (T(1) + ax) - ay * ay);
  }
  return negate ? complex<T>(-re, -im) : complex<T>(re, im);
}

template <class T>
KERNC_DEVICE complex<T> atan(const complex<T>& z) {
  const complex<T> w = atanh(complex<T>(-z.im, z.re));  // atan z = -i atanh(iz)
  return complex<T>(w.im, -w.re);
}

// CuPy's further complex functions (cupy/_core/include/cupy/complex.cuh), with its
// formulas, so that results match: log1p(z) = log(z + 1), log2(z) = log(z) / log 2,
// expm1(z) = exp(z) - 1, rint of each part; min and max order by the real part, then the
// imaginary one, and pass over an operand with a NaN part (min of a tie is the second
// operand, max the first).
template <class T> KERNC_DEVICE complex<T> log1p(const complex<T>& z) { return log(complex<T>(z.re + T(1), z.im)); }
template <class T> KERNC_DEVICE complex<T> log2(const complex<T>& z) {
  const complex<T> w = log(z);
  const T ln2 = static_cast<T>(0.693147180559945309417);
  return complex<T>(w.re / ln2, w.im / ln2);
}
template <class T> KERNC_DEVICE complex<T> expm1(const complex<T>& z) {
  const complex<T> w = exp(z);
  return complex<T>(w.re - T(1), w.im);
}
template <class T> KERNC_DEVICE complex<T> rint(const complex<T>& z) {
  return complex<T>(::rint(z.re), ::rint(z.im));
}
template <class T> KERNC_DEVICE complex<T> max(const complex<T>& x, const complex<T>& y) {
  if (isnan(x)) return y;
  if (isnan(y)) return x;
  if (x.re != y.re) return x.re < y.re ? y : x;
  return x.im < y.im ? y : x;
}
template <class T> KERNC_DEVICE complex<T> min(const complex<T>& x, const complex<T>& y) {
  if (isnan(x)) return y;
  if (isnan(y)) return x;
  if (x.re != y.re) return x.re < y.re ? x : y;
  return x.im < y.im ? x : y;
}

}  // namespace kernc

// CuPy's kernels write `complex<float>` and call these unqualified at global scope; see
// NOTE [ complex functions ].
using kernc::complex;
using kernc::real;
using kernc::imag;
using kernc::conj;
using kernc::norm;
using kernc::abs;
using kernc::arg;
using kernc::polar;
using kernc::proj;
using kernc::exp;
using kernc::log;
using kernc::log10;
using kernc::pow;
using kernc::sqrt;
using kernc::sin;
using kernc::cos;
using kernc::tan;
using kernc::sinh;
using kernc::cosh;
using kernc::tanh;
using kernc::asin;
using kernc::acos;
using kernc::atan;
using kernc::asinh;
using kernc::acosh;
using kernc::atanh;
