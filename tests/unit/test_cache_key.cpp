#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cache/cache_key.hpp"
#include "child_process.hpp"
#include "kernc/cache.hpp"
#include "kernc/error.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::CompilerIdentity;
using kernc::Program;
using kernc::Target;
using kernc::cache::compute_key;
using kernc::cache::hash_include_tree;
using kernc::test::contains;
using kernc::test::TempDir;

namespace {

CompilerIdentity fixed_identity() {
  CompilerIdentity identity;
  identity.backend = kernc::Backend::cuda;
  identity.library_path = "/usr/local/cuda/lib64/libnvrtc.so.13";
  identity.version = "13.0";
  identity.targets = {"sm_80", "sm_90"};
  return identity;
}

// A program that sets every field the key covers. `include_dir` may be empty.
Program fixed_program(const std::string& include_dir) {
  Program program;
  program.name = "kernel.cu";
  program.source = "template <typename T> __global__ void scale(T* x, T a) { x[threadIdx.x] *= a; }\n";
  program.name_expressions = {"scale<float>", "scale<double>"};
  program.options.defines = {{"BLOCK", "128"}, {"FAST", ""}};
  program.options.headers = {{"config.cuh", "#define CONFIG 1\n"}};
  program.options.raw_flags = {"-maxrregcount=64"};
  if (!include_dir.empty()) program.options.include_dirs = {include_dir};
  return program;
}

// An include tree with a nested file, so that traversal order matters.
std::string make_include_tree(const TempDir& dir, const std::string& name, const std::string& nested_content) {
  dir.write(name + "/top.cuh", "#pragma once\nint top();\n");
  dir.write(name + "/detail/nested.cuh", nested_content);
  dir.write(name + "/another/b.cuh", "int b();\n");
  return dir / name;
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const char* kKeyOutEnv = "KERNC_TEST_KEY_OUT";
const char* kIncludeDirEnv = "KERNC_TEST_INCLUDE_DIR";

}  // namespace

TEST_CASE("cache::compute_key is <64 hex>-<16 hex> and stable for the same input") {
  TempDir dir;
  std::string include = make_include_tree(dir, "include", "int nested();\n");
  std::string first = compute_key(fixed_program(include), Target::parse("sm_90"), fixed_identity());
  CHECK(kernc::test::is_cache_key(first));
  CHECK(compute_key(fixed_program(include), Target::parse("sm_90"), fixed_identity()) == first);
  // The material out-parameter does not change the digest.
  std::string material;
  CHECK(compute_key(fixed_program(include), Target::parse("sm_90"), fixed_identity(), &material) == first);
  CHECK(!material.empty());
}

TEST_CASE("cache::compute_key changes when any one input changes") {
  TempDir dir;
  const std::string include = make_include_tree(dir, "include", "int nested();\n");
  const Program base_program = fixed_program(include);
  const Target base_target = Target::parse("sm_90");
  const CompilerIdentity base_identity = fixed_identity();
  const std::string base_key = compute_key(base_program, base_target, base_identity);

  struct Inputs {
    Program program;
    Target target;
    CompilerIdentity identity;
  };
  // A second include tree with the same relative files and one changed byte. Its path
  // differs (hash_include_tree memoises per path), so this variant changes two fields.
  const std::string other_include = make_include_tree(dir, "include2", "int nestee();\n");
  const std::vector<std::pair<const char*, std::function<void(Inputs&)>>> changes = {
      {"backend", [](Inputs& in) { in.identity.backend = kernc::Backend::hip; }},
      {"compiler version", [](Inputs& in) { in.identity.version = "13.1"; }},
      {"compiler targets", [](Inputs& in) { in.identity.targets.push_back("sm_100"); }},
      {"target", [](Inputs& in) { in.target = Target::parse("sm_80"); }},
      {"target suffix", [](Inputs& in) { in.target = Target::parse("sm_90a"); }},
      {"binary kind (compute_90)", [](Inputs& in) { in.target = Target::parse("compute_90"); }},
      {"language standard", [](Inputs& in) { in.program.options.language_standard = "c++20"; }},
      {"a define value", [](Inputs& in) { in.program.options.defines["BLOCK"] = "256"; }},
      {"a define added", [](Inputs& in) { in.program.options.defines["NEW"] = "1"; }},
      {"an include dir added", [&](Inputs& in) { in.program.options.include_dirs.push_back(other_include); }},
      {"a file inside the include dir", [&](Inputs& in) { in.program.options.include_dirs = {other_include}; }},
      {"an extra header's bytes", [](Inputs& in) { in.program.options.headers["config.cuh"] = "#define CONFIG 2\n"; }},
      {"an extra header's name", [](Inputs& in) {
         in.program.options.headers = {{"config2.cuh", "#define CONFIG 1\n"}};
       }},
      {"fast_math", [](Inputs& in) { in.program.options.fast_math = true; }},
      {"line_info", [](Inputs& in) { in.program.options.line_info = true; }},
      {"debug", [](Inputs& in) { in.program.options.debug = true; }},
      {"a raw flag", [](Inputs& in) { in.program.options.raw_flags = {"-maxrregcount=32"}; }},
      {"program name", [](Inputs& in) { in.program.name = "kernel2.cu"; }},
      {"one byte of the source", [](Inputs& in) { in.program.source[10] ^= 0x01; }},
      {"a trailing newline of the source", [](Inputs& in) { in.program.source += "\n"; }},
      {"a name expression added", [](Inputs& in) { in.program.name_expressions.push_back("scale<int>"); }},
      {"a name expression changed", [](Inputs& in) { in.program.name_expressions[1] = "scale<int>"; }},
      {"name expressions reordered", [](Inputs& in) {
         std::swap(in.program.name_expressions[0], in.program.name_expressions[1]);
       }},
      {"a name expression removed", [](Inputs& in) { in.program.name_expressions.pop_back(); }},
  };
  std::set<std::string> seen = {base_key};
  for (const auto& named_change : changes) {
    const auto& what = named_change.first;  // not a structured binding: INFO captures it (C++20 only)
    const auto& change = named_change.second;
    INFO("what = " << what);
    Inputs in{base_program, base_target, base_identity};
    change(in);
    std::string key = compute_key(in.program, in.target, in.identity);
    CHECK(kernc::test::is_cache_key(key));
    CHECK(key != base_key);
    CHECK(seen.insert(key).second);
  }
}

TEST_CASE("cache::compute_key keeps field boundaries") {
  const CompilerIdentity identity = fixed_identity();
  const Target target = Target::parse("sm_90");
  SUBCASE("bytes moved from the program name into the source") {
    Program a, b;
    a.name = "k.cu";
    a.source = "x";
    b.name = "k.cux";
    b.source = "";
    CHECK(compute_key(a, target, identity) != compute_key(b, target, identity));
  }
  SUBCASE("two name expressions and one that spells both") {
    Program a, b;
    a.name_expressions = {"f<1>", "f<2>"};
    b.name_expressions = {"f<1>\nname_expr=4:f<2>"};
    CHECK(compute_key(a, target, identity) != compute_key(b, target, identity));
  }
}

TEST_CASE("cache::compute_key names the compiler by what it reports, in the key's last 16 digits") {
  // NOTE [ cache key ]: one release from two packages shares entries; two releases never do,
  // and entries of one program by any release share the <program> part (a host without a
  // compiler looks them up by it).
  Program program = fixed_program("");
  CompilerIdentity newer = fixed_identity();
  newer.version = "13.1";
  const std::string a = compute_key(program, Target::parse("sm_90"), fixed_identity());
  const std::string b = compute_key(program, Target::parse("sm_90"), newer);
  CHECK(a != b);
  CHECK(a.substr(0, 65) == b.substr(0, 65));
  CHECK(a.substr(65) == fixed_identity().tag());
  CHECK(b.substr(65) == newer.tag());
  CHECK(a.substr(0, 64) == kernc::cache::program_key(kernc::cache::program_digest(program), Target::parse("sm_90")));
  // Another target is another program key, with the same digest.
  CHECK(compute_key(program, Target::parse("sm_80"), fixed_identity()).substr(0, 64) !=
        a.substr(0, 64));
}

TEST_CASE("cache::compute_key does not depend on where the compiler library lives") {
  Program program = fixed_program("");
  CompilerIdentity moved = fixed_identity();
  moved.library_path = "/opt/cuda-13.0/lib64/libnvrtc.so.13";
  CHECK(compute_key(program, Target::parse("sm_90"), moved) ==
        compute_key(program, Target::parse("sm_90"), fixed_identity()));
}

TEST_CASE("cache::hash_include_tree covers relative paths and contents of every file") {
  TempDir dir;
  const std::string base = hash_include_tree(make_include_tree(dir, "base", "int nested();\n"));
  CHECK(base.size() == 64);
  CHECK(base.find_first_not_of("0123456789abcdef") == std::string::npos);

  SUBCASE("the same files in another directory hash the same") {
    CHECK(hash_include_tree(make_include_tree(dir, "copy", "int nested();\n")) == base);
  }
  SUBCASE("a changed byte in a nested file") {
    CHECK(hash_include_tree(make_include_tree(dir, "changed", "int nested();\n\n")) != base);
  }
  SUBCASE("a file added") {
    std::string tree = make_include_tree(dir, "added", "int nested();\n");
    dir.write("added/extra.cuh", "");
    CHECK(hash_include_tree(tree) != base);
  }
  SUBCASE("a file renamed") {
    dir.write("renamed/top.cuh", "#pragma once\nint top();\n");
    dir.write("renamed/detail/nested2.cuh", "int nested();\n");
    dir.write("renamed/another/b.cuh", "int b();\n");
    CHECK(hash_include_tree(dir / "renamed") != base);
  }
  SUBCASE("a missing directory is an invalid_argument naming it") {
    try {
      hash_include_tree(dir / "missing");
      FAIL("a missing include directory was hashed");
    } catch (const kernc::Error& error) {
      CHECK(error.code() == kernc::ErrorCode::invalid_argument);
      CHECK(contains(error.what(), dir / "missing"));
    }
  }
}

TEST_CASE("cache::compute_key material lists every tagged field") {
  TempDir dir;
  std::string include = make_include_tree(dir, "include", "int nested();\n");
  std::string material;
  std::string key = compute_key(fixed_program(include), Target::parse("compute_90"), fixed_identity(), &material);
  std::multiset<std::string> tags;
  std::istringstream lines(material);
  for (std::string line; std::getline(lines, line);) tags.insert(line.substr(0, line.find(' ')));
  for (const char* tag : {"format", "backend", "compiler", "program", "target", "binary", "options",
                          "include_tree", "name", "source", "name_expr"}) {
    INFO("tag = " << tag);
    CHECK(tags.count(tag) >= 1);
  }
  CHECK(tags.count("name_expr") == 2);
  CHECK(contains(material, "compute_90"));
  CHECK(contains(material, "ptx"));
  CHECK(contains(material, "13.0"));
  CHECK(contains(material, hash_include_tree(include)));
  CHECK(contains(material, "scale<double>"));

  SUBCASE("Cache::key_material is the same dump followed by the key") {
    TempDir cache_dir;
    kernc::CacheConfig config = kernc::test::cache_config_in(cache_dir);
    config.disk_enabled = false;
    kernc::Cache cache(config);
    const kernc::Compiler& compiler = kernc::test::nvrtc();
    Program program = fixed_program(include);
    std::string dump = cache.key_material(program, Target::parse("sm_80"), compiler);
    std::string cache_key = cache.key(program, Target::parse("sm_80"), compiler);
    std::string last_line = dump.substr(dump.rfind('\n', dump.size() - 2) + 1);
    CHECK(last_line.substr(0, 4) == "key ");
    CHECK(last_line.substr(last_line.find_first_not_of(' ', 3)) == cache_key + "\n");
    CHECK(contains(dump, compiler.identity().tag()));
    CHECK(contains(dump, compiler.identity().version));
  }
}

// Helper for the cross-process test below: does nothing unless KERNC_TEST_KEY_OUT is set.
TEST_CASE("helper::cache key of the fixed program" * doctest::skip()) {
  std::string out = kernc::test::env(kKeyOutEnv);
  REQUIRE_MESSAGE(!out.empty(), "started by the cross-process test only (" << kKeyOutEnv << ")");
  std::string key = compute_key(fixed_program(kernc::test::env(kIncludeDirEnv)), Target::parse("sm_90"),
                                fixed_identity());
  std::ofstream(out) << key;
}

TEST_CASE("cache::compute_key is the same in another process and sees include files change there") {
  TempDir dir;
  const std::string include = make_include_tree(dir, "include", "int nested();\n");
  const std::string here = compute_key(fixed_program(include), Target::parse("sm_90"), fixed_identity());
  auto key_in_child = [&](const std::string& name) {
    std::string out = dir / (name + ".key");
    kernc::test::ChildProcess child("helper::cache key of the fixed program",
                                    {{kKeyOutEnv, out}, {kIncludeDirEnv, include}}, dir / (name + ".log"));
    int status = child.wait();
    INFO("child output: " << read_file_bytes(dir / (name + ".log")));
    CHECK(status == 0);
    return read_file_bytes(out);
  };
  std::string first = key_in_child("first");
  CHECK(first == here);
  CHECK(key_in_child("second") == here);

  // hash_include_tree memoises per process; a new process sees the edited file.
  dir.write("include/detail/nested.cuh", "int nested(int);\n");
  std::string edited = key_in_child("edited");
  CHECK(kernc::test::is_cache_key(edited));
  CHECK(edited != here);
}
