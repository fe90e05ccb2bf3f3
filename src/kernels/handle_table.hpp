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

#include "kernc/call.hpp"
#include "kernc/runtime.hpp"
#include "kernc/signature.hpp"

namespace kernc {
class Engine;
}

namespace kernc::detail {

/// (Engine::id(), layout class code, device ordinal and backend): see function_key in src/kernels/call_support.hpp.
using FunctionKey = std::tuple<std::uint64_t, int, int>;

class CallPlan;

/// NOTE [ call memo ]: a kernel's last plans made by its operator(), most recent last.
class RecentCalls {
 public:
  /// A plan made for the same options whose descriptions the arguments match, or null.
  /// `launch` and `function`, when given, stand for the options' (a raw call's own
  /// arguments, so that a call need not copy its options to look).
  std::shared_ptr<const CallPlan> find(ListView<Arg> inputs, ListView<ArrayRef> outputs, const CallOptions& options,
                                       const LaunchConfig* launch = nullptr, const std::string* function = nullptr);
  void remember(std::shared_ptr<const CallPlan> plan);

 private:
  static constexpr std::size_t kSize = 8;
  std::mutex mutex_;
  std::array<std::shared_ptr<const CallPlan>, kSize> ring_;
  std::size_t next_ = 0;
};

/// The kernel functions of one program variant on one device. Never changed once in the
/// memo, and never moved (std::map nodes): a plan keeps a pointer to it (detail::Prepared, call_plan.hpp).
struct LoadedFunctions {
  std::vector<Function> functions;    // elementwise: the kernel; reductions: main, finish[, columns]
  std::size_t reduce_type_size = 0;   // reductions: sizeof(_type_reduce)
  /// The Engine::id() they were loaded through (find_or_load): a plan compares it per
  /// launch, so that a new engine at a dead engine's address is never handed its functions.
  std::uint64_t engine = 0;
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
  /// operator()'s last plans (NOTE [ call memo ], src/kernels/call.cpp).
  RecentCalls recent;
};

}  // namespace kernc::detail
