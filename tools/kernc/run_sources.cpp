#include "run_sources.hpp"

#include <unistd.h>

#include <cctype>
#include <charconv>
#include <limits>
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
    "  FILE.npy, npy:FILE           a NumPy .npy file (any kernc dtype, C or Fortran order; bfloat16 and\n"
    "                               float8 as ml_dtypes saves them)\n"
    "  FILE.npy:DTYPE               the same, saying what raw bytes are: ml_dtypes saves float8_e4m3fn\n"
    "                               as '<V1' without naming it (x.npy:float8_e4m3fn)\n"
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

// Decimal digits only: no sign, no spaces, nothing past 2^64 - 1.
std::optional<std::uint64_t> parse_unsigned(const std::string& text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Refuses an array that would take more than half of this host's memory before it is
// allocated: asking for more ends in bad_alloc or the OOM killer, never in a message
// (issue 15, item 7).
void check_host_memory(DType dtype, const std::vector<std::int64_t>& shape) {
  const double needed = static_cast<double>(element_count(shape)) * static_cast<double>(itemsize(dtype));
  const double host = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (host > 0 && needed > host / 2) {
    throw bad_source(fmt::format("a {} array of shape {} needs {} of host memory, more than half of this host's {}",
                                 to_string(dtype), format_numpy_shape(shape),
                                 format_size(static_cast<std::uint64_t>(needed)),
                                 format_size(static_cast<std::uint64_t>(host))));
  }
}

SourceValue scalar_source(const std::string& text) {
  std::optional<Scalar> scalar = parse_scalar(text);
  if (!scalar) throw bad_source(fmt::format("not a .npy file, a generator or a scalar literal.\n{}", kSourceSyntax));
  SourceValue out;
  out.scalar = *scalar;
  out.dtype = out.scalar.dtype;
  out.description = fmt::format("{} ({} scalar)", format_scalar(out.scalar), to_string(out.dtype));
  return out;
}

}  // namespace

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
    origin = text;
    std::uint64_t seed = 0;
    if (random && parts.size() == 4) {
      auto given = parse_unsigned(parts[3]);
      if (!given) throw bad_source(fmt::format("the seed \"{}\" is not a non-negative integer", parts[3]));
      seed = *given;
    } else if (random) {
      seed = std::random_device{}();
      origin = fmt::format("{}:{}", text, seed);
    }
    check_host_memory(dtype, shape);
    HostFill fill = HostFill::zeros;
    if (random) fill = HostFill::random;
    if (kind == "arange") fill = HostFill::arange;
    if (kind == "ones") fill = HostFill::ones;
    return make_host_array(fill, dtype, std::move(shape), seed);
  }
  // FILE.npy:DTYPE: the dtype of a file of raw bytes (NOTE [ npy dtypes ]).
  std::optional<DType> void_dtype;
  std::string npy_text = text;
  const std::size_t colon = text.rfind(':');
  if (colon != std::string::npos && ends_with(text.substr(0, colon), ".npy")) {
    try {
      void_dtype = parse_dtype_name(text.substr(colon + 1), "the dtype after FILE.npy:");
    } catch (const Error& error) {
      throw bad_source(error.what());
    }
    npy_text = text.substr(0, colon);
  }
  if (ends_with(npy_text, ".npy") || npy_text.rfind("npy:", 0) == 0) {
    std::string path = npy_text.rfind("npy:", 0) == 0 ? npy_text.substr(4) : npy_text;
    // A Fortran-ordered file stays as stored: its view has Fortran strides, as in NumPy.
    SourceValue out = host_array(read_npy(path, NpyOrder::as_stored, void_dtype));
    origin = npy_text == text ? path : fmt::format("{}:{}", path, to_string(*void_dtype));
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

std::string format_scalar(const Scalar& scalar) { return format_element(scalar.dtype, {scalar.real, scalar.imag}); }

}  // namespace kernc::cli
