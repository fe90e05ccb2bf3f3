#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache_internals.hpp"
#include "cache/entry_format.hpp"
#include "cache/local_store.hpp"
#include "child_process.hpp"
#include "kernc/cache.hpp"
#include "kernc/error.hpp"
#include "log_capture.hpp"
#include "platform/files.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::Cache;
using kernc::CacheConfig;
using kernc::CacheOutcome;
using kernc::CacheResult;
using kernc::Error;
using kernc::ErrorCode;
using kernc::Program;
using kernc::Target;
using kernc::test::cache_config_in;
using kernc::test::contains;
using kernc::test::nvrtc;
using kernc::test::TempDir;

namespace {

constexpr int kOtherUid = 65534;  // "nobody"

// The test kernels; `variant` changes a define, and so the key, without changing the code.
Program kernels_program(int variant = 0) {
  Program program;
  program.name = "kernels.cu";
  program.source = kernc::test::test_data("kernels.cu");
  program.name_expressions = {"scale<float>", "scale<double>"};
  program.options.defines["KERNC_TEST_VARIANT"] = std::to_string(variant);
  return program;
}

const Target& sm80() {
  static const Target target = Target::parse("sm_80");
  return target;
}

std::vector<std::string> files_under(const std::string& root) {
  std::vector<std::string> files;
  std::error_code error;
  for (std::filesystem::recursive_directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
    files.push_back(it->path().filename().string());
  }
  return files;
}

bool has_temp_files(const std::string& root) {
  for (const auto& name : files_under(root)) {
    if (kernc::platform::is_temp_name(name)) return true;
  }
  return false;
}

// Checks the entry file of `key` decodes and holds `program`'s binary and lowered names.
void check_entry_file(const std::string& path, const std::string& key, const kernc::CompiledProgram& program) {
  std::string problem;
  auto entry = kernc::cache::decode_entry(kernc::platform::read_file(path), key, &problem);
  REQUIRE_MESSAGE(entry.has_value(), problem);
  CHECK(entry->program.binary == program.binary);
  CHECK(entry->program.lowered_names == program.lowered_names);
}

void age(const std::string& path, int seconds_ago) {
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = std::time(nullptr) - seconds_ago;
  times[0].tv_nsec = times[1].tv_nsec = 0;
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("cache::Cache::get_or_compile compiles, then hits memory, then hits disk in a new Cache") {
  TempDir dir;
  const CacheConfig config = cache_config_in(dir);
  const Program program = kernels_program();
  CacheResult first;
  {
    Cache cache(config);
    CHECK(cache.disk_problem().empty());
    REQUIRE(cache.uses_disk());
    first = cache.get_or_compile(program, sm80(), nvrtc());
    CHECK(first.outcome == CacheOutcome::compiled);
    CHECK(kernc::test::is_cache_key(first.key));
    CHECK(first.key == cache.key(program, sm80(), nvrtc()));
    CHECK(first.elapsed_ms > 0);
    REQUIRE(first.program != nullptr);
    CHECK(kernc::test::starts_with(first.program->binary, kernc::test::kElfMagic));
    CHECK(kernc::test::starts_with(first.program->lowered_name("scale<float>"), "_Z"));
    CHECK(cache.stats().compiles == 1);
    CHECK(cache.stats().compile_ms > 0);

    const std::string path = kernc::cache::disk_store(cache)->entry_path(first.key);
    check_entry_file(path, first.key, *first.program);
    CHECK(!has_temp_files(config.directory));

    CacheResult second = cache.get_or_compile(program, sm80(), nvrtc());
    CHECK(second.outcome == CacheOutcome::memory_hit);
    CHECK(second.program == first.program);  // the same object, not a copy
    CHECK(second.key == first.key);
    CHECK(cache.stats().memory_hits == 1);
    CHECK(cache.stats().compiles == 1);
  }
  Cache fresh(config);
  CacheResult third = fresh.get_or_compile(program, sm80(), nvrtc());
  CHECK(third.outcome == CacheOutcome::disk_hit);
  CHECK(third.key == first.key);
  CHECK(third.program->binary == first.program->binary);
  CHECK(third.program->lowered_names == first.program->lowered_names);
  CHECK(third.program->lowered_names.size() == 2);
  CHECK(third.program->flags == first.program->flags);
  CHECK(third.program->target == sm80());
  CHECK(third.program->compiler == nvrtc().identity().str());
  CHECK(fresh.stats().disk_hits == 1);
  CHECK(fresh.stats().compiles == 0);
  CHECK(fresh.stats().load_ms > 0);
  CHECK(fresh.get_or_compile(program, sm80(), nvrtc()).outcome == CacheOutcome::memory_hit);

  SUBCASE("another target is another entry") {
    CacheResult ptx = fresh.get_or_compile(program, Target::parse("compute_80"), nvrtc());
    CHECK(ptx.outcome == CacheOutcome::compiled);
    CHECK(ptx.key != first.key);
    CHECK(contains(ptx.program->binary, ".target sm_80"));
    CHECK(kernc::cache::disk_store(fresh)->list().size() == 2);
  }
  SUBCASE("another program is another entry") {
    CacheResult other = fresh.get_or_compile(kernels_program(1), sm80(), nvrtc());
    CHECK(other.outcome == CacheOutcome::compiled);
    CHECK(other.key != first.key);
    CHECK(kernc::cache::disk_store(fresh)->list().size() == 2);
  }
}

TEST_CASE("cache::Cache::get_or_compile recompiles a damaged entry and rewrites it") {
  TempDir dir;
  const CacheConfig config = cache_config_in(dir);
  const Program program = kernels_program();
  std::string key, path, pristine;
  {
    Cache cache(config);
    key = cache.get_or_compile(program, sm80(), nvrtc()).key;
    path = kernc::cache::disk_store(cache)->entry_path(key);
  }
  pristine = kernc::platform::read_file(path);
  std::string damaged = pristine;
  std::string reason;
  SUBCASE("truncated") {
    damaged.resize(damaged.size() / 2);
    reason = "size mismatch";
  }
  SUBCASE("truncated inside the header") {
    damaged.resize(20);
    reason = "truncated";
  }
  SUBCASE("empty") {
    damaged.clear();
    reason = "truncated";
  }
  SUBCASE("one byte of the payload flipped") {
    damaged[damaged.size() - 100] ^= 0x04;
    reason = "checksum mismatch";
  }
  SUBCASE("one byte of the metadata flipped") {
    damaged[kernc::cache::kEntryHeaderSize + 10] ^= 0x20;
    reason = "checksum mismatch";
  }
  SUBCASE("the version field rewritten") {
    damaged[8] = 3;
    reason = "format version 3";
  }
  kernc::platform::write_file_atomic(path, damaged);

  kernc::test::LogCapture log;
  Cache cache(config);
  CacheResult result = cache.get_or_compile(program, sm80(), nvrtc());
  CHECK(result.outcome == CacheOutcome::compiled);
  CHECK(result.key == key);
  CHECK(cache.stats().corrupt_entries == 1);
  CHECK(cache.stats().compiles == 1);
  CHECK(cache.stats().disk_hits == 0);
  std::string logged = log.text();
  CHECK(contains(logged, "corrupt cache entry"));
  CHECK(contains(logged, reason));
  CHECK(contains(logged, path));

  // The file was rewritten whole and valid.
  std::string rewritten = kernc::platform::read_file(path);
  CHECK(rewritten != damaged);
  CHECK(rewritten[8] == 2);
  check_entry_file(path, key, *result.program);
  CHECK(!has_temp_files(config.directory));
  Cache again(config);
  CHECK(again.get_or_compile(program, sm80(), nvrtc()).outcome == CacheOutcome::disk_hit);
  CHECK(again.stats().corrupt_entries == 0);
}

TEST_CASE("cache::Cache keeps compiling when the disk layer cannot be used") {
  TempDir dir;
  CacheConfig config = cache_config_in(dir);
  std::vector<std::string> expected_words;
  bool logs_problem = true;
  SUBCASE("a directory below a regular file") {
    dir.write("file", "not a directory");
    config.directory = dir / "file/cache";
    expected_words = {config.directory, "disk cache is off"};
  }
  SUBCASE("a directory owned by another user") {
    if (::geteuid() == 0) {
      std::filesystem::create_directory(config.directory);
      REQUIRE(::chmod(config.directory.c_str(), 0700) == 0);
      REQUIRE(::chown(config.directory.c_str(), kOtherUid, kOtherUid) == 0);
    } else {
      config.directory = "/usr";  // root's
    }
    expected_words = {"owned by uid", "not by this user", "disk cache is off"};
  }
  SUBCASE("a directory writable by other users") {
    std::filesystem::create_directory(config.directory);
    REQUIRE(::chmod(config.directory.c_str(), 0777) == 0);
    expected_words = {"writable by other users", "disk cache is off"};
  }
  SUBCASE("the disk layer switched off") {
    config.disk_enabled = false;
    logs_problem = false;
  }
  kernc::test::LogCapture log;
  Cache cache(config);
  CHECK(!cache.uses_disk());
  if (logs_problem) {
    for (const auto& word : expected_words) {
      INFO("word = " << word);
      CHECK(contains(cache.disk_problem(), word));
    }
    // Logged once, as a warning.
    std::string logged = log.text();
    CHECK(contains(logged, "warning: " + cache.disk_problem()));
    CHECK(logged.find(cache.disk_problem()) == logged.rfind(cache.disk_problem()));
  } else {
    CHECK(cache.disk_problem().empty());
    CHECK(log.text().empty());
  }
  CacheResult first = cache.get_or_compile(kernels_program(), sm80(), nvrtc());
  CHECK(first.outcome == CacheOutcome::compiled);
  CHECK(kernc::test::starts_with(first.program->binary, kernc::test::kElfMagic));
  CHECK(cache.get_or_compile(kernels_program(), sm80(), nvrtc()).outcome == CacheOutcome::memory_hit);
  CHECK(cache.stats().store_failures == 0);
  CHECK_NOTHROW(cache.flush_stats());
  if (config.directory != "/usr") CHECK(!std::filesystem::exists(config.directory + "/entries"));
}

TEST_CASE("cache::Cache on a directory without write permission serves existing entries") {
  // Root ignores permissions, so as root the check runs as another user in a child.
  TempDir dir;
  const bool root_user = ::geteuid() == 0;
  const CacheConfig config = cache_config_in(dir);
  const Program program = kernels_program();
  std::string binary;
  {
    Cache cache(config);
    binary = cache.get_or_compile(program, sm80(), nvrtc()).program->binary;
  }
  if (root_user) {
    REQUIRE(::chmod(dir.path().c_str(), 0711) == 0);
    REQUIRE(::lchown(config.directory.c_str(), kOtherUid, kOtherUid) == 0);
    for (const auto& item : std::filesystem::recursive_directory_iterator(config.directory)) {
      REQUIRE(::lchown(item.path().c_str(), kOtherUid, kOtherUid) == 0);
    }
  }
  for (const auto& item : std::filesystem::recursive_directory_iterator(config.directory)) {
    if (item.is_directory()) REQUIRE(::chmod(item.path().c_str(), 0500) == 0);
  }
  REQUIRE(::chmod(config.directory.c_str(), 0500) == 0);

  std::string failure = kernc::test::run_forked(
      [&]() -> std::string {
        kernc::test::LogCapture log;
        Cache cache(config);
        if (!contains(cache.disk_problem(), "not writable")) return "disk_problem: " + cache.disk_problem();
        if (!cache.uses_disk() || kernc::cache::disk_store(cache)->writable()) return "the store is missing or writable";
        if (!contains(log.text(), "not writable")) return "no warning was logged";
        CacheResult hit = cache.get_or_compile(program, sm80(), nvrtc());
        if (hit.outcome != CacheOutcome::disk_hit) return std::string("outcome ") + kernc::to_string(hit.outcome);
        if (hit.program->binary != binary) return "the binary differs";
        return "";
      },
      root_user ? kOtherUid : -1);
  CHECK_MESSAGE(failure.empty(), failure);
}

TEST_CASE("cache::Cache::get_or_compile compiles a key once when threads ask at once") {
  TempDir dir;
  Cache cache(cache_config_in(dir));
  const Program program = kernels_program();
  constexpr int kThreads = 6;
  std::atomic<int> waiting{kThreads};
  std::vector<CacheResult> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      --waiting;
      while (waiting.load() > 0) std::this_thread::yield();  // start together
      try {
        results[i] = cache.get_or_compile(program, sm80(), nvrtc());
      } catch (const std::exception& error) {
        errors[i] = error.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  int compiled = 0;
  for (int i = 0; i < kThreads; ++i) {
    INFO("thread " << i << ": " << errors[i]);
    REQUIRE(errors[i].empty());
    CHECK(results[i].program == results[0].program);
    CHECK(results[i].key == results[0].key);
    compiled += results[i].outcome == CacheOutcome::compiled ? 1 : 0;
    CHECK(results[i].outcome != CacheOutcome::disk_hit);
  }
  CHECK(compiled == 1);
  CHECK(cache.stats().compiles == 1);
  CHECK(cache.stats().memory_hits == kThreads - 1);
  CHECK(kernc::cache::disk_store(cache)->list().size() == 1);
}

TEST_CASE("cache::Cache::get_or_compile hands a compile error to every waiting thread and does not cache it") {
  TempDir dir;
  Cache cache(cache_config_in(dir));
  Program broken;
  broken.name = "kernel.cu";
  broken.source = kernc::test::test_data("compile_error.cu");
  constexpr int kThreads = 4;
  std::atomic<int> waiting{kThreads};
  std::vector<ErrorCode> codes(kThreads, ErrorCode::io);
  std::vector<std::string> logs(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      --waiting;
      while (waiting.load() > 0) std::this_thread::yield();
      try {
        cache.get_or_compile(broken, sm80(), nvrtc());
      } catch (const Error& error) {
        codes[i] = error.code();
        if (error.compile_failure()) logs[i] = error.compile_failure()->log;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int i = 0; i < kThreads; ++i) {
    INFO("thread " << i);
    CHECK(codes[i] == ErrorCode::compile_failed);
    CHECK(contains(logs[i], "kernel.cu(3)"));
  }
  const auto failures = cache.stats().compile_failures;
  CHECK(failures >= 1);
  CHECK(failures <= kThreads);
  CHECK(cache.stats().compiles == 0);
  CHECK(kernc::cache::disk_store(cache)->list().empty());
  // Not cached: the next lookup compiles (and fails) again.
  CHECK_THROWS_AS(cache.get_or_compile(broken, sm80(), nvrtc()), Error);
  CHECK(cache.stats().compile_failures == failures + 1);
}

TEST_CASE("cache::Cache::get_or_compile checks its arguments before compiling") {
  TempDir dir;
  Cache cache(cache_config_in(dir));
  SUBCASE("a target the compiler does not support") {
    try {
      cache.get_or_compile(kernels_program(), Target::parse("sm_30"), nvrtc());
      FAIL("sm_30 was compiled");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::unsupported_target);
    }
  }
  SUBCASE("malformed options") {
    Program program = kernels_program();
    program.options.language_standard = "c++03";
    try {
      cache.get_or_compile(program, sm80(), nvrtc());
      FAIL("c++03 was compiled");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::invalid_argument);
    }
  }
  CHECK(cache.stats().compiles == 0);
  CHECK(cache.stats().compile_failures == 0);
  CHECK(kernc::cache::disk_store(cache)->list().empty());
}

TEST_CASE("cache::Cache bounds its memory layer") {
  TempDir dir;
  CacheConfig config = cache_config_in(dir);
  config.disk_enabled = false;
  config.memory_max_size = 1;  // below one binary: only the latest stays
  Cache cache(config);
  CHECK(cache.get_or_compile(kernels_program(0), sm80(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(cache.get_or_compile(kernels_program(1), sm80(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(cache.get_or_compile(kernels_program(1), sm80(), nvrtc()).outcome == CacheOutcome::memory_hit);
  CHECK(cache.get_or_compile(kernels_program(0), sm80(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(cache.stats().compiles == 3);
}

TEST_CASE("cache::Cache evicts disk entries over max_size and counts it") {
  TempDir dir;
  std::uint64_t entry_size = 0;
  {
    Cache sizing(cache_config_in(dir, "sizing"));
    auto result = sizing.get_or_compile(kernels_program(0), sm80(), nvrtc());
    entry_size = std::filesystem::file_size(kernc::cache::disk_store(sizing)->entry_path(result.key));
  }
  const CacheConfig config = cache_config_in(dir, "cache", entry_size + entry_size / 2);
  std::string first_key, second_key;
  {
    Cache cache(config);
    first_key = cache.get_or_compile(kernels_program(0), sm80(), nvrtc()).key;
    age(kernc::cache::disk_store(cache)->entry_path(first_key), 60);
    second_key = cache.get_or_compile(kernels_program(1), sm80(), nvrtc()).key;
    CHECK(cache.stats().evictions == 1);
    auto files = kernc::cache::disk_store(cache)->list();
    REQUIRE(files.size() == 1);
    CHECK(files[0].key == second_key);
    // The memory layer still has the evicted one.
    CHECK(cache.get_or_compile(kernels_program(0), sm80(), nvrtc()).outcome == CacheOutcome::memory_hit);
  }
  Cache fresh(config);
  CHECK(fresh.get_or_compile(kernels_program(1), sm80(), nvrtc()).outcome == CacheOutcome::disk_hit);
  CHECK(fresh.get_or_compile(kernels_program(0), sm80(), nvrtc()).outcome == CacheOutcome::compiled);
  CHECK(fresh.stats().evictions == 1);
  fresh.flush_stats();
  CHECK(kernc::cache::disk_store(fresh)->read_stats().evictions == 2);
}

TEST_CASE("cache::Cache::flush_stats adds this object's counters to the directory once") {
  TempDir dir;
  const CacheConfig config = cache_config_in(dir);
  {
    Cache cache(config);
    cache.get_or_compile(kernels_program(), sm80(), nvrtc());
    cache.get_or_compile(kernels_program(), sm80(), nvrtc());
    cache.flush_stats();
    cache.flush_stats();  // nothing new: adds nothing
    kernc::CacheStats saved = kernc::cache::disk_store(cache)->read_stats();
    CHECK(saved.compiles == 1);
    CHECK(saved.memory_hits == 1);
    CHECK(saved.compile_ms > 0);
    cache.get_or_compile(kernels_program(), sm80(), nvrtc());
  }  // the destructor flushes the last memory hit
  {
    Cache cache(config);
    cache.get_or_compile(kernels_program(), sm80(), nvrtc());
    CHECK(cache.stats().disk_hits == 1);
    CHECK(cache.stats().memory_hits == 0);  // stats() is this object's only
  }
  kernc::cache::LocalStore store(config.directory, config.max_size);
  kernc::CacheStats total = store.read_stats();
  CHECK(total.compiles == 1);
  CHECK(total.memory_hits == 2);
  CHECK(total.disk_hits == 1);
  CHECK(total.corrupt_entries == 0);
}

// Helper for the cross-process test below: does nothing unless KERNC_TEST_SHARED_CACHE is set.
TEST_CASE("helper::compile into a shared cache directory" * doctest::skip()) {
  const std::string directory = kernc::test::env("KERNC_TEST_SHARED_CACHE");
  REQUIRE_MESSAGE(!directory.empty(), "started by the cross-process test only (KERNC_TEST_SHARED_CACHE)");
  const kernc::Compiler& compiler = nvrtc();  // loaded before the start signal
  CacheConfig config;
  config.directory = directory;
  Cache cache(config);
  REQUIRE_MESSAGE(cache.disk_problem().empty(), cache.disk_problem());
  std::ofstream(kernc::test::env("KERNC_TEST_READY_FILE")) << "ready";
  const std::string start = kernc::test::env("KERNC_TEST_START_FILE");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(start)) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CacheResult result = cache.get_or_compile(kernels_program(), sm80(), compiler);
  std::ofstream(kernc::test::env("KERNC_TEST_RESULT_FILE")) << kernc::to_string(result.outcome) << "\n"
                                                            << result.key << "\n";
}

TEST_CASE("cache::Cache::get_or_compile from several processes at once leaves one valid entry") {
  TempDir dir;
  const std::string directory = dir / "shared";
  const std::string start = dir / "start";
  constexpr int kProcesses = 6;
  std::vector<kernc::test::ChildProcess> children;
  for (int i = 0; i < kProcesses; ++i) {
    std::string n = std::to_string(i);
    children.emplace_back("helper::compile into a shared cache directory",
                          std::map<std::string, std::string>{{"KERNC_TEST_SHARED_CACHE", directory},
                                                             {"KERNC_TEST_READY_FILE", dir / ("ready" + n)},
                                                             {"KERNC_TEST_START_FILE", start},
                                                             {"KERNC_TEST_RESULT_FILE", dir / ("result" + n)}},
                          dir / ("log" + n));
  }
  auto all_ready = [&] {
    for (int i = 0; i < kProcesses; ++i) {
      if (!std::filesystem::exists(dir / ("ready" + std::to_string(i)))) return false;
    }
    return true;
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!all_ready() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  dir.write("start", "go");  // every child waits for this file, then compiles at once

  Cache here(cache_config_in(dir, "unused"));
  const std::string key = here.key(kernels_program(), sm80(), nvrtc());
  int compiled = 0;
  for (int i = 0; i < kProcesses; ++i) {
    std::string n = std::to_string(i);
    int status = children[i].wait();
    INFO("child " << i << " output:\n" << read_whole(dir / ("log" + n)));
    CHECK(status == 0);
    std::istringstream result(read_whole(dir / ("result" + n)));
    std::string outcome, child_key;
    std::getline(result, outcome);
    std::getline(result, child_key);
    CHECK((outcome == "compiled" || outcome == "disk hit"));
    CHECK(child_key == key);
    compiled += outcome == "compiled" ? 1 : 0;
  }
  CHECK(compiled >= 1);

  kernc::cache::LocalStore store(directory, 64ull << 20);
  auto files = store.list();
  REQUIRE(files.size() == 1);
  CHECK(files[0].key == key);
  std::string problem;
  CHECK_MESSAGE(kernc::cache::decode_entry(kernc::platform::read_file(files[0].path), key, &problem).has_value(),
                problem);
  CHECK(!has_temp_files(directory));
  // Every child flushed its counters under the stats lock: none were lost.
  kernc::CacheStats total = store.read_stats();
  CHECK(total.compiles == static_cast<std::uint64_t>(compiled));
  CHECK(total.compiles + total.disk_hits == kProcesses);
  CHECK(total.corrupt_entries == 0);
}
