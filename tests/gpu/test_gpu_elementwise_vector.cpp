// The contiguous elementwise kernel's two paths (NOTE [ vectorized contiguous loop ],
// templates/array.cuh) and its outputs in registers (NOTE [ outputs in registers ],
// src/dsl/output_access.hpp), against host references on random data: aligned arrays
// (vectors, with every partial last group), arrays offset by 1..3 elements (element by
// element), 1- to 16-byte items and mixes of them, the flat index i on both paths,
// outputs the operation reads or leaves unassigned, and an operation that keeps its
// outputs in memory.

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {
namespace {

// Sizes around the 4-, 8- and 16-element groups, and one that loops over the grid.
const std::int64_t kGroupSizes[] = {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 1023, 4099, 3'000'017};

// x[offset:offset + n] of a fresh upload of `host` (n + offset elements).
template <class T>
std::pair<DeviceArray, ArrayRef> upload_at(DType dtype, const std::vector<T>& host, std::int64_t offset) {
  const std::int64_t n = static_cast<std::int64_t>(host.size());
  std::vector<T> padded(offset, T{});
  padded.insert(padded.end(), host.begin(), host.end());
  auto array = upload(dtype, {n + offset}, padded);
  ArrayRef view = array.ref().sliced(0, offset, n + offset);
  return {std::move(array), view};
}

}  // namespace

TEST_CASE("contiguous elementwise: aligned and offset operands of 1- to 16-byte items, every partial group") {
  KERNC_GPU_RANDOM(random, "elementwise vector paths");
  const ElementwiseKernel scale_add("T a, T x, T y", "T z", "z = a * x + y", "gpu_vector_axpy");
  for (std::int64_t n : kGroupSizes) {
    for (std::int64_t offset : {0, 1, 3}) {
      CAPTURE(n);
      CAPTURE(offset);
      const std::string where = "n = " + std::to_string(n) + ", offset " + std::to_string(offset);
      {  // int8: 16 elements a thread
        const auto x = random.integers<std::int8_t>(n, -40, 40), y = random.integers<std::int8_t>(n, -40, 40);
        std::vector<std::int8_t> want(x.size());
        for (size_t k = 0; k < x.size(); ++k) want[k] = static_cast<std::int8_t>(2 * x[k] + y[k]);
        auto [bx, vx] = upload_at(DType::int8, x, offset);
        auto [by, vy] = upload_at(DType::int8, y, 0);
        auto [bz, vz] = upload_at(DType::int8, std::vector<std::int8_t>(n, 99), offset == 0 ? 0 : 2);
        scale_add({2, vx, vy}, {vz});
        expect_equal(download<std::int8_t>(vz), want, "int8 " + where);
      }
      {  // float32: 4
        const auto x = random.uniform<float>(n), y = random.uniform<float>(n);
        std::vector<float> want(x.size());
        // NVRTC contracts a * x + y into one fused multiply-add; the host backend rounds
        // the product first (-ffp-contract=off, NOTE [ host compiler ]).
        for (size_t k = 0; k < x.size(); ++k) {
          volatile float product = 1.5f * x[k];  // volatile: this test's compiler must not fuse either
          want[k] = host_mode() ? product + y[k] : std::fma(1.5f, x[k], y[k]);
        }
        auto [bx, vx] = upload_at(DType::float32, x, 0);
        auto [by, vy] = upload_at(DType::float32, y, offset);
        auto [bz, vz] = upload_at(DType::float32, std::vector<float>(n, -7.0f), 0);
        scale_add({1.5f, vx, vy}, {vz});
        expect_equal(download<float>(vz), want, "float32 " + where);
      }
      {  // complex128: 16-byte items, 4 a thread
        std::vector<std::complex<double>> x, y, want;
        const auto re = random.uniform<double>(2 * n), im = random.uniform<double>(2 * n);
        for (std::int64_t k = 0; k < n; ++k) {
          x.emplace_back(re[2 * k], im[2 * k]);
          y.emplace_back(re[2 * k + 1], im[2 * k + 1]);
          want.push_back(std::complex<double>(0.5, -2.0) * x.back() + y.back());
        }
        auto [bx, vx] = upload_at(DType::complex128, x, offset);
        auto [by, vy] = upload_at(DType::complex128, y, offset);
        auto z = scale_add({std::complex<double>(0.5, -2.0), vx, vy});
        const auto got = download<std::complex<double>>(z[0]);
        REQUIRE(got.size() == want.size());
        for (size_t k = 0; k < want.size(); ++k) {
          CHECK_MESSAGE(std::abs(got[k] - want[k]) <= 1e-12 * (1 + std::abs(want[k])), "complex128 " << where << " at " << k);
        }
      }
    }
  }
}

TEST_CASE("contiguous elementwise: mixed item sizes and the flat index i on both paths") {
  KERNC_GPU_RANDOM(random, "elementwise vector mixed");
  // int8 in, int64 out: 16 elements a thread; i must be each element's own flat index.
  const ElementwiseKernel indexed("int8 x", "int64 z", "z = static_cast<long long>(i) * 1000 + x", "gpu_vector_indexed");
  // float16 in, float64 out: 8 a thread (16 bytes of halves, 64 of doubles).
  const ElementwiseKernel widen("float16 h", "float64 d", "d = double(float(h)) * 3", "gpu_vector_widen");
  for (std::int64_t n : kGroupSizes) {
    for (std::int64_t offset : {0, 1}) {
      CAPTURE(n);
      CAPTURE(offset);
      const auto x = random.integers<std::int8_t>(n, -100, 100);
      auto [bx, vx] = upload_at(DType::int8, x, offset);
      std::vector<std::int64_t> want(x.size());
      for (std::int64_t k = 0; k < n; ++k) want[k] = k * 1000 + x[k];
      expect_equal(download<std::int64_t>(indexed({vx})[0]), want, "z = i * 1000 + x, offset " + std::to_string(offset));

      const auto h = random.halves(n);
      auto [bh, vh] = upload_at(DType::float16, h, offset);
      std::vector<double> wide(h.size());
      for (size_t k = 0; k < h.size(); ++k) wide[k] = static_cast<double>(half_to_float(h[k])) * 3;
      expect_equal(download<double>(widen({vh})[0]), wide, "float16 -> float64, offset " + std::to_string(offset));
    }
  }
}

TEST_CASE("contiguous elementwise: outputs the operation reads, assigns conditionally or keeps in memory") {
  KERNC_GPU_RANDOM(random, "elementwise output registers");
  const ElementwiseKernel accumulate("T x", "T z", "z += x", "gpu_vector_accumulate");
  const ElementwiseKernel positive("T x", "T z", "if (x > 0) z = x", "gpu_vector_positive");
  const ElementwiseKernel skip("T x", "T z, T w", "w = x; if (x < 0) continue; z = x * 2", "gpu_vector_skip");
  // `return` keeps the outputs bound to memory (never taken here: x >= 0).
  const ElementwiseKernel early("T x", "T z", "if (x < -2) return; z = x * 4", "gpu_vector_early");
  for (std::int64_t n : kGroupSizes) {
    for (std::int64_t offset : {0, 2}) {
      CAPTURE(n);
      CAPTURE(offset);
      const std::string where = "n = " + std::to_string(n) + ", offset " + std::to_string(offset);
      const auto x = random.uniform<float>(n), before = random.uniform<float>(n);
      auto [bx, vx] = upload_at(DType::float32, x, offset);

      auto [bz, vz] = upload_at(DType::float32, before, offset);
      accumulate({vx}, {vz});
      std::vector<float> want(x.size());
      for (size_t k = 0; k < x.size(); ++k) want[k] = before[k] + x[k];
      expect_equal(download<float>(vz), want, "z += x, " + where);

      auto [bp, vp] = upload_at(DType::float32, before, offset);
      positive({vx}, {vp});
      for (size_t k = 0; k < x.size(); ++k) want[k] = x[k] > 0 ? x[k] : before[k];
      expect_equal(download<float>(vp), want, "if (x > 0) z = x, " + where);

      auto [bs, vs] = upload_at(DType::float32, before, offset);
      auto [bw, vw] = upload_at(DType::float32, std::vector<float>(n, 5.0f), 0);
      skip({vx}, {vs, vw});
      for (size_t k = 0; k < x.size(); ++k) want[k] = x[k] < 0 ? before[k] : x[k] * 2;
      expect_equal(download<float>(vs), want, "continue before z = x * 2, " + where);
      expect_equal(download<float>(vw), x, "w = x before the continue, " + where);

      const auto nonnegative = random.uniform<float>(n, 0.0, 1.0);
      auto [bn, vn] = upload_at(DType::float32, nonnegative, offset);
      for (size_t k = 0; k < x.size(); ++k) want[k] = nonnegative[k] * 4;
      expect_equal(download<float>(early({vn})[0]), want, "outputs in memory, " + where);
    }
  }
}

}  // namespace kernc::gpu_test
