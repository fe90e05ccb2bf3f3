// The GPU suite's main: without a usable CUDA device it says so and exits 77, which
// ctest (SKIP_RETURN_CODE 77 in tests/CMakeLists.txt) reports as skipped, never failed.
// With a device it picks the run's random seed (see NOTE [ random data in GPU tests ] in
// gpu_helpers.hpp), prints it and the device, and runs doctest.

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "gpu_helpers.hpp"
#include "kernc/config.hpp"

namespace {

constexpr int kSkipped = 77;

// doctest's own queries (help, version, listings) need no GPU.
bool is_query(int argc, char** argv) {
  static const char* kQueries[] = {"-?", "-h", "--help", "-v", "--version", "-c", "--count", "-ltc",
                                   "--list-test-cases", "-lts", "--list-test-suites", "-lr", "--list-reporters"};
  for (int k = 1; k < argc; ++k) {
    std::string arg = argv[k];
    if (arg.rfind("--dt-", 0) == 0) arg = "--" + arg.substr(5);  // doctest's prefixed spelling
    arg = arg.substr(0, arg.find('='));
    for (const char* query : kQueries) {
      if (arg == query) return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  if (is_query(argc, argv)) return context.run();

  std::string driver_library;
  try {
    driver_library = kernc::Config::from_environment().cuda_driver_library.value;
  } catch (const kernc::Error& error) {
    std::fprintf(stderr, "kernc GPU tests: bad environment: %s\n", error.what());
    return 1;
  }
  if (!kernc::Device::available(driver_library)) {
    std::printf("kernc GPU tests: no usable CUDA driver and GPU on this machine; the GPU suite is skipped\n");
    return kSkipped;
  }

  std::uint64_t seed = 0;
  if (const char* fixed = std::getenv("KERNC_GPU_TEST_SEED"); fixed && *fixed) {
    char* end = nullptr;
    seed = std::strtoull(fixed, &end, 0);
    if (*end != '\0') {
      std::fprintf(stderr, "kernc GPU tests: KERNC_GPU_TEST_SEED must be an unsigned integer, not \"%s\"\n", fixed);
      return 1;
    }
  } else {
    std::random_device entropy;
    seed = (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
  }
  kernc::gpu_test::run_seed() = seed;

  kernc::Device device = kernc::gpu_test::device();
  std::printf("kernc GPU tests on %s (sm_%d, %d SMs); random seed %llu (repeat with KERNC_GPU_TEST_SEED=%llu)\n",
              device.name().c_str(), device.compute_capability(), device.multiprocessors(),
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  return context.run();
}
