// Plans without a GPU: ElementwiseKernel::plan, ReductionKernel::plan, raw parameters.
// Arrays are descriptions (data 0); nothing here touches a driver.

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kernc/error.hpp"
#include "kernc/kernels.hpp"

using namespace kernc;

namespace {

ArrayRef described(DType dtype, std::vector<std::int64_t> shape) {
  return ArrayRef::contiguous(std::uint64_t{0}, dtype, std::move(shape));
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& error) {
    return std::string(to_string(error.code())) + ": " + error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("an elementwise plan resolves types, broadcasts, picks the layout and sizes the grid") {
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "plan_saxpy");
  const ArrayRef x = described(DType::float32, {1000, 300});
  const ArrayRef row = described(DType::float32, {300});
  PlanOptions options;
  options.multiprocessors = 100;
  ElementwisePlan plan = saxpy.plan({2.0f, x, row}, {}, options);
  CHECK(plan.resolved().placeholders.at("T") == DType::float32);
  CHECK(plan.shape() == std::vector<std::int64_t>{1000, 300});
  REQUIRE(plan.outputs().size() == 1);
  CHECK(plan.outputs()[0].dtype == DType::float32);
  CHECK(plan.outputs()[0].shape == std::vector<std::int64_t>{1000, 300});
  CHECK(plan.outputs()[0].data == 0);
  CHECK(plan.allocates_outputs());
  // The broadcast row has stride 0 on axis 0: not one flat loop, a rank-2 strided one.
  CHECK(plan.layout() == Layout{LayoutKind::strided, 2, false});
  // 300000 elements, 256 threads a block, 4 elements a thread, one pass of the grid
  // (NOTE [ one pass ]).
  CHECK(plan.launch_config().block[0] == 256);
  CHECK(plan.launch_config().grid[0] == 293);
  CHECK(plan.multiprocessors() == 100);

  // Same shapes without broadcasting: contiguous, 4 elements a thread; one pass however
  // few multiprocessors there are (a grid-stride loop over 32 blocks a multiprocessor was
  // slower).
  ElementwisePlan flat = saxpy.plan({2.0f, x, x}, {}, options);
  CHECK(flat.layout() == Layout{LayoutKind::contiguous, 0, false});
  CHECK(flat.launch_config().grid[0] == 293);  // ceil(300000 / 1024)
  options.multiprocessors = 4;
  CHECK(saxpy.plan({2.0f, x, x}, {}, options).launch_config().grid[0] == 293);
  // With 32-bit indices, the grid stops where one more step would overflow them (their
  // byte offsets must fit too, so only items of 1 or 2 bytes get there): 2^30 + 2^29 int8
  // elements, 16 a thread, leave room for (2^31 - 2 - n) / 4096 blocks; the kernel's
  // grid-stride loop takes the rest.
  const std::int64_t big = (std::int64_t{1} << 30) + (std::int64_t{1} << 29);
  const ArrayRef huge = described(DType::int8, {big});
  ElementwisePlan capped = saxpy.plan({2, huge, huge}, {}, options);
  CHECK(!capped.layout().index64);
  CHECK(capped.launch_config().grid[0] == (std::numeric_limits<std::int32_t>::max() - 1 - big) / 4096);
  // 1024 threads a block: at most 2^32 - 1 threads along x (HIP's limit), so 4194303 blocks
  // of 4 elements a thread, however many more the loop has.
  PlanOptions wide_blocks = options;
  wide_blocks.block_size = 1024;
  const ArrayRef longest = described(DType::float32, {std::int64_t{1} << 35});
  CHECK(saxpy.plan({2.0f, longest, longest}, {}, wide_blocks).launch_config().grid[0] == 4194303);
  // 64-bit indices: one pass again.
  const ArrayRef larger = described(DType::float32, {std::int64_t{3} << 30});
  ElementwisePlan wide = saxpy.plan({2.0f, larger, larger}, {}, options);
  CHECK(wide.layout().index64);
  CHECK(wide.launch_config().grid[0] == (std::int64_t{3} << 30) / 1024);

  // Transposed inputs into a new (C-ordered) output: read through tiles (NOTE [ tiled
  // elementwise ]), one tile of 32 x 32 a block per step.
  options.multiprocessors = 100;
  ElementwisePlan transposed = saxpy.plan({2.0f, x.transposed(), x.transposed()}, {}, options);
  CHECK(transposed.layout().str() == "tiled2-i32");
  CHECK(transposed.launch_config().grid[0] == 320);  // (300 / 32 -> 10) x (1000 / 32 -> 32) tiles
}

TEST_CASE("an elementwise plan puts the axes in the arrays' common stride order unless the kernel names i or _ind") {
  // All operands Fortran-ordered (transposed C arrays): the same memory order, so the loop
  // is contiguous once the axes are reversed (issue 14, item 3).
  const ArrayRef x = described(DType::float32, {300, 500}).transposed();
  const ArrayRef y = described(DType::float32, {300, 500}).transposed();
  const ArrayRef z = described(DType::float32, {300, 500}).transposed();
  const ElementwiseKernel add("T x, T y", "T z", "z = x + y", "plan_order_add");
  CHECK(add.plan({x, y}, {z}).layout().kind == LayoutKind::contiguous);
  // A snippet that names the loop index sees the C order of the output, as in CuPy: no reorder.
  const ElementwiseKernel indexed("T x, T y", "T z", "z = x + y + i", "plan_order_i");
  CHECK(indexed.plan({x, y}, {z}).layout().kind == LayoutKind::strided);
  const ElementwiseKernel multi("T x, T y", "T z", "z = x + y + _ind.get()[0]", "plan_order_ind");
  CHECK(multi.plan({x, y}, {z}).layout().kind == LayoutKind::strided);
  // A name that merely contains i (`ix`, `pi`) does not count.
  const ElementwiseKernel named("T ix, T pi", "T z", "z = ix + pi", "plan_order_names");
  CHECK(named.plan({x, y}, {z}).layout().kind == LayoutKind::contiguous);
  // Operands that disagree (one transposed against C-ordered others) keep the output's
  // order, and the transposed input is read through tiles.
  const ArrayRef c = described(DType::float32, {500, 300});
  CHECK(add.plan({x, c}, {described(DType::float32, {500, 300})}).layout().str() == "tiled2-i32");
  // Broadcast operands (stride 0) do not vote: a broadcast row with Fortran-ordered others.
  ArrayRef row = described(DType::float32, {300});
  CHECK(add.plan({x, row.transposed()}, {z}).layout().kind != LayoutKind::generic);
}

TEST_CASE("an elementwise plan picks 64-bit indexing for arrays past 2^31 elements, without memory") {
  const ElementwiseKernel copy("T x", "T y", "y = x", "plan_copy");
  ElementwisePlan big = copy.plan({described(DType::int8, {3'000'000'000})});
  CHECK(big.layout().index64);
  ElementwisePlan small = copy.plan({described(DType::int8, {1000})});
  CHECK_FALSE(small.layout().index64);
}

TEST_CASE("an elementwise plan throws what the call throws, before any GPU is needed") {
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "plan_saxpy_errors");
  const ArrayRef x = described(DType::float32, {4, 3});
  const ArrayRef y = described(DType::float32, {4});
  const std::string planned = error_of([&] { saxpy.plan({2.0f, x, y}); });
  CHECK(planned.find("invalid_argument: shapes do not broadcast: x has shape [4, 3] and y has shape [4]") == 0);
  // The call raises the same error on this machine (with or without a GPU): it plans first.
  auto at = [](const ArrayRef& view, std::uint64_t address) {
    ArrayRef placed = view;
    placed.data = address;
    return placed;
  };
  CHECK(error_of([&] { saxpy({2.0f, at(x, 0x10000), at(y, 0x20000)}); }) == planned);

  const std::string mixed = error_of([&] { saxpy.plan({2.0f, x, described(DType::float64, {4, 3})}); });
  CHECK(mixed.find("invalid_argument") == 0);
  CHECK(error_of([&] { saxpy({2.0f, at(x, 0x10000), at(described(DType::float64, {4, 3}), 0x20000)}); }) == mixed);

  // Passed outputs take part in the broadcast, as in CuPy: one that does not broadcast with
  // the inputs is named; one the inputs broadcast past (smaller) is refused as not whole.
  CHECK(error_of([&] { saxpy.plan({2.0f, x, x}, {described(DType::float32, {3, 4})}); })
            .find("shapes do not broadcast: x has shape [4, 3] and z has shape [3, 4]") != std::string::npos);
  CHECK(error_of([&] { saxpy.plan({2.0f, x, x}, {described(DType::float32, {3})}); })
            .find("output z has shape [3] but the arguments broadcast to [4, 3]") != std::string::npos);
  PlanOptions sized;
  sized.size = 10;
  CHECK(error_of([&] { saxpy.plan({2.0f, x, x}, {}, sized); })
            .find("size= cannot be used with non-raw array arguments (x, y passed)") != std::string::npos);
  PlanOptions no_gpu;
  no_gpu.multiprocessors = 0;
  CHECK(error_of([&] { saxpy.plan({2.0f, x, x}, {}, no_gpu); }).find("multiprocessor count") != std::string::npos);
}

TEST_CASE("a plan launched with arguments other than its descriptions is refused, naming the argument") {
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "plan_saxpy_match");
  // Launch arguments need addresses; these are never dereferenced: the mismatch is found first.
  const ArrayRef x = ArrayRef::contiguous(std::uint64_t{0x10000}, DType::float32, {8});
  ElementwisePlan plan = saxpy.plan({2.0f, x, x});
  CHECK(error_of([&] { saxpy.launch(plan, {2.0f, x, ArrayRef::contiguous(std::uint64_t{0x20000}, DType::float32, {9})}); })
            .find("input y is a float32 array of shape [9] and strides [4], but the plan was made for a float32 array "
                  "of shape [8] and strides [4]") != std::string::npos);
  CHECK(error_of([&] { saxpy.launch(plan, {2.0, x, x}); }).find("input a is a float64 scalar, but the plan was made for a "
                                                                "float32 scalar") != std::string::npos);
  CHECK(error_of([&] { saxpy.launch(plan, {2.0f, x, x}, {x}); }).find("the plan allocates the outputs; pass none") !=
        std::string::npos);
  const ElementwiseKernel other("T a, T x, T y", "T z", "z = a * x + y", "plan_saxpy_other");
  CHECK(error_of([&] { other.launch(plan, {2.0f, x, x}); }).find("the plan was made by another kernel") !=
        std::string::npos);
  CHECK(error_of([&] { saxpy.launch(ElementwisePlan{}, {2.0f, x, x}); }).find("launch of an empty plan") !=
        std::string::npos);
}

TEST_CASE("a reduction plan normalises axes, shapes its outputs and splits long reductions") {
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "plan_sum");
  const ArrayRef m = described(DType::float32, {64, 1000});
  ReductionPlan rows = sum.plan({m}, std::vector<int>{-1});
  CHECK(rows.axes() == std::vector<int>{1});
  CHECK(rows.input_shape() == std::vector<std::int64_t>{64, 1000});
  CHECK(rows.outputs()[0].shape == std::vector<std::int64_t>{64});
  CHECK(rows.reduce_size() == 1000);
  CHECK(rows.layout().kind == LayoutKind::contiguous);

  ReductionPlan kept = sum.plan({m}, std::vector<int>{0}, true);
  CHECK(kept.outputs()[0].shape == std::vector<std::int64_t>{1, 1000});
  CHECK(kept.reduce_size() == 64);
  CHECK(kept.layout().kind == LayoutKind::generic);  // the reduced axis is the outer one

  // The outer axis of a large square (a column sum): one thread per output, so a warp
  // reads 32 adjacent columns; the reduced axis split across blocks to fill the GPU (NOTE
  // [ reduction strategy ]). The inner axis keeps a group per output and no split.
  const auto square = described(DType::float32, {16384, 16384});
  ReductionPlan columns = sum.plan({square}, std::vector<int>{0});
  CHECK(columns.splits() > 1);
  CHECK(columns.launch_config().grid[1] == columns.splits());
  ReductionPlan square_rows = sum.plan({square}, std::vector<int>{1});
  CHECK(square_rows.splits() == 1);

  // One output over 10^6 elements: split across blocks (a second, finishing pass).
  ReductionPlan all = sum.plan({described(DType::float32, {1'000'000})});
  CHECK(all.outputs()[0].shape.empty());
  CHECK(all.splits() > 1);
  CHECK(all.launch_config().grid[1] == all.splits());

  CHECK(error_of([&] { sum.plan({m}, std::vector<int>{2}); })
            .find("axis 2 is out of range for the 2 dimension(s) of the inputs [64, 1000]") != std::string::npos);
  CHECK(error_of([&] { sum.plan({m}, std::vector<int>{1, -1}); }).find("axis -1 is repeated") != std::string::npos);
  const ReductionKernel no_identity("T x", "T y", "x", "a + b", "y = a", "", "plan_max");
  CHECK(error_of([&] { no_identity.plan({described(DType::float32, {3, 0})}, std::vector<int>{1}); })
            .find("cannot reduce zero elements") != std::string::npos);
}

TEST_CASE("raw kernels report their declared parameters and check arguments without a GPU") {
  const RawKernel fill(R"(extern "C" __global__ void fill(float* __restrict__ out, const float* in, float value, int n) {})",
                       "fill");
  auto params = fill.parameters();
  REQUIRE(params);
  REQUIRE(params->size() == 4);
  CHECK((*params)[0].name == "out");
  CHECK((*params)[0].pointer);
  CHECK_FALSE((*params)[0].const_pointee);
  CHECK((*params)[1].name == "in");
  CHECK((*params)[1].const_pointee);
  CHECK((*params)[2].name == "value");
  CHECK((*params)[2].dtype == DType::float32);
  CHECK((*params)[3].dtype == DType::int32);

  const ArrayRef a = described(DType::float32, {16});
  fill.check_arguments({a, a, 1.0f, 16});
  CHECK(error_of([&] { fill.check_arguments({a, a, 1.0f}); }).find("takes 4 argument(s), 3 given") != std::string::npos);
  CHECK(error_of([&] { fill.check_arguments({a, 2.0f, 1.0f, 16}); }).find("argument 1 is a scalar but parameter") !=
        std::string::npos);

  const RawModule module(R"(template <class T> __global__ void axpby(T a, const T* x, T b, T* y, int n) {})", {},
                         {"axpby<float>"});
  auto templated = module.parameters("axpby<float>");
  REQUIRE(templated);
  REQUIRE(templated->size() == 5);
  CHECK((*templated)[1].name == "x");
  CHECK((*templated)[1].pointer);
  CHECK((*templated)[0].dtype == DType::float32);  // T of axpby<float>: the instance's argument
  CHECK_FALSE(module.parameters("missing").has_value());
}
