// kernc::complex's function set (templates/complex.cuh, issue 36) on a GPU: elementwise
// kernels calling each function on fresh random complex64 and complex128 data, compared
// with std::complex on the host; CuPy's unqualified complex<float> in an elementwise
// kernel and a reduction. The compile-only twins and the host-side numerics are in
// tests/unit/test_cupy_complex.cpp.

#include <complex>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {

namespace {

// The reference one precision up (long double for complex128), so that its own error is
// far below the tolerance.
template <class T>
using Wide = std::complex<typename std::conditional<std::is_same<T, float>::value, double, long double>::type>;

template <class T>
using Reference = Wide<T> (*)(Wide<T>);

struct Function {
  const char* name;
  Reference<float> ref32;
  Reference<double> ref64;
};

#define KERNC_FUNCTION(fn) \
  Function { #fn, [](Wide<float> z) { return std::fn(z); }, [](Wide<double> z) { return std::fn(z); } }
const Function kFunctions[] = {
    KERNC_FUNCTION(exp),  KERNC_FUNCTION(log),  KERNC_FUNCTION(log10), KERNC_FUNCTION(sqrt),
    KERNC_FUNCTION(sin),  KERNC_FUNCTION(cos),  KERNC_FUNCTION(tan),   KERNC_FUNCTION(sinh),
    KERNC_FUNCTION(cosh), KERNC_FUNCTION(tanh), KERNC_FUNCTION(asin),  KERNC_FUNCTION(acos),
    KERNC_FUNCTION(atan), KERNC_FUNCTION(asinh), KERNC_FUNCTION(acosh), KERNC_FUNCTION(atanh)};
#undef KERNC_FUNCTION

template <class T>
std::vector<std::complex<T>> random_complex(Random& random, std::int64_t n, double lo, double hi) {
  auto re = random.uniform<T>(n, lo, hi), im = random.uniform<T>(n, lo, hi);
  std::vector<std::complex<T>> out(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = {re[k], im[k]};
  return out;
}

// The error in units of T's epsilon, part by part: each part relative to itself, but to
// no less than 1e-3 of |want| (a part that small next to the other carries the other's
// absolute error). NaN when either is NaN.
template <class T, class R>
double ulps(std::complex<T> got, std::complex<R> want) {
  const double eps = std::numeric_limits<T>::epsilon();
  const double floor = std::max(static_cast<double>(std::abs(want)) * 1e-3, static_cast<double>(std::numeric_limits<T>::min()));
  auto part = [&](T g, R w) {
    return std::fabs(static_cast<double>(g) - static_cast<double>(w)) / std::max(std::fabs(static_cast<double>(w)), floor) / eps;
  };
  return std::max(part(got.real(), want.real()), part(got.imag(), want.imag()));
}

// Tolerances, in ulp of the part type. Each complex result combines two or three real
// functions; CUDA documents their maximum errors as 1-4 ulp in float (expf, sinf, cosf 2;
// hypotf, atan2f, asinhf 3; tanf 4) and 1-2 ulp in double, and the host C library's
// are below 1 ulp (there this file's functions stay within 4 ulp,
// tests/unit/test_cupy_complex.cpp). So: 16 ulp for complex64, 8 for complex128.
template <class T>
double tolerance() {
  return std::is_same<T, float>::value ? 16.0 : 8.0;
}

template <class T>
void check_function(Random& random, const char* name, Reference<T> reference) {
  const DType dtype = std::is_same<T, float>::value ? DType::complex64 : DType::complex128;
  const ElementwiseKernel kernel("T z", "T w", std::string("w = ") + name + "(z)", std::string("gpu_complex_") + name);
  // Near the branch points (|z| <= 2) and out to where exp and cosh grow large (30).
  for (double range : {2.0, 30.0}) {
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{1001}, std::int64_t{65537}}) {
      auto z = random_complex<T>(random, n, -range, range);
      auto out = kernel({upload(dtype, {n}, z)});
      REQUIRE(out.size() == 1);
      auto w = download<std::complex<T>>(out[0]);
      REQUIRE(w.size() == z.size());
      std::size_t bad = 0, compared = 0;
      double worst = 0;
      std::string first;
      for (std::size_t k = 0; k < z.size(); ++k) {
        const auto want = reference(Wide<T>(z[k].real(), z[k].imag()));
        const double magnitude = static_cast<double>(std::abs(want));
        // Skip results T cannot hold (overflow to inf on both sides is no test of accuracy).
        if (!(magnitude <= std::numeric_limits<T>::max() && magnitude >= std::numeric_limits<T>::min())) continue;
        ++compared;
        const double error = ulps(w[k], want);
        if (!(error <= tolerance<T>())) {
          if (bad++ < 3) {
            first += std::string("\n  ") + name + "(" + show(z[k].real()) + ", " + show(z[k].imag()) + ") = (" +
                     show(w[k].real()) + ", " + show(w[k].imag()) + "), expected (" +
                     show(static_cast<double>(want.real())) + ", " + show(static_cast<double>(want.imag())) + ")";
          }
        }
        if (!(error <= worst)) worst = error;
      }
      CHECK(compared > 0);
      CHECK_MESSAGE(bad == 0, name << " on " << to_string(dtype) << ", n = " << n << ", |parts| < " << range << ": " << bad
                                   << " of " << compared << " beyond " << tolerance<T>() << " ulp (worst " << worst
                                   << ")" << first);
    }
  }
}

}  // namespace

TEST_CASE("CuPy port: every complex function matches std::complex on random complex64 data") {
  KERNC_GPU_RANDOM(random, "cupy complex64 functions");
  for (const Function& fn : kFunctions) check_function<float>(random, fn.name, fn.ref32);
}

TEST_CASE("CuPy port: every complex function matches std::complex on random complex128 data") {
  KERNC_GPU_RANDOM(random, "cupy complex128 functions");
  for (const Function& fn : kFunctions) check_function<double>(random, fn.name, fn.ref64);
}

TEST_CASE("CuPy port: pow of complex128 and of complex with a real, against std::pow") {
  KERNC_GPU_RANDOM(random, "cupy complex pow");
  const ElementwiseKernel kernel("T x, T y, R a", "T p, T q, T r", "p = pow(x, y); q = pow(x, a); r = pow(a, y)",
                                 "gpu_complex_pow");
  const std::int64_t n = 4099;
  auto x = random_complex<double>(random, n, -3, 3), y = random_complex<double>(random, n, -3, 3);
  auto a = random.uniform<double>(n, 0.01, 3);
  auto out = kernel({upload(DType::complex128, {n}, x), upload(DType::complex128, {n}, y), upload(DType::float64, {n}, a)});
  REQUIRE(out.size() == 3);
  auto p = download<std::complex<double>>(out[0]), q = download<std::complex<double>>(out[1]),
       r = download<std::complex<double>>(out[2]);
  // x^y = exp(y log x): an error e in y log x is a relative error e of the whole result,
  // so the bound is on |got - want| / |want| and grows with |y log x|.
  auto check = [](const char* what, std::complex<double> got, Wide<double> want, double scale) {
    const double error = static_cast<double>(std::abs(Wide<double>(got.real(), got.imag()) - want) / std::abs(want)) /
                         std::numeric_limits<double>::epsilon();
    return error <= 8 * (1 + scale) ? std::string() : std::string(what) + " off by " + show(error) + " ulp; ";
  };
  std::size_t bad = 0;
  std::string first;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const Wide<double> wx(x[k].real(), x[k].imag()), wy(y[k].real(), y[k].imag());
    const long double wa = a[k];
    const double scale_p = std::abs(y[k] * std::log(x[k])), scale_q = std::fabs(a[k]) * std::abs(std::log(x[k]));
    const double scale_r = std::abs(y[k]) * std::fabs(std::log(a[k]));
    std::string errors = check("pow(x, y)", p[k], std::pow(wx, wy), scale_p) +
                         check("pow(x, a)", q[k], std::pow(wx, wa), scale_q) +
                         check("pow(a, y)", r[k], std::pow(wa, wy), scale_r);
    if (!errors.empty() && bad++ < 3) first += "\n  [" + std::to_string(k) + "] " + errors;
  }
  CHECK_MESSAGE(bad == 0, bad << " of " << n << " elements off" << first);
}

TEST_CASE("CuPy port: unqualified complex<float> with real arithmetic, in an elementwise kernel and a reduction") {
  KERNC_GPU_RANDOM(random, "cupy complex unqualified");
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    auto x = random.uniform<float>(n, -4, 4);
    // As CuPy writes it: complex<float> unqualified, scaled by float and double literals.
    const ElementwiseKernel make("T x", "complex64 y", "y = complex<float>(x, -x) * 2.0f + x; y = y * 2.0",
                                 "gpu_complex_unqualified");
    auto out = make({upload(DType::float32, {n}, x)});
    REQUIRE(out.size() == 1);
    auto y = download<std::complex<float>>(out[0]);
    std::size_t bad = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      // x * 2 is exact, so a fused multiply-add and the separate operations agree.
      const float re = (x[k] * 2.0f + x[k]) * 2.0f, im = -x[k] * 2.0f * 2.0f;
      if (y[k].real() != re || y[k].imag() != im) ++bad;
    }
    CHECK_MESSAGE(bad == 0, bad << " of " << n << " elements differ");

    // The sum of |z|^2 over complex64 data, with reduce type complex<float>.
    ReductionOptions options;
    options.reduce_type = "complex<float>";
    const ReductionKernel sum("T z", "float32 y", "complex<float>(norm(z), 0)", "a + b", "y = abs(a)",
                              "complex<float>(0, 0)", "gpu_complex_unqualified_sum", options);
    auto z = random.complex64(n);
    auto total = sum({upload(DType::complex64, {n}, z)});
    REQUIRE(total.size() == 1);
    double want = 0;
    for (const auto& v : z) want += static_cast<double>(std::norm(v));
    const auto got = download<float>(total[0]);
    REQUIRE(got.size() == 1);
    // Float sums of positive terms: each thread's run adds its rounding (about 2^-24 per
    // add, of random sign), and the tree above it a few more; 1e-4 is far above both.
    CHECK(std::fabs(got[0] - want) <= 1e-4 * want);
  }
}

}  // namespace kernc::gpu_test
