// Host precompiled headers (NOTE [ host precompiled headers ], src/compiler/host_pch.hpp),
// with the real host compiler of this machine: made on a key's second compile, found by the
// next process, the same bytes as without, taken by the compiler rather than its header
// text, and a bad or untrusted one never the cause of a failed compile.

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "compile_test_helpers.hpp"
#include "compiler/pch_compiler.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "platform/files.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::CompiledProgram;
using kernc::Error;
using kernc::Program;
using kernc::Target;
using kernc::compiler::PchCompiler;
using kernc::test::TempDir;
using kernc::test::pch_of;

namespace {

Program elementwise(const char* operation) { return kernc::test::float32_pair_program("host_pch_add", operation); }

// A compiler object of its own: what one process has seen (the PCH files are on disk).
std::shared_ptr<const kernc::Compiler> fresh_host_compiler() { return kernc::test::load_for_tests(kernc::Backend::cpu); }

// The PCH files in `directory`: pch-host-KEY.hpp and its .gch.
std::vector<std::string> pch_files(const std::string& directory, const char* suffix) {
  std::vector<std::string> found;
  for (const auto& item : std::filesystem::directory_iterator(directory)) {
    const std::string name = item.path().filename().string();
    if (name.rfind("pch-host-", 0) == 0 && name.size() > 4 && name.compare(name.size() - std::strlen(suffix), std::string::npos, suffix) == 0) {
      found.push_back(item.path().string());
    }
  }
  return found;
}

const Target kTarget = Target::parse("cpu-x86-64");

}  // namespace

TEST_CASE("host PCH: made on a key's second compile, found by the next process, the same bytes as without") {
  TempDir dir;
  const Program first = elementwise("z = x + y"), second = elementwise("z = x * y"), third = elementwise("z = x - y");
  auto compiler = fresh_host_compiler();
  const PchCompiler& pch = pch_of(*compiler);

  const CompiledProgram a = pch.compile_with_pch(first, kTarget, dir.path());
  CHECK(pch_files(dir.path(), ".gch").empty());  // a process that compiles once pays nothing
  CHECK(pch.precompiled_headers() == 0);
  const CompiledProgram b = pch.compile_with_pch(second, kTarget, dir.path());
  REQUIRE(pch_files(dir.path(), ".gch").size() == 1);
  CHECK(pch_files(dir.path(), ".hpp").size() == 1);
  CHECK(pch.precompiled_headers() == 1);
  const CompiledProgram c = pch.compile_with_pch(third, kTarget, dir.path());
  CHECK(pch.precompiled_header_uses() == 2);  // the second (after making it) and the third

  CHECK(a.binary == compiler->compile(first, kTarget).binary);
  CHECK(b.binary == compiler->compile(second, kTarget).binary);
  CHECK(c.binary == compiler->compile(third, kTarget).binary);
  CHECK(b.flags == compiler->compile(second, kTarget).flags);  // the -include is no flag of the program's
  CHECK(b.lowered_names == compiler->compile(second, kTarget).lowered_names);

  // Another process (a compiler object of its own) uses it from its first compile.
  auto next = fresh_host_compiler();
  const CompiledProgram again = pch_of(*next).compile_with_pch(first, kTarget, dir.path());
  CHECK(pch_of(*next).precompiled_headers() == 1);
  CHECK(again.binary == a.binary);
  CHECK(pch_files(dir.path(), ".gch").size() == 1);
}

TEST_CASE("host PCH: the compiler takes the PCH, not its header's text; a bad one costs nothing but time") {
  TempDir dir;
  auto maker = fresh_host_compiler();
  pch_of(*maker).compile_with_pch(elementwise("z = x + y"), kTarget, dir.path());
  pch_of(*maker).compile_with_pch(elementwise("z = x * y"), kTarget, dir.path());
  const auto headers = pch_files(dir.path(), ".hpp");
  const auto gchs = pch_files(dir.path(), ".gch");
  REQUIRE(headers.size() == 1);
  REQUIRE(gchs.size() == 1);
  const Program program = elementwise("z = x * 2 + y");
  const std::string expected = maker->compile(program, kTarget).binary;

  SUBCASE("the header's text is not read while the PCH fits") {
    kernc::platform::write_file_atomic(headers[0], "#error the PCH's header text was read\n");
    auto user = fresh_host_compiler();
    CHECK(pch_of(*user).compile_with_pch(program, kTarget, dir.path()).binary == expected);
    CHECK(pch_of(*user).precompiled_headers() == 1);
  }
  SUBCASE("a PCH the compiler cannot take: compiled again without it, and not used again") {
    kernc::platform::write_file_atomic(gchs[0], "not a precompiled header");
    kernc::platform::write_file_atomic(headers[0], "#error the PCH's header text was read\n");
    auto user = fresh_host_compiler();
    CHECK(pch_of(*user).compile_with_pch(program, kTarget, dir.path()).binary == expected);
    CHECK(pch_of(*user).precompiled_headers() == 0);
  }
  SUBCASE("a PCH others may write is not used") {
    kernc::platform::write_file_atomic(headers[0], "#error the PCH's header text was read\n");
    REQUIRE(::chmod(gchs[0].c_str(), 0666) == 0);
    auto user = fresh_host_compiler();
    CHECK(pch_of(*user).compile_with_pch(program, kTarget, dir.path()).binary == expected);
    CHECK(pch_of(*user).precompiled_headers() == 0);
  }
}

TEST_CASE("host PCH: a program's own error is the one a compile without it reports; include directories get none") {
  TempDir dir;
  auto compiler = fresh_host_compiler();
  const PchCompiler& pch = pch_of(*compiler);
  pch.compile_with_pch(elementwise("z = x + y"), kTarget, dir.path());
  pch.compile_with_pch(elementwise("z = x * y"), kTarget, dir.path());
  REQUIRE(pch.precompiled_headers() == 1);

  const Program broken = elementwise("z = x + undeclared_name");
  std::string with, without;
  try {
    pch.compile_with_pch(broken, kTarget, dir.path());
  } catch (const Error& error) {
    with = error.what();
  }
  try {
    compiler->compile(broken, kTarget);
  } catch (const Error& error) {
    without = error.what();
  }
  CHECK(with.find("undeclared_name") != std::string::npos);
  CHECK(with == without);
  CHECK(pch.precompiled_headers() == 1);  // the program's error, not the PCH's

  TempDir other;
  Program own_includes = elementwise("z = x - y");
  own_includes.options.include_dirs = {dir.path()};
  auto another = fresh_host_compiler();
  for (int k = 0; k < 2; ++k) pch_of(*another).compile_with_pch(own_includes, kTarget, other.path());
  CHECK(pch_files(other.path(), ".gch").empty());
}
