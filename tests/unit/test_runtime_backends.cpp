// The runtime's driver tables, without a GPU: every symbol of a backend's table must
// resolve in its library, and a machine without a usable GPU must be reported as
// ErrorCode::no_device (what `kernc run` turns into exit code 7), never a crash.

#include <doctest/doctest.h>

#include "kernc/config.hpp"
#include "kernc/error.hpp"
#include "kernc/runtime.hpp"

namespace {
kernc::ErrorCode device_error_code(kernc::Backend backend, const std::string& library = "") {
  try {
    kernc::Device::get(0, library, backend);
  } catch (const kernc::Error& error) {
    return error.code();
  }
  return kernc::ErrorCode::io;  // stands for "no error": a GPU is present
}
}  // namespace

TEST_CASE("runtime::Device::get reports a missing CUDA driver as no_device") {
  CHECK(device_error_code(kernc::Backend::cuda, "/nonexistent/libcuda.so.1") == kernc::ErrorCode::no_device);
  CHECK_FALSE(kernc::Device::available("/nonexistent/libcuda.so.1"));
}

#ifdef KERNC_WITH_HIP
TEST_CASE("runtime::Device::get loads the whole HIP runtime table and reports no AMD GPU as no_device") {
  // On CI's machine libamdhip64 loads (so every symbol of the table resolved) and finds no
  // AMD GPU; a missing required symbol would be symbol_not_found, not no_device.
  auto code = device_error_code(kernc::Backend::hip);
  if (code == kernc::ErrorCode::io) {
    MESSAGE("an AMD GPU is present: the HIP runtime opened it");
  } else {
    CHECK(code == kernc::ErrorCode::no_device);
  }
  CHECK(device_error_code(kernc::Backend::hip, "/nonexistent/libamdhip64.so") == kernc::ErrorCode::no_device);
}
#else
TEST_CASE("runtime::Device::get without the HIP backend says so") {
  CHECK(device_error_code(kernc::Backend::hip) == kernc::ErrorCode::backend_disabled);
}
#endif

TEST_CASE("config::KERNC_RUNTIME picks the launching runtime") {
  auto lookup = [](const char* name) -> const char* { return std::string(name) == "KERNC_RUNTIME" ? "hip" : nullptr; };
  auto config = kernc::Config::from_environment(lookup);
  CHECK(config.runtime.value == "hip");
  CHECK(config.runtime.source == "KERNC_RUNTIME");
  auto bad = [](const char* name) -> const char* { return std::string(name) == "KERNC_RUNTIME" ? "opencl" : nullptr; };
  CHECK_THROWS_AS(kernc::Config::from_environment(bad), kernc::Error);
}
