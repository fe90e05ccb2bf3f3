// ArrayRef: a view's shape, strides and byte range; transposes and slices. Host-only.

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernc/array_ref.hpp"
#include "kernc/error.hpp"

namespace kernc {

std::string DeviceId::str() const {
  if (ordinal == kUnknown) return "an unknown device";
  if (ordinal == kShared) return fmt::format("{} managed or pinned host memory", to_string(backend));
  return fmt::format("{}:{}", to_string(backend), ordinal);
}

ArrayRef ArrayRef::contiguous(std::uint64_t data, DType dtype, std::vector<std::int64_t> shape) {
  ArrayRef ref;
  ref.data = data;
  ref.dtype = dtype;
  ref.strides.assign(shape.size(), 0);
  std::int64_t stride = static_cast<std::int64_t>(itemsize(dtype));
  for (size_t k = shape.size(); k-- > 0;) {
    ref.strides[k] = stride;
    // Zero extents do not make the strides of the others smaller, so a zero-size shape
    // can still have strides past 64 bits (found by fuzz_array_source).
    if (k > 0 && __builtin_mul_overflow(stride, std::max<std::int64_t>(shape[k], 1), &stride)) {
      throw Error(ErrorCode::invalid_argument, fmt::format("a C-contiguous {} array of shape {} has strides past "
                                                           "2^63 bytes",
                                                           to_string(dtype), shape));
    }
  }
  ref.shape = std::move(shape);
  return ref;
}

std::int64_t ArrayRef::size() const noexcept { return element_count(shape); }

bool ArrayRef::c_contiguous() const noexcept {
  std::int64_t expected = static_cast<std::int64_t>(itemsize(dtype));
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] != 1 && strides[k] != expected) return false;
    expected *= shape[k];
  }
  return true;
}

std::pair<std::uint64_t, std::uint64_t> ArrayRef::byte_range() const noexcept {
  if (size() == 0) return {data, data};
  std::int64_t low = 0, high = 0;
  for (size_t k = 0; k < shape.size(); ++k) {
    std::int64_t span = (shape[k] - 1) * strides[k];
    (span < 0 ? low : high) += span;
  }
  return {data + low, data + high + itemsize(dtype)};
}

void ArrayRef::validate(const char* what) const {
  validate_description(what);
  if (size() > 0 && data == 0) throw Error(ErrorCode::invalid_argument, fmt::format("{}: null data pointer", what));
}

void ArrayRef::validate_description(const char* what) const {
  // Called on every launch: format only when something is wrong.
  if (shape.size() != strides.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: shape has {} dimensions but strides has {}", what,
                                                         shape.size(), strides.size()));
  }
  bool empty = false;
  for (auto extent : shape) {
    if (extent < 0) throw Error(ErrorCode::invalid_argument, fmt::format("{}: negative extent in shape {}", what, shape));
    empty = empty || extent == 0;
  }
  if (empty) return;  // no element is ever addressed: strides do not matter
  // size() and byte_range() multiply and add these in 64 bits; a view from a foreign
  // source (DLPack, a host program's own struct) must not make that overflow.
  std::int64_t count = 1, reach = 0;
  for (size_t k = 0; k < shape.size(); ++k) {
    std::int64_t span = 0;
    const std::int64_t magnitude = strides[k] == std::numeric_limits<std::int64_t>::min() ? -1 : std::abs(strides[k]);
    if (__builtin_mul_overflow(count, shape[k], &count)) {
      throw Error(ErrorCode::invalid_argument, fmt::format("{}: shape {} has more than 2^63 elements", what, shape));
    }
    if (magnitude < 0 || __builtin_mul_overflow(shape[k] - 1, magnitude, &span) ||
        __builtin_add_overflow(reach, span, &reach)) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: the byte strides {} of shape {} reach past 2^63 bytes", what, strides, shape));
    }
  }
}

ArrayRef ArrayRef::transposed(const std::vector<int>& axes) const {
  if (axes.size() != shape.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("transpose: {} axes given for a {}-D array", axes.size(), ndim()));
  }
  ArrayRef out = *this;
  std::vector<bool> seen(shape.size(), false);
  for (size_t k = 0; k < axes.size(); ++k) {
    int axis = axes[k] < 0 ? axes[k] + ndim() : axes[k];
    if (axis < 0 || axis >= ndim() || seen[axis]) {
      throw Error(ErrorCode::invalid_argument, fmt::format("transpose: axes {} are not a permutation of {} axes", axes, ndim()));
    }
    seen[axis] = true;
    out.shape[k] = shape[axis];
    out.strides[k] = strides[axis];
  }
  return out;
}

ArrayRef ArrayRef::transposed() const {
  std::vector<int> axes(shape.size());
  std::iota(axes.rbegin(), axes.rend(), 0);
  return transposed(axes);
}

ArrayRef ArrayRef::sliced(int axis, std::int64_t start, std::int64_t stop, std::int64_t step) const {
  if (axis < 0) axis += ndim();
  if (axis < 0 || axis >= ndim()) throw Error(ErrorCode::invalid_argument, fmt::format("slice: axis out of range"));
  if (step == 0) throw Error(ErrorCode::invalid_argument, "slice: step must not be zero");
  std::int64_t n = shape[axis];
  auto clamp = [n, step](std::int64_t v) {
    if (v < 0) v += n;
    return step > 0 ? std::clamp<std::int64_t>(v, 0, n) : std::clamp<std::int64_t>(v, -1, n - 1);
  };
  start = clamp(start);
  stop = clamp(stop);
  std::int64_t count = step > 0 ? std::max<std::int64_t>(0, (stop - start + step - 1) / step)
                                : std::max<std::int64_t>(0, (start - stop - step - 1) / -step);
  ArrayRef out = *this;
  if (count > 0) out.data = data + start * strides[axis];
  out.shape[axis] = count;
  out.strides[axis] = strides[axis] * step;
  return out;
}

}  // namespace kernc
