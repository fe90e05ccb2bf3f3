#pragma once
// An ElementwiseKernel call, planned: CuPy's call semantics on argument descriptions (the
// loop shape, the outputs), then the loop and launch geometry for a GPU of a given number
// of multiprocessors. Pure host code: no memory, no GPU; unit-tested without one.

#include <cstdint>
#include <optional>
#include <vector>

#include "dsl/arg_description.hpp"
#include "dsl/definitions.hpp"
#include "dsl/loop_plan.hpp"
#include "kernc/signature.hpp"
#include "kernc/target.hpp"

namespace kernc::dsl {

struct ElementwisePlan {
  /// The loop's shape: the broadcast of the non-raw arrays passed (outputs included), or (size,).
  std::vector<std::int64_t> shape;
  /// Per output: the description given, or the C-contiguous array the launch allocates.
  std::vector<ArrayRef> outputs;
  LoopPlan loop;
  int rank = 0;  ///< the program's view rank: 0 contiguous, 1..4 strided, -1 generic
  unsigned grid = 1, block = 256;
};

/// The loop shape and outputs of a call with `inputs` and `outputs_given` (all or none),
/// CuPy's way; `resolved` gives the dtypes of outputs to allocate. Throws
/// kernc::Error(invalid_argument) naming the parameter that is wrong.
ElementwisePlan plan_elementwise_shapes(const detail::ElementwiseDefinition& def, const ResolvedTypes& resolved,
                                        const std::vector<ArgDescription>& inputs,
                                        const std::vector<ArrayRef>& outputs_given, std::optional<std::int64_t> size);

/// The loop plan and launch geometry of `plan` for a GPU of `multiprocessors`
/// multiprocessors, with `block_size` threads per block (CuPy's block_size=) or 256.
/// On the host backend (Backend::cpu, `multiprocessors` its workers) a contiguous loop
/// without block_size runs one thread a block (NOTE [ host loops ], templates/prelude.cuh).
void plan_elementwise_geometry(const detail::ElementwiseDefinition& def, const std::vector<ArgDescription>& inputs,
                               int multiprocessors, std::optional<unsigned> block_size, ElementwisePlan& plan,
                               Backend backend = Backend::cuda);

/// KERNC_CONTIGUOUS_SCALE of templates/prelude.cuh on the host: the contiguous kernel's one
/// host thread a block takes this many times the GPU's elements per thread a step.
inline constexpr std::int64_t kHostContiguousScale = 128;

}  // namespace kernc::dsl
