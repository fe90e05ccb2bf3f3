#pragma once
// Host time per call of several call paths, measured in alternation (kernc_bench's per-call
// rows). Each round runs every path once, in an order rotated by one from the round before,
// so drift of the host (frequency, other tenants, the driver's own state) falls on every
// path alike; the thread stays on one CPU for the whole measure.

#include <functional>
#include <vector>

#include "kernc/runtime.hpp"

namespace bench {

struct CallCost {
  double steady_us = 0;  ///< median over rounds of the time per call over `steady_calls` back-to-back calls
  double burst_us = 0;   ///< median over rounds of the time per call over `burst_calls` calls on an idle GPU
};

/// One CallCost per path, in the order given. Every path is called once and synchronized
/// before the rounds start (first-call work out of the measure).
std::vector<CallCost> interleaved_call_costs(const kernc::Device& device,
                                             const std::vector<std::function<void()>>& paths, int steady_calls,
                                             int burst_calls, int rounds);

}  // namespace bench
