#pragma once
/// \file
/// Element types, named as NumPy names them.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include "kernc/export.hpp"

namespace kernc {

enum class DType {
  bool_,
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  float8_e4m3fn,  ///< 8-bit float, 4 exponent bits, 3 mantissa bits, no infinities (OCP FP8 E4M3, ml_dtypes' name)
  float8_e5m2,    ///< 8-bit float, 5 exponent bits, 2 mantissa bits, IEEE-like (OCP FP8 E5M2)
  float16,
  bfloat16,
  float32,
  float64,
  complex64,
  complex128,
};

/// NumPy's canonical name: "bool", "int8", ..., "complex128".
KERNC_API const char* to_string(DType dtype) noexcept;
/// Bytes per element.
KERNC_API std::size_t itemsize(DType dtype) noexcept;
/// The type's name in device code, as the templates' prelude defines it ("float", "kernc::float16", ...).
KERNC_API const char* device_type(DType dtype) noexcept;
/// Parses a dtype name or one of NumPy's aliases ("float" → float64, "int" → int64, "f4",
/// "single", ...); std::nullopt if it is none.
KERNC_API std::optional<DType> parse_dtype(std::string_view name);
/// Every dtype, in enum order.
KERNC_API const DType* all_dtypes(std::size_t* count) noexcept;

KERNC_API bool is_integer(DType dtype) noexcept;
KERNC_API bool is_unsigned(DType dtype) noexcept;
KERNC_API bool is_floating(DType dtype) noexcept;
KERNC_API bool is_complex(DType dtype) noexcept;

}  // namespace kernc
