// The variant index (NOTE [ variant index ], src/cache/variant_index.hpp): the build ID it
// is kept per, its files and what it refuses, and that a variant's text names its program.
// Engine::load through the index, with a fake GPU: test_elementwise_launch.cpp.

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <variant>

#include "cache/cache_key.hpp"
#include "cache/local_store.hpp"
#include "cache/variant_index.hpp"
#include "kernc/spec_file.hpp"
#include "platform/build_id.hpp"
#include "platform/files.hpp"
#include "temp_dir.hpp"

using namespace kernc;
using kernc::test::contains;

namespace {

const std::string kDigest = std::string(32, 'a') + std::string(32, '7');

// The build ID readelf reports for this test executable (kernc is linked into it).
std::string readelf_build_id() {
  const std::string command = "readelf -n /proc/" + std::to_string(::getpid()) + "/exe 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  ::pclose(pipe);
  const auto at = output.find("Build ID: ");
  if (at == std::string::npos) return {};
  return output.substr(at + 10, output.find('\n', at) - at - 10);
}

}  // namespace

TEST_CASE("variant_index::the build ID is the one the linker wrote into the object holding kernc") {
  const std::string& id = platform::code_build_id();
  REQUIRE(!id.empty());
  CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(id == readelf_build_id());
  CHECK(&platform::code_build_id() == &id);  // read once
}

TEST_CASE("variant_index::records and finds a digest per variant, in the running build's directory") {
  test::TempDir dir;
  cache::VariantIndex index(dir / "index");
  REQUIRE(index.enabled());
  CHECK_FALSE(index.find("elementwise saxpy"));
  index.record("elementwise saxpy", kDigest);
  CHECK(index.find("elementwise saxpy") == kDigest);
  CHECK_FALSE(index.find("elementwise saxpy "));  // another variant
  const std::string file = index.path("elementwise saxpy");
  CHECK(file.rfind(dir / "index" + "/" + platform::code_build_id() + "/", 0) == 0);
  CHECK(platform::read_file(file) == kDigest + "\n");
  struct stat info {};
  REQUIRE(::stat(file.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);

  SUBCASE("a digest is recorded again over the old one") {
    const std::string other = std::string(64, 'b');
    index.record("elementwise saxpy", other);
    CHECK(index.find("elementwise saxpy") == other);
  }
  SUBCASE("what is not a 64-digit digest is never recorded") {
    index.record("elementwise other", "not a digest");
    index.record("elementwise other", kDigest.substr(1));
    CHECK_FALSE(std::filesystem::exists(index.path("elementwise other")));
  }
}

TEST_CASE("variant_index::a damaged or untrusted file is a miss") {
  test::TempDir dir;
  cache::VariantIndex index(dir / "index");
  index.record("v", kDigest);
  const std::string file = index.path("v");
  REQUIRE(index.find("v") == kDigest);
  auto rewrite = [&](const std::string& text) {
    std::filesystem::remove(file);
    platform::write_file_atomic(file, text, 0600);
  };
  SUBCASE("truncated") { rewrite(kDigest.substr(0, 40)); }
  SUBCASE("no newline") { rewrite(kDigest + "x"); }
  SUBCASE("longer") { rewrite(kDigest + "\n\n"); }
  SUBCASE("not hex") { rewrite(std::string(63, 'a') + "G\n"); }
  SUBCASE("upper case") { rewrite(std::string(64, 'A') + "\n"); }
  SUBCASE("empty") { rewrite(""); }
  SUBCASE("a symbolic link to a good file") {
    const std::string elsewhere = dir / "good";
    platform::write_file_atomic(elsewhere, kDigest + "\n", 0600);
    std::filesystem::remove(file);
    std::filesystem::create_symlink(elsewhere, file);
  }
  SUBCASE("writable by the group") { REQUIRE(::chmod(file.c_str(), 0620) == 0); }
  SUBCASE("a directory") {
    std::filesystem::remove(file);
    std::filesystem::create_directory(file);
  }
  CHECK_FALSE(index.find("v"));
}

TEST_CASE("variant_index::a new build's directory retires all but the most recently used builds") {
  test::TempDir dir;
  const std::string root = dir / "index";
  // Six directories of other builds, the oldest used first.
  for (int k = 0; k < 6; ++k) {
    const std::string build = root + "/" + std::string(40, static_cast<char>('0' + k));
    platform::make_directories(build);
    platform::write_file_atomic(build + "/" + std::string(64, 'c'), kDigest + "\n", 0600);
    const struct timespec times[2] = {{1'000'000 + k, 0}, {1'000'000 + k, 0}};
    REQUIRE(::utimensat(AT_FDCWD, build.c_str(), times, 0) == 0);
  }
  cache::VariantIndex index(root);
  index.record("v", kDigest);
  std::vector<std::string> left;
  for (const auto& item : std::filesystem::directory_iterator(root)) left.push_back(item.path().filename());
  std::sort(left.begin(), left.end());
  const std::vector<std::string> expected = {std::string(40, '3'), std::string(40, '4'), std::string(40, '5'),
                                             platform::code_build_id()};
  std::vector<std::string> sorted_expected = expected;
  std::sort(sorted_expected.begin(), sorted_expected.end());
  CHECK(left == sorted_expected);
  CHECK(static_cast<int>(left.size()) == cache::VariantIndex::kKeptBuilds);
}

TEST_CASE("variant_index::a writable store has one, a read-only one has none, and clear removes it") {
  test::TempDir dir;
  cache::LocalStore store(dir / "cache", 1 << 30);
  REQUIRE(store.variant_index());
  store.variant_index()->record("v", kDigest);
  REQUIRE(std::filesystem::exists(dir / "cache/index"));
  cache::LocalStore read_only(dir / "cache", 1 << 30, cache::LocalStore::Mode::read_only);
  CHECK(read_only.variant_index() == nullptr);
  store.clear();
  CHECK_FALSE(std::filesystem::exists(dir / "cache/index"));
  CHECK_FALSE(store.variant_index()->find("v"));
}

TEST_CASE("variant_index::a variant's text names its program: every variant of the example spec") {
  // Same text, same program: the premise of the index. Every kernel of the example spec
  // has its own name, so here different texts also give different programs.
  const Spec spec = load_spec(std::string(KERNC_SOURCE_DIR) + "/examples/kernels.json");
  std::map<std::string, std::string> digest_of_variant, variant_of_digest;
  std::size_t variants = 0;
  auto note = [&](const std::string& variant, const Program& program) {
    REQUIRE(!variant.empty());
    const std::string digest = cache::program_digest(program);
    auto [by_variant, new_variant] = digest_of_variant.emplace(variant, digest);
    CHECK(by_variant->second == digest);
    auto [by_digest, new_digest] = variant_of_digest.emplace(digest, variant);
    CHECK(by_digest->second == variant);
    CHECK(new_variant == new_digest);
    ++variants;
  };
  for (const SpecKernel& kernel : spec.kernels) {
    for (const CallTypes& types : kernel.signatures) {
      if (const auto* k = std::get_if<ElementwiseKernel>(&kernel.kernel)) {
        for (const Layout& layout : reachable_layouts(*k, types)) {
          note(kernc::variant(*k, types, layout), kernc::program(*k, types, layout));
          note(kernc::variant(*k, types, layout), kernc::program(*k, types, layout));  // and again: the same
        }
      } else if (const auto* k = std::get_if<ReductionKernel>(&kernel.kernel)) {
        for (const Layout& layout : Layout::reduction_classes()) {
          note(kernc::variant(*k, types, layout), kernc::program(*k, types, layout));
        }
      }
    }
  }
  CHECK(variants > 100);
  MESSAGE(digest_of_variant.size() << " variants");
}

TEST_CASE("variant_index::every part of a definition is in its variant's text") {
  const CallTypes types = parse_call_signature("float32, float32 -> float32");
  const Layout layout{};
  const ElementwiseKernel base("float32 x, float32 y", "float32 z", "z = x + y", "add");
  const std::string text = kernc::variant(base, types, layout);
  auto differs = [&](const ElementwiseKernel& other) { return kernc::variant(other, types, layout) != text; };
  ElementwiseOptions options;
  CHECK(differs(ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x - y", "add")));
  CHECK(differs(ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "add2")));
  CHECK(differs(ElementwiseKernel("float32 x, T y", "float32 z", "z = x + y", "add")));
  options.preamble = "// p";
  CHECK(differs(ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "add", options)));
  options = {};
  options.loop_prep = "// l";
  CHECK(differs(ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "add", options)));
  options = {};
  options.after_loop = "// a";
  CHECK(differs(ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "add", options)));
  options = {};
  options.compile.fast_math = true;
  CHECK(differs(ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "add", options)));
  options = {};
  options.compile.headers["mine.cuh"] = "#define MINE 1\n";
  CHECK(differs(ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "add", options)));
  const ElementwiseKernel generic("T x, T y", "T z", "z = x + y", "add");
  CHECK(kernc::variant(generic, parse_call_signature("float64, float64 -> float64"), layout) !=
        kernc::variant(generic, types, layout));
  CHECK(kernc::variant(generic, parse_call_signature("scalar float32, float32 -> float32"), layout) !=
        kernc::variant(generic, types, layout));
  CHECK(kernc::variant(base, types, Layout{LayoutKind::contiguous, 0, true}) != text);
  CHECK(kernc::variant(base, types, Layout{LayoutKind::strided, 2, false}) != text);
  // The same definition, made again, has the same text.
  CHECK_FALSE(differs(ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "add")));
  // Include directories are files the text cannot name: no variant.
  options = {};
  options.compile.include_dirs.push_back(std::string(KERNC_SOURCE_DIR) + "/templates");
  CHECK(kernc::variant(ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "add", options), types, layout) == "");

  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "sum");
  const CallTypes reduce_types = parse_call_signature("float32 -> float32");
  const std::string sum_text = kernc::variant(sum, reduce_types, layout);
  CHECK(kernc::variant(ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "sum"), reduce_types, layout) != sum_text);
  CHECK(kernc::variant(ReductionKernel("T x", "T y", "x", "a * b", "y = a", "0", "sum"), reduce_types, layout) != sum_text);
  CHECK(kernc::variant(ReductionKernel("T x", "T y", "x", "a + b", "y = a + 1", "0", "sum"), reduce_types, layout) != sum_text);
  CHECK(kernc::variant(ReductionKernel("T x", "T y", "x", "a + b", "y = a", "1", "sum"), reduce_types, layout) != sum_text);
  ReductionOptions reduce_options;
  reduce_options.reduce_type = "double";
  CHECK(kernc::variant(ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "sum", reduce_options), reduce_types, layout) !=
        sum_text);
  CHECK(kernc::variant(sum, reduce_types, Layout{LayoutKind::generic, 0, false}) != sum_text);
}
