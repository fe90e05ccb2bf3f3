#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

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
using kernc::test::nvrtc;
using kernc::test::starts_with;
using kernc::test::test_data;

namespace {

Program nvrtc_kernels_program() {
  Program program;
  program.name = "kernels.cu";
  program.source = test_data("kernels.cu");
  program.name_expressions = {"scale<float>", "scale<double>", "saxpy"};
  return program;
}

constexpr unsigned kEmCuda = 190;

// The SM number a cubin was built for, from its ELF e_flags: the low byte up to ELF ABI
// version 7, the second byte from version 8 on (CUDA 12.8+ writes 0x6005a04 for sm_90).
int cubin_sm(const std::string& cubin) {
  auto byte = [&cubin](size_t offset) { return static_cast<int>(static_cast<unsigned char>(cubin[offset])); };
  return byte(8) >= 8 ? byte(49) : byte(48);
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// NVRTC 12.9+ has the driver's compute cache and its -no-cache flag (NOTE [ the driver's
// compute cache ], src/compiler/nvrtc_compiler.cpp).
bool has_driver_cache(const kernc::Compiler& compiler) {
  int major = 0, minor = 0;
  std::sscanf(compiler.identity().version.c_str(), "%d.%d", &major, &minor);
  return major > 12 || (major == 12 && minor >= 9);
}

// The flags a compile is given: flags(), then the driver's cache flag where NVRTC has one.
std::vector<std::string> given_flags(const kernc::Compiler& compiler, const Program& program, const Target& target,
                                     const char* cache_flag = "-no-cache") {
  auto flags = compiler.flags(program.options, target);
  if (has_driver_cache(compiler)) flags.push_back(cache_flag);
  return flags;
}

}  // namespace

TEST_CASE("nvrtc::load_compiler reports what it loaded") {
  const kernc::Compiler& compiler = nvrtc();
  CHECK(compiler.backend() == kernc::Backend::cuda);
  const auto& identity = compiler.identity();
  CHECK(identity.backend == kernc::Backend::cuda);
  CHECK(contains(identity.library_path, "libnvrtc"));
  CHECK(identity.library_path.front() == '/');
  CHECK(!identity.version.empty());
  CHECK(contains(identity.version, "."));
  CHECK(identity.targets == compiler.supported_targets());  // numeric order, as NVRTC reports them
  CHECK(identity.reported() == identity.str() + " " + fmt::format("{}", fmt::join(identity.targets, " ")) +
                                   " headers " + identity.headers);
  CHECK(identity.tag().size() == 16);
  CHECK(identity.str() == "nvrtc " + identity.version);
  CHECK(kernc::backend_built(kernc::Backend::cuda));
}

TEST_CASE("nvrtc::Compiler::supported_targets lists sm_NN names") {
  auto targets = nvrtc().supported_targets();
  CHECK(has(targets, "sm_80"));
  CHECK(has(targets, "sm_90"));
  for (const auto& name : targets) {
    INFO("name = " << name);
    CHECK(starts_with(name, "sm_"));
    CHECK_NOTHROW(nvrtc().check_target(Target::parse(name)));
  }
}

TEST_CASE("nvrtc::Compiler::compile builds cubin and PTX") {
  const kernc::Compiler& compiler = nvrtc();
  const Program program = nvrtc_kernels_program();

  SUBCASE("cubin for sm_80 and sm_90") {
    for (const char* name : {"sm_80", "sm_90"}) {
      INFO("name = " << name);
      Target target = Target::parse(name);
      CompiledProgram compiled = compiler.compile(program, target);
      CHECK(compiled.target == target);
      REQUIRE(compiled.binary.size() > 64);
      CHECK(starts_with(compiled.binary, kernc::test::kElfMagic));
      CHECK(static_cast<unsigned char>(compiled.binary[18]) == kEmCuda);
      CHECK(cubin_sm(compiled.binary) == target.sm_number());
      CHECK(compiled.flags == given_flags(compiler, program, target));
      CHECK(has(compiled.flags, std::string("-arch=") + name));
      CHECK(compiled.compiler == compiler.identity().str());
      CHECK(compiled.compile_ms > 0);
      // Every name expression was lowered; templates are mangled, extern "C" is not.
      REQUIRE(compiled.lowered_names.size() == 3);
      for (const char* expression : {"scale<float>", "scale<double>"}) {
        INFO("expression = " << expression);
        const std::string& lowered = compiled.lowered_name(expression);
        CHECK(starts_with(lowered, "_Z"));
        CHECK(contains(lowered, "scale"));
        CHECK(contains(compiled.binary, lowered));  // the cubin's symbol table holds it
      }
      CHECK(compiled.lowered_name("scale<float>") != compiled.lowered_name("scale<double>"));
      CHECK(compiled.lowered_name("saxpy") == "saxpy");
    }
  }
  SUBCASE("PTX for compute_90") {
    Target target = Target::parse("compute_90");
    CompiledProgram compiled = compiler.compile(program, target);
    CHECK(compiled.target == target);
    CHECK(contains(compiled.binary, ".target sm_90"));
    CHECK(contains(compiled.binary, ".entry"));
    CHECK(contains(compiled.binary, ".entry saxpy"));
    CHECK(contains(compiled.binary, compiled.lowered_name("scale<float>")));
    CHECK(!starts_with(compiled.binary, kernc::test::kElfMagic));
    CHECK(compiled.binary.find('\0') == std::string::npos);  // text without its terminator
  }
  SUBCASE("an unknown name expression is not_found listing the known ones") {
    CompiledProgram compiled = compiler.compile(program, Target::parse("sm_80"));
    try {
      compiled.lowered_name("scale<int>");
      FAIL("scale<int> was found");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::not_found);
      CHECK(contains(error.what(), "scale<int>"));
      CHECK(contains(error.what(), "scale<float>"));
    }
  }
}

TEST_CASE("nvrtc::Compiler::compile reports a compile error with the log and its inputs") {
  Program program;
  program.name = "kernel.cu";
  program.source = test_data("compile_error.cu");
  program.options.defines["UNUSED"] = "1";
  const Target target = Target::parse("sm_80");
  try {
    nvrtc().compile(program, target);
    FAIL("the broken source compiled");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::compile_failed);
    CHECK(contains(error.what(), "kernel.cu"));
    CHECK(contains(error.what(), "sm_80"));
    CHECK(contains(error.what(), "kernc_undeclared_identifier"));
    const kernc::CompileFailure* failure = error.compile_failure();
    REQUIRE(failure != nullptr);
    CHECK(failure->program_name == "kernel.cu");
    CHECK(failure->target == "sm_80");
    CHECK(failure->source == program.source);
    CHECK(failure->options == given_flags(nvrtc(), program, target));
    CHECK(has(failure->options, "-DUNUSED=1"));
    // NVRTC writes "kernel.cu(3): error: identifier ... is undefined".
    CHECK(contains(failure->log, "kernel.cu(3)"));
    CHECK(contains(failure->log, "error"));
    CHECK(contains(failure->log, "kernc_undeclared_identifier"));
  }
}

TEST_CASE("nvrtc::Compiler rejects targets it cannot build for") {
  for (const char* name : {"sm_30", "sm_999", "compute_35"}) {
    INFO("name = " << name);
    try {
      nvrtc().compile(nvrtc_kernels_program(), Target::parse(name));
      FAIL("the target was accepted");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::unsupported_target);
      CHECK(contains(error.what(), name));
      CHECK(contains(error.what(), "sm_90"));
      CHECK(contains(error.what(), "sm_80"));
    }
  }
  SUBCASE("a HIP target") {
    try {
      nvrtc().check_target(Target::parse("gfx90a"));
      FAIL("gfx90a was accepted");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::unsupported_target);
      CHECK(contains(error.what(), "gfx90a"));
    }
  }
}

TEST_CASE("nvrtc::Compiler::compile hands over extra headers and defines") {
  Program program;
  program.name = "uses_header_and_define.cu";
  program.source = test_data("uses_header_and_define.cu");
  program.options.headers["kernc_test_header.cuh"] =
      "#pragma once\nconstexpr __host__ __device__ int kernc_test_header_value() { return 7; }\n";
  program.options.defines["KERNC_TEST_VALUE"] = "42";
  const Target target = Target::parse("sm_80");

  SUBCASE("with both the source compiles") {
    CompiledProgram compiled = nvrtc().compile(program, target);
    CHECK(starts_with(compiled.binary, kernc::test::kElfMagic));
    CHECK(contains(compiled.binary, "fill"));
    CHECK(has(compiled.flags, "-DKERNC_TEST_VALUE=42"));
  }
  SUBCASE("another define value reaches the static_assert") {
    program.options.defines["KERNC_TEST_VALUE"] = "41";
    try {
      nvrtc().compile(program, target);
      FAIL("compiled with KERNC_TEST_VALUE=41");
    } catch (const Error& error) {
      REQUIRE(error.compile_failure() != nullptr);
      CHECK(contains(error.compile_failure()->log, "KERNC_TEST_VALUE must be 42"));
    }
  }
  SUBCASE("without the define the #error fires") {
    program.options.defines.clear();
    try {
      nvrtc().compile(program, target);
      FAIL("compiled without KERNC_TEST_VALUE");
    } catch (const Error& error) {
      REQUIRE(error.compile_failure() != nullptr);
      CHECK(contains(error.compile_failure()->log, "KERNC_TEST_VALUE is not defined"));
    }
  }
  SUBCASE("another header content reaches the compiler") {
    program.options.headers["kernc_test_header.cuh"] =
        "#pragma once\nconstexpr __host__ __device__ int kernc_test_header_value() { return 8; }\n";
    try {
      nvrtc().compile(program, target);
      FAIL("compiled with the wrong header");
    } catch (const Error& error) {
      REQUIRE(error.compile_failure() != nullptr);
      CHECK(contains(error.compile_failure()->log, "the extra header was not the one given"));
    }
  }
  SUBCASE("without the header the include fails") {
    program.options.headers.clear();
    try {
      nvrtc().compile(program, target);
      FAIL("compiled without the header");
    } catch (const Error& error) {
      REQUIRE(error.compile_failure() != nullptr);
      CHECK(contains(error.compile_failure()->log, "kernc_test_header.cuh"));
    }
  }
  SUBCASE("the header can come from an include directory instead") {
    kernc::test::TempDir dir;
    dir.write("include/kernc_test_header.cuh",
              "#pragma once\nconstexpr __host__ __device__ int kernc_test_header_value() { return 7; }\n");
    program.options.headers.clear();
    program.options.include_dirs = {dir / "include"};
    CompiledProgram compiled = nvrtc().compile(program, target);
    CHECK(starts_with(compiled.binary, kernc::test::kElfMagic));
    CHECK(has(compiled.flags, "-I" + dir / "include"));
  }
}

TEST_CASE("nvrtc::Compiler::flags maps every option to one NVRTC flag") {
  kernc::CompileOptions options;
  options.language_standard = "c++20";
  options.defines = {{"A", "1"}, {"B", ""}};
  options.include_dirs = {"/inc"};
  options.fast_math = true;
  options.line_info = true;
  options.debug = true;
  options.raw_flags = {"-maxrregcount=32"};
  auto flags = nvrtc().flags(options, Target::parse("compute_90a"));
  // The toolkit's include directories come after the program's own (test_toolkit_includes.cpp).
  const std::vector<std::string> expected = {"-arch=compute_90a", "-std=c++20",
                                             "-DA=1",             "-DB",
                                             "-I/inc",            "-I/usr/local/cuda/include",
                                             "-I/usr/local/cuda/include/cccl", "--use_fast_math",
                                             "-lineinfo",         "-G",
                                             "-maxrregcount=32"};
  CHECK(flags == expected);
  CHECK(nvrtc().flags(kernc::CompileOptions{}, Target::parse("sm_80")) ==
        std::vector<std::string>{"-arch=sm_80", "-std=c++17", "-I/usr/local/cuda/include",
                                 "-I/usr/local/cuda/include/cccl"});
}

TEST_CASE("nvrtc: a name expression the module does not define is named in the error") {
  Program program;
  program.name = "templates.cu";
  program.source = "template <class T> __global__ void scale(T* x, T a) { x[threadIdx.x] *= a; }\n";
  program.name_expressions = {"scale<float>", "nosuch<int>"};
  try {
    (void)nvrtc().compile(program, Target::parse("sm_90"));
    FAIL("compiled a module without nosuch");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::compile_failed);
    REQUIRE(error.compile_failure() != nullptr);  // the log is kept
    CHECK_MESSAGE(contains(error.what(), "name expression \"nosuch<int>\" is not defined by the module"), error.what());
    CHECK_MESSAGE(!contains(error.what(), "scale<float>"), error.what());
  }
}

TEST_CASE("nvrtc: the driver's compute cache is off unless KERNC_DRIVER_COMPILE_CACHE allows it") {
  const Program program = nvrtc_kernels_program();
  const Target target = Target::parse("sm_90");
  SUBCASE("off by default: -no-cache, outside flags() and so outside the cache key") {
    const CompiledProgram compiled = nvrtc().compile(program, target);
    CHECK(compiled.flags == given_flags(nvrtc(), program, target));
    CHECK_FALSE(has(nvrtc().flags(program.options, target), "-no-cache"));
    CHECK_FALSE(compiled.driver_cache_hit);
  }
  SUBCASE("allowed: NVRTC traces its cache, the trace is read and taken out of the log") {
    kernc::CompilerLibraryPaths paths = kernc::test::compiler_paths();
    paths.driver_compile_cache = true;
    const auto compiler = kernc::test::load_for_tests(kernc::Backend::cuda, paths);
    CHECK(compiler->flags(program.options, target) == nvrtc().flags(program.options, target));
    const CompiledProgram compiled = compiler->compile(program, target);
    CHECK(compiled.flags == given_flags(*compiler, program, target, "--enable-cache-trace"));
    CHECK_FALSE(contains(compiled.log, "[nvrtc cache]"));
    CHECK_FALSE(contains(compiled.log, "driver cache"));
    // The same program compiled without the cache: the same binary.
    CHECK(compiled.binary == nvrtc().compile(program, target).binary);
    // A hit needs a driver to keep the cache; a machine without one compiles every time
    // (tests/gpu has the hit: test_gpu_driver_cache.cpp).
  }
}
