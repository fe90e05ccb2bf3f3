// stream_probe: how the shape of a memory-bound loop moves the DRAM rate on this GPU, outside
// kernc. Each variant is a saxpy (z = a * x + y) over 1 GiB arrays that differs from
// kernc's generated kernels in one respect: grid-stride loop or one pass of a full grid,
// a thread's elements adjacent (two 16-byte accesses per double pair, as kernc's
// contiguous kernel) or a block apart (each access coalesced across the warp), and for
// x[::2] the generic kernel's four elements a grid stride apart. Every variant's result is
// checked against the host. tools/bench/NOTES.md (v21) says what it showed.
//
// Build and run on a GPU machine: nvcc -O3 -arch=sm_90 -o /tmp/stream_probe tools/bench/stream_probe.cu
//                                 /tmp/stream_probe [repeat]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CHECK_CUDA(call)                                                                   \
  do {                                                                                     \
    cudaError_t e = (call);                                                                \
    if (e != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

template <class T>
__global__ void fill(T* x, long long n, unsigned seed) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    x[i] = (T)((h >> 8) * (1.0 / 16777216.0) - 0.5);
  }
}

template <class T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

// kernc's contiguous kernel today: kN adjacent elements a thread (16 bytes of the smallest
// item, at least 4), moved as 16-byte chunks, grid-stride over a grid of <= 32 blocks an SM.
template <class T, int kN>
__global__ void adjacent_stride(T a, const T* x, const T* y, T* z, long long n) {
  constexpr int kPer = 16 / sizeof(T);
  using V = Vec<T, kPer>;
  for (long long base = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * kN; base + kN <= n;
       base += (long long)blockDim.x * gridDim.x * kN) {
    V xv[kN / kPer], yv[kN / kPer];
#pragma unroll
    for (int c = 0; c < kN / kPer; ++c) {
      xv[c] = reinterpret_cast<const V*>(x + base)[c];
      yv[c] = reinterpret_cast<const V*>(y + base)[c];
    }
#pragma unroll
    for (int c = 0; c < kN / kPer; ++c) {
      V o;
#pragma unroll
      for (int e = 0; e < kPer; ++e) o.v[e] = a * xv[c].v[e] + yv[c].v[e];
      reinterpret_cast<V*>(z + base)[c] = o;
    }
  }
}

// kC 16-byte chunks a thread, a block apart (each access coalesced), grid-stride.
template <class T, int kC>
__global__ void spread_stride(T a, const T* x, const T* y, T* z, long long n) {
  constexpr int kPer = 16 / sizeof(T);
  using V = Vec<T, kPer>;
  const long long chunks = n / kPer;
  for (long long base = blockIdx.x * (long long)blockDim.x * kC + threadIdx.x; base < chunks;
       base += (long long)blockDim.x * gridDim.x * kC) {
    V xv[kC], yv[kC];
#pragma unroll
    for (int c = 0; c < kC; ++c) {
      const long long j = base + c * (long long)blockDim.x;
      if (j < chunks) {
        xv[c] = reinterpret_cast<const V*>(x)[j];
        yv[c] = reinterpret_cast<const V*>(y)[j];
      }
    }
#pragma unroll
    for (int c = 0; c < kC; ++c) {
      const long long j = base + c * (long long)blockDim.x;
      if (j < chunks) {
        V o;
#pragma unroll
        for (int e = 0; e < kPer; ++e) o.v[e] = a * xv[c].v[e] + yv[c].v[e];
        reinterpret_cast<V*>(z)[j] = o;
      }
    }
  }
}

// CuPy's ElementwiseKernel: one element a thread, one pass of a grid that covers the array.
template <class T>
__global__ void one_per_thread(T a, const T* x, const T* y, T* z, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) z[i] = a * x[i] + y[i];
}

// x[::2], y[::2] -> z: kernc's generic kernel (4 elements a grid stride apart, grid-stride
// loop over <= 32 blocks an SM), a block apart instead, and CuPy's one a thread.
__global__ void strided_grid_apart(float a, const float* x, const float* y, float* z, long long n) {
  const long long step = (long long)blockDim.x * gridDim.x;
  for (long long base = blockIdx.x * (long long)blockDim.x + threadIdx.x; base < n; base += step * 4) {
    float xv[4], yv[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const long long i = base + k * step;
      if (i < n) {
        xv[k] = x[2 * i];
        yv[k] = y[2 * i];
      }
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const long long i = base + k * step;
      if (i < n) z[i] = a * xv[k] + yv[k];
    }
  }
}
__global__ void strided_block_apart(float a, const float* x, const float* y, float* z, long long n) {
  for (long long base = blockIdx.x * (long long)blockDim.x * 4 + threadIdx.x; base < n;
       base += (long long)blockDim.x * gridDim.x * 4) {
    float xv[4], yv[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const long long i = base + k * (long long)blockDim.x;
      if (i < n) {
        xv[k] = x[2 * i];
        yv[k] = y[2 * i];
      }
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const long long i = base + k * (long long)blockDim.x;
      if (i < n) z[i] = a * xv[k] + yv[k];
    }
  }
}
__global__ void strided_one(float a, const float* x, const float* y, float* z, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) z[i] = a * x[2 * i] + y[2 * i];
}

int sms = 0;
int repeat = 20;

// Median milliseconds of `launch` over `repeat` timed runs after one warm-up.
float time_ms(const std::function<void()>& launch) {
  launch();
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int r = 0; r < repeat; ++r) {
    CHECK_CUDA(cudaEventRecord(start));
    launch();
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  CHECK_CUDA(cudaGetLastError());
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

unsigned blocks_for(long long threads, long long cap) {
  return (unsigned)std::max(1LL, std::min((threads + 255) / 256, cap));
}

// Checks z == a * x + y (z of `count` elements; x and y read at `stride`) on a sample.
template <class T>
void check(const char* label, const T* x, const T* y, T* z, long long count, int stride) {
  const long long sample = 1 << 20;
  std::vector<T> hx(sample * stride), hy(sample * stride), hz(sample);
  const long long at = count - sample;  // the end, where partial steps are
  CHECK_CUDA(cudaMemcpy(hx.data(), x + at * stride, hx.size() * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hy.data(), y + at * stride, hy.size() * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hz.data(), z + at, hz.size() * sizeof(T), cudaMemcpyDeviceToHost));
  for (long long i = 0; i < sample; ++i) {
    const T want = (T)2 * hx[i * stride] + hy[i * stride];
    if (std::fabs((double)(hz[i] - want)) > 1e-6 * (1 + std::fabs((double)want))) {
      std::printf("%s: WRONG at %lld: %g, want %g\n", label, at + i, (double)hz[i], (double)want);
      std::exit(1);
    }
  }
  CHECK_CUDA(cudaMemset(z, 0xff, count * sizeof(T)));  // poison for the next variant
}

template <class T>
void saxpy_variants(const char* type, void* xb, void* yb, void* zb, size_t bytes, double copy_tbs) {
  T* x = static_cast<T*>(xb);
  T* y = static_cast<T*>(yb);
  T* z = static_cast<T*>(zb);
  const long long n = bytes / sizeof(T);
  fill<T><<<(n + 255) / 256, 256>>>(x, n, 1);
  fill<T><<<(n + 255) / 256, 256>>>(y, n, 2);
  constexpr int kN = 16 / sizeof(T) < 4 ? 4 : 16 / sizeof(T);
  const long long cap32 = 32LL * sms, cap8 = 8LL * sms;
  const long long whole = (long long)bytes / 16;  // 16-byte chunks
  struct Variant {
    const char* name;
    std::function<void()> launch;
  };
  const T a = 2;
  std::vector<Variant> variants = {
      {"adjacent, grid-stride, 32 blocks/SM (kernc now)",
       [&] { adjacent_stride<T, kN><<<blocks_for(n / kN, cap32), 256>>>(a, x, y, z, n); }},
      {"adjacent, one pass (full grid)",
       [&] { adjacent_stride<T, kN><<<blocks_for(n / kN, 1LL << 40), 256>>>(a, x, y, z, n); }},
      {"1x16B, grid-stride, 32 blocks/SM", [&] { spread_stride<T, 1><<<blocks_for(whole, cap32), 256>>>(a, x, y, z, n); }},
      {"2x16B block apart, grid-stride, 32 blocks/SM",
       [&] { spread_stride<T, 2><<<blocks_for(whole / 2, cap32), 256>>>(a, x, y, z, n); }},
      {"2x16B block apart, grid-stride, 8 blocks/SM",
       [&] { spread_stride<T, 2><<<blocks_for(whole / 2, cap8), 256>>>(a, x, y, z, n); }},
      {"1x16B, one pass (full grid)", [&] { spread_stride<T, 1><<<blocks_for(whole, 1LL << 40), 256>>>(a, x, y, z, n); }},
      {"2x16B block apart, one pass", [&] { spread_stride<T, 2><<<blocks_for(whole / 2, 1LL << 40), 256>>>(a, x, y, z, n); }},
      {"4x16B block apart, one pass", [&] { spread_stride<T, 4><<<blocks_for(whole / 4, 1LL << 40), 256>>>(a, x, y, z, n); }},
      {"one element a thread, one pass (CuPy)",
       [&] { one_per_thread<T><<<(unsigned)((n + 127) / 128), 128>>>(a, x, y, z, n); }},
  };
  for (const auto& v : variants) {
    const float ms = time_ms(v.launch);
    check<T>(v.name, x, y, z, n, 1);
    const double tbs = 3.0 * bytes / ms / 1e9;
    std::printf("saxpy %-8s %-50s %7.3f TB/s %6.3fx copy\n", type, v.name, tbs, tbs / copy_tbs);
  }
}

int main(int argc, char** argv) {
  if (argc > 1) repeat = std::atoi(argv[1]);
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t bytes = size_t(1) << 30;
  void *x, *y, *z;
  CHECK_CUDA(cudaMalloc(&x, bytes));
  CHECK_CUDA(cudaMalloc(&y, bytes));
  CHECK_CUDA(cudaMalloc(&z, bytes));
  const float copy_ms = time_ms([&] { CHECK_CUDA(cudaMemcpyAsync(z, x, bytes, cudaMemcpyDeviceToDevice)); });
  const double copy_tbs = 2.0 * bytes / copy_ms / 1e9;
  std::printf("device copy %.3f TB/s (%d SMs)\n", copy_tbs, sms);
  saxpy_variants<double>("float64", x, y, z, bytes, copy_tbs);
  saxpy_variants<float>("float32", x, y, z, bytes, copy_tbs);

  float* xf = static_cast<float*>(x);
  float* yf = static_cast<float*>(y);
  float* zf = static_cast<float*>(z);
  const long long n = bytes / 8;  // outputs of x[::2]
  struct Variant {
    const char* name;
    std::function<void()> launch;
  };
  std::vector<Variant> strided = {
      {"4 a grid stride apart, 32 blocks/SM (kernc now)",
       [&] { strided_grid_apart<<<blocks_for(n / 4, 32LL * sms), 256>>>(2.0f, xf, yf, zf, n); }},
      {"4 a grid stride apart, one pass",
       [&] { strided_grid_apart<<<blocks_for(n / 4, 1LL << 40), 256>>>(2.0f, xf, yf, zf, n); }},
      {"4 a block apart, 32 blocks/SM", [&] { strided_block_apart<<<blocks_for(n / 4, 32LL * sms), 256>>>(2.0f, xf, yf, zf, n); }},
      {"4 a block apart, one pass", [&] { strided_block_apart<<<blocks_for(n / 4, 1LL << 40), 256>>>(2.0f, xf, yf, zf, n); }},
      {"one a thread, one pass, 256 threads", [&] { strided_one<<<(unsigned)((n + 255) / 256), 256>>>(2.0f, xf, yf, zf, n); }},
      {"one a thread, one pass (CuPy)", [&] { strided_one<<<(unsigned)((n + 127) / 128), 128>>>(2.0f, xf, yf, zf, n); }},
  };
  for (const auto& v : strided) {
    const float ms = time_ms(v.launch);
    check<float>(v.name, xf, yf, zf, n, 2);
    const double tbs = 3.0 * n * 4 / ms / 1e9;
    std::printf("x[::2] float32 %-50s %7.3f TB/s %6.3fx copy\n", v.name, tbs, tbs / copy_tbs);
  }
  return 0;
}
