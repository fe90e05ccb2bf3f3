// A precompile split over CI jobs (NOTE [ precompile shards ], src/kernels/precompile.cpp)
// and the merge of their cache directories (CacheDirectory::merge_from).

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kernc/cache.hpp"
#include "kernc/cache_directory.hpp"
#include "kernc/error.hpp"
#include "kernc/spec_file.hpp"
#include "platform/files.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::Cache;
using kernc::CacheDirectory;
using kernc::PrecompileShard;
using kernc::Target;
using kernc::test::contains;
using kernc::test::TempDir;

namespace {

const std::string kExamplesSpec = std::string(KERNC_SOURCE_DIR) + "/examples/kernels.json";

std::string unit_identity(const kernc::PrecompileUnit& unit) {
  return unit.variant->kernel + " | " + unit.variant->description + " | " + unit.target.str();
}

// A spec small enough to compile several times over: an elementwise kernel (one program
// per layout class), a reduction and a raw kernel.
const char* kSmallSpec = R"({"kernels": [
  {"kind": "elementwise", "name": "axpy", "in_params": "T a, T x, T y", "out_params": "T z",
   "operation": "z = a * x + y", "signatures": ["float32, float32, float32 -> float32"]},
  {"kind": "reduction", "name": "sumsq", "in_params": "T x", "out_params": "T y", "map_expr": "x * x",
   "reduce_expr": "a + b", "post_map_expr": "y = a", "identity": "0", "signatures": ["float32 -> float32"]},
  {"kind": "raw", "name": "twice", "code": "extern \"C\" __global__ void twice(float* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= 2; }"}
]})";

const kernc::Compiler& nvrtc_for(kernc::Backend) { return kernc::test::nvrtc(); }

// Precompiles `shard` of the small spec for sm_80 and sm_90 into <dir>/<name>; returns its keys.
std::set<std::string> precompile_into(const TempDir& dir, const std::string& name, PrecompileShard shard) {
  const kernc::Spec spec = kernc::parse_spec(kSmallSpec, "/nonexistent");
  Cache cache(kernc::test::cache_config_in(dir, name));
  auto summary = kernc::precompile(spec, {Target::parse("sm_80"), Target::parse("sm_90")}, cache, nvrtc_for, 2, {},
                                   shard);
  CHECK(summary.failed == 0);
  CHECK(summary.not_stored == 0);
  CHECK(summary.all_units == spec.variants().size() * 2);
  std::set<std::string> keys;
  for (const auto& file : CacheDirectory(kernc::test::cache_config_in(dir, name)).list()) keys.insert(file.key);
  CHECK(keys.size() == summary.total);
  return keys;
}

}  // namespace

TEST_CASE("spec::precompile_units: shards are disjoint, balanced, the same every time, and cover the whole") {
  const kernc::Spec spec = kernc::load_spec(kExamplesSpec);
  const std::vector<Target> targets = {Target::parse("sm_80"), Target::parse("sm_90"), Target::parse("compute_80")};
  const auto variants = spec.variants();
  std::multiset<std::string> whole;
  for (const auto& unit : kernc::precompile_units(variants, targets)) whole.insert(unit_identity(unit));
  REQUIRE(whole.size() == variants.size() * targets.size());
  CHECK(std::set<std::string>(whole.begin(), whole.end()).size() == whole.size());

  for (std::size_t n = 1; n <= 7; ++n) {
    CAPTURE(n);
    std::multiset<std::string> together;
    std::size_t smallest = whole.size(), largest = 0;
    for (std::size_t k = 0; k < n; ++k) {
      auto units = kernc::precompile_units(variants, targets, PrecompileShard{k, n});
      smallest = std::min(smallest, units.size());
      largest = std::max(largest, units.size());
      // Another job reads the spec again: same units, same order.
      const auto variants_again = kernc::load_spec(kExamplesSpec).variants();
      auto again = kernc::precompile_units(variants_again, targets, PrecompileShard{k, n});
      REQUIRE(again.size() == units.size());
      for (std::size_t i = 0; i < units.size(); ++i) CHECK(unit_identity(again[i]) == unit_identity(units[i]));
      for (const auto& unit : units) together.insert(unit_identity(unit));
    }
    CHECK(largest - smallest <= 1);
    CHECK(together == whole);  // a multiset: a unit in two shards would show twice
  }
  // The shards mix kernels: no shard of 4 is one kernel's variants only.
  for (std::size_t k = 0; k < 4; ++k) {
    std::set<std::string> kernels;
    for (const auto& unit : kernc::precompile_units(variants, targets, PrecompileShard{k, 4})) {
      kernels.insert(unit.variant->kernel);
    }
    CHECK(kernels.size() >= 3);
  }
}

TEST_CASE("spec::PrecompileShard::parse reads K/N and names what is wrong") {
  CHECK(PrecompileShard::parse("1/1").count == 1);
  auto shard = PrecompileShard::parse("3/4");
  CHECK(shard.index == 2);
  CHECK(shard.count == 4);
  CHECK(shard.str() == "3/4");
  for (const char* bad : {"0/4", "5/4", "2", "a/b", "1/0", "-1/4", "1/-4", "", "/", "1/", "/4", " 1/4", "1/4x",
                          "99999999999999999999/1", "1/100001"}) {
    CAPTURE(bad);
    try {
      PrecompileShard::parse(bad);
      FAIL_CHECK("accepted");
    } catch (const kernc::Error& error) {
      CHECK(error.code() == kernc::ErrorCode::invalid_argument);
      CHECK(contains(error.what(), "--shard must be K/N"));
    }
  }
}

TEST_CASE("cache::CacheDirectory::merge_from: N shards merged equal one unsharded precompile") {
  TempDir dir;
  const std::set<std::string> unsharded = precompile_into(dir, "whole", {});
  std::set<std::string> from_shards;
  for (std::size_t k = 0; k < 3; ++k) {
    for (const auto& key : precompile_into(dir, "shard" + std::to_string(k), PrecompileShard{k, 3})) {
      CHECK(from_shards.insert(key).second);  // disjoint
    }
  }
  CHECK(from_shards == unsharded);

  CacheDirectory merged(kernc::test::cache_config_in(dir, "merged"));
  std::uint64_t copied = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    auto report = merged.merge_from(dir / ("shard" + std::to_string(k)));
    CHECK(report.bad.empty());
    CHECK(report.already_present == 0);
    copied += report.copied;
  }
  CHECK(copied == unsharded.size());
  std::set<std::string> keys;
  for (const auto& file : merged.list()) {
    keys.insert(file.key);
    std::string problem;
    auto entry = merged.read(file, &problem);
    REQUIRE_MESSAGE(entry, problem);
    // The same binary as the shard built (merging copies, never rebuilds).
    auto original = kernc::platform::read_file(file.path);
    bool found = false;
    for (std::size_t k = 0; k < 3 && !found; ++k) {
      auto path = dir / ("shard" + std::to_string(k) + "/entries/" + file.key.substr(0, 2) + "/" + file.key);
      if (auto bytes = kernc::platform::read_file_if_exists(path)) found = *bytes == original;
    }
    CHECK(found);
  }
  CHECK(keys == unsharded);
  // Merging again copies nothing.
  auto again = merged.merge_from(dir / "shard1");
  CHECK(again.copied == 0);
  CHECK(again.already_present > 0);
}

TEST_CASE("cache::CacheDirectory::merge_from: bad entries are reported and skipped, the good ones copied") {
  TempDir dir;
  const std::set<std::string> keys = precompile_into(dir, "artifact", {});
  REQUIRE(keys.size() >= 3);
  auto entry_path = [&](const std::string& key) {
    return dir / ("artifact/entries/" + key.substr(0, 2) + "/" + key);
  };
  auto it = keys.begin();
  const std::string flipped = *it++;
  const std::string truncated = *it++;
  const std::string renamed = *it++;
  std::string bytes = kernc::platform::read_file(entry_path(flipped));
  bytes[bytes.size() / 2] ^= 0x10;
  kernc::platform::write_file_atomic(entry_path(flipped), bytes, 0600);
  bytes = kernc::platform::read_file(entry_path(truncated));
  kernc::platform::write_file_atomic(entry_path(truncated), bytes.substr(0, bytes.size() / 2), 0600);
  // A valid entry under another key's name: its own key does not match.
  std::string other = kernc::platform::read_file(entry_path(*it));
  kernc::platform::write_file_atomic(entry_path(renamed), other, 0600);

  CacheDirectory merged(kernc::test::cache_config_in(dir, "merged"));
  auto report = merged.merge_from(dir / "artifact");
  CHECK(report.copied == keys.size() - 3);
  REQUIRE(report.bad.size() == 3);
  std::string problems;
  for (const auto& [path, problem] : report.bad) problems += path + ": " + problem + "\n";
  CHECK(contains(problems, flipped));
  CHECK(contains(problems, truncated));
  CHECK(contains(problems, renamed));
  for (const auto& file : merged.list()) {
    CHECK(file.key != flipped);
    CHECK(file.key != truncated);
    CHECK(file.key != renamed);
  }
}

TEST_CASE("cache::CacheDirectory::merge_from refuses what is not a trusted kernc cache") {
  TempDir dir;
  CacheDirectory merged(kernc::test::cache_config_in(dir, "merged"));
  auto refusal = [&](const std::string& source) -> std::string {
    try {
      merged.merge_from(source);
    } catch (const kernc::Error& error) {
      CHECK(error.code() == kernc::ErrorCode::io);
      return error.what();
    }
    return "";
  };
  CHECK(contains(refusal(dir / "nowhere"), "No such file or directory"));
  kernc::platform::make_directories(dir / "plain", 0700);
  CHECK(contains(refusal(dir / "plain"), "not a kernc cache"));
  CHECK(contains(refusal(merged.root()), "the cache directory itself"));
  precompile_into(dir, "open", {});
  ::chmod((dir / "open/entries").c_str(), 0777);
  CHECK(contains(refusal(dir / "open"), "not writable by group or others"));
}
