// Golden generated sources: what codegen emits for a few kernels of each kind, compared
// byte for byte with tests/unit/golden/*.cu. The goldens are the spec of codegen and were
// reviewed line by line (placeholders, #line numbers, parameter order, ArrayView ranks and
// index types); a change to templates/ or src/codegen/ shows up here as a diff to review.
//
// To accept an intended change, rewrite the goldens and review them with `git diff`:
//   KERNC_UPDATE_GOLDENS=1 ./build/tests/kernc_unit_tests -sf='*test_codegen_goldens*'

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/kernel_codegen.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::ArgType;
using kernc::CallTypes;
using kernc::DType;
using kernc::Layout;
using kernc::Program;

namespace {

std::string golden_path(const std::string& name) {
  return std::string(KERNC_SOURCE_DIR) + "/tests/unit/golden/" + name;
}

bool updating_goldens() {
  const char* value = std::getenv("KERNC_UPDATE_GOLDENS");
  return value != nullptr && std::string(value) == "1";
}

std::vector<std::string> golden_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Where `actual` first departs from `expected`, as a short readable hint.
std::string first_difference(const std::string& expected, const std::string& actual) {
  auto want = golden_lines(expected), got = golden_lines(actual);
  for (size_t k = 0; k < want.size() || k < got.size(); ++k) {
    if (k < want.size() && k < got.size() && want[k] == got[k]) continue;
    std::ostringstream hint;
    hint << "first difference at line " << k + 1 << " (golden has " << want.size() << " lines, generated " << got.size()
         << ")\n"
         << "- " << (k < want.size() ? want[k] : "<end of golden>") << "\n"
         << "+ " << (k < got.size() ? got[k] : "<end of generated>") << "\n";
    return hint.str();
  }
  return "the lines agree; the difference is in line endings or a trailing newline\n";
}

// Compares `source` with the golden file `name`, or rewrites it under KERNC_UPDATE_GOLDENS=1.
void check_golden(const std::string& name, const std::string& source) {
  const std::string path = golden_path(name);
  CAPTURE(path);
  if (updating_goldens()) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << source;
    REQUIRE(out.good());
    MESSAGE("rewrote " << path);
    return;
  }
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing golden " << path << "; run with KERNC_UPDATE_GOLDENS=1 to write it");
  std::string golden((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const bool same = golden == source;
  CHECK_MESSAGE(same, name << " differs from the generated source:\n" << first_difference(golden, source));
}

// What every generated program carries besides its source.
void check_generated_program(const Program& program, const std::string& name) {
  CHECK(program.name == name + ".cu");
  CHECK(program.name_expressions.empty());
  CHECK(program.options.headers == kernc::codegen::device_headers());
}

const kernc::ElementwiseKernel& saxpy() {
  static const kernc::ElementwiseKernel kernel("T a, T x, T y", "T z", "z = a * x + y", "saxpy");
  return kernel;
}

CallTypes saxpy_float32() {
  CallTypes types;
  types.inputs = {ArgType::scalar_of(DType::float32), ArgType::array(DType::float32), ArgType::array(DType::float32)};
  return types;
}

Program saxpy_contiguous_i32() { return kernc::program(saxpy(), saxpy_float32(), Layout::parse("contiguous-i32")); }
Program saxpy_strided2_i64() { return kernc::program(saxpy(), saxpy_float32(), Layout::parse("strided2-i64")); }

// Raw and concrete parameters, a scalar, two outputs (one left to kernc), every snippet.
Program lookup_generic_i32() {
  kernc::ElementwiseOptions options;
  options.preamble = "template <typename V>\n__device__ V twice(V v) { return v + v; }";
  options.loop_prep = "int visited = 0;\nconst long long n = table.size();";
  options.after_loop = "if (visited < 0) counts[0] = visited;";
  options.compile.defines["KERNC_GOLDEN"] = "1";
  kernc::ElementwiseKernel kernel("T x, raw T table, float64 scale, raw int32 counts", "U y, float32 w",
                                  "y = U(twice(x) + table[i % n] * scale);\nw = float(y);\nvisited += 1", "lookup",
                                  options);
  CallTypes types;
  types.inputs = {ArgType::array(DType::float16), ArgType::array(DType::float16), ArgType::scalar_of(DType::float32),
                  ArgType::array(DType::int32)};
  types.outputs = {DType::float64, std::nullopt};
  return kernc::program(kernel, types, Layout::parse("generic-i32"));
}

Program sum_of_squares_contiguous_i32() {
  kernc::ReductionKernel kernel("T x", "T y", "x * x", "a + b", "y = a", "0", "sum_of_squares");
  CallTypes types;
  types.inputs = {ArgType::array(DType::int8)};
  return kernc::program(kernel, types, Layout::parse("contiguous-i32"));
}

// No identity, reduce_type, a preamble, a scalar input, two outputs, multi-line snippets.
Program max_abs_generic_i64() {
  kernc::ReductionOptions options;
  options.reduce_type = "float64";
  options.preamble = "__device__ double weight(double v) { return v < 0 ? -v : v; }";
  kernc::ReductionKernel kernel("T x, float32 bias", "T y, int64 n", "weight(x) + bias", "a > b\n  ? a\n  : b",
                                "y = T(a);\nn = 1", "", "max_abs", options);
  CHECK_FALSE(kernel.has_identity());
  CallTypes types;
  types.inputs = {ArgType::array(DType::float32), ArgType::scalar_of(DType::float64)};
  return kernc::program(kernel, types, Layout{kernc::LayoutKind::generic, 0, true});
}

struct GoldenCase {
  const char* file;
  const char* kernel;
  Program (*make)();
};

const GoldenCase kGoldens[] = {
    {"elementwise_saxpy_contiguous-i32.cu", "saxpy", saxpy_contiguous_i32},
    {"elementwise_saxpy_strided2-i64.cu", "saxpy", saxpy_strided2_i64},
    {"elementwise_lookup_generic-i32.cu", "lookup", lookup_generic_i32},
    {"reduction_sum_of_squares_contiguous-i32.cu", "sum_of_squares", sum_of_squares_contiguous_i32},
    {"reduction_max_abs_generic-i64.cu", "max_abs", max_abs_generic_i64},
};

void check_golden_case(const char* file) {
  for (const auto& c : kGoldens) {
    if (std::string(c.file) != file) continue;
    Program program = c.make();
    check_generated_program(program, c.kernel);
    check_golden(c.file, program.source);
    return;
  }
  FAIL("no golden case " << file);
}

}  // namespace

TEST_CASE("codegen::render_elementwise golden: saxpy with a scalar, contiguous-i32") {
  check_golden_case("elementwise_saxpy_contiguous-i32.cu");
}

TEST_CASE("codegen::render_elementwise golden: saxpy with a scalar, strided2-i64") {
  check_golden_case("elementwise_saxpy_strided2-i64.cu");
}

TEST_CASE("codegen::render_elementwise golden: raw and concrete params, preamble, loop_prep, after_loop, generic-i32") {
  check_golden_case("elementwise_lookup_generic-i32.cu");
  CHECK(lookup_generic_i32().options.defines == std::map<std::string, std::string>{{"KERNC_GOLDEN", "1"}});
}

TEST_CASE("codegen::render_reduction golden: with an identity, contiguous-i32") {
  check_golden_case("reduction_sum_of_squares_contiguous-i32.cu");
}

TEST_CASE("codegen::render_reduction golden: no identity, reduce_type, scalar input, generic-i64") {
  check_golden_case("reduction_max_abs_generic-i64.cu");
}

TEST_CASE("codegen goldens: every restore directive names the real next line, and the programs compile") {
  for (const auto& c : kGoldens) {
    CAPTURE(std::string(c.file));
    const Program program = c.make();
    const auto lines = golden_lines(program.source);
    const std::string file = "\"" + std::string(c.kernel) + ".cu\"";
    int restores = 0, snippets = 0;
    for (size_t k = 0; k < lines.size(); ++k) {
      if (lines[k].rfind("#line 1 \"" + std::string(c.kernel) + " ", 0) == 0) ++snippets;
      if (lines[k].rfind("#line ", 0) == 0 && lines[k].find(file) != std::string::npos) {
        ++restores;
        CHECK(lines[k] == "#line " + std::to_string(k + 2) + " " + file);
      }
    }
    CHECK(restores == snippets);
    CHECK(restores > 0);
    auto compiled = kernc::test::nvrtc().compile(program, kernc::Target::parse("sm_90"));
    CHECK(kernc::test::starts_with(compiled.binary, kernc::test::kElfMagic));
    CHECK(compiled.log.empty());
  }
}

TEST_CASE("codegen::render_reduction rejects strided layouts") {
  kernc::ReductionKernel kernel("T x", "T y", "x", "a + b", "y = a", "0", "sum");
  CallTypes types;
  types.inputs = {ArgType::array(DType::float32)};
  try {
    kernc::program(kernel, types, Layout::parse("strided1-i32"));
    FAIL("no error");
  } catch (const kernc::Error& error) {
    CHECK(error.code() == kernc::ErrorCode::invalid_argument);
    CHECK(std::string(error.what()) == "sum: reductions use the contiguous or generic layout, not strided1-i32");
  }
}

TEST_CASE("kernels::RawKernel::program is the code verbatim") {
  const std::string code =
      "extern \"C\" __global__ void fill(float* out, float v, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = v;\n}\n";
  kernc::CompileOptions options;
  options.fast_math = true;
  options.defines["N"] = "4";
  kernc::RawKernel kernel(code, "fill", options);
  Program program = kernc::program(kernel);
  CHECK(kernel.name() == "fill");
  CHECK(program.name == "fill.cu");
  CHECK(program.source == code);
  CHECK(program.name_expressions.empty());
  CHECK(program.options.headers.empty());  // no kernc headers for user code
  CHECK(program.options.fast_math);
  CHECK(program.options.defines == options.defines);
}

TEST_CASE("kernels::RawModule::program is the code verbatim and keeps the name expressions") {
  const std::string code = kernc::test::test_data("kernels.cu");
  const std::vector<std::string> expressions = {"scale<float>", "scale<double>", "saxpy"};
  kernc::RawModule module(code, {}, expressions, "my_module");
  Program program = kernc::program(module);
  CHECK(module.name() == "my_module");
  CHECK(module.name_expressions() == expressions);
  CHECK(program.name == "my_module.cu");
  CHECK(program.source == code);
  CHECK(program.name_expressions == expressions);
  CHECK(program.options.headers.empty());

  kernc::RawModule unnamed(code);
  CHECK(unnamed.name() == "module");
  CHECK(kernc::program(unnamed).name == "module.cu");
  CHECK(kernc::program(unnamed).name_expressions.empty());
}

TEST_CASE("codegen: a call shape always gives the same program") {
  for (const auto& layout : Layout::elementwise_classes()) {
    CAPTURE(layout.str());
    Program a = kernc::program(saxpy(), saxpy_float32(), layout);
    Program b =
        kernc::program(kernc::ElementwiseKernel("T a, T x, T y", "T z", "z = a * x + y", "saxpy"), saxpy_float32(), layout);
    CHECK(a.source == b.source);
    CHECK(kernc::canonical_bytes(a.options) == kernc::canonical_bytes(b.options));
    // ...and every layout class its own program.
    for (const auto& other : Layout::elementwise_classes()) {
      if (!(other == layout)) CHECK(kernc::program(saxpy(), saxpy_float32(), other).source != a.source);
    }
  }
}
