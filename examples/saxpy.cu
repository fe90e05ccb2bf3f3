// A raw CUDA kernel with C linkage: y = a * x + y.
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, long long n) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  for (; i < n; i += static_cast<long long>(gridDim.x) * blockDim.x) y[i] = a * x[i] + y[i];
}
