// The order a precompile starts its programs in (NOTE [ longest compiles first ],
// src/kernels/precompile.cpp): the costliest estimated first, so that no long compile is
// left for the end of a -j run. Only the order is tested here; what it costs is measured
// by tools/bench (kernc_compile_bench, precompile-scaling).

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernc/spec_file.hpp"
#include "kernels/precompile_order.hpp"

namespace {

// Kernels of every cost class: an elementwise kernel with and without a raw array, a
// reduction, raw code with and without a toolkit include.
const char* const kOrderSpec = R"({
  "kernels": [
    {"kind": "elementwise", "name": "add", "in_params": "T x, T y", "out_params": "T z",
     "operation": "z = x + y", "signatures": ["float32, float32 -> float32"]},
    {"kind": "elementwise", "name": "wrap_add", "in_params": "T x, raw T table", "out_params": "T z",
     "operation": "z = x + table[i % table.size()]", "signatures": ["float32, float32 -> float32"]},
    {"kind": "reduction", "name": "total", "in_params": "T x", "out_params": "T y", "map_expr": "x",
     "reduce_expr": "a + b", "post_map_expr": "y = a", "identity": "0", "signatures": ["float32 -> float32"]},
    {"kind": "raw", "name": "fill",
     "code": "extern \"C\" __global__ void fill(float* x) { x[threadIdx.x] = 1.0f; }\n"},
    {"kind": "raw", "name": "block_sum",
     "code": "#include <cub/block/block_reduce.cuh>\nextern \"C\" __global__ void block_sum(const float* x, float* y) {\n  using R = cub::BlockReduce<float, 128>;\n  __shared__ R::TempStorage s;\n  float v = R(s).Sum(x[threadIdx.x]);\n  if (threadIdx.x == 0) *y = v;\n}\n"}
  ]
})";

// Each program's place in the order, by "kernel layout" ("fill" for raw code).
std::map<std::string, std::size_t> places(const kernc::Spec& spec, const std::vector<kernc::SpecVariant>& variants) {
  const auto units = kernc::precompile_units(variants, {kernc::Target::parse("sm_90")}, kernc::PrecompileShard{});
  const std::vector<std::size_t> order = kernc::detail::longest_compiles_first(spec, units);
  REQUIRE(order.size() == units.size());
  std::vector<std::size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t k = 0; k < sorted.size(); ++k) REQUIRE(sorted[k] == k);  // every unit, once
  std::map<std::string, std::size_t> place;
  for (std::size_t n = 0; n < order.size(); ++n) {
    const kernc::SpecVariant& variant = *units[order[n]].variant;
    const std::string layout = variant.program.origin.layout;
    place[layout.empty() ? variant.kernel : variant.kernel + " " + layout] = n;
  }
  return place;
}

}  // namespace

TEST_CASE("precompile::longest_compiles_first starts the programs estimated to compile longest") {
  const kernc::Spec spec = kernc::parse_spec(kOrderSpec, ".");
  const std::vector<kernc::SpecVariant> variants = spec.variants();
  auto place = places(spec, variants);
  auto at = [&](const std::string& name) {
    CAPTURE(name);
    REQUIRE(place.count(name) == 1);
    return place.at(name);
  };
  // Every layout class of the elementwise kernel is there, so the checks below cover them.
  for (const char* layout : {"contiguous", "strided1", "strided2", "strided3", "strided4", "tiled2", "tiled3", "generic"}) {
    for (const char* index : {"-i32", "-i64"}) at(std::string("add ") + layout + index);
  }
  for (const char* index : {"-i32", "-i64"}) {
    const std::string i = index;
    // A multi-index of more axes costs more; the tiled and generic layouts more again.
    CHECK(at("add strided4" + i) < at("add strided3" + i));
    CHECK(at("add strided3" + i) < at("add strided2" + i));
    CHECK(at("add strided2" + i) < at("add strided1" + i));
    CHECK(at("add tiled2" + i) < at("add strided4" + i));
    CHECK(at("add generic" + i) < at("add tiled3" + i));
    // A raw array parameter adds its run-time rank's loops; a reduction two or three kernels.
    CHECK(at("wrap_add strided1" + i) < at("add strided1" + i));
    CHECK(at("wrap_add contiguous" + i) < at("add contiguous" + i));
    CHECK(at("total contiguous" + i) < at("add contiguous" + i));
    CHECK(at("total generic" + i) < at("add generic" + i));
  }
  // 64-bit indexing costs more than 32-bit in the same layout.
  for (const char* layout : {"contiguous", "strided2", "tiled3", "generic"}) {
    CHECK(at(std::string("add ") + layout + "-i64") < at(std::string("add ") + layout + "-i32"));
  }
  // Raw code that includes a toolkit header starts before any elementwise program; a
  // one-line raw kernel only before the cheapest strided ones.
  CHECK(at("block_sum") < at("add generic-i64"));
  CHECK(at("block_sum") < at("total contiguous-i64"));
  CHECK(at("fill") > at("add contiguous-i32"));
  CHECK(at("fill") < at("add strided1-i32"));
  // The costliest of all: the reduction over the generic layout with 64-bit indexing.
  CHECK(at("total generic-i64") == 0);
}
