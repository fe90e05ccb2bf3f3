#pragma once
// What a plan keeps beyond its public accessors (include/kernc/plan.hpp): the argument
// descriptions it was made for, the strides the launch packs, and the prepared function.

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "dsl/loop_plan.hpp"
#include "kernc/call.hpp"
#include "kernc/kernel_options.hpp"
#include "kernc/plan.hpp"
#include "kernels/handle_table.hpp"
#include "runtime/param_pack.hpp"

namespace kernc::detail {

/// The kernel functions a plan launched last, for one (engine, device): a repeated launch
/// on the same device takes them from here with one atomic load, without the kernel's memo
/// tables, a lock or a copy (they stay in the kernel's memo, whose std::map nodes never
/// move or go while the kernel lives, and they name their own engine and device).
class PreparedFunctions {
 public:
  /// The functions remembered for (engine, device), or nullptr when they are not these.
  const LoadedFunctions* find(std::uint64_t engine, int device) const noexcept {
    const LoadedFunctions* functions = functions_.load(std::memory_order_acquire);
    return functions && functions->engine == engine && functions->device == device ? functions : nullptr;
  }
  /// Remembers `functions`, which find_or_load made for (engine, device).
  void remember(std::uint64_t engine, int device, const LoadedFunctions* functions) noexcept {
    if (functions->engine == engine && functions->device == device) functions_.store(functions, std::memory_order_release);
  }

 private:
  std::atomic<const LoadedFunctions*> functions_{nullptr};
};

/// What planning knows of each argument: a description, or a scalar's dtype.
struct ArgDescription {
  bool is_array = false;
  ArrayRef array;  // data ignored
  DType scalar_dtype = DType::float32;
};

std::vector<ArgDescription> describe(ListView<Arg> args);

/// What every plan holds, whatever its kernel kind.
struct PlanData {
  const HandleTable* table = nullptr;  // of the kernel that made the plan
  TypeEntry* entry = nullptr;          // in that table (unordered_map nodes do not move)
  CallTypes types;
  ResolvedTypes resolved;
  std::vector<ArgDescription> inputs;
  std::vector<ArgDescription> outputs_given;  // empty when the launch allocates
  std::vector<ArrayRef> outputs;              // as given, or what the launch allocates
  LaunchConfig launch;
  int multiprocessors = 0;
  mutable PreparedFunctions prepared;
};

/// The checks launch(plan, ...) makes before the GPU: the plan is this kernel's (`own`),
/// the arguments match its descriptions, and outputs are passed exactly when it describes
/// them. Throws kernc::Error(invalid_argument) naming the first argument that differs.
void check_launch_arguments(const std::string& kernel, const HandleTable& own, const std::vector<Parameter>& in_params,
                            const std::vector<Parameter>& out_params, const PlanData& plan,
                            ListView<Arg> inputs, ListView<ArrayRef> outputs);

/// The call's device, which must have the multiprocessor count the plan was made for.
Device device_for(const std::string& kernel, Engine& engine, int ordinal, const PlanData& plan);

/// The outputs passed, wrapped; or, when the plan allocates, new arrays as it describes.
std::vector<DeviceArray> outputs_for(const Device& device, const PlanData& plan, ListView<ArrayRef> outputs);

/// Whether `inputs` and `outputs` are exactly what `plan` describes (dtypes, shapes,
/// strides; scalars' dtypes; outputs passed exactly when described) and every non-empty
/// array has an address: then check_launch_arguments and ArrayRef::validate would pass.
/// No allocation, no formatting; a caller that gets false runs those checks for the error.
bool matches(const PlanData& plan, ListView<Arg> inputs, ListView<ArrayRef> outputs) noexcept;

struct ElementwisePlanData : PlanData {
  std::vector<std::int64_t> shape;
  dsl::LoopPlan loop;
  int rank = 0;  // 0 contiguous, 1..4 strided, -1 generic

  // What a launch needs beyond the loop, made once (NOTE [ kept plan ], elementwise_call.cpp).
  std::optional<std::int64_t> size_option;  // the options planned with (compared by the call memo)
  std::optional<unsigned> block_option;
  /// Bytes a view touches, relative to its address: ArrayRef::byte_range() less `data`.
  struct Span {
    std::int64_t low = 0, high = 0;
  };
  std::vector<Span> input_spans, output_spans;  // per parameter (unused for scalars)
  std::vector<char> same_description;          // [input * outputs + output]: same dtype, shape and strides
  PackedParams packed;                         // every parameter, addresses and scalars zero
};

struct ReductionPlanData : PlanData {
  std::vector<std::int64_t> in_shape;
  std::vector<int> axes;
  bool keepdims = false;
  Layout layout;
  struct View {
    std::vector<std::int64_t> shape, strides;
    std::size_t item = 0;  ///< bytes of an element: the resolved type's, which the kernel reads
  };
  std::vector<View> input_views;   // per non-raw input: kept axes first, reduced axes last
  std::vector<View> output_views;  // per non-raw output: the kept axes
  std::int64_t extent = 0;         // the largest index or byte offset (for the index width)
  std::int64_t out_size = 0, reduce_size = 0;
  std::int64_t group = 1, splits = 1;
  /// NOTE [ reduction columns ]: adjacent outputs a thread of the columns kernel takes (1:
  /// no columns kernel), each input's byte alignment it needs, and its grid's width.
  std::int64_t columns = 1, columns_grid = 0;
  std::vector<std::int64_t> column_alignments;
};

}  // namespace kernc::detail
