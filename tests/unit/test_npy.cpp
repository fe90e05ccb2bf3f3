#include <doctest/doctest.h>

#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "kernc/array.hpp"
#include "kernc/error.hpp"
#include "kernc/npy.hpp"
#include "temp_dir.hpp"

using kernc::DType;
using kernc::NpyArray;
using kernc::test::contains;
using kernc::test::TempDir;

namespace {

std::string npy_golden_path(const std::string& name) {
  return std::string(KERNC_SOURCE_DIR) + "/tests/unit/data/npy/" + name;
}

// The elements of `array` as T, after checking the dtype's size.
template <class T>
std::vector<T> elements(const NpyArray& array) {
  REQUIRE(array.data.size() == static_cast<std::size_t>(array.size()) * sizeof(T));
  std::vector<T> out(static_cast<std::size_t>(array.size()));
  if (!out.empty()) std::memcpy(out.data(), array.data.data(), array.data.size());
  return out;
}

// A .npy file by hand: magic, version, header length, `dict` padded to 64 bytes, data.
std::string handmade(const std::string& dict, const std::string& data = {}, int major = 1) {
  std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

// Bytes for `count` elements of `dtype`, different from element to element (bools 0/1).
std::string pattern(DType dtype, std::int64_t count) {
  std::string bytes(static_cast<std::size_t>(count) * kernc::itemsize(dtype), '\0');
  for (std::size_t k = 0; k < bytes.size(); ++k) {
    bytes[k] = dtype == DType::bool_ ? static_cast<char>(k % 3 == 1) : static_cast<char>((k * 37 + 11) & 0xff);
  }
  return bytes;
}

// The error `decode_npy(bytes, "bad.npy")` throws (fails the test if it throws none).
kernc::Error decode_error(const std::string& bytes) {
  try {
    kernc::decode_npy(bytes, "bad.npy");
  } catch (const kernc::Error& error) {
    return error;
  }
  FAIL("decode_npy accepted a malformed file");
  return kernc::Error(kernc::ErrorCode::invalid_argument, "unreachable");
}

void check_rejected(const std::string& bytes, const std::string& reason) {
  kernc::Error error = decode_error(bytes);
  CHECK(error.code() == kernc::ErrorCode::invalid_argument);
  CHECK_MESSAGE(contains(error.what(), "bad.npy"), std::string(error.what()));
  CHECK_MESSAGE(contains(error.what(), reason), std::string(error.what()));
}

// A python3 that can import numpy ("" if none): the one on PATH, else Debian's (pyenv or a
// virtualenv may shadow the python3 that has python3-numpy).
std::string python_with_numpy() {
  for (const char* candidate : {"python3", "/usr/bin/python3"}) {
    std::string command = std::string(candidate) + " -c 'import numpy' >/dev/null 2>&1";
    if (std::system(command.c_str()) == 0) return candidate;
  }
  return {};
}

}  // namespace

TEST_CASE("npy::write_npy and read_npy round-trip every dtype and shape") {
  TempDir dir;
  std::size_t count = 0;
  const DType* dtypes = kernc::all_dtypes(&count);
  const std::vector<std::vector<std::int64_t>> shapes = {{}, {0}, {5}, {2, 3, 4}};
  for (std::size_t d = 0; d < count; ++d) {
    const DType dtype = dtypes[d];
    for (const auto& shape : shapes) {
      std::int64_t size = 1;
      for (auto extent : shape) size *= extent;
      CAPTURE(kernc::to_string(dtype));
      CAPTURE(shape.size());
      const std::string data = pattern(dtype, size);
      const std::string path = dir / "a.npy";
      kernc::write_npy(path, dtype, shape, data.data());
      // float8_e4m3fn is '<V1', raw bytes whose type the reader must name (NOTE [ npy dtypes ]).
      NpyArray back = kernc::read_npy(path, kernc::NpyOrder::c,
                                      dtype == DType::float8_e4m3fn ? std::optional<DType>(dtype) : std::nullopt);
      CHECK(back.dtype == dtype);
      CHECK(back.shape == shape);
      CHECK_FALSE(back.fortran_order);
      CHECK(back.size() == size);
      CHECK(back.data == data);

      // NumPy's layout: version 1.0, the data 64-byte aligned, the header ending in '\n'.
      std::string bytes = kernc::encode_npy(dtype, shape, data.data());
      REQUIRE(bytes.size() > 10);
      CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
      std::size_t header_length = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
      CHECK((10 + header_length) % 64 == 0);
      CHECK(bytes[10 + header_length - 1] == '\n');
      CHECK(bytes.size() == 10 + header_length + data.size());
      CHECK(contains(bytes.substr(10, header_length), "'descr': '" + kernc::npy_descr(dtype) + "'"));
    }
  }
}

TEST_CASE("npy::encode_npy writes NumPy's type codes and shape tuples") {
  const float one = 1;
  CHECK(kernc::npy_descr(DType::bool_) == "|b1");
  CHECK(kernc::npy_descr(DType::int8) == "|i1");
  CHECK(kernc::npy_descr(DType::uint8) == "|u1");
  CHECK(kernc::npy_descr(DType::int16) == "<i2");
  CHECK(kernc::npy_descr(DType::uint64) == "<u8");
  CHECK(kernc::npy_descr(DType::float16) == "<f2");
  CHECK(kernc::npy_descr(DType::float32) == "<f4");
  CHECK(kernc::npy_descr(DType::float64) == "<f8");
  CHECK(kernc::npy_descr(DType::complex64) == "<c8");
  CHECK(kernc::npy_descr(DType::complex128) == "<c16");
  CHECK(contains(kernc::encode_npy(DType::float32, {}, &one), "'shape': (), }"));
  CHECK(contains(kernc::encode_npy(DType::float32, {1}, &one), "'shape': (1,), }"));
  CHECK(contains(kernc::encode_npy(DType::float32, {1, 1, 1}, &one), "{'descr': '<f4', 'fortran_order': False, "
                                                                       "'shape': (1, 1, 1), }"));
}

TEST_CASE("npy: bfloat16 and float8 are written and read as ml_dtypes' np.save writes them") {
  // np.save writes a legacy user dtype's dtype.str (numpy/lib/format.py, dtype_to_descr):
  // byte order, kind and size. ml_dtypes registers its types with byte order '=' (so '<')
  // and kind 'V', but float8_e5m2 with kind 'f' (ml_dtypes/_src/floats.cc,
  // GetCustomFloatDescrProto); NumPy pads the header with spaces to 64 bytes. So an
  // ml_dtypes array of 4 elements saves with exactly these headers.
  const std::string e4m3 = "{'descr': '<V1', 'fortran_order': False, 'shape': (4,), }";
  const std::string e5m2 = "{'descr': '<f1', 'fortran_order': False, 'shape': (4,), }";
  const std::string bf16 = "{'descr': '<V2', 'fortran_order': False, 'shape': (4,), }";
  const std::string bytes1 = "\x38\x40\xb8\x7e", bytes2 = std::string("\x80\x3f\x00\x40\x40\xc0\x00\x00", 8);
  CHECK(kernc::npy_descr(DType::float8_e4m3fn) == "<V1");
  CHECK(kernc::npy_descr(DType::float8_e5m2) == "<f1");
  CHECK(kernc::npy_descr(DType::bfloat16) == "<V2");
  CHECK(kernc::encode_npy(DType::float8_e4m3fn, {4}, bytes1.data()) == handmade(e4m3, bytes1));
  CHECK(kernc::encode_npy(DType::float8_e5m2, {4}, bytes1.data()) == handmade(e5m2, bytes1));
  CHECK(kernc::encode_npy(DType::bfloat16, {4}, bytes2.data()) == handmade(bf16, bytes2));

  SUBCASE("'<f1' is float8_e5m2 and '<V2' bfloat16, with no more said") {
    NpyArray a = kernc::decode_npy(handmade(e5m2, bytes1), "e5m2.npy");
    CHECK(a.dtype == DType::float8_e5m2);
    CHECK(a.data == bytes1);
    NpyArray b = kernc::decode_npy(handmade(bf16, bytes2), "bf16.npy");
    CHECK(b.dtype == DType::bfloat16);
    CHECK(b.data == bytes2);
    // A big-endian host's ml_dtypes writes '>V2': read as little-endian.
    NpyArray big = kernc::decode_npy(handmade("{'descr': '>V2', 'fortran_order': False, 'shape': (1,), }", "\x3f\x80"), "big.npy");
    CHECK(big.dtype == DType::bfloat16);
    CHECK(big.data == "\x80\x3f");
  }
  SUBCASE("'<V1' is read as the dtype the caller names, and refused, naming the way out, without one") {
    NpyArray a = kernc::decode_npy(handmade(e4m3, bytes1), "e4m3.npy", kernc::NpyOrder::c, DType::float8_e4m3fn);
    CHECK(a.dtype == DType::float8_e4m3fn);
    CHECK(a.shape == std::vector<std::int64_t>{4});
    CHECK(a.data == bytes1);
    CHECK(kernc::decode_npy(handmade(e4m3, bytes1), "x.npy", kernc::NpyOrder::c, DType::float8_e5m2).dtype ==
          DType::float8_e5m2);
    check_rejected(handmade(e4m3, bytes1), "'<V1'");
    check_rejected(handmade(e4m3, bytes1), "float8_e4m3fn");
    // NumPy's own raw bytes ('|V2', what np.load + np.save make of a '<V2' file) need a name too.
    check_rejected(handmade("{'descr': '|V2', 'fortran_order': False, 'shape': (4,), }", bytes2), "'|V2'");
    CHECK(kernc::decode_npy(handmade("{'descr': '|V2', 'fortran_order': False, 'shape': (4,), }", bytes2), "v.npy",
                            kernc::NpyOrder::c, DType::bfloat16)
              .dtype == DType::bfloat16);
  }
  SUBCASE("a named dtype the file does not hold is refused") {
    auto refused = [](const std::string& bytes, DType hint, const std::string& reason) {
      try {
        kernc::decode_npy(bytes, "bad.npy", kernc::NpyOrder::c, hint);
        FAIL("accepted");
      } catch (const kernc::Error& error) {
        CHECK_MESSAGE(contains(error.what(), reason), std::string(error.what()));
      }
    };
    refused(handmade(e4m3, bytes1), DType::int8, "cannot hold int8");
    refused(handmade(e4m3, bytes1), DType::bfloat16, "cannot hold bfloat16");
    refused(handmade(e5m2, bytes1), DType::float8_e4m3fn, "is float8_e5m2, not float8_e4m3fn");
    refused(handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "\0\0\0\0"), DType::float8_e4m3fn,
            "is float32, not float8_e4m3fn");
    check_rejected(handmade("{'descr': '<V3', 'fortran_order': False, 'shape': (1,), }", "abc"), "of a size no kernc dtype has");
  }
}

TEST_CASE("npy::read_npy reads files written by NumPy") {
  // Each formula restates tests/unit/data/make_npy_goldens.py.
  SUBCASE("float32 in C order") {
    NpyArray a = kernc::read_npy(npy_golden_path("float32_c_3x4.npy"));
    CHECK(a.dtype == DType::float32);
    CHECK(a.shape == std::vector<std::int64_t>{3, 4});
    CHECK_FALSE(a.fortran_order);
    auto v = elements<float>(a);
    for (int k = 0; k < 12; ++k) CHECK(v[k] == k * 0.5f - 1);
  }
  SUBCASE("int16 in Fortran order comes back in C order") {
    NpyArray a = kernc::read_npy(npy_golden_path("int16_fortran_3x4.npy"));
    CHECK(a.dtype == DType::int16);
    CHECK(a.shape == std::vector<std::int64_t>{3, 4});
    CHECK(a.fortran_order);
    auto v = elements<std::int16_t>(a);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 4; ++j) CHECK(v[i * 4 + j] == (4 * i + j) * 7 - 40);
    }
  }
  SUBCASE("int16 in Fortran order kept as stored (NpyOrder::as_stored): column-major elements") {
    NpyArray a = kernc::read_npy(npy_golden_path("int16_fortran_3x4.npy"), kernc::NpyOrder::as_stored);
    CHECK(a.shape == std::vector<std::int64_t>{3, 4});
    CHECK(a.fortran_order);
    auto v = elements<std::int16_t>(a);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 4; ++j) CHECK(v[j * 3 + i] == (4 * i + j) * 7 - 40);
    }
  }
  SUBCASE("float32 in C order is the same with NpyOrder::as_stored") {
    NpyArray a = kernc::read_npy(npy_golden_path("float32_c_3x4.npy"), kernc::NpyOrder::as_stored);
    CHECK_FALSE(a.fortran_order);
    auto v = elements<float>(a);
    for (int k = 0; k < 12; ++k) CHECK(v[k] == k * 0.5f - 1);
  }
  SUBCASE("int32 2x3x4 in Fortran order comes back in C order") {
    NpyArray a = kernc::read_npy(npy_golden_path("int32_fortran_2x3x4.npy"));
    CHECK(a.shape == std::vector<std::int64_t>{2, 3, 4});
    CHECK(a.fortran_order);
    auto v = elements<std::int32_t>(a);
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) {
        for (int k = 0; k < 4; ++k) CHECK(v[(i * 3 + j) * 4 + k] == 12 * i + 4 * j + k - 5);
      }
    }
  }
  SUBCASE("complex64") {
    NpyArray a = kernc::read_npy(npy_golden_path("complex64_5.npy"));
    CHECK(a.dtype == DType::complex64);
    auto v = elements<std::complex<float>>(a);
    for (int k = 0; k < 5; ++k) CHECK(v[k] == std::complex<float>(k, -2.0f * k));
  }
  SUBCASE("bool") {
    NpyArray a = kernc::read_npy(npy_golden_path("bool_7.npy"));
    CHECK(a.dtype == DType::bool_);
    auto v = elements<std::uint8_t>(a);
    for (int k = 0; k < 7; ++k) CHECK(v[k] == (k % 3 == 0 ? 1 : 0));
  }
  SUBCASE("big-endian float64 is converted to little-endian") {
    NpyArray a = kernc::read_npy(npy_golden_path("float64_big_endian_6.npy"));
    CHECK(a.dtype == DType::float64);
    auto v = elements<double>(a);
    for (int k = 0; k < 6; ++k) CHECK(v[k] == k / 4.0);
  }
  SUBCASE("a version 2.0 header") {
    NpyArray a = kernc::read_npy(npy_golden_path("int32_v2_10.npy"));
    CHECK(a.dtype == DType::int32);
    auto v = elements<std::int32_t>(a);
    for (int k = 0; k < 10; ++k) CHECK(v[k] == 3 * k - 5);
  }
  SUBCASE("a version 3.0 header") {
    NpyArray a = kernc::read_npy(npy_golden_path("uint16_v3_4.npy"));
    CHECK(a.dtype == DType::uint16);
    auto v = elements<std::uint16_t>(a);
    for (int k = 0; k < 4; ++k) CHECK(v[k] == 1000 * k);
  }
  SUBCASE("float16") {
    NpyArray a = kernc::read_npy(npy_golden_path("float16_5.npy"));
    CHECK(a.dtype == DType::float16);
    auto v = elements<std::uint16_t>(a);
    for (int k = 0; k < 5; ++k) CHECK(kernc::half_to_float(v[k]) == k / 8.0f);
  }
  SUBCASE("a 0-d array") {
    NpyArray a = kernc::read_npy(npy_golden_path("float64_0d.npy"));
    CHECK(a.shape.empty());
    CHECK(a.size() == 1);
    CHECK(elements<double>(a) == std::vector<double>{2.5});
  }
  SUBCASE("an empty array") {
    NpyArray a = kernc::read_npy(npy_golden_path("uint8_empty.npy"));
    CHECK(a.dtype == DType::uint8);
    CHECK(a.shape == std::vector<std::int64_t>{0});
    CHECK(a.data.empty());
  }
}

TEST_CASE("npy::decode_npy parses the header dictionary tolerantly") {
  const std::string two_floats("\x00\x00\x80\x3f\x00\x00\x00\x40", 8);  // 1.0f, 2.0f
  SUBCASE("no blanks, no trailing comma, keys in another order, double quotes") {
    NpyArray a = kernc::decode_npy(handmade("{\"shape\":(2,),\"fortran_order\":False,\"descr\":\"<f4\"}", two_floats),
                                   "x.npy");
    CHECK(a.dtype == DType::float32);
    CHECK(a.shape == std::vector<std::int64_t>{2});
    CHECK(elements<float>(a) == std::vector<float>{1, 2});
  }
  SUBCASE("blanks everywhere and a trailing comma") {
    NpyArray a = kernc::decode_npy(
        handmade("  { 'descr' :  '<f4' ,\t'fortran_order' : True , 'shape' : ( 1 , 2 , ) , }  ", two_floats), "x.npy");
    CHECK(a.shape == std::vector<std::int64_t>{1, 2});
    CHECK(a.fortran_order);
    CHECK(elements<float>(a) == std::vector<float>{1, 2});
  }
  SUBCASE("Python 2 longs and an unpadded header") {
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }\n";
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(dict.size()) + '\0' + dict + two_floats;
    CHECK(kernc::decode_npy(bytes, "x.npy").shape == std::vector<std::int64_t>{2});
  }
  SUBCASE("'=' (native) and missing byte-order marks") {
    CHECK(kernc::decode_npy(handmade("{'descr': '=f4', 'fortran_order': False, 'shape': (2,)}", two_floats), "x.npy")
              .dtype == DType::float32);
    CHECK(kernc::decode_npy(handmade("{'descr': 'u1', 'fortran_order': False, 'shape': (3,)}", "abc"), "x.npy").dtype ==
          DType::uint8);
  }
  SUBCASE("big-endian complex swaps each half") {
    std::string data("\x3f\x80\x00\x00\xc0\x00\x00\x00", 8);  // 1 - 2i as two big-endian floats
    NpyArray a = kernc::decode_npy(handmade("{'descr': '>c8', 'fortran_order': False, 'shape': ()}", data), "x.npy");
    CHECK(elements<std::complex<float>>(a) == std::vector<std::complex<float>>{{1, -2}});
  }
  SUBCASE("a 2.0 header longer than 65535 bytes") {
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)" + std::string(70000, ' ') + "}";
    CHECK(kernc::decode_npy(handmade(dict, two_floats, 2), "x.npy").shape == std::vector<std::int64_t>{2});
  }
}

TEST_CASE("npy::decode_npy rejects malformed files, naming the file") {
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string data(8, '\0');
  auto with_descr = [&](const std::string& descr) {
    return handmade("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2,), }", data);
  };
  SUBCASE("bad magic") { check_rejected(std::string("\x93NUMPX\x01\x00", 8) + handmade(header, data).substr(8), "magic"); }
  SUBCASE("empty file") { check_rejected("", "magic"); }
  SUBCASE("unknown version") {
    std::string bytes = handmade(header, data);
    bytes[6] = 4;
    check_rejected(bytes, "version 4.0");
  }
  SUBCASE("truncated before the header length") { check_rejected(std::string("\x93NUMPY\x01\x00\x10", 9), "truncated"); }
  SUBCASE("truncated header") { check_rejected(handmade(header, data).substr(0, 40), "truncated header"); }
  SUBCASE("header without its newline") {
    std::string bytes = handmade(header, data);
    bytes[bytes.find('\n')] = ' ';
    check_rejected(bytes, "newline");
  }
  SUBCASE("unknown descr") {
    check_rejected(with_descr("<f3"), "unknown dtype descr '<f3'");
    check_rejected(with_descr("<x4"), "unknown dtype descr '<x4'");
    check_rejected(with_descr("<"), "empty dtype descr");
  }
  SUBCASE("object arrays") { check_rejected(with_descr("|O"), "object arrays"); }
  SUBCASE("structured arrays") {
    check_rejected(handmade("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", data), "structured");
  }
  SUBCASE("void, string and datetime dtypes") {
    check_rejected(with_descr("|V1"), "'|V1' is raw bytes");
    check_rejected(with_descr("<V8"), "'<V8' is raw bytes (NumPy's 'void') of a size no kernc dtype has");
    check_rejected(with_descr("<U1"), "string dtype");
    check_rejected(with_descr("<M8[ns]"), "datetime");
  }
  SUBCASE("long double") { check_rejected(with_descr("<f16"), "long double"); }
  SUBCASE("truncated data") { check_rejected(handmade(header, data.substr(0, 7)), "truncated data"); }
  SUBCASE("bytes after the data") { check_rejected(handmade(header, data + "x"), "after the data"); }
  SUBCASE("missing, unknown and repeated keys") {
    check_rejected(handmade("{'descr': '<f4', 'shape': (2,), }", data), "missing key 'fortran_order'");
    check_rejected(handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", data), "'x'");
    check_rejected(handmade("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", data),
                   "appears twice");
  }
  SUBCASE("malformed values") {
    check_rejected(handmade("{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}", data), "True or False");
    check_rejected(handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", data), "negative");
    check_rejected(handmade("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", data), "expected '('");
    check_rejected(handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", data), "expected ',' or ')'");
    check_rejected(handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", data), "after the closing");
    check_rejected(handmade("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", data), "expected ',' or '}'");
    check_rejected(handmade("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", data), "expected ',' or '}'");
    check_rejected(handmade("{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}", data), "expected ':'");
    check_rejected(handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", data),
                   "too large");
  }
}

TEST_CASE("npy::read_npy of a file that does not exist is an io error naming it") {
  TempDir dir;
  try {
    kernc::read_npy(dir / "missing.npy");
    FAIL("read_npy read a missing file");
  } catch (const kernc::Error& error) {
    CHECK(error.code() == kernc::ErrorCode::io);
    CHECK_MESSAGE(contains(error.what(), "missing.npy"), std::string(error.what()));
  }
}

TEST_CASE("npy::write_npy files are read back by NumPy") {
  const std::string python = python_with_numpy();
  // NumPy is a test dependency (tools/install-deps installs python3-numpy): without it this
  // check fails rather than skips, so CI cannot pass without reading kernc's files with NumPy.
  REQUIRE_MESSAGE(!python.empty(), "no python3 that can import numpy (Debian: python3-numpy; tools/install-deps "
                                   "installs it)");
  TempDir dir;
  std::vector<std::int16_t> i16(6);
  for (int k = 0; k < 6; ++k) i16[k] = static_cast<std::int16_t>(3 * k - 4);
  kernc::write_npy(dir / "int16.npy", DType::int16, {2, 3}, i16.data());
  std::vector<std::complex<float>> c64(4);
  for (int k = 0; k < 4; ++k) c64[k] = {static_cast<float>(k), 0.5f * k};
  kernc::write_npy(dir / "complex64.npy", DType::complex64, {4}, c64.data());
  std::vector<std::uint16_t> f16(3);
  for (int k = 0; k < 3; ++k) f16[k] = kernc::float_to_half(k / 4.0f);
  kernc::write_npy(dir / "float16.npy", DType::float16, {3, 1}, f16.data());
  const std::uint8_t flags[5] = {1, 0, 1, 0, 1};
  kernc::write_npy(dir / "bool.npy", DType::bool_, {5}, flags);
  const double scalar = 2.5;
  kernc::write_npy(dir / "float64_0d.npy", DType::float64, {}, &scalar);
  const std::uint64_t big[2] = {0, 18446744073709551615ull};
  kernc::write_npy(dir / "uint64.npy", DType::uint64, {2}, big);
  kernc::write_npy(dir / "float32_empty.npy", DType::float32, {0, 3}, nullptr);

  const std::string script = dir.write("check.py", R"(import sys, numpy as np
d = sys.argv[1] + "/"
def check(name, dtype, expected):
    a = np.load(d + name)
    assert a.dtype == np.dtype(dtype), (name, a.dtype)
    assert a.shape == expected.shape, (name, a.shape, expected.shape)
    assert np.array_equal(a, expected), (name, a, expected)
check("int16.npy", np.int16, (np.arange(6) * 3 - 4).reshape(2, 3).astype(np.int16))
check("complex64.npy", np.complex64, (np.arange(4) + 0.5j * np.arange(4)).astype(np.complex64))
check("float16.npy", np.float16, (np.arange(3) / 4).reshape(3, 1).astype(np.float16))
check("bool.npy", np.bool_, np.array([True, False, True, False, True]))
check("float64_0d.npy", np.float64, np.array(2.5))
check("uint64.npy", np.uint64, np.array([0, 2**64 - 1], dtype=np.uint64))
check("float32_empty.npy", np.float32, np.zeros((0, 3), dtype=np.float32))
print("numpy read every file")
)");
  const std::string command = python + " " + script + " " + dir.path() + " > " + (dir / "out.txt") + " 2>&1";
  int status = std::system(command.c_str());
  std::ifstream output(dir / "out.txt");
  std::string text((std::istreambuf_iterator<char>(output)), std::istreambuf_iterator<char>());
  CHECK_MESSAGE(status == 0, text);
  CHECK(contains(text, "numpy read every file"));
}
