#pragma once
/// \file
/// Arrays on the GPU: DeviceArray, an owning array or a wrapped view of memory the caller
/// owns (the embedding case); host copies; DLPack import and export. The view itself
/// (ArrayRef) and Scalar are host vocabulary, in array_ref.hpp and scalar.hpp.

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernc/array_ref.hpp"
#include "kernc/dtype.hpp"
#include "kernc/scalar.hpp"
#include "kernc/runtime.hpp"
#include "kernc/export.hpp"

struct DLManagedTensor;

namespace kernc {

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
  const Dims& shape() const noexcept { return view_.shape; }
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

  /// Exports as a DLPack tensor (kDLCUDA; kDLCPU for an array of the cpu backend, kDLROCM
  /// for HIP); the tensor keeps this array's memory alive
  /// until its deleter runs. Strides are in elements, as DLPack wants; byte strides that
  /// are not a multiple of the item size cannot be exported (kernc::Error).
  DLManagedTensor* to_dlpack() const;
  /// Imports a DLPack tensor without copying; takes ownership (the tensor's deleter runs
  /// when the last DeviceArray copy goes). Throws kernc::Error(invalid_argument) for a
  /// tensor neither on a CUDA device nor in host memory (kDLCPU, kDLCUDAHost: an
  /// array of the cpu backend), a dtype kernc has no name for, or lanes != 1.
  static DeviceArray from_dlpack(DLManagedTensor* tensor);

 private:
  Device device_;
  std::shared_ptr<void> buffer_;  // owner of the memory (DeviceBuffer or DLPack tensor)
  ArrayRef view_;
};

}  // namespace kernc
