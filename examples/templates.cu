// Templated kernels, instantiated through name expressions (kernc compile -n 'axpby<float>').
template <typename T>
__global__ void axpby(T a, const T* x, T b, T* y, long long n) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b * y[i];
}

// One partial sum per block, in shared memory.
template <typename T, int kBlock>
__global__ void block_sum(const T* x, T* partial, long long n) {
  __shared__ T scratch[kBlock];
  long long i = blockIdx.x * static_cast<long long>(kBlock) + threadIdx.x;
  scratch[threadIdx.x] = i < n ? x[i] : T(0);
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) scratch[threadIdx.x] += scratch[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = scratch[0];
}
