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

/// The value of element `index` of host data `data` of `dtype` (imag is 0 for real dtypes).
struct Element {
  long double re = 0;
  long double im = 0;
};
Element element_at(DType dtype, const std::string& data, std::int64_t index);
/// An element as NumPy would print it: "1.5", "-3", "True", "(1+2j)".
std::string format_element(DType dtype, const Element& value);

/// --print shows at most this many elements.
constexpr std::int64_t kPrintLimit = 1000;

/// "12.00 MB", "512 B".
std::string format_bytes(double bytes);
/// "812.4 ms", "3.142 ms", "10.54 us".
std::string format_ms(double ms);
/// "min -0.998 max 0.999 mean 0.0123  [first elements, ...]" over the finite values
/// ("3 True of 7" for bool, "max |z| ... mean (...)" for complex, "(empty)").
std::string summarize(DType dtype, const std::string& data, std::int64_t count);
/// Prints the elements NumPy-style, nested by `shape`, indented by two; past kPrintLimit
/// elements, the first kPrintLimit flat.
void print_elements(DType dtype, const std::string& data, const std::vector<std::int64_t>& shape);

}  // namespace kernc::cli
