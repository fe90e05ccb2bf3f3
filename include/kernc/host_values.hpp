#pragma once
/// \file
/// Host values for kernel parameters: a host array (host bytes and a NumPy-like view over
/// them) or a scalar. Arrays are made on the host (zeros, ones, arange, random) or taken
/// from a .npy file; scalars are read from literals ("2.5", "7:int8", "1+2j") and typed as
/// NumPy types them. What `kernc run` reads its arguments into.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernc/array_ref.hpp"
#include "kernc/dims.hpp"
#include "kernc/dtype.hpp"
#include "kernc/export.hpp"
#include "kernc/npy.hpp"
#include "kernc/scalar.hpp"

namespace kernc {

/// One value for a kernel parameter: a host array (a view over host bytes, as NumPy's:
/// shape and byte strides from an offset), or a scalar.
struct KERNC_API HostValue {
  bool is_array = false;
  DType dtype = DType::float64;       ///< the array's or the scalar's dtype
  std::vector<std::int64_t> shape;    ///< arrays: the view's shape ({} for 0-d)
  std::vector<std::int64_t> strides;  ///< arrays: the view's byte strides over `data` (0 broadcasts)
  std::int64_t offset = 0;            ///< arrays: byte offset of element [0, ..., 0] in `data`
  std::string data;                   ///< arrays: the bytes the view reads, little-endian
  Scalar scalar;                      ///< scalars
  /// What the value was made from, for messages, set by whoever made it (the functions
  /// below leave it empty); `kernc run` writes e.g. "float32 (1000,) random:1000:float32:7".
  std::string description;

  /// The view's element count (1 for a scalar).
  std::int64_t size() const noexcept { return is_array ? element_count(shape) : 1; }
  /// The bytes of the view's elements (0 for a scalar).
  std::size_t nbytes() const noexcept { return is_array ? static_cast<std::size_t>(size()) * itemsize(dtype) : 0; }
  /// The view over `data` placed at address `base` (an ArrayRef whose `data` is
  /// base + offset).
  ArrayRef view(std::uint64_t base) const {
    ArrayRef ref;
    ref.data = base + static_cast<std::uint64_t>(offset);
    ref.dtype = dtype;
    ref.shape = shape;
    ref.strides = strides;
    return ref;
  }
  bool c_contiguous() const noexcept { return view(0).c_contiguous(); }
  /// The view's elements in C order, copied out of `data`.
  std::string c_order_data() const;
};

/// What make_host_array fills an array with.
enum class HostFill {
  zeros,   ///< all 0
  ones,    ///< all 1
  arange,  ///< 0, 1, 2, ... in C order; integers wrap as NumPy's astype does
  random,  ///< uniform in [-1, 1) for floats (both parts of complex), integers in [-10, 10]
           ///< (unsigned [0, 20]), bool 0/1
};

/// A C-contiguous host array of `dtype` and `shape` filled as `fill` says. A random fill
/// draws from std::mt19937_64 seeded with `seed` (ignored by the others): the same seed
/// makes the same data with any compiler. Throws kernc::Error(invalid_argument) for a
/// negative extent, a shape whose elements or strides pass 2^63, or bytes that cannot be
/// allocated.
KERNC_API HostValue make_host_array(HostFill fill, DType dtype, std::vector<std::int64_t> shape,
                                    std::uint64_t seed = 0);

/// `array` as a host array, its bytes moved, not copied: a Fortran-ordered array (read with
/// NpyOrder::as_stored) keeps its order and gets Fortran strides, as in NumPy.
KERNC_API HostValue host_array(NpyArray array);

/// A scalar literal, "VALUE" or "VALUE:DTYPE". VALUE is true/false (True/False), an
/// integer, a real ("2.5", "1e-3", "inf", "nan"; no hex floats) or a complex number
/// ("1+2j", "-2.5j"). Untyped, integers are int64 (uint64 past int64's maximum), reals
/// float64, complex values complex128, true/false bool, as NumPy types Python values.
/// With a DTYPE (parse_dtype_name), the value becomes that dtype (C conversion, through
/// Scalar::convert_to). std::nullopt when VALUE is no literal. Throws
/// kernc::Error(invalid_argument) for an unknown DTYPE, a VALUE the DTYPE cannot hold (an
/// integer out of an integer dtype's range, which the message names; a real for an integer
/// dtype; anything but true, false, 1, 0 and -1 for bool; a complex value for a real
/// dtype), and an untyped integer below int64's minimum.
KERNC_API std::optional<Scalar> parse_scalar(const std::string& text);

/// The dtype a NumPy name names ("float32", "f4", "complex64", ...: parse_dtype); throws
/// kernc::Error(invalid_argument) "WHERE: unknown dtype "TEXT" (known: ...)" listing the names.
KERNC_API DType parse_dtype_name(const std::string& text, const std::string& where);

/// `scalar` converted to `dtype` (C conversion, as Scalar::convert_to) as a Scalar of that
/// dtype; `scalar` itself when it has that dtype.
KERNC_API Scalar scalar_as(const Scalar& scalar, DType dtype);

}  // namespace kernc
