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

namespace {

// `kept` reordered by the arrays' common stride order (largest |stride| first), or left as
// it is when the arrays disagree (one transposed against the others) or it is already so.
void order_by_strides(std::vector<size_t>& kept, const std::vector<std::vector<std::int64_t>>& strides) {
  if (kept.size() < 2 || strides.empty()) return;
  auto key = [&strides](size_t d) {
    std::int64_t largest = 0;
    for (const auto& s : strides) largest = std::max<std::int64_t>(largest, std::llabs(s[d]));
    return largest;
  };
  // Every plain call plans its loop: the common case, already in order (C-ordered arrays),
  // allocates and sorts nothing.
  bool ordered = true;
  for (size_t k = 1; ordered && k < kept.size(); ++k) ordered = key(kept[k - 1]) >= key(kept[k]);
  if (ordered) return;
  std::vector<size_t> order = kept;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) > key(b); });
  // Every array's strides must shrink along the new order (broadcast axes, stride 0, aside).
  for (const auto& s : strides) {
    std::int64_t previous = -1;
    for (size_t d : order) {
      const std::int64_t magnitude = static_cast<std::int64_t>(std::llabs(s[d]));
      if (magnitude == 0) continue;
      if (previous >= 0 && magnitude > previous) return;
      previous = magnitude;
    }
  }
  kept = std::move(order);
}

}  // namespace

LoopPlan plan_loop(const std::vector<std::int64_t>& shape, std::vector<std::vector<std::int64_t>> strides,
                   const std::vector<std::size_t>& item_sizes, bool collapse, std::int64_t threads,
                   std::int64_t extra_extent, bool reorder) {
  LoopPlan plan;
  plan.size = 1;
  for (auto extent : shape) plan.size *= extent;
  // Drop extent-1 axes: they contribute nothing to any offset.
  std::vector<size_t> kept;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1) kept.push_back(d);
  }
  if (reorder) order_by_strides(kept, strides);
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

}  // namespace kernc::dsl
