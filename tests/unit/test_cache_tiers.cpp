// Caches that travel (NOTE [ cache key ], NOTE [ architecture ladder ], NOTE [ entry trust ]):
// look-ups without a compiler, the architecture ladder, read-only tiers, and programs that
// depend only on resolved types.

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "cache/cache_key.hpp"
#include "cache/entry_format.hpp"
#include "cache/local_store.hpp"
#include "kernc/cache.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "platform/files.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::Cache;
using kernc::CacheConfig;
using kernc::CacheOutcome;
using kernc::Program;
using kernc::Target;
using kernc::test::cache_config_in;
using kernc::test::contains;
using kernc::test::nvrtc;
using kernc::test::TempDir;

namespace {

Program tier_program(int variant = 0) {
  Program program;
  program.name = "kernels.cu";
  program.source = kernc::test::test_data("kernels.cu");
  program.name_expressions = {"scale<float>"};
  program.options.defines["KERNC_TEST_VARIANT"] = std::to_string(variant);
  return program;
}

std::vector<std::string> names(const std::vector<Target>& targets) {
  std::vector<std::string> out;
  for (const auto& t : targets) out.push_back(t.str());
  return out;
}

// Every file under `root` with its size and mtime, to prove a tier was not touched.
std::string snapshot(const std::string& root) {
  std::string out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    struct stat info {};
    ::lstat(entry.path().c_str(), &info);
    out += fmt::format("{} {} {}.{}\n", entry.path().string(), info.st_size, info.st_mtim.tv_sec, info.st_mtim.tv_nsec);
  }
  return out;
}

}  // namespace

TEST_CASE("target::binary_ladder: exact cubin, same-major lower minors, then PTX newest first") {
  CHECK(names(kernc::binary_ladder(Target::parse("sm_86"))) ==
        std::vector<std::string>{"sm_86", "sm_85", "sm_84", "sm_83", "sm_82", "sm_81", "sm_80", "compute_86",
                                 "compute_80", "compute_75", "compute_72", "compute_70", "compute_62", "compute_61",
                                 "compute_60", "compute_53", "compute_52", "compute_50"});
  auto sm90 = names(kernc::binary_ladder(Target::parse("sm_90")));
  REQUIRE(sm90.size() >= 3);
  CHECK(sm90[0] == "sm_90");
  CHECK(sm90[1] == "compute_90");
  CHECK(sm90[2] == "compute_89");
  CHECK(std::find(sm90.begin(), sm90.end(), "sm_80") == sm90.end());  // another major: never a cubin
  // A device newer than every shipped capability still gets its own PTX rung first.
  auto future = names(kernc::binary_ladder(Target::parse("sm_130")));
  CHECK(future[0] == "sm_130");
  CHECK(future[1] == "compute_130");
  CHECK(future[2] == "compute_121");
  CHECK(names(kernc::binary_ladder(Target::parse("gfx90a:sramecc+:xnack-"))) ==
        std::vector<std::string>{"gfx90a:sramecc+:xnack-", "gfx90a"});
  CHECK(names(kernc::binary_ladder(Target::parse("gfx90a"))) == std::vector<std::string>{"gfx90a"});
  CHECK_THROWS_AS(kernc::binary_ladder(Target::parse("compute_90")), kernc::Error);
}

TEST_CASE("cache::Cache::find serves any compiler release and climbs the ladder, with no compiler") {
  TempDir dir;
  const CacheConfig config = cache_config_in(dir);
  std::string sm80_key, ptx_key;
  {
    Cache writer(config);
    sm80_key = writer.get_or_compile(tier_program(), Target::parse("sm_80"), nvrtc()).key;
    ptx_key = writer.get_or_compile(tier_program(), Target::parse("compute_80"), nvrtc()).key;
  }
  Cache cache(config);  // a new process: nothing in memory, no compiler passed
  SUBCASE("an sm_86 device is served by the sm_80 cubin") {
    auto hit = cache.find(tier_program(), kernc::binary_ladder(Target::parse("sm_86")));
    REQUIRE(hit.has_value());
    CHECK(hit->key == sm80_key);
    CHECK(hit->outcome == CacheOutcome::disk_hit);
    CHECK(hit->program->target.str() == "sm_80");
    CHECK(hit->location == config.directory);
    CHECK(cache.stats().disk_hits == 1);
    CHECK(cache.stats().fallback_hits == 1);
    // Then from memory.
    auto again = cache.find(tier_program(), kernc::binary_ladder(Target::parse("sm_86")));
    REQUIRE(again.has_value());
    CHECK(again->outcome == CacheOutcome::memory_hit);
    CHECK(again->key == sm80_key);
  }
  SUBCASE("an sm_90 device is served by compute_80 PTX") {
    auto hit = cache.find(tier_program(), kernc::binary_ladder(Target::parse("sm_90")));
    REQUIRE(hit.has_value());
    CHECK(hit->key == ptx_key);
    CHECK(hit->program->target.str() == "compute_80");
  }
  SUBCASE("a rejected binary is passed over for the next rung") {
    std::vector<std::string> offered;
    auto hit = cache.find(tier_program(), kernc::binary_ladder(Target::parse("sm_86")),
                          [&](const kernc::CacheResult& r) {
                            offered.push_back(r.program->target.str());
                            return r.program->target.str() != "sm_80";  // as if the driver refused it
                          });
    REQUIRE(hit.has_value());
    CHECK(offered == std::vector<std::string>{"sm_80", "compute_80"});
    CHECK(hit->program->target.str() == "compute_80");
  }
  SUBCASE("an sm_75 device and another program find nothing") {
    CHECK_FALSE(cache.find(tier_program(), kernc::binary_ladder(Target::parse("sm_75"))).has_value());
    CHECK_FALSE(cache.find(tier_program(1), kernc::binary_ladder(Target::parse("sm_86"))).has_value());
  }
  SUBCASE("an entry another release compiled serves the same program") {
    // Rename the entry as if a different NVRTC release had written it (its tag differs).
    kernc::cache::LocalStore store(config.directory, config.max_size);
    const std::string other = sm80_key.substr(0, 65) + std::string(16, '0');
    auto lookup = store.get(sm80_key);
    REQUIRE(lookup.status == kernc::cache::StoreLookup::Status::hit);
    kernc::CompilerIdentity identity = nvrtc().identity();
    std::string bytes = kernc::cache::encode_entry(other, lookup.entry->program, identity);
    store.put(other, bytes);
    REQUIRE(::unlink(store.entry_path(sm80_key).c_str()) == 0);
    auto hit = cache.find(tier_program(), {Target::parse("sm_80")});
    REQUIRE(hit.has_value());
    CHECK(hit->key == other);
    // An exact look-up for the loaded compiler does not take it: two releases never share.
    CHECK(cache.get_or_compile(tier_program(), Target::parse("sm_80"), nvrtc()).outcome == CacheOutcome::compiled);
  }
}

TEST_CASE("cache::Cache read-only tiers are searched after the user's cache and never written") {
  TempDir dir;
  CacheConfig image = cache_config_in(dir, "image");
  std::string key;
  {
    Cache writer(image);
    key = writer.get_or_compile(tier_program(), Target::parse("sm_90"), nvrtc()).key;
  }
  REQUIRE(::chmod(image.directory.c_str(), 0755) == 0);
  const std::string before = snapshot(image.directory);

  CacheConfig config = cache_config_in(dir, "user");
  config.read_only_directories = {dir / "missing", image.directory};
  Cache cache(config);
  REQUIRE(cache.tier_problems().size() == 1);
  CHECK(contains(cache.tier_problems()[0], dir / "missing"));
  CHECK(cache.locations() == std::vector<std::string>{config.directory, image.directory});

  auto exact = cache.get_or_compile(tier_program(), Target::parse("sm_90"), nvrtc());
  CHECK(exact.outcome == CacheOutcome::disk_hit);
  CHECK(exact.location == image.directory);
  CHECK(exact.key == key);
  CHECK(cache.stats().read_only_hits == 1);
  CHECK(cache.stats().disk_hits == 0);
  CHECK_FALSE(cache.stored(key));  // not copied into the user's cache
  Cache other(config);
  auto found = other.find(tier_program(), kernc::binary_ladder(Target::parse("sm_90")));
  REQUIRE(found.has_value());
  CHECK(found->location == image.directory);
  // A compile of something new goes to the user's cache only.
  CHECK(cache.get_or_compile(tier_program(2), Target::parse("sm_90"), nvrtc()).outcome == CacheOutcome::compiled);
  cache.flush_stats();
  other.flush_stats();
  CHECK(snapshot(image.directory) == before);

  SUBCASE("with copy_read_only_hits, a tier's entry is copied into the user's cache as it is") {
    CacheConfig copying = config;
    copying.directory = dir / "precompiled";
    copying.copy_read_only_hits = true;
    Cache precompile(copying);
    auto copied = precompile.get_or_compile(tier_program(), Target::parse("sm_90"), nvrtc());
    CHECK(copied.outcome == CacheOutcome::disk_hit);
    CHECK(copied.read_only);
    CHECK(copied.location == image.directory);
    CHECK(precompile.stats().read_only_hits == 1);
    CHECK(precompile.stats().compiles == 0);
    REQUIRE(precompile.stored(key));
    kernc::cache::LocalStore tier(image.directory, 0, kernc::cache::LocalStore::Mode::read_only);
    kernc::cache::LocalStore own_store(copying.directory, 0, kernc::cache::LocalStore::Mode::read_only);
    CHECK(kernc::platform::read_file(own_store.entry_path(key)) == kernc::platform::read_file(tier.entry_path(key)));
    CHECK(snapshot(image.directory) == before);
    // The next Cache finds it in its own directory.
    Cache next(copying);
    auto own = next.get_or_compile(tier_program(), Target::parse("sm_90"), nvrtc());
    CHECK(own.location == copying.directory);
    CHECK_FALSE(own.read_only);
  }
  SUBCASE("a tier writable by its group is refused") {
    REQUIRE(::chmod(image.directory.c_str(), 0775) == 0);
    Cache refused(config);
    REQUIRE(refused.tier_problems().size() == 2);
    CHECK(contains(refused.tier_problems()[1], "is writable by other users (mode 775)"));
    CHECK_FALSE(refused.find(tier_program(), {Target::parse("sm_90")}).has_value());
  }
  SUBCASE("a group-writable entry in a tier is never loaded") {
    kernc::cache::LocalStore store(image.directory, 0, kernc::cache::LocalStore::Mode::read_only);
    REQUIRE(::chmod(store.entry_path(key).c_str(), 0664) == 0);
    Cache strict(config);
    CHECK_FALSE(strict.find(tier_program(), {Target::parse("sm_90")}).has_value());
    CHECK(strict.stats().corrupt_entries == 1);
    auto lookup = store.get(key);
    CHECK(lookup.status == kernc::cache::StoreLookup::Status::corrupt);
    CHECK(contains(lookup.problem, "not trusted: it is writable by its group (mode 664)"));
  }
}

TEST_CASE("kernels: a scalar's own type does not make another program") {
  kernc::ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "saxpy");
  kernc::ReductionKernel scaled("T x, float32 s", "T y", "x * s", "a + b", "y = a", "0", "scaled");
  const kernc::Layout layout = kernc::Layout::parse("contiguous-i32");
  auto types = [](kernc::DType scalar, int inputs_after) {
    kernc::CallTypes t;
    if (inputs_after == 0) t.inputs = {kernc::ArgType::scalar_of(scalar)};
    t.inputs.push_back(kernc::ArgType::array(kernc::DType::float32));
    if (inputs_after == 1) {
      t.inputs.push_back(kernc::ArgType::scalar_of(scalar));
    } else {
      t.inputs.push_back(kernc::ArgType::array(kernc::DType::float32));
    }
    return t;
  };
  const Program reference = kernc::program(saxpy, types(kernc::DType::float32, 0), layout);
  for (kernc::DType scalar : {kernc::DType::float64, kernc::DType::int64, kernc::DType::int8, kernc::DType::bool_}) {
    CAPTURE(kernc::to_string(scalar));
    CHECK(kernc::program(saxpy, types(scalar, 0), layout).source == reference.source);
    CHECK(kernc::program(scaled, types(scalar, 1), layout).source ==
          kernc::program(scaled, types(kernc::DType::float32, 1), layout).source);
  }
  // An explicit binding that agrees with the arrays changes nothing either.
  kernc::CallTypes bound = types(kernc::DType::float64, 0);
  bound.bindings["T"] = kernc::DType::float32;
  CHECK(kernc::program(saxpy, bound, layout).source == reference.source);
}
