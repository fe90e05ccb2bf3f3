#pragma once
// `kernc run`'s values on the host: what a SOURCE on the command line stands for (a .npy
// file, generated data, a scalar literal), and how host elements are read and shown.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernc/npy.hpp"

#include "kernc/array.hpp"
#include "kernc/dtype.hpp"

namespace kernc::cli {

/// One value for a kernel parameter: a host array (a view over host bytes, as NumPy's:
/// shape and byte strides from an offset), or a scalar.
struct SourceValue {
  bool is_array = false;
  DType dtype = DType::float64;       ///< the array's or the scalar's dtype
  std::vector<std::int64_t> shape;    ///< arrays: the view's shape ({} for 0-d)
  std::vector<std::int64_t> strides;  ///< arrays: the view's byte strides over `data` (0 broadcasts)
  std::int64_t offset = 0;            ///< arrays: byte offset of element [0, ..., 0] in `data`
  std::string data;                   ///< arrays: the bytes the view reads, little-endian (uploaded whole)
  Scalar scalar;                      ///< scalars
  /// What to print so the value can be recognised and remade, e.g.
  /// "float32 (1000,) random:1000:float32:2718281828" or "2.5 (float64 scalar)".
  std::string description;

  /// The view's element count (1 for a scalar).
  std::int64_t size() const noexcept;
  /// The bytes of the view's elements (what a kernel reads or writes of it).
  std::size_t nbytes() const noexcept;
  /// The view over `data` placed at device address `base`.
  ArrayRef view(std::uint64_t base) const;
  bool c_contiguous() const noexcept { return view(0).c_contiguous(); }
  /// The view's elements in C order, copied out of `data`.
  std::string c_order_data() const;
};

/// A SOURCE "@NAME", optionally followed by a view ("@x[::2]"): no data of its own, but the
/// device buffer of the call's argument NAME (CuPy's in-place call k(x, y, x)). See NOTE
/// [ shared buffers ] in run_plan.cpp.
struct SharedSource {
  std::string name;    ///< a parameter name, or (raw kernels) a 0-based position
  std::string suffix;  ///< a view of that argument's view, as after any array SOURCE ("" for none)
};

/// The SOURCE syntax, for --help and the error for a malformed SOURCE.
extern const char* const kSourceSyntax;
/// The same in one line, for errors about missing arguments.
extern const char* const kSourceHint;

/// Reads or makes the value `text` stands for (see kSourceSyntax). Throws kernc::Error:
/// invalid_argument for a malformed SOURCE or .npy file, io for a file that cannot be read.
/// The message says what is wrong; the caller names the SOURCE (as `--in x=SOURCE: ...`).
SourceValue load_source(const std::string& text);

/// The "@NAME" SOURCE `text` stands for, or std::nullopt for any other SOURCE. Throws
/// kernc::Error(invalid_argument) for an "@" without a name or with one that is no
/// identifier or position ("@", "@x-y").
std::optional<SharedSource> parse_shared_source(const std::string& text);

/// The value of a SOURCE `shared` that views `target`'s buffer (`target_name`'s, once
/// resolved): its dtype, and `shared.suffix` applied to its view. It has no `data`: the
/// bytes are the target's, on the device. Throws kernc::Error(invalid_argument) for a
/// scalar target or a bad view.
SourceValue shared_value(const SharedSource& shared, const SourceValue& target, const std::string& target_name);

/// Parses "1000", "64x1000", "()" (0-d); throws kernc::Error(invalid_argument).
std::vector<std::int64_t> parse_shape(const std::string& text);
/// The element count of a shape (1 for 0-d).
std::int64_t element_count(const std::vector<std::int64_t>& shape);
/// Parses a dtype name for SOURCE and --bind; throws kernc::Error(invalid_argument) listing the names.
DType parse_dtype_name(const std::string& text, const std::string& where);

/// `scalar` converted to `dtype` (C conversion) as a Scalar of that dtype.
Scalar scalar_as(const Scalar& scalar, DType dtype);
/// A scalar as its literal: "2.5", "-3", "true", "(1+2j)".
std::string format_scalar(const Scalar& scalar);

}  // namespace kernc::cli
