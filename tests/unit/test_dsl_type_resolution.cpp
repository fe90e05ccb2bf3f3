// CuPy's type resolution through ElementwiseKernel::resolve / ReductionKernel::resolve
// (src/dsl/type_resolution.cpp), and the signature lines of spec files
// (parse_call_signature / format_call_signature).

#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "temp_dir.hpp"

using kernc::ArgType;
using kernc::CallTypes;
using kernc::DType;
using kernc::ElementwiseKernel;
using kernc::Error;
using kernc::ErrorCode;
using kernc::ResolvedTypes;
using kernc::test::contains;

namespace {

ArgType arr(DType d) { return ArgType::array(d); }
ArgType scalar(DType d) { return ArgType::scalar_of(d); }

CallTypes call(std::vector<ArgType> inputs, std::vector<std::optional<DType>> outputs = {},
               std::map<std::string, DType> bindings = {}) {
  CallTypes types;
  types.inputs = std::move(inputs);
  types.outputs = std::move(outputs);
  types.bindings = std::move(bindings);
  return types;
}

// The message of the kernc::Error `kernc::resolve(kernel, types)` throws; every resolution error is invalid_argument.
template <class Kernel>
std::string resolve_error(const Kernel& kernel, const CallTypes& types) {
  try {
    kernc::resolve(kernel, types);
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::invalid_argument);
    return error.what();
  }
  FAIL("resolve did not throw");
  return {};
}

void check_message(const std::string& message, const std::vector<std::string>& parts) {
  CAPTURE(message);
  for (const auto& part : parts) {
    CAPTURE(std::string(part));
    CHECK(contains(message, part));
  }
}

const ElementwiseKernel& saxpy_kernel() {
  static const ElementwiseKernel kernel("T a, T x, T y", "T z", "z = a * x + y", "saxpy");
  return kernel;
}

}  // namespace

TEST_CASE("dsl::resolve_types binds a placeholder with the first array argument") {
  for (DType d : {DType::float32, DType::float64, DType::int8, DType::complex128, DType::bfloat16}) {
    CAPTURE(std::string(kernc::to_string(d)));
    ResolvedTypes r = kernc::resolve(saxpy_kernel(), call({arr(d), arr(d), arr(d)}));
    CHECK(r.placeholders == std::map<std::string, DType>{{"T", d}});
    CHECK(r.inputs == std::vector<DType>{d, d, d});
    CHECK(r.outputs == std::vector<DType>{d});
  }
}

TEST_CASE("dsl::resolve_types: a placeholder must agree with every later array") {
  check_message(resolve_error(saxpy_kernel(), call({arr(DType::float32), arr(DType::float64), arr(DType::float32)})),
                {"saxpy: type placeholder T is float32 (from a) but x is an array of float64"});
  check_message(resolve_error(saxpy_kernel(), call({scalar(DType::float32), arr(DType::int32), arr(DType::int64)})),
                {"saxpy: type placeholder T is int32 (from x) but y is an array of int64"});
}

TEST_CASE("dsl::resolve_types looks at the outputs first") {
  SUBCASE("an output array of float64 binds T, so float32 inputs disagree with it") {
    std::string message = resolve_error(
        saxpy_kernel(), call({scalar(DType::float32), arr(DType::float32), arr(DType::float32)}, {DType::float64}));
    check_message(message, {"type placeholder T is float64 (from z)", "x is an array of float32"});
  }
  SUBCASE("an output array decides T for the inputs when they agree") {
    ResolvedTypes r =
        kernc::resolve(saxpy_kernel(), call({scalar(DType::int32), arr(DType::float64), arr(DType::float64)}, {DType::float64}));
    CHECK(r.placeholders.at("T") == DType::float64);
    CHECK(r.inputs == std::vector<DType>{DType::float64, DType::float64, DType::float64});
    CHECK(r.outputs == std::vector<DType>{DType::float64});
  }
  SUBCASE("an output left to kernc (nullopt) binds nothing") {
    ResolvedTypes r =
        kernc::resolve(saxpy_kernel(), call({scalar(DType::float64), arr(DType::int16), arr(DType::int16)}, {std::nullopt}));
    CHECK(r.placeholders.at("T") == DType::int16);
    CHECK(r.outputs == std::vector<DType>{DType::int16});
  }
  SUBCASE("the outputs' own placeholders bind before the inputs' (U from z, then T from x)") {
    ElementwiseKernel kernel("T x, U y", "U z", "z = x + y", "mixed");
    std::string message = resolve_error(kernel, call({arr(DType::float32), arr(DType::int8)}, {DType::int32}));
    check_message(message, {"mixed: type placeholder U is int32 (from z) but y is an array of int8"});
    ResolvedTypes r = kernc::resolve(kernel, call({arr(DType::float32), arr(DType::int8)}, {DType::int8}));
    CHECK(r.placeholders == std::map<std::string, DType>{{"T", DType::float32}, {"U", DType::int8}});
  }
}

TEST_CASE("dsl::resolve_types requires the exact dtype for concrete parameters") {
  ElementwiseKernel kernel("float32 x, int64 n", "float64 y", "y = x * n", "scale");
  ResolvedTypes ok = kernc::resolve(kernel, call({arr(DType::float32), arr(DType::int64)}));
  CHECK(ok.placeholders.empty());
  CHECK(ok.inputs == std::vector<DType>{DType::float32, DType::int64});
  CHECK(ok.outputs == std::vector<DType>{DType::float64});

  check_message(resolve_error(kernel, call({arr(DType::float64), arr(DType::int64)})),
                {"scale: input x is float32 but an array of float64 was passed", "cast it first"});
  check_message(resolve_error(kernel, call({arr(DType::float32), arr(DType::int32)})),
                {"scale: input n is int64 but an array of int32 was passed"});
  check_message(resolve_error(kernel, call({arr(DType::float32), arr(DType::int64)}, {DType::float32})),
                {"scale: output y is float64 but an array of float32 was passed"});

  SUBCASE("scalars of any type are converted to a concrete parameter's type") {
    ResolvedTypes r = kernc::resolve(kernel, call({arr(DType::float32), scalar(DType::float64)}));
    CHECK(r.inputs == std::vector<DType>{DType::float32, DType::int64});
  }
}

TEST_CASE("dsl::resolve_types: scalars never bind a placeholder") {
  ElementwiseKernel kernel("T a, T x", "T z", "z = a * x", "scale");
  ResolvedTypes r = kernc::resolve(kernel, call({scalar(DType::float64), arr(DType::float32)}));
  CHECK(r.placeholders.at("T") == DType::float32);
  CHECK(r.inputs == std::vector<DType>{DType::float32, DType::float32});
  CHECK(r.outputs == std::vector<DType>{DType::float32});
}

TEST_CASE("dsl::resolve_types: a placeholder only scalars have is an error with the remedies") {
  ElementwiseKernel kernel("T a, T b", "T z", "z = a + b", "add");
  const CallTypes only_scalars = call({scalar(DType::float64), scalar(DType::float32)});
  check_message(resolve_error(kernel, only_scalars), {"add: the type placeholder T cannot be decided",
                                                      "(a, b received only scalars, which never bind a type)",
                                                      "Pass an output array, or bind T explicitly (e.g. T=float32)"});

  SUBCASE("an explicit binding decides it") {
    CallTypes bound = only_scalars;
    bound.bindings["T"] = DType::float64;
    ResolvedTypes r = kernc::resolve(kernel, bound);
    CHECK(r.placeholders == std::map<std::string, DType>{{"T", DType::float64}});
    CHECK(r.inputs == std::vector<DType>{DType::float64, DType::float64});
    CHECK(r.outputs == std::vector<DType>{DType::float64});
  }
  SUBCASE("so does an output array") {
    CallTypes with_output = only_scalars;
    with_output.outputs = {DType::uint8};
    CHECK(kernc::resolve(kernel, with_output).outputs == std::vector<DType>{DType::uint8});
  }
  SUBCASE("a placeholder of an output only, with no scalar to name") {
    ElementwiseKernel fill("float32 v", "T z", "z = v", "fill");
    std::string message = resolve_error(fill, call({scalar(DType::float32)}));
    check_message(message,
                  {"fill: the type placeholder T cannot be decided: no array argument has it. Pass an output"});
    CHECK_FALSE(contains(message, "received only scalars"));
    CHECK(kernc::resolve(fill, call({scalar(DType::float32)}, {}, {{"T", DType::int32}})).outputs ==
          std::vector<DType>{DType::int32});
  }
}

TEST_CASE("dsl::resolve_types: explicit bindings") {
  SUBCASE("agree with arrays or fail naming the binding") {
    CHECK(kernc::resolve(saxpy_kernel(), call({scalar(DType::float32), arr(DType::float64), arr(DType::float64)}, {},
                                       {{"T", DType::float64}}))
              .placeholders.at("T") == DType::float64);
    check_message(resolve_error(saxpy_kernel(), call({scalar(DType::float32), arr(DType::float32), arr(DType::float32)}, {},
                                              {{"T", DType::float64}})),
                  {"type placeholder T is float64 (from an explicit binding) but x is an array of float32"});
  }
  SUBCASE("of a letter the kernel does not have") {
    check_message(resolve_error(saxpy_kernel(), call({arr(DType::float32), arr(DType::float32), arr(DType::float32)}, {},
                                              {{"U", DType::float32}})),
                  {"saxpy: cannot bind U: the kernel has no type placeholder U"});
  }
}

TEST_CASE("dsl::resolve_types checks the argument counts") {
  check_message(resolve_error(saxpy_kernel(), call({arr(DType::float32), arr(DType::float32)})),
                {"saxpy takes 3 input(s), got 2"});
  check_message(resolve_error(saxpy_kernel(), call({arr(DType::float32), arr(DType::float32), arr(DType::float32),
                                             arr(DType::float32)})),
                {"saxpy takes 3 input(s), got 4"});
  ElementwiseKernel two("T x", "T y, T z", "y = x; z = x", "two");
  check_message(resolve_error(two, call({arr(DType::float32)}, {DType::float32})),
                {"two has 2 output(s); pass all of them or none, got 1"});
  check_message(resolve_error(two, call({arr(DType::float32)}, {DType::float32, DType::float32, DType::float32})),
                {"two has 2 output(s); pass all of them or none, got 3"});
  CHECK(kernc::resolve(two, call({arr(DType::float32)}, {DType::float32, std::nullopt})).outputs ==
        std::vector<DType>{DType::float32, DType::float32});
}

TEST_CASE("dsl::resolve_types: a raw parameter needs an array") {
  ElementwiseKernel kernel("T x, raw T table", "T y", "y = x + table[0]", "lookup");
  check_message(resolve_error(kernel, call({arr(DType::float32), scalar(DType::float32)})),
                {"lookup: table is a raw parameter and needs an array, not a scalar"});
  SUBCASE("and binds like any array") {
    check_message(resolve_error(kernel, call({arr(DType::float32), arr(DType::float64)})),
                  {"T is float32 (from x) but table is an array of float64"});
    ElementwiseKernel first_raw("raw T table, T x", "T y", "y = x + table[0]", "lookup2");
    CHECK(kernc::resolve(first_raw, call({arr(DType::int16), arr(DType::int16)})).placeholders.at("T") == DType::int16);
  }
}

TEST_CASE("dsl::resolve_types is the same for ReductionKernel") {
  kernc::ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "sum");
  ResolvedTypes r = kernc::resolve(sum, call({arr(DType::float16)}));
  CHECK(r.inputs == std::vector<DType>{DType::float16});
  CHECK(r.outputs == std::vector<DType>{DType::float16});
  check_message(resolve_error(sum, call({arr(DType::float32)}, {DType::float64})),
                {"sum: type placeholder T is float64 (from y) but x is an array of float32"});
  check_message(resolve_error(sum, call({scalar(DType::float32)})), {"sum: the type placeholder T cannot be decided"});
}

TEST_CASE("kernels::parse_call_signature parses spec signature lines") {
  struct Case {
    const char* text;
    std::vector<ArgType> inputs;
    std::vector<std::optional<DType>> outputs;
    const char* formatted;
  };
  const Case cases[] = {
      {"float32, scalar float32 -> float32",
       {arr(DType::float32), scalar(DType::float32)},
       {DType::float32},
       "float32, scalar float32 -> float32"},
      {"scalar float32, float16, float16 -> float16",
       {scalar(DType::float32), arr(DType::float16), arr(DType::float16)},
       {DType::float16},
       "scalar float32, float16, float16 -> float16"},
      {"  int8 ,scalar   float64->  _ , complex64 ",
       {arr(DType::int8), scalar(DType::float64)},
       {std::nullopt, DType::complex64},
       "int8, scalar float64 -> _, complex64"},
      {"f4, scalar double -> f8",
       {arr(DType::float32), scalar(DType::float64)},
       {DType::float64},
       "float32, scalar float64 -> float64"},
      {"bool -> bool", {arr(DType::bool_)}, {DType::bool_}, "bool -> bool"},
      {"complex128 -> _", {arr(DType::complex128)}, {std::nullopt}, "complex128 -> _"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.text));
    CallTypes types = kernc::parse_call_signature(c.text);
    CHECK(types.inputs == c.inputs);
    CHECK(types.outputs == c.outputs);
    CHECK(types.bindings.empty());
    std::string formatted = kernc::format_call_signature(types);
    CHECK(formatted == c.formatted);
    // The formatted text parses back to the same call types.
    CallTypes again = kernc::parse_call_signature(formatted);
    CHECK(again.inputs == types.inputs);
    CHECK(again.outputs == types.outputs);
  }
  // "float" is float64 to NumPy and float32 to CUDA: a signature must say which.
  CHECK_THROWS_WITH_AS(kernc::parse_call_signature("float -> float"), doctest::Contains("\"float\" is ambiguous"),
                       kernc::Error);
}

TEST_CASE("kernels::format_call_signature round-trips every dtype as array, scalar and output") {
  std::size_t count = 0;
  const DType* all = kernc::all_dtypes(&count);
  for (std::size_t k = 0; k < count; ++k) {
    CallTypes types = call({arr(all[k]), scalar(all[(k + 1) % count])}, {all[(k + 2) % count], std::nullopt});
    std::string text = kernc::format_call_signature(types);
    CAPTURE(text);
    CallTypes back = kernc::parse_call_signature(text);
    CHECK(back.inputs == types.inputs);
    CHECK(back.outputs == types.outputs);
    CHECK(kernc::format_call_signature(back) == text);
  }
}

TEST_CASE("kernels::parse_call_signature rejects malformed lines, quoting them") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"float32 float32", "signature \"float32 float32\": expected \"INPUTS -> OUTPUTS\""},
      {"float32, float32", "signature \"float32, float32\": expected \"INPUTS -> OUTPUTS\""},
      {"float32 -> float32 -> float32", "expected \"INPUTS -> OUTPUTS\""},
      {"float32 float32 -> float32", "\"float32 float32\" is not a dtype"},
      {"float33 -> float32", "signature \"float33 -> float32\": \"float33\" is not a dtype"},
      {"float32 -> float33", "\"float33\" is not a dtype"},
      {"scalar -> float32", "\"scalar\" is not a dtype"},
      {"scalar float33 -> float32", "\"float33\" is not a dtype"},
      {"float32 -> scalar float32", "\"scalar float32\" is not a dtype"},
      {"float32, , float32 -> float32", "signature \"float32, , float32 -> float32\": empty input type"},
      {"float32, -> float32", "empty input type"},
      {"float32 -> float32,", "\"\" is not a dtype"},
      {"raw float32 -> float32", "\"raw float32\" is not a dtype"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.text));
    try {
      kernc::parse_call_signature(c.text);
      FAIL("accepted");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::invalid_argument);
      CAPTURE(std::string(error.what()));
      CHECK(contains(error.what(), c.message));
    }
  }
}
