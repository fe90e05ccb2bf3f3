// A compile error in a user snippet is reported at the snippet's own line (see NOTE
// [ snippet lines ]): each snippet of each kernel kind, with an undefined identifier on
// its line 2, compiled with NVRTC (and HIPRTC when built), and mapped by
// map_error_to_snippets.

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "kernc/compiler.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::ArgType;
using kernc::CallTypes;
using kernc::DType;
using kernc::Error;
using kernc::ErrorCode;
using kernc::Layout;
using kernc::Program;
using kernc::Target;
using kernc::test::contains;

namespace {

// One broken snippet: which one, the program it ends up in, and the 1-based column of
// the undefined identifier `nope` on the snippet's line 2.
struct BrokenSnippet {
  std::string snippet;
  Program program;
  int column;
};

std::vector<BrokenSnippet> broken_snippets() {
  std::vector<BrokenSnippet> cases;
  const Layout layout = Layout::parse("contiguous-i32");
  CallTypes unary;
  unary.inputs = {ArgType::array(DType::float32)};

  auto elementwise = [&](const std::string& snippet, int column, const std::string& operation,
                         kernc::ElementwiseOptions options) {
    kernc::ElementwiseKernel kernel("T x", "T z", operation, "broken", options);
    cases.push_back({snippet, kernc::program(kernel, unary, layout), column});
  };
  const std::string bad_statement = "int first = 0;\nint second = nope;";  // column 14
  kernc::ElementwiseOptions none;
  elementwise("operation", 5, "z = x;\nz = nope + x", none);
  kernc::ElementwiseOptions preamble;
  preamble.preamble = "__device__ int ok() { return 1; }\n__device__ int bad() { return nope; }";
  elementwise("preamble", 31, "z = x", preamble);
  kernc::ElementwiseOptions loop_prep;
  loop_prep.loop_prep = bad_statement;
  elementwise("loop_prep", 14, "z = x", loop_prep);
  kernc::ElementwiseOptions after_loop;
  after_loop.after_loop = bad_statement;
  elementwise("after_loop", 14, "z = x", after_loop);

  auto reduction = [&](const std::string& snippet, int column, const std::string& map, const std::string& reduce,
                       const std::string& post, const std::string& identity, kernc::ReductionOptions options = {}) {
    kernc::ReductionKernel kernel("T x", "T y", map, reduce, post, identity, "broken", options);
    cases.push_back({snippet, kernc::program(kernel, unary, layout), column});
  };
  reduction("map_expr", 3, "x\n+ nope", "a + b", "y = a", "0");
  reduction("reduce_expr", 3, "x", "a\n+ nope", "y = a", "0");
  reduction("post_map_expr", 5, "x", "a + b", "y = a;\ny = nope", "0");
  reduction("identity", 3, "x", "a + b", "y = a", "0\n+ nope");
  kernc::ReductionOptions reduction_preamble;
  reduction_preamble.preamble = "__device__ int ok() { return 1; }\n__device__ int bad() { return nope; }";
  reduction("preamble", 31, "x", "a + b", "y = a", "0", reduction_preamble);
  return cases;
}

// The compile_failed error `compiler` throws for `program`.
Error compile_error(const kernc::Compiler& compiler, const Program& program, const Target& target) {
  try {
    compiler.compile(program, target);
  } catch (const Error& error) {
    return error;
  }
  FAIL("the program compiled");
  return Error(ErrorCode::invalid_argument, "unreachable");
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  for (;;) {
    size_t end = text.find('\n', pos);
    lines.push_back(text.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return lines;
}

// Checks what every compile failure carries, for either compiler.
void check_failure(const Error& error, const BrokenSnippet& c, const kernc::Compiler& compiler, const Target& target) {
  REQUIRE(error.code() == ErrorCode::compile_failed);
  const kernc::CompileFailure* failure = error.compile_failure();
  REQUIRE(failure != nullptr);
  CHECK(failure->program_name == "broken.cu");
  CHECK(failure->target == target.str());
  // flags(), then NVRTC 12.9+'s -no-cache (NOTE [ the driver's compute cache ], not in the key).
  auto expected = compiler.flags(c.program.options, target);
  if (failure->options.size() == expected.size() + 1 && failure->options.back() == "-no-cache") expected.push_back("-no-cache");
  CHECK(failure->options == expected);
  // The whole generated source, not the snippet.
  CHECK(failure->source == c.program.source);
  CHECK(contains(failure->source, "extern \"C\" __global__ void broken("));

  // number_lines shows it with the generated file's real line numbers: the snippet's
  // #line directive is shown at its index in the source.
  const std::string directive = "#line 1 \"broken " + c.snippet + "\"";
  const auto lines = split_lines(failure->source);
  size_t at = 0;
  while (at < lines.size() && lines[at] != directive) ++at;
  REQUIRE(at < lines.size());
  const std::string numbered = kernc::number_lines(failure->source);
  const std::string shown = std::to_string(at + 1) + " | " + directive + "\n";
  CHECK(contains(numbered, std::string(5 - std::to_string(at + 1).size(), ' ') + shown));
  CHECK(contains(numbered, " | " + lines[at + 2] + "\n"));  // the snippet's line 2
  CHECK(contains(lines[at + 2], "nope"));
}

}  // namespace

TEST_CASE("kernels::map_error_to_snippets: an NVRTC error names the snippet and its line") {
  const Target target = Target::parse("sm_90");
  for (const auto& c : broken_snippets()) {
    CAPTURE(c.snippet);
    Error error = compile_error(kernc::test::nvrtc(), c.program, target);
    check_failure(error, c, kernc::test::nvrtc(), target);
    // Unmapped, NVRTC names the #line file: "broken operation(2): error: ...".
    CHECK(contains(error.compile_failure()->log, "broken " + c.snippet + "(2): error"));

    Error mapped = kernc::map_error_to_snippets(error);
    std::string message = mapped.what();
    CAPTURE(message);
    const std::string where = "broken " + c.snippet + ", line 2: error: identifier \"nope\" is undefined";
    CHECK(message.rfind("broken.cu failed to compile for sm_90: ", 0) == 0);
    CHECK(contains(message, where));
    REQUIRE(mapped.compile_failure() != nullptr);
    CHECK(contains(mapped.compile_failure()->log, where));
    CHECK_FALSE(contains(mapped.compile_failure()->log, "broken " + c.snippet + "(2)"));
    // Everything else of the failure is kept.
    CHECK(mapped.compile_failure()->source == c.program.source);
    CHECK(mapped.compile_failure()->options == error.compile_failure()->options);
  }
}

#ifdef KERNC_WITH_HIP
TEST_CASE("kernels::map_error_to_snippets: a HIPRTC error names the snippet, its line and column") {
  const Target target = Target::parse("gfx90a");
  for (const auto& c : broken_snippets()) {
    CAPTURE(c.snippet);
    Error error = compile_error(kernc::test::hiprtc(), c.program, target);
    check_failure(error, c, kernc::test::hiprtc(), target);
    const std::string column = std::to_string(c.column);
    CHECK(contains(error.compile_failure()->log, "broken " + c.snippet + ":2:" + column + ": error"));

    Error mapped = kernc::map_error_to_snippets(error);
    std::string message = mapped.what();
    CAPTURE(message);
    const std::string where =
        "broken " + c.snippet + ", line 2, column " + column + ": error: use of undeclared identifier 'nope'";
    CHECK(message.rfind("broken.cu failed to compile for gfx90a", 0) == 0);
    CHECK(contains(message, where));
    REQUIRE(mapped.compile_failure() != nullptr);
    CHECK(contains(mapped.compile_failure()->log, where));
    CHECK(mapped.compile_failure()->source == c.program.source);
  }
}
#endif

TEST_CASE("kernels: a snippet that compiles leaves no error to map") {
  kernc::ElementwiseKernel kernel("T x", "T z", "z = x;\nz = z + x", "fine");
  CallTypes types;
  types.inputs = {ArgType::array(DType::float32)};
  auto compiled =
      kernc::test::nvrtc().compile(kernc::program(kernel, types, Layout::parse("contiguous-i32")), Target::parse("sm_90"));
  CHECK(kernc::test::starts_with(compiled.binary, kernc::test::kElfMagic));
  CHECK(compiled.log.empty());
}
