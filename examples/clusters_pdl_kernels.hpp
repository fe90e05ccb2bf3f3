#pragma once
// The kernels of examples/clusters_pdl.cpp, apart so that the unit tests compile the very
// same source with NVRTC (tests/unit/test_launch_attribute_kernels.cpp).

namespace clusters_pdl {

// Each block sums its share of x in shared memory; block 0 of each cluster then adds up
// its cluster's block sums through distributed shared memory.
inline const char* const kClusterSum = R"(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void cluster_sum(const int* x, long long n, long long* cluster_sums) {
  __shared__ unsigned long long block_sum;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) block_sum = 0;
  __syncthreads();
  const long long chunk = (n + gridDim.x - 1) / gridDim.x;
  const long long begin = chunk * blockIdx.x, end = begin + chunk < n ? begin + chunk : n;
  unsigned long long mine = 0;
  for (long long i = begin + threadIdx.x; i < end; i += blockDim.x) mine += (unsigned long long)(long long)x[i];
  atomicAdd(&block_sum, mine);
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) {
    unsigned long long total = 0;
    for (unsigned r = 0; r < cluster.num_blocks(); ++r) total += *cluster.map_shared_rank(&block_sum, r);
    cluster_sums[blockIdx.x / cluster.num_blocks()] = (long long)total;
  }
  cluster.sync();
}
)";

// A producer and a consumer for programmatic dependent launch.
inline const char* const kPdlPair = R"(
extern "C" __global__ void produce(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 3.0f * x[i] + 1.0f;
  cudaTriggerProgrammaticLaunchCompletion();  // the consumer may be scheduled now
}

extern "C" __global__ void consume(const float* y, float* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  cudaGridDependencySynchronize();  // produce has completed; its writes are visible
  if (i < n) z[i] = y[i] * y[i];
}
)";

}  // namespace clusters_pdl
