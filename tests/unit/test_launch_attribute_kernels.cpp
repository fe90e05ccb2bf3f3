// Launch-attribute kernels (issue 32, part 3), compile-only: thread-block cluster code
// (cooperative_groups::this_cluster(), distributed shared memory) and programmatic dependent
// launch's device functions, compiled by the real NVRTC as kernc compiles raw code (NOTE
// [ grid dependency bridge ], templates/grid_dependency_bridge.cuh): the kernels of
// examples/clusters_pdl.cpp, which runs them on data, as the GPU suite
// (tests/gpu/test_gpu_launch_attributes.cpp) runs its own variants of them.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "clusters_pdl_kernels.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::RawKernel;
using kernc::RawModule;
using kernc::Target;
using kernc::test::contains;
using kernc::test::nvrtc;
using kernc::test::starts_with;
using clusters_pdl::kClusterSum;
using clusters_pdl::kPdlPair;

TEST_CASE("launch attributes: cluster code with distributed shared memory compiles with NVRTC for sm_90") {
  const RawKernel kernel(kClusterSum, "cluster_sum");
  auto compiled = nvrtc().compile(kernc::program(kernel), Target::parse("sm_90"));
  CHECK(starts_with(compiled.binary, kernc::test::kElfMagic));
}

TEST_CASE("launch attributes: PDL's device functions compile with NVRTC, through kernc's bridge") {
  const RawModule module(kPdlPair);
  const kernc::Program program = kernc::program(module);
  // NVRTC declares neither function: the bridge is included first, and is part of the key.
  CHECK(starts_with(program.source, "#include \"kernc/grid_dependency_bridge.cuh\"\n#line 1\n"));
  REQUIRE(program.options.headers.count("kernc/grid_dependency_bridge.cuh") == 1);
  CHECK(contains(program.options.headers.at("kernc/grid_dependency_bridge.cuh"), "griddepcontrol.wait"));
  // sm_90 has griddepcontrol; before it the functions are empty (plain stream order).
  for (const char* target : {"sm_90", "sm_80", "compute_90"}) {
    CAPTURE(target);
    auto compiled = nvrtc().compile(program, Target::parse(target));
    CHECK_FALSE(compiled.binary.empty());
    if (std::string(target) == "compute_90") {
      CHECK(contains(compiled.binary, "griddepcontrol.wait"));
      CHECK(contains(compiled.binary, "griddepcontrol.launch_dependents"));
    }
  }
  // A compile error still points at the user's own line.
  const RawModule broken(std::string(kPdlPair) + "\nextern \"C\" __global__ void bad() { undeclared(); }\n");
  try {
    (void)nvrtc().compile(kernc::program(broken), Target::parse("sm_90"));
    FAIL("the broken module compiled");
  } catch (const kernc::Error& error) {
    // kPdlPair's lines, the blank one its last newline and the added one make, then the kernel.
    const auto line = std::count(kPdlPair, kPdlPair + std::string(kPdlPair).size(), '\n') + 2;
    CHECK_MESSAGE(contains(error.what(), "(" + std::to_string(line) + "): error: identifier \"undeclared\""), error.what());
  }
}

TEST_CASE("launch attributes: code without PDL, or including the runtime header itself, is left as it is") {
  const RawKernel plain("extern \"C\" __global__ void k(float* x) { x[0] = 1; }", "k");
  CHECK(kernc::program(plain).options.headers.count("kernc/grid_dependency_bridge.cuh") == 0);
  const RawModule own(std::string("#include <cuda_device_runtime_api.h>\n") + kPdlPair);
  CHECK(kernc::program(own).options.headers.count("kernc/grid_dependency_bridge.cuh") == 0);
}
