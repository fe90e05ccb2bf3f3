// `kernc run`'s SOURCE syntax and its NumPy-like views (tools/kernc/run_sources.cpp,
// run_views.cpp), without a GPU. The values they make are the library's host values,
// tested in test_host_values.cpp. Expected elements are NumPy's, written as formulas over
// the index (arange makes element k equal to k), never taken from the code under test.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "kernc/error.hpp"
#include "run_sources.hpp"
#include "run_views.hpp"
#include "temp_dir.hpp"

using kernc::cli::load_source;
using kernc::cli::SourceValue;
using kernc::test::contains;

namespace {

template <class T>
std::vector<T> elements(const SourceValue& value) {
  const std::string bytes = value.c_order_data();
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());  // an empty vector's data() may be null
  return out;
}

std::string source_error(const std::string& text) {
  try {
    load_source(text);
  } catch (const kernc::Error& error) {
    CHECK(error.code() == kernc::ErrorCode::invalid_argument);
    return error.what();
  }
  FAIL("load_source accepted " << text);
  return {};
}

using Shape = std::vector<std::int64_t>;

}  // namespace

TEST_CASE("cli sources: split_view_suffix takes the trailing [..], .T and .transpose(..) groups") {
  using kernc::cli::split_view_suffix;
  using Split = std::pair<std::string, std::string>;
  CHECK(split_view_suffix("m.npy[:, ::2].T") == Split{"m.npy", "[:, ::2].T"});
  CHECK(split_view_suffix("row.npy[None, :]") == Split{"row.npy", "[None, :]"});
  CHECK(split_view_suffix("random:4x5x6:float32:9.transpose((2, 0, 1))[1]") ==
        Split{"random:4x5x6:float32:9", ".transpose((2, 0, 1))[1]"});
  CHECK(split_view_suffix("x.npy") == Split{"x.npy", ""});
  CHECK(split_view_suffix("2.5:float32") == Split{"2.5:float32", ""});
}

TEST_CASE("cli sources: basic indexing as NumPy's") {
  SUBCASE("a reversed row slice with a step, transposed: arange(24).reshape(4, 6)[::-1, 1::2].T") {
    SourceValue v = load_source("arange:4x6:int16[::-1, 1::2].T");
    CHECK(v.shape == Shape{3, 4});
    CHECK(v.strides == Shape{4, -12});  // byte strides, as NumPy's .strides
    CHECK_FALSE(v.c_contiguous());
    auto e = elements<std::int16_t>(v);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 4; ++j) CHECK(e[static_cast<std::size_t>(i * 4 + j)] == (3 - j) * 6 + 1 + 2 * i);
    }
    CHECK(v.description == "int16 (3, 4) strides (4, -12) arange:4x6:int16[::-1, 1::2].T");
    CHECK(v.nbytes() == 24);       // the view's elements
    CHECK(v.data.size() == 48);    // the bytes uploaded: the whole source
  }
  SUBCASE("None adds a broadcastable axis of extent 1 and stride 0") {
    SourceValue v = load_source("ones:5:float64[None, :]");
    CHECK(v.shape == Shape{1, 5});
    CHECK(v.strides == Shape{0, 8});
    CHECK(v.c_contiguous());
    SourceValue column = load_source("arange:5:float32[:, None]");
    CHECK(column.shape == Shape{5, 1});
    CHECK(elements<float>(column) == std::vector<float>{0, 1, 2, 3, 4});
  }
  SUBCASE("transpose(AXES) then an ellipsis and a negative index") {
    SourceValue v = load_source("arange:2x3x4:int32.transpose(2, 0, 1)[..., -1]");
    CHECK(v.shape == Shape{4, 2});
    auto e = elements<std::int32_t>(v);
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < 2; ++b) CHECK(e[static_cast<std::size_t>(a * 2 + b)] == b * 12 + 2 * 4 + a);
    }
    CHECK(load_source("arange:2x3x4:int32.transpose((2, 0, 1))").shape == Shape{4, 2, 3});
    CHECK(load_source("arange:2x3x4:int32.transpose()").shape == Shape{4, 3, 2});
  }
  SUBCASE("slice bounds are clamped as Python's") {
    auto one_d = [](const std::string& suffix) { return elements<std::int64_t>(load_source("arange:10:int64" + suffix)); };
    using V = std::vector<std::int64_t>;
    CHECK(one_d("[-3:]") == V{7, 8, 9});
    CHECK(one_d("[8:2:-2]") == V{8, 6, 4});
    CHECK(one_d("[:-20:-1]") == V{9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
    CHECK(one_d("[::-3]") == V{9, 6, 3, 0});
    CHECK(one_d("[-20:3]") == V{0, 1, 2});
    CHECK(one_d("[20:]").empty());
    CHECK(one_d("[5:5]").empty());
    CHECK(one_d("[2:9:3]") == V{2, 5, 8});
    CHECK(one_d("[ 1 : : 4 ]") == V{1, 5, 9});
    // A step far past the extent takes one element, as in NumPy (found by fuzz_array_source:
    // the stride times the step overflowed).
    CHECK(one_d("[::-8888888888888888881]") == V{9});
    CHECK(one_d("[1::9223372036854775807]") == V{1});
    CHECK(one_d("[::-9223372036854775808]") == V{9});
    SourceValue column = load_source("arange:4x2:int16[::-8888888888888888881].T");
    CHECK(column.shape == Shape{2, 1});
    CHECK(elements<std::int16_t>(column) == std::vector<std::int16_t>{6, 7});
  }
  SUBCASE("an integer index drops its axis; a trailing comma is a tuple") {
    SourceValue row = load_source("arange:3x4:float32[-1]");
    CHECK(row.shape == Shape{4});
    CHECK(elements<float>(row) == std::vector<float>{8, 9, 10, 11});
    CHECK(load_source("arange:3x4:float32[1,]").shape == Shape{4});
    SourceValue scalar_view = load_source("arange:3x4:float32[2, 3]");
    CHECK(scalar_view.shape == Shape{});
    CHECK(elements<float>(scalar_view) == std::vector<float>{11});
  }
  SUBCASE("views of views chain left to right") {
    SourceValue v = load_source("arange:6x6:uint8[1:5][::2].T[::-1]");
    // [1:5] rows 1..4, [::2] rows 1 and 3, .T: shape (6, 2), [::-1]: columns reversed.
    CHECK(v.shape == Shape{6, 2});
    auto e = elements<std::uint8_t>(v);
    for (int c = 0; c < 6; ++c) {
      CHECK(e[static_cast<std::size_t>(c * 2)] == 1 * 6 + (5 - c));
      CHECK(e[static_cast<std::size_t>(c * 2 + 1)] == 3 * 6 + (5 - c));
    }
  }
}

TEST_CASE("cli sources: a Fortran-ordered .npy file is a column-major view, not a copy") {
  const std::string path = std::string(KERNC_SOURCE_DIR) + "/tests/unit/data/npy/int16_fortran_3x4.npy";
  SourceValue v = load_source(path);
  CHECK(v.shape == Shape{3, 4});
  CHECK(v.strides == Shape{2, 6});
  CHECK_FALSE(v.c_contiguous());
  CHECK(contains(v.description, "(Fortran order, kept as a view)"));
  // tests/unit/data/make_npy_goldens.py: element [i, j] is (4i + j) * 7 - 40.
  auto e = elements<std::int16_t>(v);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) CHECK(e[static_cast<std::size_t>(i * 4 + j)] == (4 * i + j) * 7 - 40);
  }
  // Its transpose is C-contiguous: the file's own order.
  SourceValue t = load_source(path + ".T");
  CHECK(t.c_contiguous());
  CHECK(t.shape == Shape{4, 3});
}

TEST_CASE("cli sources: a random source's seed is printed before its view, so the text remakes it") {
  SourceValue v = load_source("random:4x6:float32[::2]");
  const std::string prefix = "float32 (2, 6) strides (48, 4) random:4x6:float32:";
  REQUIRE(v.description.rfind(prefix, 0) == 0);
  REQUIRE(v.description.size() > prefix.size() + 5);
  const std::string seeded = v.description.substr(prefix.size() - std::string("random:4x6:float32:").size());
  CHECK(seeded.substr(seeded.size() - 5) == "[::2]");
  SourceValue again = load_source(seeded);
  CHECK(again.c_order_data() == v.c_order_data());
}

TEST_CASE("cli sources: bad views are errors with NumPy's reasons") {
  CHECK(contains(source_error("arange:3:float32[5]"), "index 5 is out of bounds for axis 0 with size 3"));
  CHECK(contains(source_error("arange:3:float32[-4]"), "index -4 is out of bounds for axis 0 with size 3"));
  CHECK(contains(source_error("arange:3x4:float32[0,0,0]"),
                 "too many indices for array: array is 2-dimensional, but 3 were indexed"));
  CHECK(contains(source_error("arange:3:float32[::0]"), "slice step cannot be zero"));
  CHECK(contains(source_error("arange:3:float32[..., ...]"), "an index can only have a single ellipsis"));
  CHECK(contains(source_error("arange:3:float32[]"), "[] indexes nothing"));
  CHECK(contains(source_error("arange:3:float32[a]"), "\"a\" is not an index"));
  CHECK(contains(source_error("arange:3:float32[1:2:3:4]"), "is not a slice"));
  CHECK(contains(source_error("arange:3:float32[0,,]"), "an empty index between commas"));
  CHECK(contains(source_error("arange:3x4:float32.transpose(0, 0)"), "not a permutation"));
  CHECK(contains(source_error("arange:3x4:float32.transpose(x)"), "\"x\" is not an axis"));
  CHECK(contains(source_error("2.5[0]"), "2.5 is a scalar: a view ([0]) needs an array"));
}

TEST_CASE("cli sources: a zero-size shape whose other extents overflow the strides is refused") {
  // fuzz_array_source's find: the element count is 0, but a C-order stride would pass 2^63
  // bytes (signed overflow in ArrayRef::contiguous before the fix).
  CHECK(contains(source_error("arange:0x4432x3x3x444x3x3x444x3x3x4432x3x3x444x3x086:int16[0::2].T"), "is too large"));
  CHECK(contains(source_error("zeros:0x4294967296x4294967296:float64"), "is too large"));
  // Zero-size arrays of sensible shapes still work.
  const auto empty = kernc::cli::load_source("zeros:0x3x4:float32");
  CHECK(empty.size() == 0);
  CHECK(empty.shape == std::vector<std::int64_t>{0, 3, 4});
  CHECK(empty.strides == std::vector<std::int64_t>{48, 16, 4});
}

TEST_CASE("ArrayRef::contiguous refuses strides past 2^63 bytes, zero extents or not") {
  const std::int64_t big = std::int64_t{1} << 40;
  CHECK_THROWS_WITH_AS(kernc::ArrayRef::contiguous(std::uint64_t{0}, kernc::DType::float64, {0, big, big}),
                       doctest::Contains("has strides past 2^63 bytes"), kernc::Error);
  const auto ok = kernc::ArrayRef::contiguous(std::uint64_t{0}, kernc::DType::float64, {0, big});
  CHECK(ok.strides == std::vector<std::int64_t>{8 * big, 8});
  CHECK(ok.size() == 0);
}

TEST_CASE("cli sources: parse_shared_source reads @NAME, @K and a view after them") {
  using kernc::cli::parse_shared_source;
  auto x = parse_shared_source("@x");
  REQUIRE(x);
  CHECK(x->name == "x");
  CHECK(x->suffix.empty());
  auto view = parse_shared_source("@out_2[::2].T");
  REQUIRE(view);
  CHECK(view->name == "out_2");
  CHECK(view->suffix == "[::2].T");
  auto position = parse_shared_source("@0");
  REQUIRE(position);
  CHECK(position->name == "0");
  // Every other SOURCE is no shared one.
  CHECK_FALSE(parse_shared_source("x.npy"));
  CHECK_FALSE(parse_shared_source("random:5:float32"));
  CHECK_FALSE(parse_shared_source("2.5"));
  for (const char* bad : {"@", "@x-y", "@1x", "@[0]"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse_shared_source(bad), doctest::Contains("expected @NAME"), kernc::Error);
  }
}

TEST_CASE("cli sources: shared_value views the owner's buffer, with no bytes of its own") {
  using kernc::cli::shared_value;
  using kernc::cli::SharedSource;
  const SourceValue owner = load_source("arange:4x6:float32[1:]");  // offset 24 bytes, shape (3, 6)
  SUBCASE("the owner's view as it is") {
    SourceValue v = shared_value(SharedSource{"x", ""}, owner, "x");
    CHECK(v.is_array);
    CHECK(v.dtype == kernc::DType::float32);
    CHECK(v.shape == Shape{3, 6});
    CHECK(v.strides == owner.strides);
    CHECK(v.offset == 24);
    CHECK(v.data.empty());
    CHECK(v.description == "float32 (3, 6) @x (the device buffer of x)");
  }
  SUBCASE("a view of the owner's view: arange(24).reshape(4, 6)[1:][::2, ::-3].T") {
    SourceValue v = shared_value(SharedSource{"2", "[::2, ::-3].T"}, owner, "x");
    CHECK(v.shape == Shape{2, 2});
    CHECK(v.strides == Shape{-12, 48});
    CHECK(v.offset == 24 + 5 * 4);  // element [1, 5] of the base
    CHECK(v.description == "float32 (2, 2) strides (-12, 48) @2[::2, ::-3].T (the device buffer of x)");
  }
  SUBCASE("a scalar has no buffer; a bad view is NumPy's error") {
    CHECK_THROWS_WITH_AS(shared_value(SharedSource{"a", ""}, load_source("2.5"), "a"),
                         doctest::Contains("a is a scalar (2.5 (float64 scalar)); only an array argument's buffer"),
                         kernc::Error);
    CHECK_THROWS_WITH_AS(shared_value(SharedSource{"x", "[3]"}, owner, "x"),
                         doctest::Contains("index 3 is out of bounds for axis 0 with size 3"), kernc::Error);
  }
}
