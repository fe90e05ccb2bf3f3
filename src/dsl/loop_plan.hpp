#pragma once
// How an elementwise call iterates: NumPy broadcasting, dimension collapsing, and the
// layout class that picks the generated program (see docs/spec-format.md, "Variants").
// Pure host code: unit-tested without a GPU.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernc/array_ref.hpp"
#include "kernc/signature.hpp"

namespace kernc::dsl {

/// The broadcast shape of `shapes` (NumPy rules); throws kernc::Error(invalid_argument)
/// naming the two operands that disagree (`names` parallel to `shapes`).
std::vector<std::int64_t> broadcast_shape(const std::vector<std::vector<std::int64_t>>& shapes,
                                          const std::vector<std::string_view>& names);

/// `array`'s strides over `shape` (which it must broadcast to): missing leading axes and
/// broadcast axes get stride 0.
std::vector<std::int64_t> broadcast_strides(const ArrayRef& array, const std::vector<std::int64_t>& shape);

/// The loop of one elementwise call over its non-raw arrays.
struct LoopPlan {
  std::vector<std::int64_t> shape;                 ///< after dropping extent-1 axes and merging
  std::vector<std::vector<std::int64_t>> strides;  ///< per array, over `shape`, in bytes
  std::int64_t size = 0;
  Layout layout;
  std::uint32_t staged = 0;  ///< tiled layout: bit a is set when array a is read through tiles
};

/// Plans the loop over `shape` for arrays whose strides over it are `strides` (item sizes
/// in `item_sizes`). `collapse` drops extent-1 axes and merges adjacent axes that are
/// contiguous in every array (CuPy's reduce_dims); without it the loop's shape is `shape`. `threads` is the most threads a launch may start (for the
/// 32-bit index check); `extra_extent` any other byte span or size the kernel indexes
/// (raw arrays), which must also fit for 32-bit indexing.
/// With `reorder` (the kernel never names its loop index), axes are first put in the
/// arrays' common stride order, largest first, when they all agree on one: arrays that are
/// all Fortran-ordered, or all permuted alike, then collapse to a contiguous loop. When
/// they disagree, the arrays from `outputs_from` on (the outputs) choose the order, so that
/// writes are coalesced and only reads are not (tile_transposed_inputs() then fixes those).
LoopPlan plan_loop(const std::vector<std::int64_t>& shape, std::vector<std::vector<std::int64_t>> strides,
                   const std::vector<std::size_t>& item_sizes, bool collapse, std::int64_t threads,
                   std::int64_t extra_extent, bool reorder = false, std::size_t outputs_from = SIZE_MAX);

/// NOTE [ tiled elementwise ]
/// An input transposed against the outputs (b in `a + b.T`) is read, through a multi-index,
/// one element per 32-byte sector: a warp's 32 threads step along the outputs' contiguous
/// (last) axis, which is that input's slowest. The tiled layout reads it a 32 x 32 tile at
/// a time with the threads laid along ITS contiguous axis, the one before the last, through
/// shared memory (templates/elementwise_tiled.cu.in); its reads and the outputs' writes are
/// then both coalesced. Which inputs go through tiles is a kernel argument (`staged`), not
/// part of the program, so that one program per rank serves every mix of operands.
///
/// Makes `plan` (a strided plan) tiled when its rank is 2..Layout::kMaxTiledRank, its last
/// two extents are at least 16, every output (arrays from `outputs_from` on) is contiguous
/// along the last axis and at least one input is contiguous along the one before it.
/// Returns whether it did.
bool tile_transposed_inputs(LoopPlan& plan, std::size_t outputs_from);

/// Elements a thread of the contiguous elementwise kernel takes per step (its _kN): 16 bytes
/// of the smallest of `item_sizes` (the non-raw arrays'), at least 4 and at most 16
/// (NOTE [ vectorized contiguous loop ], templates/array.cuh).
int contiguous_elements_per_thread(const std::vector<std::size_t>& item_sizes);

/// Adjacent outputs a thread of a reduction's columns kernel takes (NOTE [ reduction
/// columns ], src/dsl/reduction_plan.cpp): 16 bytes of the widest of `item_sizes` (the
/// non-raw array inputs'), so that each input's row is one vector load; 1 (no columns
/// kernel) when there is no such input or an item is 16 bytes or more.
int reduction_columns(const std::vector<std::size_t>& item_sizes);

/// Blocks a host worker gets of a reduction's columns kernel (templates/reduction_columns.cu.in
/// walks each block's outputs in bands whose lanes fit L1): two, so that a worker done early
/// can take another's; more cut the bands short (tools/bench/NOTES.md host-v4).
inline constexpr std::int64_t kHostColumnBlocksPerWorker = 2;

/// Whether indices up to `extent` (plus a grid stride of `threads`) fit in a signed 32-bit int.
bool fits_index32(std::int64_t extent, std::int64_t threads = 0);

}  // namespace kernc::dsl
