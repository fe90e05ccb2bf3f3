#pragma once
/// \file
/// One way to call every kernel kind: plan, then launch.
///
/// `plan(arguments, options)` of an ElementwiseKernel, a ReductionKernel, a RawKernel, a
/// RawModule function or a spec file's kernel decides the call on the host — types,
/// broadcasting, outputs, the program variant, the launch geometry — and returns a `Call`.
/// Planning compiles nothing and runs nothing on a GPU; it asks the GPU its multiprocessor
/// count unless the options give it (CallOptions::multiprocessors). Arguments are
/// *descriptions*: an array's `data` may be 0 (dtype, shape and byte strides are what
/// count), a scalar's value may change at each launch. Bad input throws the same
/// kernc::Error a launch would.
///
/// `Call::launch(arguments, outputs, stream)` then runs it on real buffers of exactly the
/// described dtypes, shapes and strides, as often as wanted, at a cost near a raw
/// cuLaunchKernel: no type resolution, broadcasting or loop planning, and after the first
/// launch no lookup of the kernel function either. The kernels' `operator()` is plan +
/// launch, and remembers its last plans so that a repeated call does not plan again.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernc/array.hpp"
#include "kernc/dtype.hpp"
#include "kernc/export.hpp"
#include "kernc/list_view.hpp"
#include "kernc/runtime.hpp"
#include "kernc/scalar.hpp"
#include "kernc/signature.hpp"

namespace kernc {

class Engine;

/// How a kernel is called: everything but the arguments. Each field says which kernel
/// kinds take it; a field set for a kind that does not take it is an invalid_argument
/// error naming it, never ignored.
struct KERNC_API CallOptions {
  /// The stream operator() launches on (a kept Call takes its stream per launch); the
  /// default is the legacy default stream (see runtime.hpp).
  StreamRef stream;
  /// The device the call runs on, and its arrays live on: ordinal `device` of `backend`.
  int device = 0;
  /// Which backend `device` is of: Backend::cpu runs the call on the host's cores (its
  /// arrays are host memory). Unset: the engine's runtime (Config::runtime, KERNC_RUNTIME;
  /// cuda by default).
  std::optional<Backend> backend;
  /// The engine to use; nullptr means Engine::global().
  Engine* engine = nullptr;
  /// The multiprocessors of the GPU the call is planned for: the launch geometry and the
  /// index width depend on it. Unset: Device::multiprocessors() of `device` (planning then
  /// opens the GPU), or kDefaultMultiprocessors (an H100 SXM's) where there is no driver or
  /// no such GPU, so that a call can be checked on any machine. Set, planning touches no
  /// GPU; a launch on a GPU with another count is an error that says so.
  std::optional<int> multiprocessors;
  static constexpr int kDefaultMultiprocessors = 132;

  /// Elementwise and reduction kernels: explicit placeholder bindings, for placeholders
  /// no array decides ("T" → float32).
  std::map<std::string, DType> bindings;
  /// Elementwise kernels: the loop size (CuPy's size=), allowed when no non-raw array is
  /// passed; outputs kernc allocates then have shape (size,), raw ones included.
  std::optional<std::int64_t> size;
  /// Elementwise kernels: threads per block (CuPy's block_size=), 1 to 1024; by default
  /// kernc picks (256). A launch checks the device's own limit.
  std::optional<unsigned> block_size;
  /// Reduction kernels: the axes to reduce (std::nullopt = every axis; negative axes count
  /// from the end), NumPy-style: duplicate or out-of-range axes are errors.
  std::optional<std::vector<int>> axes;
  /// Reduction kernels: keep reduced axes as extent 1.
  bool keepdims = false;
  /// Raw kernels and module functions (required): grid, block, dynamic shared memory,
  /// cooperative launch and the launch attributes (thread-block clusters, programmatic
  /// dependent launch, priority). Its stream is not used: a launch's stream is the call's.
  std::optional<LaunchConfig> launch;
  /// Module functions: the kernel's name or name expression.
  std::string function;
};

/// An argument of a kernel call: an array (view or owning) or a scalar.
class KERNC_API Arg {
 public:
  Arg(const ArrayRef& array) : array_(array), is_array_(true) {}
  Arg(const DeviceArray& array) : array_(array.ref()), is_array_(true) {}
  Arg(const Scalar& scalar) : scalar_(scalar) {}
  template <class T, class = decltype(Scalar(std::declval<T>()))>
  Arg(T value) : scalar_(Scalar(value)) {}
  /// A raw pointer is not an argument (it would convert to the bool scalar `true`): pass
  /// device memory as an ArrayRef, e.g. ArrayRef::contiguous(pointer, DType::float32, {n}),
  /// or an address as a std::uint64_t scalar.
  template <class T>
  Arg(T* pointer) = delete;

  bool is_array() const noexcept { return is_array_; }
  const ArrayRef& array() const noexcept { return array_; }
  const Scalar& scalar() const noexcept { return scalar_; }

 private:
  ArrayRef array_;
  Scalar scalar_;
  bool is_array_ = false;
};

/// The kinds of kernel a Call can be of.
enum class KernelKind { elementwise, reduction, raw };
KERNC_API const char* to_string(KernelKind kind) noexcept;

/// What a planned call is: what Call's accessors read (for display and tools).
struct CallDescription {
  KernelKind kind = KernelKind::elementwise;
  std::string kernel;
  CallTypes types;
  ResolvedTypes resolved;
  Layout layout;
  std::vector<std::int64_t> shape;
  std::vector<ArrayRef> outputs;
  bool allocates_outputs = false;
  LaunchConfig launch;
  int device = 0;
  int multiprocessors = 0;
  std::vector<int> axes;
  std::int64_t reduce_size = 0, splits = 0;
};

namespace detail {
class CallPlan;
}

/// A kernel call, planned: what every kernel kind's plan() returns. Cheap to copy (copies
/// share the prepared state); usable from several threads at once. It keeps its kernel's
/// loaded state alive, and must not outlive its Engine.
class KERNC_API Call {
 public:
  Call() = default;
  explicit Call(std::shared_ptr<const detail::CallPlan> plan);
  bool valid() const noexcept { return plan_ != nullptr; }

  /// Runs the call on `arguments` (inputs, or a raw kernel's arguments in order) that
  /// match its descriptions exactly (scalars may take new values), on `stream`. Outputs
  /// are passed when the plan described them; when it did not, they are allocated and
  /// returned, or the caller passes arrays laid out exactly as outputs() describes. The
  /// caller's outputs come back as non-owning arrays. An input that overlaps an output
  /// (other than being the very same view, which is safe elementwise) is read from a copy;
  /// outputs that overlap each other are an error. Throws kernc::Error(invalid_argument)
  /// naming the first argument that differs from the plan.
  std::vector<DeviceArray> launch(ListView<Arg> arguments, ListView<ArrayRef> outputs = {},
                                  StreamRef stream = {}) const;
  /// launch() into the caller's `outputs` (required when the kernel has outputs),
  /// returning nothing: no lookup, no lock and no allocation on the host, for a loop that
  /// re-launches one plan with new addresses.
  void launch_into(ListView<Arg> arguments, ListView<ArrayRef> outputs, StreamRef stream = {}) const;

  // What was planned (valid() calls only).
  KernelKind kind() const noexcept { return description_->kind; }
  /// The kernel's name; for a module function, the function as the caller named it.
  const std::string& kernel() const noexcept { return description_->kernel; }
  /// The argument types of the call (a raw kernel's as inputs) and, for elementwise and
  /// reduction kernels, every parameter's resolved dtype.
  const CallTypes& types() const noexcept { return description_->types; }
  const ResolvedTypes& resolved() const noexcept { return description_->resolved; }
  /// The program variant (elementwise and reduction kernels): program(kernel, types(),
  /// layout()) is what runs (kernc/pipeline.hpp). A raw kernel's is Layout{}.
  const Layout& layout() const noexcept { return description_->layout; }
  /// Elementwise: the loop's shape (the broadcast of the non-raw arrays, or (size,));
  /// reduction: the broadcast shape of the non-raw inputs; raw: empty.
  const std::vector<std::int64_t>& shape() const noexcept { return description_->shape; }
  /// Per output parameter: the description given, or the C-contiguous array the launch
  /// allocates (`data` 0). Empty for raw kernels.
  const std::vector<ArrayRef>& outputs() const noexcept { return description_->outputs; }
  /// Whether the launch allocates the outputs when none are passed (none were described).
  bool allocates_outputs() const noexcept { return description_->allocates_outputs; }
  /// Grid and block of the (main) launch. Nothing is launched when the loop is empty.
  const LaunchConfig& launch_config() const noexcept { return description_->launch; }
  /// The GPU and multiprocessor count the call was planned for (0: any, a raw kernel's).
  int device() const noexcept { return description_->device; }
  int multiprocessors() const noexcept { return description_->multiprocessors; }
  /// Reductions: the reduced axes (normalised, sorted), the elements reduced into each
  /// output element, and the blocks each output's reduction is split over (more than 1
  /// adds a second, finishing launch and two stream-ordered scratch buffers). 0 or empty
  /// for other kinds.
  const std::vector<int>& axes() const noexcept { return description_->axes; }
  std::int64_t reduce_size() const noexcept { return description_->reduce_size; }
  std::int64_t splits() const noexcept { return description_->splits; }
  const CallDescription& description() const noexcept { return *description_; }

 private:
  std::shared_ptr<const detail::CallPlan> plan_;
  const CallDescription* description_ = nullptr;  // the plan's, as its public base
};

}  // namespace kernc
