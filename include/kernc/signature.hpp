#pragma once
/// \file
/// The vocabulary of call shapes, shared by planning, code generation and spec files:
/// argument types, layout classes, a call's types and their resolution, and the
/// signature lines of spec files. Host data only: no GPU, engine or cache types.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernc/dtype.hpp"
#include "kernc/export.hpp"

namespace kernc {

/// The type of one argument: an array of a dtype, or a scalar of a C type (a scalar is
/// converted to its parameter's type and never binds a type placeholder).
struct KERNC_API ArgType {
  DType dtype = DType::float32;
  bool scalar = false;
  static ArgType array(DType d) { return {d, false}; }
  static ArgType scalar_of(DType d) { return {d, true}; }
  friend bool operator==(const ArgType& a, const ArgType& b) { return a.dtype == b.dtype && a.scalar == b.scalar; }
};

/// How the non-raw arrays of a call are laid out, after broadcasting and collapsing dims.
enum class LayoutKind {
  contiguous,  ///< every non-raw array is C-contiguous over the loop: flat indexing
  strided,     ///< strided, rank 1 to kMaxStridedRank known at compile time
  generic,     ///< strided, any rank up to kMaxDims, known at run time
  tiled,       ///< rank 2..kMaxTiledRank: an input is transposed against the outputs; 32 x 32 tiles
};

/// A layout class: one of the few shapes of generated code per signature.
struct KERNC_API Layout {
  LayoutKind kind = LayoutKind::contiguous;
  int rank = 0;          ///< strided: 1..kMaxStridedRank; tiled: 2..kMaxTiledRank; 0 otherwise
  bool index64 = false;  ///< 64-bit indexing (sizes or byte offsets past 2^31 - 1)

  static constexpr int kMaxStridedRank = 4;
  static constexpr int kMaxTiledRank = 3;  ///< a transpose, or a batch of them
  static constexpr int kMaxDims = 16;  ///< see NOTE [ kernel parameter layout ] in templates/array.cuh

  /// The RANK the generated code gives its array views (templates/array.cuh): 0 for
  /// contiguous (flat index), the rank for strided and tiled, -1 for generic (rank known at
  /// run time).
  int view_rank() const noexcept;
  /// "contiguous-i32", "strided2-i64", "tiled2-i32", "generic-i32".
  std::string str() const;
  /// Parses str()'s output; throws kernc::Error(invalid_argument).
  static Layout parse(const std::string& text);
  /// Every layout class an ElementwiseKernel call can select.
  static std::vector<Layout> elementwise_classes();
  /// Every layout class a ReductionKernel call can select (contiguous or generic).
  static std::vector<Layout> reduction_classes();
  friend bool operator==(const Layout& a, const Layout& b) {
    return a.kind == b.kind && a.rank == b.rank && a.index64 == b.index64;
  }
};

/// A call's types: one ArgType per input; per output, the dtype of the array passed,
/// or std::nullopt when kernc allocates it; explicit placeholder bindings ("T" → float32).
struct KERNC_API CallTypes {
  std::vector<ArgType> inputs;
  std::vector<std::optional<DType>> outputs;
  std::map<std::string, DType> bindings;
};

/// The outcome of type resolution: every parameter's concrete dtype.
struct KERNC_API ResolvedTypes {
  std::map<std::string, DType> placeholders;  ///< "T" → float32
  std::vector<DType> inputs;                  ///< per input parameter
  std::vector<DType> outputs;                 ///< per output parameter
};

/// Parses a signature line of a spec file: "float32, scalar float32 -> float32".
/// Inputs before "->", outputs after; "scalar " marks a scalar argument; an output may be
/// "_" (allocated by kernc, type from resolution). Throws kernc::Error(invalid_argument).
KERNC_API CallTypes parse_call_signature(const std::string& text);
/// The inverse of parse_call_signature.
KERNC_API std::string format_call_signature(const CallTypes& types);

}  // namespace kernc
