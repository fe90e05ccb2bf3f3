// kernc device prelude: the one place where CUDA and HIP differ for generated code.
// NOTE [ prelude ]: generated kernels and the other templates use only what this file
// defines (KERNC_DEVICE, kernc::bits_*, the half-precision conversions and
// kernc::shuffle_down); nothing else
// in templates/ or src/ may test which compiler is running.
#pragma once

#if defined(KERNC_HOST)
// The host backend (NOTE [ host compiler ], src/compiler/host_compiler.cpp): the system C++
// compiler, with templates/host_cuda.cuh's CUDA environment included before this file.
#elif defined(__HIPCC_RTC__) || defined(__HIP__)
#define KERNC_HIP 1
#else
#define KERNC_CUDA 1
#endif

#define KERNC_DEVICE __device__ __forceinline__

// NOTE [ host loops ]
// A CPU core is one thread that g++ vectorizes, not 256 threads of a block: the host backend
// launches elementwise and reduction kernels with one thread a block, each block taking a
// long run of adjacent elements (src/dsl/elementwise_plan.cpp, reduction_plan.cpp; the
// driver spreads blocks over its workers). The generated text stays one for every target:
//  - KERNC_SERIAL_BLOCKS: 1 on the host, where the reduction templates take their host
//    bodies (a block folds whole chunks of its outputs' rows in independent lanes, combined
//    in a fixed order, no barrier; templates/reduction.cu.in, reduction_columns.cu.in);
//  - KERNC_CONTIGUOUS_SCALE: how many times the GPU's elements per thread the contiguous
//    elementwise kernel's one host thread takes a step (templates/elementwise_contiguous.cu.in);
//    dsl::kHostContiguousScale must be the same number.
#if defined(KERNC_HOST)
#define KERNC_SERIAL_BLOCKS 1
#define KERNC_CONTIGUOUS_SCALE 128
#else
#define KERNC_SERIAL_BLOCKS 0
#define KERNC_CONTIGUOUS_SCALE 1
#endif

namespace kernc {

KERNC_DEVICE unsigned int float_bits(float f) { return __float_as_uint(f); }
KERNC_DEVICE float bits_float(unsigned int u) { return __uint_as_float(u); }
KERNC_DEVICE unsigned long long double_bits(double d) { return static_cast<unsigned long long>(__double_as_longlong(d)); }

// Round-to-nearest-even float → binary16, and back.
KERNC_DEVICE unsigned short float_to_half_bits(float f) {
#if defined(KERNC_CUDA)
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#elif defined(KERNC_HOST)
  // In software, as a GPU's cvt.rn.f16.f32 rounds: to nearest even, NaN to 0x7fff.
  const unsigned int u = float_bits(f), a = u & 0x7fffffffu;
  const unsigned short sign = static_cast<unsigned short>((u >> 16) & 0x8000u);
  if (a > 0x7f800000u) return 0x7fff;
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and up round to infinity
  unsigned int h, rest, half;
  if (a < 0x38800000u) {  // below 2^-14: a subnormal half, or zero
    if (a < 0x33000000u) return sign;
    const unsigned int shift = 126u - (a >> 23), mantissa = (a & 0x7fffffu) | 0x800000u;
    h = mantissa >> shift;
    rest = mantissa & ((1u << shift) - 1u);
    half = 1u << (shift - 1u);
  } else {
    h = (a - 0x38000000u) >> 13;
    rest = a & 0x1fffu;
    half = 0x1000u;
  }
  if (rest > half || (rest == half && (h & 1u))) ++h;
  return static_cast<unsigned short>(sign | h);
#else
  _Float16 h = static_cast<_Float16>(f);
  return *reinterpret_cast<unsigned short*>(&h);
#endif
}

KERNC_DEVICE float half_bits_to_float(unsigned short h) {
#if defined(KERNC_CUDA)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#elif defined(KERNC_HOST)
  const unsigned int sign = (static_cast<unsigned int>(h) & 0x8000u) << 16;
  const unsigned int exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return mantissa ? bits_float(0x7fffffffu) : bits_float(sign | 0x7f800000u);
  if (exponent == 0) {
    const float value = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // exact: m * 2^-24
    return sign ? -value : value;
  }
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
#else
  return static_cast<float>(*reinterpret_cast<_Float16*>(&h));
#endif
}

// The 32-bit word of the lane `offset` above this one in the warp (wavefront). Every lane
// of the warp must call it. Groups of up to 32 lanes only: AMD's wavefronts are 64 wide,
// NVIDIA's warps 32, and a group never straddles either.
KERNC_DEVICE unsigned int shuffle_down(unsigned int word, int offset) {
#if defined(KERNC_CUDA) || defined(KERNC_HOST)
  return __shfl_down_sync(0xffffffffu, word, offset);
#else
  return __shfl_down(word, offset);
#endif
}

// bfloat16 is the top half of a float: convert in software, the same on both backends.
KERNC_DEVICE unsigned short float_to_bfloat16_bits(float f) {
  unsigned int u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<unsigned short>(u >> 16);
}

KERNC_DEVICE float bfloat16_bits_to_float(unsigned short b) { return bits_float(static_cast<unsigned int>(b) << 16); }

}  // namespace kernc
