#pragma once
/// \file
/// What defines a kernel beyond its strings (CuPy's keyword arguments), and one parameter
/// of its in_params/out_params as parsed. Host data only.

#include <optional>
#include <string>

#include "kernc/compile_options.hpp"
#include "kernc/dtype.hpp"
#include "kernc/export.hpp"

namespace kernc {

/// One parameter of an ElementwiseKernel or ReductionKernel: "[raw] TYPE name".
struct KERNC_API Parameter {
  std::string name;
  bool raw = false;
  bool output = false;
  std::optional<DType> dtype;  ///< set for a concrete type
  std::string placeholder;     ///< set for a type placeholder ("T")
  std::string text;            ///< the parameter as written, for messages
};

/// Options of an ElementwiseKernel beyond its four strings (CuPy's keyword arguments).
struct KERNC_API ElementwiseOptions {
  std::string preamble;    ///< code before the kernel (device functions, macros)
  std::string loop_prep;   ///< code before the loop, inside the kernel
  std::string after_loop;  ///< code after the loop, inside the kernel
  bool reduce_dims = true; ///< collapse contiguous dimensions before choosing the layout
  /// float16 and bfloat16 +, - and * of two halves give a half, natively on sm_53+, rounding
  /// after each operation. Off (CuPy's semantics): halves compute in float and round once,
  /// when stored (NOTE [ half arithmetic is float arithmetic ], templates/float16.cuh).
  bool native_half_arithmetic = false;
  CompileOptions compile;
};

/// Options of a ReductionKernel beyond its seven strings.
struct KERNC_API ReductionOptions {
  std::string reduce_type;  ///< type of `a`/`b`; default: the first output's type
  std::string preamble;
  bool reduce_dims = true;
  bool native_half_arithmetic = false;  ///< as ElementwiseOptions::native_half_arithmetic
  CompileOptions compile;
};

}  // namespace kernc
