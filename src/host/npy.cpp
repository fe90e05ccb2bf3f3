// NumPy .npy files (format 1.0, 2.0, 3.0): see numpy/lib/format.py for the format and
// NOTE [ npy dtypes ] in kernc/npy.hpp for what kernc reads and writes.

#include "kernc/npy.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "kernc/dims.hpp"
#include "kernc/error.hpp"
#include "platform/files.hpp"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "kernc's .npy code assumes a little-endian host"
#endif

namespace kernc {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kAlignment = 64;  // numpy.lib.format.ARRAY_ALIGN

struct TypeCode {
  DType dtype;
  char kind;
  int size;
  bool ml_dtypes;  // one of ml_dtypes' types: its byte order is '=', written '<' at any size
};

// NumPy's kind letter and item size for every kernc dtype NumPy has, and what np.save
// writes for ml_dtypes' (NOTE [ npy dtypes ]).
constexpr TypeCode kTypeCodes[] = {
    {DType::bool_, 'b', 1, false},       {DType::int8, 'i', 1, false},        {DType::uint8, 'u', 1, false},
    {DType::int16, 'i', 2, false},       {DType::uint16, 'u', 2, false},      {DType::int32, 'i', 4, false},
    {DType::uint32, 'u', 4, false},      {DType::int64, 'i', 8, false},       {DType::uint64, 'u', 8, false},
    {DType::float16, 'f', 2, false},     {DType::float32, 'f', 4, false},     {DType::float64, 'f', 8, false},
    {DType::complex64, 'c', 8, false},   {DType::complex128, 'c', 16, false}, {DType::float8_e5m2, 'f', 1, true},
    {DType::float8_e4m3fn, 'V', 1, true}, {DType::bfloat16, 'V', 2, true},
};

Error malformed(const std::string& name, const std::string& what) {
  return Error(ErrorCode::invalid_argument, fmt::format("{}: not a usable .npy file: {}", name, what));
}

// The header dictionary, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
// Parsed strictly (exactly these three keys, Python literal syntax) but tolerantly
// (any blanks, either quote, a trailing comma, "(3,)", "()", Python 2's "3L").
struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  Header parse() {
    Header header;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    skip_blanks();
    expect('{');
    skip_blanks();
    while (peek() != '}') {
      std::string key = string_literal("a key");
      skip_blanks();
      expect(':');
      skip_blanks();
      auto once = [&](bool& seen) {
        if (seen) fail(fmt::format("the key '{}' appears twice", key));
        seen = true;
      };
      if (key == "descr") {
        once(seen_descr);
        if (peek() == '[') fail("structured dtypes (a list as 'descr') are not supported");
        header.descr = string_literal("the 'descr' value");
      } else if (key == "fortran_order") {
        once(seen_order);
        header.fortran_order = boolean();
      } else if (key == "shape") {
        once(seen_shape);
        header.shape = tuple();
      } else {
        fail(fmt::format("unexpected key '{}' (a .npy header has 'descr', 'fortran_order' and 'shape')", key));
      }
      skip_blanks();
      if (peek() == ',') {
        ++pos_;
        skip_blanks();
      } else if (peek() != '}') {
        fail("expected ',' or '}' after a value");
      }
    }
    ++pos_;
    skip_blanks();
    if (pos_ != text_.size()) fail("text after the closing '}'");
    if (!seen_descr || !seen_order || !seen_shape) {
      fail(fmt::format("missing key '{}'", !seen_descr ? "descr" : !seen_order ? "fortran_order" : "shape"));
    }
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    std::string_view shown = text_.substr(0, std::min<std::size_t>(text_.size(), 200));
    while (!shown.empty() && std::isspace(static_cast<unsigned char>(shown.back()))) shown.remove_suffix(1);
    throw malformed(name_, fmt::format("header dictionary at character {}: {} (header: {})", pos_ + 1, what, shown));
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_blanks() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void expect(char c) {
    if (peek() != c) fail(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string string_literal(const char* what) {
    char quote = peek();
    if (quote != '\'' && quote != '"') fail(fmt::format("expected a quoted string as {}", what));
    std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    if (value.find('\\') != std::string::npos) fail("escapes in strings are not supported");
    pos_ = end + 1;
    return value;
  }
  bool boolean() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False as the 'fortran_order' value");
  }
  std::int64_t integer() {
    std::size_t start = pos_;
    std::int64_t value = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      int digit = peek() - '0';
      if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10) fail("an extent is too large");
      value = value * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) fail(peek() == '-' ? "a negative extent" : "expected a non-negative integer extent");
    if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2 longs
    return value;
  }
  std::vector<std::int64_t> tuple() {
    expect('(');
    std::vector<std::int64_t> items;
    skip_blanks();
    while (peek() != ')') {
      items.push_back(integer());
      skip_blanks();
      if (peek() == ',') {
        ++pos_;
        skip_blanks();
      } else if (peek() != ')') {
        fail("expected ',' or ')' in the shape");
      }
    }
    ++pos_;
    return items;
  }

  std::string_view text_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

struct Descr {
  DType dtype;
  bool big_endian;
};

// The dtype of raw bytes ('V'): ml_dtypes' '<V2' is bfloat16 (its only 2-byte type of
// kind V); a 1-byte one (ml_dtypes' float8_e4m3fn, and its int4, float8_e4m3fnuz, ...) or
// NumPy's own '|V' is what the caller says, if it is a kernc dtype of that size.
DType raw_bytes_dtype(const std::string& descr, char order, int size, std::optional<DType> hint, const std::string& name) {
  if (hint) {
    if (static_cast<int>(itemsize(*hint)) != size || is_integer(*hint) || *hint == DType::bool_) {
      throw malformed(name, fmt::format("descr '{}' is {}-byte raw bytes, which cannot hold {} (a raw-bytes dtype is "
                                        "bfloat16, float8_e4m3fn or float8_e5m2)",
                                        descr, size, to_string(*hint)));
    }
    return *hint;
  }
  if (size == 2 && order != '|') return DType::bfloat16;
  throw malformed(name, fmt::format("descr '{}' is raw bytes (NumPy's 'void'): ml_dtypes saves float8_e4m3fn (and "
                                    "its other 1-byte types) as '<V1' without naming the type; say which dtype the "
                                    "bytes are (read_npy's void_dtype; kernc run: FILE.npy:float8_e4m3fn)",
                                    descr));
}

Descr parse_descr(const std::string& descr, const std::string& name, std::optional<DType> hint) {
  std::string_view text = descr;
  char order = '|';
  if (!text.empty() && std::string_view("<>|=").find(text[0]) != std::string_view::npos) {
    order = text[0];
    text.remove_prefix(1);
  }
  if (text.empty()) throw malformed(name, fmt::format("empty dtype descr '{}'", descr));
  char kind = text[0];
  std::string_view digits = text.substr(1);
  switch (kind) {
    case 'O': throw malformed(name, "object arrays (descr 'O') hold Python objects, not numbers; kernc cannot read them");
    case 'V': {
      const std::string_view size_text = text.substr(1);
      if (size_text != "1" && size_text != "2") {
        throw malformed(name, fmt::format("descr '{}' is raw bytes (NumPy's 'void') of a size no kernc dtype has", descr));
      }
      return {raw_bytes_dtype(descr, order, size_text == "1" ? 1 : 2, hint, name), order == '>'};
    }
    case 'U':
    case 'S':
    case 'a': throw malformed(name, fmt::format("descr '{}' is a string dtype; kernc reads only numeric dtypes", descr));
    case 'M':
    case 'm':
      throw malformed(name, fmt::format("descr '{}' is a datetime dtype; kernc reads only numeric dtypes", descr));
    default: break;
  }
  int size = 0;
  if (digits.empty() || digits.size() > 3 || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    throw malformed(name, fmt::format("unknown dtype descr '{}'", descr));
  }
  for (char c : digits) size = size * 10 + (c - '0');
  for (const auto& code : kTypeCodes) {
    if (code.kind == kind && code.size == size) {
      if (hint && *hint != code.dtype) {
        throw malformed(name, fmt::format("descr '{}' is {}, not {}", descr, to_string(code.dtype), to_string(*hint)));
      }
      return {code.dtype, order == '>'};
    }
  }
  if ((kind == 'f' && size >= 10) || (kind == 'c' && size >= 20)) {
    throw malformed(name, fmt::format("descr '{}' ({} bytes per element, NumPy's long double) has no kernc dtype",
                                      descr, size));
  }
  throw malformed(name, fmt::format("unknown dtype descr '{}'", descr));
}

std::uint64_t read_le(std::string_view bytes, std::size_t offset, std::size_t width) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width; ++i) value |= std::uint64_t(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  return value;
}

// The element count of `shape`, checking that its byte size fits in memory.
std::int64_t element_count(const std::vector<std::int64_t>& shape, std::size_t item, const std::string& name) {
  std::int64_t count = 1;
  const std::int64_t limit = std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(item);
  for (auto extent : shape) {
    if (extent < 0) throw Error(ErrorCode::invalid_argument, fmt::format("{}: negative extent {}", name, extent));
    if (extent != 0 && count > limit / extent) {
      throw Error(ErrorCode::invalid_argument, fmt::format("{}: the shape's byte size overflows", name));
    }
    count *= extent;
  }
  return count;
}

// Big-endian elements to little-endian, in place; complex numbers swap each half.
void swap_bytes(std::string& data, DType dtype) {
  std::size_t width = is_complex(dtype) ? itemsize(dtype) / 2 : itemsize(dtype);
  if (width == 1) return;
  for (std::size_t offset = 0; offset + width <= data.size(); offset += width) {
    std::reverse(data.begin() + static_cast<std::ptrdiff_t>(offset),
                 data.begin() + static_cast<std::ptrdiff_t>(offset + width));
  }
}

// Column-major (Fortran) elements of `shape` to row-major (C) order.
std::string fortran_to_c(const std::string& data, const std::vector<std::int64_t>& shape, std::size_t item) {
  const std::size_t rank = shape.size();
  if (rank < 2 || data.empty()) return data;
  std::vector<std::int64_t> c_strides(rank, 1);
  for (std::size_t k = rank - 1; k-- > 0;) c_strides[k] = c_strides[k + 1] * shape[k + 1];
  std::string out(data.size(), '\0');
  std::vector<std::int64_t> index(rank, 0);
  const std::size_t count = data.size() / item;
  std::int64_t c_offset = 0;
  for (std::size_t f = 0; f < count; ++f) {
    std::memcpy(&out[static_cast<std::size_t>(c_offset) * item], &data[f * item], item);
    // Next index in Fortran order: the first axis varies fastest.
    for (std::size_t k = 0; k < rank; ++k) {
      c_offset += c_strides[k];
      if (++index[k] < shape[k]) break;
      c_offset -= c_strides[k] * shape[k];
      index[k] = 0;
    }
  }
  return out;
}

}  // namespace

std::string format_numpy_shape(const std::vector<std::int64_t>& shape) {
  if (shape.empty()) return "()";
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  std::string out = "(";
  for (std::size_t k = 0; k < shape.size(); ++k) out += fmt::format("{}{}", k ? ", " : "", shape[k]);
  return out + ")";
}


std::int64_t NpyArray::size() const noexcept { return kernc::element_count(shape); }

std::string npy_descr(DType dtype) {
  for (const auto& code : kTypeCodes) {
    if (code.dtype == dtype) return fmt::format("{}{}{}", code.size == 1 && !code.ml_dtypes ? '|' : '<', code.kind, code.size);
  }
  throw Error(ErrorCode::invalid_argument, fmt::format("{} has no .npy type code", to_string(dtype)));
}

NpyArray decode_npy(std::string_view bytes, const std::string& name, NpyOrder order, std::optional<DType> void_dtype) {
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    throw malformed(name, "it does not start with the magic \\x93NUMPY");
  }
  if (bytes.size() < 10) throw malformed(name, "truncated before the header length");
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    throw malformed(name, fmt::format("format version {}.{} (kernc reads 1.0, 2.0 and 3.0)", major, minor));
  }
  const std::size_t length_width = major == 1 ? 2 : 4;
  const std::size_t header_start = 8 + length_width;
  if (bytes.size() < header_start) throw malformed(name, "truncated before the header length");
  const std::size_t header_length = read_le(bytes, 8, length_width);
  if (bytes.size() - header_start < header_length) {
    throw malformed(name, fmt::format("truncated header: {} bytes announced, {} present", header_length,
                                      bytes.size() - header_start));
  }
  std::string_view text = bytes.substr(header_start, header_length);
  if (text.empty() || text.back() != '\n') throw malformed(name, "the header does not end with a newline");
  Header header = HeaderParser(text, name).parse();
  Descr descr = parse_descr(header.descr, name, void_dtype);

  NpyArray array;
  array.dtype = descr.dtype;
  array.shape = header.shape;
  array.fortran_order = header.fortran_order;
  const std::size_t item = itemsize(descr.dtype);
  const auto count = static_cast<std::uint64_t>(element_count(header.shape, item, name));
  const std::uint64_t expected = count * item;
  const std::size_t data_start = header_start + header_length;
  const std::uint64_t present = bytes.size() - data_start;
  if (present != expected) {
    throw malformed(name, fmt::format("{} data: shape {} of {} needs {} bytes, the file has {}",
                                      present < expected ? "truncated" : "unexpected bytes after the", format_numpy_shape(header.shape),
                                      header.descr, expected, present));
  }
  array.data.assign(bytes.substr(data_start));
  if (descr.big_endian) swap_bytes(array.data, descr.dtype);
  if (header.fortran_order && order == NpyOrder::c) array.data = fortran_to_c(array.data, array.shape, item);
  return array;
}

NpyArray read_npy(const std::string& path, NpyOrder order, std::optional<DType> void_dtype) {
  return decode_npy(platform::read_file(path), path, order, void_dtype);
}

std::string encode_npy(DType dtype, const std::vector<std::int64_t>& shape, const void* data) {
  const std::string descr = npy_descr(dtype);
  const std::size_t item = itemsize(dtype);
  const auto count = static_cast<std::size_t>(element_count(shape, item, "write_npy"));
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, format_numpy_shape(shape));
  // Version 1.0 has a 16-bit header length; 2.0 only differs by a 32-bit one.
  int major = dict.size() + kAlignment + 12 > 0xffff ? 2 : 1;
  std::size_t prefix = major == 1 ? 10 : 12;
  std::size_t padded = (prefix + dict.size() + 1 + kAlignment - 1) / kAlignment * kAlignment;
  std::size_t header_length = padded - prefix;
  dict.append(header_length - dict.size() - 1, ' ');
  dict.push_back('\n');

  std::string out(kMagic);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  for (std::size_t i = 0; i < prefix - 8; ++i) out.push_back(static_cast<char>((header_length >> (8 * i)) & 0xff));
  out += dict;
  if (count > 0) out.append(static_cast<const char*>(data), count * item);
  return out;
}

void write_npy(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape, const void* data) {
  std::string bytes;
  try {
    bytes = encode_npy(dtype, shape, data);
  } catch (const Error& error) {
    throw Error(error.code(), fmt::format("{}: {}", path, error.what()));
  }
  platform::write_file_atomic(path, bytes, 0644);
}

}  // namespace kernc
