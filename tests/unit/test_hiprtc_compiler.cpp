#ifdef KERNC_WITH_HIP

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "kernc/compiler.hpp"
#include "kernc/error.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::CompiledProgram;
using kernc::Error;
using kernc::ErrorCode;
using kernc::Program;
using kernc::Target;
using kernc::test::contains;
using kernc::test::hiprtc;
using kernc::test::starts_with;
using kernc::test::test_data;

namespace {

// ELF header fields of an HSA code object (see LLVM's AMDGPUUsage: EM_AMDGPU, e_flags).
unsigned elf_u16(const std::string& elf, size_t offset) {
  return static_cast<unsigned char>(elf[offset]) | static_cast<unsigned char>(elf[offset + 1]) << 8;
}
unsigned elf_u32(const std::string& elf, size_t offset) { return elf_u16(elf, offset) | elf_u16(elf, offset + 2) << 16; }
constexpr unsigned kEmAmdgpu = 224;
constexpr unsigned kMachMask = 0xff;
constexpr unsigned kMachGfx90a = 0x3f;
constexpr unsigned kXnackMask = 0x300;  // code object v4+: unsupported / any / off / on
constexpr unsigned kXnackAny = 0x100;
constexpr unsigned kXnackOff = 0x200;

Program hip_kernels_program() {
  Program program;
  program.name = "kernels.hip";
  program.source = test_data("kernels.cu");
  program.name_expressions = {"scale<float>", "scale<double>"};
  return program;
}

}  // namespace

TEST_CASE("hiprtc::load_compiler reports what it loaded") {
  const kernc::Compiler& compiler = hiprtc();
  CHECK(compiler.backend() == kernc::Backend::hip);
  CHECK(compiler.identity().backend == kernc::Backend::hip);
  CHECK(!compiler.identity().library_path.empty());
  CHECK(!compiler.identity().version.empty());
  CHECK(compiler.identity().tag().size() == 16);
  CHECK(std::find(compiler.identity().targets.begin(), compiler.identity().targets.end(), "gfx90a") !=
        compiler.identity().targets.end());
  CHECK(compiler.identity().str() == "hiprtc " + compiler.identity().version);
  CHECK(kernc::backend_built(kernc::Backend::hip));
  auto targets = compiler.supported_targets();
  CHECK(std::find(targets.begin(), targets.end(), "gfx90a") != targets.end());
}

TEST_CASE("hiprtc::Compiler::compile builds code objects for gfx90a") {
  const Program program = hip_kernels_program();
  struct Row {
    const char* name;
    unsigned xnack;
  };
  for (const Row& row : {Row{"gfx90a", kXnackAny}, Row{"gfx90a:xnack-", kXnackOff}}) {
    const char* name = row.name;  // not a structured binding: INFO captures it (C++20 only)
    const unsigned xnack = row.xnack;
    INFO("name = " << name);
    Target target = Target::parse(name);
    CompiledProgram compiled = hiprtc().compile(program, target);
    CHECK(compiled.target == target);
    REQUIRE(compiled.binary.size() > 64);
    // HIPRTC returns the bare code object, not a clang offload bundle.
    CHECK(starts_with(compiled.binary, kernc::test::kElfMagic));
    CHECK(!starts_with(compiled.binary, "__CLANG_OFFLOAD_BUNDLE__"));
    CHECK(elf_u16(compiled.binary, 18) == kEmAmdgpu);
    unsigned flags = elf_u32(compiled.binary, 48);
    CHECK((flags & kMachMask) == kMachGfx90a);
    CHECK((flags & kXnackMask) == xnack);  // the target feature reached the compiler
    CHECK(compiled.flags == hiprtc().flags(program.options, target));
    CHECK(std::find(compiled.flags.begin(), compiled.flags.end(), std::string("--offload-arch=") + name) !=
          compiled.flags.end());
    CHECK(compiled.compiler == hiprtc().identity().str());
    for (const char* expression : {"scale<float>", "scale<double>"}) {
      INFO("expression = " << expression);
      const std::string& lowered = compiled.lowered_name(expression);
      CHECK(starts_with(lowered, "_Z"));
      CHECK(contains(lowered, "scale"));
      CHECK(contains(compiled.binary, lowered));
    }
    CHECK(contains(compiled.binary, "saxpy"));
  }
}

TEST_CASE("hiprtc::Compiler::compile reports a compile error with the log") {
  Program program;
  program.name = "kernel.hip";
  program.source = test_data("compile_error.cu");
  const Target target = Target::parse("gfx90a");
  try {
    hiprtc().compile(program, target);
    FAIL("the broken source compiled");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::compile_failed);
    const kernc::CompileFailure* failure = error.compile_failure();
    REQUIRE(failure != nullptr);
    INFO("log: " << failure->log);
    CHECK(failure->target == "gfx90a");
    CHECK(failure->program_name == "kernel.hip");
    CHECK(failure->source == program.source);
    CHECK(failure->options == hiprtc().flags(program.options, target));
    CHECK(contains(failure->log, "kernc_undeclared_identifier"));
    CHECK(contains(failure->log, "error"));
    CHECK(contains(failure->log, ":3:"));  // clang writes "kernel.hip:3:12: error: ..."
    CHECK(contains(error.what(), "kernc_undeclared_identifier"));
  }
}

TEST_CASE("hiprtc::Compiler rejects CUDA targets") {
  for (const char* name : {"sm_90", "compute_90"}) {
    INFO("name = " << name);
    try {
      hiprtc().compile(hip_kernels_program(), Target::parse(name));
      FAIL("a CUDA target was accepted");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::unsupported_target);
      CHECK(contains(error.what(), name));
    }
  }
}

#endif  // KERNC_WITH_HIP
