#include "run_sources.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <random>

#include <fmt/format.h>

#include "kernc/config.hpp"
#include "kernc/error.hpp"
#include "kernc/npy.hpp"
#include "run_display.hpp"
#include "run_views.hpp"

namespace kernc::cli {

const char* const kSourceSyntax =
    "SOURCE is one of:\n"
    "  FILE.npy, npy:FILE           a NumPy .npy file (any kernc dtype but bfloat16, C or Fortran order)\n"
    "  random:SHAPE:DTYPE[:SEED]    uniform in [-1, 1) for floats (both parts of complex), integers in\n"
    "                               [-10, 10] (unsigned [0, 20]), bool 0/1; the seed is printed so that\n"
    "                               the same data can be made again\n"
    "  arange:SHAPE:DTYPE           0, 1, 2, ... in C order\n"
    "  zeros:SHAPE:DTYPE            all 0\n"
    "  ones:SHAPE:DTYPE             all 1\n"
    "  VALUE[:DTYPE]                a scalar: 3.5, -2, 1e-3, true, 1+2j, 7:int8, 2.5:float32; untyped\n"
    "                               integers are int64, reals float64, complex values complex128\n"
    "  @NAME                        no data of its own: the device buffer of argument NAME (a parameter\n"
    "                               name; raw kernels: or a 0-based position), for in-place calls as\n"
    "                               CuPy's k(x, y, x): --arg x.npy --arg y.npy --arg @x\n"
    "SHAPE is 1000, 64x1000 or () (0-d); DTYPE a NumPy name: float32, int8, complex64, f4, ...";

const char* const kSourceHint =
    "SOURCE: FILE.npy, random:SHAPE:DTYPE[:SEED], arange:SHAPE:DTYPE, zeros:SHAPE:DTYPE, ones:SHAPE:DTYPE or a "
    "scalar such as 3.5, -2, 7:int8 (see kernc run --help)";

namespace {

// What is wrong with a SOURCE; the caller names the source (`--in x=SOURCE: ...`), once.
Error bad_source(const std::string& what) { return Error(ErrorCode::invalid_argument, what); }

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<std::uint64_t> parse_unsigned(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') return std::nullopt;
  return value;
}

// Writes (re, im) as one element of `dtype` at `out`. Integers are converted through
// int64, so out-of-range values wrap as NumPy's astype does.
void store(DType dtype, unsigned char* out, double re, double im) {
  auto put = [out](auto value) { std::memcpy(out, &value, sizeof value); };
  auto as_int = [re] { return static_cast<std::int64_t>(re); };
  switch (dtype) {
    case DType::bool_: put(static_cast<std::uint8_t>(re != 0 || im != 0)); break;
    case DType::int8: put(static_cast<std::int8_t>(as_int())); break;
    case DType::int16: put(static_cast<std::int16_t>(as_int())); break;
    case DType::int32: put(static_cast<std::int32_t>(as_int())); break;
    case DType::int64: put(as_int()); break;
    case DType::uint8: put(static_cast<std::uint8_t>(as_int())); break;
    case DType::uint16: put(static_cast<std::uint16_t>(as_int())); break;
    case DType::uint32: put(static_cast<std::uint32_t>(as_int())); break;
    case DType::uint64: put(static_cast<std::uint64_t>(as_int())); break;
    case DType::float16: put(float_to_half(static_cast<float>(re))); break;
    case DType::bfloat16: put(float_to_bfloat16(static_cast<float>(re))); break;
    case DType::float32: put(static_cast<float>(re)); break;
    case DType::float64: put(re); break;
    case DType::complex64: put(std::complex<float>(static_cast<float>(re), static_cast<float>(im))); break;
    case DType::complex128: put(std::complex<double>(re, im)); break;
  }
}

std::vector<std::int64_t> reversed(std::vector<std::int64_t> shape) {
  std::reverse(shape.begin(), shape.end());
  return shape;
}

// An array of `shape` whose element k is value(k) = {re, im}.
template <class Value>
SourceValue generated(DType dtype, std::vector<std::int64_t> shape, Value&& value) {
  SourceValue out;
  out.is_array = true;
  out.dtype = dtype;
  out.strides = ArrayRef::contiguous(std::uint64_t{0}, dtype, shape).strides;
  out.shape = std::move(shape);
  const std::int64_t count = element_count(out.shape);
  const std::size_t item = itemsize(dtype);
  // Checked before allocating: asking for more than the host has ends in bad_alloc or
  // the OOM killer, never in a message (issue 15, item 7).
  const double needed = static_cast<double>(count) * static_cast<double>(item);
  const double host = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (host > 0 && needed > host / 2) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("a {} array of shape {} needs {} of host memory, more than half of this host's {}",
                            to_string(dtype), format_numpy_shape(out.shape),
                            format_size(static_cast<std::uint64_t>(needed)), format_size(static_cast<std::uint64_t>(host))));
  }
  try {
    out.data.assign(static_cast<std::size_t>(count) * item, '\0');
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::invalid_argument, fmt::format("cannot allocate {} of host memory for a {} array of shape {}",
                                                         format_size(static_cast<std::uint64_t>(needed)),
                                                         to_string(dtype), format_numpy_shape(out.shape)));
  }
  auto* bytes = reinterpret_cast<unsigned char*>(out.data.data());
  for (std::int64_t k = 0; k < count; ++k) {
    auto [re, im] = value(k);
    store(dtype, bytes + static_cast<std::size_t>(k) * item, re, im);
  }
  return out;
}

SourceValue random_array(DType dtype, std::vector<std::int64_t> shape, std::uint64_t seed) {
  // mt19937_64's sequence is fixed by the standard, and the mapping below is ours, so a
  // seed makes the same data with any compiler.
  std::mt19937_64 engine(seed);
  auto unit = [&engine] { return static_cast<double>(engine() >> 11) * 0x1.0p-53 * 2.0 - 1.0; };  // [-1, 1)
  return generated(dtype, std::move(shape), [&](std::int64_t) -> std::pair<double, double> {
    if (dtype == DType::bool_) return {static_cast<double>(engine() >> 63), 0.0};
    if (is_unsigned(dtype)) return {static_cast<double>(engine() % 21), 0.0};
    if (is_integer(dtype)) return {static_cast<double>(static_cast<std::int64_t>(engine() % 21) - 10), 0.0};
    double re = unit();
    return {re, is_complex(dtype) ? unit() : 0.0};
  });
}

// A scalar literal: true/false, an integer, a real, or a complex "RE+IMj" / "IMj".
struct Literal {
  enum Kind { boolean, integer, real, complex } kind = real;
  bool negative = false;
  std::uint64_t magnitude = 0;  // integer: |value|
  double re = 0, im = 0;
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
  if (auto magnitude = parse_unsigned(digits)) {
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

// The integer range of an integer dtype, as (min, max) in long double (exact for 64 bits).
std::pair<long double, long double> integer_range(DType dtype) {
  switch (dtype) {
    case DType::int8: return {-128.0L, 127.0L};
    case DType::int16: return {-32768.0L, 32767.0L};
    case DType::int32: return {-2147483648.0L, 2147483647.0L};
    case DType::int64: return {-9223372036854775808.0L, 9223372036854775807.0L};
    case DType::uint8: return {0, 255.0L};
    case DType::uint16: return {0, 65535.0L};
    case DType::uint32: return {0, 4294967295.0L};
    default: return {0, 18446744073709551615.0L};
  }
}

Scalar typed_scalar(const std::string& text, const Literal& literal, DType dtype) {
  if (is_integer(dtype)) {
    if (literal.kind != Literal::integer) {
      throw bad_source(fmt::format("{} needs an integer value", to_string(dtype)));
    }
    long double value = literal.negative ? -static_cast<long double>(literal.magnitude) : literal.magnitude;
    auto [low, high] = integer_range(dtype);
    if (value < low || value > high) {
      throw bad_source(fmt::format("{} is out of the range of {} ({} to {})", text.substr(0, text.find(':')),
                                         to_string(dtype), static_cast<long long>(low),
                                         dtype == DType::uint64 ? std::string("18446744073709551615")
                                                                : fmt::format("{}", static_cast<long long>(high))));
    }
    std::int64_t as_signed = literal.negative ? static_cast<std::int64_t>(0 - literal.magnitude)
                                              : static_cast<std::int64_t>(literal.magnitude);
    switch (dtype) {
      case DType::int8: return Scalar(static_cast<signed char>(as_signed));
      case DType::int16: return Scalar(static_cast<short>(as_signed));
      case DType::int32: return Scalar(static_cast<int>(as_signed));
      case DType::int64: return Scalar(static_cast<long long>(as_signed));
      case DType::uint8: return Scalar(static_cast<unsigned char>(literal.magnitude));
      case DType::uint16: return Scalar(static_cast<unsigned short>(literal.magnitude));
      case DType::uint32: return Scalar(static_cast<unsigned int>(literal.magnitude));
      default: return Scalar(static_cast<unsigned long long>(literal.magnitude));
    }
  }
  if (dtype == DType::bool_) {
    if (literal.kind == Literal::boolean || (literal.kind == Literal::integer && literal.magnitude <= 1)) {
      return Scalar(literal.re != 0);
    }
    throw bad_source("bool needs true, false, 1 or 0");
  }
  if (literal.kind == Literal::complex && !is_complex(dtype)) {
    throw bad_source(fmt::format("a complex value for the real dtype {}", to_string(dtype)));
  }
  switch (dtype) {
    case DType::float32: return Scalar(static_cast<float>(literal.re));
    case DType::float64: return Scalar(literal.re);
    case DType::complex64:
      return Scalar(std::complex<float>(static_cast<float>(literal.re), static_cast<float>(literal.im)));
    case DType::complex128: return Scalar(std::complex<double>(literal.re, literal.im));
    default: return Scalar::of(dtype, literal.re);  // float16, bfloat16
  }
}

Scalar untyped_scalar(const Literal& literal) {
  switch (literal.kind) {
    case Literal::boolean: return Scalar(literal.re != 0);
    case Literal::integer:
      if (!literal.negative && literal.magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return Scalar(static_cast<unsigned long long>(literal.magnitude));
      }
      return Scalar(static_cast<long long>(literal.negative ? 0 - literal.magnitude : literal.magnitude));
    case Literal::real: return Scalar(literal.re);
    case Literal::complex: return Scalar(std::complex<double>(literal.re, literal.im));
  }
  return Scalar(literal.re);
}

SourceValue scalar_source(const std::string& text) {
  std::size_t colon = text.find(':');
  std::string value = text.substr(0, colon);
  auto literal = parse_literal(value);
  if (!literal) {
    throw bad_source(fmt::format("not a .npy file, a generator or a scalar literal.\n{}", kSourceSyntax));
  }
  SourceValue out;
  if (colon == std::string::npos) {
    if (literal->kind == Literal::integer && literal->negative &&
        literal->magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1) {
      throw bad_source("out of the range of int64");
    }
    out.scalar = untyped_scalar(*literal);
  } else {
    out.scalar = typed_scalar(text, *literal, parse_dtype_name(text.substr(colon + 1), text));
  }
  out.dtype = out.scalar.dtype;
  out.description = fmt::format("{} ({} scalar)", format_scalar(out.scalar), to_string(out.dtype));
  return out;
}

}  // namespace

std::int64_t element_count(const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (auto extent : shape) count *= extent;
  return count;
}

std::vector<std::int64_t> parse_shape(const std::string& text) {
  if (text == "()") return {};
  std::vector<std::int64_t> shape;
  // The product of the nonzero extents: a zero extent makes no elements, but the strides
  // of the other axes are still that large (arange:0x2^40x2^40 must be refused too).
  std::int64_t count = 1;
  for (const auto& part : split(text, 'x')) {
    auto extent = parse_unsigned(part);
    if (!extent || *extent > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("shape \"{}\": expected extents joined by x, e.g. 1000 or 64x1000, or () for 0-d", text));
    }
    shape.push_back(static_cast<std::int64_t>(*extent));
    if (*extent == 0) continue;
    if (count > std::numeric_limits<std::int64_t>::max() / 16 / static_cast<std::int64_t>(*extent)) {
      throw Error(ErrorCode::invalid_argument, fmt::format("shape \"{}\" is too large", text));
    }
    count *= static_cast<std::int64_t>(*extent);
  }
  return shape;
}

DType parse_dtype_name(const std::string& text, const std::string& where) {
  if (auto dtype = parse_dtype(text)) return *dtype;
  std::size_t count = 0;
  const DType* all = all_dtypes(&count);
  std::string names;
  for (std::size_t k = 0; k < count; ++k) names += fmt::format("{}{}", k ? ", " : "", to_string(all[k]));
  throw Error(ErrorCode::invalid_argument, fmt::format("{}: unknown dtype \"{}\" (known: {})", where, text, names));
}

namespace {

// A SOURCE without its view suffix. For an array, `origin` is set to the text that makes
// it again ("random:1000:float32:SEED", "x.npy") and the description is left to the caller.
SourceValue load_base_source(const std::string& text, std::string& origin) {
  const std::vector<std::string> parts = split(text, ':');
  const std::string& kind = parts[0];
  if (parts.size() > 1 && (kind == "random" || kind == "arange" || kind == "zeros" || kind == "ones")) {
    const bool random = kind == "random";
    if (parts.size() < 3 || parts.size() > (random ? 4u : 3u)) {
      throw bad_source(random ? "expected random:SHAPE:DTYPE or random:SHAPE:DTYPE:SEED, e.g. random:64x1000:float32"
                                    : fmt::format("expected {}:SHAPE:DTYPE, e.g. {}:1000:float32", kind, kind));
    }
    std::vector<std::int64_t> shape;
    DType dtype;
    try {
      shape = parse_shape(parts[1]);
      dtype = parse_dtype_name(parts[2], "dtype");
    } catch (const Error& error) {
      throw bad_source(error.what());
    }
    SourceValue out;
    origin = text;
    if (random) {
      std::uint64_t seed = 0;
      if (parts.size() == 4) {
        auto given = parse_unsigned(parts[3]);
        if (!given) throw bad_source(fmt::format("the seed \"{}\" is not a non-negative integer", parts[3]));
        seed = *given;
      } else {
        seed = std::random_device{}();
        origin = fmt::format("{}:{}", text, seed);
      }
      out = random_array(dtype, shape, seed);
    } else {
      const double fill = kind == "ones" ? 1.0 : 0.0;
      const bool count_up = kind == "arange";
      out = generated(dtype, shape, [&](std::int64_t k) {
        return std::pair<double, double>(count_up ? static_cast<double>(k) : fill, 0.0);
      });
    }
    return out;
  }
  if (ends_with(text, ".npy") || text.rfind("npy:", 0) == 0) {
    std::string path = text.rfind("npy:", 0) == 0 ? text.substr(4) : text;
    // A Fortran-ordered file stays as stored: its view has Fortran strides, as in NumPy.
    NpyArray array = read_npy(path, NpyOrder::as_stored);
    SourceValue out;
    out.is_array = true;
    out.dtype = array.dtype;
    ArrayRef layout = ArrayRef::contiguous(std::uint64_t{0}, array.dtype, array.shape);
    if (array.fortran_order) layout = ArrayRef::contiguous(std::uint64_t{0}, array.dtype, reversed(array.shape)).transposed();
    out.shape = std::move(array.shape);
    out.strides = std::move(layout.strides);
    out.data = std::move(array.data);
    origin = path;
    return out;
  }
  return scalar_source(text);
}

}  // namespace

std::optional<SharedSource> parse_shared_source(const std::string& text) {
  if (text.empty() || text[0] != '@') return std::nullopt;
  auto [base, suffix] = split_view_suffix(text);
  const std::string name = base.substr(1);
  const bool position = !name.empty() && name.find_first_not_of("0123456789") == std::string::npos;
  const bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                          name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
                              std::string::npos;
  if (!position && !identifier) {
    throw bad_source(fmt::format("\"{}\": expected @NAME, the name of another argument (its device buffer is "
                                 "shared), e.g. @x",
                                 base));
  }
  return SharedSource{name, suffix};
}

SourceValue shared_value(const SharedSource& shared, const SourceValue& target, const std::string& target_name) {
  if (!target.is_array) {
    throw bad_source(fmt::format("{} is a scalar ({}); only an array argument's buffer can be shared", target_name,
                                 target.description));
  }
  SourceValue out;
  out.is_array = true;
  out.dtype = target.dtype;
  out.shape = target.shape;
  out.strides = target.strides;
  out.offset = target.offset;
  if (!shared.suffix.empty()) {
    ArrayRef view;
    try {
      view = apply_view(target.view(0), shared.suffix);
    } catch (const Error& error) {
      throw bad_source(error.what());
    }
    out.offset = static_cast<std::int64_t>(view.data);
    out.shape = std::move(view.shape);
    out.strides = std::move(view.strides);
  }
  // "float32 (1000,) @x (the device buffer of x)"; through a chain or a position, the
  // argument that owns the buffer: "@2 (the device buffer of out)".
  out.description = fmt::format("{} {}{} @{}{} (the device buffer of {})", to_string(out.dtype),
                                format_numpy_shape(out.shape),
                                out.c_contiguous() ? "" : fmt::format(" strides {}", format_numpy_shape(out.strides)),
                                shared.name, shared.suffix, target_name);
  return out;
}

SourceValue load_source(const std::string& text) {
  auto [base_text, suffix] = split_view_suffix(text);
  std::string origin;
  SourceValue out = load_base_source(suffix.empty() ? text : base_text, origin);
  if (!out.is_array) {
    if (!suffix.empty()) throw bad_source(fmt::format("{} is a scalar: a view ({}) needs an array", base_text, suffix));
    return out;
  }
  // Only a Fortran-ordered file makes a base that is not C-contiguous.
  const bool fortran_file = !out.c_contiguous();
  if (!suffix.empty()) {
    ArrayRef view;
    try {
      view = apply_view(out.view(0), suffix);
    } catch (const Error& error) {
      throw bad_source(error.what());
    }
    out.offset = static_cast<std::int64_t>(view.data);
    out.shape = std::move(view.shape);
    out.strides = std::move(view.strides);
  }
  // "float32 (3, 2) strides (4, 48) random:4x6:float32:7[::-1, ::2].T": the view's own
  // layout, then the text that makes it again.
  out.description = fmt::format("{} {}{} {}{}{}", to_string(out.dtype), format_numpy_shape(out.shape),
                                out.c_contiguous() ? "" : fmt::format(" strides {}", format_numpy_shape(out.strides)),
                                origin, suffix, fortran_file ? " (Fortran order, kept as a view)" : "");
  return out;
}

std::int64_t SourceValue::size() const noexcept { return is_array ? element_count(shape) : 1; }

std::size_t SourceValue::nbytes() const noexcept {
  return is_array ? static_cast<std::size_t>(size()) * itemsize(dtype) : 0;
}

ArrayRef SourceValue::view(std::uint64_t base) const {
  ArrayRef ref;
  ref.data = base + static_cast<std::uint64_t>(offset);
  ref.dtype = dtype;
  ref.shape = shape;
  ref.strides = strides;
  return ref;
}

std::string SourceValue::c_order_data() const {
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

Scalar scalar_as(const Scalar& scalar, DType dtype) {
  if (scalar.dtype == dtype) return scalar;
  unsigned char bytes[16] = {};
  scalar.convert_to(dtype, bytes);
  auto get = [&bytes](auto value) {
    std::memcpy(&value, bytes, sizeof value);
    return value;
  };
  switch (dtype) {
    case DType::bool_: return Scalar(bytes[0] != 0);
    case DType::int8: return Scalar(get(static_cast<signed char>(0)));
    case DType::int16: return Scalar(get(static_cast<short>(0)));
    case DType::int32: return Scalar(get(0));
    case DType::int64: return Scalar(get(0LL));
    case DType::uint8: return Scalar(get(static_cast<unsigned char>(0)));
    case DType::uint16: return Scalar(get(static_cast<unsigned short>(0)));
    case DType::uint32: return Scalar(get(0u));
    case DType::uint64: return Scalar(get(0ULL));
    case DType::float16: return Scalar::of(dtype, half_to_float(get(std::uint16_t{0})));
    case DType::bfloat16: return Scalar::of(dtype, bfloat16_to_float(get(std::uint16_t{0})));
    case DType::float32: return Scalar(get(0.0f));
    case DType::float64: return Scalar(get(0.0));
    case DType::complex64: return Scalar(get(std::complex<float>()));
    case DType::complex128: return Scalar(get(std::complex<double>()));
  }
  return scalar;
}

std::string format_scalar(const Scalar& scalar) {
  std::string bytes(16, '\0');
  scalar.convert_to(scalar.dtype, reinterpret_cast<unsigned char*>(bytes.data()));
  return format_element(scalar.dtype, element_at(scalar.dtype, bytes, 0));
}

}  // namespace kernc::cli
