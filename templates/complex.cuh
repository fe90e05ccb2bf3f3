// kernc::complex<T>: the complex64 / complex128 element types (layout: real, imag).
#pragma once

namespace kernc {

template <class T>
struct complex {
  T re, im;
  complex() = default;
  KERNC_DEVICE complex(T real, T imag = T(0)) : re(real), im(imag) {}
  template <class U>
  KERNC_DEVICE complex(const complex<U>& o) : re(static_cast<T>(o.re)), im(static_cast<T>(o.im)) {}
  KERNC_DEVICE T real() const { return re; }
  KERNC_DEVICE T imag() const { return im; }
  KERNC_DEVICE complex& operator+=(const complex& o) { re += o.re; im += o.im; return *this; }
  KERNC_DEVICE complex& operator-=(const complex& o) { re -= o.re; im -= o.im; return *this; }
  KERNC_DEVICE complex& operator*=(const complex& o) { return *this = *this * o; }
  KERNC_DEVICE complex& operator/=(const complex& o) { return *this = *this / o; }
  friend KERNC_DEVICE complex operator+(const complex& a, const complex& b) { return complex(a.re + b.re, a.im + b.im); }
  friend KERNC_DEVICE complex operator-(const complex& a, const complex& b) { return complex(a.re - b.re, a.im - b.im); }
  friend KERNC_DEVICE complex operator-(const complex& a) { return complex(-a.re, -a.im); }
  friend KERNC_DEVICE complex operator*(const complex& a, const complex& b) {
    return complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
  }
  friend KERNC_DEVICE complex operator/(const complex& a, const complex& b) {
    // Smith's algorithm: no overflow in the intermediate |b|^2 for large b.
    if (fabs(b.re) >= fabs(b.im)) {
      T r = b.im / b.re, d = b.re + b.im * r;
      return complex((a.re + a.im * r) / d, (a.im - a.re * r) / d);
    }
    T r = b.re / b.im, d = b.re * r + b.im;
    return complex((a.re * r + a.im) / d, (a.im * r - a.re) / d);
  }
  friend KERNC_DEVICE bool operator==(const complex& a, const complex& b) { return a.re == b.re && a.im == b.im; }
  friend KERNC_DEVICE bool operator!=(const complex& a, const complex& b) { return !(a == b); }
};

template <class T> KERNC_DEVICE T real(const complex<T>& z) { return z.re; }
template <class T> KERNC_DEVICE T imag(const complex<T>& z) { return z.im; }
template <class T> KERNC_DEVICE complex<T> conj(const complex<T>& z) { return complex<T>(z.re, -z.im); }
template <class T> KERNC_DEVICE T norm(const complex<T>& z) { return z.re * z.re + z.im * z.im; }
template <class T> KERNC_DEVICE T abs(const complex<T>& z) { return hypot(z.re, z.im); }

}  // namespace kernc
