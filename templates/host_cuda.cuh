// TEMPORARY minimal host environment (plain loops only); replaced by the full one.
#pragma once
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdint>
#include <type_traits>
#include <algorithm>
#include <utility>
#include "kernc/host_abi.cuh"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __restrict__ __restrict
#define __shared__ static thread_local
#define __launch_bounds__(...)

struct uint3 { unsigned x, y, z; };
struct dim3 { unsigned x = 1, y = 1, z = 1; };
struct kernc_host_state {
  uint3 thread, block;
  dim3 block_dim, grid_dim;
  const kernc_host_launch* launch;
};
inline thread_local kernc_host_state kernc_host_tls;
#define threadIdx (kernc_host_tls.thread)
#define blockIdx (kernc_host_tls.block)
#define blockDim (kernc_host_tls.block_dim)
#define gridDim (kernc_host_tls.grid_dim)
using std::min;
using std::max;
inline unsigned int __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline void __syncthreads() { kernc_host_tls.launch->services->block_barrier(kernc_host_tls.launch); }
inline unsigned __shfl_down_sync(unsigned, unsigned v, int) { kernc_host_tls.launch->services->warp_barrier(kernc_host_tls.launch); return v; }

template <class F> struct kernc_host_call;
template <class... P> struct kernc_host_call<void (*)(P...)> {
  static constexpr std::size_t count = sizeof...(P);
  template <void (*K)(P...), std::size_t... I>
  static void run(void** args, std::index_sequence<I...>) { K(*static_cast<std::remove_reference_t<P>*>(args[I])...); }
};
template <auto Kernel>
void kernc_host_run(const kernc_host_launch* launch, void** args) {
  kernc_host_tls.launch = launch;
  kernc_host_tls.grid_dim = {launch->grid.x, launch->grid.y, launch->grid.z};
  kernc_host_tls.block_dim = {launch->block.x, launch->block.y, launch->block.z};
  using Call = kernc_host_call<decltype(Kernel)>;
  for (unsigned long long b = launch->block_begin; b < launch->block_end; ++b) {
    kernc_host_tls.block = {unsigned(b % launch->grid.x), unsigned(b / launch->grid.x % launch->grid.y),
                            unsigned(b / launch->grid.x / launch->grid.y)};
    for (unsigned z = 0; z < launch->block.z; ++z)
      for (unsigned y = 0; y < launch->block.y; ++y)
        for (unsigned x = 0; x < launch->block.x; ++x) {
          kernc_host_tls.thread = {x, y, z};
          Call::template run<Kernel>(args, std::make_index_sequence<Call::count>{});
        }
  }
}
