// An Engine's compiles in worker processes (Config::compile_workers; NOTE [ compile workers
// of an engine ], src/kernels/compile_worker_program.cpp): threads that each make the first
// compile of a program of their own get the bytes an in-process engine compiles, the
// compiles happen in children of this process running the kernc CLI, and a missing worker
// program or a bad setting is a clear error. Compiles go through the engine's compiler and
// cache as Engine::load does after it has the device's target (there is no GPU here).

#include <doctest/doctest.h>

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kernc/engine.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "kernc/version.hpp"
#include "kernels/compile_worker_program.hpp"
#include "test_compilers.hpp"
#include "child_processes.hpp"
#include "temp_dir.hpp"

using kernc::Config;
using kernc::Engine;
using kernc::Error;
using kernc::ErrorCode;
using kernc::test::contains;

namespace {

constexpr int kWorkerThreads = 4;

// An engine on its own cache directory, from this process's environment with `settings`
// on top (an empty value unsets a variable).
Config config_with(const std::string& cache_dir, std::map<std::string, std::string> settings) {
  settings["KERNC_CACHE_DIR"] = cache_dir;
  for (const char* unset : {"KERNC_CACHE_PATH", "KERNC_COMPILE", "KERNC_REMOTE_CACHE", "KERNC_CACHE_DISABLE"}) {
    settings.emplace(unset, "");
  }
  return Config::from_environment([&settings](const char* name) -> const char* {
    if (auto found = settings.find(name); found != settings.end()) {
      return found->second.empty() ? nullptr : found->second.c_str();
    }
    return std::getenv(name);
  });
}

// This process's compile worker children (child_processes.hpp).
std::vector<pid_t> compile_worker_children() { return kernc::test::children_with_argument(kernc::kCompileWorkerArgument); }

std::string real_path(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
}

// Program t of a run: an elementwise kernel of its own, so that each thread's compile is
// the first of its key.
kernc::Program distinct_program(int t) {
  const kernc::ElementwiseKernel kernel("T x", "T y", "y = x * " + std::to_string(t + 3) + " + 1",
                                        "workers_affine" + std::to_string(t));
  kernc::CallTypes types;
  types.inputs.push_back(kernc::ArgType::array(kernc::DType::float32));
  return kernc::program(kernel, types, kernc::Layout::parse("contiguous-i32"));
}

struct Compiled {
  std::string key;
  std::string binary;
  kernc::CacheOutcome outcome;
};

// kWorkerThreads threads, started together, each compiling its own program through `engine`.
std::vector<Compiled> first_compiles(Engine& engine) {
  std::vector<Compiled> results(kWorkerThreads);
  std::vector<std::string> errors;
  std::mutex mutex;
  std::atomic<int> waiting{kWorkerThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWorkerThreads; ++t) {
    threads.emplace_back([&, t] {
      const kernc::Program program = distinct_program(t);
      --waiting;
      while (waiting.load() > 0) std::this_thread::yield();
      try {
        const kernc::Compiler& compiler = engine.compiler(kernc::Backend::cuda);
        const kernc::CacheResult result = engine.cache().get_or_compile(program, kernc::Target::parse("sm_90"), compiler);
        results[static_cast<std::size_t>(t)] = {result.key, result.program->binary, result.outcome};
      } catch (const std::exception& error) {
        std::lock_guard<std::mutex> lock(mutex);
        errors.push_back("thread " + std::to_string(t) + ": " + error.what());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) FAIL_CHECK(error);
  REQUIRE(errors.empty());
  return results;
}

}  // namespace

TEST_CASE("engine workers::threads' first compiles in worker processes build the bytes of in-process compiles") {
#ifndef KERNC_CLI_BINARY
  MESSAGE("skipped: this build has no kernc CLI to run as the compile worker");
#else
  kernc::test::TempDir dir;
  std::vector<Compiled> in_process;
  {
    Engine engine(config_with(dir / "in-process", {}));
    CHECK(engine.config().compile_workers.value == 0);
    CHECK(engine.config().compile_workers.source == "default");
    in_process = first_compiles(engine);
    CHECK(compile_worker_children().empty());  // in-process by default
    CHECK(engine.cache().stats().compiles == kWorkerThreads);
  }
  Engine engine(config_with(dir / "workers", {{"KERNC_COMPILE_WORKERS", "2"}, {"KERNC_COMPILE_WORKER", KERNC_CLI_BINARY}}));
  CHECK(engine.config().compile_workers.value == 2);
  const std::vector<Compiled> in_workers = first_compiles(engine);
  for (int t = 0; t < kWorkerThreads; ++t) {
    INFO("program " << t);
    const auto& here = in_process[static_cast<std::size_t>(t)];
    const auto& there = in_workers[static_cast<std::size_t>(t)];
    CHECK(there.outcome == kernc::CacheOutcome::compiled);
    CHECK(there.key == here.key);
    CHECK(!there.binary.empty());
    CHECK(there.binary == here.binary);  // byte for byte
  }
  CHECK(engine.cache().stats().compiles == kWorkerThreads);
  // The workers ran the compiles and stay for the next ones: children of this process that
  // run `kernc __compile-worker`, at most as many as asked for. (Four threads on two
  // workers: both were started unless one worker finished before the second was needed.)
  const std::vector<pid_t> workers = compile_worker_children();
  CHECK(workers.size() >= 1);
  CHECK(workers.size() <= 2);
  for (pid_t pid : workers) {
    CHECK(real_path("/proc/" + std::to_string(pid) + "/exe") == real_path(KERNC_CLI_BINARY));
  }
  // The host backend's compiler is the in-process one: it runs the C++ compiler as a process already.
  CHECK(engine.compiler(kernc::Backend::cpu).backend() == kernc::Backend::cpu);
#endif
}

TEST_CASE("engine workers::the engine's workers end with it") {
#ifndef KERNC_CLI_BINARY
  MESSAGE("skipped: this build has no kernc CLI to run as the compile worker");
#else
  kernc::test::TempDir dir;
  {
    Engine engine(config_with(dir / "cache", {{"KERNC_COMPILE_WORKERS", "1"}, {"KERNC_COMPILE_WORKER", KERNC_CLI_BINARY}}));
    engine.cache().get_or_compile(distinct_program(0), kernc::Target::parse("sm_80"), engine.compiler(kernc::Backend::cuda));
    CHECK(compile_worker_children().size() == 1);
  }
  CHECK(compile_worker_children().empty());  // closed and reaped, not left behind
#endif
}

TEST_CASE("engine workers::without KERNC_COMPILE_WORKER the kernc CLI beside the library is the worker") {
#ifndef KERNC_CLI_BINARY
  MESSAGE("skipped: this build has no kernc CLI to run as the compile worker");
#else
  // This test binary links kernc statically (build/tests/): the build tree's CLI is
  // tools/kernc/kernc beside it, as it is beside build/src/libkernc.so.
  kernc::test::TempDir dir;
  const Config config = config_with(dir / "cache", {{"KERNC_COMPILE_WORKERS", "auto"}, {"KERNC_COMPILE_WORKER", ""}});
  CHECK(config.compile_workers.value >= 1);
  CHECK(config.compile_worker.source == "default");
  const std::vector<std::string> command = kernc::compile_worker_command(config);
  REQUIRE(command.size() == 2);
  CHECK(real_path(command[0]) == real_path(KERNC_CLI_BINARY));
  CHECK(command[1] == kernc::kCompileWorkerArgument);
  // An installed library: bin beside lib.
  const auto installed = kernc::detail::worker_program_candidates("/opt/kernc/lib/libkernc.so.0");
  REQUIRE(!installed.empty());
  CHECK(std::filesystem::path(installed.front()).lexically_normal() == "/opt/kernc/bin/kernc");

  Engine engine(config);
  const kernc::CacheResult result =
      engine.cache().get_or_compile(distinct_program(1), kernc::Target::parse("sm_80"), engine.compiler(kernc::Backend::cuda));
  CHECK(result.outcome == kernc::CacheOutcome::compiled);
  CHECK(compile_worker_children().size() == 1);
#endif
}

TEST_CASE("engine workers::a missing worker program is an error naming what was looked for and how to set it") {
  kernc::test::TempDir dir;
  SUBCASE("none found beside the library") {
    const Config config = config_with(dir / "cache", {{"KERNC_COMPILE_WORKERS", "4"}, {"KERNC_COMPILE_WORKER", ""}});
    try {
      kernc::detail::compile_worker_command(config, {"/nonexistent/lib/../bin/kernc", "/nonexistent/tools/kernc/kernc"});
      FAIL("no worker program, yet a command");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::library_not_found);
      CHECK(contains(error.what(), "KERNC_COMPILE_WORKERS = 4 asks for compile worker processes"));
      CHECK(contains(error.what(), "/nonexistent/lib/../bin/kernc, /nonexistent/tools/kernc/kernc"));
      CHECK(contains(error.what(), "set KERNC_COMPILE_WORKER"));
      CHECK(contains(error.what(), "KERNC_COMPILE_WORKERS = 0 to compile in this process"));
    }
  }
  SUBCASE("KERNC_COMPILE_WORKER names no executable: the engine's first compile says so") {
    Engine engine(config_with(dir / "cache", {{"KERNC_COMPILE_WORKERS", "2"}, {"KERNC_COMPILE_WORKER", "/nonexistent/kernc"}}));
    try {
      engine.compiler(kernc::Backend::cuda);
      FAIL("a compiler with a worker program that does not exist");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::library_not_found);
      CHECK(contains(error.what(), "KERNC_COMPILE_WORKER names /nonexistent/kernc as the compile worker program, which "
                                   "is not an executable file"));
    }
    // Nothing else of the engine depends on it: the host backend compiles as before.
    CHECK(engine.compiler(kernc::Backend::cpu).backend() == kernc::Backend::cpu);
    CHECK(compile_worker_children().empty());
  }
  SUBCASE("a program that is not a kernc compile worker fails at its start, named") {
    Engine engine(config_with(dir / "cache", {{"KERNC_COMPILE_WORKERS", "1"}, {"KERNC_COMPILE_WORKER", "/bin/true"}}));
    const kernc::Compiler& compiler = engine.compiler(kernc::Backend::cuda);
    try {
      engine.cache().get_or_compile(distinct_program(2), kernc::Target::parse("sm_80"), compiler);
      FAIL("/bin/true compiled a program");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::compiler_api);
      CHECK(contains(error.what(), "the compile worker process /bin/true"));
      CHECK(contains(error.what(), "did not start"));
    }
  }
}

TEST_CASE("engine workers::a worker of another kernc version is refused at its hello, naming both versions") {
  // A stand-in for an older kernc: it reads the hello frame (8-byte little-endian length,
  // CBOR) on fd 3 and answers, in CBOR, that it is kernc 0.0.1 with this very compiler.
  kernc::test::TempDir dir;
  const std::string tag = kernc::test::nvrtc().identity().tag();
  const std::string script = dir / "old-kernc";
  {
    std::ofstream out(script);
    out << "#!/usr/bin/env python3\n"
           "import os, struct\n"
           "def read(n):\n"
           "    data = b''\n"
           "    while len(data) < n:\n"
           "        chunk = os.read(3, n - len(data))\n"
           "        if not chunk: raise SystemExit(1)\n"
           "        data += chunk\n"
           "    return data\n"
           "read(struct.unpack('<Q', read(8))[0])\n"
           "def text(s):\n"
           "    b = s.encode()\n"
           "    return bytes([0x60 + len(b)]) + b if len(b) < 24 else bytes([0x78, len(b)]) + b\n"
           "reply = bytes([0xa5]) + text('ok') + bytes([0xf5]) + text('kernc') + text('0.0.1') + text('tag') + text('"
        << tag << "') + text('compiler') + text('old') + text('library') + text('old')\n"
           "os.write(3, struct.pack('<Q', len(reply)) + reply)\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  Engine engine(config_with(dir / "cache", {{"KERNC_COMPILE_WORKERS", "1"}, {"KERNC_COMPILE_WORKER", script}}));
  try {
    engine.cache().get_or_compile(distinct_program(3), kernc::Target::parse("sm_80"), engine.compiler(kernc::Backend::cuda));
    FAIL("a worker of kernc 0.0.1 compiled a program");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::compiler_api);
    CHECK(contains(error.what(), "the compile worker process " + script));
    CHECK(contains(error.what(), std::string("it is kernc 0.0.1, this process kernc ") + kernc::version()));
  }
}

TEST_CASE("engine workers::a Config made in code with a negative worker count is refused by the engine") {
  kernc::test::TempDir dir;
  Config config = config_with(dir / "cache", {});
  config.compile_workers.value = -3;
  try {
    Engine engine(config);
    FAIL("an engine with -3 compile workers");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::invalid_argument);
    CHECK(contains(error.what(), "Config::compile_workers must be a number of compile worker processes from 0 to 1024, not -3"));
  }
}
