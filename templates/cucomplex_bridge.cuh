// NOTE [ cuComplex bridge ]
// Code written for CuPy's RawKernel(..., translate_cucomplex=True) compiles against CuPy's
// cuComplex_bridge.h, where every cuC* function is a macro over one generic complex type:
// such code may call a double-named function on single-precision values (`cuCadd` on two
// `cuComplex`, as CuPy's own test_raw.py does) or the reverse. NVIDIA's <cuComplex.h> has
// one precision per name. kernc includes this file right after the source's own
// `#include <cuComplex.h>` (src/codegen/cucomplex_bridge.cpp): overloads of each name for
// the other precision, computed in that precision by NVIDIA's own function. A program
// that never calls a function across precisions compiles to what it did without them.
#pragma once

#define KERNC_CUCOMPLEX_BINARY(name, f_name)                                                                   \
  __host__ __device__ static __inline__ cuFloatComplex name(cuFloatComplex x, cuFloatComplex y) {             \
    return f_name(x, y);                                                                                       \
  }                                                                                                            \
  __host__ __device__ static __inline__ cuDoubleComplex f_name(cuDoubleComplex x, cuDoubleComplex y) {        \
    return name(x, y);                                                                                         \
  }
KERNC_CUCOMPLEX_BINARY(cuCadd, cuCaddf)
KERNC_CUCOMPLEX_BINARY(cuCsub, cuCsubf)
KERNC_CUCOMPLEX_BINARY(cuCmul, cuCmulf)
KERNC_CUCOMPLEX_BINARY(cuCdiv, cuCdivf)
#undef KERNC_CUCOMPLEX_BINARY

__host__ __device__ static __inline__ cuFloatComplex cuConj(cuFloatComplex x) { return cuConjf(x); }
__host__ __device__ static __inline__ cuDoubleComplex cuConjf(cuDoubleComplex x) { return cuConj(x); }
__host__ __device__ static __inline__ float cuCabs(cuFloatComplex x) { return cuCabsf(x); }
__host__ __device__ static __inline__ double cuCabsf(cuDoubleComplex x) { return cuCabs(x); }
__host__ __device__ static __inline__ float cuCreal(cuFloatComplex x) { return cuCrealf(x); }
__host__ __device__ static __inline__ double cuCrealf(cuDoubleComplex x) { return cuCreal(x); }
__host__ __device__ static __inline__ float cuCimag(cuFloatComplex x) { return cuCimagf(x); }
__host__ __device__ static __inline__ double cuCimagf(cuDoubleComplex x) { return cuCimag(x); }
__host__ __device__ static __inline__ cuFloatComplex cuCfma(cuFloatComplex x, cuFloatComplex y, cuFloatComplex d) {
  return cuCfmaf(x, y, d);
}
__host__ __device__ static __inline__ cuDoubleComplex cuCfmaf(cuDoubleComplex x, cuDoubleComplex y, cuDoubleComplex d) {
  return cuCfma(x, y, d);
}
