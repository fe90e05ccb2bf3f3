// ReductionKernel call planning: axes, keepdims, outputs, the views, the strategy and the
// two-pass split.

#include "dsl/reduction_plan.hpp"

#include <algorithm>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsl/loop_plan.hpp"
#include "kernc/error.hpp"

namespace kernc::dsl {

namespace {

constexpr std::int64_t kReduceBlock = 256;  // templates/reduction.cu.in _kReduceBlock

std::int64_t pow2_at_least(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}



// The axes to reduce, sorted; throws for duplicates and out-of-range axes.
std::vector<int> normalize_axes(const std::optional<std::vector<int>>& axes, const std::vector<std::int64_t>& shape,
                                const std::string& name) {
  const int ndim = static_cast<int>(shape.size());
  std::vector<int> out;
  if (!axes) {
    for (int d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int axis : *axes) {
    int normalized = axis < 0 ? axis + ndim : axis;
    if (normalized < 0 || normalized >= ndim) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: axis {} is out of range for the {} dimension(s) of the inputs {}", name, axis, ndim,
                              shape));
    }
    if (std::find(out.begin(), out.end(), normalized) != out.end()) {
      throw Error(ErrorCode::invalid_argument, fmt::format("{}: axis {} is repeated in {}", name, axis, *axes));
    }
    out.push_back(normalized);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool c_contiguous(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides, std::size_t item) {
  std::int64_t expected = static_cast<std::int64_t>(item);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

}  // namespace

ReductionPlan plan_reduction_shapes(const detail::ReductionDefinition& def, const ResolvedTypes& resolved,
                                    const std::vector<ArgDescription>& inputs,
                                    const std::vector<ArrayRef>& outputs_in,
                                    const std::optional<std::vector<int>>& axes_in, bool keepdims) {
  const auto& sig = def.signature;
  const std::string& name = def.name;
  ReductionPlan plan;
  plan.keepdims = keepdims;

  // The reduced shape: broadcast of the non-raw input arrays.
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::string_view> names;
  for (size_t k = 0; k < sig.in.size(); ++k) {
    if (inputs[k].is_array && !sig.in[k].raw) {
      shapes.push_back(inputs[k].array.shape);
      names.push_back(sig.in[k].name);
    }
  }
  if (shapes.empty()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: there is nothing to reduce: no non-raw input array", name));
  }
  plan.in_shape = broadcast_shape(shapes, names);
  const std::vector<std::int64_t>& in_shape = plan.in_shape;
  const int ndim = static_cast<int>(in_shape.size());
  const std::vector<int> reduced = normalize_axes(axes_in, in_shape, name);
  plan.axes = reduced;
  std::vector<int> kept;
  for (int d = 0; d < ndim; ++d) {
    if (!std::binary_search(reduced.begin(), reduced.end(), d)) kept.push_back(d);
  }
  std::vector<std::int64_t> out_shape;
  std::int64_t out_size = 1, reduce_size = 1;
  for (int d = 0; d < ndim; ++d) {
    if (std::binary_search(reduced.begin(), reduced.end(), d)) {
      reduce_size *= in_shape[d];
      if (keepdims) out_shape.push_back(1);
    } else {
      out_size *= in_shape[d];
      out_shape.push_back(in_shape[d]);
    }
  }
  plan.out_size = out_size;
  plan.reduce_size = reduce_size;
  for (size_t k = 0; k < sig.out.size(); ++k) {
    if (!outputs_in.empty()) {
      if (!sig.out[k].raw && outputs_in[k].shape != out_shape) {
        throw Error(ErrorCode::invalid_argument, fmt::format("{}: output {} has shape {}, the reduction gives {}", name,
                                                             sig.out[k].name, outputs_in[k].shape, out_shape));
      }
      plan.outputs.push_back(outputs_in[k]);
    } else if (sig.out[k].raw) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: raw output {} cannot be allocated by kernc; pass the outputs", name, sig.out[k].name));
    } else {
      plan.outputs.push_back(ArrayRef::contiguous(std::uint64_t{0}, resolved.outputs[k], out_shape));
    }
  }
  if (out_size == 0) return plan;
  if (reduce_size == 0 && def.identity.empty()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: cannot reduce zero elements: the kernel has no identity", name));
  }

  // Each non-raw input, seen with the kept axes first and the reduced axes last: element
  // (_i, _J) is then flat index _i * reduce_size + _J in that order.
  std::vector<int> order = kept;
  order.insert(order.end(), reduced.begin(), reduced.end());
  bool contiguous = true;
  std::int64_t extent = out_size * reduce_size;
  for (size_t k = 0; k < sig.in.size(); ++k) {
    if (!inputs[k].is_array) continue;
    const ArrayRef& array = inputs[k].array;
    if (sig.in[k].raw) {
      extent = std::max(extent, index_extent(array));
      continue;
    }
    auto strides = broadcast_strides(array, in_shape);
    ReductionPlan::View view;
    view.item = itemsize(resolved.inputs[k]);
    for (int d : order) {
      view.shape.push_back(in_shape[d]);
      view.strides.push_back(strides[d]);
    }
    contiguous = contiguous && c_contiguous(view.shape, view.strides, itemsize(array.dtype));
    ArrayRef permuted = array;
    permuted.shape = view.shape;
    permuted.strides = view.strides;
    extent = std::max(extent, index_extent(permuted));
    plan.input_views.push_back(std::move(view));
  }
  for (size_t k = 0; k < sig.out.size(); ++k) {
    const ArrayRef& array = plan.outputs[k];
    extent = std::max(extent, index_extent(array));
    if (sig.out[k].raw) continue;
    ReductionPlan::View view;  // the output over the kept axes only (keepdims' extent-1 axes dropped)
    for (int d = 0, j = 0; d < ndim; ++d) {
      if (std::binary_search(reduced.begin(), reduced.end(), d)) {
        if (keepdims) ++j;
        continue;
      }
      view.shape.push_back(array.shape[j]);
      view.strides.push_back(array.strides[j]);
      ++j;
    }
    contiguous = contiguous && c_contiguous(view.shape, view.strides, itemsize(array.dtype));
    plan.output_views.push_back(std::move(view));
  }
  if (!contiguous && static_cast<int>(order.size()) > Layout::kMaxDims) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: at most {} dimensions", name, Layout::kMaxDims));
  }
  plan.layout.kind = contiguous ? LayoutKind::contiguous : LayoutKind::generic;
  plan.extent = extent;
  return plan;
}

namespace {


// Whether adjacent outputs read adjacent input elements, more closely than one output's own
// elements lie (see NOTE [ reduction strategy ]): true for every non-raw input when its
// innermost kept axis (extent > 1) has a smaller stride than its innermost reduced axis.
// Needs a warp's worth of outputs, and a reduction of more than one element.
bool outputs_adjacent(const ReductionPlan& plan) {
  if (plan.out_size < 32 || plan.reduce_size < 2 || plan.input_views.empty()) return false;
  const std::size_t reduced = plan.axes.size();
  for (const auto& view : plan.input_views) {
    const std::size_t kept = view.shape.size() - reduced;
    auto innermost = [&view](std::size_t begin, std::size_t end) -> std::optional<std::int64_t> {
      for (std::size_t d = end; d-- > begin;) {
        if (view.shape[d] > 1) return view.strides[d] < 0 ? -view.strides[d] : view.strides[d];
      }
      return std::nullopt;
    };
    auto kept_stride = innermost(0, kept);
    auto reduced_stride = innermost(kept, view.shape.size());
    if (!kept_stride || !reduced_stride || *kept_stride >= *reduced_stride) return false;
  }
  return true;
}

// NOTE [ reduction columns ]
// One thread per output (outer and middle axes) reads one element per row and input: a
// warp's load is 128 bytes of float32 and 64 of float16, and float16 outer-axis sums ran at
// 0.61x copy bandwidth (tools/bench/NOTES.md v12). The generic layout's program also has a
// columns kernel (templates/reduction_columns.cu.in) in which a thread takes C adjacent
// outputs (16 bytes of the widest input, reduction_columns) and reads each row of them
// with one vector load per input. It needs, for every non-raw input: the innermost kept axis
// of stride one item, its extent a multiple of C (so C adjacent outputs are one vector and
// never cross a row), every other stride a multiple of C items, and (checked per launch)
// the data address aligned to C items. Otherwise the call runs the one-output kernel.
// Both kernels take the reduced axis in tiles of 8 rows with the same splits, so each
// output folds the same elements in the same order: the results are bit for bit the same.
// Returns C, or 1 when the columns kernel does not apply; fills plan.column_alignments.
std::int64_t column_count(ReductionPlan& plan) {
  if (plan.layout.kind != LayoutKind::generic || plan.input_views.empty()) return 1;
  std::vector<std::size_t> sizes;
  for (const auto& view : plan.input_views) sizes.push_back(view.item);
  const std::int64_t columns = reduction_columns(sizes);
  if (columns < 2) return 1;
  const std::size_t reduced = plan.axes.size();
  std::vector<std::int64_t> alignments;
  for (std::size_t k = 0; k < plan.input_views.size(); ++k) {
    const auto& view = plan.input_views[k];
    const auto item = static_cast<std::int64_t>(view.item);
    const std::size_t kept = view.shape.size() - reduced;
    std::optional<std::size_t> innermost;
    for (std::size_t d = kept; d-- > 0;) {
      if (view.shape[d] > 1) {
        innermost = d;
        break;
      }
    }
    if (!innermost || view.strides[*innermost] != item || view.shape[*innermost] % columns != 0) return 1;
    for (std::size_t d = 0; d < view.shape.size(); ++d) {
      if (d != *innermost && view.shape[d] > 1 && view.strides[d] % (columns * item) != 0) return 1;
    }
    alignments.push_back(columns * item);
  }
  plan.column_alignments = std::move(alignments);
  return columns;
}

// NOTE [ host reduction ]
// On the host backend a block is one thread that g++ vectorizes (NOTE [ host loops ],
// templates/prelude.cuh), so the host bodies of templates/reduction.cu.in and
// reduction_columns.cu.in fold each output's elements in independent lanes (an element's
// lane is its place in a step of the reduced axis: 8 slots of 16 bytes in the contiguous
// layout, 8 elements otherwise), which a float sum needs to vectorize without -ffast-math,
// and combine the lanes in lane order. The loops read rows through pointers, in order, and
// fold every lane of a whole step without a test: the columns kernel streams a band's row
// as NumPy adds a row into its output. Measured against NumPy on one core in
// tools/bench/NOTES.md (host-v4): the lanes and the band width come from there. The reduced
// axis is cut into chunks (splits, a second pass folding them in chunk order) when there
// are few outputs, and for the columns kernel when the columns are long (host-v5: many
// workers then take wide strips of a chunk of rows, not narrow strips of every row); the
// cut depends on the shape alone: which lane and chunk fold an element never depend on the
// worker count, so the bits are the same run to run and whatever KERNC_CPU_THREADS is (and
// the columns kernel gives the one-output kernel's bits). Only the grid, how many outputs a
// block takes, depends on the workers. Blocks aim at kHostBlockElements elements, enough to
// hide the driver's cost per block (a fiber switch when the program has barriers).
constexpr std::int64_t kHostBlockElements = std::int64_t{1} << 16;
// Fewer outputs than this are split (a row each would leave cores idle).
constexpr std::int64_t kHostSplitBelow = 256;
constexpr std::int64_t kHostMaxGrid = (std::int64_t{1} << 31) - 1;
// Steps (8 rows each) in a chunk of the columns kernel's rows: 1024 rows.
constexpr std::int64_t kHostColumnChunkSteps = 128;

void plan_host_reduction(int workers, ReductionPlan& plan) {
  plan.layout.index64 = !fits_index32(plan.extent, std::int64_t{1} << 20);
  const std::int64_t reduce_size = plan.reduce_size, out_size = plan.out_size;
  std::int64_t slot = 1;
  if (plan.layout.kind == LayoutKind::contiguous) {
    std::vector<std::size_t> sizes;
    for (const auto& view : plan.input_views) sizes.push_back(view.item);
    slot = reduction_columns(sizes);
  }
  const std::int64_t step = 8 * slot;  // the host body's _kUnroll * _kSlot (templates/reduction.cu.in)
  const std::int64_t steps = (reduce_size + step - 1) / step;
  plan.columns = plan.layout.kind == LayoutKind::generic && outputs_adjacent(plan) ? column_count(plan) : 1;
  plan.splits = 1;
  if (out_size < kHostSplitBelow && reduce_size > kHostBlockElements) {
    const std::int64_t want = std::min<std::int64_t>((reduce_size + kHostBlockElements - 1) / kHostBlockElements, 65535);
    const std::int64_t chunk = (steps + want - 1) / want;
    plan.splits = (steps + chunk - 1) / chunk;  // no empty chunk
  } else if (plan.columns > 1 && steps > kHostColumnChunkSteps) {
    // The columns kernel cuts long columns into chunks of rows, so that many workers share
    // the outputs in wide strips (a row of each band a whole page) rather than narrow ones
    // (16 workers on 8192 columns took 1 KiB of each row and scaled 11x; NOTES host-v5).
    plan.splits = (steps + kHostColumnChunkSteps - 1) / kHostColumnChunkSteps;
  }
  const std::int64_t per_split = (reduce_size + plan.splits - 1) / plan.splits;
  // Outputs a block: about kHostBlockElements elements, but at least 8 blocks a worker when
  // there are that many outputs.
  std::int64_t group = std::max<std::int64_t>(1, kHostBlockElements / std::max<std::int64_t>(per_split, 1));
  group = std::min(group, std::max<std::int64_t>(1, out_size / (static_cast<std::int64_t>(workers) * 8)));
  group = std::max(group, (out_size + kHostMaxGrid - 1) / kHostMaxGrid);
  plan.group = group;
  plan.block = 1;
  plan.grid = static_cast<unsigned>(std::max<std::int64_t>(1, (out_size + group - 1) / group));
  if (plan.columns > 1) {
    const std::int64_t groups = out_size / plan.columns;
    const std::int64_t blocks = static_cast<std::int64_t>(workers) * kHostColumnBlocksPerWorker;
    plan.columns_grid = static_cast<unsigned>(
        std::clamp<std::int64_t>((blocks + plan.splits - 1) / plan.splits, 1, std::max<std::int64_t>(1, groups)));
  }
  if (plan.splits > 1) {
    // Like the main pass: about kHostBlockElements partials a block, at least 8 blocks a
    // worker when there are that many outputs (which block folds an output changes no bits).
    plan.finish_group = std::max<std::int64_t>(
        1, std::min({kHostBlockElements / plan.splits, out_size, out_size / (static_cast<std::int64_t>(workers) * 8)}));
    plan.finish_grid = static_cast<unsigned>((out_size + plan.finish_group - 1) / plan.finish_group);
  }
}

}  // namespace

// The index width and the launch plan for a GPU of `multiprocessors` multiprocessors: a
// group of threads per output; long reductions of few outputs split across blocks (second
// pass: name_finish) so that every multiprocessor has work.
void plan_reduction_geometry(const std::string& name, int multiprocessors, ReductionPlan& plan, Backend backend) {
  if (multiprocessors <= 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: a plan needs the GPU's multiprocessor count (CallOptions::multiprocessors), got {}",
                            name, multiprocessors));
  }
  if (backend == Backend::cpu) {
    plan_host_reduction(multiprocessors, plan);
    return;
  }
  const std::int64_t max_blocks = static_cast<std::int64_t>(multiprocessors) * 32;
  // NOTE [ reduction waves ]
  // Splits aim at 24 blocks a multiprocessor: a whole number of waves whether the kernel
  // fits 8, 6, 4, 3, 2 or 1 blocks of 256 threads at once. Aiming at 8 (one wave at full
  // occupancy) left a float16 sum, whose 37 registers fit 6 blocks, with a second wave of 2
  // blocks a multiprocessor: 80.7% of DRAM peak against float32's 91.2% (ncu, H100;
  // tools/bench/NOTES.md v21).
  const std::int64_t target_blocks = static_cast<std::int64_t>(multiprocessors) * 24;
  // The margin covers the last step past the end: a thread's reduced index advances by
  // group * (_kUnroll slots of _kSlot elements: at most 2 of 16) * splits, at most
  // kReduceBlock * 32 * target_blocks, and the columns kernel's first output by kReduceBlock * 16
  // (columns) * blocks.
  plan.layout.index64 = !fits_index32(plan.extent, std::max(kReduceBlock * 32 * target_blocks, max_blocks * kReduceBlock * 16));
  const std::int64_t reduce_size = plan.reduce_size, out_size = plan.out_size;
  // NOTE [ reduction strategy ]
  // A group of threads per output reads that output's elements side by side: coalesced
  // when the reduced axes are the input's innermost (a row sum). When instead the kept
  // axes are innermost (a column sum, axis=0 of a matrix), those reads are a stride apart
  // and each load fetches a cache line for one element (0.41 TB/s on an H100, 5x below
  // CuPy). Then one thread per output (group 1) makes a warp read 32 adjacent outputs'
  // elements at once, and the reduced axis is split across blocks (the deterministic
  // second pass) so that every multiprocessor has work.
  // Otherwise a group per output, sized so that each thread has about 4 elements (rows of
  // 32: groups of 8, 4 rows a warp; long rows: 256 threads a row).
  plan.group = outputs_adjacent(plan) ? 1 : pow2_at_least(std::clamp<std::int64_t>((reduce_size + 3) / 4, 1, kReduceBlock));
  // NOTE [ reduction slots ]
  // In the contiguous layout (full and inner-axis reductions) a lane takes slots of 16
  // bytes of the widest input, two a step (templates/reduction.cu.in), loaded as vectors
  // when every row is aligned: a float16 lane loaded 2 bytes at a time and kept half of
  // float32's bytes in flight (78-81% of DRAM peak against 88%; tools/bench/NOTES.md v19).
  // The element-to-lane assignment depends on the slot size alone, never on alignment, so a
  // result does not change with where the input lies. Splits divide slots.
  std::int64_t slot = 1;
  if (plan.layout.kind == LayoutKind::contiguous) {
    std::vector<std::size_t> sizes;
    for (const auto& view : plan.input_views) sizes.push_back(view.item);
    slot = reduction_columns(sizes);
  }
  const std::int64_t slots = (reduce_size + slot - 1) / slot;
  // Splits of the reduced axis for `out_blocks` blocks of outputs, so that about `target`
  // blocks run.
  auto splits_for = [&](std::int64_t out_blocks, std::int64_t target) -> std::int64_t {
    if (out_blocks >= target || slots <= plan.group * 32) return 1;
    std::int64_t splits = std::min<std::int64_t>((target + out_blocks - 1) / out_blocks, slots / (plan.group * 16));
    splits = std::clamp<std::int64_t>(splits, 1, 65535);
    const std::int64_t chunk = (slots + splits - 1) / splits;
    return (slots + chunk - 1) / chunk;  // no empty split
  };
  const std::int64_t per_block = kReduceBlock / plan.group;
  const std::int64_t out_blocks = (out_size + per_block - 1) / per_block;
  plan.columns = plan.group == 1 ? column_count(plan) : 1;
  const std::int64_t column_blocks = (out_size + kReduceBlock * plan.columns - 1) / (kReduceBlock * plan.columns);
  // Both kernels take the same splits (each output folds the same elements in the same
  // order either way, so results do not depend on which kernel ran). With a columns kernel,
  // the one that runs whenever the inputs are aligned, they are sized for about 2 of its
  // blocks a multiprocessor: a thread keeps 8 rows of 16 bytes in flight whatever the type,
  // so a block count is a byte count in flight. More blocks made it slower, not faster: the
  // outer-axis sum over 16384^2 float32 ran at 0.91-0.96x copy with 272 blocks (132 SMs),
  // 0.88x with 800 and 0.73x with 3168 (whole waves; ncu: 74% of DRAM peak), float16 0.93x,
  // 0.88x and 0.53x (tools/bench/NOTES.md v21). Sized in blocks of the one-output kernel
  // instead (v21), a float16 sum, with twice float32's outputs per byte, ran 144 blocks,
  // too few bytes in flight for an H200: 0.83x against float32's 0.96x (NOTES v22).
  plan.splits = plan.columns > 1 ? splits_for(column_blocks, static_cast<std::int64_t>(multiprocessors) * 2)
                                 : splits_for(out_blocks, target_blocks);
  plan.block = static_cast<unsigned>(kReduceBlock);
  plan.grid = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(out_blocks, max_blocks)));
  if (plan.columns > 1) plan.columns_grid = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(column_blocks, max_blocks)));
  // The second pass folds each output's splits with a group of threads per output.
  if (plan.splits > 1) {
    plan.finish_group = pow2_at_least(std::min<std::int64_t>(plan.splits, kReduceBlock));
    const std::int64_t finish_blocks = (out_size + (kReduceBlock / plan.finish_group) - 1) / (kReduceBlock / plan.finish_group);
    plan.finish_grid = static_cast<unsigned>(std::min(finish_blocks, max_blocks));
  }
}

}  // namespace kernc::dsl
