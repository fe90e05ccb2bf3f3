// Launch attributes of sm_90+ GPUs (docs/api.md, "Launch attributes"): a thread-block
// cluster whose block 0 reads the other blocks' shared memory (distributed shared memory),
// and a pair of kernels on one stream where the second starts early through programmatic
// dependent launch and waits for the first with cudaGridDependencySynchronize(). Both are
// checked against the host. Exits 77 without a GPU or on a GPU before sm_90;
// KERNC_RUNTIME=cpu runs the PDL pair on the host (in order) and shows that clusters are refused there.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "clusters_pdl_kernels.hpp"
#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"

namespace {

using clusters_pdl::kClusterSum;
using clusters_pdl::kPdlPair;

bool run_clusters(const kernc::Device& device, std::mt19937& rng) {
  const std::int64_t n = 1'000'003;
  const unsigned cluster = 4, clusters = 66;
  std::vector<std::int32_t> host(n);
  std::uniform_int_distribution<std::int32_t> values(-1000, 1000);
  for (auto& v : host) v = values(rng);
  auto x = kernc::DeviceArray::from_host(device, kernc::DType::int32, {n}, host.data());
  auto sums = kernc::DeviceArray::empty(device, kernc::DType::int64, {clusters});
  kernc::LaunchConfig config;
  config.block[0] = 128;
  config.cluster[0] = cluster;
  config.grid[0] = cluster * clusters;
  const kernc::RawKernel cluster_sum(kClusterSum, "cluster_sum");
  cluster_sum(config, {x, n, sums});
  const auto got = sums.to_host_vector<std::int64_t>();
  const std::int64_t chunk = (n + config.grid[0] - 1) / config.grid[0];
  std::vector<std::int64_t> want(clusters, 0);
  for (std::int64_t i = 0; i < n; ++i) want[(i / chunk) / cluster] += host[i];
  const bool ok = got == want;
  std::printf("clusters_pdl: %u clusters of %u blocks, block 0 of each reading its blocks' shared memory: %s\n",
              clusters, cluster, ok ? "matches the host" : "WRONG");
  return ok;
}

bool run_pdl(const kernc::Device& device, std::mt19937& rng) {
  const int n = 1 << 20;
  std::vector<float> host(n);
  std::uniform_real_distribution<float> values(-1.0f, 1.0f);
  for (auto& v : host) v = values(rng);
  auto x = kernc::DeviceArray::from_host(device, kernc::DType::float32, {n}, host.data());
  auto y = kernc::DeviceArray::empty(device, kernc::DType::float32, {n});
  auto z = kernc::DeviceArray::empty(device, kernc::DType::float32, {n});
  const kernc::RawModule pair(kPdlPair);
  kernc::Stream stream = device.create_stream();
  kernc::CallOptions on_stream;
  on_stream.stream = stream.ref();
  kernc::LaunchConfig config;
  config.block[0] = 256;
  config.grid[0] = (n + 255) / 256;
  config.stream = stream.ref();
  pair.launch("produce", config, {x, y, n}, on_stream);
  config.programmatic_dependent_launch = true;
  pair.launch("consume", config, {y, z, n}, on_stream);
  stream.synchronize();
  const auto got = z.to_host_vector<float>();
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    // Up to rounding: a compiler may fuse 3x + 1 into one multiply-add, another may not.
    const double yi = 3.0 * host[i] + 1.0;
    if (!(std::fabs(got[i] - yi * yi) <= 1e-5 * (yi * yi + 1.0))) ++wrong;
  }
  std::printf("clusters_pdl: programmatic dependent launch pair on one stream: %s\n",
              wrong == 0 ? "matches the host" : "WRONG");
  return wrong == 0;
}

}  // namespace

int main() {
  const bool on_host = kernc::Config::from_environment().runtime.value == "cpu";
  if (!kernc::Device::available("", on_host ? kernc::Backend::cpu : kernc::Backend::cuda)) {
    std::printf("clusters_pdl: no usable GPU, skipped\n");
    return 77;
  }
  try {
    const kernc::Device device = kernc::Engine::global().device();
    if (!on_host && device.compute_capability() < 90) {
      std::printf("clusters_pdl: clusters and programmatic dependent launch need sm_90+; %s is sm_%d, skipped\n",
                  device.name().c_str(), device.compute_capability());
      return 77;
    }
    std::mt19937 rng(std::random_device{}());
    bool ok = run_pdl(device, rng);
    if (device.supports_clusters()) {
      ok = run_clusters(device, rng) && ok;
    } else {
      std::printf("clusters_pdl: %s has no thread-block clusters; skipped that part\n", device.name().c_str());
    }
    return ok ? 0 : 1;
  } catch (const kernc::Error& error) {
    std::printf("kernc: %s\n", error.what());
    return 1;
  }
}
