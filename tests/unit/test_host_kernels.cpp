// Elementwise and reduction kernels on the host backend (Backend::cpu): the host geometry
// and template bodies of NOTE [ host loops ] (templates/prelude.cuh) and NOTE [ host
// reduction ] (src/dsl/reduction_plan.cpp), compiled by the system g++ and run on the host
// device's workers, against host references on random data; and their bits across worker
// counts (child processes, since the host device reads KERNC_CPU_THREADS once per process).

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "child_process.hpp"
#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"
#include "temp_dir.hpp"

using namespace kernc;

namespace {

// One engine on the cpu runtime for the whole process, its cache in a temporary directory
// (KERNC_HOST_KERNELS_CACHE when a parent test hands its own to a child).
struct HostEngine {
  test::TempDir dir;
  std::string cache_dir;
  std::unique_ptr<Engine> engine;
  HostEngine() {
    cache_dir = test::env("KERNC_HOST_KERNELS_CACHE").empty() ? dir.path() + "/cache" : test::env("KERNC_HOST_KERNELS_CACHE");
    engine = std::make_unique<Engine>(Config::from_environment([this](const char* name) -> const char* {
      const std::string n = name;
      if (n == "KERNC_CACHE_DIR") return cache_dir.c_str();
      if (n == "KERNC_RUNTIME") return "cpu";
      if (n == "KERNC_CACHE_PATH" || n == "KERNC_COMPILE" || n == "KERNC_REMOTE_CACHE") return nullptr;
      return std::getenv(name);
    }));
  }
  CallOptions options() const {
    CallOptions options;
    options.engine = engine.get();
    return options;
  }
  Device device() const { return engine->device(0); }
};

HostEngine& host() {
  static HostEngine engine;
  return engine;
}

template <class T>
std::vector<T> random_values(std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<T> values(static_cast<std::size_t>(n));
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<int> dist(-1000, 1000);
    for (auto& v : values) v = static_cast<T>(dist(rng));
  } else {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (auto& v : values) v = static_cast<T>(dist(rng));
  }
  return values;
}

template <class T>
DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::float32;
  if constexpr (std::is_same_v<T, double>) return DType::float64;
  return DType::int32;
}

// Sums of a (rows, cols) matrix: over everything (axis = -1), axis 0 or axis 1, in double.
template <class T>
std::vector<double> reference_sum(const std::vector<T>& x, std::int64_t rows, std::int64_t cols, int axis) {
  std::vector<double> out(axis < 0 ? 1 : static_cast<std::size_t>(axis == 0 ? cols : rows), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      const double v = static_cast<double>(x[static_cast<std::size_t>(r * cols + c)]);
      out[axis < 0 ? 0 : static_cast<std::size_t>(axis == 0 ? c : r)] += v;
    }
  }
  return out;
}

template <class T>
void check_sums(std::int64_t rows, std::int64_t cols, unsigned seed) {
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "host_sum");
  const auto x = random_values<T>(rows * cols, seed);
  const DeviceArray dx = DeviceArray::from_host(host().device(), dtype_of<T>(), {rows, cols}, x.data());
  for (int axis : {-1, 0, 1}) {
    for (bool keepdims : {false, true}) {
      CAPTURE(axis);
      CAPTURE(keepdims);
      const std::optional<std::vector<int>> axes =
          axis < 0 ? std::nullopt : std::optional<std::vector<int>>(std::vector<int>{axis});
      const auto out = sum({dx}, axes, keepdims, {}, host().options());
      REQUIRE(out.size() == 1);
      if (keepdims) {
        CHECK(out[0].shape().size() == 2);
      } else {
        CHECK(out[0].shape().size() == (axis < 0 ? 0u : 1u));
      }
      const auto got = out[0].to_host_vector<T>();
      const auto want = reference_sum(x, rows, cols, axis);
      REQUIRE(got.size() == want.size());
      const double per_sum = static_cast<double>(axis < 0 ? rows * cols : axis == 0 ? rows : cols);
      for (std::size_t k = 0; k < want.size(); ++k) {
        if constexpr (std::is_integral_v<T>) {
          CHECK(static_cast<double>(got[k]) == want[k]);
        } else {
          const double eps = std::is_same_v<T, float> ? 1e-6 : 1e-14;
          CHECK(std::abs(static_cast<double>(got[k]) - want[k]) <= eps * per_sum + eps);
        }
      }
    }
  }
}

// The bits of a few sums over data fixed by the shape: full (one output, split), axis 0
// (the columns kernel, aligned, and the one-output kernel on a copy one element off) and
// axis 1; appended to `bits`.
void sum_bits(std::vector<std::uint32_t>& bits) {
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "host_sum");
  const std::int64_t rows = 1031, cols = 1200, n = rows * cols;
  const auto x = random_values<float>(n + 1, 7);
  const Device device = host().device();
  // Aligned at x[0]; `shifted` holds the same values from its second element on.
  const DeviceArray aligned = DeviceArray::from_host(device, DType::float32, {rows, cols}, x.data());
  std::vector<float> padded(static_cast<std::size_t>(n + 1));
  std::memcpy(padded.data() + 1, x.data(), static_cast<std::size_t>(n) * sizeof(float));
  const DeviceArray shifted_buffer = DeviceArray::from_host(device, DType::float32, {n + 1}, padded.data());
  ArrayRef shifted = ArrayRef::contiguous(shifted_buffer.ref().data + sizeof(float), DType::float32, {rows, cols});
  auto append = [&](const DeviceArray& out) {
    for (float v : out.to_host_vector<float>()) {
      std::uint32_t word;
      std::memcpy(&word, &v, sizeof word);
      bits.push_back(word);
    }
  };
  append(sum({aligned}, std::nullopt, false, {}, host().options())[0]);
  append(sum({aligned}, std::vector<int>{0}, false, {}, host().options())[0]);
  append(sum({shifted}, std::vector<int>{0}, false, {}, host().options())[0]);
  append(sum({aligned}, std::vector<int>{1}, false, {}, host().options())[0]);
}

}  // namespace

TEST_CASE("host::ElementwiseKernel runs contiguous, strided and broadcast loops on the cpu device") {
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "host_saxpy");
  const Device device = host().device();
  SUBCASE("contiguous, sizes 1, odd and large") {
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{1001}, std::int64_t{300007}}) {
      CAPTURE(n);
      const auto x = random_values<float>(n, 1), y = random_values<float>(n, 2);
      const auto dx = DeviceArray::from_host(device, DType::float32, {n}, x.data());
      const auto dy = DeviceArray::from_host(device, DType::float32, {n}, y.data());
      const auto z = saxpy({2.5f, dx, dy}, {}, host().options())[0].to_host_vector<float>();
      // The host program rounds a * x + y twice (-ffp-contract=off); this test's own
      // compiler may fuse it: within an ulp.
      for (std::size_t k = 0; k < x.size(); ++k) CHECK(std::abs(z[k] - (2.5f * x[k] + y[k])) <= 1e-6f * (std::abs(z[k]) + 1));
    }
  }
  SUBCASE("strided input") {
    const std::int64_t n = 4099;
    const auto x = random_values<float>(2 * n, 3), y = random_values<float>(n, 4);
    const auto dx = DeviceArray::from_host(device, DType::float32, {2 * n}, x.data());
    const auto dy = DeviceArray::from_host(device, DType::float32, {n}, y.data());
    const ArrayRef every_other = dx.ref().sliced(0, 0, 2 * n, 2);
    const auto z = saxpy({-1.5f, every_other, dy}, {}, host().options())[0].to_host_vector<float>();
    for (std::int64_t k = 0; k < n; ++k) CHECK(std::abs(z[k] - (-1.5f * x[2 * k] + y[k])) <= 1e-6f * (std::abs(z[k]) + 1));
  }
  SUBCASE("broadcast row against a matrix, float64") {
    const ElementwiseKernel add("T x, T y", "T z", "z = x + y", "host_add");
    const std::int64_t rows = 67, cols = 129;
    const auto x = random_values<double>(rows * cols, 5), y = random_values<double>(cols, 6);
    const auto dx = DeviceArray::from_host(device, DType::float64, {rows, cols}, x.data());
    const auto dy = DeviceArray::from_host(device, DType::float64, {1, cols}, y.data());
    const auto z = add({dx, dy}, {}, host().options())[0].to_host_vector<double>();
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) CHECK(z[r * cols + c] == x[r * cols + c] + y[c]);
    }
  }
}

TEST_CASE("host::ReductionKernel full, axis-0, axis-1 and keepdims sums match a host reference") {
  SUBCASE("float32") { check_sums<float>(301, 1029, 11); }
  SUBCASE("float64") { check_sums<double>(77, 3001, 12); }
  SUBCASE("int32") { check_sums<std::int32_t>(129, 260, 13); }
  SUBCASE("float32, one long row and one long column") {
    check_sums<float>(1, 300001, 14);
    check_sums<float>(70001, 3, 15);
  }
}

TEST_CASE("host::ReductionKernel of zero elements gives the identity") {
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a + 1", "0", "host_sum_plus_one");
  const Device device = host().device();
  const DeviceArray empty_rows = DeviceArray::empty(device, DType::float32, {0, 5});
  const auto out = sum({empty_rows}, std::vector<int>{0}, false, {}, host().options());
  REQUIRE(out[0].size() == 5);
  for (float v : out[0].to_host_vector<float>()) CHECK(v == 1.0f);
}

TEST_CASE("host::ReductionKernel without identity folds only real elements") {
  const ReductionKernel max_of("T x", "T y", "x", "max(a, b)", "y = a", "", "host_max");
  const std::int64_t rows = 45, cols = 1003;
  const auto x = random_values<float>(rows * cols, 21);
  const auto dx = DeviceArray::from_host(host().device(), DType::float32, {rows, cols}, x.data());
  for (int axis : {0, 1}) {
    CAPTURE(axis);
    const auto got = max_of({dx}, std::vector<int>{axis}, false, {}, host().options())[0].to_host_vector<float>();
    const std::int64_t outs = axis == 0 ? cols : rows, len = axis == 0 ? rows : cols;
    REQUIRE(static_cast<std::int64_t>(got.size()) == outs);
    for (std::int64_t o = 0; o < outs; ++o) {
      float want = -2.0f;
      for (std::int64_t k = 0; k < len; ++k) want = std::max(want, x[axis == 0 ? k * cols + o : o * cols + k]);
      CHECK(got[o] == want);
    }
  }
}

TEST_CASE("helper::host sum bits" * doctest::skip()) {
  std::vector<std::uint32_t> bits;
  sum_bits(bits);
  std::ofstream out(test::env("KERNC_HOST_KERNELS_OUT"), std::ios::binary);
  out.write(reinterpret_cast<const char*>(bits.data()), static_cast<std::streamsize>(bits.size() * sizeof bits[0]));
}

TEST_CASE("host::ReductionKernel gives the same bits with 1 and 4 worker threads, and from either axis-0 kernel") {
  test::TempDir dir;
  const std::string cache = dir.path() + "/cache";
  auto bits_with = [&](const std::string& threads) {
    const std::string out = dir.path() + "/bits-" + threads, log = dir.path() + "/log-" + threads;
    test::ChildProcess child("helper::host sum bits",
                             {{"KERNC_CPU_THREADS", threads}, {"KERNC_HOST_KERNELS_CACHE", cache}, {"KERNC_HOST_KERNELS_OUT", out}},
                             log);
    const int status = child.wait();
    std::ifstream log_file(log);
    const std::string log_text((std::istreambuf_iterator<char>(log_file)), std::istreambuf_iterator<char>());
    REQUIRE_MESSAGE(status == 0, log_text);
    std::ifstream in(out, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return bytes;
  };
  const std::string one = bits_with("1"), four = bits_with("4");
  const std::size_t outputs = 1 + 1200 + 1200 + 1031;
  REQUIRE(one.size() == outputs * 4);
  CHECK(one == four);
  // The aligned axis-0 sum (columns kernel) and the shifted one (one-output kernel).
  CHECK(std::memcmp(one.data() + 4, one.data() + 4 + 1200 * 4, 1200 * 4) == 0);
}
