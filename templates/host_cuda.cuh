// kernc host CUDA environment: what a CUDA C++ kernel program needs to compile with g++ (12+)
// or clang (14+), C++17, and run on a CPU (Backend::cpu). Included first in every host
// program, before kernc's templates and the user's code.
//
// NOTE [ host CUDA environment ]
// - Threads of a block run on one OS thread: as a plain loop, or as fibers when the program
//   needs per-thread state (NOTE [ host fibers ], src/runtime/host_threads.hpp). So
//   `__shared__` is `static thread_local`: shared by exactly the block's threads. Dynamic
//   shared memory (`extern __shared__ T s[];`) is rewritten by kernc before compiling
//   (compiler::rewrite_dynamic_shared) into a pointer to the worker's arena.
// - threadIdx & co. are one thread-local struct, set by the entry; every barrier saves it
//   before and restores it after (other fibers run meanwhile on the same OS thread).
// - Warp functions exchange values through a per-block area: each lane writes its slot,
//   waits at the warp barrier, reads its source lane's slot. Slots are double-buffered by a
//   per-thread parity, so one barrier per shuffle suffices: a lane can write the same buffer
//   again only after the next barrier, which every lane reaches after its read.
// - What cannot run on a CPU (inline PTX, textures, surfaces) is a compile error naming the
//   construct at the user's line.
#pragma once
#ifndef KERNC_HOST_CUDA_CUH
#define KERNC_HOST_CUDA_CUH

#define KERNC_HOST 1

// The standard headers a kernel may use come first: the macros below (asm, __noinline__)
// must not reach them.
#include <algorithm>
#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include <sched.h>

#include "kernc/host_abi.cuh"

// --- qualifiers ----------------------------------------------------------------------------

#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static thread_local
#define __cudart_builtin__
#define __grid_constant__

// --- vector types --------------------------------------------------------------------------

#define KERNC_HOST_VECTORS(T, name, align2, align4)                                                      \
  struct name##1 { T x; };                                                                               \
  struct __attribute__((aligned(align2))) name##2 { T x, y; };                                           \
  struct name##3 { T x, y, z; };                                                                         \
  struct __attribute__((aligned(align4))) name##4 { T x, y, z, w; };                                     \
  inline constexpr name##1 make_##name##1(T x) { return {x}; }                                           \
  inline constexpr name##2 make_##name##2(T x, T y) { return {x, y}; }                                   \
  inline constexpr name##3 make_##name##3(T x, T y, T z) { return {x, y, z}; }                           \
  inline constexpr name##4 make_##name##4(T x, T y, T z, T w) { return {x, y, z, w}; }
KERNC_HOST_VECTORS(signed char, char, 2, 4)
KERNC_HOST_VECTORS(unsigned char, uchar, 2, 4)
KERNC_HOST_VECTORS(short, short, 4, 8)
KERNC_HOST_VECTORS(unsigned short, ushort, 4, 8)
KERNC_HOST_VECTORS(int, int, 8, 16)
KERNC_HOST_VECTORS(unsigned, uint, 8, 16)
KERNC_HOST_VECTORS(long, long, 16, 16)
KERNC_HOST_VECTORS(unsigned long, ulong, 16, 16)
KERNC_HOST_VECTORS(long long, longlong, 16, 16)
KERNC_HOST_VECTORS(unsigned long long, ulonglong, 16, 16)
KERNC_HOST_VECTORS(float, float, 8, 16)
KERNC_HOST_VECTORS(double, double, 16, 16)
#undef KERNC_HOST_VECTORS

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return {x, y, z}; }
};

// --- the builtins --------------------------------------------------------------------------

struct kernc_host_state_t {
  uint3 thread_idx;
  uint3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
  const kernc_host_launch* launch;
};
// One TU per program: internal linkage keeps the TLS model local-dynamic (no dlopen
// surplus needed) and lets the compiler reuse the module's TLS base within a function.
static thread_local kernc_host_state_t kernc_host_state;

#define threadIdx (kernc_host_state.thread_idx)
#define blockIdx (kernc_host_state.block_idx)
#define blockDim (kernc_host_state.block_dim)
#define gridDim (kernc_host_state.grid_dim)
static constexpr int warpSize = 32;

namespace kernc_host {

constexpr unsigned kMaxThreads = 1024;

// The per-block exchange area of the warp functions (NOTE [ host CUDA environment ]).
struct Exchange {
  unsigned long long slot[2][kMaxThreads];
  unsigned char parity[kMaxThreads];
  int block_slot[kMaxThreads];
};
static thread_local Exchange exchange;

inline unsigned thread_rank() {
  const kernc_host_state_t& s = kernc_host_state;
  return s.thread_idx.x + s.block_dim.x * (s.thread_idx.y + s.block_dim.y * s.thread_idx.z);
}
inline unsigned block_threads() {
  const kernc_host_state_t& s = kernc_host_state;
  return s.block_dim.x * s.block_dim.y * s.block_dim.z;
}
// The lanes of the caller's warp that exist (the block's last warp may be short).
inline unsigned warp_lanes() {
  unsigned base = thread_rank() & ~31u, left = block_threads() - base;
  return left >= 32 ? ~0u : (1u << left) - 1u;
}

[[noreturn]] inline void fail(const char* message) {
  const kernc_host_launch* launch = kernc_host_state.launch;
  launch->services->fail(launch, message);
  __builtin_unreachable();
}

// Fails the launch when the program runs its blocks as plain loops (its source did not look
// like it needs per-thread state, compiler::needs_threads) and the block has more than one
// thread. A block of one thread needs no per-thread state: it runs as a plain loop whatever
// its program (src/runtime/host_driver.cpp), and every barrier is complete when it is reached.
inline void need_threads(const char* what) {
  if (__builtin_expect(kernc_host_state.launch->threads_as_fibers != 0, 1)) return;
  if (block_threads() == 1) return;
  char message[320];
  std::snprintf(message, sizeof message,
                "%s was called in a program compiled without per-thread state (its blocks run as plain loops); "
                "kernc did not see a barrier or warp function in the source (called through a macro?)",
                what);
  fail(message);
}

// Barriers: save the thread's builtins, let the other fibers run, restore them.
inline void block_barrier(const char* what) {
  need_threads(what);
  if (!kernc_host_state.launch->threads_as_fibers) return;  // a block of one thread
  const kernc_host_state_t saved = kernc_host_state;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  saved.launch->services->block_barrier(saved.launch);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  kernc_host_state = saved;
}
inline void warp_barrier(const char* what, unsigned mask) {
  need_threads(what);
  if (!kernc_host_state.launch->threads_as_fibers) return;  // a block of one thread
  const kernc_host_state_t saved = kernc_host_state;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  saved.launch->services->warp_barrier(saved.launch, mask);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  kernc_host_state = saved;
}
inline void grid_barrier() {
  need_threads("this_grid().sync()");
  const kernc_host_state_t saved = kernc_host_state;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  saved.launch->services->grid_barrier(saved.launch);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  kernc_host_state = saved;
}

template <class T>
unsigned long long to_bits(T value) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "warp shuffles take trivially copyable types of at most 8 bytes");
  unsigned long long bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}
template <class T>
T from_bits(unsigned long long bits) {
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

// Publishes `bits` for the caller's warp and returns the slot buffer every lane wrote.
inline const unsigned long long* publish(const char* what, unsigned mask, unsigned long long bits) {
  need_threads(what);
  const unsigned rank = thread_rank();
  const unsigned parity = exchange.parity[rank];
  exchange.parity[rank] = static_cast<unsigned char>(parity ^ 1u);
  exchange.slot[parity][rank] = bits;
  warp_barrier(what, mask);
  return exchange.slot[parity] + (rank & ~31u);
}

// A shuffle: `source` maps the caller's lane to the lane it reads (or its own lane).
template <class T, class Source>
T shuffle(const char* what, unsigned mask, T value, Source source) {
  const unsigned long long* warp = publish(what, mask, to_bits(value));
  const unsigned lane = thread_rank() & 31u;
  unsigned from = source(lane);
  if (from >= 32 || !((warp_lanes() >> from) & 1u)) from = lane;
  return from_bits<T>(warp[from]);
}

inline unsigned ballot(const char* what, unsigned mask, bool predicate) {
  const unsigned long long* warp = publish(what, mask, predicate ? 1u : 0u);
  unsigned lanes = mask & warp_lanes(), bits = 0;
  for (unsigned l = 0; l < 32; ++l) {
    if (((lanes >> l) & 1u) && warp[l]) bits |= 1u << l;
  }
  return bits;
}

// __syncthreads_count and friends: each thread's predicate, then a sum over the block.
inline int block_count(const char* what, int predicate) {
  const unsigned rank = thread_rank(), threads = block_threads();
  exchange.block_slot[rank] = predicate != 0;
  block_barrier(what);
  int count = 0;
  for (unsigned t = 0; t < threads; ++t) count += exchange.block_slot[t];
  block_barrier(what);
  return count;
}

}  // namespace kernc_host

inline void __syncthreads() { kernc_host::block_barrier("__syncthreads()"); }
inline int __syncthreads_count(int predicate) { return kernc_host::block_count("__syncthreads_count()", predicate); }
inline int __syncthreads_and(int predicate) {
  return kernc_host::block_count("__syncthreads_and()", predicate) == static_cast<int>(kernc_host::block_threads());
}
inline int __syncthreads_or(int predicate) { return kernc_host::block_count("__syncthreads_or()", predicate) != 0; }
inline void __syncwarp(unsigned mask = 0xffffffffu) { kernc_host::warp_barrier("__syncwarp()", mask); }

template <class T>
T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32) {
  const unsigned w = static_cast<unsigned>(width);
  return kernc_host::shuffle("__shfl_sync()", mask, var,
                             [&](unsigned lane) { return (lane & ~(w - 1)) + (static_cast<unsigned>(src_lane) & (w - 1)); });
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  const unsigned w = static_cast<unsigned>(width);
  return kernc_host::shuffle("__shfl_up_sync()", mask, var,
                             [&](unsigned lane) { return (lane & (w - 1)) < delta ? lane : lane - delta; });
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  const unsigned w = static_cast<unsigned>(width);
  return kernc_host::shuffle("__shfl_down_sync()", mask, var,
                             [&](unsigned lane) { return (lane & (w - 1)) + delta >= w ? lane : lane + delta; });
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
  const unsigned w = static_cast<unsigned>(width);
  return kernc_host::shuffle("__shfl_xor_sync()", mask, var, [&](unsigned lane) {
    unsigned from = lane ^ static_cast<unsigned>(lane_mask);
    return from >= (lane & ~(w - 1)) + w ? lane : from;  // later groups: own value
  });
}
inline unsigned __ballot_sync(unsigned mask, int predicate) { return kernc_host::ballot("__ballot_sync()", mask, predicate != 0); }
inline int __any_sync(unsigned mask, int predicate) { return kernc_host::ballot("__any_sync()", mask, predicate != 0) != 0; }
inline int __all_sync(unsigned mask, int predicate) {
  return kernc_host::ballot("__all_sync()", mask, predicate != 0) == (mask & kernc_host::warp_lanes());
}
inline int __uni_sync(unsigned mask, int predicate) {
  unsigned bits = kernc_host::ballot("__uni_sync()", mask, predicate != 0);
  return bits == 0 || bits == (mask & kernc_host::warp_lanes());
}
// Every lane of the warp that exists: a host warp never runs diverged lanes apart.
inline unsigned __activemask() { return kernc_host::warp_lanes(); }
inline unsigned __lanemask_lt() { return (1u << (kernc_host::thread_rank() & 31u)) - 1u; }
inline unsigned __lanemask_le() { return (2u << (kernc_host::thread_rank() & 31u)) - 1u; }
inline unsigned __lanemask_eq() { return 1u << (kernc_host::thread_rank() & 31u); }
inline unsigned __lanemask_gt() { return ~__lanemask_le(); }
inline unsigned __lanemask_ge() { return ~__lanemask_lt(); }
template <class T>
unsigned __match_any_sync(unsigned mask, T value) {
  const unsigned long long* warp = kernc_host::publish("__match_any_sync()", mask, kernc_host::to_bits(value));
  const unsigned long long mine = warp[kernc_host::thread_rank() & 31u];
  unsigned lanes = mask & kernc_host::warp_lanes(), bits = 0;
  for (unsigned l = 0; l < 32; ++l) {
    if (((lanes >> l) & 1u) && warp[l] == mine) bits |= 1u << l;
  }
  return bits;
}
template <class T>
unsigned __match_all_sync(unsigned mask, T value, int* predicate) {
  unsigned bits = __match_any_sync(mask, value);
  bool all = bits == (mask & kernc_host::warp_lanes());
  *predicate = all;
  return all ? bits : 0u;
}

// --- fences, clocks, traps -------------------------------------------------------------------

inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
// Programmatic dependent launch (NOTE [ launch attributes ], src/runtime/device.cpp): the
// host backend runs launches in stream order, so the previous kernel has finished before
// this one starts, and there is nothing to wait for or to trigger.
inline void cudaGridDependencySynchronize() {}
inline void cudaTriggerProgrammaticLaunchCompletion() {}
// clock() is the C library's (processor time, a clock_t); clock64() counts nanoseconds.
inline long long clock64() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * 1000000000ll + now.tv_nsec;
}
inline unsigned long long __globaltimer() { return static_cast<unsigned long long>(clock64()); }
// A spin-wait on another block (another OS thread) makes progress; one on a thread of the
// same block cannot (its fibers switch only at barriers).
inline void __nanosleep(unsigned) { sched_yield(); }
[[noreturn]] inline void __trap() { kernc_host::fail("__trap() was called"); }
[[noreturn]] inline void __brkpt() { kernc_host::fail("__brkpt() was called"); }

// --- loads and stores --------------------------------------------------------------------

template <class T> T __ldg(const T* p) { return *p; }
template <class T> T __ldcg(const T* p) { return *p; }
template <class T> T __ldca(const T* p) { return *p; }
template <class T> T __ldcs(const T* p) { return *p; }
template <class T> T __ldlu(const T* p) { return *p; }
template <class T> T __ldcv(const T* p) { return *p; }
template <class T> void __stcg(T* p, T v) { *p = v; }
template <class T> void __stcs(T* p, T v) { *p = v; }
template <class T> void __stwb(T* p, T v) { *p = v; }
template <class T> void __stwt(T* p, T v) { *p = v; }

// --- atomics (real ones: blocks run in parallel on several OS threads) -------------------------

#define KERNC_HOST_ATOMIC_INT(T)                                                                          \
  inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }                    \
  inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); }                    \
  inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); }                    \
  inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); }                      \
  inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); }                    \
  inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); }                  \
  inline T atomicCAS(T* a, T compare, T v) {                                                              \
    __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);               \
    return compare;                                                                                       \
  }                                                                                                       \
  inline T atomicMin(T* a, T v) {                                                                         \
    T old = __atomic_load_n(a, __ATOMIC_RELAXED);                                                         \
    while (v < old && !__atomic_compare_exchange_n(a, &old, v, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) { \
    }                                                                                                     \
    return old;                                                                                           \
  }                                                                                                       \
  inline T atomicMax(T* a, T v) {                                                                         \
    T old = __atomic_load_n(a, __ATOMIC_RELAXED);                                                         \
    while (v > old && !__atomic_compare_exchange_n(a, &old, v, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) { \
    }                                                                                                     \
    return old;                                                                                           \
  }
KERNC_HOST_ATOMIC_INT(int)
KERNC_HOST_ATOMIC_INT(unsigned)
KERNC_HOST_ATOMIC_INT(long long)
KERNC_HOST_ATOMIC_INT(unsigned long long)
#undef KERNC_HOST_ATOMIC_INT

inline unsigned short atomicCAS(unsigned short* a, unsigned short compare, unsigned short v) {
  __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}

namespace kernc_host {
// Read-modify-write of a float or double through a CAS loop over its bits.
template <class T, class Bits, class Op>
T atomic_update(T* address, Op op) {
  Bits* a = reinterpret_cast<Bits*>(address);
  Bits old = __atomic_load_n(a, __ATOMIC_RELAXED), next;
  do {
    next = from_bits<Bits>(to_bits(op(from_bits<T>(old))));
  } while (!__atomic_compare_exchange_n(a, &old, next, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
  return from_bits<T>(old);
}
}  // namespace kernc_host

inline float atomicAdd(float* a, float v) {
  return kernc_host::atomic_update<float, unsigned>(a, [v](float old) { return old + v; });
}
inline double atomicAdd(double* a, double v) {
  return kernc_host::atomic_update<double, unsigned long long>(a, [v](double old) { return old + v; });
}
inline float atomicExch(float* a, float v) {
  return kernc_host::from_bits<float>(atomicExch(reinterpret_cast<unsigned*>(a), kernc_host::from_bits<unsigned>(kernc_host::to_bits(v))));
}
inline double atomicExch(double* a, double v) {
  return kernc_host::from_bits<double>(
      atomicExch(reinterpret_cast<unsigned long long*>(a), kernc_host::from_bits<unsigned long long>(kernc_host::to_bits(v))));
}
inline float atomicMin(float* a, float v) {
  return kernc_host::atomic_update<float, unsigned>(a, [v](float old) { return std::fmin(old, v); });
}
inline float atomicMax(float* a, float v) {
  return kernc_host::atomic_update<float, unsigned>(a, [v](float old) { return std::fmax(old, v); });
}
inline double atomicMin(double* a, double v) {
  return kernc_host::atomic_update<double, unsigned long long>(a, [v](double old) { return std::fmin(old, v); });
}
inline double atomicMax(double* a, double v) {
  return kernc_host::atomic_update<double, unsigned long long>(a, [v](double old) { return std::fmax(old, v); });
}
inline unsigned atomicInc(unsigned* a, unsigned limit) {
  unsigned old = __atomic_load_n(a, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(a, &old, old >= limit ? 0u : old + 1u, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
  }
  return old;
}
inline unsigned atomicDec(unsigned* a, unsigned limit) {
  unsigned old = __atomic_load_n(a, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(a, &old, (old == 0u || old > limit) ? limit : old - 1u, true, __ATOMIC_SEQ_CST,
                                      __ATOMIC_RELAXED)) {
  }
  return old;
}

// The _block and _system scopes are the same atomics on a host.
#define KERNC_HOST_ATOMIC_SCOPES(name)                                                        \
  template <class... A>                                                                       \
  inline auto name##_block(A... a) -> decltype(name(a...)) { return name(a...); }             \
  template <class... A>                                                                       \
  inline auto name##_system(A... a) -> decltype(name(a...)) { return name(a...); }
KERNC_HOST_ATOMIC_SCOPES(atomicAdd)
KERNC_HOST_ATOMIC_SCOPES(atomicSub)
KERNC_HOST_ATOMIC_SCOPES(atomicExch)
KERNC_HOST_ATOMIC_SCOPES(atomicMin)
KERNC_HOST_ATOMIC_SCOPES(atomicMax)
KERNC_HOST_ATOMIC_SCOPES(atomicInc)
KERNC_HOST_ATOMIC_SCOPES(atomicDec)
KERNC_HOST_ATOMIC_SCOPES(atomicCAS)
KERNC_HOST_ATOMIC_SCOPES(atomicAnd)
KERNC_HOST_ATOMIC_SCOPES(atomicOr)
KERNC_HOST_ATOMIC_SCOPES(atomicXor)
#undef KERNC_HOST_ATOMIC_SCOPES

// --- bit casts and conversions ---------------------------------------------------------------

inline int __float_as_int(float x) { return kernc_host::from_bits<int>(kernc_host::to_bits(x)); }
inline unsigned __float_as_uint(float x) { return kernc_host::from_bits<unsigned>(kernc_host::to_bits(x)); }
inline float __int_as_float(int x) { return kernc_host::from_bits<float>(kernc_host::to_bits(x)); }
inline float __uint_as_float(unsigned x) { return kernc_host::from_bits<float>(kernc_host::to_bits(x)); }
inline long long __double_as_longlong(double x) { return kernc_host::from_bits<long long>(kernc_host::to_bits(x)); }
inline double __longlong_as_double(long long x) { return kernc_host::from_bits<double>(kernc_host::to_bits(x)); }
inline int __double2hiint(double x) { return static_cast<int>(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return static_cast<int>(static_cast<unsigned>(__double_as_longlong(x))); }
inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double(static_cast<long long>((static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) |
                                                     static_cast<unsigned>(lo)));
}

// _rn: to nearest even (the default rounding mode), _rz: toward zero, _rd: down, _ru: up.
inline int __float2int_rn(float x) { return static_cast<int>(std::nearbyint(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }
inline int __float2int_rd(float x) { return static_cast<int>(std::floor(x)); }
inline int __float2int_ru(float x) { return static_cast<int>(std::ceil(x)); }
inline unsigned __float2uint_rn(float x) { return static_cast<unsigned>(std::nearbyint(x)); }
inline unsigned __float2uint_rz(float x) { return static_cast<unsigned>(x); }
inline long long __float2ll_rn(float x) { return static_cast<long long>(std::nearbyint(x)); }
inline long long __float2ll_rz(float x) { return static_cast<long long>(x); }
inline int __double2int_rn(double x) { return static_cast<int>(std::nearbyint(x)); }
inline int __double2int_rz(double x) { return static_cast<int>(x); }
inline long long __double2ll_rn(double x) { return static_cast<long long>(std::nearbyint(x)); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned x) { return static_cast<float>(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline double __int2double_rn(int x) { return static_cast<double>(x); }
inline double __ll2double_rn(long long x) { return static_cast<double>(x); }

// --- integer intrinsics ------------------------------------------------------------------------

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
  return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) | __brev(static_cast<unsigned>(x >> 32));
}
inline int __mul24(int x, int y) {
  return static_cast<int>(static_cast<long long>(static_cast<int>(static_cast<unsigned>(x) << 8) >> 8) *
                          (static_cast<int>(static_cast<unsigned>(y) << 8) >> 8));
}
inline unsigned __umul24(unsigned x, unsigned y) { return (x & 0xffffffu) * (y & 0xffffffu); }
inline int __mulhi(int x, int y) { return static_cast<int>((static_cast<long long>(x) * y) >> 32); }
inline unsigned __umulhi(unsigned x, unsigned y) { return static_cast<unsigned>((static_cast<unsigned long long>(x) * y) >> 32); }
inline long long __mul64hi(long long x, long long y) { return static_cast<long long>((static_cast<__int128>(x) * y) >> 64); }
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(x) * y) >> 64);
}
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long bytes = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned out = 0;
  for (unsigned i = 0; i < 4; ++i) out |= static_cast<unsigned>((bytes >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
  return out;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned long long both = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>((both << (shift & 31u)) >> 32);
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned long long both = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>((both << std::min(shift, 32u)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned long long both = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>(both >> (shift & 31u));
}
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned long long both = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>(both >> std::min(shift, 32u));
}
inline int __hadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y) >> 1); }
inline int __rhadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y + 1) >> 1); }
inline unsigned __uhadd(unsigned x, unsigned y) { return static_cast<unsigned>((static_cast<unsigned long long>(x) + y) >> 1); }
inline unsigned __urhadd(unsigned x, unsigned y) { return static_cast<unsigned>((static_cast<unsigned long long>(x) + y + 1) >> 1); }
inline unsigned __sad(int x, int y, unsigned z) { return z + static_cast<unsigned>(x > y ? x - y : y - x); }
inline unsigned __usad(unsigned x, unsigned y, unsigned z) { return z + (x > y ? x - y : y - x); }

// --- min and max as CUDA overloads them (mixed types: the usual arithmetic conversions) --------

template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline auto min(A a, B b) -> decltype(a + b) {
  using C = decltype(a + b);
  if constexpr (std::is_floating_point_v<C>) {
    return std::fmin(static_cast<C>(a), static_cast<C>(b));
  } else {
    return static_cast<C>(a) < static_cast<C>(b) ? static_cast<C>(a) : static_cast<C>(b);
  }
}
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline auto max(A a, B b) -> decltype(a + b) {
  using C = decltype(a + b);
  if constexpr (std::is_floating_point_v<C>) {
    return std::fmax(static_cast<C>(a), static_cast<C>(b));
  } else {
    return static_cast<C>(a) > static_cast<C>(b) ? static_cast<C>(a) : static_cast<C>(b);
  }
}
inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

// --- device math: the names <cmath> lacks, and the intrinsics (exact here, not approximate) -------

inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline void __sincosf(float x, float* s, float* c) { sincosf(x, s, c); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float fdividef(float x, float y) { return x / y; }
inline double fdivide(double x, double y) { return x / y; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline double __drcp_rn(double x) { return 1.0 / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline double __dsqrt_rn(double x) { return std::sqrt(x); }
inline float __frsqrt_rn(float x) { return 1.0f / std::sqrt(x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / std::cbrt(x); }
inline double rcbrt(double x) { return 1.0 / std::cbrt(x); }
inline float rhypotf(float x, float y) { return 1.0f / std::hypot(x, y); }
inline double rhypot(double x, double y) { return 1.0 / std::hypot(x, y); }
inline float norm3df(float x, float y, float z) { return std::sqrt(x * x + y * y + z * z); }
inline double norm3d(double x, double y, double z) { return std::sqrt(x * x + y * y + z * z); }
inline float rnorm3df(float x, float y, float z) { return 1.0f / norm3df(x, y, z); }
inline float __saturatef(float x) { return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f); }  // NaN → 0
inline float __fadd_rn(float x, float y) { return x + y; }
inline float __fsub_rn(float x, float y) { return x - y; }
inline float __fmul_rn(float x, float y) { return x * y; }
inline float __fdiv_rn(float x, float y) { return x / y; }
inline float __fmaf_rn(float x, float y, float z) { return std::fma(x, y, z); }
inline double __dadd_rn(double x, double y) { return x + y; }
inline double __dsub_rn(double x, double y) { return x - y; }
inline double __dmul_rn(double x, double y) { return x * y; }
inline double __ddiv_rn(double x, double y) { return x / y; }
inline double __fma_rn(double x, double y, double z) { return std::fma(x, y, z); }
inline float sinpif(float x) { return static_cast<float>(std::sin(M_PI * static_cast<double>(x))); }
inline float cospif(float x) { return static_cast<float>(std::cos(M_PI * static_cast<double>(x))); }
inline double sinpi(double x) { return std::sin(M_PI * x); }
inline double cospi(double x) { return std::cos(M_PI * x); }
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x), *c = cospif(x); }
inline void sincospi(double x, double* s, double* c) { *s = sinpi(x), *c = cospi(x); }

namespace kernc_host {
// erf⁻¹ by Giles' single-precision approximation, then two Newton steps in double.
inline double erfinv(double y) {
  if (y <= -1.0) return y == -1.0 ? -HUGE_VAL : NAN;
  if (y >= 1.0) return y == 1.0 ? HUGE_VAL : NAN;
  double w = -std::log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                     0.246640727, 1.50140941}) {
      x = c + x * w;
    }
  } else {
    w = std::sqrt(w) - 3.0;
    x = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                     1.00167406, 2.83297682}) {
      x = c + x * w;
    }
  }
  x *= y;
  for (int i = 0; i < 2; ++i) x -= (std::erf(x) - y) / (2.0 / std::sqrt(M_PI) * std::exp(-x * x));
  return x;
}
}  // namespace kernc_host

inline double erfinv(double y) { return kernc_host::erfinv(y); }
inline float erfinvf(float y) { return static_cast<float>(kernc_host::erfinv(y)); }
inline double erfcinv(double y) { return kernc_host::erfinv(1.0 - y); }
inline float erfcinvf(float y) { return static_cast<float>(kernc_host::erfinv(1.0 - static_cast<double>(y))); }
inline double normcdf(double x) { return 0.5 * std::erfc(-x / M_SQRT2); }
inline float normcdff(float x) { return static_cast<float>(normcdf(x)); }
inline double normcdfinv(double p) { return -M_SQRT2 * erfcinv(2.0 * p); }
inline float normcdfinvf(float p) { return static_cast<float>(normcdfinv(p)); }

// --- what cannot run on a host: an error at the user's line ----------------------------------

// `asm("...")` and `asm volatile("...")`: the assertion fails at the line of the asm; the
// statement after it is discarded unchecked, so that PTX constraints raise nothing more.
#define asm                                                                                  \
  static_assert(false, "inline PTX asm cannot run on the host backend (Backend::cpu)"); \
  if constexpr (false) __asm__
#define KERNC_HOST_REFUSED(what)                                                                       \
  ([] { static_assert(false, what " cannot run on the host backend (Backend::cpu)"); }, \
   kernc_host::Refused{})
namespace kernc_host {
struct Refused {
  template <class... A>
  int operator()(A&&...) const { return 0; }
};
}  // namespace kernc_host
#define tex1Dfetch KERNC_HOST_REFUSED("texture fetch tex1Dfetch")
#define tex1D KERNC_HOST_REFUSED("texture fetch tex1D")
#define tex2D KERNC_HOST_REFUSED("texture fetch tex2D")
#define tex3D KERNC_HOST_REFUSED("texture fetch tex3D")
#define tex1DLayered KERNC_HOST_REFUSED("texture fetch tex1DLayered")
#define tex2DLayered KERNC_HOST_REFUSED("texture fetch tex2DLayered")
#define texCubemap KERNC_HOST_REFUSED("texture fetch texCubemap")
#define tex2Dgather KERNC_HOST_REFUSED("texture fetch tex2Dgather")
#define tex1DLod KERNC_HOST_REFUSED("texture fetch tex1DLod")
#define tex2DLod KERNC_HOST_REFUSED("texture fetch tex2DLod")
#define surf1Dread KERNC_HOST_REFUSED("surface access surf1Dread")
#define surf1Dwrite KERNC_HOST_REFUSED("surface access surf1Dwrite")
#define surf2Dread KERNC_HOST_REFUSED("surface access surf2Dread")
#define surf2Dwrite KERNC_HOST_REFUSED("surface access surf2Dwrite")
#define surf3Dread KERNC_HOST_REFUSED("surface access surf3Dread")
#define surf3Dwrite KERNC_HOST_REFUSED("surface access surf3Dwrite")
// Types: an unknown name that says why, at the user's line.
#define cudaTextureObject_t cudaTextureObject_t__texture_objects_cannot_run_on_the_host_backend
#define cudaSurfaceObject_t cudaSurfaceObject_t__surface_objects_cannot_run_on_the_host_backend

// --- the entry (NOTE [ host kernel ABI ], templates/host_abi.cuh) ------------------------------

namespace kernc_host {

template <class F>
struct KernelTraits;
template <class... P>
struct KernelTraits<void (*)(P...)> {
  static constexpr std::size_t arity = sizeof...(P);
  template <std::size_t I>
  using Param = std::remove_cv_t<std::remove_reference_t<std::tuple_element_t<I, std::tuple<P...>>>>;
};
template <class... P>
struct KernelTraits<void (*)(P...) noexcept> : KernelTraits<void (*)(P...)> {};

template <auto Kernel, std::size_t... I>
inline __attribute__((always_inline)) void invoke(void** args, std::index_sequence<I...>) {
  using Traits = KernelTraits<decltype(Kernel)>;
  Kernel(*static_cast<typename Traits::template Param<I>*>(args[I])...);
  (void)args;
}

template <auto Kernel>
inline __attribute__((always_inline)) void invoke(void** args) {
  invoke<Kernel>(args, std::make_index_sequence<KernelTraits<decltype(Kernel)>::arity>{});
}

// One thread of a block run as fibers (services->run_block calls it on the thread's fiber).
template <auto Kernel>
void run_thread(void** args, const kernc_host_launch* launch, kernc_host_dim block, kernc_host_dim thread) {
  kernc_host_state_t& s = kernc_host_state;
  s.launch = launch;
  s.block_idx = {block.x, block.y, block.z};
  s.thread_idx = {thread.x, thread.y, thread.z};
  s.block_dim = dim3(launch->block.x, launch->block.y, launch->block.z);
  s.grid_dim = dim3(launch->grid.x, launch->grid.y, launch->grid.z);
  exchange.parity[thread_rank()] = 0;  // a previous block may have left it odd
  invoke<Kernel>(args);
}

}  // namespace kernc_host

/// The entry of kernel `Kernel` (a function pointer: `&name` or `&name<T, 4>`): runs the
/// blocks [launch->block_begin, block_end) of the launch, each as a plain loop over its
/// threads or as fibers (launch->threads_as_fibers).
template <auto Kernel>
void kernc_host_run(const kernc_host_launch* launch, void** args) {
  kernc_host_state_t& s = kernc_host_state;
  const dim3 grid(launch->grid.x, launch->grid.y, launch->grid.z), block(launch->block.x, launch->block.y, launch->block.z);
  for (unsigned long long b = launch->block_begin; b < launch->block_end; ++b) {
    const kernc_host_dim index = {static_cast<unsigned>(b % grid.x), static_cast<unsigned>(b / grid.x % grid.y),
                                  static_cast<unsigned>(b / grid.x / grid.y)};
    s.launch = launch;
    s.block_dim = block;
    s.grid_dim = grid;
    s.block_idx = {index.x, index.y, index.z};
    if (launch->threads_as_fibers) {
      launch->services->run_block(launch, args, index, &kernc_host::run_thread<Kernel>);
      continue;
    }
    for (unsigned z = 0; z < block.z; ++z) {
      for (unsigned y = 0; y < block.y; ++y) {
        for (unsigned x = 0; x < block.x; ++x) {
          s.thread_idx = {x, y, z};
          kernc_host::invoke<Kernel>(args);
        }
      }
    }
  }
}

/// What host_source's rewrite of `extern __shared__ T name[];` points at: this worker's
/// dynamic shared memory (the same address for every launch on the OS thread).
inline void* kernc_host_dynamic_shared() { return kernc_host_state.launch->dynamic_shared; }

#endif  // KERNC_HOST_CUDA_CUH
