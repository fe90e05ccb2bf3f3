// The strict template renderer (src/codegen/render.*), the templates built into the library
// (src/core/templates.hpp), and the snippet line directives and log mapping
// (src/codegen/snippets.*, see NOTE [ snippet lines ]).

#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "codegen/kernel_codegen.hpp"
#include "codegen/render.hpp"
#include "codegen/snippets.hpp"
#include "core/templates.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "platform/files.hpp"
#include "temp_dir.hpp"

using kernc::Error;
using kernc::ErrorCode;
using kernc::codegen::render;
using kernc::test::contains;

namespace {

std::vector<std::string> rendered_lines(const std::string& text) {
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

std::string render_error(const std::string& name, const std::string& text, const kernc::codegen::RenderValues& values) {
  try {
    render(name, text, values);
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::invalid_argument);
    return error.what();
  }
  FAIL("render did not throw");
  return {};
}

}  // namespace

TEST_CASE("codegen::render substitutes every placeholder, each as often as it appears") {
  CHECK(render("t", "", {}) == "");
  CHECK(render("t", "no placeholders $ { } $x {y}", {}) == "no placeholders $ { } $x {y}");
  CHECK(render("t", "${a}", {{"a", "1"}}) == "1");
  CHECK(render("t", "a=${a}, b=${b_2}; a again ${a}${a}", {{"a", "x"}, {"b_2", "yy"}}) == "a=x, b=yy; a again xx");
  // A value is inserted verbatim, never rendered again.
  CHECK(render("t", "[${a}]", {{"a", "${b}"}}) == "[${b}]");
  CHECK(render("t", "${a}\n${B9}\n", {{"a", ""}, {"B9", "line"}}) == "\nline\n");
}

TEST_CASE("codegen::render rejects unknown, unused and malformed placeholders, naming the template") {
  SUBCASE("a placeholder without a value") {
    std::string message = render_error("my.cu.in", "x ${a} ${missing}", {{"a", "1"}});
    CHECK(message == "template my.cu.in: placeholder ${missing} has no value");
  }
  SUBCASE("a value without a placeholder") {
    std::string message = render_error("my.cu.in", "x ${a}", {{"a", "1"}, {"extra", "2"}});
    CHECK(message == "template my.cu.in: value for ${extra} given but the template has no such placeholder");
  }
  SUBCASE("a malformed ${ sequence, with its offset") {
    struct Case {
      const char* text;
      size_t offset;
    };
    const Case cases[] = {{"abc ${", 4}, {"${}", 0},      {"12${a b}", 2}, {"${a", 0},
                          {"${a-b}", 0}, {"x\n${ a}", 2}, {"${a}${", 4}};
    for (const auto& c : cases) {
      CAPTURE(std::string(c.text));
      std::string message = render_error("bad.cu.in", c.text, {{"a", "1"}});
      CHECK(message ==
            "template bad.cu.in: malformed placeholder at offset " + std::to_string(c.offset) + ": expected ${name}");
    }
  }
}

TEST_CASE("codegen::embedded_templates are the files of templates/, byte for byte") {
  // Every file of templates/ (a new template is embedded by the build's glob, so it is
  // listed here from the directory), and the ones codegen cannot do without.
  std::set<std::string> expected;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(KERNC_SOURCE_DIR) + "/templates")) {
    if (entry.is_regular_file()) expected.insert(entry.path().filename().string());
  }
  for (const char* name :
       {"prelude.cuh", "float16.cuh", "complex.cuh", "array.cuh", "elementwise.cu.in", "reduction.cu.in"}) {
    CHECK(expected.count(name) == 1);
  }
  std::set<std::string> names;
  for (const auto& file : kernc::codegen::embedded_templates()) {
    std::string name(file.name);
    CAPTURE(name);
    CHECK(names.insert(name).second);
    std::string on_disk = kernc::platform::read_file(std::string(KERNC_SOURCE_DIR) + "/templates/" + name);
    CHECK(!on_disk.empty());
    CHECK(file.content == on_disk);
    CHECK(kernc::codegen::template_file(name) == on_disk);
  }
  CHECK(names == expected);

  SUBCASE("template_file names the known templates when asked for another") {
    try {
      kernc::codegen::template_file("nope.cu.in");
      FAIL("no error");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::not_found);
      std::string message = error.what();
      CHECK(contains(message, "no template named nope.cu.in"));
      for (const auto& name : expected) CHECK(contains(message, name));
    }
  }
  SUBCASE("device_headers hands the .cuh files to the compiler as kernc/<name>") {
    auto headers = kernc::codegen::device_headers();
    CHECK(headers.size() == 5);
    for (const char* name : {"prelude.cuh", "float16.cuh", "float8.cuh", "complex.cuh", "array.cuh"}) {
      CAPTURE(std::string(name));
      REQUIRE(headers.count(std::string("kernc/") + name) == 1);
      CHECK(headers.at(std::string("kernc/") + name) == kernc::codegen::template_file(name));
    }
  }
}

TEST_CASE("codegen::wrap_snippet brackets a snippet with #line directives") {
  using kernc::codegen::wrap_snippet;
  CHECK(wrap_snippet("k", "operation", "") == "");
  CHECK(wrap_snippet("k", "operation", "", ";") == "");
  CHECK(wrap_snippet("k", "operation", "z = x") == "#line 1 \"k operation\"\nz = x\n#line KERNC_RESTORE\n");
  CHECK(wrap_snippet("saxpy", "operation", "z = a;\nz += 1", ";") ==
        "#line 1 \"saxpy operation\"\nz = a;\nz += 1;\n#line KERNC_RESTORE\n");
}

TEST_CASE("codegen::finish_line_directives points each restore directive at the real next line") {
  using kernc::codegen::finish_line_directives;
  using kernc::codegen::wrap_snippet;
  const std::string source = "// line 1\n// line 2\n" + wrap_snippet("k", "preamble", "int a;\nint b;\nint c;") +
                             "// after preamble\n{\n" + wrap_snippet("k", "operation", "z = x", ";") + "}\n" +
                             wrap_snippet("k", "after_loop", "done();") + "// end";
  const std::string finished = finish_line_directives(source, "k.cu");
  CHECK_FALSE(contains(finished, "KERNC_RESTORE"));
  auto lines = rendered_lines(finished);
  CHECK(lines.size() == rendered_lines(source).size());  // markers are replaced in place, no lines added

  std::vector<std::string> snippet_starts;
  int restores = 0;
  for (size_t k = 0; k < lines.size(); ++k) {
    const size_t line_number = k + 1;
    CAPTURE(line_number);
    CAPTURE(lines[k]);
    if (lines[k].rfind("#line 1 \"k ", 0) == 0) snippet_starts.push_back(lines[k]);
    if (lines[k].rfind("#line ", 0) == 0 && contains(lines[k], "\"k.cu\"")) {
      ++restores;
      // "#line N" says that the next line is line N of k.cu.
      CHECK(lines[k] == "#line " + std::to_string(line_number + 1) + " \"k.cu\"");
      REQUIRE(k + 1 < lines.size());
    }
  }
  CHECK(restores == 3);
  CHECK(snippet_starts ==
        std::vector<std::string>{"#line 1 \"k preamble\"", "#line 1 \"k operation\"", "#line 1 \"k after_loop\""});
  // Spot checks by content: what follows each directive, and where the generated lines are.
  CHECK(lines[2] == "#line 1 \"k preamble\"");
  CHECK(lines[3] == "int a;");
  CHECK(lines[5] == "int c;");
  CHECK(lines[6] == "#line 8 \"k.cu\"");
  CHECK(lines[7] == "// after preamble");
  CHECK(lines[10] == "z = x;");
  CHECK(lines[11] == "#line 13 \"k.cu\"");
  CHECK(lines[12] == "}");
  CHECK(lines.back() == "// end");

  SUBCASE("a source with no snippets is unchanged") {
    CHECK(finish_line_directives("a\nb\n", "k.cu") == "a\nb\n");
    CHECK(finish_line_directives("", "k.cu") == "");
  }
}

TEST_CASE("codegen: generated programs keep their restore directives true to the real lines") {
  kernc::ElementwiseOptions options;
  options.preamble = "#define TWICE(v) ((v) + (v))\n__device__ int unused_helper() { return 0; }";
  options.loop_prep = "int count = 0;";
  options.after_loop = "(void)count;";
  kernc::ElementwiseKernel kernel("T x, raw T t", "T y", "y = TWICE(x)\n+ t[0];\ncount += 1", "k", options);
  kernc::CallTypes types;
  types.inputs = {kernc::ArgType::array(kernc::DType::float32), kernc::ArgType::array(kernc::DType::float32)};
  for (const auto& layout : kernc::Layout::elementwise_classes()) {
    CAPTURE(layout.str());
    auto program = kernc::program(kernel, types, layout);
    CHECK(program.name == "k.cu");
    auto lines = rendered_lines(program.source);
    int restores = 0;
    for (size_t k = 0; k < lines.size(); ++k) {
      if (lines[k].rfind("#line ", 0) == 0 && contains(lines[k], "\"k.cu\"")) {
        ++restores;
        CHECK(lines[k] == "#line " + std::to_string(k + 2) + " \"k.cu\"");
      }
    }
    // preamble, loop_prep, operation, after_loop; the contiguous kernel has the operation
    // three times (NOTE [ host loops ]: the host's in-place group and whole-group loops).
    CHECK(restores == (layout.kind == kernc::LayoutKind::contiguous ? 6 : 4));
  }
}

TEST_CASE("kernels::map_log_to_snippets names the snippet and its own line") {
  struct Case {
    const char* log;
    const char* mapped;
  };
  const Case cases[] = {
      // NVRTC
      {"k operation(2): error: x", "k operation, line 2: error: x"},
      {"saxpy preamble(13): warning: y", "saxpy preamble, line 13: warning: y"},
      {"my_kernel2 loop_prep(1): error: a\nmy_kernel2 after_loop(4): error: b",
       "my_kernel2 loop_prep, line 1: error: a\nmy_kernel2 after_loop, line 4: error: b"},
      {"r map_expr(1): error: m\nr reduce_expr(2): error: r\nr post_map_expr(3): error: p\nr identity(4): error: i",
       "r map_expr, line 1: error: m\nr reduce_expr, line 2: error: r\nr post_map_expr, line 3: error: p\n"
       "r identity, line 4: error: i"},
      // clang (HIPRTC)
      {"k operation:2:5: error: x", "k operation, line 2, column 5: error: x"},
      {"r identity:1:12: error: y\n    1 | 0 + nope\n      |     ^",
       "r identity, line 1, column 12: error: y\n    1 | 0 + nope\n      |     ^"},
      // Lines that name no snippet stay as they are.
      {"k.cu(12): error: x", "k.cu(12): error: x"},
      {"k.cu:12:3: error: x", "k.cu:12:3: error: x"},
      {"k operations(2): error: x", "k operations(2): error: x"},
      {"k kernel(2): error: x", "k kernel(2): error: x"},
      {"1 error detected in the compilation of \"k.cu\".", "1 error detected in the compilation of \"k.cu\"."},
      {"", ""},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.log));
    CHECK(kernc::map_log_to_snippets(c.log) == c.mapped);
  }
}

TEST_CASE("kernels::map_error_to_snippets maps message and log, and leaves other errors alone") {
  kernc::CompileFailure failure;
  failure.program_name = "k.cu";
  failure.target = "sm_90";
  failure.log = "k operation(2): error: identifier \"q\" is undefined\n1 error detected";
  failure.source = "#line 1 \"k operation\"\n...";
  failure.options = {"-arch=sm_90"};
  Error error("k.cu failed to compile for sm_90: k operation(2): error: identifier \"q\" is undefined", failure);
  Error mapped = kernc::map_error_to_snippets(error);
  CHECK(mapped.code() == ErrorCode::compile_failed);
  CHECK(std::string(mapped.what()) ==
        "k.cu failed to compile for sm_90: k operation, line 2: error: identifier \"q\" is undefined");
  REQUIRE(mapped.compile_failure() != nullptr);
  CHECK(mapped.compile_failure()->log == "k operation, line 2: error: identifier \"q\" is undefined\n1 error detected");
  CHECK(mapped.compile_failure()->source == failure.source);
  CHECK(mapped.compile_failure()->options == failure.options);
  CHECK(mapped.compile_failure()->target == "sm_90");
  CHECK(mapped.compile_failure()->program_name == "k.cu");

  Error plain(ErrorCode::io, "k operation(2): not a compile error");
  Error same = kernc::map_error_to_snippets(plain);
  CHECK(same.code() == ErrorCode::io);
  CHECK(std::string(same.what()) == "k operation(2): not a compile error");
  CHECK(same.compile_failure() == nullptr);
}

TEST_CASE("kernels::number_lines prefixes each line with its number") {
  CHECK(kernc::number_lines("a") == "    1 | a\n");
  CHECK(kernc::number_lines("a\nb") == "    1 | a\n    2 | b\n");
  CHECK(kernc::number_lines("x\n\ny") == "    1 | x\n    2 | \n    3 | y\n");
  std::string source;
  for (int k = 1; k <= 120; ++k) source += (k > 1 ? "\n" : "") + std::string("line ") + std::to_string(k);
  auto numbered = rendered_lines(kernc::number_lines(source));
  REQUIRE(numbered.size() >= 120);
  CHECK(numbered[0] == "    1 | line 1");
  CHECK(numbered[98] == "   99 | line 99");
  CHECK(numbered[119] == "  120 | line 120");
}
