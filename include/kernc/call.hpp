#pragma once
/// \file
/// What every kernel call takes: its options (stream, device, engine, ...) and its
/// arguments (arrays or scalars). Names the Engine without including it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "kernc/array.hpp"
#include "kernc/dtype.hpp"
#include "kernc/export.hpp"
#include "kernc/list_view.hpp"
#include "kernc/runtime.hpp"
#include "kernc/scalar.hpp"

namespace kernc {

class Engine;

/// Options every kernel call takes.
struct KERNC_API CallOptions {
  /// The stream to launch on; the default is the legacy default stream (see runtime.hpp).
  StreamRef stream;
  /// The GPU the arrays live on.
  int device = 0;
  /// ElementwiseKernel only: the loop size (CuPy's size=), allowed when no non-raw array is
  /// passed; outputs kernc allocates then have shape (size,), raw ones included.
  std::optional<std::int64_t> size;
  /// Explicit placeholder bindings, for placeholders no array decides ("T" → float32).
  std::map<std::string, DType> bindings;
  /// ElementwiseKernel only: threads per block (CuPy's block_size=), 1 to 1024; by
  /// default kernc picks (256). A launch checks the device's own limit.
  std::optional<unsigned> block_size;
  /// The engine to use; nullptr means Engine::global().
  Engine* engine = nullptr;
};

/// An argument of a kernel call: an array (view or owning) or a scalar.
class KERNC_API Arg {
 public:
  Arg(const ArrayRef& array) : array_(array), is_array_(true) {}
  Arg(const DeviceArray& array) : array_(array.ref()), is_array_(true) {}
  Arg(const Scalar& scalar) : scalar_(scalar) {}
  template <class T, class = decltype(Scalar(std::declval<T>()))>
  Arg(T value) : scalar_(Scalar(value)) {}
  /// A raw pointer is not an argument (it would convert to the bool scalar `true`): pass
  /// device memory as an ArrayRef, e.g. ArrayRef::contiguous(pointer, DType::float32, {n}),
  /// or an address as a std::uint64_t scalar.
  template <class T>
  Arg(T* pointer) = delete;

  bool is_array() const noexcept { return is_array_; }
  const ArrayRef& array() const noexcept { return array_; }
  const Scalar& scalar() const noexcept { return scalar_; }

 private:
  ArrayRef array_;
  Scalar scalar_;
  bool is_array_ = false;
};

}  // namespace kernc
