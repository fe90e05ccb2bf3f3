// The CuPy parameter grammar (src/dsl/params.*) and the dtype names (include/kernc/dtype.hpp):
// what is accepted, what each accepted list means, and, for every rejection, that the
// message quotes the offending text and says what was expected.

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "dsl/params.hpp"
#include "kernc/dtype.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "temp_dir.hpp"

using kernc::DType;
using kernc::Error;
using kernc::ErrorCode;
using kernc::dsl::Param;
using kernc::dsl::parse_params;
using kernc::test::contains;

namespace {

// What one parsed parameter should be; `type` is a dtype name or a placeholder letter.
struct Expected {
  bool raw;
  const char* type;
  const char* name;
};

// Checks `param` against `expected`: a concrete dtype when `type` parses as one, a placeholder otherwise.
void check_param(const Param& param, const Expected& expected, bool output) {
  CAPTURE(param.text);
  CHECK(param.raw == expected.raw);
  CHECK(param.name == expected.name);
  CHECK(param.output == output);
  if (auto dtype = kernc::parse_dtype(expected.type)) {
    REQUIRE(param.dtype.has_value());
    CHECK(*param.dtype == *dtype);
    CHECK(param.placeholder.empty());
  } else {
    CHECK_FALSE(param.dtype.has_value());
    CHECK(param.placeholder == expected.type);
  }
}

// The invalid_argument message `call` throws; fails the test if it throws nothing or another code.
template <class F>
std::string rejection(F&& call) {
  try {
    call();
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::invalid_argument);
    return error.what();
  }
  FAIL_CHECK("no kernc::Error was thrown");
  return {};
}

}  // namespace

TEST_CASE("dsl::parse_params accepts CuPy parameter lists") {
  struct Case {
    const char* text;
    std::vector<Expected> params;
  };
  const Case cases[] = {
      {"", {}},
      {"   \n\t ", {}},
      {"float32 x", {{false, "float32", "x"}}},
      {"raw T x, int64 n", {{true, "T", "x"}, {false, "int64", "n"}}},
      {"T a, T x, T y", {{false, "T", "a"}, {false, "T", "x"}, {false, "T", "y"}}},
      {"U u, V v, t w", {{false, "U", "u"}, {false, "V", "v"}, {false, "t", "w"}}},
      {"  float32   x ,\n\traw   int8\ty\n,  bool  flag  ",
       {{false, "float32", "x"}, {true, "int8", "y"}, {false, "bool", "flag"}}},
      {"complex128 z2, uint16 name_with_under_scores_",
       {{false, "complex128", "z2"}, {false, "uint16", "name_with_under_scores_"}}},
      // NumPy aliases resolve to the dtype NumPy gives them on 64-bit Linux.
      {"float a, int b, f4 c, single d, double e, uint f, c8 g",
       {{false, "float64", "a"},
        {false, "int64", "b"},
        {false, "float32", "c"},
        {false, "float32", "d"},
        {false, "float64", "e"},
        {false, "uint64", "f"},
        {false, "complex64", "g"}}},
      {"raw half h, bool_ b, i1 c, u8 d",
       {{true, "float16", "h"}, {false, "bool", "b"}, {false, "int8", "c"}, {false, "uint64", "d"}}},
      // A name may contain a keyword, and may start with "raw" or "i".
      {"int32 int_value, float32 rawdata, float32 ix",
       {{false, "int32", "int_value"}, {false, "float32", "rawdata"}, {false, "float32", "ix"}}},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.text));
    for (bool output : {false, true}) {
      auto params = parse_params(c.text, output ? "out_params" : "in_params", output);
      REQUIRE(params.size() == c.params.size());
      for (size_t k = 0; k < params.size(); ++k) check_param(params[k], c.params[k], output);
    }
  }
}

TEST_CASE("dsl::parse_params keeps each parameter's text for messages") {
  auto params = parse_params("  float32 x ,\n raw T  y", "in_params", false);
  REQUIRE(params.size() == 2);
  CHECK(params[0].text == "float32 x");
  CHECK(params[1].text == "raw T  y");
}

TEST_CASE("dsl::parse_params rejects malformed lists, quoting the text and saying what was expected") {
  struct Case {
    const char* text;
    std::vector<const char*> message_parts;
  };
  // Every message starts with the list's name; the quoted part is the offending parameter.
  const Case cases[] = {
      {"float32 x float32 y",
       {"\"float32 x float32 y\"", "expected \"[raw] TYPE NAME\"", "comma missing before \"float32\""}},
      {"float32 x T y", {"\"float32 x T y\"", "comma missing before \"T\""}},
      {"float32 x raw T y", {"\"float32 x raw T y\"", "comma missing before \"raw\""}},
      {"float32 x yy zz", {"\"float32 x yy zz\"", "expected \"[raw] TYPE NAME\", found 4 words"}},
      // A one-letter word may be a placeholder: the message suggests the comma.
      {"float32 x y z", {"\"float32 x y z\"", "comma missing before \"y\""}},
      {"const float32 x", {"\"const float32 x\"", "unknown modifier \"const\"", "the only modifier is raw"}},
      {"float33 x", {"\"float33 x\"", "unknown type \"float33\"", "expected a dtype", "one-letter type placeholder"}},
      {"TT x", {"\"TT x\"", "unknown type \"TT\""}},
      {"raw float33 x", {"\"raw float33 x\"", "unknown type \"float33\""}},
      {"float32 i", {"\"float32 i\"", "the name i is reserved for the element index"}},
      {"float32 _x", {"\"float32 _x\"", "names starting with _ are reserved"}},
      {"float32 int", {"\"float32 int\"", "\"int\" is a C++ keyword"}},
      {"float32 class", {"\"float32 class\"", "\"class\" is a C++ keyword"}},
      {"float32 1x", {"\"float32 1x\"", "the name \"1x\" is not a C identifier"}},
      {"float32 x-y", {"\"float32 x-y\"", "the name \"x-y\" is not a C identifier"}},
      {"float32 x[2]", {"\"float32 x[2]\"", "the name \"x[2]\" is not a C identifier"}},
      {"float32 x,", {"\"\"", "found an empty parameter (a stray comma?)"}},
      {",float32 x", {"\"\"", "found an empty parameter (a stray comma?)"}},
      {"float32 x,,float32 y", {"\"\"", "found an empty parameter (a stray comma?)"}},
      {"float32 x, ,float32 y", {"\"\"", "found an empty parameter (a stray comma?)"}},
      {"float32", {"\"float32\"", "expected \"[raw] TYPE NAME\": a type and a name"}},
      {"float32 x, T", {"\"T\"", "a type and a name"}},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.text));
    for (const char* which : {"in_params", "out_params"}) {
      std::string message = rejection([&] { parse_params(c.text, which, false); });
      CAPTURE(message);
      CHECK(message.rfind(std::string(which) + ": ", 0) == 0);
      for (const char* part : c.message_parts) {
        CAPTURE(std::string(part));
        CHECK(contains(message, part));
      }
    }
  }
}

TEST_CASE("dsl::check_kernel_name accepts C identifiers and rejects the rest") {
  for (const char* name : {"k", "saxpy", "my_kernel", "k2", "K", "kernel_", "int8", "raw", "float32", "T"}) {
    CAPTURE(std::string(name));
    CHECK_NOTHROW(kernc::dsl::check_kernel_name(name));
  }
  struct Case {
    const char* name;
    const char* message;
  };
  const Case cases[] = {
      {"1abc", "kernel name \"1abc\" is not a C identifier (letters, digits and _, not starting with a digit)"},
      {"my-kernel", "kernel name \"my-kernel\" is not a C identifier"},
      {"", "kernel name \"\" is not a C identifier"},
      {"my kernel", "kernel name \"my kernel\" is not a C identifier"},
      {"_k", "kernel name \"_k\": names starting with _ are reserved"},
      {"int", "kernel name \"int\" is a C++ keyword"},
      {"float", "kernel name \"float\" is a C++ keyword"},
      {"while", "kernel name \"while\" is a C++ keyword"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.name));
    std::string message = rejection([&] { kernc::dsl::check_kernel_name(c.name); });
    CHECK(contains(message, c.message));
  }
}

TEST_CASE("dsl::check_raw_kernel_name allows what raw code may name a kernel: _-prefixed and mangled names") {
  for (const char* name : {"_my_kernel", "_Z3fooPf", "k", "__kernel"}) {
    CAPTURE(std::string(name));
    CHECK_NOTHROW(kernc::dsl::check_raw_kernel_name(name));
  }
  CHECK(contains(rejection([] { kernc::dsl::check_raw_kernel_name("my-kernel"); }), "is not a C identifier"));
  CHECK(contains(rejection([] { kernc::dsl::check_raw_kernel_name("int"); }), "is a C++ keyword"));
}

TEST_CASE("dsl::is_cpp_keyword knows keywords and not dtype names") {
  for (const char* word : {"int", "float", "double", "bool", "class", "template", "return", "unsigned", "auto"}) {
    CAPTURE(std::string(word));
    CHECK(kernc::dsl::is_cpp_keyword(word));
  }
  for (const char* word : {"float32", "int64", "x", "raw", "T", "Int", "integer", ""}) {
    CAPTURE(std::string(word));
    CHECK_FALSE(kernc::dsl::is_cpp_keyword(word));
  }
}

TEST_CASE("dsl::parse_signature parses both lists and checks names across them") {
  auto signature = kernc::dsl::parse_signature("T a, raw float32 b", "T z, int64 n", "k");
  REQUIRE(signature.in.size() == 2);
  REQUIRE(signature.out.size() == 2);
  check_param(signature.in[0], {false, "T", "a"}, false);
  check_param(signature.in[1], {true, "float32", "b"}, false);
  check_param(signature.out[0], {false, "T", "z"}, true);
  check_param(signature.out[1], {false, "int64", "n"}, true);

  SUBCASE("a name used twice, within or across the lists") {
    struct Case {
      const char* in;
      const char* out;
      const char* message;
    };
    const Case cases[] = {
        {"float32 x", "float32 x", "k: the name x is used twice (\"float32 x\" and \"float32 x\")"},
        {"T x, float64 y", "int8 y", "k: the name y is used twice (\"float64 y\" and \"int8 y\")"},
        {"T x, raw T x", "T z", "k: the name x is used twice (\"T x\" and \"raw T x\")"},
        {"T x", "T z, float32 z", "k: the name z is used twice (\"T z\" and \"float32 z\")"},
    };
    for (const auto& c : cases) {
      CAPTURE(std::string(c.in));
      CAPTURE(std::string(c.out));
      CHECK(rejection([&] { kernc::dsl::parse_signature(c.in, c.out, "k"); }) == c.message);
    }
  }
  SUBCASE("the kernel name is checked first") {
    CHECK(contains(rejection([] { kernc::dsl::parse_signature("float32 x", "float32 y", "1k"); }),
                   "kernel name \"1k\" is not a C identifier"));
  }
  SUBCASE("errors say which list they are in") {
    CHECK(contains(rejection([] { kernc::dsl::parse_signature("float32 x", "float33 y", "k"); }),
                   "out_params: \"float33 y\": unknown type \"float33\""));
    CHECK(contains(rejection([] { kernc::dsl::parse_signature("float32 x y", "float32 z", "k"); }),
                   "in_params: \"float32 x y\""));
  }
}

TEST_CASE("dsl::Signature::placeholders lists letters by first appearance, outputs first") {
  struct Case {
    const char* in;
    const char* out;
    std::vector<std::string> letters;
  };
  const Case cases[] = {
      {"T a, T x, T y", "T z", {"T"}},
      {"T a, U b", "V z, T w", {"V", "T", "U"}},
      {"U a, raw T b, float32 c", "T z", {"T", "U"}},
      {"float32 a, int8 b", "float64 z", {}},
      {"", "W z, raw V y, W x", {"W", "V"}},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.in));
    CAPTURE(std::string(c.out));
    CHECK(kernc::dsl::parse_signature(c.in, c.out, "k").placeholders() == c.letters);
  }
}

TEST_CASE("dtype::parse_dtype knows every canonical name, and to_string gives it back") {
  struct Case {
    const char* name;
    DType dtype;
    std::size_t itemsize;
    const char* device_type;
  };
  const Case cases[] = {
      {"bool", DType::bool_, 1, "bool"},
      {"int8", DType::int8, 1, "signed char"},
      {"int16", DType::int16, 2, "short"},
      {"int32", DType::int32, 4, "int"},
      {"int64", DType::int64, 8, "long long"},
      {"uint8", DType::uint8, 1, "unsigned char"},
      {"uint16", DType::uint16, 2, "unsigned short"},
      {"uint32", DType::uint32, 4, "unsigned int"},
      {"uint64", DType::uint64, 8, "unsigned long long"},
      {"float8_e4m3fn", DType::float8_e4m3fn, 1, "kernc::float8_e4m3fn"},
      {"float8_e5m2", DType::float8_e5m2, 1, "kernc::float8_e5m2"},
      {"float16", DType::float16, 2, "kernc::float16"},
      {"bfloat16", DType::bfloat16, 2, "kernc::bfloat16"},
      {"float32", DType::float32, 4, "float"},
      {"float64", DType::float64, 8, "double"},
      {"complex64", DType::complex64, 8, "kernc::complex<float>"},
      {"complex128", DType::complex128, 16, "kernc::complex<double>"},
  };
  std::size_t count = 0;
  const DType* all = kernc::all_dtypes(&count);
  REQUIRE(count == std::size(cases));
  for (std::size_t k = 0; k < count; ++k) {
    const Case& c = cases[k];
    CAPTURE(std::string(c.name));
    CHECK(all[k] == c.dtype);  // all_dtypes is in enum order, the order of this table
    CHECK(kernc::parse_dtype(c.name) == std::optional<DType>(c.dtype));
    CHECK(std::string(kernc::to_string(c.dtype)) == c.name);
    CHECK(kernc::itemsize(c.dtype) == c.itemsize);
    CHECK(std::string(kernc::device_type(c.dtype)) == c.device_type);
  }
}

TEST_CASE("dtype::parse_dtype knows NumPy's aliases and nothing else") {
  struct Case {
    const char* alias;
    DType dtype;
  };
  const Case aliases[] = {
      {"bool_", DType::bool_},
      {"b1", DType::bool_},
      {"?", DType::bool_},
      {"i1", DType::int8},
      {"byte", DType::int8},
      {"i2", DType::int16},
      {"short", DType::int16},
      {"i4", DType::int32},
      {"intc", DType::int32},
      {"i8", DType::int64},
      {"int", DType::int64},
      {"long", DType::int64},
      {"longlong", DType::int64},
      {"intp", DType::int64},
      {"u1", DType::uint8},
      {"ubyte", DType::uint8},
      {"u2", DType::uint16},
      {"ushort", DType::uint16},
      {"u4", DType::uint32},
      {"uintc", DType::uint32},
      {"u8", DType::uint64},
      {"uint", DType::uint64},
      {"ulong", DType::uint64},
      {"ulonglong", DType::uint64},
      {"uintp", DType::uint64},
      {"f2", DType::float16},
      {"half", DType::float16},
      {"f4", DType::float32},
      {"single", DType::float32},
      {"f8", DType::float64},
      {"float", DType::float64},
      {"double", DType::float64},
      {"c8", DType::complex64},
      {"csingle", DType::complex64},
      {"c16", DType::complex128},
      {"complex", DType::complex128},
      {"cdouble", DType::complex128},
  };
  for (const auto& c : aliases) {
    CAPTURE(std::string(c.alias));
    CHECK(kernc::parse_dtype(c.alias) == std::optional<DType>(c.dtype));
  }
  for (const char* name : {"", "float33", "Float32", "FLOAT32", " float32", "float32 ", "f16", "complex256", "int128",
                           "str", "object", "T", "raw", "longdouble", "float_"}) {
    CAPTURE(std::string(name));
    CHECK_FALSE(kernc::parse_dtype(name).has_value());
  }
}

TEST_CASE("dtype::is_integer, is_unsigned, is_floating and is_complex partition the dtypes") {
  std::size_t count = 0;
  const DType* all = kernc::all_dtypes(&count);
  for (std::size_t k = 0; k < count; ++k) {
    DType d = all[k];
    std::string name = kernc::to_string(d);
    CAPTURE(std::string(name));
    bool integer = name.rfind("int", 0) == 0 || name.rfind("uint", 0) == 0;
    CHECK(kernc::is_integer(d) == integer);
    CHECK(kernc::is_unsigned(d) == (name.rfind("uint", 0) == 0));
    CHECK(kernc::is_floating(d) == (name.find("float") != std::string::npos));
    CHECK(kernc::is_complex(d) == (name.rfind("complex", 0) == 0));
    // Exactly one category, except bool, which is none of them.
    int categories = int(kernc::is_integer(d)) + int(kernc::is_floating(d)) + int(kernc::is_complex(d));
    CHECK(categories == (d == DType::bool_ ? 0 : 1));
  }
}

// Names the generated code uses unqualified are reserved; kernc's own names in the
// templates start with _ (reserved for users), so a parameter can never hide them.
TEST_CASE("dsl::parse_signature rejects names that the generated code already uses") {
  struct Case {
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      {"T x", "T a"},  // reduction.cu.in: const _type_reduce a = _s; beside the output refs
      {"T b, T x", "T y"},
      {"T x, int32 gridDim", "T y"},  // hides the CUDA built-in used by the grid-stride loops
      {"T x, int32 blockDim", "T y"},
      {"T x, int32 threadIdx", "T y"},
      {"T x, int32 blockIdx", "T y"},
      {"T x, int32 kernc", "T y"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.in));
    CAPTURE(std::string(c.out));
    std::string message = rejection([&] { kernc::ReductionKernel(c.in, c.out, "x", "a + b", "y = a", "0", "r"); });
    CHECK(contains(message, "reserved"));
  }
  // Names like the templates' internals, without their leading _, are ordinary names.
  CHECK_NOTHROW(kernc::ReductionKernel("T x, int32 kReduceBlock, int32 kUnroll", "T y", "x", "a + b", "y = a", "0", "r"));
}
