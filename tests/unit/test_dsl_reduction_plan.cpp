// The host side of a reduction call, planned without kernel objects, memory or a GPU
// (src/dsl/reduction_plan.hpp): axes, output shapes, the views with the kept axes first,
// the layout class, the strategy and both passes' geometry.

#include <doctest/doctest.h>

#include <optional>
#include <utility>
#include <vector>

#include "dsl/params.hpp"
#include "dsl/reduction_plan.hpp"
#include "kernc/error.hpp"

using kernc::ArrayRef;
using kernc::DType;
using kernc::LayoutKind;
using kernc::dsl::ArgDescription;
using kernc::dsl::ReductionPlan;
using Shape = std::vector<std::int64_t>;

namespace {

kernc::detail::ReductionDefinition sum_definition(const char* identity = "0") {
  kernc::detail::ReductionDefinition def;
  def.name = "dsl_sum";
  def.signature = kernc::dsl::parse_signature("T x", "T y", def.name);
  def.map_expr = "x";
  def.reduce_expr = "a + b";
  def.post_map_expr = "y = a";
  def.identity = identity;
  return def;
}

kernc::ResolvedTypes float32_types() {
  kernc::ResolvedTypes resolved;
  resolved.inputs = {DType::float32};
  resolved.outputs = {DType::float32};
  resolved.placeholders["T"] = DType::float32;
  return resolved;
}

ArgDescription described(Shape shape) {
  return {true, ArrayRef::contiguous(std::uint64_t{0}, DType::float32, std::move(shape)), DType::float32};
}

ReductionPlan plan(Shape shape, std::optional<std::vector<int>> axes, bool keepdims = false, int multiprocessors = 132) {
  ReductionPlan planned =
      kernc::dsl::plan_reduction_shapes(sum_definition(), float32_types(), {described(std::move(shape))}, {}, axes, keepdims);
  if (planned.out_size != 0) kernc::dsl::plan_reduction_geometry("dsl_sum", multiprocessors, planned);
  return planned;
}

}  // namespace

TEST_CASE("dsl::plan_reduction_shapes: axes, output shapes and the views, kept axes first") {
  const ReductionPlan rows = plan({64, 1000}, std::vector<int>{-1});
  CHECK(rows.axes == std::vector<int>{1});
  CHECK(rows.in_shape == Shape{64, 1000});
  CHECK(rows.outputs[0].shape == Shape{64});
  CHECK(rows.outputs[0].dtype == DType::float32);
  CHECK(rows.out_size == 64);
  CHECK(rows.reduce_size == 1000);
  CHECK(rows.layout.kind == LayoutKind::contiguous);  // the reduced axis is the inner one

  // The outer axis: the view puts the kept axis (1) first, the reduced one (0) last, so the
  // strides read (4, 4000): not C-contiguous in that order, the generic layout.
  const ReductionPlan columns = plan({64, 1000}, std::vector<int>{0}, true);
  CHECK(columns.outputs[0].shape == Shape{1, 1000});
  REQUIRE(columns.input_views.size() == 1);
  CHECK(columns.input_views[0].shape == Shape{1000, 64});
  CHECK(columns.input_views[0].strides == Shape{4, 4000});
  CHECK(columns.layout.kind == LayoutKind::generic);

  CHECK_THROWS_WITH_AS(plan({64, 1000}, std::vector<int>{2}), doctest::Contains("axis 2 is out of range"), kernc::Error);
  CHECK_THROWS_WITH_AS(plan({64, 1000}, std::vector<int>{0, -2}), doctest::Contains("axis -2 is repeated"), kernc::Error);
  CHECK_THROWS_WITH_AS(kernc::dsl::plan_reduction_shapes(sum_definition(""), float32_types(), {described({3, 0})}, {},
                                                         std::vector<int>{1}, false),
                       doctest::Contains("cannot reduce zero elements"), kernc::Error);
}

TEST_CASE("dsl::plan_reduction_geometry: a group per output for rows, one thread per output and splits for columns") {
  // Long rows, few of them: a group of 256 threads per row (about 4 elements a thread), and
  // the rows split across blocks so that every multiprocessor has work.
  const ReductionPlan rows = plan({64, 100000}, std::vector<int>{1});
  CHECK(rows.group == 256);
  CHECK(rows.splits > 1);
  CHECK(rows.grid == 64u);  // one output per block of 256 threads
  // The second pass folds each output's splits with a power-of-two group of at least as
  // many threads (at most a block) and covers every output.
  CHECK(rows.finish_group >= std::min<std::int64_t>(rows.splits, 256));
  CHECK((rows.finish_group & (rows.finish_group - 1)) == 0);
  CHECK(std::int64_t{rows.finish_grid} * (256 / rows.finish_group) >= rows.out_size);

  // The outer axis of a large square: adjacent outputs read adjacent elements, so one
  // thread per output (NOTE [ reduction strategy ]) with a columns kernel for float32.
  const ReductionPlan columns = plan({16384, 16384}, std::vector<int>{0});
  CHECK(columns.group == 1);
  CHECK(columns.columns == 4);  // 16 bytes of float32
  CHECK(columns.column_alignments == std::vector<std::int64_t>{16});
  CHECK(columns.splits > 1);

  // Short rows: no split, no second pass.
  const ReductionPlan short_rows = plan({100000, 32}, std::vector<int>{1});
  CHECK(short_rows.splits == 1);
  CHECK(short_rows.group == 8);  // about 4 elements a thread

  // The multiprocessor count is part of the plan: fewer multiprocessors, fewer splits.
  CHECK(plan({64, 10'000'000}, std::vector<int>{1}, false, 16).splits <
        plan({64, 10'000'000}, std::vector<int>{1}, false, 132).splits);
  CHECK_THROWS_WITH_AS(plan({64, 1000}, std::vector<int>{1}, false, 0), doctest::Contains("multiprocessor count"),
                       kernc::Error);
}

TEST_CASE("dsl::plan_reduction_geometry on the host: chunks of the reduced axis depend on the shape, not the workers") {
  auto host_plan = [](Shape shape, std::vector<int> axes, int workers) {
    ReductionPlan planned = kernc::dsl::plan_reduction_shapes(sum_definition(), float32_types(),
                                                              {described(std::move(shape))}, {}, axes, false);
    kernc::dsl::plan_reduction_geometry("dsl_sum", workers, planned, kernc::Backend::cpu);
    return planned;
  };
  // Which chunk folds an element must not depend on KERNC_CPU_THREADS, or the bits would.
  const std::vector<std::pair<Shape, std::vector<int>>> cases = {
      {{8192, 8192}, {0}}, {{8192, 8192}, {1}}, {{2053, 272}, {0}}, {{64, 100000}, {1}}, {{100000, 32}, {1}}, {{999, 40}, {0}}};
  for (const auto& [shape, axes] : cases) {
    const std::int64_t splits = host_plan(shape, axes, 1).splits;
    for (int workers : {2, 3, 16, 64}) CHECK(host_plan(shape, axes, workers).splits == splits);
  }
  // The outer axis of a large square: its 8192 rows in chunks of 1024, and 16 workers get
  // two blocks each in all, in strips of 2048 columns (8 KiB of each row) rather than 256.
  const ReductionPlan outer = host_plan({8192, 8192}, {0}, 16);
  CHECK(outer.columns == 4);  // 16 bytes of float32
  CHECK(outer.splits == 8);
  CHECK(outer.columns_grid == 4u);
  CHECK(host_plan({8192, 8192}, {0}, 1).columns_grid == 1u);
  // Rows that are short enough stay whole.
  CHECK(host_plan({1000, 4096}, {0}, 16).splits == 1);
}
