#pragma once
// The checked contents of kernel definitions, shared by the type resolver and codegen.

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>

#include "dsl/params.hpp"
#include "kernc/kernels.hpp"

namespace kernc::detail {

/// (engine, layout class code, device ordinal): see function_key in src/kernels/call_support.hpp.
using FunctionKey = std::tuple<const Engine*, int, int>;

/// What a call needs once its types are known: the resolution, and per (layout, device)
/// the loaded kernel functions. Filled on first use, read on every later call.
struct TypeEntry {
  ResolvedTypes resolved;
  std::map<FunctionKey, std::vector<Function>> functions;
  std::map<FunctionKey, std::size_t> reduce_type_sizes;  // reductions: sizeof(_type_reduce)
};

/// The per-kernel memo of TypeEntry by call types; guarded by its mutex.
struct HandleTable {
  std::mutex mutex;
  std::unordered_map<std::string, TypeEntry> entries;
};

struct ElementwiseDefinition {
  std::string name;
  dsl::Signature signature;
  std::string operation;
  ElementwiseOptions options;
  mutable HandleTable handles;
};

struct ReductionDefinition {
  std::string name;
  dsl::Signature signature;
  std::string map_expr;
  std::string reduce_expr;
  std::string post_map_expr;
  std::string identity;
  ReductionOptions options;
  mutable HandleTable handles;
};

}  // namespace kernc::detail
