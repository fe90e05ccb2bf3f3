#pragma once
/// \file
/// Arrays on the GPU: a non-owning view of memory the caller owns (the embedding case),
/// and an owning array; host copies; DLPack import and export.

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernc/dtype.hpp"
#include "kernc/runtime.hpp"
#include "kernc/export.hpp"

struct DLManagedTensor;

namespace kernc {

/// A view of device memory: address of element [0, ..., 0], dtype, shape, strides in
/// bytes (any sign; 0 for broadcast axes). It owns nothing.
struct KERNC_API ArrayRef {
  std::uint64_t data = 0;
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;

  /// A C-contiguous view of `shape` at `data`.
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
  /// Throws kernc::Error(invalid_argument) if shape and strides disagree in length, or a size is negative.
  void validate(const char* what) const;
};

/// A device array: an ArrayRef plus, when kernc allocated it, the memory it owns.
/// Copies share the memory (like a shared_ptr).
class KERNC_API DeviceArray {
 public:
  DeviceArray() = default;
  /// An uninitialised C-contiguous array.
  static DeviceArray empty(const Device& device, DType dtype, std::vector<std::int64_t> shape);
  /// A C-contiguous copy of host data (`host` holds size() elements in C order).
  static DeviceArray from_host(const Device& device, DType dtype, std::vector<std::int64_t> shape, const void* host,
                               StreamRef stream = {});
  /// Wraps memory the caller owns; `device` is where it lives.
  static DeviceArray wrap(const Device& device, ArrayRef view);

  const ArrayRef& ref() const noexcept { return view_; }
  operator const ArrayRef&() const noexcept { return view_; }
  const Device& device() const noexcept { return device_; }
  DType dtype() const noexcept { return view_.dtype; }
  const std::vector<std::int64_t>& shape() const noexcept { return view_.shape; }
  std::int64_t size() const noexcept { return view_.size(); }
  bool owns_memory() const noexcept { return buffer_ != nullptr; }

  /// Copies the elements to host memory in C order, itemsize(dtype()) bytes each. A
  /// non-contiguous view copies the bytes it spans and picks its elements on the host.
  /// Synchronises with `stream`.
  void to_host(void* host, StreamRef stream = {}) const;
  /// The elements as a vector of T; throws kernc::Error(invalid_argument) naming both types
  /// unless sizeof(T) is the item size of dtype() (to_host_vector<float> of a float64 array).
  template <class T>
  std::vector<T> to_host_vector(StreamRef stream = {}) const {
    check_host_element(sizeof(T), "to_host_vector");
    std::vector<T> out(static_cast<std::size_t>(size()));
    to_host(out.data(), stream);
    return out;
  }

  /// Throws kernc::Error(invalid_argument) unless `bytes` is the item size of dtype().
  void check_host_element(std::size_t bytes, const char* what) const;

  /// Exports as a DLPack tensor (kDLCUDA); the tensor keeps this array's memory alive
  /// until its deleter runs. Strides are in elements, as DLPack wants; byte strides that
  /// are not a multiple of the item size cannot be exported (kernc::Error).
  DLManagedTensor* to_dlpack() const;
  /// Imports a DLPack tensor without copying; takes ownership (the tensor's deleter runs
  /// when the last DeviceArray copy goes). Throws kernc::Error(invalid_argument) for a
  /// tensor not on a CUDA device, a dtype kernc has no name for, or lanes != 1.
  static DeviceArray from_dlpack(DLManagedTensor* tensor);

 private:
  Device device_;
  std::shared_ptr<void> buffer_;  // owner of the memory (DeviceBuffer or DLPack tensor)
  ArrayRef view_;
};

/// A scalar argument: a value with the C type it came from. It is converted to its
/// parameter's dtype with C's conversion rules (integer wrap-around included).
struct KERNC_API Scalar {
  DType dtype = DType::float64;
  long double real = 0;  ///< bool, integer and floating values (exact for 64-bit integers)
  long double imag = 0;
  std::uint64_t bits = 0;  ///< exact unsigned/signed 64-bit value for integer dtypes

  Scalar() = default;
  Scalar(bool v) : dtype(DType::bool_), real(v), bits(v) {}
  Scalar(signed char v) : dtype(DType::int8), real(v), bits(static_cast<std::uint64_t>(static_cast<std::int64_t>(v))) {}
  Scalar(short v) : dtype(DType::int16), real(v), bits(static_cast<std::uint64_t>(static_cast<std::int64_t>(v))) {}
  Scalar(int v) : dtype(DType::int32), real(v), bits(static_cast<std::uint64_t>(static_cast<std::int64_t>(v))) {}
  Scalar(long v) : dtype(DType::int64), real(v), bits(static_cast<std::uint64_t>(v)) {}
  Scalar(long long v) : dtype(DType::int64), real(v), bits(static_cast<std::uint64_t>(v)) {}
  Scalar(unsigned char v) : dtype(DType::uint8), real(v), bits(v) {}
  Scalar(unsigned short v) : dtype(DType::uint16), real(v), bits(v) {}
  Scalar(unsigned int v) : dtype(DType::uint32), real(v), bits(v) {}
  Scalar(unsigned long v) : dtype(DType::uint64), real(v), bits(v) {}
  Scalar(unsigned long long v) : dtype(DType::uint64), real(v), bits(v) {}
  Scalar(float v) : dtype(DType::float32), real(v) {}
  Scalar(double v) : dtype(DType::float64), real(v) {}
  Scalar(std::complex<float> v) : dtype(DType::complex64), real(v.real()), imag(v.imag()) {}
  Scalar(std::complex<double> v) : dtype(DType::complex128), real(v.real()), imag(v.imag()) {}
  /// A scalar of a dtype with no C++ type of its own (float16, bfloat16), from a double.
  static Scalar of(DType dtype, double value);

  /// The bytes of this value converted to `target` (C conversion), itemsize(target) long.
  void convert_to(DType target, unsigned char* out) const;
};

/// Host-side binary16 / bfloat16 conversions (round to nearest even), as the device does.
KERNC_API std::uint16_t float_to_half(float value) noexcept;
KERNC_API float half_to_float(std::uint16_t bits) noexcept;
KERNC_API std::uint16_t float_to_bfloat16(float value) noexcept;
KERNC_API float bfloat16_to_float(std::uint16_t bits) noexcept;

}  // namespace kernc
