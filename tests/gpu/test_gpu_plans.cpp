// Kept plans (include/kernc/call.hpp): planned once, launched on new buffers of the same
// description, against host references on fresh random data.

#include "gpu_helpers.hpp"
#include "kernc/call.hpp"

namespace kernc::gpu_test {

TEST_CASE("an elementwise plan kept and launched on three sets of new buffers matches the host each time") {
  KERNC_GPU_RANDOM(random, "kept elementwise plan");
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "gpu_plan_saxpy");
  const std::int64_t n = 100'003;
  CallOptions options;
  options.multiprocessors = device().multiprocessors();
  const ArrayRef description = ArrayRef::contiguous(std::uint64_t{0}, DType::float32, {n});
  const Call plan = saxpy.plan({1.5f, description, description}, {}, options);
  for (int round = 0; round < 3; ++round) {
    auto x = random.uniform<float>(n), y = random.uniform<float>(n);
    auto dx = upload(DType::float32, {n}, x), dy = upload(DType::float32, {n}, y);
    auto out = plan.launch({1.5f, dx, dy});
    REQUIRE(out.size() == 1);
    auto z = download<float>(out[0]);
    for (std::int64_t k = 0; k < n; ++k) REQUIRE(z[k] == doctest::Approx(1.5f * x[k] + y[k]).epsilon(1e-6));
  }
  // Outputs described in the plan are passed at launch and written in place.
  const Call into = saxpy.plan({1.5f, description, description}, {description}, options);
  auto x = random.uniform<float>(n), y = random.uniform<float>(n);
  auto dx = upload(DType::float32, {n}, x), dy = upload(DType::float32, {n}, y);
  auto dz = DeviceArray::empty(device(), DType::float32, {n});
  into.launch({1.5f, dx, dy}, {dz.ref()});
  auto z = download<float>(dz);
  for (std::int64_t k = 0; k < n; ++k) REQUIRE(z[k] == doctest::Approx(1.5f * x[k] + y[k]).epsilon(1e-6));
  // launch_into: the same plan, new inputs and scalar, written into the caller's output.
  auto x2 = random.uniform<float>(n), y2 = random.uniform<float>(n);
  auto dx2 = upload(DType::float32, {n}, x2), dy2 = upload(DType::float32, {n}, y2);
  into.launch_into({-0.75f, dx2, dy2}, {dz.ref()});
  z = download<float>(dz);
  for (std::int64_t k = 0; k < n; ++k) REQUIRE(z[k] == doctest::Approx(-0.75f * x2[k] + y2[k]).epsilon(1e-6));
}

TEST_CASE("a reduction plan kept and launched twice reduces each new input over axis 1") {
  KERNC_GPU_RANDOM(random, "kept reduction plan");
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "gpu_plan_sum");
  const std::int64_t rows = 37, cols = 50'000;
  CallOptions options;
  options.axes = std::vector<int>{1};  // the GPU's multiprocessors: asked by plan()
  const Call plan = sum.plan({ArrayRef::contiguous(std::uint64_t{0}, DType::float64, {rows, cols})}, {}, options);
  // Few outputs, long rows: the two-pass path (the host splits by its own rule, NOTE [ host
  // reduction ] in src/dsl/reduction_plan.cpp).
  if (device().backend() != Backend::cpu) CHECK(plan.splits() > 1);
  for (int round = 0; round < 2; ++round) {
    auto m = random.uniform<double>(rows * cols);
    auto out = plan.launch({upload(DType::float64, {rows, cols}, m)});
    auto got = download<double>(out[0]);
    REQUIRE(got.size() == static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) {
      double want = 0;
      for (std::int64_t c = 0; c < cols; ++c) want += m[r * cols + c];
      REQUIRE(got[r] == doctest::Approx(want).epsilon(1e-9));
    }
  }
  // A plan that allocates its outputs also writes into the caller's, laid out as it would
  // allocate them (launch_into: the kept plan's loop, no allocation on the host).
  auto m = random.uniform<double>(rows * cols);
  auto dm = upload(DType::float64, {rows, cols}, m);
  auto out = DeviceArray::empty(device(), DType::float64, {rows});
  plan.launch_into({dm}, {out.ref()});
  auto got = download<double>(out);
  for (std::int64_t r = 0; r < rows; ++r) {
    double want = 0;
    for (std::int64_t c = 0; c < cols; ++c) want += m[r * cols + c];
    REQUIRE(got[r] == doctest::Approx(want).epsilon(1e-9));
  }
}

TEST_CASE("a raw kernel's kept call launches on new buffers and new scalars, as the host computes") {
  KERNC_GPU_RANDOM(random, "kept raw call");
  const RawKernel scale(R"(extern "C" __global__ void gpu_plan_scale(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
})",
                        "gpu_plan_scale");
  const int n = 70'001;
  LaunchConfig config;
  config.block[0] = 256;
  config.grid[0] = (n + 255) / 256;
  const ArrayRef description = ArrayRef::contiguous(std::uint64_t{0}, DType::float32, {n});
  const Call call = scale.plan(config, {description, description, 1.0f, n});
  CHECK(call.kind() == KernelKind::raw);
  for (float a : {2.5f, -0.125f}) {
    auto x = random.uniform<float>(n);
    auto dx = upload(DType::float32, {n}, x);
    auto dy = DeviceArray::empty(device(), DType::float32, {n});
    call.launch({dx, dy, a, n});
    auto y = download<float>(dy);
    for (int k = 0; k < n; ++k) REQUIRE(y[k] == a * x[k]);
  }
}

TEST_CASE("a kept reduction's launch reads an input that overlaps its output from a copy") {
  KERNC_GPU_RANDOM(random, "reduction aliasing");
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "gpu_plan_alias_sum");
  const std::int64_t rows = 64, cols = 64;
  auto m = random.uniform<float>(rows * cols);
  auto dm = upload(DType::float32, {rows, cols}, m);
  // The output is the first row of the input itself: without the copy, sums of later rows
  // would read row 0 after it was overwritten.
  const ArrayRef first_row = ArrayRef::contiguous(dm.ref().data, DType::float32, {cols});
  sum({dm}, std::vector<int>{0}, false, {first_row});
  auto got = download<float>(dm);
  for (std::int64_t c = 0; c < cols; ++c) {
    float want = 0;
    for (std::int64_t r = 0; r < rows; ++r) want += m[r * cols + c];
    REQUIRE(got[c] == doctest::Approx(want).epsilon(1e-5));
  }
}

TEST_CASE("a plan made for another multiprocessor count is refused at launch, naming both counts") {
  const ElementwiseKernel copy("T x", "T y", "y = x", "gpu_plan_copy");
  CallOptions options;
  options.multiprocessors = device().multiprocessors() + 1;
  auto dx = upload(DType::float32, {4}, std::vector<float>{1, 2, 3, 4});
  const Call plan = copy.plan({ArrayRef::contiguous(std::uint64_t{0}, DType::float32, {4})}, {}, options);
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "multiprocessors", plan.launch({dx}));
}

}  // namespace kernc::gpu_test
