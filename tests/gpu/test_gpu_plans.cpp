// Kept plans (include/kernc/plan.hpp): planned once, launched on new buffers of the same
// description, against host references on fresh random data.

#include "gpu_helpers.hpp"
#include "kernc/plan.hpp"

namespace kernc::gpu_test {

TEST_CASE("an elementwise plan kept and launched on three sets of new buffers matches the host each time") {
  KERNC_GPU_RANDOM(random, "kept elementwise plan");
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "gpu_plan_saxpy");
  const std::int64_t n = 100'003;
  PlanOptions options;
  options.multiprocessors = device().multiprocessors();
  const ArrayRef description = ArrayRef::contiguous(std::uint64_t{0}, DType::float32, {n});
  const ElementwisePlan plan = saxpy.plan({1.5f, description, description}, {}, options);
  for (int round = 0; round < 3; ++round) {
    auto x = random.uniform<float>(n), y = random.uniform<float>(n);
    auto dx = upload(DType::float32, {n}, x), dy = upload(DType::float32, {n}, y);
    auto out = saxpy.launch(plan, {1.5f, dx, dy});
    REQUIRE(out.size() == 1);
    auto z = download<float>(out[0]);
    for (std::int64_t k = 0; k < n; ++k) REQUIRE(z[k] == doctest::Approx(1.5f * x[k] + y[k]).epsilon(1e-6));
  }
  // Outputs described in the plan are passed at launch and written in place.
  const ElementwisePlan into = saxpy.plan({1.5f, description, description}, {description}, options);
  auto x = random.uniform<float>(n), y = random.uniform<float>(n);
  auto dx = upload(DType::float32, {n}, x), dy = upload(DType::float32, {n}, y);
  auto dz = DeviceArray::empty(device(), DType::float32, {n});
  saxpy.launch(into, {1.5f, dx, dy}, {dz.ref()});
  auto z = download<float>(dz);
  for (std::int64_t k = 0; k < n; ++k) REQUIRE(z[k] == doctest::Approx(1.5f * x[k] + y[k]).epsilon(1e-6));
  // launch_into: the same plan, new inputs and scalar, written into the caller's output.
  auto x2 = random.uniform<float>(n), y2 = random.uniform<float>(n);
  auto dx2 = upload(DType::float32, {n}, x2), dy2 = upload(DType::float32, {n}, y2);
  saxpy.launch_into(into, {-0.75f, dx2, dy2}, {dz.ref()});
  z = download<float>(dz);
  for (std::int64_t k = 0; k < n; ++k) REQUIRE(z[k] == doctest::Approx(-0.75f * x2[k] + y2[k]).epsilon(1e-6));
}

TEST_CASE("a reduction plan kept and launched twice reduces each new input over axis 1") {
  KERNC_GPU_RANDOM(random, "kept reduction plan");
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "gpu_plan_sum");
  const std::int64_t rows = 37, cols = 50'000;
  PlanOptions options;
  options.multiprocessors = device().multiprocessors();
  const ReductionPlan plan =
      sum.plan({ArrayRef::contiguous(std::uint64_t{0}, DType::float64, {rows, cols})}, std::vector<int>{1}, false, {}, options);
  CHECK(plan.splits() > 1);  // few outputs, long rows: the two-pass path
  for (int round = 0; round < 2; ++round) {
    auto m = random.uniform<double>(rows * cols);
    auto out = sum.launch(plan, {upload(DType::float64, {rows, cols}, m)});
    auto got = download<double>(out[0]);
    REQUIRE(got.size() == static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) {
      double want = 0;
      for (std::int64_t c = 0; c < cols; ++c) want += m[r * cols + c];
      REQUIRE(got[r] == doctest::Approx(want).epsilon(1e-9));
    }
  }
}

TEST_CASE("a plan made for another multiprocessor count is refused at launch, naming both counts") {
  const ElementwiseKernel copy("T x", "T y", "y = x", "gpu_plan_copy");
  PlanOptions options;
  options.multiprocessors = device().multiprocessors() + 1;
  auto dx = upload(DType::float32, {4}, std::vector<float>{1, 2, 3, 4});
  const ElementwisePlan plan = copy.plan({ArrayRef::contiguous(std::uint64_t{0}, DType::float32, {4})}, {}, options);
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "multiprocessors", copy.launch(plan, {dx}));
}

}  // namespace kernc::gpu_test
