// kernc run's results on the host: elements read, formatted as NumPy prints them, summarised.

#include "run_display.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "kernc/dims.hpp"
#include "kernc/scalar.hpp"

namespace kernc::cli {

namespace {

constexpr int kSummaryElements = 6;  // the summary shows the first few

// A statistic, to 7 significant digits ("5.0", not "5": it is a real number).
std::string statistic(long double value) {
  std::string text = fmt::format("{:.7g}", static_cast<double>(value));
  if (text.find_first_of(".eni") == std::string::npos) text += ".0";
  return text;
}

// NumPy-style nested brackets, one innermost row per line.
void print_nested(DType dtype, const std::string& data, const std::vector<std::int64_t>& shape, std::size_t dim,
                  std::int64_t& index, int indent) {
  if (dim == shape.size()) {
    fmt::print("{}", format_element(dtype, element_at(dtype, data, index++)));
    return;
  }
  fmt::print("[");
  for (std::int64_t k = 0; k < shape[dim]; ++k) {
    if (k > 0) {
      if (dim + 1 == shape.size()) {
        fmt::print(", ");
      } else {
        fmt::print(",{}{:{}}", std::string(shape.size() - dim - 1, '\n'), "", indent + 1);
      }
    }
    print_nested(dtype, data, shape, dim + 1, index, indent + 1);
  }
  fmt::print("]");
}

}  // namespace

Element element_at(DType dtype, const std::string& data, std::int64_t index) {
  const Scalar value = Scalar::from_bytes(dtype, data.data() + static_cast<std::size_t>(index) * itemsize(dtype));
  return {value.real, value.imag};
}

std::string format_element(DType dtype, const Element& value) {
  if (dtype == DType::bool_) return value.re != 0 ? "True" : "False";
  if (is_unsigned(dtype)) return fmt::format("{}", static_cast<std::uint64_t>(value.re));
  if (is_integer(dtype)) return fmt::format("{}", static_cast<std::int64_t>(value.re));
  // Shortest text that reads back as the same value of the element's own precision.
  auto real = [dtype](long double v) {
    std::string text = dtype == DType::float64 || dtype == DType::complex128 ? fmt::format("{}", static_cast<double>(v))
                                                                             : fmt::format("{}", static_cast<float>(v));
    if (text.find_first_of(".eni") == std::string::npos) text += ".0";  // 2.0, not 2 (e: 1e+20, n: nan, i: inf)
    return text;
  };
  if (!is_complex(dtype)) return real(value.re);
  std::string im = real(value.im);
  bool sign = !im.empty() && (im[0] == '-' || im[0] == '+');
  return fmt::format("({}{}{}j)", real(value.re), sign ? "" : "+", im);
}

std::string format_bytes(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.2f} MB", bytes / 1e6);
  if (bytes >= 1e3) return fmt::format("{:.2f} kB", bytes / 1e3);
  return fmt::format("{:.0f} B", bytes);
}

std::string format_ms(double ms) {
  if (ms >= 100) return fmt::format("{:.1f} ms", ms);
  if (ms >= 1) return fmt::format("{:.3f} ms", ms);
  return fmt::format("{:.2f} us", ms * 1000);
}

// "min -0.998 max 0.999 mean 0.0123" over the finite values, and the first few elements.
std::string summarize(DType dtype, const std::string& data, std::int64_t count) {
  if (count == 0) return "(empty)";
  std::string stats;
  if (dtype == DType::bool_) {
    std::int64_t trues = 0;
    for (std::int64_t k = 0; k < count; ++k) trues += element_at(dtype, data, k).re != 0;
    stats = fmt::format("{} True of {}", trues, count);
  } else if (is_complex(dtype)) {
    long double re = 0, im = 0, largest = 0;
    std::int64_t finite = 0;
    for (std::int64_t k = 0; k < count; ++k) {
      Element e = element_at(dtype, data, k);
      if (!std::isfinite(e.re) || !std::isfinite(e.im)) continue;
      re += e.re;
      im += e.im;
      largest = std::max(largest, std::hypot(e.re, e.im));
      ++finite;
    }
    stats = finite == 0 ? "no finite values"
                        : fmt::format("max |z| {} mean ({}{}{}j)", statistic(largest), statistic(re / finite),
                                      im < 0 ? "" : "+", statistic(im / finite));
    if (finite != 0 && finite < count) stats += fmt::format(" ({} non-finite left out)", count - finite);
  } else {
    long double low = std::numeric_limits<long double>::infinity(), high = -low, sum = 0;
    std::int64_t finite = 0;
    for (std::int64_t k = 0; k < count; ++k) {
      long double v = element_at(dtype, data, k).re;
      if (!std::isfinite(v)) continue;
      low = std::min(low, v);
      high = std::max(high, v);
      sum += v;
      ++finite;
    }
    if (finite == 0) {
      stats = "no finite values";
    } else {
      stats = fmt::format("min {} max {} mean {}", format_element(dtype, {low, 0}), format_element(dtype, {high, 0}),
                          statistic(sum / finite));
      if (finite < count) stats += fmt::format(" ({} non-finite left out)", count - finite);
    }
  }
  std::string first;
  for (std::int64_t k = 0; k < std::min<std::int64_t>(count, kSummaryElements); ++k) {
    first += (k ? ", " : "") + format_element(dtype, element_at(dtype, data, k));
  }
  return fmt::format("{}  [{}{}]", stats, first, count > kSummaryElements ? ", ..." : "");
}

void print_elements(DType dtype, const std::string& data, const std::vector<std::int64_t>& shape) {
  const std::int64_t count = element_count(shape);
  if (count <= kPrintLimit) {
    std::int64_t index = 0;
    fmt::print("  ");
    print_nested(dtype, data, shape, 0, index, 2);
    fmt::print("\n");
    return;
  }
  fmt::print("  the first {} of {} elements, flat in C order:\n  [", kPrintLimit, count);
  for (std::int64_t k = 0; k < kPrintLimit; ++k) {
    fmt::print("{}{}", k == 0 ? "" : k % 10 == 0 ? ",\n   " : ", ", format_element(dtype, element_at(dtype, data, k)));
  }
  fmt::print(", ...]\n");
}

}  // namespace kernc::cli
