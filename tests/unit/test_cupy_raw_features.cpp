// CuPy RawKernel/RawModule features (issue 13, item 3), compile-only: <cuComplex.h> code
// (CuPy's translate_cucomplex) and cooperative-groups code (CuPy's
// enable_cooperative_groups) compiled by the real NVRTC as kernc compiles raw code. The
// GPU suite (tests/gpu/test_gpu_raw_features.cpp) runs the same kernels on data.

#include <doctest/doctest.h>

#include <string>

#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "kernc/runtime.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::DType;
using kernc::RawKernel;
using kernc::RawModule;
using kernc::Target;
using kernc::test::nvrtc;
using kernc::test::starts_with;

namespace {

// A CuPy RawKernel written against <cuComplex.h>, as translate_cucomplex=True serves it.
const char* const kCuComplexCode = R"(
#include <cuComplex.h>

extern "C" __global__ void cucomplex_double(const cuDoubleComplex* a, const cuDoubleComplex* b, cuDoubleComplex scale,
                                            cuDoubleComplex* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    cuDoubleComplex t = cuCadd(cuCmul(a[i], b[i]), cuCdiv(cuConj(a[i]), scale));
    out[i] = make_cuDoubleComplex(cuCreal(t) + cuCabs(b[i]), cuCimag(t));
  }
}

extern "C" __global__ void cucomplex_float(const cuFloatComplex* a, cuComplex* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    cuFloatComplex z = cuCsubf(cuCmulf(a[i], a[i]), make_cuFloatComplex(cuCabsf(a[i]), 0.5f));
    out[i] = cuComplexDoubleToFloat(cuCfma(cuComplexFloatToDouble(z), make_cuDoubleComplex(2.0, 0.0),
                                           make_cuDoubleComplex(0.0, 1.0)));
  }
}
)";

// A grid-wide two-phase sum: each block adds its part, grid.sync(), block 0 adds the parts.
const char* const kGridSumCode = R"(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void grid_sum(const double* x, double* partial, double* total, long long n) {
  cg::grid_group grid = cg::this_grid();
  double sum = 0;
  for (long long i = grid.thread_rank(); i < n; i += grid.size()) sum += x[i];
  atomicAdd(&partial[blockIdx.x], sum);
  grid.sync();
  if (grid.thread_rank() == 0) {
    double t = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) t += partial[b];
    *total = t;
  }
}
)";

// The ELF file type of a cubin: 2 (ET_EXEC) for a linked image the driver loads as is,
// 1 (ET_REL) for relocatable code that must first be linked (-rdc=true).
int elf_type(const std::string& binary) {
  REQUIRE(binary.size() > 18);
  return static_cast<unsigned char>(binary[16]) | static_cast<unsigned char>(binary[17]) << 8;
}

}  // namespace

TEST_CASE("CuPy port: a RawKernel using <cuComplex.h> compiles under NVRTC as is (translate_cucomplex)") {
  // The toolkit's include directory is given to NVRTC (src/compiler/toolkit_includes.cpp),
  // so NVIDIA's own cuComplex.h is found: no translation to another complex type is needed.
  REQUIRE_MESSAGE(!nvrtc().identity().include_dirs.empty(), "no CUDA toolkit include directory was found");
  for (const char* kernel : {"cucomplex_double", "cucomplex_float"}) {
    CAPTURE(kernel);
    const RawKernel raw(kCuComplexCode, kernel);
    auto compiled = nvrtc().compile(kernc::program(raw), Target::parse("sm_90"));
    CHECK(starts_with(compiled.binary, kernc::test::kElfMagic));
  }
  const RawModule module(kCuComplexCode, {}, {}, "cucomplex");
  auto ptx = nvrtc().compile(kernc::program(module), Target::parse("compute_80"));
  CHECK(kernc::test::contains(ptx.binary, ".entry cucomplex_double"));
  CHECK(kernc::test::contains(ptx.binary, ".entry cucomplex_float"));
}

TEST_CASE("CuPy port: cuComplex parameters are read as complex64 and complex128, so scalars convert to them") {
  const RawKernel raw(kCuComplexCode, "cucomplex_double");
  auto params = raw.parameters();
  REQUIRE(params);
  REQUIRE(params->size() == 5);
  CHECK((*params)[0].pointer);
  CHECK((*params)[0].const_pointee);
  CHECK((*params)[2].name == "scale");
  CHECK((*params)[2].dtype == DType::complex128);
  CHECK((*params)[4].dtype == DType::int32);
  const RawKernel typedefs(R"(#include <cuComplex.h>
extern "C" __global__ void k(cuFloatComplex a, cuComplex b, const cuDoubleComplex c) {})",
                           "k");
  auto declared = typedefs.parameters();
  REQUIRE(declared);
  REQUIRE(declared->size() == 3);
  CHECK((*declared)[0].dtype == DType::complex64);
  CHECK((*declared)[1].dtype == DType::complex64);
  CHECK((*declared)[2].dtype == DType::complex128);
}

TEST_CASE("CuPy port: grid.sync() compiles to a linked cubin: no relocatable code and no cudadevrt, unlike old CuPy") {
  // CuPy compiled cooperative kernels with -rdc and linked libcudadevrt until CUDA 11 made
  // that unnecessary (NOTE [ cooperative launch ], src/runtime/device.cpp): the cubin of an
  // ordinary compile is what cuLaunchCooperativeKernel runs, so the program and its cache key
  // are the same whether it is launched cooperatively or not.
  const RawKernel grid_sum(kGridSumCode, "grid_sum");
  for (const char* target : {"sm_80", "sm_90"}) {
    CAPTURE(target);
    auto compiled = nvrtc().compile(kernc::program(grid_sum), Target::parse(target));
    REQUIRE(starts_with(compiled.binary, kernc::test::kElfMagic));
    CHECK(elf_type(compiled.binary) == 2);
  }
  CHECK(kernc::program(grid_sum).options.raw_flags.empty());
}

TEST_CASE("runtime::LaunchConfig is not cooperative and FunctionAttributes' newer fields say -1 until set") {
  const kernc::LaunchConfig config;
  CHECK_FALSE(config.cooperative);
  const kernc::FunctionAttributes attributes;
  CHECK(attributes.ptx_version == -1);
  CHECK(attributes.binary_version == -1);
  CHECK(attributes.cache_mode_ca == -1);
  CHECK(attributes.preferred_shared_carveout == -1);
}
