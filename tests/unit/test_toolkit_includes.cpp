// The toolkit include directories given to the runtime compiler (issue 13, item 2): found
// next to NVRTC, overridable, shown in the compiler's identity and so in every cache key.

#include <doctest/doctest.h>

#include <cuda.h>

#include <algorithm>
#include <optional>
#include <string>

#include "compiler/toolkit_includes.hpp"
#include "kernc/compiler.hpp"
#include "kernc/config.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "platform/files.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::Backend;
using kernc::CompilerLibraryPaths;
using kernc::Error;
using kernc::ErrorCode;
using kernc::Program;
using kernc::Target;
using kernc::test::contains;
using kernc::test::nvrtc;
using kernc::test::TempDir;

namespace {

// A CuPy RawModule that needs libcu++ and the toolkit's half header.
Program complex_module() {
  Program program;
  program.name = "complex_module.cu";
  program.source =
      "#include <cuda/std/complex>\n"
      "#include <cuda_fp16.h>\n"
      "extern \"C\" __global__ void magnitude(const cuda::std::complex<float>* z, __half* out, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = __float2half(cuda::std::abs(z[i]));\n"
      "}\n";
  return program;
}

std::shared_ptr<const kernc::Compiler> nvrtc_with(std::optional<std::string> cuda_include) {
  CompilerLibraryPaths paths = kernc::test::compiler_paths();
  paths.cuda_include = std::move(cuda_include);
  return kernc::test::load_for_tests(Backend::cuda, paths);
}

}  // namespace

TEST_CASE("NVRTC is given the CUDA toolkit's and CCCL's include directories, found next to it") {
  const auto& identity = nvrtc().identity();
  REQUIRE(identity.include_dirs.size() == 2);
  CHECK(identity.include_dirs[0] == "/usr/local/cuda/include");
  CHECK(identity.include_dirs[1] == "/usr/local/cuda/include/cccl");
  CHECK(identity.include_source == "CUDA_HOME");
  // The versions come from the headers themselves.
  CHECK(contains(identity.headers, "cuda " + std::to_string(CUDA_VERSION)));
  CHECK(contains(identity.headers, "cccl "));
  CHECK(contains(identity.reported(), " headers " + identity.headers));
  // The flags show them after the program's own directories.
  kernc::CompileOptions options;
  options.include_dirs = {"/opt/mine"};
  auto flags = nvrtc().flags(options, Target::parse("sm_90"));
  auto mine = std::find(flags.begin(), flags.end(), "-I/opt/mine");
  auto toolkit = std::find(flags.begin(), flags.end(), "-I/usr/local/cuda/include");
  REQUIRE(mine != flags.end());
  REQUIRE(toolkit != flags.end());
  CHECK(mine < toolkit);

  // A RawModule including <cuda/std/complex> and <cuda_fp16.h> compiles, as under CuPy.
  auto compiled = nvrtc().compile(complex_module(), Target::parse("sm_90"));
  CHECK(kernc::test::starts_with(compiled.binary, kernc::test::kElfMagic));
}

TEST_CASE("KERNC_CUDA_INCLUDE replaces the toolkit include directories, and changes the cache key") {
  SUBCASE("none: no directories, and the module that needs them names the missing header") {
    auto bare = nvrtc_with("none");
    CHECK(bare->identity().include_dirs.empty());
    CHECK(bare->identity().headers == "none");
    CHECK(bare->identity().include_source == "KERNC_CUDA_INCLUDE");
    CHECK(bare->identity().tag() != nvrtc().identity().tag());
    try {
      (void)bare->compile(complex_module(), Target::parse("sm_90"));
      FAIL("compiled without the toolkit headers");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::compile_failed);
      CHECK_MESSAGE(contains(error.what(), "cuda/std/complex"), error.what());
    }
  }
  SUBCASE("a directory of one's own is searched, and its contents are part of the identity") {
    TempDir dir;
    kernc::platform::make_directories(dir / "inc");
    kernc::platform::write_file_atomic(dir / "inc/my_constant.h", "#define MY_CONSTANT 7\n", 0644);
    auto own = nvrtc_with(dir / "inc");
    REQUIRE(own->identity().include_dirs == std::vector<std::string>{dir / "inc"});
    CHECK(contains(own->identity().headers, "1 files sha256:"));
    Program program;
    program.name = "own.cu";
    program.source = "#include <my_constant.h>\nextern \"C\" __global__ void k(int* x) { *x = MY_CONSTANT; }\n";
    CHECK_NOTHROW((void)own->compile(program, Target::parse("sm_90")));
    // Another directory with a header of another size: another identity (checked in a new
    // directory, as the identity is memoised per directory list and process).
    kernc::platform::make_directories(dir / "inc2");
    kernc::platform::write_file_atomic(dir / "inc2/my_constant.h", "#define MY_CONSTANT 70\n", 0644);
    CHECK(kernc::compiler::include_dirs_identity({dir / "inc2"}) != own->identity().headers);
  }
  SUBCASE("a directory that does not exist is refused, naming the variable") {
    try {
      (void)nvrtc_with("/nonexistent/kernc-include");
      FAIL("accepted a missing include directory");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::invalid_argument);
      CHECK(contains(error.what(), "KERNC_CUDA_INCLUDE"));
      CHECK(contains(error.what(), "/nonexistent/kernc-include is not a directory"));
    }
  }
}

TEST_CASE("Config reads KERNC_CUDA_INCLUDE, KERNC_ROCM_INCLUDE and ROCM_PATH into the compiler paths") {
  auto config = kernc::Config::from_environment([](const char* name) -> const char* {
    std::string n = name;
    if (n == "KERNC_CUDA_INCLUDE") return "/a:/b";
    if (n == "KERNC_ROCM_INCLUDE") return "none";
    if (n == "ROCM_PATH") return "/opt/rocm-6.1";
    return nullptr;
  });
  auto paths = config.compiler_paths();
  CHECK(paths.cuda_include == std::optional<std::string>("/a:/b"));
  CHECK(paths.rocm_include == std::optional<std::string>("none"));
  CHECK(paths.rocm_home == "/opt/rocm-6.1");
  CHECK(config.cuda_include.source == "KERNC_CUDA_INCLUDE");
  auto unset = kernc::Config::from_environment([](const char*) -> const char* { return nullptr; });
  CHECK_FALSE(unset.compiler_paths().cuda_include.has_value());
  CHECK_FALSE(unset.compiler_paths().rocm_include.has_value());
}
