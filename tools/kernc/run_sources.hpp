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

/// One value for a kernel parameter: a host array in C order, or a scalar.
struct SourceValue {
  bool is_array = false;
  DType dtype = DType::float64;     ///< the array's or the scalar's dtype
  std::vector<std::int64_t> shape;  ///< arrays: the shape ({} for 0-d)
  std::string data;                 ///< arrays: the elements, little-endian, C order
  Scalar scalar;                    ///< scalars
  /// What to print so the value can be recognised and remade, e.g.
  /// "float32 (1000,) random:1000:float32:2718281828" or "2.5 (float64 scalar)".
  std::string description;

  std::int64_t size() const noexcept;
  std::size_t nbytes() const noexcept { return data.size(); }
};

/// The SOURCE syntax, for --help and the error for a malformed SOURCE.
extern const char* const kSourceSyntax;
/// The same in one line, for errors about missing arguments.
extern const char* const kSourceHint;

/// Reads or makes the value `text` stands for (see kSourceSyntax). Throws kernc::Error:
/// invalid_argument for a malformed SOURCE or .npy file, io for a file that cannot be read.
SourceValue load_source(const std::string& text);

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
