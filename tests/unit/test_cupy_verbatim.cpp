// CuPy's own kernels, second tier (issue 36): behaviours a verbatim port relies on, checked
// without a GPU: planning (scalars out of range, reduce_dims=False) and real NVRTC
// compiles whose static_asserts state CuPy's typing. The GPU suite
// (tests/gpu/test_gpu_cupy_verbatim.cpp) runs the same kernels on data.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "kernc/call.hpp"
#include "kernc/signature.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"
#include "thrown.hpp"

using namespace kernc;
using kernc::test::error_code_and_message;
using kernc::test::contains;
using kernc::test::nvrtc;

namespace {

ArrayRef verbatim_array(DType dtype, std::vector<std::int64_t> shape) {
  return ArrayRef::contiguous(std::uint64_t{0}, dtype, std::move(shape));
}

// Compiles `kernel` for `signature` on sm_90 with the real NVRTC; returns the error text
// or "" when it compiled.
template <class Kernel>
std::string compile_error(const Kernel& kernel, const std::string& signature) {
  try {
    auto compiled = nvrtc().compile(kernc::program(kernel, parse_call_signature(signature), Layout{}), Target::parse("sm_90"));
    CHECK(kernc::test::starts_with(compiled.binary, kernc::test::kElfMagic));
    return "";
  } catch (const Error& error) {
    return error.what();
  }
}

}  // namespace

TEST_CASE("CuPy verbatim: an integer scalar out of its parameter's range is refused, never wrapped (NEP 50)") {
  // CuPy 14: `Python integer -1 out of bounds for uint8`. Every pair of a value and an
  // integer type, through the placeholder and a concrete parameter, elementwise and reduction.
  const ElementwiseKernel add("T x, T s", "T y", "y = x + s", "verbatim_add_scalar");
  const ElementwiseKernel add8("T x, uint8 s", "T y", "y = x + s", "verbatim_add_uint8");
  struct Case {
    DType dtype;
    Scalar bad;
    const char* shown;
    Scalar good;
  };
  const Case cases[] = {
      {DType::uint8, Scalar(-1), "-1", Scalar(255)},
      {DType::uint8, Scalar(256), "256", Scalar(0)},
      {DType::int8, Scalar(128), "128", Scalar(-128)},
      {DType::int16, Scalar(-32769), "-32769", Scalar(32767)},
      {DType::uint16, Scalar(65536), "65536", Scalar(65535)},
      {DType::int32, Scalar(std::int64_t{1} << 31), "2147483648", Scalar(-2147483647 - 1)},
      {DType::uint32, Scalar(std::int64_t{1} << 32), "4294967296", Scalar(4294967295u)},
      {DType::uint32, Scalar(-1LL), "-1", Scalar(0)},
      {DType::uint64, Scalar(-1LL), "-1", Scalar(18446744073709551615ull)},
      {DType::int64, Scalar(9223372036854775808ull), "9223372036854775808", Scalar(-9223372036854775807LL - 1)},
  };
  for (const Case& c : cases) {
    CAPTURE(to_string(c.dtype));
    CAPTURE(c.shown);
    const ArrayRef x = verbatim_array(c.dtype, {100});
    const std::string error = error_code_and_message([&] { add.plan({x, c.bad}); });
    CHECK_MESSAGE(contains(error, "invalid_argument"), error);
    CHECK_MESSAGE(contains(error, std::string("the integer ") + c.shown + " is out of bounds for " + to_string(c.dtype) +
                                      " parameter \"T s\""),
                  error);
    CHECK(error_code_and_message([&] { add.plan({x, c.good}); }) == "no error");
  }
  // A concrete parameter: the same rule, whatever the placeholder is.
  CHECK(contains(error_code_and_message([&] { add8.plan({verbatim_array(DType::float32, {8}), -1}); }),
                 "the integer -1 is out of bounds for uint8 parameter \"uint8 s\""));
  CHECK(error_code_and_message([&] { add8.plan({verbatim_array(DType::float32, {8}), 200}); }) == "no error");
  // A NaN for an integer parameter is refused too (CuPy raises ValueError), not made 0.
  CHECK(contains(error_code_and_message([&] { add8.plan({verbatim_array(DType::float32, {8}), std::nan("")}); }),
                 "a NaN cannot be converted to uint8 parameter \"uint8 s\""));
  // Other floating values keep C's conversion (truncate, saturate) and bool fits everything.
  CHECK(error_code_and_message([&] { add8.plan({verbatim_array(DType::float32, {8}), -1.5}); }) == "no error");
  CHECK(error_code_and_message([&] { add8.plan({verbatim_array(DType::float32, {8}), true}); }) == "no error");
  // Reductions check their scalars as well.
  const ReductionKernel scaled_sum("T x, T s", "T y", "x * s", "a + b", "y = a", "0", "verbatim_scaled_sum");
  CallOptions rows;
  rows.axes = std::vector<int>{1};
  CHECK(contains(error_code_and_message([&] { scaled_sum.plan({verbatim_array(DType::int8, {4, 4}), 1000}, {}, rows); }),
                 "the integer 1000 is out of bounds for int8 parameter \"T s\""));
  CHECK(error_code_and_message([&] { scaled_sum.plan({verbatim_array(DType::int8, {4, 4}), -100}, {}, rows); }) == "no error");
}

TEST_CASE("CuPy verbatim: a raw kernel's declared integer parameter refuses a scalar out of its range") {
  const RawKernel fill(R"(extern "C" __global__ void verbatim_fill(unsigned char* out, unsigned char value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
})",
                       "verbatim_fill");
  const ArrayRef out = verbatim_array(DType::uint8, {64});
  CHECK(contains(error_code_and_message([&] { fill.check_arguments({out, -1, 64}); }),
                 "the integer -1 is out of bounds for uint8 parameter \"unsigned char value\""));
  CHECK(contains(error_code_and_message([&] { fill.check_arguments({out, 7, std::int64_t{1} << 40}); }),
                 "the integer 1099511627776 is out of bounds for int32 parameter \"int n\""));
  CHECK(error_code_and_message([&] { fill.check_arguments({out, 255, 64}); }) == "no error");
}

TEST_CASE("CuPy verbatim: reduce_dims=False keeps extent-1 axes, so _ind indexes the broadcast shape") {
  ElementwiseOptions keep;
  keep.reduce_dims = false;
  const ElementwiseKernel coords("T x", "int32 y", "y = _ind.get()[2]", "verbatim_coords", keep);
  const ElementwiseKernel reduced("T x", "int32 y", "y = _ind.get()[1]", "verbatim_coords_reduced");
  Call plan = coords.plan({verbatim_array(DType::float32, {2, 1, 3, 4})});
  CHECK(plan.layout() == Layout{LayoutKind::strided, 4, false});
  // With reduce_dims (the default) the same array is one flat loop, as in CuPy.
  CHECK(reduced.plan({verbatim_array(DType::float32, {2, 1, 3, 4})}).layout().kind == LayoutKind::contiguous);
  CHECK(compile_error(coords, "float32 -> int32") == "");
}

TEST_CASE("CuPy verbatim: float16 arithmetic is float arithmetic, rounded once when stored; native is an opt-in") {
  // CuPy's float16 has no operators: x * y + x is a float. The static_asserts are the test:
  // they compile only when the expression has the type CuPy gives it.
  const ElementwiseKernel cupy("T x, T y", "T z",
                               "static_assert(sizeof(x * y + x) == sizeof(float), \"computed in float\");\n"
                               "static_assert(sizeof(-x) == sizeof(float), \"negation too\");\n"
                               "z = x * y + x;\nz += x;\nz *= 2;",
                               "verbatim_half_float");
  CHECK(compile_error(cupy, "float16, float16 -> float16") == "");
  CHECK(compile_error(cupy, "bfloat16, bfloat16 -> bfloat16") == "");
  ElementwiseOptions native;
  native.native_half_arithmetic = true;
  const ElementwiseKernel fast("T x, T y", "T z",
                               "static_assert(sizeof(x * y + x) == 2, \"a half, natively\");\nz = x * y + x;\nz += x;",
                               "verbatim_half_native", native);
  CHECK(compile_error(fast, "float16, float16 -> float16") == "");
  // The option is part of the program: the two never share a source or a cache entry.
  const ElementwiseKernel plain("T x, T y", "T z", "z = x * y + x", "verbatim_half");
  const ElementwiseKernel plain_native("T x, T y", "T z", "z = x * y + x", "verbatim_half", native);
  const CallTypes halves = parse_call_signature("float16, float16 -> float16");
  CHECK(kernc::program(plain, halves, Layout{}).source != kernc::program(plain_native, halves, Layout{}).source);
  CHECK(contains(kernc::program(plain_native, halves, Layout{}).source, "#define KERNC_NATIVE_HALF_ARITHMETIC 1"));
  // A reduction: a + b of two halves is a float, assigned to the half reduce type.
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "verbatim_half_sum");
  CHECK(compile_error(sum, "float16 -> float16") == "");
}

TEST_CASE("CuPy verbatim: a raw array indexed with a braced list, x[{i % 3, i / 3}]") {
  const ElementwiseKernel transpose("raw T x, int32 rows", "T y", "y = x[{i % rows, i / rows}]", "verbatim_brace");
  CHECK(compile_error(transpose, "float32, scalar int32 -> float32") == "");
  CHECK(compile_error(transpose, "complex128, scalar int32 -> complex128") == "");
  // One index: the flat overload still wins (no ambiguity).
  const ElementwiseKernel one("raw T x", "T y", "y = x[{i}]", "verbatim_brace_one");
  CHECK(compile_error(one, "float32 -> float32") == "");
  // Indices of mixed integer types, size_t among them (CuPy takes a list of any one integer type).
  const ElementwiseKernel mixed("raw T x", "T y", "size_t k = i; y = x[{k, i % 2, 0}]", "verbatim_brace_mixed");
  CHECK(compile_error(mixed, "float32 -> float32") == "");
  // A floating index is refused, as a multi-index of floats is.
  const ElementwiseKernel floating("raw T x", "T y", "y = x[{0.5, 1.0}]", "verbatim_brace_float");
  CHECK_FALSE(compile_error(floating, "float32 -> float32").empty());
}

TEST_CASE("CuPy verbatim: an operation that reads an output back through its raw view binds it to memory") {
  const ElementwiseKernel readback("T x", "T y, T z", "y = x * 2; z = _raw_y[i] + 1", "verbatim_readback");
  const std::string source = kernc::program(readback, parse_call_signature("float32 -> float32, float32"), Layout{}).source;
  // Bound to memory, element by element, not kept in registers.
  CHECK(contains(source, "& y __attribute__((unused)) = _raw_y[i];"));
  CHECK_FALSE(contains(source, "_o_y"));
  CHECK(compile_error(readback, "float32 -> float32, float32") == "");
}

TEST_CASE("CuPy verbatim: a template instance's parameters are its template's with the arguments substituted") {
  // CuPy passes the pointer to `T p` of `k<float *>`; kernc read `T p` as a scalar.
  const RawModule module(R"(
template <typename T>
__global__ void k(T p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 2 * p[i];
}
template <typename T, typename U = double>
static __global__ void scale(T* out, const T* in, U s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * s;
}
template <typename... Ts> __global__ void pack(Ts... xs) {}
)",
                         {}, {"k<float *>", "scale<float>", "scale<double, float>", "pack<int, float>"}, "verbatim_templates");
  auto k = module.parameters("k<float *>");
  REQUIRE(k);
  REQUIRE(k->size() == 2);
  CHECK((*k)[0].pointer);
  CHECK((*k)[0].name == "p");
  CHECK_FALSE((*k)[1].pointer);
  CHECK((*k)[1].dtype == DType::int32);
  const ArrayRef x = verbatim_array(DType::float32, {64});
  CHECK(error_code_and_message([&] { module.check_arguments("k<float *>", {x, 64}); }) == "no error");
  CHECK(contains(error_code_and_message([&] { module.check_arguments("k<float *>", {1.0f, 64}); }), "is a pointer"));
  // A default type argument, and both given.
  auto with_default = module.parameters("scale<float>");
  REQUIRE(with_default);
  REQUIRE(with_default->size() == 4);
  CHECK((*with_default)[0].pointer);
  CHECK((*with_default)[1].const_pointee);
  CHECK((*with_default)[2].dtype == DType::float64);
  auto both = module.parameters("scale<double, float>");
  REQUIRE(both);
  CHECK((*both)[2].dtype == DType::float32);
  CHECK(contains(error_code_and_message([&] { module.check_arguments("scale<double, float>", {x, x, 2.0, -(1LL << 40)}); }),
                 "out of bounds for int32 parameter \"int n\""));
  // A parameter pack is not read: no declaration, no checks from it (the driver's sizes decide).
  CHECK_FALSE(module.parameters("pack<int, float>"));
}

TEST_CASE("CuPy verbatim: a reduction may name _j, CuPy's flat input index, beside _J and _i") {
  // cupy/_core/_reduction.pyx: _j == _J * _out_ind.size() + _i. Both layouts, and the
  // columns kernel of an outer-axis reduction (generic layout, a 4-byte input).
  const ReductionKernel weighted("T x", "T y", "x * (_j % 7)", "a + b", "y = a", "0", "verbatim_j");
  for (const char* signature : {"float32 -> float32", "float64 -> float64", "float16 -> float16"}) {
    CAPTURE(signature);
    for (const Layout& layout : {Layout{}, Layout{LayoutKind::generic, 0, false}}) {
      auto program = kernc::program(weighted, parse_call_signature(signature), layout);
      CHECK(contains(program.source, "const _index_t _j __attribute__((unused)) = _J * _out_size + _i;"));
      auto compiled = nvrtc().compile(program, Target::parse("sm_90"));
      CHECK(kernc::test::starts_with(compiled.binary, kernc::test::kElfMagic));
    }
  }
}

namespace {

// CuPy's test_raw.py (_test_cuComplex, test_addf_scalar and test_add_scalar): the
// double-named cuCadd on single-precision values, as translate_cucomplex=True allows.
const char* const kCuComplexAcross = R"(#include <cuComplex.h>
#define N 100
extern "C" __global__ void test_addf_scalar(cuComplex* arr, cuComplex scalar, cuComplex* out) {
  int tid = blockDim.x * blockIdx.x + threadIdx.x;
  if (tid < N) out[tid] = cuCadd(arr[tid], scalar);
}
extern "C" __global__ void test_mixed(cuDoubleComplex* arr, cuComplex* out) {
  int tid = blockDim.x * blockIdx.x + threadIdx.x;
  if (tid < N) {
    cuDoubleComplex z = cuCmulf(arr[tid], make_cuDoubleComplex(2.0, 1.0));
    out[tid] = cuCfma(make_cuComplex(1.f, 2.f), cuComplexDoubleToFloat(z), make_cuComplex(cuCabs(out[tid]), cuCimagf(z)));
  }
}
)";

}  // namespace

TEST_CASE("CuPy verbatim: cuComplex code that calls a function across precisions compiles (translate_cucomplex)") {
  const RawModule module(kCuComplexAcross, {}, {}, "verbatim_cucomplex");
  const Program program = kernc::program(module);
  CHECK(contains(program.source, "#include <cuComplex.h>\n#include \"kernc/cucomplex_bridge.cuh\"\n#line 2\n#define N 100"));
  CHECK(program.options.headers.count("kernc/cucomplex_bridge.cuh") == 1);
  auto compiled = nvrtc().compile(program, Target::parse("compute_80"));
  CHECK(contains(compiled.binary, ".entry test_addf_scalar"));
  CHECK(contains(compiled.binary, ".entry test_mixed"));
  // Errors keep the user's line numbers after the inserted include.
  const RawKernel broken("#  include  <cuComplex.h>\n\nextern \"C\" __global__ void k() { undefined_name(); }\n", "k");
  try {
    nvrtc().compile(kernc::program(broken), Target::parse("sm_90"));
    FAIL("an undefined name compiled");
  } catch (const Error& error) {
    CHECK_MESSAGE(contains(error.compile_failure()->log, "k.cu(3)"), error.compile_failure()->log);
  }
  // A source that does not include it is untouched.
  const RawKernel plain("extern \"C\" __global__ void k() {} // cuComplex.h", "k");
  CHECK(kernc::program(plain).source == "extern \"C\" __global__ void k() {} // cuComplex.h");
  CHECK(kernc::program(plain).options.headers.empty());
}
