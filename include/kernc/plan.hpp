#pragma once
/// \file
/// Plans: a kernel call decided on the host before any GPU, engine, cache or compiler is
/// touched. A call is plan, then launch.
///
/// `ElementwiseKernel::plan` and `ReductionKernel::plan` take argument *descriptions* —
/// an ArrayRef whose `data` may be 0 (dtype, shape, byte strides) or a Scalar — and the
/// call's options, and return what the call will do: the resolved types, the program
/// variant (layout class), the output shapes and the launch geometry. Bad input throws the
/// same kernc::Error the call would. `ElementwiseKernel::launch(plan, ...)` (and the
/// reduction's) then runs the plan on real buffers of exactly the described dtypes, shapes
/// and strides, as often as wanted: a kept plan is the prepared call of the hot path (no
/// type resolution, broadcasting or loop planning per launch, and after the first launch
/// on a device no lookup of the kernel function either). `operator()` is plan + launch.
///
/// The launch geometry and the 32- or 64-bit index width depend on the number of
/// multiprocessors of the GPU; a plan names it (PlanOptions::multiprocessors), and
/// launching a plan on a GPU with another count is an error that says so.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernc/array_ref.hpp"
#include "kernc/dtype.hpp"
#include "kernc/export.hpp"
#include "kernc/runtime.hpp"
#include "kernc/signature.hpp"

namespace kernc {

/// The options of a call that planning needs.
struct KERNC_API PlanOptions {
  /// ElementwiseKernel only: the loop size (CuPy's size=), allowed when no non-raw array is
  /// passed; outputs kernc allocates then have shape (size,), raw ones included.
  std::optional<std::int64_t> size;
  /// Explicit placeholder bindings, for placeholders no array decides ("T" → float32).
  std::map<std::string, DType> bindings;
  /// ElementwiseKernel only: threads per block (CuPy's block_size=), 1 to 1024; by
  /// default kernc picks (256). A launch checks the device's own limit.
  std::optional<unsigned> block_size;
  /// Multiprocessors of the GPU the plan is for (Device::multiprocessors()). The default
  /// is an H100 SXM's, for plans made without a GPU to check a call.
  int multiprocessors = 132;
};

namespace detail {
struct ElementwisePlanData;
struct ReductionPlanData;
}  // namespace detail

/// An ElementwiseKernel call, planned. Cheap to copy (copies share the prepared state).
class KERNC_API ElementwisePlan {
 public:
  ElementwisePlan() = default;
  const CallTypes& types() const noexcept;
  const ResolvedTypes& resolved() const noexcept;
  /// The program variant: ElementwiseKernel::program(types(), layout()) is what runs.
  const Layout& layout() const noexcept;
  /// The loop's shape: the broadcast of the non-raw arrays passed (outputs included, as
  /// in CuPy), or (size,).
  const std::vector<std::int64_t>& shape() const noexcept;
  /// Per output parameter: the description given, or the C-contiguous array of shape()
  /// and its resolved dtype that the launch allocates (`data` 0).
  const std::vector<ArrayRef>& outputs() const noexcept;
  /// Whether the launch allocates the outputs (none were described).
  bool allocates_outputs() const noexcept;
  /// Grid and block of the launch (the stream is the launch's). Nothing is launched when
  /// the loop is empty.
  const LaunchConfig& launch_config() const noexcept;
  int multiprocessors() const noexcept;
  bool valid() const noexcept { return data_ != nullptr; }

 private:
  friend class ElementwiseKernel;
  std::shared_ptr<const detail::ElementwisePlanData> data_;
};

/// A ReductionKernel call, planned. Cheap to copy.
class KERNC_API ReductionPlan {
 public:
  ReductionPlan() = default;
  const CallTypes& types() const noexcept;
  const ResolvedTypes& resolved() const noexcept;
  const Layout& layout() const noexcept;
  /// The broadcast shape of the non-raw inputs.
  const std::vector<std::int64_t>& input_shape() const noexcept;
  /// The reduced axes, normalised (non-negative) and sorted.
  const std::vector<int>& axes() const noexcept;
  /// Per output parameter: as given, or what the launch allocates (`data` 0).
  const std::vector<ArrayRef>& outputs() const noexcept;
  bool allocates_outputs() const noexcept;
  /// Elements reduced into each output element.
  std::int64_t reduce_size() const noexcept;
  /// Blocks each output's reduction is split over; more than 1 adds a second, finishing
  /// launch (`name_finish`) and two stream-ordered scratch buffers.
  std::int64_t splits() const noexcept;
  /// Grid and block of the main launch.
  const LaunchConfig& launch_config() const noexcept;
  int multiprocessors() const noexcept;
  bool valid() const noexcept { return data_ != nullptr; }

 private:
  friend class ReductionKernel;
  std::shared_ptr<const detail::ReductionPlanData> data_;
};

/// One parameter of a raw kernel as its source declares it (read by kernc's declaration
/// scanner from `__global__ void name(...)`).
struct KERNC_API RawParameter {
  std::string text;            ///< the declaration as written: "const float* __restrict__ x"
  std::string name;            ///< "x"; empty when the declaration names none
  bool pointer = false;        ///< a pointer (or array) parameter: takes an array argument
  bool const_pointee = false;  ///< a pointer to const elements: the kernel only reads it
  std::optional<DType> dtype;  ///< a scalar of a C type kernc knows (arguments are converted to it)
};

}  // namespace kernc
