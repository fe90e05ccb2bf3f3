// What a host program sees when the GPU cannot do what it asked (issue 15, item 5):
// allocations larger than the GPU, and a kernel that faults. Each is a kernc::Error that
// names what happened, never a crash or a hang.
//
// A faulting kernel loses the CUDA context for the rest of the process (NOTE [ sticky
// device faults ] in src/runtime/cuda_driver.cpp), so that test case is in the test suite
// "device fault", marked skip: the ctest entry gpu_device_fault runs it alone in its own
// process (--test-suite="device fault" --no-skip), and the main run never meets it.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {

TEST_CASE("DeviceArray::empty larger than the GPU is out_of_memory naming the shape, and the GPU stays usable" *
          doctest::test_suite("provokes driver errors")) {
  KERNC_GPU_ONLY("it measures the GPU's memory limit: the host device allocates host memory, whose limit is the "
                 "machine's (and overcommit)");
  Random random("allocation larger than the GPU");
  const std::int64_t huge = std::int64_t{1} << 40;  // 4 TiB of float32: more than any GPU has
  try {
    (void)DeviceArray::empty(device(), DType::float32, {huge});
    FAIL("a 4 TiB allocation succeeded");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::out_of_memory);
    CHECK(contains(error.what(), "shape (1099511627776,) float32 (4398046511104 bytes)"));
    CHECK(contains(error.what(), "more than GPU 0"));
  }
  // A shape whose byte count does not fit in 64 bits is refused before any arithmetic wraps.
  try {
    (void)DeviceArray::empty(device(), DType::float64, {huge, huge});
    FAIL("an allocation of 2^83 bytes succeeded");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::out_of_memory);
    CHECK(contains(error.what(), "shape (1099511627776, 1099511627776) float64 needs more than 2^64 bytes"));
  }
  // Less than the GPU has in all, more than it has free: the driver's own refusal, with
  // what is free.
  std::vector<DeviceArray> held;
  try {
    // All the GPU's memory less 1 MiB can never be free while this process holds a context.
    const std::int64_t almost_all = static_cast<std::int64_t>(device().total_memory_bytes()) - (1 << 20);
    held.push_back(DeviceArray::empty(device(), DType::uint8, {almost_all}));
    FAIL("an allocation of all but 1 MiB of the GPU succeeded");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::out_of_memory);
    CHECK(contains(error.what(), "CUDA_ERROR_OUT_OF_MEMORY"));
    CHECK(contains(error.what(), "GiB free of"));
  }
  // A broadcasting mistake: (2^20, 1) + (1, 2^20) makes a 4 TiB output.
  const ElementwiseKernel add("T x, T y", "T z", "z = x + y", "gpu_fault_add");
  const auto column = upload(DType::float32, {1 << 20, 1}, random.uniform<float>(1 << 20));
  const auto row = upload(DType::float32, {1, 1 << 20}, random.uniform<float>(1 << 20));
  try {
    (void)add({column, row});
    FAIL("a 4 TiB broadcast output was allocated");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::out_of_memory);
    CHECK(contains(error.what(), "shape (1048576, 1048576) float32"));
  }
  // The context is unharmed: the same kernel on fitting shapes gives the right answer.
  const auto x = random.uniform<float>(1001);
  const auto y = random.uniform<float>(1001);
  auto z = add({upload(DType::float32, {1001}, x), upload(DType::float32, {1001}, y)});
  std::vector<double> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = static_cast<double>(x[i] + y[i]);
  expect_close(as_doubles(download<float>(z[0])), want, 0.0, "x + y after the failed allocations");
}

TEST_CASE("a kernel writing through a null pointer is device_fault, and every later call says the same" *
          doctest::test_suite("device fault") * doctest::skip()) {
  KERNC_GPU_ONLY("it faults the GPU on purpose: on the host a stray store is a segfault of the test process itself");
  Random random("device fault");
  const auto x = random.uniform<float>(1001);
  DeviceArray dx = upload(DType::float32, {1001}, x);
  // The address comes in as an argument: a literal nullptr store is undefined behaviour
  // that the compiler may delete.
  const RawKernel fault("extern \"C\" __global__ void gpu_null_write(float* x, unsigned long long address) {\n"
                        "  if (threadIdx.x == 0) reinterpret_cast<float*>(address)[blockIdx.x] = x[0];\n"
                        "}\n",
                        "gpu_null_write");
  const std::uint64_t null_address = 0;
  LaunchConfig config;
  config.grid[0] = 4;
  config.block[0] = 32;
  std::string first;
  try {
    fault(config, {dx, null_address});
    device().synchronize();
    FAIL("a kernel writing through a null pointer completed");
  } catch (const Error& error) {
    first = error.what();
    CHECK(error.code() == ErrorCode::device_fault);
    CHECK(contains(first, "GPU 0"));
    CHECK(contains(first, "a kernel faulted with CUDA_ERROR_ILLEGAL_ADDRESS"));
    CHECK(contains(first, "restart the process"));
  }
  REQUIRE(!first.empty());
  // Every later use of the device: the same error, not a crash, a hang or an unrelated one.
  const ElementwiseKernel add("T x, T y", "T z", "z = x + y", "gpu_fault_add_after");
  auto expect_same_fault = [&](const char* what, const std::function<void()>& call) {
    INFO("after the fault: " << what);
    try {
      call();
      FAIL_CHECK("it succeeded");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::device_fault);
      CHECK(std::string(error.what()) == first);
    }
  };
  expect_same_fault("an elementwise call", [&] { (void)add({dx, dx}); });
  expect_same_fault("an allocation", [&] { (void)DeviceArray::empty(device(), DType::float32, {16}); });
  expect_same_fault("a copy to the host", [&] { (void)dx.to_host_vector<float>(); });
  expect_same_fault("the same kernel again", [&] { fault(config, {dx, null_address}); });
  expect_same_fault("a synchronisation", [&] { device().synchronize(); });
}

}  // namespace kernc::gpu_test
