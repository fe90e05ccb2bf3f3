// Host values: arrays made on the host or taken from a .npy file, scalar literals typed as
// NumPy types them (include/kernc/host_values.hpp). Elements are written and scalars
// converted by core's Scalar (convert_to, from_bytes, fits), never by a table of our own.

#include "kernc/host_values.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <random>

#include <fmt/format.h>

#include "kernc/error.hpp"

namespace kernc {

namespace {

Error bad_value(const std::string& what) { return Error(ErrorCode::invalid_argument, what); }

// Decimal digits only: no sign, no spaces, nothing past 2^64 - 1.
std::optional<std::uint64_t> parse_digits(const std::string& text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// A C-contiguous array of `shape` whose element k is value(k), converted to `dtype`.
template <class Value>
HostValue generated(DType dtype, std::vector<std::int64_t> shape, Value&& value) {
  const ArrayRef layout = ArrayRef::contiguous(std::uint64_t{0}, dtype, shape);
  layout.validate_description("make_host_array");
  HostValue out;
  out.is_array = true;
  out.dtype = dtype;
  out.strides = layout.strides;
  out.shape = std::move(shape);
  const std::int64_t count = layout.size();
  const std::size_t item = itemsize(dtype);
  try {
    out.data.assign(static_cast<std::size_t>(count) * item, '\0');
  } catch (const std::bad_alloc&) {
    throw bad_value(fmt::format("cannot allocate {} bytes of host memory for a {} array of shape {}",
                                static_cast<std::uint64_t>(count) * item, to_string(dtype),
                                format_numpy_shape(out.shape)));
  }
  auto* bytes = reinterpret_cast<unsigned char*>(out.data.data());
  for (std::int64_t k = 0; k < count; ++k) value(k).convert_to(dtype, bytes + static_cast<std::size_t>(k) * item);
  return out;
}

HostValue random_array(DType dtype, std::vector<std::int64_t> shape, std::uint64_t seed) {
  // mt19937_64's sequence is fixed by the standard, and the mapping below is ours, so a
  // seed makes the same data with any compiler.
  std::mt19937_64 engine(seed);
  auto unit = [&engine] { return static_cast<double>(engine() >> 11) * 0x1.0p-53 * 2.0 - 1.0; };  // [-1, 1)
  return generated(dtype, std::move(shape), [&](std::int64_t) -> Scalar {
    if (dtype == DType::bool_) return Scalar(static_cast<bool>(engine() >> 63));
    if (is_unsigned(dtype)) return Scalar(static_cast<long long>(engine() % 21));
    if (is_integer(dtype)) return Scalar(static_cast<long long>(engine() % 21) - 10);
    const double re = unit();
    if (is_complex(dtype)) return Scalar(std::complex<double>(re, unit()));
    return Scalar(re);
  });
}

// A scalar literal: true/false, an integer, a real, or a complex "RE+IMj" / "IMj".
struct Literal {
  enum Kind { boolean, integer, real, complex } kind = real;
  bool negative = false;
  std::uint64_t magnitude = 0;  // integer: |value|
  double re = 0, im = 0;

  // An integer below int64's minimum: no integer dtype holds it.
  bool below_int64() const {
    return kind == integer && negative && magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1;
  }
};

std::optional<double> parse_real(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (*end != '\0' || text.find_first_of("xX") != std::string::npos) return std::nullopt;  // no hex floats
  return value;
}

std::optional<Literal> parse_literal(const std::string& text) {
  Literal literal;
  if (text == "true" || text == "True" || text == "false" || text == "False") {
    literal.kind = Literal::boolean;
    literal.re = text[0] == 't' || text[0] == 'T';
    return literal;
  }
  std::string digits = text;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    literal.negative = digits[0] == '-';
    digits.erase(0, 1);
  }
  if (auto magnitude = parse_digits(digits)) {
    literal.kind = Literal::integer;
    literal.magnitude = *magnitude;
    literal.re = literal.negative ? -static_cast<double>(*magnitude) : static_cast<double>(*magnitude);
    return literal;
  }
  if (auto real = parse_real(text)) {
    literal.kind = Literal::real;
    literal.re = *real;
    return literal;
  }
  if (text.size() > 1 && (text.back() == 'j' || text.back() == 'J')) {
    std::string body = text.substr(0, text.size() - 1);
    // The imaginary part starts at the last sign that is neither the first character nor an exponent's.
    std::size_t split_at = std::string::npos;
    for (std::size_t k = body.size(); k-- > 1;) {
      if ((body[k] == '+' || body[k] == '-') && body[k - 1] != 'e' && body[k - 1] != 'E') {
        split_at = k;
        break;
      }
    }
    std::optional<double> re = split_at == std::string::npos ? std::optional<double>(0.0) : parse_real(body.substr(0, split_at));
    std::string im_text = split_at == std::string::npos ? body : body.substr(split_at);
    if (im_text == "+" || im_text == "-" || im_text.empty()) im_text += "1";
    std::optional<double> im = parse_real(im_text);
    if (re && im) {
      literal.kind = Literal::complex;
      literal.re = *re;
      literal.im = *im;
      return literal;
    }
  }
  return std::nullopt;
}

// The literal as NumPy types a Python value: bool, int64 (uint64 past its maximum; an
// integer below its minimum only as the float64 a typed conversion starts from), float64,
// complex128.
Scalar untyped_scalar(const Literal& literal) {
  switch (literal.kind) {
    case Literal::boolean: return Scalar(literal.re != 0);
    case Literal::integer:
      if (literal.below_int64()) return Scalar(literal.re);
      if (!literal.negative && literal.magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return Scalar(static_cast<unsigned long long>(literal.magnitude));
      }
      return Scalar(static_cast<long long>(literal.negative ? 0 - literal.magnitude : literal.magnitude));
    case Literal::real: return Scalar(literal.re);
    case Literal::complex: return Scalar(std::complex<double>(literal.re, literal.im));
  }
  return Scalar(literal.re);
}

// "-128 to 127": the range of an integer dtype, from its width.
std::string integer_range(DType dtype) {
  const auto bits = static_cast<unsigned>(itemsize(dtype) * 8);
  if (is_unsigned(dtype)) return fmt::format("0 to {}", std::numeric_limits<std::uint64_t>::max() >> (64 - bits));
  const std::uint64_t limit = std::uint64_t{1} << (bits - 1);
  return fmt::format("-{} to {}", limit, limit - 1);
}

Scalar typed_scalar(const std::string& value, const Literal& literal, DType dtype) {
  if (is_integer(dtype)) {
    if (literal.kind != Literal::integer) throw bad_value(fmt::format("{} needs an integer value", to_string(dtype)));
    if (literal.below_int64() || !untyped_scalar(literal).fits(dtype)) {
      throw bad_value(fmt::format("{} is out of the range of {} ({})", value, to_string(dtype), integer_range(dtype)));
    }
  }
  if (dtype == DType::bool_ && literal.kind != Literal::boolean &&
      !(literal.kind == Literal::integer && literal.magnitude <= 1)) {
    throw bad_value("bool needs true, false, 1 or 0");
  }
  if (literal.kind == Literal::complex && !is_complex(dtype)) {
    throw bad_value(fmt::format("a complex value for the real dtype {}", to_string(dtype)));
  }
  return scalar_as(untyped_scalar(literal), dtype);
}

}  // namespace

std::string HostValue::c_order_data() const {
  const std::size_t item = itemsize(dtype);
  std::string out(nbytes(), '\0');
  const std::int64_t count = size();
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::int64_t k = 0; k < count; ++k) {
    std::int64_t at = offset;
    for (std::size_t d = 0; d < shape.size(); ++d) at += index[d] * strides[d];
    std::memcpy(&out[static_cast<std::size_t>(k) * item], &data[static_cast<std::size_t>(at)], item);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

HostValue make_host_array(HostFill fill, DType dtype, std::vector<std::int64_t> shape, std::uint64_t seed) {
  switch (fill) {
    case HostFill::random: return random_array(dtype, std::move(shape), seed);
    case HostFill::arange:
      // Through int64, so that integer dtypes wrap as NumPy's astype does.
      return generated(dtype, std::move(shape), [](std::int64_t k) { return Scalar(static_cast<long long>(k)); });
    case HostFill::zeros:
    case HostFill::ones: break;
  }
  const Scalar fill_value(static_cast<long long>(fill == HostFill::ones ? 1 : 0));
  return generated(dtype, std::move(shape), [&fill_value](std::int64_t) { return fill_value; });
}

HostValue host_array(NpyArray array) {
  HostValue out;
  out.is_array = true;
  out.dtype = array.dtype;
  ArrayRef layout = ArrayRef::contiguous(std::uint64_t{0}, array.dtype, array.shape);
  if (array.fortran_order) {
    // Fortran order is C order of the reversed shape, transposed back.
    std::vector<std::int64_t> reversed(array.shape.rbegin(), array.shape.rend());
    layout = ArrayRef::contiguous(std::uint64_t{0}, array.dtype, std::move(reversed)).transposed();
  }
  out.shape = std::move(array.shape);
  out.strides = layout.strides;
  out.data = std::move(array.data);
  return out;
}

std::optional<Scalar> parse_scalar(const std::string& text) {
  const std::size_t colon = text.find(':');
  const std::string value = text.substr(0, colon);
  const std::optional<Literal> literal = parse_literal(value);
  if (!literal) return std::nullopt;
  if (colon != std::string::npos) return typed_scalar(value, *literal, parse_dtype_name(text.substr(colon + 1), text));
  if (literal->below_int64()) throw bad_value("out of the range of int64");
  return untyped_scalar(*literal);
}

DType parse_dtype_name(const std::string& text, const std::string& where) {
  if (text == "float") {  // NOTE [ ambiguous float ] (src/core/signature.cpp)
    throw bad_value(fmt::format("{}: \"float\" is ambiguous (NumPy's float is float64, CUDA's float is float32): "
                                "write float32 or float64",
                                where));
  }
  if (auto dtype = parse_dtype(text)) return *dtype;
  std::size_t count = 0;
  const DType* all = all_dtypes(&count);
  std::string names;
  for (std::size_t k = 0; k < count; ++k) names += fmt::format("{}{}", k ? ", " : "", to_string(all[k]));
  throw bad_value(fmt::format("{}: unknown dtype \"{}\" (known: {})", where, text, names));
}

Scalar scalar_as(const Scalar& scalar, DType dtype) {
  if (scalar.dtype == dtype) return scalar;
  unsigned char bytes[16] = {};
  scalar.convert_to(dtype, bytes);
  return Scalar::from_bytes(dtype, bytes);
}

}  // namespace kernc
