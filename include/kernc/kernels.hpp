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

#include "kernc/call.hpp"
#include "kernc/compile_options.hpp"
#include "kernc/diagnostics.hpp"
#include "kernc/dtype.hpp"
#include "kernc/error.hpp"
#include "kernc/export.hpp"
#include "kernc/kernel_options.hpp"
#include "kernc/program.hpp"
#include "kernc/runtime.hpp"
#include "kernc/signature.hpp"

namespace kernc {

/// Device `ordinal` of the global engine (Engine::global().device(ordinal, backend)), for
/// programs that need no engine of their own: with it, this header is enough to make
/// arrays, define, plan and launch kernels. `backend` unset: the engine's runtime
/// (KERNC_RUNTIME, cuda by default); `device(0, Backend::cpu)` is the host's own cores.
/// Throws kernc::Error(no_device) when there is no such device.
KERNC_API Device device(int ordinal = 0, std::optional<Backend> backend = std::nullopt);

namespace detail {
struct KernelAccess;
struct ElementwiseDefinition;
struct ReductionDefinition;
struct HandleTable;
}  // namespace detail

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
  const std::vector<Parameter>& in_params() const noexcept;
  const std::vector<Parameter>& out_params() const noexcept;
  const std::string& operation() const noexcept;
  const ElementwiseOptions& options() const noexcept;

  /// Runs the kernel with CuPy's semantics: plan(inputs, outputs, options), launched on
  /// options.stream. Non-raw arrays broadcast (outputs never do: their shape must be the
  /// broadcast shape), scalars are converted to their parameter's type, missing outputs are
  /// allocated C-contiguous and returned; passed outputs come back as non-owning arrays.
  /// Zero-size calls launch nothing. An input that overlaps an output (other than being the
  /// very same view, which is safe elementwise) is copied first; outputs that overlap each
  /// other are an error. Raw parameters are not checked. The first call of each
  /// argument-type combination and layout class compiles (through the cache) and loads;
  /// repeated calls reuse their plan (NOTE [ call memo ]) and only pack and launch.
  std::vector<DeviceArray> operator()(ListView<Arg> inputs, ListView<ArrayRef> outputs = {},
                                      const CallOptions& options = {}) const;

  /// The call operator() would make (see call.hpp): `inputs` and `outputs` are
  /// descriptions (an array's `data` may be 0). Throws what the call would. Takes
  /// CallOptions::size, block_size and bindings.
  Call plan(ListView<Arg> inputs, ListView<ArrayRef> outputs = {}, const CallOptions& options = {}) const;

 private:
  friend struct detail::KernelAccess;  // the pipeline functions (kernc/pipeline.hpp)
  std::shared_ptr<const detail::ElementwiseDefinition> definition_;
  std::shared_ptr<detail::HandleTable> handles_;  // shared by copies, like the definition
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
  const std::vector<Parameter>& in_params() const noexcept;
  const std::vector<Parameter>& out_params() const noexcept;
  const ReductionOptions& options() const noexcept;

  /// Reduces the broadcast non-raw inputs over `axes` (std::nullopt = every axis;
  /// negative axes count from the end), NumPy-style: duplicate or out-of-range axes are
  /// errors; `keepdims` keeps reduced axes as extent 1; `outputs` may be given (their
  /// shape must match). A reduction over zero elements gives post_map(identity), or an
  /// error when the kernel has no identity. CuPy's call: plan() with `axes` and `keepdims`
  /// in place of the options', launched on options.stream.
  std::vector<DeviceArray> operator()(ListView<Arg> inputs,
                                      const std::optional<std::vector<int>>& axes = std::nullopt,
                                      bool keepdims = false, ListView<ArrayRef> outputs = {},
                                      const CallOptions& options = {}) const;

  /// The call operator() would make (see call.hpp), on descriptions. Takes
  /// CallOptions::axes, keepdims and bindings.
  Call plan(ListView<Arg> inputs, ListView<ArrayRef> outputs = {}, const CallOptions& options = {}) const;

 private:
  friend struct detail::KernelAccess;
  std::shared_ptr<const detail::ReductionDefinition> definition_;
  std::shared_ptr<detail::HandleTable> handles_;  // shared by copies, like the definition
};

namespace detail {
struct RawState;
}

/// One parameter of a raw kernel as its source declares it (read by kernc's declaration
/// scanner from `__global__ void name(...)`).
struct KERNC_API RawParameter {
  std::string text;            ///< the declaration as written: "const float* __restrict__ x"
  std::string name;            ///< "x"; empty when the declaration names none
  bool pointer = false;        ///< a pointer (or array) parameter: takes an array argument
  bool const_pointee = false;  ///< a pointer to const elements: the kernel only reads it
  std::optional<DType> dtype;  ///< a scalar of a C type kernc knows (arguments are converted to it)
};

/// CuPy's RawKernel: the user's code verbatim; the kernel is found by `name` when loaded
/// (so it is usually extern "C"). Compiled on first use, per device.
class KERNC_API RawKernel {
 public:
  RawKernel(std::string code, std::string name, CompileOptions options = {});
  const std::string& name() const noexcept { return name_; }
  /// The loaded kernel function (compiling on first use): attributes, shared-memory limit.
  Function function(const CallOptions& options = {}) const;
  /// Launches with `config` (grid, block, dynamic shared memory, stream). Arrays pass
  /// their device pointer; scalars are converted to the type of the parameter they bind
  /// to when the kernel's signature can be read from the source (extern "C" kernels),
  /// else must match the parameter's size exactly (from the driver). The argument count
  /// is checked whenever either is known. plan(config, args, options) launched on the
  /// config's stream when it names one, else options.stream.
  void operator()(const LaunchConfig& config, ListView<Arg> args, const CallOptions& options = {}) const;
  /// The call operator() would make (see call.hpp): the argument checks the declaration
  /// allows, on descriptions; `config` (grid, block, shared memory, cooperative) is kept.
  Call plan(const LaunchConfig& config, ListView<Arg> args, const CallOptions& options = {}) const;
  /// The kernel's parameters as its source declares them; std::nullopt when no readable
  /// `__global__ void name(...)` declaration is found (the driver's sizes are used then).
  std::optional<std::vector<RawParameter>> parameters() const;
  /// The checks a launch makes of `args` that need no GPU (count; an array for each
  /// pointer, a scalar otherwise), on descriptions (an array's `data` may be 0).
  void check_arguments(ListView<Arg> args) const;

 private:
  friend struct detail::KernelAccess;
  std::string code_;
  std::string name_;
  CompileOptions options_;
  std::shared_ptr<detail::RawState> state_;
};

/// The kind of a binary file a RawModule is loaded from, told by its first bytes.
enum class ModuleFileKind {
  cubin,   ///< an ELF image for one GPU architecture (nvcc -cubin, NVRTC's cubin)
  ptx,     ///< PTX text, JIT-compiled by the driver for the device it is loaded on
  fatbin,  ///< several cubins and PTX in one file (nvcc -fatbin): the driver picks among them
};
KERNC_API const char* to_string(ModuleFileKind kind) noexcept;

/// One binary file for RawModule::from_files.
struct KERNC_API RawModuleFile {
  std::string path;
  /// What it was built for ("sm_80" for a cubin, "compute_80" for PTX); empty to read it
  /// from the file (a cubin's ELF header, PTX's `.target` line). Give it for an
  /// arch-specific cubin (sm_90a): cubin headers do not reliably record the suffix. A
  /// target that contradicts the file, or one given for a fatbin, is refused.
  std::optional<Target> target;
};

/// A binary of a RawModule made from files, as kernc read it.
struct KERNC_API RawModuleBinary {
  std::string path;
  ModuleFileKind kind = ModuleFileKind::cubin;
  /// The architecture it runs on; none for a fatbin (the driver chooses among its images).
  std::optional<Target> target;
  std::size_t bytes = 0;  ///< the file's size when read
};

/// CuPy's RawModule: one translation unit with several kernels and globals; templates
/// are reached through name expressions, whose lowered names the compiled program keeps.
/// Or, as CuPy's RawModule(path=...), binaries built outside kernc (from_file, from_files).
class KERNC_API RawModule {
 public:
  RawModule(std::string code, CompileOptions options = {}, std::vector<std::string> name_expressions = {},
            std::string name = "module");
  /// Loads a module from a cubin, PTX or fatbin file built with nvcc (CuPy's
  /// RawModule(path=...)); as from_files({{path}}, name).
  static RawModule from_file(const std::string& path, std::string name = "module");
  /// Loads a module from binaries of one source built for several architectures, e.g.
  /// {sm_80 cubin, sm_90 cubin, compute_80 PTX}. Each file is read once, here, and only if
  /// trusted as a cache entry is (a regular file, not a symlink, owned by this user or
  /// root, not writable by group or others: cache/FORMAT.md, "Trust"); its kind is told by
  /// its first bytes and its target read from it unless given. On each device the binary is
  /// chosen down binary_ladder(device) (binaries_for), the next one tried when the driver
  /// refuses one. A fatbin must be the only file. There is no source: no program(), no
  /// name expressions (get_function takes mangled names as they are), and parameters() is
  /// std::nullopt, so a launch checks arguments against the driver's parameter sizes.
  /// Throws kernc::Error: io for a file that is missing, unreadable or not trusted (the
  /// message names the path and why); invalid_argument for one that is empty or not a
  /// cubin, PTX or fatbin, a target it contradicts, two files of one target.
  static RawModule from_files(std::vector<RawModuleFile> files, std::string name = "module");
  /// Whether this module was made from binary files (from_file, from_files).
  bool is_binary() const noexcept;
  /// The binaries read by from_files, in the order given; empty for a module of source.
  const std::vector<RawModuleBinary>& binaries() const noexcept;
  /// The binaries a device of architecture `device` ("sm_86") tries, best first: those on
  /// the rungs of binary_ladder(device), in its order (an sm_XY cubin; a lower minor's
  /// cubin of the same major; PTX of compute_NN <= XY, newest first), or the fatbin.
  /// Needs no GPU. Empty when none fits; the load then fails naming what was given.
  std::vector<RawModuleBinary> binaries_for(const Target& device) const;
  const std::string& name() const noexcept { return name_; }
  const std::vector<std::string>& name_expressions() const noexcept { return name_expressions_; }
  /// A kernel by name, or by name expression (then its lowered name is used).
  Function get_function(const std::string& name, const CallOptions& options = {}) const;
  /// Device address and size of a __device__ or __constant__ global.
  std::pair<std::uint64_t, std::size_t> get_global(const std::string& name, const CallOptions& options = {}) const;
  /// Launches `function` of this module as RawKernel::operator() does (same argument rules).
  void launch(const std::string& function, const LaunchConfig& config, ListView<Arg> args,
              const CallOptions& options = {}) const;
  /// The call launch() would make (see call.hpp), as RawKernel::plan.
  Call plan(const std::string& function, const LaunchConfig& config, ListView<Arg> args,
            const CallOptions& options = {}) const;
  /// The parameters of `function` as the source declares them. A name expression
  /// ("axpby<float *>") gives its template's declaration with the instance's template
  /// arguments in place of the type parameters (`T p` reads `float * p`: a pointer).
  /// std::nullopt when no readable declaration is found.
  std::optional<std::vector<RawParameter>> parameters(const std::string& function) const;
  /// The GPU-free checks launch() makes of `args` for `function` (see RawKernel); none for
  /// a module of binary files (its parameters are known only to the driver).
  void check_arguments(const std::string& function, ListView<Arg> args) const;

 private:
  friend struct detail::KernelAccess;
  RawModule() = default;
  std::string code_;
  CompileOptions options_;
  std::vector<std::string> name_expressions_;
  std::string name_;
  std::shared_ptr<detail::RawState> state_;
};

}  // namespace kernc
