// RawKernel and RawModule on a GPU: kernels found by name and by name expression,
// __constant__ and __device__ globals, function attributes, large dynamic shared memory,
// launch-configuration and argument errors, compile errors at first use, streams and events.

#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {
namespace {

using Shape = std::vector<std::int64_t>;

// One translation unit with two extern "C" kernels, a template, and two globals.
const char* const kModuleCode = R"(
extern "C" __global__ void gpu_add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

extern "C" __global__ void gpu_multiply(const float* a, const float* b, float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * b[i];
}

template <class T>
__global__ void gpu_scale(T* x, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

__constant__ float gpu_coefficients[16];
__device__ unsigned long long gpu_hits;

extern "C" __global__ void gpu_apply_coefficients(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * gpu_coefficients[i % 16];
}

extern "C" __global__ void gpu_count_hits() { atomicAdd(&gpu_hits, 1ull); }
)";

RawModule make_module() { return RawModule(kModuleCode, {}, {"gpu_scale<float>", "gpu_scale<double>"}, "gpu_module"); }

LaunchConfig config_for(std::int64_t n, unsigned block = 256) {
  LaunchConfig config;
  config.block[0] = block;
  config.grid[0] = static_cast<unsigned>((n + block - 1) / block);
  return config;
}

}  // namespace

TEST_CASE("RawModule::launch runs extern \"C\" kernels and template instances found by name expression") {
  KERNC_GPU_RANDOM(random, "raw module");
  const RawModule module = make_module();
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{1001}, std::int64_t{3'000'017}}) {
    CAPTURE(n);
    const int count = static_cast<int>(n);
    const auto a = random.uniform<float>(n);
    const auto b = random.uniform<float>(n);
    auto da = upload(DType::float32, {n}, a);
    const auto db = upload(DType::float32, {n}, b);

    module.launch("gpu_add_one", config_for(n), {da, count});
    std::vector<float> a1(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) a1[i] = a[i] + 1.0f;
    expect_equal(download<float>(da), a1, "gpu_add_one");

    auto out = poisoned(DType::float32, {n});
    module.launch("gpu_multiply", config_for(n), {da, db, out, n});
    std::vector<float> product(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) product[i] = a1[i] * b[i];
    expect_equal(download<float>(out), product, "gpu_multiply");

    module.launch("gpu_scale<float>", config_for(n), {out, 0.5f, count});
    for (auto& v : product) v *= 0.5f;
    expect_equal(download<float>(out), product, "gpu_scale<float>");

    const auto d = random.uniform<double>(n);
    auto dd = upload(DType::float64, {n}, d);
    module.launch("gpu_scale<double>", config_for(n), {dd, -3.0, count});
    std::vector<double> scaled(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) scaled[i] = d[i] * -3.0;
    expect_equal(download<double>(dd), scaled, "gpu_scale<double>");
  }

  // get_function gives the same kernels for a launch through Function::launch itself.
  Function multiply = module.get_function("gpu_multiply");
  CHECK(multiply.valid());
  CHECK(multiply.name() == "gpu_multiply");
  Function scale = module.get_function("gpu_scale<float>");
  CHECK(scale.valid());
  CHECK(scale.name() != "gpu_scale<float>");  // the lowered (mangled) name
  const std::int64_t n = 1001;
  const auto a = random.uniform<float>(n);
  const auto b = random.uniform<float>(n);
  const auto da = upload(DType::float32, {n}, a);
  const auto db = upload(DType::float32, {n}, b);
  auto out = poisoned(DType::float32, {n});
  std::uint64_t pa = da.ref().data, pb = db.ref().data, pout = out.ref().data;
  long long count = n;
  void* args[] = {&pa, &pb, &pout, &count};
  multiply.launch(config_for(n), args);
  std::vector<float> product(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) product[i] = a[i] * b[i];
  expect_equal(download<float>(out), product, "Function::launch of gpu_multiply");
}

// On the host backend each program is a shared object loaded by name: a name that another
// loaded program still holds must not bring that program back (NOTE [ unique names of host
// programs ] in src/runtime/host_driver.cpp). Here six modules stay loaded at once, each
// with an extern "C" kernel of the same name that writes its own number.
TEST_CASE("RawKernels loaded one after another, all kept loaded, each run their own code") {
  KERNC_GPU_RANDOM(random, "raw distinct modules");
  const std::int64_t n = 300;
  auto out = poisoned(DType::int32, {n});
  std::vector<RawKernel> kernels;
  const int base = static_cast<int>(random.index(1000));
  for (int k = 0; k < 6; ++k) {
    kernels.emplace_back("extern \"C\" __global__ void gpu_put_number(int* out, int n) {\n"
                         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                         "  if (i < n) out[i] = " + std::to_string(base + k) + " + i;\n}\n",
                         "gpu_put_number");
    kernels.back()(config_for(n), {out, static_cast<int>(n)});  // loads module k, the others still loaded
  }
  for (int k = 5; k >= 0; --k) {
    CAPTURE(k);
    kernels[static_cast<std::size_t>(k)](config_for(n), {out, static_cast<int>(n)});
    std::vector<int> want(static_cast<std::size_t>(n));
    std::iota(want.begin(), want.end(), base + k);
    expect_equal(download<int>(out), want, "module " + std::to_string(k));
  }
}

TEST_CASE("RawModule::get_global gives __constant__ and __device__ memory that kernels read and write") {
  KERNC_GPU_RANDOM(random, "raw globals");
  const RawModule module = make_module();
  Device dev = device();
  auto [coefficients, coefficient_bytes] = module.get_global("gpu_coefficients");
  CHECK(coefficients != 0);
  CHECK(coefficient_bytes == 16 * sizeof(float));
  const auto c = random.uniform<float>(16, 0.5, 2.0);
  dev.copy_to_device(coefficients, c.data(), coefficient_bytes);
  dev.synchronize();
  std::vector<float> back(16);
  dev.copy_to_host(back.data(), coefficients, coefficient_bytes);
  expect_equal(back, c, "__constant__ memory read back");

  const std::int64_t n = 1001;
  const auto x = random.uniform<float>(n);
  const auto dx = upload(DType::float32, {n}, x);
  auto out = poisoned(DType::float32, {n});
  module.launch("gpu_apply_coefficients", config_for(n), {dx, out, static_cast<int>(n)});
  std::vector<float> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = x[i] * c[i % 16];
  expect_equal(download<float>(out), want, "x[i] * coefficients[i % 16]");

  auto [hits, hit_bytes] = module.get_global("gpu_hits");
  CHECK(hit_bytes == sizeof(unsigned long long));
  dev.fill_bytes(hits, 0, hit_bytes);
  LaunchConfig config;
  config.grid[0] = 7;
  config.grid[1] = 3;
  config.block[0] = 96;
  config.block[1] = 2;
  module.launch("gpu_count_hits", config, {});
  unsigned long long counted = 0;
  dev.copy_to_host(&counted, hits, sizeof counted);
  CHECK(counted == 7ull * 3 * 96 * 2);
}

// Each of these asks the driver something whose answer is an error code (a name the module
// lacks; the end of a parameter list): compute-sanitizer reports those as API errors, so
// tools/gpu-check --sanitize runs this suite with API error reports off.
TEST_CASE("RawModule names the kernel or global it lacks with not_found; parameter_sizes() finds the count itself" *
          doctest::test_suite("provokes driver errors")) {
  const RawModule module = make_module();
  KERNC_CHECK_ERROR(ErrorCode::not_found, "gpu_no_such_kernel", module.get_function("gpu_no_such_kernel"));
  KERNC_CHECK_ERROR(ErrorCode::not_found, "gpu_no_such_global", module.get_global("gpu_no_such_global"));
  const auto sizes = module.get_function("gpu_scale<double>").parameter_sizes();
  if (!sizes.empty()) CHECK(sizes == std::vector<std::size_t>{8, 8, 4});
}

TEST_CASE("Function::attributes reports registers, thread and shared-memory limits") {
  KERNC_GPU_RANDOM(random, "raw attributes");
  const RawModule module = make_module();
  for (const char* name : {"gpu_add_one", "gpu_multiply", "gpu_scale<double>", "gpu_apply_coefficients"}) {
    CAPTURE(name);
    const FunctionAttributes attributes = module.get_function(name).attributes();
    if (host_mode()) {
      skip_on_host("GPU-only property: the host reports no registers per thread", "registers");
    } else {
      CHECK(attributes.registers > 0);
      CHECK(attributes.registers <= 255);
    }
    CHECK(attributes.max_threads_per_block >= 256);
    CHECK(attributes.max_threads_per_block <= device().max_threads_per_block());
    CHECK(attributes.static_shared_bytes == 0);
    CHECK(attributes.local_bytes >= 0);
  }
  // The driver reports parameter sizes from CUDA 12.4 on.
  const auto sizes = module.get_function("gpu_scale<float>").parameter_sizes(3);  // its template declares 3
  if (sizes.empty()) {
    MESSAGE("this driver does not report parameter sizes (cuFuncGetParamInfo, CUDA 12.4+)");
  } else {
    CHECK(sizes == std::vector<std::size_t>{8, 4, 4});
  }
}

TEST_CASE("Function::set_max_dynamic_shared_bytes lets a kernel use more than 48 KiB of dynamic shared memory") {
  KERNC_GPU_RANDOM(random, "raw shared memory");
  Device dev = device();
  const int bytes = 96 * 1024;
  if (dev.max_shared_bytes_per_block_optin() < bytes) {
    MESSAGE("this GPU allows only " << dev.max_shared_bytes_per_block_optin() << " bytes of shared memory per block");
    return;
  }
  const RawKernel reverse(R"(
extern "C" __global__ void gpu_reverse_in_shared(const float* in, float* out, int n) {
  extern __shared__ float buffer[];
  const float* block_in = in + (long long)blockIdx.x * n;
  float* block_out = out + (long long)blockIdx.x * n;
  for (int k = threadIdx.x; k < n; k += blockDim.x) buffer[k] = block_in[k];
  __syncthreads();
  for (int k = threadIdx.x; k < n; k += blockDim.x) block_out[k] = buffer[n - 1 - k];
}
)",
                          "gpu_reverse_in_shared");
  const int per_block = bytes / static_cast<int>(sizeof(float));
  const int blocks = 5;
  const std::int64_t n = std::int64_t{per_block} * blocks;
  const auto x = random.uniform<float>(n);
  const auto dx = upload(DType::float32, {n}, x);
  auto out = poisoned(DType::float32, {n});
  LaunchConfig config;
  config.grid[0] = blocks;
  config.block[0] = 512;
  config.shared_bytes = static_cast<unsigned>(bytes);

  KERNC_CHECK_ERROR(ErrorCode::launch_config, "set_max_dynamic_shared_bytes", reverse(config, {dx, out, per_block}));

  Function function = reverse.function();
  function.set_max_dynamic_shared_bytes(bytes);
  CHECK(function.attributes().max_dynamic_shared_bytes == bytes);
  reverse(config, {dx, out, per_block});
  std::vector<float> want(x.size());
  for (std::int64_t b = 0; b < blocks; ++b) {
    for (std::int64_t k = 0; k < per_block; ++k) {
      want[static_cast<std::size_t>(b * per_block + k)] = x[static_cast<std::size_t>(b * per_block + per_block - 1 - k)];
    }
  }
  expect_equal(download<float>(out), want, "blocks reversed through 96 KiB of shared memory");

  const int limit = dev.max_shared_bytes_per_block_optin();
  KERNC_CHECK_ERROR(ErrorCode::launch_config, "allows at most", function.set_max_dynamic_shared_bytes(limit + 1));
  LaunchConfig too_much = config;
  too_much.shared_bytes = static_cast<unsigned>(limit + 1024);
  KERNC_CHECK_ERROR(ErrorCode::launch_config, "bytes of dynamic shared memory exceed the limit",
                    reverse(too_much, {dx, out, per_block}));
}

TEST_CASE("RawKernel::operator() rejects launch configurations beyond the device's limits with launch_config") {
  KERNC_GPU_RANDOM(random, "raw launch config");
  const RawKernel fill(R"(
extern "C" __global__ void gpu_fill_value(float* out, float value, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}
)",
                       "gpu_fill_value");
  const std::int64_t n = 4096;
  auto out = poisoned(DType::float32, {n});
  constexpr auto limit = ErrorCode::launch_config;

  LaunchConfig big_block = config_for(n);
  big_block.block[0] = 2048;
  KERNC_CHECK_ERROR(limit, "block.x = 2048 exceeds the device limit", fill(big_block, {out, 1.0f, n}));
  LaunchConfig too_many_threads = config_for(n);
  too_many_threads.block[0] = 64;
  too_many_threads.block[1] = 32;  // 2048 threads, each axis within its own limit
  KERNC_CHECK_ERROR(limit, "threads per block exceed the device limit", fill(too_many_threads, {out, 1.0f, n}));
  LaunchConfig no_grid = config_for(n);
  no_grid.grid[0] = 0;
  KERNC_CHECK_ERROR(limit, "must be at least 1", fill(no_grid, {out, 1.0f, n}));
  LaunchConfig no_block = config_for(n);
  no_block.block[2] = 0;
  KERNC_CHECK_ERROR(limit, "must be at least 1", fill(no_block, {out, 1.0f, n}));
  LaunchConfig tall_grid = config_for(n);
  tall_grid.grid[1] = 70000;  // grid.y is at most 65535
  KERNC_CHECK_ERROR(limit, "grid.y = 70000 exceeds the device limit", fill(tall_grid, {out, 1.0f, n}));
  LaunchConfig shared = config_for(n);
  shared.shared_bytes = static_cast<unsigned>(device().max_shared_bytes_per_block_optin()) + 4096;
  KERNC_CHECK_ERROR(limit, "exceed the limit", fill(shared, {out, 1.0f, n}));
  std::vector<std::int64_t> every(static_cast<std::size_t>(n));
  std::iota(every.begin(), every.end(), 0);
  expect_untouched(download<float>(out), every, "rejected launches (nothing may run)");

  // A valid launch after all that: the value arrives, a float64 scalar converted to float.
  fill(config_for(n), {out, 2.5, n});
  expect_equal(download<float>(out), std::vector<float>(static_cast<std::size_t>(n), 2.5f), "fill with 2.5");
}

TEST_CASE("RawKernel and RawModule check argument counts and scalar widths with invalid_argument") {
  KERNC_GPU_RANDOM(random, "raw arguments");
  const RawModule module = make_module();
  const std::int64_t n = 1001;
  auto x = upload(DType::float32, {n}, random.uniform<float>(n));
  auto xd = upload(DType::float64, {n}, random.uniform<double>(n));
  constexpr auto invalid = ErrorCode::invalid_argument;

  KERNC_CHECK_ERROR(invalid, "takes 2 argument(s), 1 given", module.launch("gpu_add_one", config_for(n), {x}));
  KERNC_CHECK_ERROR(invalid, "takes 2 argument(s), 3 given", module.launch("gpu_add_one", config_for(n), {x, 1, 2}));
  KERNC_CHECK_ERROR(invalid, "is an array but parameter", module.launch("gpu_add_one", config_for(n), {x, x}));
  KERNC_CHECK_ERROR(invalid, "is a scalar but parameter", module.launch("gpu_add_one", config_for(n), {1.0f, 1}));

  const RawKernel fill(R"(
extern "C" __global__ void gpu_fill_checked(float* out, float value, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}
)",
                       "gpu_fill_checked");
  KERNC_CHECK_ERROR(invalid, "takes 3 argument(s), 2 given", fill(config_for(n), {x, 1.0f}));

  // Template instances are read from their template with the instance's arguments in place
  // of its type parameters (`T factor` of gpu_scale<float> is a float): counts and kinds are
  // checked, scalars converted, integers range-checked, as for a declared kernel.
  KERNC_CHECK_ERROR(invalid, "takes 3 argument(s), 2 given", module.launch("gpu_scale<double>", config_for(n), {xd, 2.0}));
  KERNC_CHECK_ERROR(invalid, "is a scalar but parameter", module.launch("gpu_scale<float>", config_for(n), {1.0f, 2.0, 5}));
  KERNC_CHECK_ERROR(invalid, "is out of bounds for int32 parameter \"int n\"",
                    module.launch("gpu_scale<double>", config_for(n), {xd, 2.0, std::int64_t{1} << 40}));
  const auto host = download<float>(x);
  module.launch("gpu_scale<float>", config_for(n), {x, 2.0, static_cast<long long>(n)});  // 2.0 as float, n as int
  std::vector<float> twice(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) twice[i] = host[i] * 2.0f;
  expect_equal(download<float>(x), twice, "gpu_scale<float> with a double factor and a long long count");
}

TEST_CASE("RawKernel reports code that does not compile as compile_failed at the first call, not at construction") {
  KERNC_GPU_RANDOM(random, "raw compile error");
  std::optional<RawKernel> broken;
  CHECK_NOTHROW(broken.emplace(R"(
extern "C" __global__ void gpu_broken(float* x) { x[0] = gpu_this_name_is_not_declared; }
)",
                               "gpu_broken"));
  REQUIRE(broken);
  auto x = upload(DType::float32, {1}, random.uniform<float>(1));
  for (int attempt = 0; attempt < 2; ++attempt) {
    CAPTURE(attempt);
    bool thrown = false;
    try {
      (*broken)(config_for(1), {x});
    } catch (const Error& error) {
      thrown = true;
      CHECK(error.code() == ErrorCode::compile_failed);
      REQUIRE(error.compile_failure() != nullptr);
      CHECK(contains(error.compile_failure()->log, "gpu_this_name_is_not_declared"));
      CHECK(contains(error.compile_failure()->source, "gpu_broken"));
      CHECK(error.compile_failure()->target == device().target().str());
    }
    CHECK(thrown);
  }
  KERNC_CHECK_ERROR(ErrorCode::compile_failed, "", broken->function());
}

TEST_CASE("RawKernel and ElementwiseKernel launch on a created Stream, ordered with copies on that stream") {
  KERNC_GPU_RANDOM(random, "raw streams");
  Device dev = device();
  Stream stream = dev.create_stream();
  const RawModule module = make_module();
  const ElementwiseKernel twice("T x", "T y", "y = x * 2", "gpu_stream_twice");
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    const auto x = random.uniform<float>(n);
    auto dx = DeviceArray::from_host(dev, DType::float32, {n}, x.data(), stream);
    LaunchConfig config = config_for(n);
    config.stream = stream;
    module.launch("gpu_add_one", config, {dx, static_cast<int>(n)});
    CallOptions options;
    options.stream = stream;
    auto y = twice({dx}, {}, options);
    stream.synchronize();
    std::vector<float> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = (x[i] + 1.0f) * 2.0f;
    expect_equal(download<float>(y[0], stream), want, "(x + 1) * 2 on a stream");

    // CallOptions::stream reaches a raw launch whose config names no stream.
    LaunchConfig plain = config_for(n);
    CallOptions on_stream;
    on_stream.stream = stream;
    module.launch("gpu_add_one", plain, {y[0], static_cast<int>(n)}, on_stream);
    dev.synchronize(stream);
    for (auto& v : want) v += 1.0f;
    expect_equal(download<float>(y[0], stream), want, "+ 1 through CallOptions::stream");
  }
}

TEST_CASE("Event::elapsed_ms_since times a kernel on a stream") {
  KERNC_GPU_RANDOM(random, "raw events");
  Device dev = device();
  Stream stream = dev.create_stream();
  const RawKernel spin(R"(
extern "C" __global__ void gpu_spin(long long cycles, unsigned long long* sink) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
  if (threadIdx.x == 0 && blockIdx.x == 0) *sink = (unsigned long long)(clock64() - start);
}
)",
                       "gpu_spin");
  auto sink = DeviceArray::empty(dev, DType::uint64, {1});
  Event start = dev.create_event();
  Event stop = dev.create_event();
  LaunchConfig config;
  config.block[0] = 32;
  config.stream = stream;
  start.record(stream);
  spin(config, {1'000'000LL, sink});  // about a millisecond at 1-2 GHz
  stop.record(stream);
  stop.synchronize();
  const float ms = stop.elapsed_ms_since(start);
  CHECK(ms > 0.0f);
  CHECK(ms < 10'000.0f);
  CHECK(download<std::uint64_t>(sink)[0] >= 1'000'000u);
}

}  // namespace kernc::gpu_test
