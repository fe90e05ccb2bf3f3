// Plans without a GPU: ElementwiseKernel::plan, ReductionKernel::plan, raw kernels' plans.
// Arrays are descriptions (data 0); nothing here touches a driver.

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/spec_file.hpp"
#include "thrown.hpp"

using namespace kernc;
using kernc::test::error_code_and_message;

namespace {

ArrayRef plan_array(DType dtype, std::vector<std::int64_t> shape) {
  return ArrayRef::contiguous(std::uint64_t{0}, dtype, std::move(shape));
}

// Options that need no GPU: the multiprocessor count is given (an H100 SXM's).
CallOptions gpu_free() {
  CallOptions options;
  options.multiprocessors = CallOptions::kDefaultMultiprocessors;
  return options;
}

// A reduction's options: its axes and keepdims, no GPU.
CallOptions reducing(std::optional<std::vector<int>> axes, bool keepdims = false) {
  CallOptions options = gpu_free();
  options.axes = std::move(axes);
  options.keepdims = keepdims;
  return options;
}

}  // namespace

TEST_CASE("an elementwise plan resolves types, broadcasts, picks the layout and sizes the grid") {
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "plan_saxpy");
  const ArrayRef x = plan_array(DType::float32, {1000, 300});
  const ArrayRef row = plan_array(DType::float32, {300});
  CallOptions options;
  options.multiprocessors = 100;
  Call plan = saxpy.plan({2.0f, x, row}, {}, options);
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
  Call flat = saxpy.plan({2.0f, x, x}, {}, options);
  CHECK(flat.layout() == Layout{LayoutKind::contiguous, 0, false});
  CHECK(flat.launch_config().grid[0] == 293);  // ceil(300000 / 1024)
  options.multiprocessors = 4;
  CHECK(saxpy.plan({2.0f, x, x}, {}, options).launch_config().grid[0] == 293);
  // With 32-bit indices, the grid stops where one more step would overflow them (their
  // byte offsets must fit too, so only items of 1 or 2 bytes get there): 2^30 + 2^29 int8
  // elements, 16 a thread, leave room for (2^31 - 2 - n) / 4096 blocks; the kernel's
  // grid-stride loop takes the rest.
  const std::int64_t big = (std::int64_t{1} << 30) + (std::int64_t{1} << 29);
  const ArrayRef huge = plan_array(DType::int8, {big});
  Call capped = saxpy.plan({2, huge, huge}, {}, options);
  CHECK(!capped.layout().index64);
  CHECK(capped.launch_config().grid[0] == (std::numeric_limits<std::int32_t>::max() - 1 - big) / 4096);
  // 1024 threads a block: at most 2^32 - 1 threads along x (HIP's limit), so 4194303 blocks
  // of 4 elements a thread, however many more the loop has.
  CallOptions wide_blocks = options;
  wide_blocks.block_size = 1024;
  const ArrayRef longest = plan_array(DType::float32, {std::int64_t{1} << 35});
  CHECK(saxpy.plan({2.0f, longest, longest}, {}, wide_blocks).launch_config().grid[0] == 4194303);
  // 64-bit indices: one pass again.
  const ArrayRef larger = plan_array(DType::float32, {std::int64_t{3} << 30});
  Call wide = saxpy.plan({2.0f, larger, larger}, {}, options);
  CHECK(wide.layout().index64);
  CHECK(wide.launch_config().grid[0] == (std::int64_t{3} << 30) / 1024);

  // Transposed inputs into a new (C-ordered) output: read through tiles (NOTE [ tiled
  // elementwise ]), one tile of 32 x 32 a block per step.
  options.multiprocessors = 100;
  Call transposed = saxpy.plan({2.0f, x.transposed(), x.transposed()}, {}, options);
  CHECK(transposed.layout().str() == "tiled2-i32");
  CHECK(transposed.launch_config().grid[0] == 320);  // (300 / 32 -> 10) x (1000 / 32 -> 32) tiles
}

TEST_CASE("an elementwise plan puts the axes in the arrays' common stride order unless the kernel names i or _ind") {
  // All operands Fortran-ordered (transposed C arrays): the same memory order, so the loop
  // is contiguous once the axes are reversed (issue 14, item 3).
  const ArrayRef x = plan_array(DType::float32, {300, 500}).transposed();
  const ArrayRef y = plan_array(DType::float32, {300, 500}).transposed();
  const ArrayRef z = plan_array(DType::float32, {300, 500}).transposed();
  const ElementwiseKernel add("T x, T y", "T z", "z = x + y", "plan_order_add");
  CHECK(add.plan({x, y}, {z}, gpu_free()).layout().kind == LayoutKind::contiguous);
  // A snippet that names the loop index sees the C order of the output, as in CuPy: no reorder.
  const ElementwiseKernel indexed("T x, T y", "T z", "z = x + y + i", "plan_order_i");
  CHECK(indexed.plan({x, y}, {z}, gpu_free()).layout().kind == LayoutKind::strided);
  const ElementwiseKernel multi("T x, T y", "T z", "z = x + y + _ind.get()[0]", "plan_order_ind");
  CHECK(multi.plan({x, y}, {z}, gpu_free()).layout().kind == LayoutKind::strided);
  // A name that merely contains i (`ix`, `pi`) does not count.
  const ElementwiseKernel named("T ix, T pi", "T z", "z = ix + pi", "plan_order_names");
  CHECK(named.plan({x, y}, {z}, gpu_free()).layout().kind == LayoutKind::contiguous);
  // Operands that disagree (one transposed against C-ordered others) keep the output's
  // order, and the transposed input is read through tiles.
  const ArrayRef c = plan_array(DType::float32, {500, 300});
  CHECK(add.plan({x, c}, {plan_array(DType::float32, {500, 300})}, gpu_free()).layout().str() == "tiled2-i32");
  // Broadcast operands (stride 0) do not vote: a broadcast row with Fortran-ordered others.
  ArrayRef row = plan_array(DType::float32, {300});
  CHECK(add.plan({x, row.transposed()}, {z}, gpu_free()).layout().kind != LayoutKind::generic);
}

TEST_CASE("an elementwise plan picks 64-bit indexing for arrays past 2^31 elements, without memory") {
  const ElementwiseKernel copy("T x", "T y", "y = x", "plan_copy");
  Call big = copy.plan({plan_array(DType::int8, {3'000'000'000})}, {}, gpu_free());
  CHECK(big.layout().index64);
  Call small = copy.plan({plan_array(DType::int8, {1000})}, {}, gpu_free());
  CHECK_FALSE(small.layout().index64);
}

TEST_CASE("an elementwise plan throws what the call throws, before any GPU is needed") {
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "plan_saxpy_errors");
  const ArrayRef x = plan_array(DType::float32, {4, 3});
  const ArrayRef y = plan_array(DType::float32, {4});
  const std::string planned = error_code_and_message([&] { saxpy.plan({2.0f, x, y}, {}, gpu_free()); });
  CHECK(planned.find("invalid_argument: shapes do not broadcast: x has shape [4, 3] and y has shape [4]") == 0);
  // The call raises the same error on this machine (with or without a GPU): it plans first.
  auto at = [](const ArrayRef& view, std::uint64_t address) {
    ArrayRef placed = view;
    placed.data = address;
    return placed;
  };
  CHECK(error_code_and_message([&] { saxpy({2.0f, at(x, 0x10000), at(y, 0x20000)}); }) == planned);

  const std::string mixed = error_code_and_message([&] { saxpy.plan({2.0f, x, plan_array(DType::float64, {4, 3})}, {}, gpu_free()); });
  CHECK(mixed.find("invalid_argument") == 0);
  CHECK(error_code_and_message([&] { saxpy({2.0f, at(x, 0x10000), at(plan_array(DType::float64, {4, 3}), 0x20000)}); }) == mixed);

  // Passed outputs take part in the broadcast, as in CuPy: one that does not broadcast with
  // the inputs is named; one the inputs broadcast past (smaller) is refused as not whole.
  CHECK(error_code_and_message([&] { saxpy.plan({2.0f, x, x}, {plan_array(DType::float32, {3, 4})}, gpu_free()); })
            .find("shapes do not broadcast: x has shape [4, 3] and z has shape [3, 4]") != std::string::npos);
  CHECK(error_code_and_message([&] { saxpy.plan({2.0f, x, x}, {plan_array(DType::float32, {3})}, gpu_free()); })
            .find("output z has shape [3] but the arguments broadcast to [4, 3]") != std::string::npos);
  CallOptions sized = gpu_free();
  sized.size = 10;
  CHECK(error_code_and_message([&] { saxpy.plan({2.0f, x, x}, {}, sized); })
            .find("size= cannot be used with non-raw array arguments (x, y passed)") != std::string::npos);
  CallOptions no_gpu;
  no_gpu.multiprocessors = 0;
  CHECK(error_code_and_message([&] { saxpy.plan({2.0f, x, x}, {}, no_gpu); }).find("multiprocessor count") != std::string::npos);
}

TEST_CASE("a plan launched with arguments other than its descriptions is refused, naming the argument") {
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "plan_saxpy_match");
  // Launch arguments need addresses; these are never dereferenced: the mismatch is found first.
  const ArrayRef x = ArrayRef::contiguous(std::uint64_t{0x10000}, DType::float32, {8});
  Call plan = saxpy.plan({2.0f, x, x}, {}, gpu_free());
  CHECK(error_code_and_message([&] { plan.launch({2.0f, x, ArrayRef::contiguous(std::uint64_t{0x20000}, DType::float32, {9})}); })
            .find("input y is a float32 array of shape [9] and strides [4], but the plan was made for a float32 array "
                  "of shape [8] and strides [4]") != std::string::npos);
  CHECK(error_code_and_message([&] { plan.launch({2.0, x, x}); }).find("input a is a float64 scalar, but the plan was made for a "
                                                                "float32 scalar") != std::string::npos);
  // A plan that allocates its outputs also takes outputs laid out as it would allocate
  // them; others are named.
  CHECK(error_code_and_message([&] { plan.launch({2.0f, x, x}, {ArrayRef::contiguous(std::uint64_t{0x30000}, DType::float32, {9})}); })
            .find("output z is a float32 array of shape [9] and strides [4], but the plan was made for a float32 array "
                  "of shape [8] and strides [4]") != std::string::npos);
  CHECK(error_code_and_message([&] { plan.launch({2.0f, x, x}, {x, x}); }).find("the plan has 1 output(s), 2 given") !=
        std::string::npos);
  const Call given = saxpy.plan({2.0f, x, x}, {x}, gpu_free());
  CHECK(error_code_and_message([&] { given.launch({2.0f, x, x}); }).find("the plan was given the outputs; pass them") !=
        std::string::npos);
  CHECK(error_code_and_message([&] { Call{}.launch({2.0f, x, x}); }).find("launch of an empty Call") != std::string::npos);
}

TEST_CASE("a reduction plan normalises axes, shapes its outputs and splits long reductions") {
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "plan_sum");
  const ArrayRef m = plan_array(DType::float32, {64, 1000});
  Call rows = sum.plan({m}, {}, reducing(std::vector<int>{-1}));
  CHECK(rows.axes() == std::vector<int>{1});
  CHECK(rows.shape() == std::vector<std::int64_t>{64, 1000});
  CHECK(rows.outputs()[0].shape == std::vector<std::int64_t>{64});
  CHECK(rows.reduce_size() == 1000);
  CHECK(rows.layout().kind == LayoutKind::contiguous);

  Call kept = sum.plan({m}, {}, reducing(std::vector<int>{0}, true));
  CHECK(kept.outputs()[0].shape == std::vector<std::int64_t>{1, 1000});
  CHECK(kept.reduce_size() == 64);
  CHECK(kept.layout().kind == LayoutKind::generic);  // the reduced axis is the outer one

  // The outer axis of a large square (a column sum): one thread per output, so a warp
  // reads 32 adjacent columns; the reduced axis split across blocks to fill the GPU (NOTE
  // [ reduction strategy ]). The inner axis keeps a group per output and no split.
  const auto square = plan_array(DType::float32, {16384, 16384});
  Call columns = sum.plan({square}, {}, reducing(std::vector<int>{0}));
  CHECK(columns.splits() > 1);
  CHECK(columns.launch_config().grid[1] == columns.splits());
  Call square_rows = sum.plan({square}, {}, reducing(std::vector<int>{1}));
  CHECK(square_rows.splits() == 1);

  // One output over 10^6 elements: split across blocks (a second, finishing pass).
  Call all = sum.plan({plan_array(DType::float32, {1'000'000})}, {}, gpu_free());
  CHECK(all.outputs()[0].shape.empty());
  CHECK(all.splits() > 1);
  CHECK(all.launch_config().grid[1] == all.splits());

  CHECK(error_code_and_message([&] { sum.plan({m}, {}, reducing(std::vector<int>{2})); })
            .find("axis 2 is out of range for the 2 dimension(s) of the inputs [64, 1000]") != std::string::npos);
  CHECK(error_code_and_message([&] { sum.plan({m}, {}, reducing(std::vector<int>{1, -1})); }).find("axis -1 is repeated") != std::string::npos);
  const ReductionKernel no_identity("T x", "T y", "x", "a + b", "y = a", "", "plan_max");
  CHECK(error_code_and_message([&] { no_identity.plan({plan_array(DType::float32, {3, 0})}, {}, reducing(std::vector<int>{1})); })
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

  const ArrayRef a = plan_array(DType::float32, {16});
  fill.check_arguments({a, a, 1.0f, 16});
  CHECK(error_code_and_message([&] { fill.check_arguments({a, a, 1.0f}); }).find("takes 4 argument(s), 3 given") != std::string::npos);
  CHECK(error_code_and_message([&] { fill.check_arguments({a, 2.0f, 1.0f, 16}); }).find("argument 1 is a scalar but parameter") !=
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

TEST_CASE("every kernel kind plans the same way: a Call, made without a GPU, refusing options it does not take") {
  const ArrayRef a = plan_array(DType::float32, {16});
  // A raw kernel's call: the checks its declaration allows, and the caller's LaunchConfig.
  const RawKernel fill(R"(extern "C" __global__ void plan_fill(float* out, float value, int n) {})", "plan_fill");
  LaunchConfig config;
  config.grid[0] = 2;
  config.block[0] = 8;
  const Call raw = fill.plan(config, {a, 1.5f, 16}, gpu_free());
  CHECK(raw.kind() == KernelKind::raw);
  CHECK(raw.kernel() == "plan_fill");
  CHECK(raw.launch_config().grid[0] == 2);
  CHECK(raw.launch_config().block[0] == 8);
  CHECK(raw.outputs().empty());
  CHECK_FALSE(raw.allocates_outputs());
  CHECK(error_code_and_message([&] { fill.plan(config, {a, 1.5f}, gpu_free()); }).find("takes 3 argument(s), 2 given") !=
        std::string::npos);
  // An integer out of its declared parameter's range is refused when planned and when a
  // kept call is launched with a new value.
  CHECK(error_code_and_message([&] { fill.plan(config, {a, 1.5f, std::int64_t{1} << 40}, gpu_free()); })
            .find("out of bounds for int32 parameter \"int n\"") != std::string::npos);
  const ArrayRef placed = ArrayRef::contiguous(std::uint64_t{0x10000}, DType::float32, {16});
  CHECK(error_code_and_message([&] { raw.launch({placed, 1.5f, std::int64_t{1} << 40}); }).find("a int64 scalar, but the call was "
                                                                                  "planned for a int32 scalar") !=
        std::string::npos);
  CHECK(error_code_and_message([&] { raw.launch({placed, placed, 16}); }).find("argument value is an array, but the call was planned "
                                                                 "for a float32 scalar") != std::string::npos);
  const RawModule module(R"(template <class T> __global__ void axpby(T a, const T* x, T b, T* y, int n) {})", {},
                         {"axpby<float>"});
  const Call instance = module.plan("axpby<float>", config, {2.0f, a, 0.5f, a, 16}, gpu_free());
  CHECK(instance.kind() == KernelKind::raw);
  CHECK(instance.kernel() == "axpby<float>");

  // Each kind refuses what it does not take, naming the option (never ignored).
  const ElementwiseKernel add("T x, T y", "T z", "z = x + y", "plan_kinds_add");
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "plan_kinds_sum");
  CHECK(error_code_and_message([&] { add.plan({a, a}, {}, reducing(std::vector<int>{0})); })
            .find("plan_kinds_add: axes= is for reduction kernels; this is an elementwise kernel") != std::string::npos);
  CallOptions sized = gpu_free();
  sized.size = 4;
  CHECK(error_code_and_message([&] { sum.plan({a}, {}, sized); }).find("plan_kinds_sum: size= is for elementwise kernels") !=
        std::string::npos);
  CallOptions launched = gpu_free();
  launched.launch = config;
  CHECK(error_code_and_message([&] { add.plan({a, a}, {}, launched); }).find("a LaunchConfig is for raw kernels") != std::string::npos);
  CallOptions bound = gpu_free();
  bound.bindings["T"] = DType::float32;
  CHECK(error_code_and_message([&] { fill.plan(config, {a, 1.5f, 16}, bound); }).find("a placeholder binding is for elementwise and "
                                                                        "reduction kernels; this is a raw kernel") !=
        std::string::npos);
  CallOptions named = gpu_free();
  named.function = "axpby<float>";
  CHECK(error_code_and_message([&] { fill.plan(config, {a, 1.5f, 16}, named); }).find("function= is for raw modules") !=
        std::string::npos);

  // A spec file's kernel plans through the same call, whatever its kind.
  const Spec spec = parse_spec(R"({"kernels": [
      {"name": "plan_spec_scale", "kind": "elementwise", "in_params": "T x", "out_params": "T y",
       "operation": "y = 2 * x"},
      {"name": "plan_spec_fill", "kind": "raw",
       "code": "extern \"C\" __global__ void plan_spec_fill(float* out, int n) {}"}]})",
                               ".");
  const Call scaled = spec.find("plan_spec_scale").plan({a}, {}, gpu_free());
  CHECK(scaled.kind() == KernelKind::elementwise);
  CHECK(scaled.outputs()[0].shape == std::vector<std::int64_t>{16});
  CHECK(error_code_and_message([&] { spec.find("plan_spec_fill").plan({a, 16}, {}, gpu_free()); })
            .find("needs its LaunchConfig") != std::string::npos);
  CallOptions with_config = gpu_free();
  with_config.launch = config;
  CHECK(spec.find("plan_spec_fill").plan({a, 16}, {}, with_config).kind() == KernelKind::raw);
}
