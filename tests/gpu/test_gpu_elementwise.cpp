// ElementwiseKernel::operator() on a GPU: results against host references on random data
// at sizes 1, odd and large, for several dtypes, broadcasting, scalar conversions, raw
// parameters, non-contiguous inputs and outputs, aliasing, 64-bit indexing, and every
// error a call can raise.

#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {
namespace {

using Shape = std::vector<std::int64_t>;

const ElementwiseKernel& saxpy_kernel() {
  static const ElementwiseKernel kernel("T a, T x, T y", "T z", "z = a * x + y", "gpu_saxpy");
  return kernel;
}

// z = a * x + y for float or double, allocated by kernc and passed in (poisoned).
template <class T>
void check_saxpy_floating(Random& random, DType dtype, std::int64_t n, double rtol) {
  const auto& saxpy = saxpy_kernel();
  const T a = static_cast<T>(1.75);
  const auto x = random.uniform<T>(n);
  const auto y = random.uniform<T>(n);
  const auto dx = upload(dtype, {n}, x);
  const auto dy = upload(dtype, {n}, y);
  std::vector<double> want(x.size()), scale(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    want[i] = static_cast<double>(a) * x[i] + y[i];
    scale[i] = std::fabs(static_cast<double>(a) * x[i]) + std::fabs(static_cast<double>(y[i]));
  }
  const std::string what = std::string(to_string(dtype)) + " saxpy, n = " + std::to_string(n);

  auto z = saxpy({a, dx, dy});
  REQUIRE(z.size() == 1);
  CHECK(z[0].dtype() == dtype);
  CHECK(z[0].shape() == Shape{n});
  CHECK(z[0].owns_memory());
  expect_close(as_doubles(download<T>(z[0])), want, rtol, what, scale);

  auto out = poisoned(dtype, {n});
  auto returned = saxpy({a, dx, dy}, {out});
  REQUIRE(returned.size() == 1);
  CHECK(returned[0].ref().data == out.ref().data);
  CHECK_FALSE(returned[0].owns_memory());
  expect_close(as_doubles(download<T>(out)), want, rtol, what + " into a passed output", scale);
}

void check_saxpy_int32(Random& random, std::int64_t n) {
  const auto& saxpy = saxpy_kernel();
  const int a = 7;
  const auto x = random.integers<std::int32_t>(n, -1000, 1000);
  const auto y = random.integers<std::int32_t>(n, -100000, 100000);
  std::vector<std::int32_t> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = a * x[i] + y[i];
  const auto dx = upload(DType::int32, {n}, x);
  const auto dy = upload(DType::int32, {n}, y);
  auto z = saxpy({a, dx, dy});
  REQUIRE(z.size() == 1);
  CHECK(z[0].dtype() == DType::int32);
  expect_equal(download<std::int32_t>(z[0]), want, "int32 saxpy, n = " + std::to_string(n));
  auto out = poisoned(DType::int32, {n});
  saxpy({a, dx, dy}, {out});
  expect_equal(download<std::int32_t>(out), want, "int32 saxpy into a passed output, n = " + std::to_string(n));
}

// kernc::float16 computes as CuPy's float16 does: in float, rounded to binary16 once, when
// stored (NOTE [ half arithmetic is float arithmetic ]), so the device result is exactly
// the host emulation below (a * x is exact in float: a fused multiply-add gives the same);
// it must also be within half precision of the exact value.
void check_saxpy_float16(Random& random, std::int64_t n) {
  const auto& saxpy = saxpy_kernel();
  const float a = 1.5f;  // exact in binary16
  const auto x = random.halves(n);
  const auto y = random.halves(n);
  std::vector<std::uint16_t> emulated(x.size());
  std::vector<double> want(x.size()), scale(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float xf = half_to_float(x[i]), yf = half_to_float(y[i]);
    emulated[i] = float_to_half(a * xf + yf);
    want[i] = static_cast<double>(a) * xf + yf;
    scale[i] = std::fabs(static_cast<double>(a) * xf) + std::fabs(static_cast<double>(yf));
  }
  const auto dx = upload(DType::float16, {n}, x);
  const auto dy = upload(DType::float16, {n}, y);
  auto z = saxpy({a, dx, dy});
  REQUIRE(z.size() == 1);
  CHECK(z[0].dtype() == DType::float16);
  const auto got = download<std::uint16_t>(z[0]);
  expect_close(halves_as_doubles(got), want, 2e-3, "float16 saxpy, n = " + std::to_string(n), scale);
  expect_equal(got, emulated, "float16 saxpy bits against the host emulation, n = " + std::to_string(n));
}

void check_saxpy_complex64(Random& random, std::int64_t n) {
  const auto& saxpy = saxpy_kernel();
  const std::complex<float> a(0.5f, -1.25f);
  const auto x = random.complex64(n);
  const auto y = random.complex64(n);
  std::vector<double> want, scale;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::complex<double> ad(a), xd(x[i]), yd(y[i]);
    const std::complex<double> z = ad * xd + yd;
    const double magnitude = std::abs(ad) * std::abs(xd) + std::abs(yd);
    want.push_back(z.real());
    want.push_back(z.imag());
    scale.push_back(magnitude);
    scale.push_back(magnitude);
  }
  const auto dx = upload(DType::complex64, {n}, x);
  const auto dy = upload(DType::complex64, {n}, y);
  auto z = saxpy({a, dx, dy});
  REQUIRE(z.size() == 1);
  CHECK(z[0].dtype() == DType::complex64);
  std::vector<double> got;
  for (const auto& v : download<std::complex<float>>(z[0])) {
    got.push_back(v.real());
    got.push_back(v.imag());
  }
  expect_close(got, want, 1e-5, "complex64 saxpy (real, imag), n = " + std::to_string(n), scale);
}

}  // namespace

TEST_CASE("ElementwiseKernel::operator() computes saxpy like the host for float32, float64, float16, int32 and "
          "complex64 at sizes 1, odd and large") {
  KERNC_GPU_RANDOM(random, "elementwise saxpy");
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    check_saxpy_floating<float>(random, DType::float32, n, 1e-5);
    check_saxpy_floating<double>(random, DType::float64, n, 1e-12);
    check_saxpy_float16(random, n);
    check_saxpy_int32(random, n);
    check_saxpy_complex64(random, n);
  }
}

TEST_CASE("ElementwiseKernel::operator() covers every tail of the unrolled contiguous loop, small and large") {
  KERNC_GPU_RANDOM(random, "elementwise tails");
  // Around one block (256) and one unrolled block step (4 x 256), and around what was one
  // step of a grid of 32 blocks a multiprocessor (the grid is one pass now: NOTE [ one
  // pass ]; threads that loop are the next test's).
  const std::int64_t grid_step = std::int64_t{device().multiprocessors()} * 32 * 256 * 4;
  for (std::int64_t n : {std::int64_t{2}, std::int64_t{3}, std::int64_t{255}, std::int64_t{256}, std::int64_t{257},
                         std::int64_t{1023}, std::int64_t{1024}, std::int64_t{1025}, std::int64_t{4097},
                         grid_step - 1, grid_step + 1, 2 * grid_step + 777}) {
    CAPTURE(n);
    check_saxpy_floating<float>(random, DType::float32, n, 1e-5);
  }
}

TEST_CASE("ElementwiseKernel::operator() loops past one pass of the largest grid, contiguous and through a multi-index") {
  KERNC_GPU_RANDOM(random, "elementwise passes");
  // With one thread a block, 4 float32 elements a thread, more than 4 x (2^24 - 1)
  // elements need more blocks than a launch asks for (kMaxGrid, NOTE [ one pass ]): each
  // thread's grid-stride loop then takes a second step, in the contiguous kernel (x[:n])
  // and in the multi-index one (x[::2], which steps its multi-index anew each pass).
  const std::int64_t max_grid = (std::int64_t{1} << 24) - 1;
  const std::int64_t n = 4 * max_grid + 1001;
  static const ElementwiseKernel kernel("T x, T y", "T z", "z = x * 2 + y", "gpu_passes_2x_plus_y");
  const auto x = random.uniform<float>(2 * n);
  const auto y = random.uniform<float>(n);
  const auto dx = upload(DType::float32, {2 * n}, x);
  const auto dy = upload(DType::float32, {n}, y);
  CallOptions one_thread;
  one_thread.block_size = 1;
  CallOptions plan_options;
  plan_options.block_size = 1;
  plan_options.multiprocessors = device().multiprocessors();
  struct Case {
    const char* what;
    ArrayRef view;
    std::int64_t stride;
    LayoutKind kind;
  };
  const Case cases[] = {{"x[:n]", dx.ref().sliced(0, 0, n, 1), 1, LayoutKind::contiguous},
                        {"x[::2]", dx.ref().sliced(0, 0, 2 * n, 2), 2, LayoutKind::strided}};
  for (const auto& c : cases) {
    INFO(c.what);
    const Call plan = kernel.plan({c.view, dy}, {}, plan_options);
    CHECK(plan.layout().kind == c.kind);
    // The host takes more elements a step (NOTE [ host loops ]): fewer blocks than a GPU.
    if (device().backend() != Backend::cpu) CHECK(plan.launch_config().grid[0] == max_grid);
    std::vector<double> want(static_cast<std::size_t>(n)), scale(want.size());
    for (std::int64_t i = 0; i < n; ++i) {
      const float xi = x[static_cast<std::size_t>(i * c.stride)], yi = y[static_cast<std::size_t>(i)];
      want[static_cast<std::size_t>(i)] = 2.0 * xi + yi;
      scale[static_cast<std::size_t>(i)] = 2.0 * std::fabs(xi) + std::fabs(yi);
    }
    auto out = poisoned(DType::float32, {n});
    kernel({c.view, dy}, {out}, one_thread);
    expect_close(as_doubles(download<float>(out)), want, 1e-5, std::string(c.what) + " over two passes", scale);
  }
}

TEST_CASE("ElementwiseKernel::operator() broadcasts (5,1,7) with (3,1) and a scalar, into new and strided outputs") {
  KERNC_GPU_RANDOM(random, "elementwise broadcast");
  const ElementwiseKernel kernel("T a, T b, T s", "T z", "z = a * b + s", "gpu_broadcast_axpb");
  const auto a = random.uniform<float>(5 * 7);
  const auto b = random.uniform<float>(3);
  const double s = 0.375;  // a float64 scalar, converted to T = float32
  const auto da = upload(DType::float32, {5, 1, 7}, a);
  const auto db = upload(DType::float32, {3, 1}, b);
  std::vector<double> want, scale;
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 7; ++k) {
        const double ab = static_cast<double>(a[i * 7 + k]) * b[j];
        want.push_back(ab + s);
        scale.push_back(std::fabs(ab) + s);
      }
    }
  }

  auto z = kernel({da, db, s});
  REQUIRE(z.size() == 1);
  CHECK(z[0].shape() == Shape{5, 3, 7});
  CHECK(z[0].ref().c_contiguous());
  expect_close(as_doubles(download<float>(z[0])), want, 1e-5, "broadcast into a new output", scale);

  // The same into a transposed output: memory of shape (7, 3, 5) seen as (5, 3, 7).
  auto buffer = poisoned(DType::float32, {7, 3, 5});
  const ArrayRef out = buffer.ref().transposed();
  REQUIRE(out.shape == Shape{5, 3, 7});
  kernel({da, db, s}, {out});
  expect_close(as_doubles(download<float>(out)), want, 1e-5, "broadcast into a transposed output", scale);

  // Inputs broadcast the other way round: (3,1) first.
  const ElementwiseKernel swapped("T b, T a, T s", "T z", "z = a * b + s", "gpu_broadcast_axpb_swapped");
  auto z2 = swapped({db, da, s});
  REQUIRE(z2.size() == 1);
  CHECK(z2[0].shape() == Shape{5, 3, 7});
  expect_close(as_doubles(download<float>(z2[0])), want, 1e-5, "broadcast, (3,1) given first", scale);
}

namespace {

// A scalar argument and what it must become as a float32 and as an int8 parameter under
// C conversion, except that an integer out of an integer parameter's range is refused (as
// CuPy 14 refuses a Python integer out of bounds): floating values truncate toward zero
// and saturate (a NaN is refused, as CuPy refuses it), complex values lose their imaginary
// part. kRefused: the
// int8 parameter refuses the value.
constexpr int kRefused = 1000;
struct ScalarCase {
  const char* label;
  Scalar value;
  bool check_float32;
  float as_float32;
  int as_int8;
};

std::vector<ScalarCase> scalar_cases() {
  return {
      {"bool true", Scalar(true), true, 1.0f, 1},
      {"int8 -100", Scalar(static_cast<signed char>(-100)), true, -100.0f, -100},
      {"int16 -300", Scalar(static_cast<short>(-300)), true, -300.0f, kRefused},
      {"int16 -128", Scalar(static_cast<short>(-128)), true, -128.0f, -128},
      {"int32 70000", Scalar(70000), true, 70000.0f, kRefused},
      {"int64 -5000000123", Scalar(-5'000'000'123LL), true, static_cast<float>(-5'000'000'123LL), kRefused},
      {"int64 127", Scalar(127LL), true, 127.0f, 127},
      {"uint8 250", Scalar(static_cast<unsigned char>(250)), true, 250.0f, kRefused},
      {"uint8 100", Scalar(static_cast<unsigned char>(100)), true, 100.0f, 100},
      {"uint16 65535", Scalar(static_cast<unsigned short>(65535)), true, 65535.0f, kRefused},
      {"uint32 4000000077", Scalar(4'000'000'077u), true, static_cast<float>(4'000'000'077u), kRefused},
      {"uint64 18000000000000000123", Scalar(18'000'000'000'000'000'123ull), true,
       static_cast<float>(18'000'000'000'000'000'123ull), kRefused},
      {"float16 -2.5", Scalar::of(DType::float16, -2.5), true, -2.5f, -2},
      {"bfloat16 300", Scalar::of(DType::bfloat16, 300.0), true, 300.0f, 127},
      {"float8_e4m3fn -13", Scalar::of(DType::float8_e4m3fn, -13.0), true, -13.0f, -13},
      {"float8_e5m2 1e6 (saturated to 57344)", Scalar::of(DType::float8_e5m2, 1e6), true, 57344.0f, 127},
      {"float32 -1e10", Scalar(-1e10f), true, -1e10f, -128},
      {"float64 200.9", Scalar(200.9), true, static_cast<float>(200.9), 127},
      {"float64 -7.9", Scalar(-7.9), true, static_cast<float>(-7.9), -7},
      {"float64 NaN", Scalar(std::numeric_limits<double>::quiet_NaN()), false, 0.0f, kRefused},
      {"complex64 (3.9, 2)", Scalar(std::complex<float>(3.9f, 2.0f)), true, 3.9f, 3},
      {"complex128 (-130.5, 1)", Scalar(std::complex<double>(-130.5, 1.0)), true, -130.5f, -128},
  };
}

}  // namespace

TEST_CASE("ElementwiseKernel::operator() converts scalars of every dtype to float32 and int8 parameters as C does") {
  KERNC_GPU_RANDOM(random, "elementwise scalars");
  const ElementwiseKernel add_f32("float32 x, float32 s", "float32 y", "y = x + s", "gpu_add_scalar_f32");
  const ElementwiseKernel add_i8("int8 x, int8 s", "int8 y", "y = x + s", "gpu_add_scalar_i8");
  const std::int64_t n = 1001;
  const auto xf = random.uniform<float>(n);
  const auto xi = random.integers<std::int8_t>(n, -100, 100);
  const auto dxf = upload(DType::float32, {n}, xf);
  const auto dxi = upload(DType::int8, {n}, xi);

  std::size_t count = 0;
  const DType* all = all_dtypes(&count);
  std::vector<bool> seen(count, false);
  for (const auto& c : scalar_cases()) {
    INFO("scalar " << c.label);
    for (std::size_t k = 0; k < count; ++k) seen[k] = seen[k] || all[k] == c.value.dtype;
    if (c.check_float32) {
      std::vector<float> want(xf.size());
      for (std::size_t i = 0; i < xf.size(); ++i) want[i] = xf[i] + c.as_float32;
      auto y = add_f32({dxf, c.value});
      REQUIRE(y.size() == 1);
      expect_equal(download<float>(y[0]), want, std::string("float32 x + ") + c.label);
    }
    if (c.as_int8 == kRefused) {
      CHECK_THROWS_WITH_AS(add_i8({dxi, c.value}), doctest::Contains("int8 parameter \"int8 s\""), Error);
      continue;
    }
    std::vector<std::int8_t> want(xi.size());
    for (std::size_t i = 0; i < xi.size(); ++i) want[i] = static_cast<std::int8_t>(xi[i] + c.as_int8);
    auto y = add_i8({dxi, c.value});
    REQUIRE(y.size() == 1);
    expect_equal(download<std::int8_t>(y[0]), want, std::string("int8 x + ") + c.label);
  }
  for (std::size_t k = 0; k < count; ++k) CHECK_MESSAGE(seen[k], "no scalar case of dtype " << to_string(all[k]));

  // The case from CuPy's documentation, int8 + 300: CuPy 14 raises OverflowError (NEP 50),
  // and so does kernc; a wrap written as a cast is the caller's (300 is 44 as int8).
  const ElementwiseKernel add_t("T x, T s", "T y", "y = x + s", "gpu_add_scalar_t");
  CHECK_THROWS_WITH_AS(add_t({dxi, 300}), doctest::Contains("the integer 300 is out of bounds for int8"), Error);
  std::vector<std::int8_t> want(xi.size());
  for (std::size_t i = 0; i < xi.size(); ++i) want[i] = static_cast<std::int8_t>(xi[i] + 44);
  expect_equal(download<std::int8_t>(add_t({dxi, static_cast<signed char>(300)})[0]), want,
               "int8 x + (signed char)300 through a placeholder");
}

TEST_CASE("ElementwiseKernel::operator() gives raw parameters x[i], x.size() and x.shape() of the whole array") {
  KERNC_GPU_RANDOM(random, "elementwise raw");
  // w is (4, 3) in memory and passed transposed, (3, 4): w[j] is its j-th element in C order.
  const ElementwiseKernel kernel("T x, raw T w", "T y", "y = x + w[i % w.size()] + T(w.shape()[0] * 100 + w.shape()[1])",
                                 "gpu_raw_lookup");
  const auto w = random.uniform<float>(12);
  const auto dw = upload(DType::float32, {4, 3}, w);
  const ArrayRef wt = dw.ref().transposed();
  const auto w_flat = host_view(w, dw.ref().data, wt);
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    const auto x = random.uniform<float>(n);
    const auto dx = upload(DType::float32, {n}, x);
    std::vector<float> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = (x[i] + w_flat[i % 12]) + 304.0f;
    auto y = kernel({dx, wt});
    REQUIRE(y.size() == 1);
    CHECK(y[0].shape() == Shape{n});  // the raw array does not take part in broadcasting
    expect_close(as_doubles(download<float>(y[0])), as_doubles(want), 1e-6, "x + w[i % w.size()] + 304");
  }
}

TEST_CASE("ElementwiseKernel::operator() runs an all-raw kernel over size= elements") {
  KERNC_GPU_RANDOM(random, "elementwise size");
  const ElementwiseKernel reverse("raw T x", "raw T y", "y[i] = x[x.size() - 1 - i] * 2", "gpu_raw_reverse");
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    const auto x = random.uniform<double>(n);
    const auto dx = upload(DType::float64, {n}, x);
    auto out = poisoned(DType::float64, {n});
    CallOptions options;
    options.size = n;
    auto returned = reverse({dx}, {out}, options);
    REQUIRE(returned.size() == 1);
    std::vector<double> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = x[x.size() - 1 - i] * 2;
    expect_equal(download<double>(out), want, "y[i] = 2 x[n-1-i] over size = n");

    // A loop shorter than the arrays leaves the rest of the output alone.
    if (n > 3) {
      auto partial = poisoned(DType::float64, {n});
      options.size = n - 3;
      reverse({dx}, {partial}, options);
      const auto got = download<double>(partial);
      std::vector<double> head(got.begin(), got.end() - 3), head_want(want.begin(), want.end() - 3);
      expect_equal(head, head_want, "the first size elements");
      expect_untouched(got, {n - 3, n - 2, n - 1}, "size = n - 3");
    }
  }
}

TEST_CASE("ElementwiseKernel::operator() on zero-size arrays returns empty outputs without compiling or launching") {
  KERNC_GPU_RANDOM(random, "elementwise zero size");
  Engine engine(Config::from_environment());
  CallOptions options;
  options.engine = &engine;
  const ElementwiseKernel twice("T x", "T y", "y = x * 2", "gpu_zero_size_twice");
  for (const Shape& shape : {Shape{0}, Shape{3, 0, 2}, Shape{0, 5}}) {
    CAPTURE(shape.size());
    const auto x = DeviceArray::empty(engine.device(0), DType::float32, shape);
    auto y = twice({x}, {}, options);
    REQUIRE(y.size() == 1);
    CHECK(y[0].shape() == shape);
    CHECK(y[0].size() == 0);
    CHECK(y[0].dtype() == DType::float32);
    auto out = DeviceArray::empty(engine.device(0), DType::float32, shape);
    auto returned = twice({x}, {out}, options);
    REQUIRE(returned.size() == 1);
    CHECK(returned[0].size() == 0);
  }
  CHECK(engine.loaded_modules() == 0);
  CHECK(engine.cache().stats().compiles == 0);
  CHECK(engine.cache().stats().memory_hits + engine.cache().stats().disk_hits == 0);
}

namespace {

// z = 2 x + y where x is `make_view` of a random buffer of `base_shape` and y is
// contiguous: into a new output, then into the same kind of view of a poisoned buffer
// (which must keep its poison outside the view).
void check_view_input(Random& random, const std::string& what, const Shape& base_shape,
                      const std::function<ArrayRef(const ArrayRef&)>& make_view) {
  INFO("layout case: " << what);
  static const ElementwiseKernel kernel("T x, T y", "T z", "z = x * 2 + y", "gpu_view_2x_plus_y");
  const auto base = random.uniform<float>(element_count(base_shape));
  const auto dbase = upload(DType::float32, base_shape, base);
  const ArrayRef view = make_view(dbase.ref());
  REQUIRE(view.size() > 0);
  const auto x = host_view(base, dbase.ref().data, view);
  const auto y = random.uniform<float>(view.size());
  const auto dy = upload(DType::float32, view.shape, y);
  std::vector<double> want(x.size()), scale(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    want[i] = 2.0 * x[i] + y[i];
    scale[i] = 2.0 * std::fabs(x[i]) + std::fabs(y[i]);
  }

  auto z = kernel({view, dy});
  REQUIRE(z.size() == 1);
  CHECK(z[0].shape() == view.shape);
  CHECK(z[0].ref().c_contiguous());
  expect_close(as_doubles(download<float>(z[0])), want, 1e-5, what + ": view input, new output", scale);

  // The contiguous array first and the view second.
  static const ElementwiseKernel swapped("T y, T x", "T z", "z = x * 2 + y", "gpu_view_2x_plus_y_swapped");
  auto z2 = swapped({dy, view});
  REQUIRE(z2.size() == 1);
  expect_close(as_doubles(download<float>(z2[0])), want, 1e-5, what + ": view as the second input", scale);

  auto out_buffer = poisoned(DType::float32, base_shape);
  const ArrayRef out = make_view(out_buffer.ref());
  kernel({view, dy}, {out});
  const auto all = download<float>(out_buffer);
  expect_close(as_doubles(host_view(all, out_buffer.ref().data, out)), want, 1e-5,
               what + ": view input, output through the same view", scale);
  expect_untouched(all, offsets_outside(out, out_buffer.ref().data, out_buffer.size()), what + ": output buffer");

  // A `continue` in the operation leaves the rest of that element alone, and the other
  // elements of the thread still run (the strided kernels load 4 elements a thread before
  // computing any); a raw array is indexed freely beside the views.
  static const ElementwiseKernel skip("T x, T y, raw T b", "T z", "if (x < 0.25f) continue; z = x * 2 + y + b[i % b.size()]",
                                      "gpu_view_skip_raw");
  const auto b = random.uniform<float>(7);
  const auto db = upload(DType::float32, Shape{7}, b);
  const auto before = random.uniform<float>(view.size());
  const auto dz = upload(DType::float32, view.shape, before);
  skip({view, dy, db}, {dz.ref()});
  for (std::size_t i = 0; i < x.size(); ++i) {
    want[i] = x[i] < 0.25f ? before[i] : 2.0 * x[i] + y[i] + b[i % b.size()];
    scale[i] = x[i] < 0.25f ? std::fabs(before[i]) : 2.0 * std::fabs(x[i]) + std::fabs(y[i]) + std::fabs(b[i % b.size()]);
  }
  expect_close(as_doubles(download<float>(dz)), want, 1e-5, what + ": continue and a raw array", scale);
}

}  // namespace

TEST_CASE("ElementwiseKernel::operator() reads and writes transposed, sliced, reversed and rank-6 strided views") {
  KERNC_GPU_RANDOM(random, "elementwise views");
  check_view_input(random, "2-D transposed, large", {1733, 1741}, [](const ArrayRef& a) { return a.transposed(); });
  check_view_input(random, "3-D transposed (2, 0, 1)", {7, 11, 13},
                   [](const ArrayRef& a) { return a.transposed({2, 0, 1}); });
  check_view_input(random, "3-D transposed with an extent-1 axis", {5, 1, 9},
                   [](const ArrayRef& a) { return a.transposed(); });
  check_view_input(random, "1-D step 2", {2001}, [](const ArrayRef& a) { return a.sliced(0, 0, 2001, 2); });
  check_view_input(random, "1-D step 2, large", {6'000'033},
                   [](const ArrayRef& a) { return a.sliced(0, 0, 6'000'033, 2); });
  check_view_input(random, "2-D step 2 on axis 1", {37, 50}, [](const ArrayRef& a) { return a.sliced(1, 1, 50, 2); });
  check_view_input(random, "1-D reversed", {1001}, [](const ArrayRef& a) { return a.sliced(0, 1000, -1002, -1); });
  check_view_input(random, "1-D one element reversed", {1}, [](const ArrayRef& a) { return a.sliced(0, 0, -2, -1); });
  check_view_input(random, "2-D rows reversed, transposed", {33, 65},
                   [](const ArrayRef& a) { return a.sliced(0, 32, -34, -1).transposed(); });
  check_view_input(random, "rank 6 transposed (generic layout)", {3, 4, 5, 6, 7, 2},
                   [](const ArrayRef& a) { return a.transposed(); });
  check_view_input(random, "rank 6 sliced and permuted", {4, 3, 6, 5, 2, 7},
                   [](const ArrayRef& a) { return a.sliced(2, 0, 6, 2).transposed({1, 0, 3, 2, 5, 4}); });
  check_view_input(random, "rank 5 with a negative step", {3, 5, 4, 6, 2},
                   [](const ArrayRef& a) { return a.sliced(3, 5, -7, -2).transposed({4, 2, 0, 3, 1}); });
}

TEST_CASE("ElementwiseKernel::operator() on all-Fortran operands (axes reordered) and with i (C order kept)") {
  KERNC_GPU_RANDOM(random, "elementwise fortran order");
  const std::int64_t rows = 517, cols = 1031;
  const auto x = random.uniform<float>(rows * cols);
  const auto y = random.uniform<float>(rows * cols);
  // Each buffer holds a (cols, rows) C array; its transpose is a Fortran-ordered (rows, cols) view.
  const auto dx = upload(DType::float32, {cols, rows}, x);
  const auto dy = upload(DType::float32, {cols, rows}, y);
  auto dz = poisoned(DType::float32, {cols, rows});
  const ElementwiseKernel add("T x, T y", "T z", "z = x - 2 * y", "gpu_fortran_add");
  add({dx.ref().transposed(), dy.ref().transposed()}, {dz.ref().transposed()});
  auto z = download<float>(dz);
  for (std::int64_t k = 0; k < rows * cols; ++k) REQUIRE(z[k] == x[k] - 2 * y[k]);
  // `i` is the C-order index over the (rows, cols) loop, whatever the memory order.
  const ElementwiseKernel with_i("T x", "T z", "z = x + (T)i", "gpu_fortran_i");
  with_i({dx.ref().transposed()}, {dz.ref().transposed()});
  z = download<float>(dz);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::int64_t memory = c * rows + r;  // element (r, c) of the transposed views
      REQUIRE(z[memory] == x[memory] + static_cast<float>(r * cols + c));
    }
  }
}

TEST_CASE("ElementwiseKernel::operator() reads inputs transposed against the output through tiles (tiled layout)") {
  KERNC_GPU_RANDOM(random, "elementwise tiled");
  // Ragged edges on both tile axes (131 = 4 * 32 + 3, 97 = 3 * 32 + 1).
  const std::int64_t rows = 131, cols = 97;
  SUBCASE("two transposed inputs of different sizes (float64, int32) and a direct one, into a new output") {
    const ElementwiseKernel kernel("float32 x, float64 y, int32 n", "float64 z", "z = x * 3 + y - n", "gpu_tiled_mixed");
    const auto x = random.uniform<float>(rows * cols);
    const auto y = random.uniform<double>(rows * cols);
    const auto n = random.integers<std::int32_t>(rows * cols, -1000, 1000);
    const auto dx = upload(DType::float32, {rows, cols}, x);
    const auto dy = upload(DType::float64, {cols, rows}, y);  // (cols, rows) in memory, passed as its transpose
    const auto dn = upload(DType::int32, {cols, rows}, n);
    const std::vector<Arg> args = {dx, dy.ref().transposed(), dn.ref().transposed()};
    CHECK(kernel.plan(args).layout().str() == "tiled2-i32");
    auto z = kernel(args);
    REQUIRE(z.size() == 1);
    const auto got = download<double>(z[0]);
    std::vector<double> want(got.size());
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::int64_t t = c * rows + r;  // element (r, c) of the transposed views
        want[r * cols + c] = static_cast<double>(x[r * cols + c] * 3.0f) + y[t] - n[t];
      }
    }
    expect_equal(got, want, "z = x * 3 + y - n, y and n transposed");
  }
  SUBCASE("C-ordered inputs into a Fortran-ordered output: the loop follows the output, both inputs are tiled") {
    const ElementwiseKernel kernel("T x, T y", "T z", "z = x - 2 * y", "gpu_tiled_fortran_out");
    const auto x = random.uniform<float>(rows * cols);
    const auto y = random.uniform<float>(rows * cols);
    const auto dx = upload(DType::float32, {rows, cols}, x);
    const auto dy = upload(DType::float32, {rows, cols}, y);
    auto dz = poisoned(DType::float32, {cols, rows});
    const ArrayRef out = dz.ref().transposed();
    CHECK(kernel.plan({dx, dy}, {out}).layout().str() == "tiled2-i32");
    kernel({dx, dy}, {out});
    const auto z = download<float>(dz);
    std::vector<float> want(z.size());
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) want[c * rows + r] = x[r * cols + c] - 2 * y[r * cols + c];
    }
    expect_equal(z, want, "Fortran-ordered z = x - 2 y");
  }
  SUBCASE("a batch of transposes (rank 3) with i, through a kept plan re-launched on new data") {
    const std::int64_t batch = 5, m = 40, k = 70;
    const ElementwiseKernel kernel("T x, T y", "T z", "z = x + y * (T)(i % 1000)", "gpu_tiled_batch_i");
    auto run_once = [&](const Call& plan) {
      const auto x = random.uniform<float>(batch * m * k);
      const auto y = random.uniform<float>(batch * m * k);
      const auto dx = upload(DType::float32, {batch, k, m}, x);  // passed as (batch, m, k)
      const auto dy = upload(DType::float32, {batch, m, k}, y);
      auto z = plan.launch({dx.ref().transposed({0, 2, 1}), dy});
      const auto got = download<float>(z.at(0));
      std::vector<double> want(got.size()), scale(got.size());
      for (std::int64_t b = 0; b < batch; ++b) {
        for (std::int64_t r = 0; r < m; ++r) {
          for (std::int64_t c = 0; c < k; ++c) {
            const std::int64_t i = (b * m + r) * k + c;
            const double xt = x[(b * k + c) * m + r], product = static_cast<double>(y[i]) * static_cast<double>(i % 1000);
            want[i] = xt + product;
            scale[i] = std::fabs(xt) + std::fabs(product);
          }
        }
      }
      // The device may fuse the multiply and add: close, not bitwise.
      expect_close(as_doubles(got), want, 1e-6, "batched z = x.T + y * (i % 1000)", scale);
    };
    const auto shape_x = ArrayRef::contiguous(std::uint64_t{4096}, DType::float32, {batch, k, m}).transposed({0, 2, 1});
    const auto shape_y = ArrayRef::contiguous(std::uint64_t{1 << 20}, DType::float32, {batch, m, k});
    CallOptions options;
    options.multiprocessors = device().multiprocessors();
    const Call plan = kernel.plan({shape_x, shape_y}, {}, options);
    CHECK(plan.layout().str() == "tiled3-i32");
    run_once(plan);
    run_once(plan);
  }
}

TEST_CASE("ElementwiseKernel::operator() writes into a passed non-contiguous output and nowhere else") {
  KERNC_GPU_RANDOM(random, "elementwise strided output");
  const auto& saxpy = saxpy_kernel();
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    const auto x = random.uniform<float>(n);
    const auto y = random.uniform<float>(n);
    const auto dx = upload(DType::float32, {n}, x);
    const auto dy = upload(DType::float32, {n}, y);
    auto buffer = poisoned(DType::float32, {2 * n});
    const ArrayRef out = buffer.ref().sliced(0, 1, 2 * n, 2);  // the odd elements
    REQUIRE(out.size() == n);
    saxpy({-0.5f, dx, dy}, {out});
    const auto all = download<float>(buffer);
    std::vector<double> got, want, scale;
    for (std::int64_t i = 0; i < n; ++i) {
      got.push_back(all[static_cast<std::size_t>(2 * i + 1)]);
      want.push_back(-0.5 * x[static_cast<std::size_t>(i)] + y[static_cast<std::size_t>(i)]);
      scale.push_back(0.5 * std::fabs(x[static_cast<std::size_t>(i)]) + std::fabs(y[static_cast<std::size_t>(i)]));
    }
    expect_close(got, want, 1e-5, "odd elements", scale);
    std::vector<std::int64_t> even;
    for (std::int64_t i = 0; i < n; ++i) even.push_back(2 * i);
    expect_untouched(all, even, "even elements");
  }
}

TEST_CASE("ElementwiseKernel::operator() updates in place when an input is the very same view as the output") {
  KERNC_GPU_RANDOM(random, "elementwise in place");
  const ElementwiseKernel increment("T x", "T y", "y = x + 1", "gpu_increment");
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    const auto x = random.uniform<double>(n);
    auto dx = upload(DType::float64, {n}, x);
    auto returned = increment({dx}, {dx});
    REQUIRE(returned.size() == 1);
    CHECK(returned[0].ref().data == dx.ref().data);
    std::vector<double> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = x[i] + 1;
    expect_equal(download<double>(dx), want, "x = x + 1");
  }
  // The same through a transposed view passed as both.
  const auto base = random.uniform<double>(301 * 203);
  auto dbase = upload(DType::float64, {301, 203}, base);
  const ArrayRef view = dbase.ref().transposed();
  increment({view}, {view});
  std::vector<double> want(base.size());
  for (std::size_t i = 0; i < base.size(); ++i) want[i] = base[i] + 1;
  expect_equal(download<double>(dbase), want, "x.T = x.T + 1");
}

TEST_CASE("ElementwiseKernel::operator() reads an input that overlaps the output as it was before the call") {
  KERNC_GPU_RANDOM(random, "elementwise overlap");
  const ElementwiseKernel increment("T x", "T y", "y = x + 1", "gpu_increment_overlap");
  for (std::int64_t n : {std::int64_t{2}, std::int64_t{1001}, std::int64_t{3'000'017}}) {
    CAPTURE(n);
    const auto x = random.uniform<float>(n);
    {
      // x[1:] = x[:-1] + 1: each element from the original left neighbour.
      auto dx = upload(DType::float32, {n}, x);
      increment({dx.ref().sliced(0, 0, n - 1)}, {dx.ref().sliced(0, 1, n)});
      std::vector<float> want(x.size());
      want[0] = x[0];
      for (std::size_t i = 1; i < x.size(); ++i) want[i] = x[i - 1] + 1.0f;
      expect_equal(download<float>(dx), want, "x[1:] = x[:-1] + 1");
    }
    {
      // x[:-1] = x[1:] + 1: each element from the original right neighbour.
      auto dx = upload(DType::float32, {n}, x);
      increment({dx.ref().sliced(0, 1, n)}, {dx.ref().sliced(0, 0, n - 1)});
      std::vector<float> want(x.size());
      for (std::size_t i = 0; i + 1 < x.size(); ++i) want[i] = x[i + 1] + 1.0f;
      want[x.size() - 1] = x[x.size() - 1];
      expect_equal(download<float>(dx), want, "x[:-1] = x[1:] + 1");
    }
    {
      // x = x[::-1] + 1: the reversed view of the same memory.
      auto dx = upload(DType::float32, {n}, x);
      increment({dx.ref().sliced(0, n - 1, -n - 1, -1)}, {dx});
      std::vector<float> want(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) want[i] = x[x.size() - 1 - i] + 1.0f;
      expect_equal(download<float>(dx), want, "x = x[::-1] + 1");
    }
  }
}

TEST_CASE("ElementwiseKernel::operator() rejects bad calls with invalid_argument naming the problem") {
  KERNC_GPU_RANDOM(random, "elementwise errors");
  const auto& saxpy = saxpy_kernel();
  const std::int64_t n = 1001;
  const auto x = upload(DType::float32, {n}, random.uniform<float>(n));
  const auto y = upload(DType::float32, {n}, random.uniform<float>(n));
  const auto x64 = upload(DType::float64, {n}, random.uniform<double>(n));
  const auto out = DeviceArray::empty(device(), DType::float32, {n});
  constexpr auto invalid = ErrorCode::invalid_argument;

  KERNC_CHECK_ERROR(invalid, "takes 3 input(s)", saxpy({2.0f, x}));
  KERNC_CHECK_ERROR(invalid, "takes 3 input(s)", saxpy({2.0f, x, y, y}));
  KERNC_CHECK_ERROR(invalid, "pass all of them or none", saxpy({2.0f, x, y}, {out, out}));

  const ElementwiseKernel concrete("float32 x", "float32 y", "y = x", "gpu_concrete_copy");
  KERNC_CHECK_ERROR(invalid, "input x is float32 but an array of float64 was passed", concrete({x64}));
  KERNC_CHECK_ERROR(invalid, "output y is float32 but an array of float64 was passed", concrete({x}, {x64}));
  KERNC_CHECK_ERROR(invalid, "type placeholder T is float32", saxpy({2.0f, x, x64}));

  // Passed outputs take part in broadcasting (as in CuPy): one that does not broadcast is
  // named; one the inputs broadcast past is not written whole.
  const auto wrong_shape = DeviceArray::empty(device(), DType::float32, {n + 1});
  KERNC_CHECK_ERROR(invalid, "shapes do not broadcast", saxpy({2.0f, x, y}, {wrong_shape}));
  const auto matrix = upload(DType::float32, {2, n}, random.uniform<float>(2 * n));
  KERNC_CHECK_ERROR(invalid, "output z has shape [1001] but the arguments broadcast to [2, 1001]",
                    saxpy({2.0f, matrix, y}, {out}));
  const auto other = upload(DType::float32, {n - 1}, random.uniform<float>(n - 1));
  KERNC_CHECK_ERROR(invalid, "shapes do not broadcast", saxpy({2.0f, x, other}));

  const ElementwiseKernel from_scalar("float32 a", "float32 y", "y = a", "gpu_from_scalar");
  KERNC_CHECK_ERROR(invalid, "the loop size cannot be decided", from_scalar({2.0f}));

  CallOptions sized;
  sized.size = n;
  KERNC_CHECK_ERROR(invalid, "size= cannot be used with non-raw array arguments (x, y passed)",
                    saxpy({2.0f, x, y}, {}, sized));

  const ElementwiseKernel all_raw("raw T x", "raw T y", "y[i] = x[i]", "gpu_all_raw_copy");
  KERNC_CHECK_ERROR(invalid, "every array passed is raw", all_raw({x}, {out}));
  KERNC_CHECK_ERROR(invalid, "raw parameter and needs an array", all_raw({1.0f}, {out}, sized));

  const ElementwiseKernel two_outputs("T x", "T y, T z", "y = x; z = x + 1", "gpu_two_outputs");
  auto shared = DeviceArray::empty(device(), DType::float32, {n + 1});
  KERNC_CHECK_ERROR(invalid, "outputs y and z overlap in memory",
                    two_outputs({x}, {shared.ref().sliced(0, 0, n), shared.ref().sliced(0, 1, n + 1)}));
  KERNC_CHECK_ERROR(invalid, "outputs y and z overlap in memory", two_outputs({x}, {out, out}));
}

TEST_CASE("ElementwiseKernel::operator() indexes 2^31 + 5 int8 elements with 64-bit offsets") {
  if (host_mode()) {  // not GPU-only: too slow for CI on the host
    skip_on_host("too slow for CI on the host: 2 GiB of int8 took 63 s on 2 shared cores");
    return;
  }
  KERNC_GPU_RANDOM(random, "elementwise 64-bit");
  const std::int64_t n = (std::int64_t{1} << 31) + 5;
  Device dev = device();
  // x[i] = (i * 7) % 127, made on the device (a 2 GiB upload would only test the bus).
  const RawKernel fill(R"(
extern "C" __global__ void gpu_fill_mod127(signed char* x, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
    x[i] = (signed char)((i * 7) % 127);
}
)",
                       "gpu_fill_mod127");
  auto x = DeviceArray::empty(dev, DType::int8, {n});
  LaunchConfig config;
  config.grid[0] = static_cast<unsigned>(dev.multiprocessors()) * 16;
  config.block[0] = 256;
  fill(config, {x, n});

  const ElementwiseKernel twice("int8 x", "int8 y", "y = x * 2", "gpu_twice_int8");
  auto y = twice({x});
  REQUIRE(y.size() == 1);
  CHECK(y[0].shape() == Shape{n});
  dev.synchronize();

  auto expected = [](std::int64_t i) { return static_cast<std::int8_t>(((i * 7) % 127) * 2); };
  auto check_window = [&](std::int64_t start, std::int64_t count) {
    const auto in = download_bytes(x.ref().data + static_cast<std::uint64_t>(start), static_cast<std::size_t>(count));
    const auto got = download_bytes(y[0].ref().data + static_cast<std::uint64_t>(start), static_cast<std::size_t>(count));
    std::vector<std::int8_t> in_values(in.begin(), in.end()), in_want, got_values(got.begin(), got.end()), want;
    for (std::int64_t i = start; i < start + count; ++i) {
      in_want.push_back(static_cast<std::int8_t>((i * 7) % 127));
      want.push_back(expected(i));
    }
    expect_equal(in_values, in_want, "x from the fill kernel at " + std::to_string(start));
    expect_equal(got_values, want, "y = 2 x at " + std::to_string(start));
  };
  check_window(0, 1 << 16);
  check_window((std::int64_t{1} << 31) - (1 << 16), (1 << 16) + 5);  // across 2^31, to the very end
  for (int k = 0; k < 32; ++k) check_window(random.index(n - 4096), 4096);
}

}  // namespace kernc::gpu_test
