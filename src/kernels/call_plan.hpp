#pragma once
// The plan behind a kernc::Call (include/kernc/call.hpp), whatever its kernel kind: what was
// planned, the argument descriptions a launch must match, and the one call path every kind
// shares (argument checks, the device, outputs, aliasing, scalar ranges, the call memo).
// Each kind adds only its launch: src/kernels/{elementwise,reduction,raw}_call.cpp.

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/nvtx_range.hpp"
#include "dsl/arg_description.hpp"
#include "kernc/target.hpp"
#include "dsl/params.hpp"
#include "kernc/call.hpp"
#include "kernc/engine.hpp"
#include "kernels/device_check.hpp"
#include "kernels/handle_table.hpp"

namespace kernc::detail {

/// The kernel functions a plan launched last: a repeated launch takes them from here with
/// one atomic load, without the kernel's memo tables, a lock or a copy (they stay in the
/// kernel's memo, whose std::map nodes never move or go while the kernel lives, and the
/// plan keeps its kernel's state alive). `Functions` names the engine it was loaded
/// through (a member `engine`, an Engine::id()), which a launch compares.
template <class Functions>
class Prepared {
 public:
  /// The functions remembered, or nullptr when there are none or they are another engine's.
  Functions* get(std::uint64_t engine) const noexcept {
    Functions* functions = functions_.load(std::memory_order_acquire);
    return functions && functions->engine == engine ? functions : nullptr;
  }
  void set(Functions* functions) const noexcept { functions_.store(functions, std::memory_order_release); }

 private:
  mutable std::atomic<Functions*> functions_{nullptr};
};

/// Bytes a view touches, relative to its address: ArrayRef::byte_range() less `data`.
struct Span {
  std::int64_t low = 0, high = 0;
};
Span span_of(const ArrayRef& array);

/// The description (include/kernc/call.hpp) is the public base: Call's accessors read it.
class CallPlan : public CallDescription {
 public:
  virtual ~CallPlan() = default;

  std::string label;             ///< how errors name the kernel ("saxpy", "kernel scale")
  CallOptions options;           ///< as planned; the call memo compares them (same_options)
  Engine* engine = nullptr;      ///< never null
  /// The kernel's state, held by a Call handed to the caller (Kernel::plan) so that it may
  /// outlive the kernel object. Not by the plans the kernel's own memo keeps: that would be
  /// a cycle (the state holds the memo).
  std::shared_ptr<const void> keep_alive;
  // multiprocessors (the base's): 0 for any GPU (a raw kernel's geometry is the caller's).
  std::vector<dsl::ArgDescription> inputs;          ///< a raw kernel's arguments
  std::vector<dsl::ArgDescription> outputs_given;   ///< empty when the launch allocates
  bool empty = false;  ///< nothing is launched (an empty loop or no outputs)

  /// Raw kernels: arrays are matched by being arrays (their shapes are the caller's
  /// business), and no aliasing rule applies (the kernel's code decides what it writes).
  bool raw = false;
  /// Elementwise: an input that is the very same view as an output is safe (each element
  /// is read before it is written, by the same thread), so it is not copied.
  bool same_view_safe = false;
  /// Per parameter: names for messages, and each scalar input's dtype (range-checked at
  /// every launch, since a kept plan takes new values; none: passed as its own dtype).
  std::vector<std::string> input_names, output_names, input_texts;
  std::vector<std::optional<DType>> scalar_types;
  /// NOTE [ kept plan ]: the described views' spans and which input/output pairs have the
  /// same description, for the aliasing rules without allocation.
  std::vector<Span> input_spans, output_spans;
  std::vector<char> same_description;  ///< [input * outputs + output]
  /// Raw parameters of elementwise and reduction kernels: not broadcast, not alias-checked
  /// against each other (the kernel indexes them as it likes).
  std::vector<char> raw_input, raw_output;
  /// Raw addresses already found on a reachable device (NOTE [ arrays know their device ]).
  AddressMemo checked_addresses;
  /// The kernel and variant its NVTX ranges name, made on the first launch with ranges on
  /// (NOTE [ NVTX ranges ]).
  NvtxLabel nvtx_subject;

  /// Fills the spans, same_description and the raw flags from the descriptions and the
  /// kernel's parameters (plans that alias-check).
  void describe_spans(const std::vector<Parameter>& in, const std::vector<Parameter>& out);

  /// Launches with arguments that match the plan (checked), `outputs` written (the caller's
  /// or allocated), on `device` (checked against the plan).
  virtual void launch_matched(ListView<Arg> inputs, ListView<ArrayRef> outputs, StreamRef stream,
                              const Device& device) const = 0;
  /// The same call planned for other arguments (an input copied away from an output); only
  /// kinds with aliasing rules (not `raw`) are asked.
  virtual std::shared_ptr<const CallPlan> replan(ListView<Arg> inputs, ListView<ArrayRef> outputs) const {
    (void)inputs;
    (void)outputs;
    return nullptr;
  }
};

/// Whether `inputs` and `outputs` are exactly what `plan` describes (dtypes, shapes,
/// strides; scalars' dtypes; outputs passed exactly when described) and every non-empty
/// array has an address. No allocation, no formatting.
bool matches(const CallPlan& plan, ListView<Arg> inputs, ListView<ArrayRef> outputs) noexcept;

/// The kernel and variant `plan`'s NVTX ranges name: "saxpy<float32, float32 -> float32
/// contiguous-i32>" (resolved types and layout class), a raw kernel's name alone.
std::string nvtx_subject_of(const CallPlan& plan);

/// Runs `plan` (the shared call path): checks the arguments unless `matched`, the device,
/// scalar ranges and aliasing, then the kind's launch. Returns the outputs (the caller's
/// as non-owning arrays, or allocated) unless `into`, which writes the caller's only.
std::vector<DeviceArray> run(const CallPlan& plan, ListView<Arg> inputs, ListView<ArrayRef> outputs, StreamRef stream,
                             bool into, bool matched);

/// Throws invalid_argument for an option `kind` does not take (`module`: a RawModule's
/// function, which must name one); `name` is the kernel's.
void check_options(KernelKind kind, bool module, const std::string& name, const CallOptions& options);

/// The engine of a call.
inline Engine& engine_of(const CallOptions& options) { return options.engine ? *options.engine : Engine::global(); }

/// The multiprocessor count a plan is made for: the options', else the device's (opening it).
int multiprocessors_for(const CallOptions& options);
/// The backend of the device a call is planned for: the engine's runtime (KERNC_RUNTIME),
/// known without opening a device.
Backend backend_for(const CallOptions& options);

/// Fills what every plan holds from the kernel and its options.
void init_plan(CallPlan& plan, KernelKind kind, const std::string& name, const CallOptions& options);

/// What elementwise and reduction plans share, before their own planning: the kind's
/// options and the argument counts checked, the call's types resolved through the kernel's
/// memo (`handles`; the entry is returned), the arguments described, names for messages,
/// and scalars range-checked. Returns the outputs' descriptions (empty when none given).
std::vector<ArrayRef> plan_dsl_arguments(CallPlan& plan, KernelKind kind, const std::string& name,
                                         const dsl::Signature& signature, HandleTable& handles, TypeEntry*& entry,
                                         ListView<Arg> inputs, ListView<ArrayRef> outputs, const CallOptions& options);

/// Elementwise and reduction kernels: the argument counts, and every array valid (as a
/// description when `descriptions`: its address may be 0).
void check_counts(const std::string& name, const std::vector<Parameter>& in, const std::vector<Parameter>& out,
                  ListView<Arg> inputs, ListView<ArrayRef> outputs, bool descriptions);

/// The argument descriptions of `args`.
std::vector<dsl::ArgDescription> describe(ListView<Arg> args);
std::vector<ArrayRef> describe_outputs(ListView<ArrayRef> outputs);

/// operator() of every kind: the memo's plan for these arguments, or `make()`'s (then
/// remembered), launched on `stream`.
template <class Make>
std::vector<DeviceArray> call_through_memo(RecentCalls& recent, ListView<Arg> inputs, ListView<ArrayRef> outputs,
                                           const CallOptions& options, Make&& make) {
  if (auto plan = recent.find(inputs, outputs, options)) return run(*plan, inputs, outputs, options.stream, false, true);
  std::shared_ptr<const CallPlan> plan = make();
  recent.remember(plan);
  return run(*plan, inputs, outputs, options.stream, false, false);
}

/// The same for a raw kernel's call, whose LaunchConfig and function are arguments of their
/// own (compared in place: the call copies its options only to plan). It launches on the
/// config's stream when that names one, else the options'.
template <class Make>
void call_raw_through_memo(RecentCalls& recent, ListView<Arg> args, const CallOptions& options,
                           const LaunchConfig& config, const std::string& function, Make&& make) {
  const StreamRef stream = config.stream.handle ? config.stream : options.stream;
  if (auto plan = recent.find(args, {}, options, &config, &function)) {
    run(*plan, args, {}, stream, true, true);
    return;
  }
  std::shared_ptr<const CallPlan> plan = make();
  recent.remember(plan);
  run(*plan, args, {}, stream, true, false);
}

}  // namespace kernc::detail
