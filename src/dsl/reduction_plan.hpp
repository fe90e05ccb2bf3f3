#pragma once
// A ReductionKernel call, planned: the axes, the output shapes, each array seen with the
// kept axes first and the reduced axes last, the layout class, and the strategy and
// geometry of both passes for a GPU of a given number of multiprocessors (NOTE [ reduction
// strategy ]). Pure host code: no memory, no GPU; unit-tested without one.

#include <cstdint>
#include <optional>
#include <vector>

#include "dsl/arg_description.hpp"
#include "dsl/definitions.hpp"
#include "kernc/signature.hpp"
#include "kernc/target.hpp"

namespace kernc::dsl {

struct ReductionPlan {
  std::vector<std::int64_t> in_shape;  ///< the broadcast shape of the non-raw inputs
  std::vector<int> axes;               ///< reduced, normalised and sorted
  bool keepdims = false;
  std::vector<ArrayRef> outputs;       ///< per output: as given, or what the launch allocates
  Layout layout;
  struct View {
    std::vector<std::int64_t> shape, strides;
    std::size_t item = 0;  ///< bytes of an element: the resolved type's, which the kernel reads
  };
  std::vector<View> input_views;   ///< per non-raw input: kept axes first, reduced axes last
  std::vector<View> output_views;  ///< per non-raw output: the kept axes
  std::int64_t extent = 0;         ///< the largest index or byte offset (for the index width)
  std::int64_t out_size = 0, reduce_size = 0;

  // The geometry (plan_reduction_geometry).
  std::int64_t group = 1, splits = 1;
  unsigned block = 256, grid = 1;  ///< the main launch: grid x splits blocks
  /// NOTE [ reduction columns ]: adjacent outputs a thread of the columns kernel takes (1:
  /// no columns kernel), each input's byte alignment it needs, and its grid's width.
  std::int64_t columns = 1;
  unsigned columns_grid = 0;
  std::vector<std::int64_t> column_alignments;
  /// The second pass when splits > 1: threads per output and blocks.
  std::int64_t finish_group = 1;
  unsigned finish_grid = 1;
};

/// The axes, shapes and views of a reduction of `inputs` over `axes` (std::nullopt: all),
/// with `outputs_given` (all or none). Throws kernc::Error(invalid_argument) for axes out
/// of range or repeated, output shapes that differ, an empty reduction without identity.
ReductionPlan plan_reduction_shapes(const detail::ReductionDefinition& def, const ResolvedTypes& resolved,
                                    const std::vector<ArgDescription>& inputs,
                                    const std::vector<ArrayRef>& outputs_given,
                                    const std::optional<std::vector<int>>& axes, bool keepdims);

/// The index width, strategy and geometry of both passes for a GPU of `multiprocessors`.
/// On the host backend (Backend::cpu) `multiprocessors` is its worker count, and the plan
/// is NOTE [ host reduction ]'s: one thread a block, chunks that depend on the shape alone.
void plan_reduction_geometry(const std::string& name, int multiprocessors, ReductionPlan& plan,
                             Backend backend = Backend::cuda);

}  // namespace kernc::dsl
