// The host side of an elementwise call: NumPy broadcasting, dimension collapsing and the
// layout class that picks the generated program (src/dsl/loop_plan.hpp).

#include <doctest/doctest.h>

#include <limits>

#include "dsl/loop_plan.hpp"
#include "kernc/error.hpp"

using kernc::ArrayRef;
using kernc::DType;
using kernc::LayoutKind;
using kernc::dsl::broadcast_shape;
using kernc::dsl::broadcast_strides;
using kernc::dsl::plan_loop;
using Shape = std::vector<std::int64_t>;

namespace {
const std::int64_t kGridThreads = 132 * 32 * 256;  // a full grid of an H200-sized launch

ArrayRef array(Shape shape, DType dtype = DType::float32) { return ArrayRef::contiguous(std::uint64_t{4096}, dtype, std::move(shape)); }
}  // namespace

TEST_CASE("dsl::broadcast_shape follows NumPy's rules") {
  CHECK(broadcast_shape({{5, 1, 7}, {3, 1}}, {"a", "b"}) == Shape{5, 3, 7});
  CHECK(broadcast_shape({{4}, {}}, {"a", "b"}) == Shape{4});
  CHECK(broadcast_shape({{2, 0}, {1, 0}}, {"a", "b"}) == Shape{2, 0});
  CHECK(broadcast_shape({{1}, {1, 1}}, {"a", "b"}) == Shape{1, 1});
  try {
    broadcast_shape({{4, 3}, {4}}, {"x", "y"});
    FAIL("expected an error");
  } catch (const kernc::Error& error) {
    CHECK(error.code() == kernc::ErrorCode::invalid_argument);
    std::string message = error.what();
    CHECK(message.find("x has shape [4, 3]") != std::string::npos);
    CHECK(message.find("y has shape [4]") != std::string::npos);
  }
}

TEST_CASE("dsl::broadcast_strides gives broadcast and missing axes stride 0") {
  ArrayRef a = array({3, 1});
  CHECK(broadcast_strides(a, {5, 3, 7}) == Shape{0, 4, 0});
  CHECK(broadcast_strides(array({7}), {5, 3, 7}) == Shape{0, 0, 4});
}

TEST_CASE("dsl::plan_loop classifies layouts") {
  SUBCASE("contiguous arrays of one shape collapse to a flat loop") {
    Shape shape{4, 5, 6};
    auto plan = plan_loop(shape, {broadcast_strides(array(shape), shape), broadcast_strides(array(shape), shape)}, {4, 4},
                          true, kGridThreads, 0);
    CHECK(plan.layout.kind == LayoutKind::contiguous);
    CHECK(plan.shape == Shape{120});
    CHECK(plan.size == 120);
    CHECK_FALSE(plan.layout.index64);
  }
  SUBCASE("without collapsing, the same arrays keep their rank") {
    Shape shape{4, 5, 6};
    auto plan = plan_loop(shape, {broadcast_strides(array(shape), shape)}, {4}, false, kGridThreads, 0);
    CHECK(plan.layout.kind == LayoutKind::strided);
    CHECK(plan.layout.rank == 3);
  }
  SUBCASE("a transposed input makes a strided rank-2 loop") {
    ArrayRef t = array({6, 4}).transposed();  // shape (4, 6), strides (4, 16)
    Shape shape{4, 6};
    auto plan = plan_loop(shape, {broadcast_strides(t, shape), broadcast_strides(array(shape), shape)}, {4, 4}, true,
                          kGridThreads, 0);
    CHECK(plan.layout.kind == LayoutKind::strided);
    CHECK(plan.layout.rank == 2);
    CHECK(plan.strides[0] == Shape{4, 16});
    CHECK(plan.strides[1] == Shape{24, 4});
  }
  SUBCASE("a broadcast input is not contiguous") {
    Shape shape{3, 7};
    auto plan = plan_loop(shape, {broadcast_strides(array({7}), shape), broadcast_strides(array(shape), shape)}, {4, 4},
                          true, kGridThreads, 0);
    CHECK(plan.layout.kind == LayoutKind::strided);
    CHECK(plan.layout.rank == 2);
  }
  SUBCASE("a reversed 1-D array is strided rank 1 with a negative stride") {
    ArrayRef r = array({9}).sliced(0, 8, -10, -1);
    auto plan = plan_loop({9}, {broadcast_strides(r, {9})}, {4}, true, kGridThreads, 0);
    CHECK(plan.layout.kind == LayoutKind::strided);
    CHECK(plan.strides[0] == Shape{-4});
  }
  SUBCASE("extent-1 axes are dropped and high ranks go generic") {
    ArrayRef a = array({2, 1, 3, 1, 2, 2, 2, 2});
    std::vector<int> reversed = {7, 6, 5, 4, 3, 2, 1, 0};
    ArrayRef t = a.transposed(reversed);
    auto plan = plan_loop(t.shape, {broadcast_strides(t, t.shape)}, {4}, true, kGridThreads, 0);
    CHECK(plan.shape.size() == 6);
    CHECK(plan.layout.kind == LayoutKind::generic);
  }
  SUBCASE("without collapsing (reduce_dims=False), extent-1 axes stay: _ind indexes the broadcast shape") {
    // CuPy's ElementwiseKernel reduces dims only if reduce_dims (issue 36): a (2,1,3,4)
    // broadcast keeps its axis of extent 1, so _ind.get()[2] is the third coordinate.
    Shape shape{2, 1, 3, 4};
    auto plan = plan_loop(shape, {broadcast_strides(array({3, 4}), shape), broadcast_strides(array(shape), shape)},
                          {4, 4}, false, kGridThreads, 0);
    CHECK(plan.shape == shape);
    CHECK(plan.layout.kind == LayoutKind::strided);
    CHECK(plan.layout.rank == 4);
    CHECK(plan.strides[0] == Shape{0, 0, 16, 4});
    CHECK(plan.strides[1] == Shape{48, 0, 16, 4});
    auto collapsed = plan_loop(shape, {broadcast_strides(array({3, 4}), shape), broadcast_strides(array(shape), shape)},
                               {4, 4}, true, kGridThreads, 0);
    CHECK(collapsed.shape == Shape{2, 12});
  }
  SUBCASE("64-bit indexing past 2^31 elements, or when byte offsets pass it") {
    Shape big{std::int64_t{1} << 31};
    auto plan = plan_loop(big, {broadcast_strides(array(big, DType::int8), big)}, {1}, true, kGridThreads, 0);
    CHECK(plan.layout.index64);
    Shape mid{std::int64_t{1} << 29};  // 2^29 float64: 4 GiB of byte offsets
    auto wide = plan_loop(mid, {broadcast_strides(array(mid, DType::float64), mid)}, {8}, true, kGridThreads, 0);
    CHECK(wide.layout.index64);
    auto narrow = plan_loop({1000}, {broadcast_strides(array({1000}), {1000})}, {4}, true, kGridThreads, 0);
    CHECK_FALSE(narrow.layout.index64);
    auto raw_wide = plan_loop({1000}, {broadcast_strides(array({1000}), {1000})}, {4}, true, kGridThreads,
                              std::int64_t{3} << 30);
    CHECK(raw_wide.layout.index64);
  }
}

TEST_CASE("dsl::tile_transposed_inputs: an input transposed against the outputs goes through tiles") {
  using kernc::dsl::tile_transposed_inputs;
  const Shape shape{64, 48};
  const ArrayRef c = array(shape);
  const ArrayRef t = array({48, 64}).transposed();  // shape (64, 48), contiguous along axis 0
  auto strides_of = [&](const std::vector<ArrayRef>& arrays) {
    std::vector<Shape> out;
    for (const auto& a : arrays) out.push_back(broadcast_strides(a, shape));
    return out;
  };
  SUBCASE("x + t.T into a C-ordered output: t is staged, x is not") {
    auto plan = plan_loop(shape, strides_of({c, t, c}), {4, 4, 4}, true, kGridThreads, 0, true, 2);
    REQUIRE(tile_transposed_inputs(plan, 2));
    CHECK(plan.layout.kind == LayoutKind::tiled);
    CHECK(plan.layout.rank == 2);
    CHECK(plan.layout.str() == "tiled2-i32");
    CHECK(plan.staged == 0b10u);
  }
  SUBCASE("C-ordered inputs into a Fortran-ordered output: the loop follows the output, the inputs are staged") {
    auto plan = plan_loop(shape, strides_of({c, c, t}), {4, 4, 4}, true, kGridThreads, 0, true, 2);
    CHECK(plan.shape == Shape{48, 64});  // the output's order: its contiguous axis last
    CHECK(plan.strides[2] == Shape{256, 4});
    REQUIRE(tile_transposed_inputs(plan, 2));
    CHECK(plan.staged == 0b11u);
  }
  SUBCASE("without reordering (the kernel names i) the C order stays, and the tiles still apply") {
    auto plan = plan_loop(shape, strides_of({t, c}), {4, 4}, true, kGridThreads, 0, false, 1);
    CHECK(plan.shape == shape);
    REQUIRE(tile_transposed_inputs(plan, 1));
    CHECK(plan.staged == 0b1u);
  }
  SUBCASE("a batch of transposes is tiled rank 3") {
    const Shape batch{5, 64, 48};
    const ArrayRef bt = array({5, 48, 64}).transposed({0, 2, 1});
    auto plan = plan_loop(batch, {broadcast_strides(bt, batch), broadcast_strides(array(batch), batch)}, {8, 8}, true,
                          kGridThreads, 0, true, 1);
    REQUIRE(tile_transposed_inputs(plan, 1));
    CHECK(plan.layout.str() == "tiled3-i32");
  }
  SUBCASE("not tiled: broadcast columns, narrow tiles, no transposed input, no outputs, too high a rank") {
    const ArrayRef column = array({64, 1});  // stride 0 along the columns: read once per row, no tile needed
    auto broadcast = plan_loop(shape, strides_of({column, c}), {4, 4}, true, kGridThreads, 0, true, 1);
    CHECK_FALSE(tile_transposed_inputs(broadcast, 1));
    CHECK(broadcast.layout.kind == LayoutKind::strided);
    const Shape thin{64, 8};
    const ArrayRef thin_t = array({8, 64}).transposed();
    auto narrow = plan_loop(thin, {broadcast_strides(thin_t, thin), broadcast_strides(array(thin), thin)}, {4, 4}, true,
                            kGridThreads, 0, true, 1);
    CHECK_FALSE(tile_transposed_inputs(narrow, 1));
    auto every_second = plan_loop({64}, {{8}, {4}}, {4, 4}, true, kGridThreads, 0, true, 1);
    CHECK_FALSE(tile_transposed_inputs(every_second, 1));
    auto inputs_only = plan_loop(shape, strides_of({c, t}), {4, 4}, true, kGridThreads, 0, true, 2);
    CHECK_FALSE(tile_transposed_inputs(inputs_only, 2));
    const Shape four{3, 5, 64, 48};
    const ArrayRef t4 = array({5, 3, 48, 64}).transposed({1, 0, 3, 2});
    auto high = plan_loop(four, {broadcast_strides(t4, four), broadcast_strides(array(four), four)}, {4, 4}, true,
                          kGridThreads, 0, true, 1);
    CHECK(high.shape.size() == 4);
    CHECK_FALSE(tile_transposed_inputs(high, 1));
    CHECK(high.layout.kind == LayoutKind::strided);
  }
}
