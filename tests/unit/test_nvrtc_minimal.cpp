// NVRTC's -minimal for kernc's generated programs (NOTE [ minimal built-ins ],
// src/compiler/nvrtc_compiler.cpp), with the real NVRTC of this machine: the same binary
// with and without it, a program that needs what it leaves out compiled again without it,
// the same error either way, and no -minimal for programs that do not ask.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compile_test_helpers.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "test_compilers.hpp"

using kernc::ArgType;
using kernc::CallTypes;
using kernc::CompiledProgram;
using kernc::DType;
using kernc::Error;
using kernc::Layout;
using kernc::Program;
using kernc::Target;
using kernc::test::nvrtc;

namespace {

Program minimal_program(const char* operation, const char* preamble = "") {
  return kernc::test::float32_pair_program("minimal_add", operation, preamble);
}

size_t count_of(const std::vector<std::string>& flags, const std::string& flag) {
  return static_cast<size_t>(std::count(flags.begin(), flags.end(), flag));
}

Program reduction() {
  kernc::ReductionKernel kernel("T x", "T y", "x * x", "a + b", "y = a", "0", "minimal_sum");
  CallTypes types;
  types.inputs = {ArgType::array(DType::float64)};
  return kernc::program(kernel, types, Layout::reduction_classes().back());
}

// The same program, not asking for -minimal: what kernc compiled before it did.
Program without_minimal(Program program) {
  program.try_minimal_builtins = false;
  return program;
}

}  // namespace

TEST_CASE("nvrtc: a generated program compiles with -minimal, to the same binary as without") {
  const Target target = Target::parse("sm_90");
  for (const Program& program : {minimal_program("z = x * y + 1"), reduction()}) {
    CAPTURE(program.name);
    CHECK(program.try_minimal_builtins);
    const CompiledProgram lean = nvrtc().compile(program, target);
    const CompiledProgram full = nvrtc().compile(without_minimal(program), target);
    CHECK(count_of(lean.flags, "-minimal") == 1);
    CHECK(count_of(full.flags, "-minimal") == 0);
    CHECK(!lean.binary.empty());
    CHECK(lean.binary == full.binary);
    CHECK(lean.lowered_names == full.lowered_names);
  }
}

TEST_CASE("nvrtc: a generated program that needs what -minimal leaves out is compiled again without it") {
  const Target target = Target::parse("sm_90");
  // A texture object and the runtime's error type: both declared only without -minimal.
  const char* preamble =
      "__device__ float fetch_or(cudaTextureObject_t texture, int i, float fallback) {\n"
      "  cudaError_t unused = cudaSuccess; (void)unused;\n"
      "  return texture ? tex1Dfetch<float>(texture, i) : fallback;\n"
      "}\n";
  const Program program = minimal_program("z = fetch_or(0, 0, x) + y", preamble);
  const CompiledProgram compiled = nvrtc().compile(program, target);
  CHECK(count_of(compiled.flags, "-minimal") == 0);
  CHECK(compiled.binary == nvrtc().compile(without_minimal(program), target).binary);
}

TEST_CASE("nvrtc: a generated program's own error is the one a compile without -minimal reports") {
  const Target target = Target::parse("sm_90");
  const Program program = minimal_program("z = x + undeclared_name");
  std::string lean_error, lean_log, full_error, full_log;
  std::vector<std::string> lean_flags;
  try {
    nvrtc().compile(program, target);
  } catch (const Error& error) {
    lean_error = error.what();
    REQUIRE(error.compile_failure() != nullptr);
    lean_log = error.compile_failure()->log;
    lean_flags = error.compile_failure()->options;
  }
  try {
    nvrtc().compile(without_minimal(program), target);
  } catch (const Error& error) {
    full_error = error.what();
    REQUIRE(error.compile_failure() != nullptr);
    full_log = error.compile_failure()->log;
  }
  CHECK(lean_error.find("undeclared_name") != std::string::npos);
  CHECK(lean_error == full_error);
  CHECK(lean_log == full_log);
  CHECK(count_of(lean_flags, "-minimal") == 0);
}

TEST_CASE("nvrtc: programs that do not ask never compile with -minimal, and one that says it gets it once") {
  const Target target = Target::parse("sm_90");
  Program raw;
  raw.name = "raw_scale.cu";
  raw.source = "extern \"C\" __global__ void raw_scale(float* x, float a) { x[threadIdx.x] *= a; }\n";
  CHECK(!raw.try_minimal_builtins);
  CHECK(count_of(nvrtc().compile(raw, target).flags, "-minimal") == 0);

  raw.options.raw_flags = {"-minimal"};
  CHECK(count_of(nvrtc().compile(raw, target).flags, "-minimal") == 1);
  Program generated = minimal_program("z = x - y");
  generated.options.raw_flags = {"-minimal"};
  CHECK(count_of(nvrtc().compile(generated, target).flags, "-minimal") == 1);
}
