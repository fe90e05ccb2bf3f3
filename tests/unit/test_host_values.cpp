// Host values (include/kernc/host_values.hpp, src/host/host_values.cpp): arrays made on the
// host, .npy arrays as views, scalar literals typed as NumPy types them. Expected values are NumPy's, written as formulas or
// literals here, never taken from the code under test.

#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "kernc/error.hpp"
#include "kernc/host_values.hpp"

using kernc::DType;
using kernc::HostFill;
using kernc::HostValue;
using kernc::make_host_array;
using kernc::parse_scalar;
using kernc::Scalar;

namespace {

using Shape = std::vector<std::int64_t>;

template <class T>
std::vector<T> elements(const HostValue& value) {
  const std::string bytes = value.c_order_data();
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());  // an empty vector's data() may be null
  return out;
}

// parse_scalar's answer for a literal that must be one.
Scalar scalar(const std::string& text) {
  auto value = parse_scalar(text);
  REQUIRE_MESSAGE(value, text << " is no literal");
  return *value;
}

}  // namespace

TEST_CASE("host values: make_host_array fills C-contiguous arrays") {
  SUBCASE("arange counts in C order; integers wrap as NumPy's astype (np.arange(300).astype(np.int8))") {
    HostValue v = make_host_array(HostFill::arange, DType::int8, {300});
    CHECK(v.is_array);
    CHECK(v.shape == Shape{300});
    CHECK(v.strides == Shape{1});
    CHECK(v.c_contiguous());
    auto e = elements<std::int8_t>(v);
    CHECK(e[127] == 127);
    CHECK(e[128] == -128);
    CHECK(e[299] == 299 - 256);
    CHECK(elements<float>(make_host_array(HostFill::arange, DType::float32, {2, 3})) ==
          std::vector<float>{0, 1, 2, 3, 4, 5});
  }
  SUBCASE("zeros and ones, complex and bool too") {
    CHECK(elements<std::complex<float>>(make_host_array(HostFill::ones, DType::complex64, {2})) ==
          std::vector<std::complex<float>>{{1, 0}, {1, 0}});
    CHECK(elements<std::uint8_t>(make_host_array(HostFill::ones, DType::bool_, {3})) == std::vector<std::uint8_t>{1, 1, 1});
    CHECK(elements<double>(make_host_array(HostFill::zeros, DType::float64, {2, 2})) == std::vector<double>(4, 0.0));
    HostValue half = make_host_array(HostFill::ones, DType::float16, {1});
    CHECK(elements<std::uint16_t>(half) == std::vector<std::uint16_t>{0x3c00});  // 1.0 in binary16
  }
  SUBCASE("a 0-d array has one element; a zero extent none") {
    HostValue zero_d = make_host_array(HostFill::ones, DType::int32, {});
    CHECK(zero_d.size() == 1);
    CHECK(zero_d.nbytes() == 4);
    HostValue empty = make_host_array(HostFill::zeros, DType::float32, {0, 3, 4});
    CHECK(empty.size() == 0);
    CHECK(empty.strides == Shape{48, 16, 4});
    CHECK(empty.data.empty());
  }
  SUBCASE("random: the seed makes the data again; values in their ranges") {
    HostValue a = make_host_array(HostFill::random, DType::float64, {1000}, 7);
    CHECK(a.data == make_host_array(HostFill::random, DType::float64, {1000}, 7).data);
    CHECK(a.data != make_host_array(HostFill::random, DType::float64, {1000}, 8).data);
    for (double x : elements<double>(a)) CHECK((x >= -1.0 && x < 1.0));
    for (auto x : elements<std::int16_t>(make_host_array(HostFill::random, DType::int16, {1000}, 7))) {
      CHECK((x >= -10 && x <= 10));
    }
    for (auto x : elements<std::uint32_t>(make_host_array(HostFill::random, DType::uint32, {1000}, 7))) CHECK(x <= 20);
    for (auto x : elements<std::uint8_t>(make_host_array(HostFill::random, DType::bool_, {1000}, 7))) CHECK(x <= 1);
  }
  SUBCASE("bad shapes are errors, not allocations") {
    CHECK_THROWS_WITH_AS(make_host_array(HostFill::zeros, DType::float32, {-1}), doctest::Contains("negative extent"),
                         kernc::Error);
    const std::int64_t big = std::int64_t{1} << 40;
    CHECK_THROWS_AS(make_host_array(HostFill::zeros, DType::float64, {0, big, big}), kernc::Error);
    CHECK_THROWS_WITH_AS(make_host_array(HostFill::zeros, DType::float64, {big, big}),
                         doctest::Contains("reach past 2^63 bytes"), kernc::Error);
  }
}

TEST_CASE("host values: a Fortran-ordered .npy array is a column-major view of its bytes") {
  kernc::NpyArray array =
      kernc::read_npy(std::string(KERNC_SOURCE_DIR) + "/tests/unit/data/npy/int16_fortran_3x4.npy", kernc::NpyOrder::as_stored);
  const std::string bytes = array.data;
  HostValue v = kernc::host_array(std::move(array));
  CHECK(v.shape == Shape{3, 4});
  CHECK(v.strides == Shape{2, 6});
  CHECK_FALSE(v.c_contiguous());
  CHECK(v.data == bytes);  // the file's own order, not a copy in C order
  // tests/unit/data/make_npy_goldens.py: element [i, j] is (4i + j) * 7 - 40.
  auto e = elements<std::int16_t>(v);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) CHECK(e[static_cast<std::size_t>(i * 4 + j)] == (4 * i + j) * 7 - 40);
  }
  HostValue c = kernc::host_array(kernc::read_npy(std::string(KERNC_SOURCE_DIR) + "/tests/unit/data/npy/float32_c_3x4.npy"));
  CHECK(c.c_contiguous());
  CHECK(c.view(0x1000).data == 0x1000);
}

TEST_CASE("host values: untyped literals get NumPy's types for Python values") {
  CHECK(scalar("3.5").dtype == DType::float64);
  CHECK(scalar("1e-3").real == doctest::Approx(1e-3));
  CHECK(scalar("-2").dtype == DType::int64);
  CHECK(scalar("-2").real == -2);
  CHECK(scalar("9223372036854775807").dtype == DType::int64);
  CHECK(scalar("9223372036854775808").dtype == DType::uint64);  // past int64: uint64
  CHECK(scalar("-9223372036854775808").bits == std::uint64_t{1} << 63);
  CHECK(scalar("true").dtype == DType::bool_);
  CHECK(scalar("False").real == 0);
  const Scalar z = scalar("1+2j");
  CHECK(z.dtype == DType::complex128);
  CHECK(z.real == 1);
  CHECK(z.imag == 2);
  CHECK(scalar("-2.5j").imag == -2.5);
  CHECK(scalar("1e-3-4j").imag == -4);
  for (const char* none : {"", "x.npy", "2.5x", "0x10", " 1", "1 ", "j"}) {
    CAPTURE(none);
    CHECK_FALSE(parse_scalar(none));
  }
  CHECK_THROWS_WITH_AS(parse_scalar("-9223372036854775809"), doctest::Contains("out of the range of int64"), kernc::Error);
}

TEST_CASE("host values: typed literals become their dtype or are refused with the reason") {
  CHECK(scalar("7:int8").dtype == DType::int8);
  CHECK(scalar("-128:int8").real == -128);
  CHECK(scalar("18446744073709551615:uint64").bits == std::numeric_limits<std::uint64_t>::max());
  CHECK(scalar("2.5:float32").dtype == DType::float32);
  CHECK(scalar("0.1:float32").real == static_cast<long double>(0.1f));
  CHECK(scalar("0.1:float16").real == static_cast<long double>(kernc::half_to_float(kernc::float_to_half(0.1f))));
  CHECK(scalar("3:float64").real == 3);
  CHECK(scalar("1+2j:complex64").dtype == DType::complex64);
  CHECK(scalar("2:complex128").imag == 0);
  CHECK(scalar("1:bool").real == 1);
  CHECK(scalar("true:float32").real == 1);
  CHECK(scalar("-9223372036854775809:float64").real == -9223372036854775808.0L);
  auto refused = [](const std::string& text, const std::string& reason) {
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(parse_scalar(text), doctest::Contains(reason.c_str()), kernc::Error);
  };
  refused("300:int8", "300 is out of the range of int8 (-128 to 127)");
  refused("-1:uint8", "-1 is out of the range of uint8 (0 to 255)");
  refused("9223372036854775808:int64", "out of the range of int64 (-9223372036854775808 to 9223372036854775807)");
  refused("-9223372036854775809:int64", "out of the range of int64");
  refused("18446744073709551616:uint64", "uint64 needs an integer value");  // past 2^64 it is a real
  refused("2.5:int32", "int32 needs an integer value");
  refused("true:int8", "int8 needs an integer value");
  refused("2:bool", "bool needs true, false, 1 or 0");
  refused("1+2j:float64", "a complex value for the real dtype float64");
  refused("2.5:float99", "2.5:float99: unknown dtype \"float99\" (known: bool, int8");
  CHECK_FALSE(parse_scalar("abc:float99"));  // no literal: the dtype is not looked at
}

TEST_CASE("host values: scalar_as converts as C does, through core's Scalar") {
  CHECK(kernc::scalar_as(Scalar(2.75), DType::int32).real == 2);
  CHECK(kernc::scalar_as(Scalar(2.75), DType::int32).dtype == DType::int32);
  CHECK(kernc::scalar_as(Scalar(-1), DType::uint8).real == 255);  // integers wrap
  CHECK(kernc::scalar_as(Scalar(300), DType::int8).real == 44);
  CHECK(kernc::scalar_as(Scalar(3), DType::bool_).real == 1);
  CHECK(kernc::scalar_as(Scalar(std::complex<double>(1.5, -2)), DType::complex64).imag == -2);
  const Scalar same(7);
  CHECK(kernc::scalar_as(same, DType::int32).bits == same.bits);
}
