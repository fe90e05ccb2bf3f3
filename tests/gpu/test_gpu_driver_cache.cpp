// The CUDA driver's compute cache as kernc counts it (NOTE [ the driver's compute cache ],
// src/compiler/nvrtc_compiler.cpp): needs a driver, which NVRTC loads to keep that cache.
#include <chrono>
#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

#include "kernc/cache.hpp"
#include "kernc/compiler.hpp"
#include "kernc/config.hpp"
#include "gpu_helpers.hpp"

using namespace kernc;

namespace {

Program unique_program() {
  Program program;
  program.name = "driver_cache.cu";
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  program.source = "extern \"C\" __global__ void driver_cache_add(float* x) { x[threadIdx.x] += 2.0f; } // " +
                   std::to_string(now) + "\n";
  return program;
}

CacheConfig memory_only() {
  CacheConfig config;
  config.disk_enabled = false;
  return config;
}

}  // namespace

TEST_CASE("a binary the driver's compute cache serves is counted as a driver cache hit, never as a compile") {
  KERNC_GPU_ONLY("the driver's compute cache needs the CUDA driver, which NVRTC loads to keep it");
  if (const char* disabled = std::getenv("CUDA_CACHE_DISABLE"); disabled && std::string(disabled) == "1") {
    MESSAGE("skipped: CUDA_CACHE_DISABLE=1 turns the driver's compute cache off for this process");
    return;
  }
  CompilerLibraryPaths paths = Config::from_environment().compiler_paths();
  paths.driver_compile_cache = true;
  const auto compiler = load_compiler(Backend::cuda, paths);
  int major = 0, minor = 0;
  std::sscanf(compiler->identity().version.c_str(), "%d.%d", &major, &minor);
  if (major < 12 || (major == 12 && minor < 9)) {
    MESSAGE("skipped: NVRTC " << compiler->identity().version << " has no driver cache (12.9+)");
    return;
  }
  const Program program = unique_program();
  const Target target = Target::parse("sm_80");
  // Two caches of kernc that hold nothing, so each compiles: the first is a real compile
  // of a program no cache has seen, the second may be served by the driver's cache.
  Cache first(memory_only()), second(memory_only());
  const auto a = first.get_or_compile(program, target, *compiler);
  const auto b = second.get_or_compile(program, target, *compiler);
  CHECK_FALSE(a.program->driver_cache_hit);
  CHECK(first.stats().compiles == 1);
  CHECK(first.stats().driver_cache_hits == 0);
  REQUIRE_MESSAGE(b.program->driver_cache_hit,
                  "NVRTC compiled the same program again: its driver cache did not serve it (a driver that keeps no "
                  "cache, or a trace text kernc does not read; log: " << b.program->log << ")");
  CHECK(second.stats().compiles == 0);
  CHECK(second.stats().driver_cache_hits == 1);
  CHECK(second.stats().compile_ms == 0);
  CHECK(b.program->binary == a.program->binary);
  // The default (KERNC_DRIVER_COMPILE_CACHE unset) compiles it again, whatever the driver keeps.
  paths.driver_compile_cache = false;
  const auto default_compiler = load_compiler(Backend::cuda, paths);
  Cache third(memory_only());
  const auto c = third.get_or_compile(program, target, *default_compiler);
  CHECK_FALSE(c.program->driver_cache_hit);
  CHECK(third.stats().compiles == 1);
  CHECK(c.program->binary == a.program->binary);
}
