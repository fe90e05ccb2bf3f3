#pragma once
/// \file
/// CuPy-style kernel definitions: ElementwiseKernel, ReductionKernel, RawKernel, RawModule.
///
/// A definition is parsed and checked when constructed. A call shape (the dtypes of the
/// arguments plus a layout class) selects exactly one generated Program; the same call
/// shape always gives the same Program, so its cache key is known without a GPU.
///
/// Threads: a kernel object (and its copies, which share state) may be called from
/// several host threads at once. The first call of a call shape compiles and loads it
/// without holding any lock other calls need: calls of shapes already loaded, and cache
/// hits of other programs, never wait for it. Launches on one stream are ordered by the
/// driver; ordering across streams is the caller's.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernc/compile_options.hpp"
#include "kernc/engine.hpp"
#include "kernc/dtype.hpp"
#include "kernc/error.hpp"
#include "kernc/program.hpp"
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
};

/// A layout class: one of the few shapes of generated code per signature.
struct KERNC_API Layout {
  LayoutKind kind = LayoutKind::contiguous;
  int rank = 0;          ///< for strided: 1..kMaxStridedRank; 0 otherwise
  bool index64 = false;  ///< 64-bit indexing (sizes or byte offsets past 2^31 - 1)

  static constexpr int kMaxStridedRank = 4;
  static constexpr int kMaxDims = 16;  ///< see NOTE [ kernel parameter layout ] in templates/array.cuh

  /// "contiguous-i32", "strided2-i64", "generic-i32".
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

namespace detail {
struct ElementwiseDefinition;
struct ReductionDefinition;
}  // namespace detail

/// Options of an ElementwiseKernel beyond its four strings (CuPy's keyword arguments).
struct KERNC_API ElementwiseOptions {
  std::string preamble;    ///< code before the kernel (device functions, macros)
  std::string loop_prep;   ///< code before the loop, inside the kernel
  std::string after_loop;  ///< code after the loop, inside the kernel
  bool reduce_dims = true; ///< collapse contiguous dimensions before choosing the layout
  CompileOptions compile;
};

/// CuPy's ElementwiseKernel: `operation` runs once per element of the broadcast shape.
class KERNC_API ElementwiseKernel {
 public:
  /// Parses and checks the definition; throws kernc::Error(invalid_argument) quoting what is wrong.
  ElementwiseKernel(std::string in_params, std::string out_params, std::string operation, std::string name,
                    ElementwiseOptions options = {});
  ~ElementwiseKernel();
  ElementwiseKernel(const ElementwiseKernel&);
  ElementwiseKernel& operator=(const ElementwiseKernel&);

  const std::string& name() const noexcept;
  std::size_t input_count() const noexcept;
  std::size_t output_count() const noexcept;
  /// Resolves every parameter's dtype for a call; throws kernc::Error(invalid_argument).
  ResolvedTypes resolve(const CallTypes& types) const;
  /// The one program this call shape uses (deterministic, so its cache key is too).
  Program program(const CallTypes& types, const Layout& layout) const;
  const detail::ElementwiseDefinition& definition() const noexcept { return *definition_; }

  /// Runs the kernel with CuPy's semantics: non-raw arrays broadcast (outputs never do:
  /// their shape must be the broadcast shape), scalars are converted to their parameter's
  /// type, missing outputs are allocated C-contiguous and returned; passed outputs come
  /// back as non-owning arrays. Zero-size calls launch nothing. An input that overlaps an
  /// output (other than being the very same view, which is safe elementwise) is copied
  /// first; outputs that overlap each other are an error. Raw parameters are not checked.
  /// The first call of each argument-type combination and layout class compiles (through
  /// the cache) and loads; later ones only pack arguments and launch.
  std::vector<DeviceArray> operator()(const std::vector<Arg>& inputs, const std::vector<ArrayRef>& outputs = {},
                                      const CallOptions& options = {}) const;

 private:
  std::shared_ptr<const detail::ElementwiseDefinition> definition_;
};

/// Options of a ReductionKernel beyond its seven strings.
struct KERNC_API ReductionOptions {
  std::string reduce_type;  ///< type of `a`/`b`; default: the first output's type
  std::string preamble;
  bool reduce_dims = true;
  CompileOptions compile;
};

/// CuPy's ReductionKernel: map_expr per input element, reduce_expr(a, b) to combine,
/// post_map_expr(a) per output. An empty identity means "none": empty reductions fail.
class KERNC_API ReductionKernel {
 public:
  ReductionKernel(std::string in_params, std::string out_params, std::string map_expr, std::string reduce_expr,
                  std::string post_map_expr, std::string identity, std::string name, ReductionOptions options = {});
  ~ReductionKernel();
  ReductionKernel(const ReductionKernel&);
  ReductionKernel& operator=(const ReductionKernel&);

  const std::string& name() const noexcept;
  std::size_t input_count() const noexcept;
  std::size_t output_count() const noexcept;
  bool has_identity() const noexcept;
  ResolvedTypes resolve(const CallTypes& types) const;
  Program program(const CallTypes& types, const Layout& layout) const;
  const detail::ReductionDefinition& definition() const noexcept { return *definition_; }

  /// Reduces the broadcast non-raw inputs over `axes` (std::nullopt = every axis;
  /// negative axes count from the end), NumPy-style: duplicate or out-of-range axes are
  /// errors; `keepdims` keeps reduced axes as extent 1; `outputs` may be given (their
  /// shape must match). A reduction over zero elements gives post_map(identity), or an
  /// error when the kernel has no identity.
  std::vector<DeviceArray> operator()(const std::vector<Arg>& inputs,
                                      const std::optional<std::vector<int>>& axes = std::nullopt,
                                      bool keepdims = false, const std::vector<ArrayRef>& outputs = {},
                                      const CallOptions& options = {}) const;

 private:
  std::shared_ptr<const detail::ReductionDefinition> definition_;
};

namespace detail {
struct RawState;
}

/// CuPy's RawKernel: the user's code verbatim; the kernel is found by `name` when loaded
/// (so it is usually extern "C"). Compiled on first use, per device.
class KERNC_API RawKernel {
 public:
  RawKernel(std::string code, std::string name, CompileOptions options = {});
  const std::string& name() const noexcept { return name_; }
  Program program() const;
  /// The loaded kernel function (compiling on first use): attributes, shared-memory limit.
  Function function(const CallOptions& options = {}) const;
  /// Launches with `config` (grid, block, dynamic shared memory, stream). Arrays pass
  /// their device pointer; scalars are converted to the type of the parameter they bind
  /// to when the kernel's signature can be read from the source (extern "C" kernels),
  /// else must match the parameter's size exactly (from the driver). The argument count
  /// is checked whenever either is known.
  void operator()(const LaunchConfig& config, const std::vector<Arg>& args, const CallOptions& options = {}) const;

 private:
  std::string code_;
  std::string name_;
  CompileOptions options_;
  std::shared_ptr<detail::RawState> state_;
};

/// CuPy's RawModule: one translation unit with several kernels and globals; templates
/// are reached through name expressions, whose lowered names the compiled program keeps.
class KERNC_API RawModule {
 public:
  RawModule(std::string code, CompileOptions options = {}, std::vector<std::string> name_expressions = {},
            std::string name = "module");
  const std::string& name() const noexcept { return name_; }
  const std::vector<std::string>& name_expressions() const noexcept { return name_expressions_; }
  Program program() const;
  /// A kernel by name, or by name expression (then its lowered name is used).
  Function get_function(const std::string& name, const CallOptions& options = {}) const;
  /// Device address and size of a __device__ or __constant__ global.
  std::pair<std::uint64_t, std::size_t> get_global(const std::string& name, const CallOptions& options = {}) const;
  /// Launches `function` of this module as RawKernel::operator() does (same argument rules).
  void launch(const std::string& function, const LaunchConfig& config, const std::vector<Arg>& args,
              const CallOptions& options = {}) const;

 private:
  std::string code_;
  CompileOptions options_;
  std::vector<std::string> name_expressions_;
  std::string name_;
  std::shared_ptr<detail::RawState> state_;
};

/// The compile log with generated-code locations turned into the user's own: a line like
/// `saxpy operation(1): error: ...` (NVRTC) or `saxpy operation:1:5: error: ...` (HIPRTC)
/// reads `saxpy operation, line 1: error: ...`.
KERNC_API std::string map_log_to_snippets(const std::string& log);

/// The same error with map_log_to_snippets applied to its message and log (others unchanged).
KERNC_API Error map_error_to_snippets(const Error& error);

/// `source` with each line prefixed by its number, for showing generated code.
KERNC_API std::string number_lines(const std::string& source);

}  // namespace kernc
