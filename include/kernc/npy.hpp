#pragma once
/// \file
/// NumPy's .npy files: one array, a small text header, the raw elements.
///
/// NOTE [ npy dtypes ]
/// Every kernc dtype but bfloat16 has a NumPy type code: bool '|b1', int8 '|i1',
/// uint8 '|u1', int16..uint64 '<i2'..'<u8', float16 '<f2', float32 '<f4', float64 '<f8',
/// complex64 '<c8', complex128 '<c16'. NumPy has no bfloat16: ml_dtypes' arrays save as
/// the anonymous '<V2', which reads back as raw bytes, not as numbers. So write_npy refuses
/// bfloat16 (convert to float32 first; `kernc run` does so for its outputs) and read_npy
/// refuses 'V' codes. Big-endian files ('>') are read and converted to little-endian;
/// files are always written little-endian. Format versions 1.0, 2.0 and 3.0 are read;
/// 1.0 is written unless the header needs 2.0 (over 65535 bytes).

#include <cstdint>
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

/// Reads a .npy file. Throws kernc::Error(io) when the file cannot be read, and
/// (invalid_argument) naming the file for anything that is not a .npy kernc can use: bad
/// magic or version, a truncated or malformed header, an unknown, object, structured or
/// bfloat16 ('V') dtype, data that is shorter or longer than the shape says.
KERNC_API NpyArray read_npy(const std::string& path, NpyOrder order = NpyOrder::c);

/// Decodes the bytes of a .npy file; `name` is used in error messages (read_npy's rules).
KERNC_API NpyArray decode_npy(std::string_view bytes, const std::string& name, NpyOrder order = NpyOrder::c);

/// Writes `data` (C order, shape's element count of `dtype`) as a .npy file, atomically.
/// Throws kernc::Error(invalid_argument) for bfloat16 (see NOTE [ npy dtypes ]) or a
/// negative extent, (io) when the file cannot be written.
KERNC_API void write_npy(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape, const void* data);

/// The bytes write_npy writes.
KERNC_API std::string encode_npy(DType dtype, const std::vector<std::int64_t>& shape, const void* data);

/// NumPy's type code of `dtype` ("<f4", "|b1"); throws kernc::Error(invalid_argument) for bfloat16.
KERNC_API std::string npy_descr(DType dtype);

/// A shape as NumPy writes it: "()", "(3,)", "(2, 3)".
KERNC_API std::string format_numpy_shape(const std::vector<std::int64_t>& shape);

}  // namespace kernc
