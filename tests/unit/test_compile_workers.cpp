// Compiles in worker processes (NOTE [ compile worker processes ], src/compiler/compile_workers.cpp)
// and concurrent first compiles in one process. The worker is this test binary run again
// with only "helper::serve compile requests" switched on.

#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "kernc/cache.hpp"
#include "kernc/compiler.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "compiler/pch_compiler.hpp"
#include "platform/files.hpp"
#include "child_processes.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::CompiledProgram;
using kernc::Error;
using kernc::ErrorCode;
using kernc::Program;
using kernc::Target;
using kernc::test::compiler_paths;
using kernc::test::contains;
using kernc::test::nvrtc;
using kernc::test::test_data;

namespace {

std::vector<std::string> worker_command() {
  return {KERNC_UNIT_TEST_BINARY, "--test-case=helper::serve compile requests", "--no-skip=true", "--no-intro=true",
          "--no-version=true"};
}

Program worker_kernels_program() {
  Program program;
  program.name = "kernels.cu";
  program.source = test_data("kernels.cu");
  program.name_expressions = {"scale<float>", "scale<double>", "saxpy"};
  program.options.defines["KERNC_TEST_DEFINE"] = "2";
  program.options.headers["extra.cuh"] = "#define EXTRA 1\n";
  return program;
}

// A program of its own for each `n`: a distinct cache key, a distinct compile.
Program numbered_program(int n) {
  Program program;
  program.name = "numbered_" + std::to_string(n) + ".cu";
  program.source = "extern \"C\" __global__ void numbered_" + std::to_string(n) + "(float* x) { x[threadIdx.x] *= " +
                   std::to_string(n + 2) + ".0f; }\n";
  return program;
}

// This process's compile worker children (child_processes.hpp).
std::vector<pid_t> worker_children() { return kernc::test::children_with_argument("helper::serve compile requests"); }

// Workers that, told to end, wait until every worker of the test has been (below).
std::vector<std::string> meeting_worker_command() {
  return {KERNC_UNIT_TEST_BINARY, "--test-case=helper::serve compile requests and meet the other workers at the end", "--no-skip=true",
          "--no-intro=true", "--no-version=true"};
}

// A file's text; empty when there is none.
std::string read_text(const std::string& path) { return kernc::platform::read_file_if_exists(path).value_or(""); }

}  // namespace

TEST_CASE("helper::serve compile requests" * doctest::skip()) {
  // Started by compile_in_workers with its socket on fd 3 (see worker_command()).
  std::exit(kernc::serve_compile_requests(3));
}

TEST_CASE("helper::serve compile requests and meet the other workers at the end" * doctest::skip()) {
  // A worker whose socket the client has closed adds a byte to the meeting file, waits up
  // to 20 s for as many bytes as the count file says there are workers, and writes "met"
  // or "alone" to the result file: a client that waits for one worker to end before it
  // closes the next one's socket leaves each "alone".
  const int status = kernc::serve_compile_requests(3);
  const char* meeting_path = std::getenv("KERNC_TEST_WORKER_MEETING");
  if (!meeting_path) std::exit(4);
  const std::string meeting = meeting_path;
  const int arrived = ::open(meeting.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0600);
  if (arrived < 0 || ::write(arrived, "x", 1) != 1) std::exit(4);
  ::close(arrived);
  const long workers = std::atol(read_text(meeting + ".count").c_str());
  bool met = false;
  for (int k = 0; k < 2000 && !met; ++k) {
    struct stat info {};
    met = ::stat(meeting.c_str(), &info) == 0 && workers > 0 && info.st_size >= workers;
    if (!met) ::usleep(10000);
  }
  const int result = ::open((meeting + ".result").c_str(), O_WRONLY | O_APPEND | O_CREAT, 0600);
  const std::string line = met ? "met\n" : "alone\n";
  if (result < 0 || ::write(result, line.data(), line.size()) != static_cast<ssize_t>(line.size())) std::exit(4);
  ::close(result);
  std::exit(status);
}

TEST_CASE("compiler::compile_in_workers builds what an in-process compile builds") {
  auto workers = kernc::compile_in_workers(kernc::Backend::cuda, compiler_paths(), worker_command(), 2);
  CHECK(workers->identity().tag() == nvrtc().identity().tag());
  const Program program = worker_kernels_program();
  const Target target = Target::parse("sm_80");
  const CompiledProgram in_process = nvrtc().compile(program, target);
  const CompiledProgram in_worker = workers->compile(program, target);
  CHECK(in_worker.binary == in_process.binary);
  CHECK(in_worker.lowered_names == in_process.lowered_names);
  CHECK(in_worker.flags == in_process.flags);
  CHECK(in_worker.compiler == in_process.compiler);
  CHECK(in_worker.target == target);
  CHECK(in_worker.compile_ms > 0);
  // PTX too, and the same worker serves again.
  const Target ptx = Target::parse("compute_80");
  CHECK(workers->compile(program, ptx).binary == nvrtc().compile(program, ptx).binary);
  // A generated program's -minimal (NOTE [ minimal built-ins ]) reaches the worker.
  kernc::ElementwiseKernel kernel("T x", "T y", "y = x * 3", "worker_triple");
  kernc::CallTypes types;
  types.inputs = {kernc::ArgType::array(kernc::DType::float32)};
  const Program generated = kernc::program(kernel, types, kernc::Layout::elementwise_classes().front());
  const CompiledProgram generated_in_worker = workers->compile(generated, target);
  CHECK(generated_in_worker.flags == nvrtc().compile(generated, target).flags);
  CHECK(std::count(generated_in_worker.flags.begin(), generated_in_worker.flags.end(), "-minimal") == 1);
}

TEST_CASE("compiler::compile_in_workers: a worker reuses the precompiled header its first compile made") {
  // One worker, so both compiles run in the same process, where NVRTC's PCH lives (NOTE
  // [ precompiled headers ]); the count is the worker's, reported with each reply.
  auto workers = kernc::compile_in_workers(kernc::Backend::cuda, compiler_paths(), worker_command(), 1);
  const auto& pch = dynamic_cast<const kernc::compiler::PchCompiler&>(*workers);
  kernc::test::TempDir dir;
  const Target target = Target::parse("sm_90");
  kernc::ElementwiseKernel kernel("T x", "T y", "y = x * 3", "worker_pch");
  kernc::CallTypes types;
  types.inputs = {kernc::ArgType::array(kernc::DType::float32)};
  const Program first = kernc::program(kernel, types, kernc::Layout::elementwise_classes().front());
  types.inputs = {kernc::ArgType::array(kernc::DType::float64)};
  const Program second = kernc::program(kernel, types, kernc::Layout::elementwise_classes().front());
  const CompiledProgram made = pch.compile_with_pch(first, target, dir.path());
  CHECK(pch.precompiled_header_uses() == 0);
  const CompiledProgram used = pch.compile_with_pch(second, target, dir.path());
  CHECK(pch.precompiled_header_uses() == 1);
  CHECK(made.binary == nvrtc().compile(first, target).binary);
  CHECK(used.binary == nvrtc().compile(second, target).binary);
  CHECK(pch.precompiled_headers() == 0);  // held by the worker, not by this process
}

#ifdef KERNC_WITH_HIP
TEST_CASE("compiler::compile_in_workers runs HIPRTC, which takes turns within a process, in workers too") {
  auto workers = kernc::compile_in_workers(kernc::Backend::hip, compiler_paths(), worker_command(), 2);
  CHECK(workers->identity().tag() == kernc::test::hiprtc().identity().tag());
  const Target target = Target::parse("gfx90a");
  const CompiledProgram in_worker = workers->compile(numbered_program(7), target);
  CHECK(kernc::test::starts_with(in_worker.binary, kernc::test::kElfMagic));
  CHECK(in_worker.binary == kernc::test::hiprtc().compile(numbered_program(7), target).binary);
}
#endif

TEST_CASE("compiler::compile_in_workers hands back a compile error as this process would") {
  auto workers = kernc::compile_in_workers(kernc::Backend::cuda, compiler_paths(), worker_command(), 1);
  Program program;
  program.name = "kernel.cu";
  program.source = test_data("compile_error.cu");
  const Target target = Target::parse("sm_80");
  try {
    workers->compile(program, target);
    FAIL("the broken source compiled");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::compile_failed);
    CHECK(contains(error.what(), "kernc_undeclared_identifier"));
    const kernc::CompileFailure* failure = error.compile_failure();
    REQUIRE(failure != nullptr);
    CHECK(failure->source == program.source);
    // The options this process's own compile reports (flags() and the driver-cache flag).
    std::vector<std::string> in_process;
    try {
      nvrtc().compile(program, target);
    } catch (const Error& own) {
      REQUIRE(own.compile_failure() != nullptr);
      in_process = own.compile_failure()->options;
    }
    CHECK(failure->options == in_process);
    CHECK(contains(failure->log, "kernc_undeclared_identifier"));
  }
  // The worker is still usable after the error.
  CHECK(!workers->compile(numbered_program(1), target).binary.empty());
}

TEST_CASE("compiler::compile_in_workers names a worker that does not start or that dies") {
  const Target target = Target::parse("sm_80");
  SUBCASE("a program that is no compile worker") {
    auto workers = kernc::compile_in_workers(kernc::Backend::cuda, compiler_paths(), {"/bin/true"}, 1);
    try {
      workers->compile(numbered_program(2), target);
      FAIL("compiled without a worker");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::compiler_api);
      CHECK(contains(error.what(), "the compile worker process /bin/true"));
      CHECK(contains(error.what(), "did not start"));
      CHECK(contains(error.what(), "exited with status 0"));
    }
  }
  SUBCASE("a program that cannot be run") {
    auto workers = kernc::compile_in_workers(kernc::Backend::cuda, compiler_paths(), {"/nonexistent/kernc"}, 1);
    CHECK_THROWS_WITH_AS(workers->compile(numbered_program(3), target),
                         doctest::Contains("cannot start the compile worker /nonexistent/kernc"), Error);
  }
  SUBCASE("a worker killed between compiles fails the next compile, and a new worker takes over") {
    auto workers = kernc::compile_in_workers(kernc::Backend::cuda, compiler_paths(), worker_command(), 1);
    CHECK(!workers->compile(numbered_program(4), target).binary.empty());
    // The only worker is a child of this process running the helper test case.
    const std::vector<pid_t> children = worker_children();
    REQUIRE(children.size() == 1);
    const pid_t worker = children.front();
    REQUIRE(::kill(worker, SIGKILL) == 0);
    try {
      workers->compile(numbered_program(5), target);
      FAIL("compiled on a killed worker");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::compiler_api);
      CHECK(contains(error.what(), "pid " + std::to_string(worker)));
      CHECK(contains(error.what(), "was killed by signal 9"));
      CHECK(contains(error.what(), "while compiling numbered_5.cu for sm_80"));
    }
    CHECK(!workers->compile(numbered_program(6), target).binary.empty());
  }
}

TEST_CASE("compiler::compile_in_workers ends its workers side by side") {
  // Each worker ends only once every worker has been told to (the helper above): a
  // client that closed one worker's socket and waited for it before the next would leave
  // each one alone until its wait ran out. Closing every socket first, then waiting,
  // lets a -j 16 precompile end with its last compile (tools/bench/NOTES.md, jobs-v3).
  kernc::test::TempDir dir;
  const std::string meeting = dir / "meeting";
  REQUIRE(::setenv("KERNC_TEST_WORKER_MEETING", meeting.c_str(), 1) == 0);
  const Target target = Target::parse("sm_80");
  size_t started = 0;
  {
    auto workers = kernc::compile_in_workers(kernc::Backend::cuda, compiler_paths(), meeting_worker_command(), 3);
    // Three compiles at once, each needing a worker when it starts; how many workers that
    // made is what the workers are told to wait for.
    std::vector<std::size_t> sizes(3);
    std::vector<std::thread> threads;
    for (int k = 0; k < 3; ++k) {
      threads.emplace_back([&, k] { sizes[k] = workers->compile(numbered_program(30 + k), target).binary.size(); });
    }
    for (auto& thread : threads) thread.join();
    for (std::size_t size : sizes) CHECK(size > 0);
    started = kernc::test::children_with_argument("meet the other workers at the end").size();
    REQUIRE(started >= 2);  // one worker would meet only itself
    std::ofstream(meeting + ".count") << started;
  }  // the workers end here
  ::unsetenv("KERNC_TEST_WORKER_MEETING");
  std::string expected;
  for (size_t k = 0; k < started; ++k) expected += "met\n";
  CHECK(read_text(meeting + ".result") == expected);
  CHECK(kernc::test::children_with_argument("meet the other workers at the end").empty());
}

TEST_CASE("compiler::compile_in_workers gives the host backend's compiler as it is") {
  auto host = kernc::compile_in_workers(kernc::Backend::cpu, compiler_paths(), worker_command(), 4);
  CHECK(host->backend() == kernc::Backend::cpu);
}

TEST_CASE("cache::Cache::get_or_compile compiles new programs of two threads at the same time") {
  // Concurrent first calls in one process: neither waits for the other's compile (no lock
  // of kernc is held across a compile); both get their own right binary.
  kernc::test::TempDir dir;
  kernc::CacheConfig config;
  config.directory = dir / "cache";
  kernc::Cache cache(config);
  const kernc::Compiler& compiler = nvrtc();
  const Target target = Target::parse("sm_80");
  using Clock = std::chrono::steady_clock;
  Clock::time_point started[2], finished[2];
  kernc::CacheResult results[2];
  std::atomic<int> ready{0};
  auto call = [&](int k) {
    ++ready;
    while (ready.load() < 2) std::this_thread::yield();
    started[k] = Clock::now();
    results[k] = cache.get_or_compile(numbered_program(10 + k), target, compiler);
    finished[k] = Clock::now();
  };
  std::thread other(call, 1);
  call(0);
  other.join();
  for (int k = 0; k < 2; ++k) {
    CAPTURE(k);
    CHECK(results[k].outcome == kernc::CacheOutcome::compiled);
    CHECK(results[k].program->binary == compiler.compile(numbered_program(10 + k), target).binary);
  }
  CHECK(results[0].key != results[1].key);
  CHECK_MESSAGE((started[0] < finished[1] && started[1] < finished[0]),
                "the two compiles ran one after the other");
}
