#pragma once
// What a plan keeps beyond its public accessors (include/kernc/plan.hpp): the argument
// descriptions it was made for, the strides the launch packs, and the prepared function.

#include <mutex>
#include <string>
#include <vector>

#include "dsl/loop_plan.hpp"
#include "kernc/call.hpp"
#include "kernc/plan.hpp"
#include "kernels/handle_table.hpp"

namespace kernc::detail {

/// The kernel functions a plan launched last, for one (engine, device): a repeated launch
/// on the same device takes them from here, under the plan's own (uncontended) mutex,
/// without the kernel's memo tables.
struct PreparedFunctions {
  std::mutex mutex;
  const Engine* engine = nullptr;
  int device = -1;
  std::vector<Function> functions;
  std::size_t reduce_type_size = 0;
};

/// What planning knows of each argument: a description, or a scalar's dtype.
struct ArgDescription {
  bool is_array = false;
  ArrayRef array;  // data ignored
  DType scalar_dtype = DType::float32;
};

std::vector<ArgDescription> describe(const std::vector<Arg>& args);
/// Throws kernc::Error(invalid_argument) naming the first argument that differs from its
/// description in kind, dtype, shape or strides.
void check_matches(const std::string& kernel, const char* role, const std::vector<std::string>& names,
                   const std::vector<ArgDescription>& planned, const std::vector<Arg>& given);

struct ElementwisePlanData {
  CallTypes types;
  ResolvedTypes resolved;
  const HandleTable* table = nullptr;  // of the kernel that made the plan
  TypeEntry* entry = nullptr;  // in that table (unordered_map nodes do not move)
  std::vector<ArgDescription> inputs;
  std::vector<ArgDescription> outputs_given;  // empty when the launch allocates
  std::vector<ArrayRef> outputs;
  std::vector<std::int64_t> shape;
  dsl::LoopPlan loop;
  int rank = 0;  // 0 contiguous, 1..4 strided, -1 generic
  LaunchConfig launch;
  int multiprocessors = 0;
  mutable PreparedFunctions prepared;
};

struct ReductionPlanData {
  CallTypes types;
  ResolvedTypes resolved;
  const HandleTable* table = nullptr;
  TypeEntry* entry = nullptr;
  std::vector<ArgDescription> inputs;
  std::vector<ArgDescription> outputs_given;
  std::vector<ArrayRef> outputs;
  std::vector<std::int64_t> in_shape;
  std::vector<int> axes;
  bool keepdims = false;
  Layout layout;
  struct View {
    std::vector<std::int64_t> shape, strides;
  };
  std::vector<View> input_views;   // per non-raw input: kept axes first, reduced axes last
  std::vector<View> output_views;  // per non-raw output: the kept axes
  std::int64_t extent = 0;         // the largest index or byte offset (for the index width)
  std::int64_t out_size = 0, reduce_size = 0;
  std::int64_t group = 1, splits = 1;
  LaunchConfig launch;
  int multiprocessors = 0;
  mutable PreparedFunctions prepared;
};

}  // namespace kernc::detail
