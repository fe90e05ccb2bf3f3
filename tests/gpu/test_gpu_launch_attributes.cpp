// Launch attributes through cuLaunchKernelEx (issue 32, part 3; NOTE [ launch attributes ],
// src/runtime/device.cpp): thread-block clusters whose blocks read each other's shared
// memory (distributed shared memory), a programmatic dependent launch (PDL) pair on one
// stream, launch priorities, the cluster errors, and the per-GPU functions of a kernel
// loaded once for every GPU (NOTE [ load once for every GPU ], src/runtime/cuda_driver.cpp).
// Clusters need sm_90; each test says so and returns on older GPUs. On the host backend
// PDL and priorities run (in order), and clusters are refused. tests/unit/
// test_runtime_function.cpp checks the checks with no GPU.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gpu_helpers.hpp"

namespace kernc::gpu_test {
namespace {

// Each block sums its slice of x (exactly: integers, added as unsigned 64-bit, so the order
// cannot change the result) into its own shared memory; after cluster.sync(), block 0 of
// each cluster reads every block's sum from that block's shared memory (map_shared_rank),
// in rank order, and writes the cluster's total; the second cluster.sync() keeps every
// block's shared memory alive until block 0 has read it. Each block also writes its own
// sum, so that a wrong slice and a wrong read are told apart.
const char* const kClusterSumCode = R"(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void cluster_sum(const int* x, long long n, long long* block_sums, long long* cluster_sums) {
  __shared__ unsigned long long block_sum;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) block_sum = 0;
  __syncthreads();
  const long long chunk = (n + gridDim.x - 1) / gridDim.x;
  const long long begin = chunk * blockIdx.x;
  const long long end = begin + chunk < n ? begin + chunk : n;
  unsigned long long mine = 0;
  for (long long i = begin + threadIdx.x; i < end; i += blockDim.x) mine += (unsigned long long)(long long)x[i];
  atomicAdd(&block_sum, mine);
  __syncthreads();
  if (threadIdx.x == 0) block_sums[blockIdx.x] = (long long)block_sum;
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) {
    unsigned long long total = 0;
    for (unsigned r = 0; r < cluster.num_blocks(); ++r) total += *cluster.map_shared_rank(&block_sum, r);
    cluster_sums[blockIdx.x / cluster.num_blocks()] = (long long)total;
  }
  cluster.sync();
}
)";

// The PDL pair: `produce` writes y = 3x + round and then lets the dependent grid be scheduled
// (the trigger itself promises no visibility of memory); `consume` reads x (which nothing
// writes) before it waits, then y after cudaGridDependencySynchronize(), which returns once
// `produce` has completed and its writes are visible.
const char* const kPdlCode = R"(
extern "C" __global__ void produce(const float* x, float* y, int n, int rounds, float round) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    // Some work, so that a consumer not waiting would read y early.
    for (int r = 0; r < rounds; ++r) v = v * 0.5f + x[i] * 0.5f;
    y[i] = 3.0f * v + round;
  }
  __syncthreads();
  cudaTriggerProgrammaticLaunchCompletion();
}

extern "C" __global__ void consume(const float* x, const float* y, float* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float xi = i < n ? x[i] : 0.0f;
  cudaGridDependencySynchronize();
  if (i < n) z[i] += y[i] - xi;
}
)";

const char* const kScaleCode = R"(
extern "C" __global__ void scale_by(const float* x, float a, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
)";

LaunchConfig config_1d(unsigned grid, unsigned block) {
  LaunchConfig config;
  config.grid[0] = grid;
  config.block[0] = block;
  return config;
}

// True (and says why) when the GPU has no clusters (before sm_90): the test then returns.
bool skip_without_clusters() {
  if (device().supports_clusters()) return false;
  MESSAGE("skipped: thread-block clusters need an sm_90+ GPU; this one is " << device().name() << " (sm_"
                                                                            << device().compute_capability() << ")");
  return true;
}

}  // namespace

TEST_CASE("clusters: block 0 of each cluster sums its blocks' shared memory through map_shared_rank") {
  KERNC_GPU_ONLY("thread-block clusters (the host backend refuses them; see the next test case)");
  KERNC_GPU_RANDOM(random, "cluster distributed shared memory");
  if (skip_without_clusters()) return;
  const RawKernel cluster_sum(kClusterSumCode, "cluster_sum");
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{1001}, std::int64_t{3'000'017}}) {
    const auto x = random.integers<std::int32_t>(n, -1'000'000, 1'000'000);
    const auto dx = upload(DType::int32, {n}, x);
    for (unsigned cluster : {2u, 4u, 8u}) {
      for (unsigned clusters : {1u, 33u}) {
        CAPTURE(n);
        CAPTURE(cluster);
        CAPTURE(clusters);
        const unsigned grid = cluster * clusters;
        LaunchConfig config = config_1d(grid, 128);
        config.cluster[0] = cluster;
        auto block_sums = poisoned(DType::int64, {grid});
        auto cluster_sums = poisoned(DType::int64, {clusters});
        cluster_sum(config, {dx, n, block_sums, cluster_sums});
        // The host reference: the same slices, the same exact sums.
        const std::int64_t chunk = (n + grid - 1) / grid;
        std::vector<std::int64_t> want_blocks(grid, 0), want_clusters(clusters, 0);
        for (unsigned b = 0; b < grid; ++b) {
          for (std::int64_t i = chunk * b; i < std::min<std::int64_t>(n, chunk * (b + 1)); ++i) want_blocks[b] += x[i];
          want_clusters[b / cluster] += want_blocks[b];
        }
        expect_equal(download<std::int64_t>(block_sums), want_blocks, "each block's sum");
        expect_equal(download<std::int64_t>(cluster_sums), want_clusters, "each cluster's sum, read across blocks");
      }
    }
  }
}

TEST_CASE("clusters: 16 blocks (beyond the portable 8) run where the GPU allows, else the error says so") {
  KERNC_GPU_ONLY("thread-block clusters");
  KERNC_GPU_RANDOM(random, "cluster of 16");
  if (skip_without_clusters()) return;
  const RawKernel cluster_sum(kClusterSumCode, "cluster_sum");
  const std::int64_t n = 100'003;
  const auto x = random.integers<std::int32_t>(n, -1000, 1000);
  const auto dx = upload(DType::int32, {n}, x);
  LaunchConfig config = config_1d(32, 128);
  config.cluster[0] = 16;
  auto block_sums = poisoned(DType::int64, {32});
  auto cluster_sums = poisoned(DType::int64, {2});
  try {
    cluster_sum(config, {dx, n, block_sums, cluster_sums});
  } catch (const Error& error) {
    CHECK_MESSAGE(error.code() == ErrorCode::launch_config, error.what());
    CHECK_MESSAGE(std::string(error.what()).find("beyond the portable size of 8") != std::string::npos, error.what());
    MESSAGE("this GPU refuses clusters of 16: " << error.what());
    return;
  }
  std::vector<std::int64_t> want(2, 0);
  const std::int64_t chunk = (n + 31) / 32;
  for (std::int64_t i = 0; i < n; ++i) want[(i / chunk) / 16] += x[i];
  expect_equal(download<std::int64_t>(cluster_sums), want, "two clusters of 16 blocks");
}

TEST_CASE("clusters: a grid not made of whole clusters, an oversized cluster and a refusing backend are errors") {
  KERNC_GPU_RANDOM(random, "cluster errors");
  if (!device().supports_clusters()) {
    // The host backend, HIP and GPUs before sm_90 refuse any cluster before launching,
    // saying why (a kernel without cluster code, so that it compiles everywhere).
    const RawKernel scale(kScaleCode, "scale_by");
    auto x = DeviceArray::from_host(device(), DType::float32, {4}, std::vector<float>{1, 2, 3, 4}.data());
    auto y = DeviceArray::empty(device(), DType::float32, {4});
    LaunchConfig config = config_1d(4, 32);
    config.cluster[0] = 2;
    KERNC_CHECK_ERROR(ErrorCode::launch_config, "scale_by: a cluster of 2 x 1 x 1 blocks on ",
                      scale(config, {x, 2.0f, y, 4}));
    MESSAGE("refused, as it should be, on " << device().name());
    return;
  }
  const RawKernel cluster_sum(kClusterSumCode, "cluster_sum");
  auto dx = DeviceArray::from_host(device(), DType::int32, {4}, std::vector<std::int32_t>{1, 2, 3, 4}.data());
  auto block_sums = DeviceArray::empty(device(), DType::int64, {64});
  auto cluster_sums = DeviceArray::empty(device(), DType::int64, {64});
  const std::int64_t n = 4;
  LaunchConfig ragged = config_1d(6, 32);
  ragged.cluster[0] = 4;
  KERNC_CHECK_ERROR(ErrorCode::launch_config, "grid.x = 6 is not a multiple of cluster.x = 4",
                    cluster_sum(ragged, {dx, n, block_sums, cluster_sums}));
  LaunchConfig huge = config_1d(64, 32);
  huge.cluster[0] = 32;
  KERNC_CHECK_ERROR(ErrorCode::launch_config, "a cluster of 32 blocks (32 x 1 x 1): at most 16 blocks",
                    cluster_sum(huge, {dx, n, block_sums, cluster_sums}));
  // (Whether a cluster is too big to be resident depends on how many multiprocessors the
  // GPU's processing clusters have; the occupancy check's error is tested with a fake GPU
  // in tests/unit/test_runtime_function.cpp.)
  // The GPU is still usable after the refusals: nothing reached it.
  LaunchConfig fine = config_1d(4, 32);
  fine.cluster[0] = 2;
  cluster_sum(fine, {dx, n, block_sums, cluster_sums});
  const auto sums = download<std::int64_t>(cluster_sums);
  CHECK(sums[0] == 1 + 2);  // one element a block: blocks 0 and 1 make cluster 0
  CHECK(sums[1] == 3 + 4);
}

TEST_CASE("PDL: a consumer launched with programmatic dependent launch reads its producer's output after the wait") {
  KERNC_GPU_RANDOM(random, "programmatic dependent launch");
  // Before sm_90 the launch is in plain stream order and the device functions are empty
  // (NOTE [ grid dependency bridge ]): the answer must be the same.
  const RawModule module(kPdlCode, {}, {}, "gpu_pdl_pair");
  Stream stream = device().create_stream();
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    const auto x = random.uniform<float>(n);
    const auto dx = upload(DType::float32, {n}, x);
    auto y = poisoned(DType::float32, {n});
    auto z = DeviceArray::empty(device(), DType::float32, {n});
    device().fill_bytes(z.ref().data, 0, static_cast<std::size_t>(n) * 4);
    device().synchronize();
    const int rounds = 64;
    const unsigned block = 256;
    LaunchConfig producer = config_1d(static_cast<unsigned>((n + block - 1) / block), block);
    producer.stream = stream.ref();
    LaunchConfig consumer = producer;
    consumer.programmatic_dependent_launch = true;
    CallOptions on_stream;
    on_stream.stream = stream.ref();
    // Pairs back to back, each producer writing another value: a consumer that read y
    // before its producer wrote it would add the poison (NaN) or the previous pair's value.
    const int pairs = 8;
    for (int pair = 0; pair < pairs; ++pair) {
      module.launch("produce", producer, {dx, y, static_cast<int>(n), rounds, static_cast<float>(pair)}, on_stream);
      module.launch("consume", consumer, {dx, y, z, static_cast<int>(n)}, on_stream);
    }
    stream.synchronize();
    std::vector<float> want(x.size(), 0.0f);
    for (std::size_t i = 0; i < x.size(); ++i) {
      float v = x[i];
      for (int r = 0; r < rounds; ++r) v = v * 0.5f + x[i] * 0.5f;
      for (int pair = 0; pair < pairs; ++pair) want[i] += (3.0f * v + static_cast<float>(pair)) - x[i];
    }
    // Up to rounding: the device compiler may fuse the multiply-adds, the host's may not;
    // a stale read is off by 1 or more.
    const auto got = download<float>(z);
    expect_close(std::vector<double>(got.begin(), got.end()), std::vector<double>(want.begin(), want.end()), 1e-5,
                 "z = the sum over the pairs of y - x", std::vector<double>(want.size(), 64.0));
  }
}

TEST_CASE("priority: launches at the device's most and least urgent priorities run, and one outside is refused") {
  KERNC_GPU_RANDOM(random, "launch priority");
  const RawKernel scale(kScaleCode, "scale_by");
  const auto [greatest, least] = device().priority_range();
  CHECK(greatest <= least);
  const std::int64_t n = 100'003;
  const auto x = random.uniform<float>(n);
  const auto dx = upload(DType::float32, {n}, x);
  for (int priority : {greatest, least}) {
    CAPTURE(priority);
    auto y = poisoned(DType::float32, {n});
    LaunchConfig config = config_1d(static_cast<unsigned>((n + 255) / 256), 256);
    config.priority = priority;
    scale(config, {dx, 2.5f, y, static_cast<int>(n)});
    std::vector<float> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = 2.5f * x[i];
    expect_equal(download<float>(y), want, "y = 2.5 x at a priority");
  }
  if (greatest > std::numeric_limits<int>::min()) {
    LaunchConfig config = config_1d(1, 32);
    config.priority = greatest - 1;
    auto y = poisoned(DType::float32, {n});
    KERNC_CHECK_ERROR(ErrorCode::launch_config, "takes priorities from",
                      scale(config, {dx, 2.5f, y, static_cast<int>(n)}));
  }
}

TEST_CASE("load once: GPU 1's function of a kernel used on GPU 0 has its own attributes and gives the right answer") {
  KERNC_GPU_ONLY("a second GPU");
  KERNC_GPU_RANDOM(random, "load once on two GPUs");
  int count = 1;
  while (count < 2) {
    try {
      (void)Engine::global().device(count);
      ++count;
    } catch (const Error&) {
      break;
    }
  }
  if (count < 2) {
    MESSAGE("skipped: one GPU visible; loading once for every GPU needs a second to be tested");
    return;
  }
  const RawKernel scale(kScaleCode, "scale_by");
  CallOptions on_gpu1;
  on_gpu1.device = 1;
  const Function f0 = scale.function();
  const Function f1 = scale.function(on_gpu1);
  CHECK(f0.valid());
  CHECK(f1.valid());
  // The dynamic shared-memory opt-in is per function and per GPU: raising it on GPU 0
  // leaves GPU 1's at the default.
  const int default_limit = f1.attributes().max_dynamic_shared_bytes;
  f0.set_max_dynamic_shared_bytes(64 * 1024);
  CHECK(f0.attributes().max_dynamic_shared_bytes == 64 * 1024);
  CHECK(f1.attributes().max_dynamic_shared_bytes == default_limit);
  const std::int64_t n = 1'000'003;
  const auto x = random.uniform<float>(n);
  std::vector<float> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = -1.5f * x[i];
  for (int gpu : {0, 1}) {
    CAPTURE(gpu);
    Device d = Engine::global().device(gpu);
    auto dx = DeviceArray::from_host(d, DType::float32, {n}, x.data());
    auto y = DeviceArray::empty(d, DType::float32, {n});
    CallOptions options;
    options.device = gpu;
    scale(config_1d(static_cast<unsigned>((n + 255) / 256), 256), {dx, -1.5f, y, static_cast<int>(n)}, options);
    expect_equal(y.to_host_vector<float>(), want, "y = -1.5 x");
  }
}

}  // namespace kernc::gpu_test
