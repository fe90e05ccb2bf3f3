#include "dsl/loop_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernc/error.hpp"

namespace kernc::dsl {

std::vector<std::int64_t> broadcast_shape(const std::vector<std::vector<std::int64_t>>& shapes,
                                          const std::vector<std::string_view>& names) {
  size_t rank = 0;
  for (const auto& shape : shapes) rank = std::max(rank, shape.size());
  std::vector<std::int64_t> out(rank, 1);
  std::vector<int> decided_by(rank, -1);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const auto& shape = shapes[k];
    for (size_t d = 0; d < shape.size(); ++d) {
      size_t axis = rank - shape.size() + d;
      std::int64_t extent = shape[d];
      if (extent == 1) continue;
      if (out[axis] == 1) {
        out[axis] = extent;
        decided_by[axis] = static_cast<int>(k);
      } else if (out[axis] != extent) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("shapes do not broadcast: {} has shape {} and {} has shape {} (axis {} is {} and {})",
                                names[decided_by[axis]], shapes[decided_by[axis]], names[k], shape, axis, out[axis],
                                extent));
      }
    }
  }
  return out;
}

std::vector<std::int64_t> broadcast_strides(const ArrayRef& array, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> strides(shape.size(), 0);
  size_t offset = shape.size() - array.shape.size();
  for (size_t d = 0; d < array.shape.size(); ++d) {
    strides[offset + d] = array.shape[d] == 1 ? 0 : array.strides[d];
  }
  return strides;
}

bool fits_index32(std::int64_t extent, std::int64_t threads) {
  return extent >= 0 && extent + threads < std::numeric_limits<std::int32_t>::max();
}

int contiguous_elements_per_thread(const std::vector<std::size_t>& item_sizes) {
  std::size_t smallest = 16;
  for (std::size_t size : item_sizes) smallest = std::min(smallest, std::max<std::size_t>(size, 1));
  return static_cast<int>(std::clamp<std::size_t>(16 / smallest, 4, 16));
}

int reduction_columns(const std::vector<std::size_t>& item_sizes) {
  std::size_t widest = 0;
  for (std::size_t size : item_sizes) widest = std::max(widest, size);
  if (widest == 0 || widest >= 16) return 1;
  return static_cast<int>(16 / widest);
}

namespace {

// Whether the |strides| of every array in strides[first, last) shrink along `order`
// (broadcast axes, stride 0, aside).
bool shrinks_along(const std::vector<size_t>& order, const std::vector<std::vector<std::int64_t>>& strides, size_t first,
                   size_t last) {
  for (size_t a = first; a < last; ++a) {
    std::int64_t previous = -1;
    for (size_t d : order) {
      const std::int64_t magnitude = static_cast<std::int64_t>(std::llabs(strides[a][d]));
      if (magnitude == 0) continue;
      if (previous >= 0 && magnitude > previous) return false;
      previous = magnitude;
    }
  }
  return true;
}

// Puts `kept` in the common stride order (largest |stride| first) of strides[first, last).
// Returns false, leaving `kept` as it is, when those arrays disagree (one transposed
// against the others).
bool order_by_strides(std::vector<size_t>& kept, const std::vector<std::vector<std::int64_t>>& strides, size_t first,
                      size_t last) {
  if (kept.size() < 2 || first >= last) return true;
  auto key = [&strides, first, last](size_t d) {
    std::int64_t largest = 0;
    for (size_t a = first; a < last; ++a) largest = std::max<std::int64_t>(largest, std::llabs(strides[a][d]));
    return largest;
  };
  // Every plain call plans its loop: the common case, already in order (C-ordered arrays),
  // allocates and sorts nothing.
  bool ordered = true;
  for (size_t k = 1; ordered && k < kept.size(); ++k) ordered = key(kept[k - 1]) >= key(kept[k]);
  if (ordered) return shrinks_along(kept, strides, first, last);
  std::vector<size_t> order = kept;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) > key(b); });
  if (!shrinks_along(order, strides, first, last)) return false;
  kept = std::move(order);
  return true;
}

}  // namespace

LoopPlan plan_loop(const std::vector<std::int64_t>& shape, std::vector<std::vector<std::int64_t>> strides,
                   const std::vector<std::size_t>& item_sizes, bool collapse, std::int64_t threads,
                   std::int64_t extra_extent, bool reorder, std::size_t outputs_from) {
  LoopPlan plan;
  plan.size = 1;
  for (auto extent : shape) plan.size *= extent;
  // Drop extent-1 axes: they contribute nothing to any offset. Without `collapse` (CuPy's
  // reduce_dims=False) they stay: _ind.get() then indexes the broadcast shape itself, as
  // CuPy's does, extent-1 axes included.
  std::vector<size_t> kept;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1 || !collapse) kept.push_back(d);
  }
  // When the arrays disagree, the outputs' order: writes coalesced, transposed reads left to
  // tile_transposed_inputs().
  if (reorder && !order_by_strides(kept, strides, 0, strides.size()) && outputs_from < strides.size()) {
    order_by_strides(kept, strides, outputs_from, strides.size());
  }
  plan.shape.clear();
  plan.strides.assign(strides.size(), {});
  for (size_t d : kept) {
    bool merge = collapse && !plan.shape.empty();
    for (size_t a = 0; merge && a < strides.size(); ++a) {
      // Axis d continues the previous kept axis if stepping the previous axis once is
      // the same as stepping d across its whole extent.
      merge = plan.strides[a].back() == strides[a][d] * shape[d];
    }
    if (merge) {
      plan.shape.back() *= shape[d];
      for (size_t a = 0; a < strides.size(); ++a) plan.strides[a].back() = strides[a][d];
    } else {
      plan.shape.push_back(shape[d]);
      for (size_t a = 0; a < strides.size(); ++a) plan.strides[a].push_back(strides[a][d]);
    }
  }
  const int rank = static_cast<int>(plan.shape.size());
  if (rank > Layout::kMaxDims) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("the loop has {} dimensions after collapsing; kernc supports at most {}", rank, Layout::kMaxDims));
  }
  bool contiguous = rank <= 1;
  for (size_t a = 0; contiguous && a < strides.size(); ++a) {
    contiguous = rank == 0 || plan.strides[a][0] == static_cast<std::int64_t>(item_sizes[a]);
  }
  if (contiguous) {
    plan.layout.kind = LayoutKind::contiguous;
  } else if (rank <= Layout::kMaxStridedRank) {
    plan.layout.kind = LayoutKind::strided;
    plan.layout.rank = rank;
  } else {
    plan.layout.kind = LayoutKind::generic;
  }
  // 32-bit indexing needs the loop index (plus one grid stride) and every byte offset to fit.
  std::int64_t largest = std::max(plan.size, extra_extent);
  for (const auto& array_strides : plan.strides) {
    std::int64_t span = 0;
    for (size_t d = 0; d < array_strides.size(); ++d) span += (plan.shape[d] - 1) * std::llabs(array_strides[d]);
    largest = std::max(largest, span + 16);
  }
  plan.layout.index64 = !fits_index32(largest, threads);
  return plan;
}

bool tile_transposed_inputs(LoopPlan& plan, std::size_t outputs_from) {
  const int rank = static_cast<int>(plan.shape.size());
  if (plan.layout.kind != LayoutKind::strided || rank < 2 || rank > Layout::kMaxTiledRank) return false;
  if (outputs_from == 0 || outputs_from >= plan.strides.size()) return false;
  // Narrower than half a tile, most of each tile's threads would idle.
  constexpr std::int64_t kNarrowest = 16;
  const size_t rows = rank - 2, cols = rank - 1;
  if (plan.shape[rows] < kNarrowest || plan.shape[cols] < kNarrowest) return false;
  auto magnitude = [](std::int64_t stride) { return static_cast<std::int64_t>(std::llabs(stride)); };
  for (size_t a = outputs_from; a < plan.strides.size(); ++a) {
    const auto& s = plan.strides[a];
    if (s[cols] == 0) return false;
    for (int d = 0; d < rank; ++d) {
      if (s[d] != 0 && magnitude(s[d]) < magnitude(s[cols])) return false;
    }
  }
  std::uint32_t staged = 0;
  for (size_t a = 0; a < outputs_from && a < 32; ++a) {
    const auto& s = plan.strides[a];
    if (s[rows] != 0 && magnitude(s[rows]) < magnitude(s[cols])) staged |= 1u << a;
  }
  if (staged == 0) return false;
  plan.layout.kind = LayoutKind::tiled;
  plan.staged = staged;
  return true;
}

}  // namespace kernc::dsl
