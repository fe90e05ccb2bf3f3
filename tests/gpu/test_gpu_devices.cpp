// Arrays know their device on one GPU (NOTE [ arrays know their device ] in
// src/kernels/device_check.cpp): the driver places kernc's allocations on the GPU, and host
// memory the driver was never told of is refused before any launch, so the GPU stays
// usable. The multi-GPU half is tests/gpu/test_gpu_multi.cpp.

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {

TEST_CASE("device check: a malloc'd host address passed as a GPU array is refused before launch") {
  KERNC_GPU_ONLY("the host backend's arrays are host memory: nothing to refuse");
  KERNC_GPU_RANDOM(random, "device check host memory");
  const Device gpu = device();
  const std::int64_t n = 1001;
  const auto x = random.uniform<float>(n), y = random.uniform<float>(n);
  auto dx = upload(DType::float32, {n}, x);
  auto dy = upload(DType::float32, {n}, y);
  CHECK(dx.ref().device == gpu.id());
  CHECK(gpu.locate(dx.ref().data) == gpu.id());
  CHECK(gpu.locate(dx.ref().data + 4 * 500) == gpu.id());

  std::unique_ptr<float, decltype(&std::free)> host(static_cast<float*>(std::malloc(n * sizeof(float))), &std::free);
  REQUIRE(host);
  const ArrayRef host_view = ArrayRef::contiguous(host.get(), DType::float32, {n});
  if (gpu.pageable_memory_access()) {
    MESSAGE("skipped the refusal: this GPU addresses pageable host memory (HMM or ATS), so a malloc'd array is "
            "legal here");
    CHECK(gpu.locate(host_view.data) == (DeviceId{Backend::cpu, 0}));
    return;
  }
  CHECK(gpu.locate(host_view.data) == (DeviceId{Backend::cpu, 0}));
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "device_check_saxpy");
  const std::string expected = "is host memory (cpu:0) but the call runs on cuda:0, which cannot address pageable host memory";
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "argument \"x\" " + expected, saxpy({2.0f, host_view, dy}));
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "output \"z\" " + expected, saxpy({2.0f, dx, dy}, {host_view}));
  auto z = DeviceArray::empty(gpu, DType::float32, {n});
  CallOptions options;
  options.multiprocessors = gpu.multiprocessors();
  const Call kept = saxpy.plan({2.0f, dx, dy}, {z}, options);
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, expected, kept.launch_into({2.0f, host_view, dy}, {z}));
  // A DeviceArray of the host device on a GPU call says so too.
  std::vector<float> values(static_cast<std::size_t>(n), 1.0f);
  auto on_host = DeviceArray::from_host(Engine::global().device(0, Backend::cpu), DType::float32, {n}, values.data());
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "argument \"y\" " + expected, saxpy({2.0f, dx, on_host}));

  // The GPU is unharmed: the kept plan gives the right answer.
  kept.launch_into({2.0f, dx, dy}, {z});
  std::vector<double> want(x.size());
  for (std::size_t k = 0; k < x.size(); ++k) want[k] = static_cast<double>(std::fma(2.0f, x[k], y[k]));
  expect_close(as_doubles(download<float>(z)), want, 0.0, "saxpy after the refusals");
  // A raw address of the GPU's own memory is looked up and taken.
  const ArrayRef raw_x = ArrayRef::contiguous(dx.ref().data, DType::float32, {n});
  kept.launch_into({2.0f, raw_x, dy}, {z});
  expect_close(as_doubles(download<float>(z)), want, 0.0, "saxpy through a raw address");
}

}  // namespace kernc::gpu_test
