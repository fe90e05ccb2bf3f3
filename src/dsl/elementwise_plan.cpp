// ElementwiseKernel call planning: CuPy's call semantics, then the loop and the geometry.

#include "dsl/elementwise_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernc/error.hpp"

namespace kernc::dsl {

namespace {

constexpr unsigned kBlock = 256;
// Each thread of the multi-index and tiled kernels takes kUnroll (4) elements per step
// (templates/elementwise*.cu.in); the contiguous kernel's count is
// contiguous_elements_per_thread().
constexpr std::int64_t kUnroll = 4;
// The most blocks a launch asks for (NOTE [ one pass ]): far under CUDA's 2^31 - 1, and
// with at most kMaxThreadsX threads along x, HIP's limit (so fewer blocks of more than
// 256 threads).
constexpr std::int64_t kMaxGrid = (std::int64_t{1} << 24) - 1;
constexpr std::int64_t kMaxThreadsX = (std::int64_t{1} << 32) - 1;

}  // namespace

std::int64_t index_extent(const ArrayRef& array) {
  std::int64_t span = 0;
  for (size_t d = 0; d < array.shape.size(); ++d) span += std::max<std::int64_t>(array.shape[d] - 1, 0) * std::llabs(array.strides[d]);
  return std::max(array.size(), span + 16);
}

ElementwisePlan plan_elementwise_shapes(const detail::ElementwiseDefinition& def, const ResolvedTypes& resolved,
                                        const std::vector<ArgDescription>& inputs,
                                        const std::vector<ArrayRef>& outputs_given, std::optional<std::int64_t> size) {
  const auto& sig = def.signature;
  const std::string& name = def.name;
  ElementwisePlan plan;
  // The loop shape, as CuPy decides it (cupy/_core/_kernel.pyx, _broadcast): the broadcast
  // of every non-raw array passed, inputs and outputs alike (so an output may be larger than
  // the inputs, which broadcast up to it); or size=, allowed only when no non-raw array is
  // passed. Each non-raw output must then have the loop shape exactly.
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::string_view> names;
  for (size_t k = 0; k < sig.in.size(); ++k) {
    if (!inputs[k].is_array || sig.in[k].raw) continue;
    shapes.push_back(inputs[k].array.shape);
    names.push_back(sig.in[k].name);
  }
  for (size_t k = 0; k < outputs_given.size(); ++k) {
    if (sig.out[k].raw) continue;
    shapes.push_back(outputs_given[k].shape);
    names.push_back(sig.out[k].name);
  }
  std::vector<std::int64_t>& shape = plan.shape;
  if (size) {
    if (!shapes.empty()) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: size= cannot be used with non-raw array arguments ({} passed); as in CuPy, size= "
                              "sets the loop only when every array passed is raw",
                              name, fmt::join(names, ", ")));
    }
    if (*size < 0) throw Error(ErrorCode::invalid_argument, fmt::format("{}: size= is negative", name));
    shape = {*size};
  } else if (!shapes.empty()) {
    shape = broadcast_shape(shapes, names);
  } else {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: the loop size cannot be decided: every array passed is raw (raw arrays do not set "
                            "it); pass size= or a non-raw array",
                            name));
  }
  for (size_t k = 0; k < outputs_given.size(); ++k) {
    if (!sig.out[k].raw && outputs_given[k].shape != shape) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: output {} has shape {} but the arguments broadcast to {} (an output is written "
                              "whole: it cannot be broadcast)",
                              name, sig.out[k].name, outputs_given[k].shape, shape));
    }
  }
  // Outputs: the descriptions given, or the C-contiguous arrays the launch allocates, of
  // the loop shape; raw ones too when size= decides it, as CuPy allocates them.
  for (size_t k = 0; k < sig.out.size(); ++k) {
    if (!outputs_given.empty()) {
      plan.outputs.push_back(outputs_given[k]);
    } else if (sig.out[k].raw && !size) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: the size of raw output {} cannot be decided; pass the outputs, or size= (raw "
                              "outputs are then allocated with shape (size,))",
                              name, sig.out[k].name));
    } else {
      plan.outputs.push_back(ArrayRef::contiguous(std::uint64_t{0}, resolved.outputs[k], shape));
    }
  }
  return plan;
}

void plan_elementwise_geometry(const detail::ElementwiseDefinition& def, const std::vector<ArgDescription>& inputs,
                               int multiprocessors, std::optional<unsigned> block_size, ElementwisePlan& plan,
                               Backend backend) {
  const auto& sig = def.signature;
  if (multiprocessors <= 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: a plan needs the GPU's multiprocessor count (CallOptions::multiprocessors), got {}",
                            def.name, multiprocessors));
  }
  // Every NVIDIA GPU since Fermi and every AMD GPU allows 1024 threads per block; a launch
  // still checks its device's own limit.
  if (block_size && (*block_size == 0 || *block_size > 1024)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: block_size {} is outside 1..1024 (threads per block)", def.name, *block_size));
  }
  std::int64_t block = block_size ? static_cast<std::int64_t>(*block_size) : kBlock;
  std::vector<std::vector<std::int64_t>> strides;
  std::vector<std::size_t> item_sizes;
  std::int64_t extra = 0;
  for (size_t k = 0; k < sig.in.size(); ++k) {
    const auto& in = inputs[k];
    if (!in.is_array) continue;
    if (sig.in[k].raw) {
      extra = std::max(extra, index_extent(in.array));
    } else {
      strides.push_back(broadcast_strides(in.array, plan.shape));
      item_sizes.push_back(itemsize(in.array.dtype));
    }
  }
  const size_t outputs_from = strides.size();
  for (size_t k = 0; k < sig.out.size(); ++k) {
    const ArrayRef& out = plan.outputs[k];
    if (sig.out[k].raw) {
      extra = std::max(extra, index_extent(out));
    } else {
      strides.push_back(broadcast_strides(out, plan.shape));
      item_sizes.push_back(itemsize(out.dtype));
    }
  }
  const std::int64_t max_blocks = static_cast<std::int64_t>(multiprocessors) * 32;
  // Elements a thread takes per step: kUnroll, or in the contiguous kernel 16 bytes of the
  // smallest item (at least kUnroll).
  const std::int64_t contiguous_per_thread = contiguous_elements_per_thread(item_sizes);
  // A thread's last index may run a whole step of the grid past the end, which 32-bit
  // indexing must still hold. The index width is chosen as if the grid were max_blocks, so
  // that it does not change with the grid of NOTE [ one pass ], which 32-bit indexing then
  // bounds below (never under max_blocks).
  // NOTE [ host loops ]: on the host the contiguous kernel takes kHostContiguousScale times
  // the GPU's elements a step (templates/prelude.cuh scales the template's count to match,
  // whatever the block size), and the index margin holds that step.
  const std::int64_t host_scale = backend == Backend::cpu ? kHostContiguousScale : 1;
  plan.loop = plan_loop(plan.shape, std::move(strides), item_sizes, def.options.reduce_dims,
                        max_blocks * block * std::max(kUnroll, contiguous_per_thread * host_scale), extra,
                        def.any_loop_order && def.options.reduce_dims, outputs_from);
  // The tiled template is written for kBlock threads (templates/elementwise_tiled.cu.in).
  if (block == kBlock) tile_transposed_inputs(plan.loop, outputs_from);
  plan.rank = plan.loop.layout.view_rank();
  // Each thread takes per_thread elements a step; the tiled kernel's block a whole tile
  // (block * kUnroll elements) a step.
  std::int64_t per_thread = plan.loop.layout.kind == LayoutKind::contiguous ? contiguous_per_thread : kUnroll;
  // NOTE [ host loops ]: on the host a contiguous loop is blocks of one thread (unless the
  // caller chose a block size), each a run of kHostContiguousScale times as many adjacent
  // elements, which g++ vectorizes.
  if (backend == Backend::cpu && plan.loop.layout.kind == LayoutKind::contiguous) {
    if (!block_size) block = 1;
    per_thread *= kHostContiguousScale;
  }
  plan.block = static_cast<unsigned>(block);
  std::int64_t steps = (plan.loop.size + block * per_thread - 1) / (block * per_thread);
  if (plan.loop.layout.kind == LayoutKind::tiled) {
    constexpr std::int64_t kTile = 32;
    const auto& dims = plan.loop.shape;
    const std::int64_t rows = dims[dims.size() - 2], cols = dims[dims.size() - 1];
    steps = plan.loop.size / (rows * cols) * ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
  }
  // NOTE [ one pass ]
  // The grid covers the whole loop in one pass: every block takes one step and exits.
  // A grid-stride loop over a grid capped at 32 blocks a multiprocessor read and wrote
  // DRAM 4-6% slower on an H100 than one pass of the same kernel (saxpy float64 0.94x ->
  // 1.02x copy, float32 0.98x -> 1.03x, x[::2] 0.59x -> 0.63x; tools/bench/stream_probe.cu,
  // NOTES v21): blocks then sweep memory in order, as the copy engine does. The kernels keep
  // their grid-stride loops for what one pass cannot cover: kMaxGrid blocks, kMaxThreadsX
  // threads, and with 32-bit indices the grid whose last step would overflow them.
  std::int64_t cap = std::min(kMaxGrid, kMaxThreadsX / block);
  if (!plan.loop.layout.index64) {
    const std::int64_t room = std::numeric_limits<std::int32_t>::max() - 1 - plan.loop.size;
    cap = std::min(cap, std::max(max_blocks, room / (block * per_thread)));
  }
  plan.grid = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(steps, cap)));
}

}  // namespace kernc::dsl
