#pragma once
// What a kernel object has resolved and loaded, shared by its copies: the hot path's memo.

#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "kernc/runtime.hpp"
#include "kernc/signature.hpp"

namespace kernc {
class Engine;
}

namespace kernc::detail {

/// (Engine::id(), layout class code, device ordinal): see function_key in src/kernels/call_support.hpp.
using FunctionKey = std::tuple<std::uint64_t, int, int>;

struct ElementwisePlanData;

/// The kernel functions of one program variant on one device. Never changed once in the
/// memo, and never moved (std::map nodes): a plan keeps a pointer to it (PreparedFunctions).
struct LoadedFunctions {
  std::vector<Function> functions;    // elementwise: the kernel; reductions: main, finish[, columns]
  std::size_t reduce_type_size = 0;   // reductions: sizeof(_type_reduce)
  // Whose they are, set by find_or_load: a plan compares these, not a key, per launch.
  std::uint64_t engine = 0;  // Engine::id()
  int device = -1;
};

/// What a call needs once its types are known: the resolution, and per (layout, device)
/// the loaded kernel functions. Filled on first use, read on every later call.
struct TypeEntry {
  ResolvedTypes resolved;
  std::map<FunctionKey, LoadedFunctions> functions;
};

/// The per-kernel memo of TypeEntry by call types; guarded by its mutex.
struct HandleTable {
  std::mutex mutex;
  std::unordered_map<std::string, TypeEntry> entries;
  /// ElementwiseKernel::operator()'s last plans, most recent at `next_plan - 1` (a ring):
  /// a call whose arguments and options match one launches it as launch(plan) would
  /// (NOTE [ call memo ], src/kernels/elementwise_call.cpp).
  static constexpr std::size_t kRecentPlans = 8;
  std::array<std::shared_ptr<const ElementwisePlanData>, kRecentPlans> recent_plans;
  std::size_t next_plan = 0;
};

}  // namespace kernc::detail
