#pragma once
/// \file
/// ArrayRef: what kernc knows of an array without owning it — address, dtype, shape,
/// byte strides and the device its memory lives on. Plain host data: a plan describes
/// arrays with ArrayRefs whose `data` is 0 (see call.hpp); a call passes real addresses.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernc/dims.hpp"
#include "kernc/dtype.hpp"
#include "kernc/export.hpp"
#include "kernc/target.hpp"

namespace kernc {

/// Where an array's memory lives (DESIGN decision "arrays know their device"; see NOTE
/// [ arrays know their device ] in src/kernels/device_check.cpp): a backend and a device
/// ordinal, or `unknown` (a raw address: a call looks it up once), or `shared` (CUDA
/// managed or page-locked host memory, which every device of the backend may address).
struct KERNC_API DeviceId {
  static constexpr int kUnknown = -1;
  static constexpr int kShared = -2;
  Backend backend = Backend::cuda;
  int ordinal = kUnknown;

  static DeviceId unknown() noexcept { return {}; }
  static DeviceId shared(Backend backend) noexcept { return {backend, kShared}; }
  bool known() const noexcept { return ordinal != kUnknown; }
  bool is_shared() const noexcept { return ordinal == kShared; }
  /// "cuda:0", "cpu:0", "cuda managed or pinned host memory", "an unknown device".
  std::string str() const;
  friend bool operator==(const DeviceId& a, const DeviceId& b) noexcept {
    return a.ordinal == b.ordinal && (a.ordinal == kUnknown || a.backend == b.backend);
  }
  friend bool operator!=(const DeviceId& a, const DeviceId& b) noexcept { return !(a == b); }
};

/// A view of device memory: address of element [0, ..., 0], dtype, shape, strides in
/// bytes (any sign; 0 for broadcast axes) and its device. It owns nothing; its views
/// (transposed, sliced) keep its device.
struct KERNC_API ArrayRef {
  std::uint64_t data = 0;
  DType dtype = DType::float32;
  Dims shape;    ///< up to 8 axes without allocating (NOTE [ inline dims ], kernc/dims.hpp)
  Dims strides;
  /// Unknown for a raw address (contiguous(), aggregate initialisation); a DeviceArray's
  /// view and a DLPack import say where they live.
  DeviceId device;

  /// A C-contiguous view of `shape` at `data` (its device unknown until a call looks the
  /// address up, or set with on()). Throws kernc::Error(invalid_argument) when a
  /// stride would pass 2^63 bytes (possible even when an extent is zero).
  static ArrayRef contiguous(std::uint64_t data, DType dtype, std::vector<std::int64_t> shape);
  static ArrayRef contiguous(const void* data, DType dtype, std::vector<std::int64_t> shape) {
    return contiguous(reinterpret_cast<std::uintptr_t>(data), dtype, std::move(shape));
  }
  /// The same view, said to live on `where`.
  ArrayRef on(DeviceId where) const {
    ArrayRef out = *this;
    out.device = where;
    return out;
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
