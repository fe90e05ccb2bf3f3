#pragma once
/// \file
/// ArrayRef: what kernc knows of an array without owning it — address, dtype, shape and
/// byte strides. Plain host data: a plan describes arrays with ArrayRefs whose `data`
/// is 0 (see call.hpp); a call passes real addresses.

#include <cstdint>
#include <utility>
#include <vector>

#include "kernc/dims.hpp"
#include "kernc/dtype.hpp"
#include "kernc/export.hpp"

namespace kernc {

/// A view of device memory: address of element [0, ..., 0], dtype, shape, strides in
/// bytes (any sign; 0 for broadcast axes). It owns nothing.
struct KERNC_API ArrayRef {
  std::uint64_t data = 0;
  DType dtype = DType::float32;
  Dims shape;    ///< up to 8 axes without allocating (NOTE [ inline dims ], kernc/dims.hpp)
  Dims strides;

  /// A C-contiguous view of `shape` at `data`. Throws kernc::Error(invalid_argument) when a
  /// stride would pass 2^63 bytes (possible even when an extent is zero).
  static ArrayRef contiguous(std::uint64_t data, DType dtype, std::vector<std::int64_t> shape);
  static ArrayRef contiguous(const void* data, DType dtype, std::vector<std::int64_t> shape) {
    return contiguous(reinterpret_cast<std::uintptr_t>(data), dtype, std::move(shape));
  }
  int ndim() const noexcept { return static_cast<int>(shape.size()); }
  std::int64_t size() const noexcept;
  bool c_contiguous() const noexcept;
  /// The lowest and one-past-highest byte address the view touches (equal when empty).
  std::pair<std::uint64_t, std::uint64_t> byte_range() const noexcept;

  /// The same memory with axes reordered (numpy.transpose).
  ArrayRef transposed(const std::vector<int>& axes) const;
  ArrayRef transposed() const;  ///< all axes reversed
  /// Elements start, start+step, ... below stop along `axis` (numpy slicing; step may be negative).
  ArrayRef sliced(int axis, std::int64_t start, std::int64_t stop, std::int64_t step = 1) const;
  /// Throws kernc::Error(invalid_argument) if shape and strides disagree in length, a size
  /// is negative, the element count or the bytes the strides span pass 2^63, or a
  /// non-empty view has no address.
  void validate(const char* what) const;
  /// validate() for a description (call.hpp): `data` may be 0.
  void validate_description(const char* what) const;
};

}  // namespace kernc
