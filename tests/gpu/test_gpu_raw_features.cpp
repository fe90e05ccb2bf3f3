// CuPy RawKernel/RawModule features on a GPU (issue 13, item 3): cooperative launches whose
// grid.sync() orders work across blocks (CuPy's enable_cooperative_groups), function
// attributes read and set (CuPy's RawKernel attributes, max_dynamic_shared_size_bytes and
// preferred_shared_memory_carveout), and <cuComplex.h> code (CuPy's translate_cucomplex)
// compared with std::complex on the host. tests/unit/test_cupy_raw_features.cpp and
// test_runtime_function.cpp check the same without a GPU.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {
namespace {

// Phase one: every block adds its share of x into partial[block]; grid.sync(); phase two:
// thread 0 of the grid adds the partial sums in block order. Without a grid-wide barrier
// thread 0 would read partial sums that are not complete.
const char* const kGridSumCode = R"(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void gpu_grid_sum(const double* x, double* partial, double* total, long long n) {
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

// CuPy's own grid-sync test, in kernc's words: the second loop runs backwards, so each
// element is finished by another block than the one that started it.
const char* const kGridPairCode = R"(
#include <cooperative_groups.h>

extern "C" __global__ void gpu_grid_pair(const float* x1, const float* x2, float* y, int n) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  int size = gridDim.x * blockDim.x;
  int tid = blockDim.x * blockIdx.x + threadIdx.x;
  for (int i = tid; i < n; i += size) y[i] = x1[i];
  cg::sync(grid);
  for (int i = n - 1 - tid; i >= 0; i -= size) y[i] += x2[i];
}
)";

LaunchConfig cooperative_config(unsigned grid, unsigned block) {
  LaunchConfig config;
  config.grid[0] = grid;
  config.block[0] = block;
  config.cooperative = true;
  return config;
}

// The largest cooperative grid of `block`-thread blocks for `function` on the test GPU.
unsigned resident_blocks(const Function& function, int block, std::size_t shared = 0) {
  return static_cast<unsigned>(function.max_active_blocks_per_multiprocessor(block, shared) * device().multiprocessors());
}

}  // namespace

TEST_CASE("RawKernel with LaunchConfig::cooperative: grid.sync() orders a grid-wide two-phase sum") {
  KERNC_GPU_RANDOM(random, "cooperative grid sum");
  if (!device().supports_cooperative_launch()) {
    MESSAGE("this GPU cannot launch cooperatively");
    return;
  }
  const RawKernel grid_sum(kGridSumCode, "gpu_grid_sum");
  const int block = 256;
  const unsigned resident = resident_blocks(grid_sum.function(), block);
  REQUIRE(resident >= static_cast<unsigned>(device().multiprocessors()));
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    const auto x = random.uniform<double>(n);
    const auto dx = upload(DType::float64, {n}, x);
    // Every block the GPU can hold at once, and a small grid: both must wait for all blocks.
    for (unsigned grid : {resident, std::min<unsigned>(3, resident)}) {
      CAPTURE(grid);
      auto partial = DeviceArray::empty(device(), DType::float64, {static_cast<std::int64_t>(grid)});
      device().fill_bytes(partial.ref().data, 0, grid * sizeof(double));
      auto total = poisoned(DType::float64, {1});
      grid_sum(cooperative_config(grid, block), {dx, partial, total, n});
      const auto parts = download<double>(partial);
      double in_order = 0;
      for (double p : parts) in_order += p;
      // The kernel adds the parts in the same order: equal bit for bit when every part was done.
      expect_equal(download<double>(total), std::vector<double>{in_order}, "total = the parts added in block order");
      double want = 0, scale = 0;
      for (double v : x) {
        want += v;
        scale += std::fabs(v);
      }
      expect_close(download<double>(total), {want}, 1e-12, "grid-wide sum", {scale});
    }
  }
}

TEST_CASE("RawModule::launch with LaunchConfig::cooperative runs CuPy's grid-sync test") {
  KERNC_GPU_RANDOM(random, "cooperative grid pair");
  if (!device().supports_cooperative_launch()) {
    MESSAGE("this GPU cannot launch cooperatively");
    return;
  }
  const RawModule module(kGridPairCode, {}, {}, "gpu_grid_pair_module");
  const int block = 128;
  const unsigned resident = resident_blocks(module.get_function("gpu_grid_pair"), block);
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    const auto x1 = random.uniform<float>(n);
    const auto x2 = random.uniform<float>(n);
    const auto d1 = upload(DType::float32, {n}, x1);
    const auto d2 = upload(DType::float32, {n}, x2);
    auto y = poisoned(DType::float32, {n});
    const unsigned needed = static_cast<unsigned>((n + block - 1) / block);
    module.launch("gpu_grid_pair", cooperative_config(std::min(needed, resident), block), {d1, d2, y, static_cast<int>(n)});
    std::vector<float> want(x1.size());
    for (std::size_t i = 0; i < want.size(); ++i) want[i] = x1[i] + x2[i];
    expect_equal(download<float>(y), want, "y = x1, grid.sync(), y += x2 in reverse");
  }
}

TEST_CASE("a cooperative grid larger than the GPU can hold at once is a launch_config error naming the limit") {
  KERNC_GPU_RANDOM(random, "cooperative too large");
  if (!device().supports_cooperative_launch()) {
    MESSAGE("this GPU cannot launch cooperatively");
    return;
  }
  const RawModule module(kGridPairCode, {}, {}, "gpu_grid_pair_module");
  const Function function = module.get_function("gpu_grid_pair");
  const int block = 256;
  const unsigned per_multiprocessor = static_cast<unsigned>(function.max_active_blocks_per_multiprocessor(block));
  const unsigned resident = per_multiprocessor * static_cast<unsigned>(device().multiprocessors());
  const std::int64_t n = 4096;
  const auto x = upload(DType::float32, {n}, random.uniform<float>(n));
  auto y = poisoned(DType::float32, {n});
  const std::string limit = "exceeds the " + std::to_string(resident) + " that can be resident at once on " +
                            device().name() + ": " + std::to_string(per_multiprocessor) + " per multiprocessor x " +
                            std::to_string(device().multiprocessors()) + " multiprocessors";
  KERNC_CHECK_ERROR(ErrorCode::launch_config, limit,
                    module.launch("gpu_grid_pair", cooperative_config(resident + 1, block), {x, x, y, static_cast<int>(n)}));
  LaunchConfig tall = cooperative_config(resident, block);
  tall.grid[1] = 2;
  KERNC_CHECK_ERROR(ErrorCode::launch_config, std::to_string(2ull * resident) + " blocks (grid",
                    module.launch("gpu_grid_pair", tall, {x, x, y, static_cast<int>(n)}));
  std::vector<std::int64_t> every(static_cast<std::size_t>(n));
  std::iota(every.begin(), every.end(), 0);
  expect_untouched(download<float>(y), every, "refused cooperative launches (nothing may run)");
}

namespace {

// Static shared memory (a 1024-float tile) plus dynamic shared memory: each block copies
// its part of `in` through both and writes it reversed.
const char* const kSharedCode = R"(
extern "C" __global__ void gpu_reverse_through_shared(const float* in, float* out, int per_block) {
  __shared__ float tile[1024];
  extern __shared__ float dynamic[];
  const float* block_in = in + (long long)blockIdx.x * per_block;
  float* block_out = out + (long long)blockIdx.x * per_block;
  for (int k = threadIdx.x; k < per_block; k += blockDim.x) dynamic[k] = block_in[k];
  for (int k = threadIdx.x; k < 1024; k += blockDim.x) tile[k] = k < per_block ? block_in[k] : 0.0f;
  __syncthreads();
  for (int k = threadIdx.x; k < per_block; k += blockDim.x) {
    block_out[k] = dynamic[per_block - 1 - k] + (k < 1024 ? tile[k] - block_in[k] : 0.0f);
  }
}
)";

}  // namespace

TEST_CASE("Function::attributes reports CuPy's attributes: versions, cache mode, carveout") {
  KERNC_GPU_ONLY("GPU-only properties: PTX and binary versions of a cubin, the -Xptxas cache mode");
  KERNC_GPU_RANDOM(random, "raw attribute versions");
  Device dev = device();
  // A define of its own: a program (so a module and CUfunction) no other test sets attributes on.
  CompileOptions fresh;
  fresh.defines["KERNC_GPU_ATTRIBUTES_TEST"] = "";
  const RawKernel kernel(kSharedCode, "gpu_reverse_through_shared", fresh);
  const FunctionAttributes a = kernel.function().attributes();
  CHECK(a.registers > 0);
  CHECK(a.static_shared_bytes >= 1024 * static_cast<int>(sizeof(float)));
  CHECK(a.max_threads_per_block > 0);
  CHECK(a.local_bytes >= 0);
  CHECK(a.const_bytes >= 0);
  CHECK(a.ptx_version >= 70);  // PTX ISA 7.0 came with CUDA 11.0
  CHECK(a.binary_version / 10 == dev.compute_capability() / 10);  // a cubin of the GPU's major
  CHECK(a.binary_version <= dev.compute_capability());
  CHECK(a.cache_mode_ca == 0);
  CHECK(a.preferred_shared_carveout == -1);  // no preference until one is set

  CompileOptions ca = fresh;
  ca.raw_flags = {"-Xptxas=-dlcm=ca"};  // CuPy's cache_mode_ca reports this flag
  const RawKernel cached(kSharedCode, "gpu_reverse_through_shared", ca);
  const int mode = cached.function().attributes().cache_mode_ca;
  CHECK((mode == 0 || mode == 1));
  WARN_MESSAGE(mode == 1, "cache_mode_ca is " << mode << " for a kernel compiled with -Xptxas=-dlcm=ca");
}

TEST_CASE("Function::set_preferred_shared_carveout and set_max_dynamic_shared_bytes are read back and used") {
  KERNC_GPU_RANDOM(random, "raw carveout");
  Device dev = device();
  const RawKernel kernel(kSharedCode, "gpu_reverse_through_shared");
  const Function function = kernel.function();
  for (int percent : {0, 25, 50, 100, -1}) {
    CAPTURE(percent);
    function.set_preferred_shared_carveout(percent);
    CHECK(function.attributes().preferred_shared_carveout == percent);
  }
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "give a percentage from 0", function.set_preferred_shared_carveout(101));
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "or -1 for no preference", function.set_preferred_shared_carveout(-2));

  // The whole opt-in limit less the kernel's static shared memory can be dynamic, and a
  // launch with exactly that much runs (with the carveout at "most shared memory").
  const int static_bytes = function.attributes().static_shared_bytes;
  const int optin = dev.max_shared_bytes_per_block_optin();
  const int allowed = optin - static_bytes;
  function.set_preferred_shared_carveout(100);
  function.set_max_dynamic_shared_bytes(allowed);
  CHECK(function.attributes().max_dynamic_shared_bytes == allowed);
  const int per_block = allowed / static_cast<int>(sizeof(float));
  for (int blocks : {1, 7}) {
    CAPTURE(blocks);
    const std::int64_t n = std::int64_t{per_block} * blocks;
    const auto x = random.uniform<float>(n);
    const auto dx = upload(DType::float32, {n}, x);
    auto out = poisoned(DType::float32, {n});
    LaunchConfig config;
    config.grid[0] = static_cast<unsigned>(blocks);
    config.block[0] = 256;
    config.shared_bytes = static_cast<unsigned>(per_block * static_cast<int>(sizeof(float)));
    kernel(config, {dx, out, per_block});
    std::vector<float> want(x.size());
    for (std::int64_t b = 0; b < blocks; ++b) {
      for (std::int64_t k = 0; k < per_block; ++k) {
        const auto at = static_cast<std::size_t>(b * per_block + k);
        const float reversed = x[static_cast<std::size_t>(b * per_block + per_block - 1 - k)];
        want[at] = k < 1024 ? reversed + (x[at] - x[at]) : reversed;
      }
    }
    expect_equal(download<float>(out), want, "blocks reversed through static and dynamic shared memory");
  }

  // One byte more is refused before the driver sees it, naming the device's limit and the
  // kernel's static shared memory.
  KERNC_CHECK_ERROR(ErrorCode::launch_config,
                    "allows at most " + std::to_string(optin) + " bytes of shared memory per block, and the kernel's "
                        "static shared memory takes " + std::to_string(static_bytes) + ", so at most " +
                        std::to_string(allowed) + " can be dynamic",
                    function.set_max_dynamic_shared_bytes(allowed + 1));
  CHECK(function.attributes().max_dynamic_shared_bytes == allowed);
  function.set_preferred_shared_carveout(-1);
}

namespace {

// CuPy's test_raw.py cuComplex cases, in kernc's words: <cuComplex.h> as NVIDIA ships it.
const char* const kCuComplexCode = R"(
#include <cuComplex.h>

extern "C" __global__ void gpu_cucomplex_double(const cuDoubleComplex* a, const cuDoubleComplex* b, cuDoubleComplex s,
                                                cuDoubleComplex* sum, cuDoubleComplex* prod, cuDoubleComplex* quot,
                                                double* mag, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) {
    sum[i] = cuCadd(cuCsub(a[i], b[i]), s);
    prod[i] = cuCmul(a[i], cuConj(b[i]));
    quot[i] = cuCdiv(a[i], b[i]);
    mag[i] = cuCabs(a[i]);
  }
}

extern "C" __global__ void gpu_cucomplex_float(const cuFloatComplex* a, const cuFloatComplex* b, cuComplex s,
                                               cuFloatComplex* sum, cuFloatComplex* fma, cuFloatComplex* quot,
                                               float* mag, cuDoubleComplex* wide, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) {
    sum[i] = cuCaddf(cuCsubf(a[i], b[i]), s);
    fma[i] = cuCfmaf(a[i], cuConjf(b[i]), s);
    quot[i] = cuCdivf(a[i], make_cuFloatComplex(cuCrealf(b[i]), cuCimagf(b[i])));
    mag[i] = cuCabsf(a[i]);
    wide[i] = cuComplexFloatToDouble(a[i]);
  }
}
)";

template <class T>
std::vector<std::complex<T>> random_complex_values(Random& random, std::int64_t n) {
  const auto re = random.uniform<T>(n, -2.0, 2.0);
  const auto im = random.uniform<T>(n, -2.0, 2.0);
  std::vector<std::complex<T>> out(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = {re[k], im[k]};
  return out;
}

// Real and imaginary parts of `got` against `want`, each relative to |want| (complex
// rounding errors are relative to the magnitude, not to each part).
template <class T>
void expect_close_complex(const std::vector<std::complex<T>>& got, const std::vector<std::complex<T>>& want, double rtol,
                          const std::string& what) {
  REQUIRE(got.size() == want.size());
  std::vector<double> got_re, got_im, want_re, want_im, scale;
  for (std::size_t k = 0; k < got.size(); ++k) {
    got_re.push_back(got[k].real());
    got_im.push_back(got[k].imag());
    want_re.push_back(want[k].real());
    want_im.push_back(want[k].imag());
    scale.push_back(std::abs(std::complex<double>(want[k])));
  }
  expect_close(got_re, want_re, rtol, what + " (real part)", scale);
  expect_close(got_im, want_im, rtol, what + " (imaginary part)", scale);
}

template <class T>
std::vector<T> parts(const std::vector<std::complex<T>>& values) {
  std::vector<T> out;
  for (const auto& v : values) {
    out.push_back(v.real());
    out.push_back(v.imag());
  }
  return out;
}

}  // namespace

TEST_CASE("RawModule code using <cuComplex.h> matches std::complex (CuPy's translate_cucomplex, not needed)") {
  KERNC_GPU_ONLY("the toolkit header <cuComplex.h>: the host compiler has no CUDA toolkit headers");
  KERNC_GPU_RANDOM(random, "cucomplex");
  const RawModule module(kCuComplexCode, {}, {}, "gpu_cucomplex");
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    const LaunchConfig config = [n] {
      LaunchConfig c;
      c.block[0] = 256;
      c.grid[0] = static_cast<unsigned>((n + 255) / 256);
      return c;
    }();

    // complex128: cuDoubleComplex arrays are complex128 arrays; the scalar converts.
    const auto a = random_complex_values<double>(random, n);
    const auto b = random_complex_values<double>(random, n);
    const double s_re = random.uniform<double>(1)[0];
    const double s_im = random.uniform<double>(1)[0];
    const std::complex<double> s(s_re, s_im);
    const auto da = upload(DType::complex128, {n}, a);
    const auto db = upload(DType::complex128, {n}, b);
    auto sum = poisoned(DType::complex128, {n});
    auto prod = poisoned(DType::complex128, {n});
    auto quot = poisoned(DType::complex128, {n});
    auto mag = poisoned(DType::float64, {n});
    module.launch("gpu_cucomplex_double", config, {da, db, s, sum, prod, quot, mag, n});
    std::vector<std::complex<double>> want_sum, want_prod, want_quot;
    std::vector<double> want_mag;
    for (std::size_t k = 0; k < a.size(); ++k) {
      want_sum.push_back(a[k] - b[k] + s);
      want_prod.push_back(a[k] * std::conj(b[k]));
      want_quot.push_back(a[k] / b[k]);
      want_mag.push_back(std::abs(a[k]));
    }
    expect_equal(parts(download<std::complex<double>>(sum)), parts(want_sum), "cuCadd(cuCsub(a, b), s)");
    // A few roundings apart (the device contracts to fma, cuCdiv and cuCabs scale first).
    expect_close_complex(download<std::complex<double>>(prod), want_prod, 1e-14, "cuCmul(a, cuConj(b))");
    expect_close_complex(download<std::complex<double>>(quot), want_quot, 1e-14, "cuCdiv(a, b)");
    expect_close(download<double>(mag), want_mag, 1e-14, "cuCabs(a)");

    // complex64, with a complex128 scalar converted to the declared cuComplex.
    const auto af = random_complex_values<float>(random, n);
    const auto bf = random_complex_values<float>(random, n);
    const std::complex<float> sf(s);
    const auto daf = upload(DType::complex64, {n}, af);
    const auto dbf = upload(DType::complex64, {n}, bf);
    auto sumf = poisoned(DType::complex64, {n});
    auto fmaf = poisoned(DType::complex64, {n});
    auto quotf = poisoned(DType::complex64, {n});
    auto magf = poisoned(DType::float32, {n});
    auto wide = poisoned(DType::complex128, {n});
    module.launch("gpu_cucomplex_float", config, {daf, dbf, s, sumf, fmaf, quotf, magf, wide, n});
    // References in double precision, but the exact ones (a - b + s, the widening) in float.
    std::vector<std::complex<float>> want_sumf;
    std::vector<std::complex<double>> want_fmaf, want_quotf, want_wide;
    std::vector<double> want_magf;
    for (std::size_t k = 0; k < af.size(); ++k) {
      const std::complex<double> x(af[k]), y(bf[k]);
      want_sumf.push_back(af[k] - bf[k] + sf);
      want_fmaf.push_back(x * std::conj(y) + std::complex<double>(sf));
      want_quotf.push_back(x / y);
      want_magf.push_back(std::abs(x));
      want_wide.push_back(x);
    }
    expect_equal(parts(download<std::complex<float>>(sumf)), parts(want_sumf), "cuCaddf(cuCsubf(a, b), s)");
    // The fma's terms can cancel: bound its error by the size of a * conj(b) and s, not the result.
    {
      const auto got = download<std::complex<float>>(fmaf);
      std::vector<double> got_re, got_im, want_re, want_im, scale;
      for (std::size_t k = 0; k < got.size(); ++k) {
        got_re.push_back(got[k].real());
        got_im.push_back(got[k].imag());
        want_re.push_back(want_fmaf[k].real());
        want_im.push_back(want_fmaf[k].imag());
        scale.push_back(std::abs(std::complex<double>(af[k])) * std::abs(std::complex<double>(bf[k])) + std::abs(sf));
      }
      expect_close(got_re, want_re, 1e-5, "cuCfmaf (real part)", scale);
      expect_close(got_im, want_im, 1e-5, "cuCfmaf (imaginary part)", scale);
    }
    std::vector<std::complex<double>> got_quotf;
    for (const auto& q : download<std::complex<float>>(quotf)) got_quotf.emplace_back(q);
    expect_close_complex(got_quotf, want_quotf, 1e-5, "cuCdivf(a, b)");
    expect_close(as_doubles(download<float>(magf)), want_magf, 4e-6, "cuCabsf(a)");
    expect_equal(parts(download<std::complex<double>>(wide)), parts(want_wide), "cuComplexFloatToDouble(a)");
  }
}

}  // namespace kernc::gpu_test
