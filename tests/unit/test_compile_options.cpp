#include <doctest/doctest.h>

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernc/compile_options.hpp"
#include "kernc/error.hpp"
#include "temp_dir.hpp"

using kernc::CompileOptions;
using kernc::Error;
using kernc::ErrorCode;
using kernc::test::contains;

namespace {

// Expects validate() to throw invalid_argument with every one of `words` in the message.
void check_rejected(const CompileOptions& options, const std::vector<std::string>& words) {
  try {
    kernc::validate(options);
    FAIL("validate accepted the options");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::invalid_argument);
    for (const auto& word : words) {
      INFO("word = " << word);
      CHECK(contains(error.what(), word));
    }
  }
}

CompileOptions full_options() {
  CompileOptions options;
  options.language_standard = "c++17";
  options.defines = {{"BLOCK", "128"}, {"USE_FAST_PATH", ""}, {"MAX(a,b)", "((a)>(b)?(a):(b))"}};
  options.include_dirs = {"/opt/include/one", "/opt/include/two"};
  options.headers = {{"config.cuh", "#define CONFIG 1\n"}, {"detail/math.cuh", "inline int twice(int x);\n"}};
  options.fast_math = false;
  options.line_info = false;
  options.debug = false;
  options.raw_flags = {"-maxrregcount=64", "--extra-device-vectorization"};
  return options;
}

}  // namespace

TEST_CASE("options::validate accepts well-formed options") {
  CHECK_NOTHROW(kernc::validate(CompileOptions{}));
  CHECK_NOTHROW(kernc::validate(full_options()));
  for (const char* standard : {"c++11", "c++14", "c++17", "c++20"}) {
    CompileOptions options;
    options.language_standard = standard;
    INFO("standard = " << standard);
    CHECK_NOTHROW(kernc::validate(options));
  }
}

TEST_CASE("options::validate rejects malformed fields and names the field") {
  CompileOptions options = full_options();
  SUBCASE("unknown language standard") {
    options.language_standard = "c++98";
    check_rejected(options, {"language standard", "\"c++98\"", "c++17"});
  }
  SUBCASE("empty language standard") {
    options.language_standard = "";
    check_rejected(options, {"language standard"});
  }
  SUBCASE("define name starting with a digit") {
    options.defines["1ABC"] = "1";
    check_rejected(options, {"define", "\"1ABC\""});
  }
  SUBCASE("define name with a dash") {
    options.defines["MY-MACRO"] = "1";
    check_rejected(options, {"define", "\"MY-MACRO\""});
  }
  SUBCASE("empty define name") {
    options.defines[""] = "1";
    check_rejected(options, {"define"});
  }
  SUBCASE("function-like define without a closing parenthesis") {
    options.defines["F(x"] = "x";
    check_rejected(options, {"define", "\"F(x\""});
  }
  SUBCASE("define value with a line break") {
    options.defines["BLOCK"] = "128\n#define EVIL 1";
    check_rejected(options, {"define", "BLOCK", "line break"});
  }
  SUBCASE("empty include directory") {
    options.include_dirs.push_back("");
    check_rejected(options, {"include directory"});
  }
  SUBCASE("empty header name") {
    options.headers[""] = "int x;";
    check_rejected(options, {"header", "empty name"});
  }
  SUBCASE("header name with a NUL byte") {
    options.headers[std::string("a\0b.cuh", 7)] = "int x;";
    check_rejected(options, {"header", "NUL"});
  }
  SUBCASE("empty raw flag") {
    options.raw_flags.push_back("");
    check_rejected(options, {"raw flag"});
  }
}

TEST_CASE("options::canonical_bytes does not depend on the order maps were filled in") {
  CompileOptions forward;
  forward.defines["A"] = "1";
  forward.defines["B"] = "2";
  forward.defines["C"] = "";
  forward.headers["x.cuh"] = "int x;";
  forward.headers["y.cuh"] = "int y;";

  CompileOptions backward;
  backward.headers["y.cuh"] = "int y;";
  backward.headers["x.cuh"] = "int x;";
  backward.defines["C"] = "";
  backward.defines["B"] = "2";
  backward.defines["A"] = "1";

  CHECK(kernc::canonical_bytes(forward) == kernc::canonical_bytes(backward));
  CHECK(kernc::canonical_bytes(full_options()) == kernc::canonical_bytes(full_options()));
}

TEST_CASE("options::canonical_bytes changes when any one field changes") {
  const CompileOptions base = full_options();
  const std::string base_bytes = kernc::canonical_bytes(base);
  const std::vector<std::pair<const char*, std::function<void(CompileOptions&)>>> changes = {
      {"language standard", [](CompileOptions& o) { o.language_standard = "c++20"; }},
      {"a define's value", [](CompileOptions& o) { o.defines["BLOCK"] = "256"; }},
      {"an empty define value given a value", [](CompileOptions& o) { o.defines["USE_FAST_PATH"] = "1"; }},
      {"a define added", [](CompileOptions& o) { o.defines["EXTRA"] = ""; }},
      {"a define removed", [](CompileOptions& o) { o.defines.erase("BLOCK"); }},
      {"a define renamed", [](CompileOptions& o) {
         o.defines.erase("BLOCK");
         o.defines["BLOCKS"] = "128";
       }},
      {"an include directory", [](CompileOptions& o) { o.include_dirs[1] = "/opt/include/three"; }},
      {"include directory order", [](CompileOptions& o) { std::swap(o.include_dirs[0], o.include_dirs[1]); }},
      {"an include directory added", [](CompileOptions& o) { o.include_dirs.push_back("/opt/include/four"); }},
      {"a header's content", [](CompileOptions& o) { o.headers["config.cuh"] = "#define CONFIG 2\n"; }},
      {"a header's name", [](CompileOptions& o) {
         o.headers["config2.cuh"] = o.headers["config.cuh"];
         o.headers.erase("config.cuh");
       }},
      {"a header added", [](CompileOptions& o) { o.headers["new.cuh"] = ""; }},
      {"fast_math", [](CompileOptions& o) { o.fast_math = true; }},
      {"line_info", [](CompileOptions& o) { o.line_info = true; }},
      {"debug", [](CompileOptions& o) { o.debug = true; }},
      {"a raw flag", [](CompileOptions& o) { o.raw_flags[0] = "-maxrregcount=32"; }},
      {"raw flag order", [](CompileOptions& o) { std::swap(o.raw_flags[0], o.raw_flags[1]); }},
      {"a raw flag added", [](CompileOptions& o) { o.raw_flags.push_back("-dopt=on"); }},
      {"two raw flags joined into one", [](CompileOptions& o) {
         o.raw_flags = {"-maxrregcount=64 --extra-device-vectorization"};
       }},
  };
  std::set<std::string> seen = {base_bytes};
  for (const auto& named_change : changes) {
    const auto& what = named_change.first;  // not a structured binding: INFO captures it (C++20 only)
    const auto& change = named_change.second;
    INFO("what = " << what);
    CompileOptions changed = base;
    change(changed);
    std::string bytes = kernc::canonical_bytes(changed);
    CHECK(bytes != base_bytes);
    CHECK(seen.insert(bytes).second);  // and differs from every other single change
  }
}

TEST_CASE("options::canonical_bytes keeps field boundaries whatever the bytes") {
  // Length-prefixed fields: moving bytes from one field into its neighbour is a change.
  SUBCASE("define name and value") {
    CompileOptions a, b;
    a.defines["AB"] = "";
    b.defines["A"] = "B";
    CHECK(kernc::canonical_bytes(a) != kernc::canonical_bytes(b));
  }
  SUBCASE("header name and content") {
    CompileOptions a, b;
    a.headers["h"] = ";content=1:x";
    b.headers["h;content=1:x"] = "";
    CHECK(kernc::canonical_bytes(a) != kernc::canonical_bytes(b));
  }
  SUBCASE("a value that spells the next field") {
    CompileOptions a, b;
    a.defines["A"] = "1";
    a.defines["B"] = "2";
    b.defines["A"] = "1:;define=1:B;value=1:2";
    CHECK(kernc::canonical_bytes(a) != kernc::canonical_bytes(b));
  }
  SUBCASE("an include directory and a raw flag") {
    CompileOptions a, b;
    a.include_dirs = {"/x"};
    b.raw_flags = {"-I/x"};
    CHECK(kernc::canonical_bytes(a) != kernc::canonical_bytes(b));
  }
}
