#include "call_costs.hpp"

#include "median.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>

namespace bench {

namespace {

// Keeps the calling thread on the CPU it runs on now (best effort: a host that refuses
// leaves the scheduler free to move it, which only adds noise).
void stay_on_this_cpu() {
  const int cpu = ::sched_getcpu();
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::sched_setaffinity(0, sizeof set, &set);
}

}  // namespace

std::vector<CallCost> interleaved_call_costs(const kernc::Device& device,
                                             const std::vector<std::function<void()>>& paths, int steady_calls,
                                             int burst_calls, int rounds) {
  stay_on_this_cpu();
  for (const auto& path : paths) path();
  device.synchronize();
  const std::size_t count = paths.size();
  std::vector<std::vector<double>> steady(count), burst(count);
  auto per_call_us = [](std::chrono::steady_clock::time_point start, int calls) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / calls;
  };
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t turn = 0; turn < count; ++turn) {
      const std::size_t p = (turn + static_cast<std::size_t>(round)) % count;
      auto start = std::chrono::steady_clock::now();
      for (int k = 0; k < steady_calls; ++k) paths[p]();
      device.synchronize();
      steady[p].push_back(per_call_us(start, steady_calls));
      start = std::chrono::steady_clock::now();
      for (int k = 0; k < burst_calls; ++k) paths[p]();
      burst[p].push_back(per_call_us(start, burst_calls));
      device.synchronize();
    }
  }
  std::vector<CallCost> costs(count);
  for (std::size_t p = 0; p < count; ++p) costs[p] = {median(steady[p]), median(burst[p])};
  return costs;
}

}  // namespace bench
