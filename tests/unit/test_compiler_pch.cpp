// Precompiled headers (NOTE [ precompiled headers ], src/compiler/nvrtc_pch.hpp), with the
// real NVRTC of this machine: the same bytes with and without them, a damaged one refused.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "compile_test_helpers.hpp"
#include "compiler/nvrtc_pch.hpp"
#include "compiler/pch_compiler.hpp"
#include "kernc/cache.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::ArgType;
using kernc::CallTypes;
using kernc::CompiledProgram;
using kernc::DType;
using kernc::Layout;
using kernc::Program;
using kernc::Target;
using kernc::compiler::leading_includes;
using kernc::compiler::PchCompiler;
using kernc::test::TempDir;
using kernc::test::pch_of;

namespace {

Program elementwise_program(const char* operation) { return kernc::test::float32_pair_program("pch_add", operation); }

// A compiler of its own, so that the PCHs other tests made do not count.
std::shared_ptr<const kernc::Compiler> fresh_nvrtc() { return kernc::test::load_for_tests(kernc::Backend::cuda); }

Program reduction_program(DType dtype) {
  kernc::ReductionKernel kernel("T x", "T y", "x * x", "a + b", "y = a", "0", "pch_sum");
  CallTypes types;
  types.inputs = {ArgType::array(dtype)};
  return kernc::program(kernel, types, Layout::reduction_classes().back());
}

Program cub_program(const std::string& name, const std::string& type, int threads) {
  Program program;
  program.name = name + ".cu";
  program.source = "#include <cub/block/block_reduce.cuh>\n\n"
                   "extern \"C\" __global__ void " + name + "(const " + type + "* x, " + type + "* out, int n) {\n"
                   "  using Reduce = cub::BlockReduce<" + type + ", " + std::to_string(threads) + ">;\n"
                   "  __shared__ typename Reduce::TempStorage scratch;\n"
                   "  " + type + " v = threadIdx.x < n ? x[threadIdx.x] : " + type + "(0);\n"
                   "  " + type + " s = Reduce(scratch).Sum(v);\n"
                   "  if (threadIdx.x == 0) *out = s;\n"
                   "}\n";
  return program;
}

// Everything of a compile that reaches a cache entry, but its time.
void check_same(const CompiledProgram& with, const CompiledProgram& without) {
  CHECK(with.binary == without.binary);
  CHECK(with.log == without.log);
  CHECK(with.flags == without.flags);
  CHECK(with.lowered_names == without.lowered_names);
}

// Files left in the PCH directory: none, once the compiles are done.
size_t files_in(const std::string& directory) {
  size_t count = 0;
  for (const auto& item : std::filesystem::directory_iterator(directory)) count += item.is_regular_file() ? 1 : 0;
  return count;
}

// Overwrites the start of every PCH this process holds open from `directory`.
int damage_pchs(const std::string& directory) {
  int damaged = 0;
  for (const auto& item : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const std::string target = std::filesystem::read_symlink(item.path(), error).string();
    if (error || target.rfind(directory + "/pch-", 0) != 0) continue;
    const int fd = ::open(item.path().c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) continue;
    const std::string junk(4096, 'x');
    damaged += ::pwrite(fd, junk.data(), junk.size(), 0) == static_cast<ssize_t>(junk.size()) ? 1 : 0;
    ::close(fd);
  }
  return damaged;
}

}  // namespace

TEST_CASE("compiler::leading_includes takes the #include lines a source starts with") {
  CHECK(leading_includes("#include <cub/cub.cuh>\nint x;\n") == "#include <cub/cub.cuh>\n");
  CHECK(leading_includes("// a comment\n\n#pragma once\n  #include \"a.h\"\n# include<b.h>\n__global__ void k() {}\n") ==
        "#pragma once\n#include \"a.h\"\n# include<b.h>\n");
  CHECK(leading_includes("extern \"C\" __global__ void k() {}\n#include <a.h>\n").empty());
  CHECK(leading_includes("#define N 4\n#include <a.h>\n").empty());          // a macro may change what follows
  CHECK(leading_includes("#pragma once\nint x;\n").empty());                  // nothing to precompile
  CHECK(leading_includes("#include <a.h>\n#include \\\n<b.h>\n") == "#include <a.h>\n");  // continued: stop
  CHECK(leading_includes("#includes <a.h>\n").empty());
  CHECK(leading_includes("").empty());
}

TEST_CASE("compiler::PchCompiler gives the bytes of a compile without PCH") {
  const Target target = Target::parse("sm_90");
  TempDir dir;
  const auto compiler = fresh_nvrtc();
  const PchCompiler& pch = pch_of(*compiler);
  struct Case {
    const char* what;
    Program first, second;
  };
  const std::vector<Case> cases = {
      {"a generated elementwise program", elementwise_program("z = x + y"), elementwise_program("z = x * y + 1")},
      {"a generated reduction", reduction_program(DType::float32), reduction_program(DType::float64)},
      {"a raw kernel that includes CUB", cub_program("pch_sum_float", "float", 256),
       cub_program("pch_sum_double", "double", 128)},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    REQUIRE(!leading_includes(c.first.source).empty());
    // The first compile of a prefix creates its PCH (the reduction's is the elementwise
    // program's: the same includes and headers), the second of another program uses it.
    const size_t uses = pch.precompiled_header_uses();
    const CompiledProgram created = pch.compile_with_pch(c.first, target, dir.path());
    const size_t pchs = pch.precompiled_headers();
    CHECK(pchs >= 1);
    const CompiledProgram used = pch.compile_with_pch(c.second, target, dir.path());
    CHECK(pch.precompiled_headers() == pchs);
    CHECK(pch.precompiled_header_uses() >= uses + 1);  // NVRTC said the second started from it
    check_same(created, compiler->compile(c.first, target));
    check_same(used, compiler->compile(c.second, target));
    CHECK(files_in(dir.path()) == 0);  // unlinked once open: nothing of it stays in the directory
  }
  CHECK(pch.precompiled_headers() == 2);  // kernc's headers, CUB's
}

TEST_CASE("compiler::PchCompiler refuses a damaged PCH and compiles without it") {
  const Target target = Target::parse("sm_90");
  TempDir dir;
  const auto compiler = fresh_nvrtc();
  const PchCompiler& pch = pch_of(*compiler);
  const Program first = elementwise_program("z = x - y"), second = elementwise_program("z = x / y");
  pch.compile_with_pch(first, target, dir.path());
  REQUIRE(pch.precompiled_headers() == 1);
  REQUIRE(damage_pchs(dir.path()) == 1);
  // NVRTC finds the PCH invalid and says so in its log; kernc compiles again without it,
  // so the result is the plain compile's, log included, and the PCH is gone.
  check_same(pch.compile_with_pch(second, target, dir.path()), compiler->compile(second, target));
  CHECK(pch.precompiled_headers() == 0);
}

TEST_CASE("compiler::PchCompiler compiles without PCH where it cannot apply") {
  const Target target = Target::parse("sm_90");
  TempDir dir;
  const auto compiler = fresh_nvrtc();
  const PchCompiler& pch = pch_of(*compiler);
  Program plain;
  plain.name = "plain.cu";
  plain.source = "extern \"C\" __global__ void k(float* x) { x[0] = 1; }\n";
  check_same(pch.compile_with_pch(plain, target, dir.path()), compiler->compile(plain, target));
  Program own_dirs = cub_program("pch_own_dirs", "float", 64);
  own_dirs.options.include_dirs = {dir.path()};  // its files are not in the PCH key: no PCH
  check_same(pch.compile_with_pch(own_dirs, target, dir.path()), compiler->compile(own_dirs, target));
  CHECK(pch.precompiled_headers() == 0);
}

TEST_CASE("Cache compiles through precompiled headers in <cache>/pch, or not at all with them off") {
  const Target target = Target::parse("sm_90");
  TempDir dir;
  const auto compiler = fresh_nvrtc();
  const Program program = reduction_program(DType::int32);
  SUBCASE("on") {
    kernc::Cache cache(kernc::test::cache_config_in(dir));
    auto result = cache.get_or_compile(program, target, *compiler);
    CHECK(result.program->binary == compiler->compile(program, target).binary);
    CHECK(pch_of(*compiler).precompiled_headers() == 1);
    CHECK(std::filesystem::is_directory(dir / "cache/pch"));
    CHECK(files_in(dir / "cache/pch") == 0);
  }
  SUBCASE("off") {
    auto config = kernc::test::cache_config_in(dir);
    config.precompiled_headers = false;
    kernc::Cache cache(config);
    auto result = cache.get_or_compile(program, target, *compiler);
    CHECK(result.program->binary == compiler->compile(program, target).binary);
    CHECK(pch_of(*compiler).precompiled_headers() == 0);
    CHECK(!std::filesystem::exists(dir / "cache/pch"));
  }
}
