// kernc::complex (templates/complex.cuh) with CuPy's complex function set (issue 36):
// the numerics on the host, the device header compiled by the host compiler (NOTE
// [ complex functions ]) and compared with std::complex; and kernels using every function
// compiled by the real NVRTC (and HIPRTC where built). The GPU suite
// (tests/gpu/test_gpu_cupy_complex.cpp) runs them on data.

#include <doctest/doctest.h>

#include <math.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "kernc/call.hpp"
#include "kernc/signature.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

// The device header for the host, in a namespace of its own (its global using-declarations
// land there, and its kernc::complex cannot meet another).
#define KERNC_DEVICE inline
namespace host_complex {
#include "../../templates/complex.cuh"
}  // namespace host_complex
#undef KERNC_DEVICE

using kernc::ElementwiseKernel;
using kernc::Layout;
using kernc::ReductionKernel;
using kernc::Target;
using kernc::test::contains;
using kernc::test::nvrtc;

namespace {

template <class T>
using Complex = host_complex::kernc::complex<T>;

// The reference for T's results: std::complex one precision up (long double's x87 format
// for double), so that the reference's own error is far below T's ulp.
template <class T>
using Reference = std::complex<typename std::conditional<std::is_same<T, float>::value, double, long double>::type>;

struct Function {
  const char* name;
  Complex<float> (*f32)(Complex<float>);
  Complex<double> (*f64)(Complex<double>);
  Reference<float> (*ref32)(Reference<float>);
  Reference<double> (*ref64)(Reference<double>);
};

#define KERNC_FUNCTION(fn)                                                                      \
  Function {                                                                                    \
    #fn, [](Complex<float> z) { return fn(z); }, [](Complex<double> z) { return fn(z); },       \
        [](Reference<float> z) { return std::fn(z); }, [](Reference<double> z) { return std::fn(z); } \
  }
const Function kFunctions[] = {
    KERNC_FUNCTION(exp),  KERNC_FUNCTION(log),  KERNC_FUNCTION(log10), KERNC_FUNCTION(sqrt),
    KERNC_FUNCTION(sin),  KERNC_FUNCTION(cos),  KERNC_FUNCTION(tan),   KERNC_FUNCTION(sinh),
    KERNC_FUNCTION(cosh), KERNC_FUNCTION(tanh), KERNC_FUNCTION(asin),  KERNC_FUNCTION(acos),
    KERNC_FUNCTION(atan), KERNC_FUNCTION(asinh), KERNC_FUNCTION(acosh), KERNC_FUNCTION(atanh)};
#undef KERNC_FUNCTION

// Random points: uniform in a box, or log-uniform magnitudes with random signs.
template <class T>
std::vector<Complex<T>> points(std::mt19937_64& engine, double lo, double hi, bool log_scale, int n) {
  std::uniform_real_distribution<double> part(lo, hi), coin(0, 1);
  std::vector<Complex<T>> out;
  for (int k = 0; k < n; ++k) {
    double v[2];
    for (double& p : v) {
      p = part(engine);
      if (log_scale) p = (coin(engine) < 0.5 ? -1 : 1) * std::pow(10.0, p);
    }
    out.push_back(Complex<T>(static_cast<T>(v[0]), static_cast<T>(v[1])));
  }
  return out;
}

// The error of `got` against `want` in units of T's epsilon, part by part: each part
// relative to itself, but to no less than 1e-3 of |want| (a part that small next to the
// other carries the other's absolute error), nor than T's smallest normal (below it the
// result itself has fewer bits). The worst of the two parts.
template <class T, class R>
double ulps(const Complex<T>& got, const std::complex<R>& want) {
  const double eps = std::numeric_limits<T>::epsilon(), tiny = std::numeric_limits<T>::min();
  const double norm = static_cast<double>(std::abs(want));
  auto part = [&](T g, R w) {
    double floor = std::max(norm * 1e-3, tiny);
    return std::fabs(static_cast<double>(g) - static_cast<double>(w)) / std::max(std::fabs(static_cast<double>(w)), floor) / eps;
  };
  return std::max(part(got.re, want.real()), part(got.im, want.imag()));
}

template <class T>
bool representable(double magnitude) {
  return std::isfinite(magnitude) && magnitude <= std::numeric_limits<T>::max() &&
         magnitude >= std::numeric_limits<T>::min();
}

template <class T, class F, class G>
void check_function(const char* name, F f, G reference, double tolerance) {
  std::mt19937_64 engine(36);
  struct Box {
    double lo, hi;
    bool log_scale;
  };
  // Near the origin and the branch points, out to where exp and cosh grow large, and
  // (log-uniform) from 1e-8 to 1e8 in each part.
  for (const Box box : {Box{-2, 2, false}, Box{-30, 30, false}, Box{-8, 8, true}}) {
    double worst = 0;
    Complex<T> worst_at(0, 0);
    for (const Complex<T>& z : points<T>(engine, box.lo, box.hi, box.log_scale, 10000)) {
      const auto want = reference(Reference<T>(z.re, z.im));
      if (!representable<T>(static_cast<double>(std::abs(want)))) continue;  // T overflows or underflows
      const double error = ulps(f(z), want);
      if (!(error <= worst)) {
        worst = error;
        worst_at = z;
      }
    }
    CHECK_MESSAGE(worst <= tolerance, name << "<" << (sizeof(T) == 4 ? "float" : "double") << "> on [" << box.lo
                                           << ", " << box.hi << "]" << (box.log_scale ? " (log scale)" : "")
                                           << ": " << worst << " ulp at (" << worst_at.re << ", " << worst_at.im << ")");
  }
}

// The error of `got` against `want` in units of T's epsilon, as a whole: |got - want| / |want|.
template <class T, class R>
double norm_ulps(const Complex<T>& got, const std::complex<R>& want) {
  const std::complex<R> error(static_cast<R>(got.re) - want.real(), static_cast<R>(got.im) - want.imag());
  return static_cast<double>(std::abs(error) / std::abs(want)) / std::numeric_limits<T>::epsilon();
}

// Exactly equal, NaN to NaN, the sign of a zero or an infinity included, except where
// C99 Annex G leaves a sign unspecified: a zero or an infinity beside a NaN part.
bool same_special(double got, double want, bool other_is_nan) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (other_is_nan && (want == 0 || std::isinf(want))) return std::fabs(got) == std::fabs(want);
  if (want == 0 || std::isinf(want)) return got == want && std::signbit(got) == std::signbit(want);
  return std::fabs(got - want) <= 4 * std::numeric_limits<double>::epsilon() * std::fabs(want);
}

}  // namespace

TEST_CASE("complex.cuh: every function is within 4 ulp of std::complex on random points (host)") {
  // Measured worst (this file's seed): about 3.3 ulp (tan, tanh: Kahan's formula on
  // tan y and sinh x, each 1-2 ulp), 2.6 for the inverse functions, 1.8 or less for the
  // rest. 4 leaves room for another C library's last bit, and is what "a few ulp" means
  // for complex results computed from several real functions.
  for (const Function& fn : kFunctions) {
    check_function<float>(fn.name, fn.f32, fn.ref32, 4.0);
    check_function<double>(fn.name, fn.f64, fn.ref64, 4.0);
  }
}

TEST_CASE("complex.cuh: log keeps its digits next to the unit circle, where log |z| is tiny") {
  // |z| = 1 - 1e-9: the textbook log(hypot(x, y)) returns rounding error there.
  const double t = 0.6, r = 1 - 1e-9;
  const Complex<double> z(r * std::cos(t), r * std::sin(t));
  const auto want = std::log(Reference<double>(z.re, z.im));
  CHECK(ulps(log(z), want) <= 4);
  CHECK(std::fabs(log(z).re - static_cast<double>(want.real())) <= 4e-16 * std::fabs(static_cast<double>(want.real())));
}

TEST_CASE("complex.cuh: pow of complex, real and mixed operands matches std::pow") {
  // x^y = exp(y log x): an error e in y log x is a relative error e in the result, so the
  // tolerance grows with |y log x| (the conditioning, not the algorithm), and it is on the
  // result as a whole (an error in the angle moves a small part far in its own terms).
  std::mt19937_64 engine(3636);
  auto check = [](const std::string& what, const Complex<double>& got, const Reference<double>& want, double scale) {
    const double error = norm_ulps(got, want);
    CHECK_MESSAGE(error <= 4 * (1 + scale), what << ": " << error << " ulp (scale " << scale << ")");
  };
  for (int k = 0; k < 2000; ++k) {
    const auto xs = points<double>(engine, -3, 3, false, 2);
    const Complex<double> x = xs[0], y = xs[1];
    const Reference<double> rx(x.re, x.im), ry(y.re, y.im);
    const double scale = std::abs(std::complex<double>(y.re, y.im) * std::log(std::complex<double>(x.re, x.im)));
    check("complex^complex", pow(x, y), std::pow(rx, ry), scale);
    check("complex^real", pow(x, y.re), std::pow(rx, static_cast<long double>(y.re)), scale);
    const double base = std::fabs(x.re) + 0.01;
    check("real^complex", pow(base, y), std::pow(static_cast<long double>(base), ry),
          std::abs(std::complex<double>(y.re, y.im)) * std::fabs(std::log(base)));
  }
  CHECK(pow(Complex<double>(0, 0), Complex<double>(0, 0)).re == 1);
  CHECK(pow(Complex<double>(0, 0), Complex<double>(2, 1)).re == 0);
  CHECK(pow(Complex<double>(0, 0), 2.0).re == 0);
  CHECK(pow(Complex<double>(4, 0), 0.5).re == 2);  // a positive real base stays exact
  CHECK(pow(Complex<double>(4, 0), 0.5).im == 0);
  // Types: an integer exponent keeps complex64, a double one promotes, as do mixed complexes.
  static_assert(std::is_same<decltype(pow(Complex<float>(1, 1), 2)), Complex<float>>::value, "");
  static_assert(std::is_same<decltype(pow(Complex<float>(1, 1), 2.0f)), Complex<float>>::value, "");
  static_assert(std::is_same<decltype(pow(Complex<float>(1, 1), 2.0)), Complex<double>>::value, "");
  static_assert(std::is_same<decltype(pow(2.0f, Complex<float>(1, 1))), Complex<float>>::value, "");
  static_assert(std::is_same<decltype(pow(Complex<float>(1, 1), Complex<double>(1, 1))), Complex<double>>::value, "");
  const Complex<float> p = pow(Complex<float>(1, 2), 3);
  CHECK(std::fabs(p.re - (-11.0f)) <= 1e-5f);
  CHECK(std::fabs(p.im - (-2.0f)) <= 1e-5f);
}

TEST_CASE("complex.cuh: branch cuts, signed zeros, infinities and NaN as std::complex (C99 Annex G)") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const double values[] = {0.0, -0.0, 1.5, -1.5, 1.0, -1.0, inf, -inf, nan};
  int compared = 0;
  for (const Function& fn : kFunctions) {
    for (double x : values) {
      for (double y : values) {
        const Complex<double> got = fn.f64(Complex<double>(x, y));
        const auto ref = fn.ref64(Reference<double>(x, y));
        const double re = static_cast<double>(ref.real()), im = static_cast<double>(ref.imag());
        CHECK_MESSAGE((same_special(got.re, re, std::isnan(im)) && same_special(got.im, im, std::isnan(re))),
                      fn.name << "(" << x << ", " << y << "): got (" << got.re << ", " << got.im << "), std::complex gives ("
                              << re << ", " << im << ")");
        ++compared;
      }
    }
  }
  CHECK(compared == 16 * 81);
  // The cuts themselves: the sign of a zero imaginary part picks the side.
  CHECK(sqrt(Complex<double>(-4, -0.0)).im == -2);
  CHECK(sqrt(Complex<double>(-4, 0.0)).im == 2);
  CHECK(std::signbit(sqrt(Complex<double>(-4, -0.0)).re) == false);
  CHECK(log(Complex<double>(-1, -0.0)).im == -M_PI);
  CHECK(log(Complex<double>(-1, 0.0)).im == M_PI);
  // No overflow in abs or sqrt near the top of the range, nor loss in the subnormals.
  CHECK(abs(Complex<double>(1e308, 1e308)) == std::hypot(1e308, 1e308));
  const Complex<double> big = sqrt(Complex<double>(1.5e308, 1.5e308));
  const auto big_want = std::sqrt(std::complex<double>(1.5e308, 1.5e308));
  CHECK(ulps(big, Reference<double>(big_want.real(), big_want.imag())) <= 2);
  const Complex<double> small = sqrt(Complex<double>(3e-320, -5e-321));
  const auto small_want = std::sqrt(Reference<double>(3e-320, -5e-321));  // the subnormal doubles, exactly
  CHECK(ulps(small, small_want) <= 2);
  // e^710 overflows, e^710 cos(pi/3) does not.
  const double third = 1.0471975511965976;
  CHECK(ulps(exp(Complex<double>(710, third)), std::exp(Reference<double>(710, third))) <= 4);
  CHECK(ulps(cosh(Complex<double>(-710, third)), std::cosh(Reference<double>(-710, third))) <= 4);
  CHECK(ulps(sinh(Complex<double>(-710, third)), std::sinh(Reference<double>(-710, third))) <= 4);
  CHECK(proj(Complex<double>(-inf, -2)).re == inf);
  CHECK(std::signbit(proj(Complex<double>(-inf, -2)).im));
  CHECK(proj(Complex<double>(3, -2)).re == 3);
}

TEST_CASE("complex.cuh: arithmetic mixed with reals and the other precision, and NumPy's order") {
  const Complex<double> z(1.5, -2.0);
  const Complex<float> f(1.5f, -2.0f);
  // A real operand has no imaginary part to meet an infinity with: 2 * (inf + 1i) is
  // inf + 2i, where the complex product would give NaN.
  const Complex<double> w = 2.0 * Complex<double>(std::numeric_limits<double>::infinity(), 1.0);
  CHECK(std::isinf(w.re));
  CHECK(w.im == 2);
  CHECK((z * 2.0).re == 3);
  CHECK((z * 2).im == -4);
  CHECK((2 - z).re == 0.5);
  CHECK((2 - z).im == 2);
  CHECK((z / 2.0).re == 0.75);
  CHECK((1.0 / Complex<double>(0, 2)).im == -0.5);
  CHECK((f * 2.0f).re == 3);
  CHECK((f * 2.0).re == 3);  // a double factor converts to float: complex64 stays complex64
  static_assert(std::is_same<decltype(f * 2.0), Complex<float>>::value, "");
  static_assert(std::is_same<decltype(f + z), Complex<double>>::value, "");
  CHECK((f + z).re == 3);
  CHECK((f * z).re == doctest::Approx(1.5 * 1.5 - 4));
  Complex<float> g = f;
  g += 1;
  g *= 2.0f;
  g -= 1.0;
  g /= 2;
  CHECK(g.re == 2);
  CHECK(g.im == -2);
  CHECK(z == Complex<double>(1.5, -2));
  CHECK(Complex<double>(3, 0) == 3.0);
  CHECK(3.0 != z);
  CHECK(Complex<double>(1, 5) < 2.0);
  CHECK(Complex<double>(2, -1) < 2.0);
  CHECK_FALSE(Complex<double>(2, 1) < 2.0);
  CHECK(Complex<double>(2, 0) <= 2.0);
  CHECK(Complex<double>(2, 0) >= 2.0);
  CHECK(Complex<double>(1, 0) > Complex<double>(0, 9));
  CHECK(norm(z) == 6.25);
  CHECK(abs(z) == 2.5);
  CHECK(arg(Complex<double>(0, 1)) == M_PI / 2);
  CHECK(conj(z).im == 2);
  CHECK(real(z) == 1.5);
  CHECK(imag(z) == -2);
  CHECK(host_complex::polar(2.0, 0.0).re == 2);  // the global using-declaration (reals: no ADL)
  CHECK(host_complex::polar(2.0).im == 0);
  CHECK(isnan(Complex<double>(1, std::nan(""))));
  CHECK(isinf(Complex<double>(-std::numeric_limits<double>::infinity(), 0)));
  CHECK(isfinite(z));
  CHECK_FALSE(isfinite(Complex<double>(1, std::nan(""))));
}

namespace {

const char* const kAllFunctions =
    "w = exp(z) + log(z) + log10(z) + sqrt(z) + sin(z) + cos(z) + tan(z) + sinh(z) + cosh(z) + tanh(z)"
    " + asin(z) + acos(z) + atan(z) + asinh(z) + acosh(z) + atanh(z) + conj(z) + proj(z)"
    " + pow(z, z) + pow(z, 2) + pow(z, a) + pow(a, z) + polar(abs(z), arg(z)) + norm(z) + real(z) + imag(z);"
    " if (isnan(w) || isinf(w) || !isfinite(w) || w < a || a >= w) w = w * a + a * w - w / a + a / w - (w + a);";

std::string compile_ptx(const kernc::Program& program) {
  return nvrtc().compile(program, Target::parse("compute_90")).binary;
}

}  // namespace

TEST_CASE("CuPy port: every complex function compiles for complex64 and complex128 under NVRTC") {
  // `a` is the real of the same precision; complex64 never touches double (no .f64 in the
  // PTX): the float math functions are the ones called. PTX only: ptxas of this kernel took
  // most of the test's 50 s in CI, and the GPU suite builds and runs every function.
  ElementwiseKernel all("T z, R a", "T w", kAllFunctions, "cupy_complex_all");
  for (const char* sig : {"complex64, float32 -> complex64", "complex128, float64 -> complex128"}) {
    CAPTURE(sig);
    const auto program = kernc::program(all, kernc::parse_call_signature(sig), Layout{});
    const std::string ptx = compile_ptx(program);
    CHECK(contains(ptx, ".entry cupy_complex_all"));
    if (contains(sig, "complex128")) CHECK(contains(ptx, ".f64"));
  }
  // complex64 stays in float: no double instruction in the functions that use no sine or
  // cosine (CUDA's sinf and cosf reduce huge arguments in double, so those have some).
  ElementwiseKernel single("T z, R a", "T w",
                           "w = sqrt(z) + log(z) + log10(z) + asin(z) + acos(z) + atan(z) + asinh(z) + acosh(z)"
                           " + atanh(z) + abs(z) * a + z * 2.0 + 2 * z + (z / 2.0) * norm(z)",
                           "cupy_complex_single");
  const std::string ptx = compile_ptx(kernc::program(single, kernc::parse_call_signature("complex64, float32 -> complex64"), Layout{}));
  CHECK(contains(ptx, ".entry cupy_complex_single"));
  CHECK_MESSAGE(!contains(ptx, ".f64"), "complex64 code went through double");
}

TEST_CASE("CuPy port: unqualified complex<float>, mixed real arithmetic and real math compile as in CuPy") {
  // CuPy's own kernels write complex<float> unqualified and multiply by reals of either
  // precision; unqualified exp and abs on reals stay the CUDA functions (float ones: no
  // .f64 in the PTX).
  ElementwiseKernel make("T x", "complex64 y",
                         "complex<float> c = complex<float>(x, -x);\n"
                         "y = c * 2.0f + 2.0f * c + c * x + x / c + c * 2 - 1.0f + exp(x) * c + abs(x) * abs(c);\n"
                         "y = y * 2.0",
                         "cupy_complex_unqualified");
  const auto program = kernc::program(make, kernc::parse_call_signature("float32 -> complex64"), Layout{});
  CHECK(contains(program.source, "kernc/complex.cuh"));
  const std::string ptx = compile_ptx(program);
  CHECK(contains(ptx, ".entry cupy_complex_unqualified"));
  CHECK_MESSAGE(!contains(ptx, ".f64"), "the float kernel went through double");

  ElementwiseKernel twice("T z", "T w", "w = z * 2.0 + 2.0 * z - z / 2.0 + (z == 1.0 ? 1.0 : 0.0)",
                          "cupy_complex_double_literal");
  CHECK(contains(compile_ptx(kernc::program(twice, kernc::parse_call_signature("complex128 -> complex128"), Layout{})),
                 ".entry cupy_complex_double_literal"));

  // A reduction whose reduce type is named unqualified: the sum of |z|^2 as complex<float>.
  kernc::ReductionOptions options;
  options.reduce_type = "complex<float>";
  ReductionKernel sum("T z", "float32 y", "complex<float>(norm(z), 0)", "a + b", "y = abs(a)", "complex<float>(0, 0)",
                      "cupy_complex_reduce", options);
  const auto reduce_program =
      kernc::program(sum, kernc::parse_call_signature("complex64 -> float32"), Layout::reduction_classes()[0]);
  CHECK(contains(compile_ptx(reduce_program), ".entry cupy_complex_reduce"));
}

#ifdef KERNC_WITH_HIP
TEST_CASE("CuPy port: every complex function compiles under HIPRTC for gfx90a") {
  ElementwiseKernel all("T z, R a", "T w", kAllFunctions, "cupy_complex_all_hip");
  for (const char* sig : {"complex64, float32 -> complex64", "complex128, float64 -> complex128"}) {
    CAPTURE(sig);
    const auto compiled = kernc::test::hiprtc().compile(kernc::program(all, kernc::parse_call_signature(sig), Layout{}),
                                                        Target::parse("gfx90a"));
    CHECK(kernc::test::starts_with(compiled.binary, kernc::test::kElfMagic));
  }
}
#endif  // KERNC_WITH_HIP

TEST_CASE("complex.cuh: CuPy's log1p, log2, expm1, rint, min and max of complex values (host and NVRTC)") {
  // CuPy's formulas (cupy/_core/include/cupy/complex.cuh): compared with std::complex doing
  // the same, and min/max's order and NaN rule stated case by case.
  using C = Complex<double>;
  using S = std::complex<double>;
  const C z(0.75, -2.5);
  const S s(0.75, -2.5);
  auto close = [](C got, S want) {
    return std::abs(S(got.re, got.im) - want) <= 1e-15 * std::max(1.0, std::abs(want));
  };
  CHECK(close(log1p(z), std::log(s + 1.0)));
  CHECK(close(log2(z), std::log(s) / std::log(2.0)));
  CHECK(close(expm1(z), std::exp(s) - 1.0));
  CHECK(rint(C(2.5, -3.5)) == C(2.0, -4.0));  // to nearest even, each part
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(max(C(1, 5), C(2, 0)) == C(2, 0));    // the real part decides
  CHECK(max(C(1, 5), C(1, 7)) == C(1, 7));    // then the imaginary part
  CHECK(min(C(1, 5), C(1, 7)) == C(1, 5));
  CHECK(min(C(3, 0), C(2, 9)) == C(2, 9));
  CHECK(max(C(nan, 0), C(-4, 1)) == C(-4, 1));  // an operand with a NaN part is passed over
  CHECK(min(C(-4, 1), C(0, nan)) == C(-4, 1));
  const ElementwiseKernel more("T z", "T w", "w = max(min(log1p(z), log2(z)), expm1(z)) + rint(z)", "cupy_complex_more");
  for (const char* sig : {"complex64 -> complex64", "complex128 -> complex128"}) {
    CAPTURE(sig);
    const auto compiled = nvrtc().compile(kernc::program(more, kernc::parse_call_signature(sig), Layout{}), Target::parse("sm_90"));
    CHECK(kernc::test::starts_with(compiled.binary, kernc::test::kElfMagic));
  }
}
