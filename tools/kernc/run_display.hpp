#pragma once
// kernc run's results on the host: elements read, formatted as NumPy prints them, summarised.

#include <cstdint>
#include <string>
#include <vector>

#include "kernc/dtype.hpp"

namespace kernc::cli {

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
