// Every GPU of the machine (issue 32, part 5): every kernel kind on every GPU, one host
// thread per GPU, kept plans per GPU, a graph captured on GPU 1, calls given another GPU's
// arrays (refused before launch, the GPU usable after; allowed once peer access is on),
// and a fault on GPU 1 (in its own process: test suite "multi-GPU device fault", run by the
// ctest entry gpu_multi_device_fault): reported on GPU 1, and GPU 0 either usable or
// naming GPU 1's fault, which is what driver 580 leaves it.
//
// They need a second GPU: with one, each test case says so and returns, and the first
// prints "kernc multi-GPU tests: skipped: ..." (tools/gpu-check reports that line), or
// "kernc multi-GPU tests: ran on N GPUs" when they run. See NOTE [ arrays know their device ]
// in src/kernels/device_check.cpp for the checks.

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {
namespace {

// The machine's GPUs (at least two), or empty with `why` set. Says once, on stdout, whether
// the multi-GPU tests run.
std::vector<Device> all_gpus(std::string& why) {
  std::vector<Device> gpus;
  for (int ordinal = 0; ordinal < Engine::kDeviceSlots; ++ordinal) {
    try {
      gpus.push_back(Engine::global().device(ordinal));
    } catch (const Error& error) {
      if (error.code() != ErrorCode::no_device) throw;
      break;
    }
  }
  static bool said = false;
  if (gpus.size() < 2) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    why = "only " + std::to_string(gpus.size()) + " GPU visible to this process (CUDA_VISIBLE_DEVICES=" +
          (visible ? visible : "unset") + "); these tests need two";
    gpus.clear();
  }
  if (!said) {
    said = true;
    if (gpus.empty()) {
      std::printf("kernc multi-GPU tests: skipped: %s\n", why.c_str());
    } else {
      std::printf("kernc multi-GPU tests: ran on %zu GPUs:", gpus.size());
      for (const auto& gpu : gpus) std::printf(" [%d] %s", gpu.ordinal(), gpu.name().c_str());
      std::printf("\n");
    }
    std::fflush(stdout);
  }
  return gpus;
}

// Opens a multi-GPU test case: `gpus` holds every GPU, or the test case says why not and returns.
#define KERNC_MULTI_GPU(gpus)                                                                  \
  KERNC_GPU_ONLY("the host backend is one device; the multi-GPU tests need two GPUs");       \
  std::string kernc_multi_why_;                                                              \
  const std::vector<Device> gpus = all_gpus(kernc_multi_why_);                               \
  if (gpus.empty()) {                                                                        \
    MESSAGE("skipped: " << kernc_multi_why_);                                                \
    return;                                                                                  \
  }

CallOptions on_gpu(const Device& gpu) {
  CallOptions options;
  options.device = gpu.ordinal();
  return options;
}

const ElementwiseKernel& saxpy() {
  static const ElementwiseKernel kernel("T a, T x, T y", "T z", "z = a * x + y", "multi_saxpy");
  return kernel;
}
const ReductionKernel& sum() {
  static const ReductionKernel kernel("T x", "T y", "x", "a + b", "y = a", "0", "multi_sum");
  return kernel;
}
const RawKernel& raw_scale() {
  static const RawKernel kernel(
      "extern \"C\" __global__ void multi_scale(float a, const float* x, float* y, long long n) {\n"
      "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = a * x[i];\n}\n",
      "multi_scale");
  return kernel;
}

LaunchConfig multi_config_for(std::int64_t n, StreamRef stream = {}) {
  LaunchConfig config;
  config.block[0] = 256;
  config.grid[0] = static_cast<unsigned>((n + 255) / 256);
  config.stream = stream;
  return config;
}

std::vector<double> saxpy_reference(float a, const std::vector<float>& x, const std::vector<float>& y) {
  std::vector<double> want(x.size());
  for (std::size_t k = 0; k < x.size(); ++k) want[k] = static_cast<double>(std::fma(a, x[k], y[k]));
  return want;
}

// Row sums of a rows x cols matrix, and the scale each sum's rounding is measured against.
void row_sums(const std::vector<float>& m, std::int64_t rows, std::int64_t cols, std::vector<double>& want,
              std::vector<double>& scale) {
  want.assign(static_cast<std::size_t>(rows), 0.0);
  scale.assign(static_cast<std::size_t>(rows), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      want[r] += m[r * cols + c];
      scale[r] += std::fabs(m[r * cols + c]);
    }
  }
}

}  // namespace

TEST_CASE("multi-GPU: every kernel kind on every GPU matches the host reference") {
  KERNC_MULTI_GPU(gpus);
  KERNC_GPU_RANDOM(random, "multi-GPU kinds");
  for (const Device& gpu : gpus) {
    CAPTURE(gpu.ordinal());
    for (std::int64_t n : sizes()) {
      CAPTURE(n);
      const auto x = random.uniform<float>(n), y = random.uniform<float>(n);
      const float a = random.uniform<float>(1, 0.5, 2.0)[0];
      auto dx = DeviceArray::from_host(gpu, DType::float32, {n}, x.data());
      auto dy = DeviceArray::from_host(gpu, DType::float32, {n}, y.data());
      CHECK(dx.ref().device == gpu.id());
      auto z = saxpy()({a, dx, dy}, {}, on_gpu(gpu)).front();
      CHECK(z.device().ordinal() == gpu.ordinal());
      expect_close(as_doubles(z.to_host_vector<float>()), saxpy_reference(a, x, y), 0.0, "saxpy");

      auto w = DeviceArray::empty(gpu, DType::float32, {n});
      raw_scale()(multi_config_for(n), {a, dx, w, static_cast<long long>(n)}, on_gpu(gpu));
      std::vector<double> scaled(x.size());
      for (std::size_t k = 0; k < x.size(); ++k) scaled[k] = static_cast<double>(a * x[k]);
      expect_close(as_doubles(w.to_host_vector<float>()), scaled, 0.0, "raw scale");
    }
    const std::int64_t rows = 37, cols = 20'011;
    const auto m = random.uniform<float>(rows * cols);
    auto dm = DeviceArray::from_host(gpu, DType::float32, {rows, cols}, m.data());
    auto s = sum()({dm}, std::vector<int>{1}, false, {}, on_gpu(gpu)).front();
    std::vector<double> want, scale;
    row_sums(m, rows, cols, want, scale);
    expect_close(as_doubles(s.to_host_vector<float>()), want, 1e-5, "row sums", scale);
  }
}

TEST_CASE("multi-GPU: one host thread per GPU, 400 calls each, through operator() and kept plans") {
  KERNC_MULTI_GPU(gpus);
  KERNC_GPU_RANDOM(random, "multi-GPU threads");
  const std::int64_t n = 100'003, rows = 13, cols = 7'001;
  struct Work {
    std::vector<float> x, y, m;
    std::vector<float> z, s, w;  // results, read back by the thread
    std::string error;
  };
  std::vector<Work> work(gpus.size());
  for (auto& one : work) {
    one.x = random.uniform<float>(n);
    one.y = random.uniform<float>(n);
    one.m = random.uniform<float>(rows * cols);
  }
  std::vector<std::thread> threads;
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    threads.emplace_back([&, g] {
      Work& mine = work[g];
      const Device& gpu = gpus[g];
      try {
        auto dx = DeviceArray::from_host(gpu, DType::float32, {n}, mine.x.data());
        auto dy = DeviceArray::from_host(gpu, DType::float32, {n}, mine.y.data());
        auto dz = DeviceArray::empty(gpu, DType::float32, {n});
        auto dw = DeviceArray::empty(gpu, DType::float32, {n});
        auto dm = DeviceArray::from_host(gpu, DType::float32, {rows, cols}, mine.m.data());
        auto ds = DeviceArray::empty(gpu, DType::float32, {rows});
        CallOptions options = on_gpu(gpu);
        options.multiprocessors = gpu.multiprocessors();
        const Call kept_saxpy = saxpy().plan({1.0f, dx, dy}, {dz}, options);
        CallOptions by_row = options;
        by_row.axes = std::vector<int>{1};
        const Call kept_sum = sum().plan({dm}, {ds}, by_row);
        const Call kept_raw = raw_scale().plan(multi_config_for(n), {1.0f, dx, dw, static_cast<long long>(n)}, options);
        // 400 calls: a = 1 + k / 400 through alternate paths; the last call's a is 1.9975.
        for (int k = 0; k < 400; ++k) {
          const float a = 1.0f + static_cast<float>(k) / 400.0f;
          switch (k % 4) {
            case 0: saxpy()({a, dx, dy}, {dz}, on_gpu(gpu)); break;
            case 1: kept_saxpy.launch_into({a, dx, dy}, {dz}); break;
            case 2: kept_raw.launch_into({a, dx, dw, static_cast<long long>(n)}, {}); break;
            default: kept_sum.launch_into({dm}, {ds}); break;
          }
        }
        mine.z = dz.to_host_vector<float>();
        mine.w = dw.to_host_vector<float>();
        mine.s = ds.to_host_vector<float>();
      } catch (const std::exception& error) {
        mine.error = error.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    CAPTURE(g);
    const Work& mine = work[g];
    REQUIRE_MESSAGE(mine.error.empty(), "GPU " << g << ": " << mine.error);
    // The last saxpy was call 397 (k % 4 == 1), the last raw scale call 398.
    expect_close(as_doubles(mine.z), saxpy_reference(1.0f + 397.0f / 400.0f, mine.x, mine.y), 0.0, "saxpy");
    std::vector<double> scaled(mine.x.size());
    for (std::size_t k = 0; k < mine.x.size(); ++k) scaled[k] = static_cast<double>((1.0f + 398.0f / 400.0f) * mine.x[k]);
    expect_close(as_doubles(mine.w), scaled, 0.0, "raw scale");
    std::vector<double> want, scale;
    row_sums(mine.m, rows, cols, want, scale);
    expect_close(as_doubles(mine.s), want, 1e-5, "row sums", scale);
  }
}

TEST_CASE("multi-GPU: a graph captured on GPU 1 replays there with each replay's data") {
  KERNC_MULTI_GPU(gpus);
  KERNC_GPU_RANDOM(random, "multi-GPU graph");
  const Device& gpu = gpus[1];
  const std::int64_t n = 300'007;
  Stream stream = gpu.create_stream();
  auto x = DeviceArray::empty(gpu, DType::float32, {n});
  auto y = DeviceArray::empty(gpu, DType::float32, {n});
  auto z = DeviceArray::empty(gpu, DType::float32, {n});
  auto s = DeviceArray::empty(gpu, DType::float32, {});  // the sum of every element: 0-d
  CallOptions options = on_gpu(gpu);
  options.multiprocessors = gpu.multiprocessors();
  const Call plan = saxpy().plan({3.0f, x, y}, {z}, options);
  const Call total = sum().plan({z}, {s}, options);
  auto launch_all = [&] {
    plan.launch_into({3.0f, x, y}, {z}, stream);
    total.launch_into({z}, {s}, stream);
  };
  launch_all();  // loads the kernels on GPU 1 outside the capture
  stream.synchronize();
  gpu.begin_capture(stream);
  launch_all();
  Graph graph = gpu.end_capture(stream);
  REQUIRE(static_cast<bool>(graph));
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    const auto hx = random.uniform<float>(n), hy = random.uniform<float>(n);
    gpu.copy_to_device(x.ref().data, hx.data(), n * sizeof(float));
    gpu.copy_to_device(y.ref().data, hy.data(), n * sizeof(float));
    gpu.fill_bytes(z.ref().data, 0xff, n * sizeof(float));
    gpu.synchronize();
    graph.launch(stream);
    stream.synchronize();
    const auto want = saxpy_reference(3.0f, hx, hy);
    expect_close(as_doubles(z.to_host_vector<float>()), want, 0.0, "z after replay");
    double total_want = 0, total_scale = 0;
    for (double v : want) {
      total_want += v;
      total_scale += std::fabs(v);
    }
    expect_close(as_doubles(s.to_host_vector<float>()), {total_want}, 1e-5, "sum after replay", {total_scale});
  }
}

TEST_CASE("multi-GPU: a call given another GPU's arrays is refused before launch, and allowed with peer access") {
  KERNC_MULTI_GPU(gpus);
  KERNC_GPU_RANDOM(random, "multi-GPU cross-device");
  const Device &gpu0 = gpus[0], &gpu1 = gpus[1];
  const std::int64_t n = 1001;
  const auto x = random.uniform<float>(n), y = random.uniform<float>(n);
  auto x0 = DeviceArray::from_host(gpu0, DType::float32, {n}, x.data());
  auto y1 = DeviceArray::from_host(gpu1, DType::float32, {n}, y.data());
  auto z1 = DeviceArray::empty(gpu1, DType::float32, {n});
  const std::string expected = "argument \"x\" lives on cuda:0 but the call runs on cuda:1";
  // Every kind, one-shot and kept, DeviceArrays and raw addresses (looked up by the driver).
  const ArrayRef raw_x0 = ArrayRef::contiguous(x0.ref().data, DType::float32, {n});
  CHECK_FALSE(raw_x0.device.known());
  CHECK(gpu1.locate(x0.ref().data) == gpu0.id());
  try {
    saxpy()({2.0f, x0, y1}, {z1}, on_gpu(gpu1));
    FAIL("a call on GPU 1 took GPU 0's array");
  } catch (const Error& error) {
    MESSAGE("the cross-device call says: " << std::string(error.what()));
    CHECK(error.code() == ErrorCode::invalid_argument);
    CHECK(contains(error.what(), expected));
  }
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, expected, saxpy()({2.0f, raw_x0, y1}, {z1}, on_gpu(gpu1)));
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, expected, sum()({x0}, std::nullopt, false, {}, on_gpu(gpu1)));
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, expected,
                    raw_scale()(multi_config_for(n), {2.0f, x0, z1, static_cast<long long>(n)}, on_gpu(gpu1)));
  CallOptions options = on_gpu(gpu1);
  options.multiprocessors = gpu1.multiprocessors();
  const Call kept = saxpy().plan({2.0f, y1, y1}, {z1}, options);
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, expected, kept.launch_into({2.0f, raw_x0, y1}, {z1}));
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "output \"z\" lives on cuda:0 but the call runs on cuda:1",
                    kept.launch_into({2.0f, y1, y1}, {raw_x0}));
  // GPU 1 is unharmed: the right arrays give the right answer.
  gpu1.synchronize();
  auto x1 = DeviceArray::from_host(gpu1, DType::float32, {n}, x.data());
  kept.launch_into({2.0f, x1, y1}, {z1});
  expect_close(as_doubles(z1.to_host_vector<float>()), saxpy_reference(2.0f, x, y), 0.0, "GPU 1 after the refusals");

  // With peer access from GPU 1 to GPU 0, the same calls run and read GPU 0's memory.
  if (!gpu1.can_access_peer(gpu0)) {
    MESSAGE("skipped the peer-access part: the driver says GPU 1 cannot address GPU 0's memory");
    KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "is not possible", gpu1.enable_peer_access(gpu0));
    return;
  }
  gpu1.enable_peer_access(gpu0);
  gpu1.enable_peer_access(gpu0);  // idempotent
  CHECK(gpu1.peer_access_enabled(gpu0.id()));
  saxpy()({2.0f, x0, y1}, {z1}, on_gpu(gpu1));
  expect_close(as_doubles(z1.to_host_vector<float>()), saxpy_reference(2.0f, x, y), 0.0, "GPU 1 reading GPU 0");
  auto s1 = sum()({x0}, std::nullopt, false, {}, on_gpu(gpu1)).front();
  double want = 0, scale = 0;
  for (float v : x) {
    want += v;
    scale += std::fabs(v);
  }
  expect_close(as_doubles(s1.to_host_vector<float>()), {want}, 1e-5, "sum on GPU 1 of GPU 0's array", {scale});
  kept.launch_into({2.0f, raw_x0, y1}, {z1});
  expect_close(as_doubles(z1.to_host_vector<float>()), saxpy_reference(2.0f, x, y), 0.0, "kept plan, raw address");
  // One direction only: GPU 0 still refuses GPU 1's arrays unless enabled there too.
  if (!gpu0.peer_access_enabled(gpu1.id())) {
    KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "lives on cuda:1 but the call runs on cuda:0",
                      saxpy()({2.0f, y1, x0}, {}, on_gpu(gpu0)));
  }
}

// Whether GPU 0 survives is the driver's call: driver 580 on two H100s ends GPU 0's context
// too, as a bare CUDA program shows (NOTE [ sticky device faults ], src/runtime/cuda_driver.cpp).
// What kernc owes either way: GPU 1's fault named on GPU 1, and on GPU 0 either right
// answers or an error that says GPU 1 faulted first.
TEST_CASE("multi-GPU: a kernel fault on GPU 1 is reported there; GPU 0 runs or names GPU 1's fault" *
          doctest::test_suite("multi-GPU device fault") *
          doctest::skip()) {
  KERNC_MULTI_GPU(gpus);
  KERNC_GPU_RANDOM(random, "multi-GPU fault");
  const Device &gpu0 = gpus[0], &gpu1 = gpus[1];
  const RawKernel multi_fault("extern \"C\" __global__ void multi_null_write(float* x, unsigned long long address) {\n"
                        "  if (threadIdx.x == 0) reinterpret_cast<float*>(address)[blockIdx.x] = x[0];\n"
                        "}\n",
                        "multi_null_write");
  auto d1 = DeviceArray::empty(gpu1, DType::float32, {16});
  LaunchConfig config;
  config.grid[0] = 4;
  config.block[0] = 32;
  std::string first;
  // Unmapped memory 1 TiB past GPU 1's own allocation: a fault of GPU 1's memory system.
  const std::uint64_t unmapped = d1.ref().data + (std::uint64_t{1} << 40);
  try {
    multi_fault(config, {d1, unmapped}, on_gpu(gpu1));
    gpu1.synchronize();
    FAIL("a kernel writing to unmapped memory completed");
  } catch (const Error& error) {
    first = error.what();
    CHECK(error.code() == ErrorCode::device_fault);
    CHECK(contains(first, "GPU 1"));
  }
  KERNC_CHECK_ERROR(ErrorCode::device_fault, "GPU 1", saxpy()({1.0f, d1, d1}, {}, on_gpu(gpu1)));
  // GPU 0: every kind runs and gives the right answer, or the driver ended its context too.
  const std::int64_t n = 100'003;
  const auto x = random.uniform<float>(n), y = random.uniform<float>(n);
  try {
    auto x0 = DeviceArray::from_host(gpu0, DType::float32, {n}, x.data());
    auto y0 = DeviceArray::from_host(gpu0, DType::float32, {n}, y.data());
    auto z0 = saxpy()({1.5f, x0, y0}, {}, on_gpu(gpu0)).front();
    expect_close(as_doubles(z0.to_host_vector<float>()), saxpy_reference(1.5f, x, y), 0.0, "saxpy on GPU 0");
    auto w0 = DeviceArray::empty(gpu0, DType::float32, {n});
    raw_scale()(multi_config_for(n), {2.0f, x0, w0, static_cast<long long>(n)}, on_gpu(gpu0));
    std::vector<double> scaled(x.size());
    for (std::size_t k = 0; k < x.size(); ++k) scaled[k] = static_cast<double>(2.0f * x[k]);
    expect_close(as_doubles(w0.to_host_vector<float>()), scaled, 0.0, "raw scale on GPU 0");
    auto s0 = sum()({x0}, std::nullopt, false, {}, on_gpu(gpu0)).front();
    double want = 0, scale = 0;
    for (float v : x) {
      want += v;
      scale += std::fabs(v);
    }
    expect_close(as_doubles(s0.to_host_vector<float>()), {want}, 1e-5, "sum on GPU 0", {scale});
    MESSAGE("GPU 0 stayed usable after GPU 1's fault");
  } catch (const Error& error) {
    MESSAGE("the driver ended GPU 0's context with GPU 1's: " << std::string(error.what()));
    CHECK(error.code() == ErrorCode::device_fault);
    CHECK(contains(error.what(), "GPU 0"));
    CHECK(contains(error.what(), "GPU 1 faulted first in this process"));
    // And it stays that one error, not a driver error from an unrelated call.
    KERNC_CHECK_ERROR(ErrorCode::device_fault, "GPU 1 faulted first", DeviceArray::empty(gpu0, DType::float32, {16}));
  }
}

}  // namespace kernc::gpu_test
