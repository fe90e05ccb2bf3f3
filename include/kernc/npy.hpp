#pragma once
/// \file
/// NumPy's .npy files: one array, a small text header, the raw elements.
///
/// NOTE [ npy dtypes ]
/// kernc writes and reads NumPy's type codes: bool '|b1', int8 '|i1', uint8 '|u1',
/// int16..uint64 '<i2'..'<u8', float16 '<f2', float32 '<f4', float64 '<f8', complex64 '<c8',
/// complex128 '<c16'. NumPy has no bfloat16 or float8; ml_dtypes registers them as NumPy
/// "legacy user dtypes", and np.save writes such a dtype's `dtype.str` (numpy/lib/format.py,
/// dtype_to_descr): byte order, kind, size. ml_dtypes gives them byte order '=' (written
/// '<', even at one byte) and kind 'V' (raw bytes), except float8_e5m2 which it gives kind
/// 'f' (ml_dtypes/_src/floats.cc, GetCustomFloatDescrProto). So np.save writes bfloat16 as
/// '<V2', float8_e4m3fn as '<V1' and float8_e5m2 as '<f1', with no name, and kernc writes
/// exactly those. Reading: '<f1' is float8_e5m2, '<V2' bfloat16 (ml_dtypes' only 2-byte
/// type of kind 'V'); a 1-byte 'V' (ml_dtypes' float8_e4m3fn, but also its int4, float4,
/// float8_e4m3fnuz... all '<V1') and NumPy's own '|V' need the caller to say which dtype
/// the bytes are (`void_dtype`). NumPy without ml_dtypes loads '<V1'/'<V2' as raw bytes
/// (np.load(f).view(ml_dtypes.float8_e4m3fn) gives the numbers back) and refuses '<f1'
/// altogether (ml_dtypes issue 148); a file kernc writes is what ml_dtypes would write.
/// Big-endian files ('>') are read and converted to little-endian; files are always
/// written little-endian. Format versions 1.0, 2.0 and 3.0 are read; 1.0 is written unless
/// the header needs 2.0 (over 65535 bytes).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernc/dtype.hpp"
#include "kernc/export.hpp"

namespace kernc {

/// The element order read_npy gives a Fortran-ordered file's data.
enum class NpyOrder {
  c,          ///< always C order (a Fortran file's elements are reordered)
  as_stored,  ///< the file's own order (a Fortran file stays column-major: no copy)
};

/// An array read from a .npy file.
struct KERNC_API NpyArray {
  DType dtype = DType::float64;
  std::vector<std::int64_t> shape;  ///< empty for a 0-d array (one element)
  bool fortran_order = false;       ///< how the file stored it
  /// size() * itemsize(dtype) bytes, little-endian; C order, or Fortran order when the
  /// file is and NpyOrder::as_stored was asked for.
  std::string data;

  /// The element count (1 for a 0-d array).
  std::int64_t size() const noexcept;
};

/// Reads a .npy file. `void_dtype` is the dtype of a file whose descr is raw bytes of its
/// size ('V', NOTE [ npy dtypes ]: float8_e4m3fn is '<V1'); given for a file of a named
/// dtype, it must be that dtype. Throws kernc::Error(io) when the file cannot be read, and
/// (invalid_argument) naming the file for anything that is not a .npy kernc can use: bad
/// magic or version, a truncated or malformed header, an unknown, object or structured
/// dtype, 1-byte raw bytes without `void_dtype`, a `void_dtype` the file does not hold,
/// data that is shorter or longer than the shape says.
KERNC_API NpyArray read_npy(const std::string& path, NpyOrder order = NpyOrder::c,
                            std::optional<DType> void_dtype = std::nullopt);

/// Decodes the bytes of a .npy file; `name` is used in error messages (read_npy's rules).
KERNC_API NpyArray decode_npy(std::string_view bytes, const std::string& name, NpyOrder order = NpyOrder::c,
                              std::optional<DType> void_dtype = std::nullopt);

/// Writes `data` (C order, shape's element count of `dtype`) as a .npy file, atomically;
/// bfloat16 and the float8 types as ml_dtypes' np.save writes them (NOTE [ npy dtypes ]).
/// Throws kernc::Error(invalid_argument) for a negative extent, (io) when the file cannot
/// be written.
KERNC_API void write_npy(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape, const void* data);

/// The bytes write_npy writes.
KERNC_API std::string encode_npy(DType dtype, const std::vector<std::int64_t>& shape, const void* data);

/// The .npy type code of `dtype` ("<f4", "|b1"; ml_dtypes' "<V2", "<V1", "<f1" for
/// bfloat16, float8_e4m3fn, float8_e5m2).
KERNC_API std::string npy_descr(DType dtype);

/// A shape as NumPy writes it: "()", "(3,)", "(2, 3)".
KERNC_API std::string format_numpy_shape(const std::vector<std::int64_t>& shape);

}  // namespace kernc
