// Built with -O3 -march=native (tools/bench/CMakeLists.txt): the loops must run at the
// vector width the host backend's programs use (they are compiled for this CPU), or the
// bound would be the core's and not the memory's.

#include "host_stream.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "median.hpp"

namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

// One timed run: the threads start together on a flag (their creation is not timed) and
// take 2 MiB pieces in order from a shared counter, as the host driver hands out blocks, so
// that one slow thread does not hold the run; it lasts until the last piece is done.
double split_run_ms(std::int64_t n, int threads, const std::function<void(std::int64_t, std::int64_t)>& share) {
  constexpr std::int64_t kPiece = (std::int64_t{2} << 20) / sizeof(float);
  std::atomic<bool> go{false};
  std::atomic<std::int64_t> next{0};
  std::vector<Clock::time_point> ends(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (std::int64_t begin; (begin = next.fetch_add(kPiece, std::memory_order_relaxed)) < n;) {
        share(begin, std::min(n, begin + kPiece));
      }
      ends[static_cast<std::size_t>(t)] = Clock::now();
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // every thread is waiting
  const auto start = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& thread : pool) thread.join();
  return std::chrono::duration<double, std::milli>(*std::max_element(ends.begin(), ends.end()) - start).count();
}

double median_of(int repeat, std::int64_t n, int threads, const std::function<void(std::int64_t, std::int64_t)>& share) {
  split_run_ms(n, threads, share);
  std::vector<double> samples;
  for (int r = 0; r < repeat; ++r) samples.push_back(split_run_ms(n, threads, share));
  return median(samples);
}

std::atomic<float> g_sink{0};  // keeps the read loop's sums alive

}  // namespace

double stream_read_ms(const float* x, std::int64_t n, int threads, int repeat) {
  return median_of(repeat, n, threads, [x](std::int64_t begin, std::int64_t end) {
    // 32 independent lanes: g++ vectorizes them without -ffast-math, as kernc's sums do.
    float lanes[32] = {};
    std::int64_t i = begin;
    for (; i + 32 <= end; i += 32) {
      for (int j = 0; j < 32; ++j) lanes[j] += x[i + j];
    }
    float total = 0;
    for (; i < end; ++i) total += x[i];
    for (float lane : lanes) total += lane;
    g_sink.store(total, std::memory_order_relaxed);
  });
}

double stream_triad_ms(float* z, const float* x, const float* y, std::int64_t n, int threads, int repeat) {
  return median_of(repeat, n, threads, [z, x, y](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) z[i] = 2.0f * x[i] + y[i];
  });
}

}  // namespace bench
