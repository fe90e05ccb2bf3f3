// ReductionKernel::operator() on a GPU: every axis subset of 1-D to 4-D shapes (plain,
// transposed and reversed inputs, keepdims or not) against a host reference; integer
// wrap-around; large, split and many-output reductions; passed outputs; zero-size
// reductions; axis errors; and a reduction over more than 2^31 elements.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {
namespace {

using Shape = std::vector<std::int64_t>;

const ReductionKernel& sum_of_squares() {
  static const ReductionKernel kernel("T x", "T y", "x * x", "a + b", "y = a", "0", "gpu_sum_of_squares");
  return kernel;
}

const ReductionKernel& maximum() {
  static const ReductionKernel kernel("T x", "T y", "x", "a > b ? a : b", "y = a", "", "gpu_maximum");
  return kernel;
}

// The shape a reduction of `shape` over the (sorted, non-negative) `axes` gives.
Shape reduced_shape(const Shape& shape, const std::vector<int>& axes, bool keepdims) {
  Shape out;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced) out.push_back(shape[d]);
    if (reduced && keepdims) out.push_back(1);
  }
  return out;
}

// Reduces `data` (C order over `shape`) over `axes`: each output, in the C order of the
// kept axes, is fold(init, element) over its elements.
template <class T, class Acc, class Fold>
std::vector<Acc> host_reduce(const std::vector<T>& data, const Shape& shape, const std::vector<int>& axes, Acc init,
                             Fold fold) {
  const int ndim = static_cast<int>(shape.size());
  std::vector<std::int64_t> out_stride(static_cast<std::size_t>(ndim), 0);
  std::int64_t out_size = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    if (std::find(axes.begin(), axes.end(), d) != axes.end()) continue;
    out_stride[static_cast<std::size_t>(d)] = out_size;
    out_size *= shape[static_cast<std::size_t>(d)];
  }
  std::vector<Acc> out(static_cast<std::size_t>(out_size), init);
  std::size_t flat = 0;
  for_each_index(shape, [&](const std::vector<std::int64_t>& index) {
    std::int64_t o = 0;
    for (int d = 0; d < ndim; ++d) o += index[static_cast<std::size_t>(d)] * out_stride[static_cast<std::size_t>(d)];
    auto& acc = out[static_cast<std::size_t>(o)];
    acc = fold(acc, data[flat++]);
  });
  return out;
}

std::string describe_axes(const std::optional<std::vector<int>>& axes) {
  if (!axes) return "all (nullopt)";
  std::string text = "(";
  for (std::size_t k = 0; k < axes->size(); ++k) text += (k ? ", " : "") + std::to_string((*axes)[k]);
  return text + ")";
}

// One input view over a random buffer of `base_shape`, reduced over every axis subset.
template <class T>
void check_all_axis_subsets(Random& random, DType dtype, const Shape& base_shape, const std::string& view_name,
                            const std::function<ArrayRef(const ArrayRef&)>& make_view, double rtol) {
  INFO("input " << view_name << " of a buffer of " << base_shape.size() << " dimension(s)");
  const auto base = random.uniform<T>(element_count(base_shape));
  const auto dbase = upload(dtype, base_shape, base);
  const ArrayRef view = make_view(dbase.ref());
  const auto data = host_view(base, dbase.ref().data, view);  // the view's elements in C order
  const int ndim = view.ndim();
  for (int mask = 0; mask <= (1 << ndim); ++mask) {
    // mask 2^ndim stands for "no axes given" (std::nullopt: every axis).
    std::optional<std::vector<int>> axes;
    std::vector<int> sorted;
    if (mask < (1 << ndim)) {
      axes.emplace();
      for (int d = 0; d < ndim; ++d) {
        if (!(mask & (1 << d))) continue;
        sorted.push_back(d);
        axes->push_back(mask % 2 ? d - ndim : d);  // odd masks name their axes from the end
      }
      if (mask % 3 == 0) std::reverse(axes->begin(), axes->end());  // order does not matter
    } else {
      for (int d = 0; d < ndim; ++d) sorted.push_back(d);
    }
    INFO("axes " << describe_axes(axes));
    const auto squares = host_reduce<T, double>(data, view.shape, sorted, 0.0,
                                                [](double acc, T v) { return acc + static_cast<double>(v) * v; });
    const auto maxima = host_reduce<T, T>(data, view.shape, sorted, -std::numeric_limits<T>::infinity(),
                                          [](T acc, T v) { return v > acc ? v : acc; });
    for (bool keepdims : {false, true}) {
      INFO("keepdims " << keepdims);
      const Shape expected_shape = reduced_shape(view.shape, sorted, keepdims);
      auto sums = sum_of_squares()({view}, axes, keepdims);
      REQUIRE(sums.size() == 1);
      CHECK(sums[0].shape() == expected_shape);
      CHECK(sums[0].dtype() == dtype);
      CHECK(sums[0].ref().c_contiguous());
      expect_close(as_doubles(download<T>(sums[0])), squares, rtol, "sum of squares");

      auto maxes = maximum()({view}, axes, keepdims);
      REQUIRE(maxes.size() == 1);
      CHECK(maxes[0].shape() == expected_shape);
      expect_equal(download<T>(maxes[0]), maxima, "maximum");
    }
  }
}

}  // namespace

TEST_CASE("ReductionKernel::operator() reduces over every axis subset of 1-D to 4-D inputs, with and without keepdims") {
  KERNC_GPU_RANDOM(random, "reduction axis subsets");
  const std::vector<Shape> shapes = {{7}, {5, 6}, {3, 4, 5}, {2, 3, 4, 5}};
  for (const auto& shape : shapes) {
    auto plain = [](const ArrayRef& a) { return a; };
    auto transposed = [](const ArrayRef& a) { return a.transposed(); };
    auto reversed = [](const ArrayRef& a) { return a.sliced(0, a.shape[0] - 1, -a.shape[0] - 1, -1); };
    auto rolled = [](const ArrayRef& a) {  // axes (1, 2, ..., 0)
      std::vector<int> axes;
      for (int d = 1; d < a.ndim(); ++d) axes.push_back(d);
      axes.push_back(0);
      return a.transposed(axes);
    };
    check_all_axis_subsets<double>(random, DType::float64, shape, "C-contiguous", plain, 1e-12);
    check_all_axis_subsets<float>(random, DType::float32, shape, "C-contiguous", plain, 1e-5);
    check_all_axis_subsets<double>(random, DType::float64, shape, "transposed", transposed, 1e-12);
    check_all_axis_subsets<float>(random, DType::float32, shape, "transposed", transposed, 1e-5);
    check_all_axis_subsets<float>(random, DType::float32, shape, "axis 0 reversed", reversed, 1e-5);
    if (shape.size() >= 3) check_all_axis_subsets<double>(random, DType::float64, shape, "axes rolled", rolled, 1e-12);
  }
}

TEST_CASE("ReductionKernel::operator() matches the host on full reductions at sizes 1, odd and large") {
  KERNC_GPU_RANDOM(random, "reduction full");
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    const auto x32 = random.uniform<float>(n);
    const auto x64 = random.uniform<double>(n);
    const auto d32 = upload(DType::float32, {n}, x32);
    const auto d64 = upload(DType::float64, {n}, x64);
    long double s32 = 0, s64 = 0;
    float m32 = -std::numeric_limits<float>::infinity();
    double m64 = -std::numeric_limits<double>::infinity();
    for (auto v : x32) s32 += static_cast<long double>(v) * v, m32 = std::max(m32, v);
    for (auto v : x64) s64 += static_cast<long double>(v) * v, m64 = std::max(m64, v);

    auto r32 = sum_of_squares()({d32});
    REQUIRE(r32.size() == 1);
    CHECK(r32[0].shape() == Shape{});
    expect_close(as_doubles(download<float>(r32[0])), {static_cast<double>(s32)}, 1e-5, "float32 sum of squares");
    auto r64 = sum_of_squares()({d64});
    expect_close(as_doubles(download<double>(r64[0])), {static_cast<double>(s64)}, 1e-12, "float64 sum of squares");
    expect_equal(download<float>(maximum()({d32})[0]), {m32}, "float32 maximum");
    expect_equal(download<double>(maximum()({d64})[0]), {m64}, "float64 maximum");

    auto kept = sum_of_squares()({d64}, std::nullopt, true);
    CHECK(kept[0].shape() == Shape{1});
  }
}

TEST_CASE("ReductionKernel::operator() sums int8 with wrap-around in the reduce type") {
  KERNC_GPU_RANDOM(random, "reduction int8");
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "gpu_int8_sum");
  auto wrapped_sum = [](std::int8_t acc, std::int8_t v) {
    return static_cast<std::int8_t>(static_cast<std::uint8_t>(static_cast<std::uint8_t>(acc) + static_cast<std::uint8_t>(v)));
  };
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    const auto x = random.integers<std::int8_t>(n, -128, 127);
    const auto dx = upload(DType::int8, {n}, x);
    std::int8_t want = 0;
    for (auto v : x) want = wrapped_sum(want, v);
    auto y = sum({dx});
    REQUIRE(y.size() == 1);
    CHECK(y[0].dtype() == DType::int8);
    expect_equal(download<std::int8_t>(y[0]), {want}, "int8 sum");
  }
  const auto x = random.integers<std::int8_t>(1001 * 7, -128, 127);
  const auto dx = upload(DType::int8, {1001, 7}, x);
  for (int axis : {0, 1}) {
    CAPTURE(axis);
    const auto want = host_reduce<std::int8_t, std::int8_t>(x, {1001, 7}, {axis}, 0, wrapped_sum);
    expect_equal(download<std::int8_t>(sum({dx}, std::vector<int>{axis})[0]), want, "int8 sum over one axis");
  }
}

TEST_CASE("ReductionKernel::operator() reduces 50'000'003 float64 elements (split across blocks)") {
  KERNC_GPU_RANDOM(random, "reduction large");
  const std::int64_t n = 50'000'003;
  const auto x = random.uniform<double>(n);
  const auto dx = upload(DType::float64, {n}, x);
  long double sum = 0;
  double max = -std::numeric_limits<double>::infinity();
  for (auto v : x) sum += static_cast<long double>(v) * v, max = std::max(max, v);
  expect_close(as_doubles(download<double>(sum_of_squares()({dx})[0])), {static_cast<double>(sum)}, 1e-12,
               "sum of squares");
  expect_equal(download<double>(maximum()({dx})[0]), {max}, "maximum");
  // The same memory as (7, 7142857) (the first 49'999'999 elements), over the long axis.
  const ArrayRef rows = ArrayRef::contiguous(dx.ref().data, DType::float64, {7, 7'142'857});
  std::vector<double> head(x.begin(), x.begin() + 7 * 7'142'857);
  const auto want = host_reduce<double, double>(head, {7, 7'142'857}, {1}, 0.0,
                                                [](double acc, double v) { return acc + v * v; });
  expect_close(as_doubles(download<double>(sum_of_squares()({rows}, std::vector<int>{1})[0])), want, 1e-12,
               "sum of squares of 7 long rows");
}

TEST_CASE("ReductionKernel::operator() reduces (100000, 3) over axis 1 (many outputs) and axis 0 (few, long)") {
  KERNC_GPU_RANDOM(random, "reduction many outputs");
  const Shape shape = {100000, 3};
  const auto x = random.uniform<float>(element_count(shape));
  const auto dx = upload(DType::float32, shape, x);
  auto square = [](double acc, float v) { return acc + static_cast<double>(v) * v; };
  auto larger = [](float acc, float v) { return v > acc ? v : acc; };
  const float lowest = -std::numeric_limits<float>::infinity();
  for (int axis : {1, 0, -1, -2}) {
    CAPTURE(axis);
    const std::vector<int> sorted = {axis < 0 ? axis + 2 : axis};
    const auto squares = host_reduce<float, double>(x, shape, sorted, 0.0, square);
    const auto maxima = host_reduce<float, float>(x, shape, sorted, lowest, larger);
    for (bool keepdims : {false, true}) {
      CAPTURE(keepdims);
      auto sums = sum_of_squares()({dx}, std::vector<int>{axis}, keepdims);
      CHECK(sums[0].shape() == reduced_shape(shape, sorted, keepdims));
      expect_close(as_doubles(download<float>(sums[0])), squares, 1e-5, "sum of squares");
      expect_equal(download<float>(maximum()({dx}, std::vector<int>{axis}, keepdims)[0]), maxima, "maximum");
    }
  }
  // The transposed view (3, 100000): the same reductions with the axes swapped.
  const auto squares = host_reduce<float, double>(x, shape, {1}, 0.0, square);
  expect_close(as_doubles(download<float>(sum_of_squares()({dx.ref().transposed()}, std::vector<int>{0})[0])), squares,
               1e-5, "sum of squares of the transposed view over axis 0");
}

TEST_CASE("ReductionKernel::operator() over outer and middle axes (one thread per output, split): host results, same bits twice") {
  KERNC_GPU_RANDOM(random, "reduction outer axes");
  struct Case {
    Shape shape;
    std::vector<int> axes;
  };
  for (const Case& c : {Case{{3001, 1003}, {0}}, Case{{37, 129, 515}, {1}}, Case{{65, 7, 33, 40}, {0, 2}},
                        Case{{20000, 40}, {0}}}) {
    CAPTURE(c.shape.size());
    CAPTURE(c.axes.size());
    const auto x = random.uniform<float>(element_count(c.shape));
    const auto dx = upload(DType::float32, c.shape, x);
    auto square = [](double acc, float v) { return acc + static_cast<double>(v) * v; };
    auto larger = [](float acc, float v) { return v > acc ? v : acc; };
    const auto squares = host_reduce<float, double>(x, c.shape, c.axes, 0.0, square);
    const auto maxima =
        host_reduce<float, float>(x, c.shape, c.axes, -std::numeric_limits<float>::infinity(), larger);
    const auto first = download<float>(sum_of_squares()({dx}, c.axes)[0]);
    expect_close(as_doubles(first), squares, 1e-5, "sum of squares");
    expect_equal(download<float>(maximum()({dx}, c.axes)[0]), maxima, "maximum");
    // Bitwise deterministic: the same input on the same device gives the same bits.
    expect_equal(download<float>(sum_of_squares()({dx}, c.axes)[0]), first, "the second run");
  }
}

TEST_CASE("ReductionKernel::operator() handles more outputs than one grid holds, and no reduction at all") {
  KERNC_GPU_RANDOM(random, "reduction beyond one grid");
  auto square = [](double acc, float v) { return acc + static_cast<double>(v) * v; };
  for (const Shape& shape : {Shape{3'000'017, 2}, Shape{1'500'007, 5}, Shape{700'001, 33}}) {
    CAPTURE(shape[1]);
    const auto x = random.uniform<float>(element_count(shape));
    const auto dx = upload(DType::float32, shape, x);
    const auto want = host_reduce<float, double>(x, shape, {1}, 0.0, square);
    expect_close(as_doubles(download<float>(sum_of_squares()({dx}, std::vector<int>{-1})[0])), want, 1e-5,
                 "sum of squares of each row");
  }
  // axes () reduces nothing: one output per element, each x * x.
  const std::int64_t n = 3'000'017;
  const auto x = random.uniform<float>(n);
  const auto dx = upload(DType::float32, {n}, x);
  std::vector<double> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = static_cast<double>(x[i]) * x[i];
  auto none = sum_of_squares()({dx}, std::vector<int>{});
  CHECK(none[0].shape() == Shape{n});
  expect_close(as_doubles(download<float>(none[0])), want, 1e-6, "axes ()");
}

TEST_CASE("ReductionKernel::operator() writes into passed outputs, contiguous, keepdims-shaped and strided") {
  KERNC_GPU_RANDOM(random, "reduction outputs");
  const Shape shape = {100000, 3};
  const std::int64_t rows = shape[0];
  const auto x = random.uniform<float>(element_count(shape));
  const auto dx = upload(DType::float32, shape, x);
  const auto want = host_reduce<float, double>(x, shape, {1}, 0.0,
                                               [](double acc, float v) { return acc + static_cast<double>(v) * v; });

  auto out = poisoned(DType::float32, {rows});
  auto returned = sum_of_squares()({dx}, std::vector<int>{1}, false, {out});
  REQUIRE(returned.size() == 1);
  CHECK(returned[0].ref().data == out.ref().data);
  expect_close(as_doubles(download<float>(out)), want, 1e-5, "contiguous output");

  auto kept = poisoned(DType::float32, {rows, 1});
  sum_of_squares()({dx}, std::vector<int>{-1}, true, {kept});
  expect_close(as_doubles(download<float>(kept)), want, 1e-5, "keepdims output");

  auto buffer = poisoned(DType::float32, {2 * rows});
  const ArrayRef strided = buffer.ref().sliced(0, 1, 2 * rows, 2);
  sum_of_squares()({dx}, std::vector<int>{1}, false, {strided});
  const auto all = download<float>(buffer);
  expect_close(as_doubles(host_view(all, buffer.ref().data, strided)), want, 1e-5, "strided output");
  expect_untouched(all, offsets_outside(strided, buffer.ref().data, 2 * rows), "strided output's buffer");

  // A full reduction into a 0-d output and into a reversed (negative-stride) one.
  auto scalar_out = poisoned(DType::float32, {});
  sum_of_squares()({dx}, std::nullopt, false, {scalar_out});
  long double total = 0;
  for (auto v : x) total += static_cast<long double>(v) * v;
  expect_close(as_doubles(download<float>(scalar_out)), {static_cast<double>(total)}, 1e-5, "0-d output");

  auto reversed_buffer = poisoned(DType::float32, {rows});
  const ArrayRef reversed = reversed_buffer.ref().sliced(0, rows - 1, -rows - 1, -1);
  sum_of_squares()({dx}, std::vector<int>{1}, false, {reversed});
  expect_close(as_doubles(download<float>(reversed)), want, 1e-5, "reversed output");

  auto wrong = DeviceArray::empty(device(), DType::float32, {rows, 3});
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "the reduction gives",
                    sum_of_squares()({dx}, std::vector<int>{1}, false, {wrong}));
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "the reduction gives",
                    sum_of_squares()({dx}, std::vector<int>{1}, true, {out}));
}

TEST_CASE("ReductionKernel::operator() over zero elements gives post_map(identity), or an error without identity") {
  KERNC_GPU_RANDOM(random, "reduction zero size");
  const ReductionKernel sum_plus_one("T x", "T y", "x", "a + b", "y = a + 1", "0", "gpu_sum_plus_one");
  const auto empty_rows = DeviceArray::empty(device(), DType::float32, {4, 0});
  const auto empty = DeviceArray::empty(device(), DType::float32, {0});

  auto over_empty_axis = sum_plus_one({empty_rows}, std::vector<int>{1});
  REQUIRE(over_empty_axis.size() == 1);
  CHECK(over_empty_axis[0].shape() == Shape{4});
  expect_equal(download<float>(over_empty_axis[0]), {1.0f, 1.0f, 1.0f, 1.0f}, "sum over an empty axis, plus one");

  auto full = sum_plus_one({empty});
  CHECK(full[0].shape() == Shape{});
  expect_equal(download<float>(full[0]), {1.0f}, "sum of nothing, plus one");

  auto kept = sum_plus_one({empty_rows}, std::vector<int>{1}, true);
  CHECK(kept[0].shape() == Shape{4, 1});
  expect_equal(download<float>(kept[0]), {1.0f, 1.0f, 1.0f, 1.0f}, "keepdims");

  auto out = poisoned(DType::float32, {4});
  sum_plus_one({empty_rows}, std::vector<int>{-1}, false, {out});
  expect_equal(download<float>(out), {1.0f, 1.0f, 1.0f, 1.0f}, "into a passed output");

  // No outputs at all: nothing to compute, with or without identity (as NumPy).
  auto no_outputs = sum_plus_one({empty_rows}, std::vector<int>{0});
  CHECK(no_outputs[0].shape() == Shape{0});
  auto max_no_outputs = maximum()({empty_rows}, std::vector<int>{0});
  CHECK(max_no_outputs[0].shape() == Shape{0});

  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "no identity", maximum()({empty_rows}, std::vector<int>{1}));
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "no identity", maximum()({empty}));
}

TEST_CASE("ReductionKernel::operator() normalises negative axes and rejects repeated and out-of-range ones") {
  KERNC_GPU_RANDOM(random, "reduction axes");
  const Shape shape = {3, 4, 5};
  const auto x = random.uniform<double>(element_count(shape));
  const auto dx = upload(DType::float64, shape, x);
  auto square = [](double acc, double v) { return acc + v * v; };
  const auto want_2 = host_reduce<double, double>(x, shape, {2}, 0.0, square);
  const auto want_02 = host_reduce<double, double>(x, shape, {0, 2}, 0.0, square);
  expect_close(as_doubles(download<double>(sum_of_squares()({dx}, std::vector<int>{-1})[0])), want_2, 1e-12, "axis -1");
  expect_close(as_doubles(download<double>(sum_of_squares()({dx}, std::vector<int>{-3, -1})[0])), want_02, 1e-12,
               "axes (-3, -1)");
  expect_close(as_doubles(download<double>(sum_of_squares()({dx}, std::vector<int>{2, 0})[0])), want_02, 1e-12,
               "axes (2, 0)");

  constexpr auto invalid = ErrorCode::invalid_argument;
  KERNC_CHECK_ERROR(invalid, "is repeated", sum_of_squares()({dx}, std::vector<int>{0, 0}));
  KERNC_CHECK_ERROR(invalid, "is repeated", sum_of_squares()({dx}, std::vector<int>{1, -2}));
  KERNC_CHECK_ERROR(invalid, "out of range", sum_of_squares()({dx}, std::vector<int>{3}));
  KERNC_CHECK_ERROR(invalid, "out of range", sum_of_squares()({dx}, std::vector<int>{-4}));
  KERNC_CHECK_ERROR(invalid, "takes 1 input(s)", sum_of_squares()({dx, dx}));
  const ReductionKernel concrete("float64 x", "float64 y", "x", "a + b", "y = a", "0", "gpu_concrete_sum");
  KERNC_CHECK_ERROR(invalid, "nothing to reduce", concrete({2.0}));
}

namespace {

// Σ (i * 7) % 127 for i in [begin, end): 7 is invertible modulo 127, so every full
// period of 127 indices sums to 0 + 1 + ... + 126.
std::int64_t pattern_sum(std::int64_t begin, std::int64_t end) {
  auto prefix = [](std::int64_t n) {
    std::int64_t total = (n / 127) * (126 * 127 / 2);
    for (std::int64_t i = 0; i < n % 127; ++i) total += (i * 7) % 127;
    return total;
  };
  return prefix(end) - prefix(begin);
}

}  // namespace

TEST_CASE("ReductionKernel::operator() counts 2^31 + 3 int8 elements exactly as int64 (64-bit indexing)") {
  if (host_mode()) {  // not GPU-only: too slow for CI on the host
    skip_on_host("too slow for CI on the host: 2 GiB of int8 took 229 s on 2 shared cores");
    return;
  }
  KERNC_GPU_RANDOM(random, "reduction 64-bit");
  const std::int64_t n = (std::int64_t{1} << 31) + 3;
  Device dev = device();
  const ReductionKernel count("int8 x", "int64 y", "(long long)x", "a + b", "y = a", "0", "gpu_count_int8");
  auto x = DeviceArray::empty(dev, DType::int8, {n});

  dev.fill_bytes(x.ref().data, 1, static_cast<std::size_t>(n));
  expect_equal(download<std::int64_t>(count({x})[0]), {n}, "sum of 2^31 + 3 ones");
  const std::int64_t half = n / 2;  // two rows of 2^30 + 1, still more than 2^31 elements in all
  const ArrayRef rows = ArrayRef::contiguous(x.ref().data, DType::int8, {2, half});
  expect_equal(download<std::int64_t>(count({rows}, std::vector<int>{1})[0]), {half, half}, "two rows of ones");

  // Position-dependent data: x[i] = (i * 7) % 127, made on the device.
  const RawKernel fill(R"(
extern "C" __global__ void gpu_fill_mod127_r(signed char* x, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
    x[i] = (signed char)((i * 7) % 127);
}
)",
                       "gpu_fill_mod127_r");
  LaunchConfig config;
  config.grid[0] = static_cast<unsigned>(dev.multiprocessors()) * 16;
  config.block[0] = 256;
  fill(config, {x, n});
  expect_equal(download<std::int64_t>(count({x})[0]), {pattern_sum(0, n)}, "sum of (i * 7) % 127");
  expect_equal(download<std::int64_t>(count({rows}, std::vector<int>{-1})[0]),
               {pattern_sum(0, half), pattern_sum(half, 2 * half)}, "row sums of (i * 7) % 127");
  const ArrayRef columns = ArrayRef::contiguous(x.ref().data, DType::int8, {half, 2}).transposed();
  std::int64_t even = 0, odd = 0;
  for (std::int64_t i = 0; i < 2 * half; i += 127 * 2) {
    // Both parities over one period of 254 indices sum to one period each (127 is odd).
    if (i + 254 <= 2 * half) {
      even += 126 * 127 / 2;
      odd += 126 * 127 / 2;
    } else {
      for (std::int64_t j = i; j < 2 * half; ++j) ((j % 2) ? odd : even) += (j * 7) % 127;
    }
  }
  expect_equal(download<std::int64_t>(count({columns}, std::vector<int>{1})[0]), {even, odd},
               "strided (transposed) rows of (i * 7) % 127");
}

}  // namespace kernc::gpu_test
