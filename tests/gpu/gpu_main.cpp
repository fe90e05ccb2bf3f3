// The GPU suite's main: without a usable CUDA device it says so and exits 77, which
// ctest (SKIP_RETURN_CODE 77 in tests/CMakeLists.txt) reports as skipped, never failed.
// With a device it picks the run's random seed (see NOTE [ random data in GPU tests ] in
// gpu_helpers.hpp), prints it and the device, and runs doctest. With KERNC_RUNTIME=cpu it
// runs on the host backend instead and lists at the end the test cases it skipped there
// (NOTE [ GPU suite on the host ] in gpu_helpers.hpp).

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

// Keeps the name of the running test case for KERNC_GPU_ONLY (gpu_helpers.hpp).
struct TestCaseNames : doctest::IReporter {
  explicit TestCaseNames(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& data) override {
    kernc::gpu_test::current_test_case() = data.m_name;
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("kernc_test_case_names", 1, TestCaseNames);

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  if (is_query(argc, argv)) return context.run();

  std::string driver_library;
  bool on_host = false;
  try {
    const kernc::Config config = kernc::Config::from_environment();
    driver_library = config.cuda_driver_library.value;
    on_host = config.runtime.value == "cpu";
  } catch (const kernc::Error& error) {
    std::fprintf(stderr, "kernc GPU tests: bad environment: %s\n", error.what());
    return 1;
  }
  kernc::gpu_test::host_mode() = on_host;
  if (on_host && !kernc::Device::available("", kernc::Backend::cpu)) {
    // Not a skip: the host backend needs only a C++ compiler, which every build machine has.
    std::fprintf(stderr, "kernc GPU tests: KERNC_RUNTIME=cpu but the host backend is not usable here\n");
    return 1;
  }
  if (!on_host && !kernc::Device::available(driver_library)) {
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
  if (on_host) {
    std::printf("kernc GPU tests on the host backend: %s (%d workers); random seed %llu "
                "(repeat with KERNC_RUNTIME=cpu KERNC_GPU_TEST_SEED=%llu)\n",
                device.name().c_str(), device.multiprocessors(), static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(seed));
  } else {
    std::printf("kernc GPU tests on %s (sm_%d, %d SMs); random seed %llu (repeat with KERNC_GPU_TEST_SEED=%llu)\n",
                device.name().c_str(), device.compute_capability(), device.multiprocessors(),
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  }
  std::fflush(stdout);
  const int status = context.run();
  const auto& skipped = kernc::gpu_test::skipped_on_host();
  if (on_host && !skipped.empty()) {
    std::printf("kernc GPU tests on the host backend: %zu test case(s) or part(s) skipped there:\n",
                skipped.size());
    for (const auto& [name, why] : skipped) std::printf("  skipped: %s\n    because %s\n", name.c_str(), why.c_str());
    std::fflush(stdout);
  }
  return status;
}
