#pragma once
// Fixtures shared by the GPU tests (tests/gpu/): the device, random data seeded once per
// run (and printed, so that a failure can be repeated), uploads and downloads, host
// views of strided device arrays, poisoned outputs, and comparisons that report the
// first elements that differ instead of one assertion per element.
//
// NOTE [ random data in GPU tests ]
// gpu_main.cpp picks one seed per run (std::random_device, or KERNC_GPU_TEST_SEED) and
// prints it. Each test case mixes it with its own tag, so that running one test case
// alone (-tc=...) with the printed seed sees the very same data. Every test case opens
// with KERNC_GPU_RANDOM, which also puts the seed into the report of any failing check.

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "kernc/array.hpp"
#include "kernc/engine.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/runtime.hpp"

namespace kernc::gpu_test {

/// Sizes every elementwise and full-reduction test runs at: one element, an odd count
/// that is not a multiple of any block size, and one past several million.
inline constexpr std::int64_t kSizes[] = {1, 1001, 3'000'017};

/// The run's seed (set once by gpu_main.cpp before any test runs).
inline std::uint64_t& run_seed() {
  static std::uint64_t seed = 0;
  return seed;
}

// NOTE [ GPU suite on the host ]
// With KERNC_RUNTIME=cpu the suite runs on the host backend (Backend::cpu): gpu_main.cpp
// sets host_mode(), the global engine's device 0 is the host device, and every kernel is
// compiled by the system C++ compiler and run on the host's cores (NOTE [ host backend ]
// in include/kernc/target.hpp). The DSL's semantics are the same there, so the same host
// references apply. What only a GPU has (its faults, CUDA graphs, the toolkit's headers,
// PTX and cubin files, the driver's properties and limits) is skipped by name, with the
// reason, through KERNC_GPU_ONLY; gpu_main.cpp prints the list at the end. ctest runs
// this mode as `gpu_on_host` on every machine (tests/CMakeLists.txt).

/// True when the suite runs on the host backend; see NOTE [ GPU suite on the host ].
inline bool& host_mode() {
  static bool on = false;
  return on;
}

/// The test case running now (kept by the listener in gpu_main.cpp).
inline std::string& current_test_case() {
  static std::string name;
  return name;
}

/// The test cases KERNC_GPU_ONLY skipped, each with its reason.
inline std::vector<std::pair<std::string, std::string>>& skipped_on_host() {
  static std::vector<std::pair<std::string, std::string>> skipped;
  return skipped;
}

/// Records that the current test case (or the part of it named by `part`) is skipped on
/// the host, and why; prints it at once so that the log says it where it happens.
inline void skip_on_host(std::string_view why, std::string_view part = {}) {
  std::string name = current_test_case();
  if (!part.empty()) name += " [" + std::string(part) + "]";
  for (const auto& entry : skipped_on_host()) {
    if (entry.first == name) return;  // a test case re-entered for its next SUBCASE
  }
  skipped_on_host().emplace_back(name, std::string(why));
  MESSAGE("skipped on the host backend: " << why);
}

/// Sizes for tests that loop over kSizes: on the host, the large case is 200'003 (past
/// every block and grid step of the host's launch geometry, still many blocks per
/// worker) instead of 3'000'017, to keep the suite to minutes on CI's 2 cores.
inline std::vector<std::int64_t> sizes() {
  if (host_mode()) return {1, 1001, 200'003};
  return {std::begin(kSizes), std::end(kSizes)};
}

/// Random data for one test case; see NOTE [ random data in GPU tests ].
class Random {
 public:
  explicit Random(std::string_view tag) : seed_(mix(run_seed(), tag)), engine_(seed_) {}

  std::uint64_t seed() const noexcept { return seed_; }
  std::mt19937_64& engine() noexcept { return engine_; }

  /// `n` floating values uniform in [lo, hi).
  template <class T>
  std::vector<T> uniform(std::int64_t n, double lo = -1.0, double hi = 1.0) {
    static_assert(std::is_floating_point_v<T>);
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<T> out(static_cast<std::size_t>(n));
    for (auto& v : out) v = static_cast<T>(dist(engine_));
    return out;
  }

  /// `n` integers uniform in [lo, hi] (any integer type, int8 included).
  template <class T>
  std::vector<T> integers(std::int64_t n, long long lo, long long hi) {
    static_assert(std::is_integral_v<T>);
    std::uniform_int_distribution<long long> dist(lo, hi);
    std::vector<T> out(static_cast<std::size_t>(n));
    for (auto& v : out) v = static_cast<T>(dist(engine_));
    return out;
  }

  /// `n` binary16 values (as bits) uniform in [lo, hi) before rounding.
  std::vector<std::uint16_t> halves(std::int64_t n, double lo = -1.0, double hi = 1.0) {
    std::vector<std::uint16_t> out(static_cast<std::size_t>(n));
    std::uniform_real_distribution<double> dist(lo, hi);
    for (auto& v : out) v = float_to_half(static_cast<float>(dist(engine_)));
    return out;
  }

  std::vector<std::complex<float>> complex64(std::int64_t n, double lo = -1.0, double hi = 1.0) {
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<std::complex<float>> out(static_cast<std::size_t>(n));
    for (auto& v : out) {
      float re = static_cast<float>(dist(engine_));
      float im = static_cast<float>(dist(engine_));
      v = {re, im};
    }
    return out;
  }

  /// An index in [0, n).
  std::int64_t index(std::int64_t n) { return std::uniform_int_distribution<std::int64_t>(0, n - 1)(engine_); }

 private:
  static std::uint64_t mix(std::uint64_t seed, std::string_view tag) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the tag, then a splitmix step
    for (char c : tag) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    std::uint64_t z = seed + h + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  std::uint64_t seed_;
  std::mt19937_64 engine_;
};

/// Opens a test case (or a SUBCASE) that needs a real GPU: on the host backend it is
/// skipped, by name and with `why` printed, and counted in the run's final list
/// (NOTE [ GPU suite on the host ]).
#define KERNC_GPU_ONLY(why)                  \
  do {                                       \
    if (::kernc::gpu_test::host_mode()) {    \
      ::kernc::gpu_test::skip_on_host(why);  \
      return;                                \
    }                                        \
  } while (false)

/// Opens a test case that fails on the host backend for a known reason not fixed yet: it
/// is skipped there like KERNC_GPU_ONLY, listed with "known host failure" and the reason.
#define KERNC_HOST_KNOWN_FAILURE(why)                               \
  do {                                                              \
    if (::kernc::gpu_test::host_mode()) {                           \
      ::kernc::gpu_test::skip_on_host("known host failure: " why);  \
      return;                                                       \
    }                                                               \
  } while (false)

/// Declares `var`, a Random for this test case, and attaches the seed to every failing check.
#define KERNC_GPU_RANDOM(var, tag)             \
  ::kernc::gpu_test::Random var(tag);          \
  INFO("repeat with KERNC_GPU_TEST_SEED=" << ::kernc::gpu_test::run_seed() << " (data seed " << var.seed() << ")")

/// Checks that `...` throws kernc::Error with `code` and a message containing `substring`.
#define KERNC_CHECK_ERROR(expected_code, expected_substring, ...)                                              \
  do {                                                                                                            \
    bool kernc_thrown_ = false;                                                                                   \
    try {                                                                                                         \
      __VA_ARGS__;                                                                                                \
    } catch (const ::kernc::Error& kernc_error_) {                                                                \
      kernc_thrown_ = true;                                                                                       \
      CHECK_MESSAGE(kernc_error_.code() == (expected_code),                                                       \
                    "error code " << ::kernc::to_string(kernc_error_.code()) << ", message: " << kernc_error_.what()); \
      CHECK_MESSAGE(std::string_view(kernc_error_.what()).find(expected_substring) != std::string_view::npos,     \
                    "the message does not contain \"" << (expected_substring) << "\": " << kernc_error_.what());  \
    }                                                                                                             \
    CHECK_MESSAGE(kernc_thrown_,                                                                                  \
                  "expected kernc::Error(" << ::kernc::to_string(expected_code) << ") from: " #__VA_ARGS__);      \
  } while (false)

/// The GPU every test uses (ordinal 0, through the global engine's driver settings).
inline Device device() { return Engine::global().device(0); }

inline std::int64_t element_count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto extent : shape) n *= extent;
  return n;
}

/// A C-contiguous device copy of `host` (which holds the elements of `shape` in C order).
template <class T>
DeviceArray upload(DType dtype, const std::vector<std::int64_t>& shape, const std::vector<T>& host) {
  REQUIRE(itemsize(dtype) == sizeof(T));
  REQUIRE(static_cast<std::int64_t>(host.size()) == element_count(shape));
  return DeviceArray::from_host(device(), dtype, shape, host.data());
}

/// The elements of a view, in its C order.
template <class T>
std::vector<T> download(const ArrayRef& view, StreamRef stream = {}) {
  REQUIRE(itemsize(view.dtype) == sizeof(T));
  return DeviceArray::wrap(device(), view).to_host_vector<T>(stream);
}
template <class T>
std::vector<T> download(const DeviceArray& array, StreamRef stream = {}) {
  return download<T>(array.ref(), stream);
}

/// `count` bytes of device memory at `address`.
inline std::vector<unsigned char> download_bytes(std::uint64_t address, std::size_t count) {
  std::vector<unsigned char> out(count);
  device().copy_to_host(out.data(), address, count);
  return out;
}

/// Fills every byte the view spans with 0xFF (NaN for floats, -1 for signed integers),
/// so that an element a kernel should have written but did not stands out.
inline void poison(const ArrayRef& view) {
  auto [low, high] = view.byte_range();
  device().fill_bytes(low, 0xFF, static_cast<std::size_t>(high - low));
  device().synchronize();
}

/// A new C-contiguous array, poisoned.
inline DeviceArray poisoned(DType dtype, const std::vector<std::int64_t>& shape) {
  DeviceArray array = DeviceArray::empty(device(), dtype, shape);
  poison(array.ref());
  return array;
}

/// Calls `fn(index)` for every multi-index of `shape` in C order.
template <class Fn>
void for_each_index(const std::vector<std::int64_t>& shape, Fn&& fn) {
  const std::int64_t n = element_count(shape);
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::int64_t flat = 0; flat < n; ++flat) {
    fn(static_cast<const std::vector<std::int64_t>&>(index));
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

/// For each element of `view` in C order, its element index in the buffer starting at
/// `base_address` (views with negative strides included).
inline std::vector<std::int64_t> element_offsets(const ArrayRef& view, std::uint64_t base_address) {
  const auto item = static_cast<std::int64_t>(itemsize(view.dtype));
  const auto start = static_cast<std::int64_t>(view.data - base_address);
  REQUIRE(start % item == 0);
  for (auto stride : view.strides) REQUIRE(stride % item == 0);
  std::vector<std::int64_t> offsets;
  offsets.reserve(static_cast<std::size_t>(view.size()));
  for_each_index(view.shape, [&](const std::vector<std::int64_t>& index) {
    std::int64_t offset = start;
    for (std::size_t d = 0; d < index.size(); ++d) offset += index[d] * view.strides[d];
    offsets.push_back(offset / item);
  });
  return offsets;
}

/// What `view` (into the device buffer at `base_address` whose host copy is `base`) shows, in C order.
template <class T>
std::vector<T> host_view(const std::vector<T>& base, std::uint64_t base_address, const ArrayRef& view) {
  std::vector<T> out;
  out.reserve(static_cast<std::size_t>(view.size()));
  for (auto offset : element_offsets(view, base_address)) {
    REQUIRE(offset >= 0);
    REQUIRE(offset < static_cast<std::int64_t>(base.size()));
    out.push_back(base[static_cast<std::size_t>(offset)]);
  }
  return out;
}

/// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kernc-gpu-test.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

// ---- comparisons ---------------------------------------------------------------------------

inline std::string show(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}
template <class T>
std::string show_exact(T v) {
  if constexpr (std::is_integral_v<T>) {
    return std::to_string(static_cast<long long>(v));
  } else {
    return show(static_cast<double>(v));
  }
}

/// Checks |got - want| <= rtol * max(|want|, scale) element by element (NaN never
/// passes). `scale` (optional, per element) is the magnitude of the terms that made
/// `want`, so that cancellation does not demand more than the inputs' precision.
inline void expect_close(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                         const std::string& what, const std::vector<double>& scale = {}) {
  REQUIRE_MESSAGE(got.size() == want.size(), what << ": " << got.size() << " elements, expected " << want.size());
  std::size_t bad = 0;
  std::string first;
  double worst = 0;
  for (std::size_t k = 0; k < got.size(); ++k) {
    double limit = std::fabs(want[k]);
    if (!scale.empty()) limit = std::max(limit, scale[k]);
    limit = std::max(limit, std::numeric_limits<double>::min());
    double error = std::fabs(got[k] - want[k]) / limit;
    if (!(error <= rtol)) {
      if (bad < 5) first += "\n  [" + std::to_string(k) + "] got " + show(got[k]) + ", expected " + show(want[k]);
      ++bad;
    }
    if (error > worst || std::isnan(error)) worst = error;
  }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << got.size() << " elements differ by more than " << rtol
                               << " relative (worst " << worst << ")" << first);
}

/// Checks that `got` equals `want` exactly.
template <class T>
void expect_equal(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  REQUIRE_MESSAGE(got.size() == want.size(), what << ": " << got.size() << " elements, expected " << want.size());
  std::size_t bad = 0;
  std::string first;
  for (std::size_t k = 0; k < got.size(); ++k) {
    bool same;
    if constexpr (std::is_floating_point_v<T>) {
      same = std::memcmp(&got[k], &want[k], sizeof(T)) == 0 || got[k] == want[k];
    } else {
      same = got[k] == want[k];
    }
    if (!same) {
      if (bad < 5) first += "\n  [" + std::to_string(k) + "] got " + show_exact(got[k]) + ", expected " + show_exact(want[k]);
      ++bad;
    }
  }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << got.size() << " elements differ" << first);
}

template <class T>
std::vector<double> as_doubles(const std::vector<T>& values) {
  return std::vector<double>(values.begin(), values.end());
}

inline std::vector<double> halves_as_doubles(const std::vector<std::uint16_t>& bits) {
  std::vector<double> out(bits.size());
  for (std::size_t k = 0; k < bits.size(); ++k) out[k] = half_to_float(bits[k]);
  return out;
}

/// Checks that the buffer elements at `offsets` still hold the 0xFF poison (were not written).
template <class T>
void expect_untouched(const std::vector<T>& buffer, const std::vector<std::int64_t>& offsets, const std::string& what) {
  T poison_value;
  std::memset(&poison_value, 0xFF, sizeof poison_value);
  std::size_t bad = 0;
  std::string first;
  for (auto offset : offsets) {
    if (std::memcmp(&buffer[static_cast<std::size_t>(offset)], &poison_value, sizeof(T)) != 0) {
      if (bad < 5) first += " [" + std::to_string(offset) + "]";
      ++bad;
    }
  }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " element(s) outside the output view were written:" << first);
}

/// The buffer elements (indices into [0, total)) that `view` does not cover.
inline std::vector<std::int64_t> offsets_outside(const ArrayRef& view, std::uint64_t base_address, std::int64_t total) {
  std::vector<bool> covered(static_cast<std::size_t>(total), false);
  for (auto offset : element_offsets(view, base_address)) covered[static_cast<std::size_t>(offset)] = true;
  std::vector<std::int64_t> out;
  for (std::int64_t k = 0; k < total; ++k) {
    if (!covered[static_cast<std::size_t>(k)]) out.push_back(k);
  }
  return out;
}

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace kernc::gpu_test
