// kernc::Call and the one call path every kernel kind shares (src/kernels/call_plan.hpp).

#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernels/call_plan.hpp"
#include "kernels/call_support.hpp"
#include "kernels/device_check.hpp"
#include "dsl/type_resolution.hpp"

namespace kernc {

Device device(int ordinal, std::optional<Backend> backend) { return Engine::global().device(ordinal, backend); }

const char* to_string(KernelKind kind) noexcept {
  switch (kind) {
    case KernelKind::elementwise: return "elementwise";
    case KernelKind::reduction: return "reduction";
    case KernelKind::raw: return "raw";
  }
  return "?";
}

namespace {
const detail::CallPlan& checked(const std::shared_ptr<const detail::CallPlan>& plan) {
  if (!plan) throw Error(ErrorCode::invalid_argument, "launch of an empty Call (plan() makes one)");
  return *plan;
}
}  // namespace

Call::Call(std::shared_ptr<const detail::CallPlan> plan) : plan_(std::move(plan)), description_(plan_.get()) {}

std::vector<DeviceArray> Call::launch(ListView<Arg> arguments, ListView<ArrayRef> outputs, StreamRef stream) const {
  return detail::run(checked(plan_), arguments, outputs, stream, false, false);
}

void Call::launch_into(ListView<Arg> arguments, ListView<ArrayRef> outputs, StreamRef stream) const {
  const detail::CallPlan& plan = checked(plan_);
  if (outputs.empty() && !plan.outputs.empty()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: launch_into writes the caller's outputs, and none were given (launch() allocates them)",
                            plan.label));
  }
  detail::run(plan, arguments, outputs, stream, true, false);
}



namespace detail {

Span span_of(const ArrayRef& array) {
  Span span;
  if (array.size() == 0) return span;  // as ArrayRef::byte_range: {data, data}
  for (std::size_t d = 0; d < array.shape.size(); ++d) {
    const std::int64_t extent = (array.shape[d] - 1) * array.strides[d];
    (extent < 0 ? span.low : span.high) += extent;
  }
  span.high += static_cast<std::int64_t>(itemsize(array.dtype));
  return span;
}

void CallPlan::describe_spans(const std::vector<Parameter>& in, const std::vector<Parameter>& out) {
  allocates_outputs = outputs_given.empty() && !outputs.empty();
  raw_input.clear();
  for (const auto& param : in) raw_input.push_back(param.raw);
  raw_output.clear();
  for (const auto& param : out) raw_output.push_back(param.raw);
  input_spans.clear();
  for (const auto& in : inputs) input_spans.push_back(in.is_array ? span_of(in.array) : Span{});
  output_spans.clear();
  for (const auto& out : outputs) output_spans.push_back(span_of(out));
  same_description.assign(inputs.size() * outputs.size(), 0);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].is_array) continue;
    const ArrayRef& in = inputs[k].array;
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      const ArrayRef& out = outputs[o];
      same_description[k * outputs.size() + o] = in.dtype == out.dtype && in.shape == out.shape && in.strides == out.strides;
    }
  }
}

std::vector<dsl::ArgDescription> describe(ListView<Arg> args) {
  std::vector<dsl::ArgDescription> out;
  out.reserve(args.size());
  for (const auto& arg : args) {
    if (arg.is_array()) {
      out.push_back({true, arg.array(), arg.array().dtype});
      out.back().array.data = 0;
    } else {
      out.push_back({false, ArrayRef{}, arg.scalar().dtype});
    }
  }
  return out;
}

std::vector<ArrayRef> describe_outputs(ListView<ArrayRef> outputs) {
  std::vector<ArrayRef> out = outputs.to_vector();
  for (auto& array : out) array.data = 0;
  return out;
}

void check_counts(const std::string& name, const std::vector<Parameter>& in, const std::vector<Parameter>& out,
                  ListView<Arg> inputs, ListView<ArrayRef> outputs, bool descriptions) {
  if (inputs.size() != in.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} takes {} input(s) ({}), got {}", name, in.size(),
                                                         in.size() ? in.front().text + ", ..." : "", inputs.size()));
  }
  if (!outputs.empty() && outputs.size() != out.size()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{} has {} output(s); pass all of them or none, got {}", name, out.size(), outputs.size()));
  }
  for (const auto& array : outputs) descriptions ? array.validate_description(name.c_str()) : array.validate(name.c_str());
  for (const auto& arg : inputs) {
    if (arg.is_array()) descriptions ? arg.array().validate_description(name.c_str()) : arg.array().validate(name.c_str());
  }
}

std::vector<ArrayRef> plan_dsl_arguments(CallPlan& plan, KernelKind kind, const std::string& name,
                                         const dsl::Signature& signature, HandleTable& handles, TypeEntry*& entry,
                                         ListView<Arg> inputs, ListView<ArrayRef> outputs, const CallOptions& options) {
  const auto& in = signature.in;
  // Usage errors first, without the GPU; the caller's geometry asks for it afterwards.
  check_options(kind, false, name, options);
  check_counts(name, in, signature.out, inputs, outputs, true);
  init_plan(plan, kind, name, options);
  plan.types = call_types(inputs, outputs, options.bindings);
  entry = &type_entry(handles, types_key(plan.types), [&] { return dsl::resolve_types(signature, plan.types, name); });
  plan.resolved = entry->resolved;
  plan.inputs = describe(inputs);
  for (std::size_t k = 0; k < in.size(); ++k) {
    plan.input_names.push_back(in[k].name);
    plan.input_texts.push_back(in[k].text);
    plan.scalar_types.push_back(inputs[k].is_array() ? std::nullopt : std::optional<DType>(plan.resolved.inputs[k]));
    if (!inputs[k].is_array()) check_scalar_range(name, in[k].text, inputs[k].scalar(), plan.resolved.inputs[k]);
  }
  for (const auto& out : signature.out) plan.output_names.push_back(out.name);
  std::vector<ArrayRef> given = describe_outputs(outputs);
  for (const auto& out : given) plan.outputs_given.push_back({true, out, out.dtype});
  return given;
}

void check_options(KernelKind kind, bool module, const std::string& name, const CallOptions& options) {
  auto refuse = [&](bool given, const char* option, const char* which) {
    if (given) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: {} is for {}; this is {}", name, option, which,
                              kind == KernelKind::elementwise ? "an elementwise kernel"
                              : kind == KernelKind::reduction ? "a reduction kernel"
                              : module                        ? "a raw module's function"
                                                              : "a raw kernel"));
    }
  };
  const bool raw = kind == KernelKind::raw;
  refuse(kind != KernelKind::elementwise && options.size.has_value(), "size=", "elementwise kernels");
  refuse(kind != KernelKind::elementwise && options.block_size.has_value(), "block_size=",
         "elementwise kernels (a reduction picks its own blocks; a raw kernel's block is its LaunchConfig)");
  refuse(kind != KernelKind::reduction && options.axes.has_value(), "axes=", "reduction kernels");
  refuse(kind != KernelKind::reduction && options.keepdims, "keepdims=", "reduction kernels");
  refuse(raw && !options.bindings.empty(), "a placeholder binding", "elementwise and reduction kernels");
  refuse(!raw && options.launch.has_value(), "a LaunchConfig", "raw kernels (elementwise and reduction kernels plan their own)");
  refuse(!module && !options.function.empty(), "function=", "raw modules");
  if (raw && !options.launch) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: a raw kernel's call needs its LaunchConfig (grid and block)", name));
  }
  if (module && options.function.empty()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: name the module's function to call", name));
  }
}

int multiprocessors_for(const CallOptions& options) {
  if (options.multiprocessors) return *options.multiprocessors;
  try {
    return engine_of(options).device(options.device, options.backend).multiprocessors();
  } catch (const Error& error) {
    // No driver or no such GPU: the call is planned for a typical GPU, so that it can be
    // checked here; launching it fails as any launch on this machine does.
    if (error.code() != ErrorCode::no_device) throw;
    return CallOptions::kDefaultMultiprocessors;
  }
}

Backend backend_for(const CallOptions& options) {
  return options.backend ? *options.backend : engine_of(options).runtime_backend();
}

void init_plan(CallPlan& plan, KernelKind kind, const std::string& name, const CallOptions& options) {
  plan.kind = kind;
  plan.kernel = name;
  plan.label = kind == KernelKind::raw ? "kernel " + name : name;
  plan.options = options;
  plan.options.stream = StreamRef{};
  plan.device = options.device;
  plan.engine = &engine_of(options);
}

namespace {

// Whether `array` has the dtype, shape and strides of `want`, and an address unless empty.
bool same_layout(const ArrayRef& want, const ArrayRef& array) noexcept {
  const std::size_t rank = want.shape.size();
  if (want.dtype != array.dtype || array.shape.size() != rank || array.strides.size() != rank) return false;
  for (std::size_t d = 0; d < rank; ++d) {
    if (want.shape[d] != array.shape[d] || want.strides[d] != array.strides[d]) return false;
  }
  return array.data != 0 || want.size() == 0;
}

std::string describe_one(bool is_array, DType dtype, const std::vector<std::int64_t>& shape,
                         const std::vector<std::int64_t>& strides) {
  return is_array ? fmt::format("a {} array of shape {} and strides {}", to_string(dtype), shape, strides)
                  : fmt::format("a {} scalar", to_string(dtype));
}

// Throws unless argument `k` is what `want` describes.
void check_one(const CallPlan& plan, const char* role, const std::vector<std::string>& names, std::size_t k,
               const dsl::ArgDescription& want, const ArrayRef* array, DType scalar_dtype) {
  bool same = want.is_array == (array != nullptr);
  if (same && array && !plan.raw) {
    same = want.array.dtype == array->dtype && want.array.shape == array->shape && want.array.strides == array->strides;
  } else if (same && !array) {
    same = want.scalar_dtype == scalar_dtype;
  }
  if (same) return;
  static const std::vector<std::int64_t> kNone;
  const std::string name = k < names.size() && !names[k].empty() ? names[k] : fmt::format("#{}", k);
  if (plan.raw) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: argument {} is {}, but the call was planned for {}; plan a call for these arguments",
                            plan.label, name, array ? "an array" : fmt::format("a {} scalar", to_string(scalar_dtype)),
                            want.is_array ? "an array" : fmt::format("a {} scalar", to_string(want.scalar_dtype))));
  }
  throw Error(ErrorCode::invalid_argument,
              fmt::format("{}: {} {} is {}, but the plan was made for {}; make a plan for these arguments", plan.label,
                          role, name,
                          array ? describe_one(true, array->dtype, array->shape, array->strides)
                                : describe_one(false, scalar_dtype, kNone, kNone),
                          describe_one(want.is_array, want.is_array ? want.array.dtype : want.scalar_dtype,
                                       want.array.shape, want.array.strides)));
}

// The checks that say what differs, for arguments that do not match the plan.
void check_arguments(const CallPlan& plan, ListView<Arg> inputs, ListView<ArrayRef> outputs) {
  if (plan.inputs.size() != inputs.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: the {} {} {}, {} given", plan.label,
                                                         plan.raw ? "call takes" : "plan has", plan.inputs.size(),
                                                         plan.raw ? "argument(s)" : "input(s)", inputs.size()));
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].is_array() && !plan.raw) inputs[k].array().validate(plan.label.c_str());
    check_one(plan, "input", plan.input_names, k, plan.inputs[k], inputs[k].is_array() ? &inputs[k].array() : nullptr,
              inputs[k].is_array() ? DType::float32 : inputs[k].scalar().dtype);
  }
  if (plan.raw && !outputs.empty()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: a raw kernel has no outputs apart from its arguments; pass none", plan.label));
  }
  if (outputs.empty() && !plan.outputs_given.empty()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: the plan was given the outputs; pass them", plan.label));
  }
  if (!outputs.empty() && outputs.size() != plan.outputs.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: the plan has {} output(s), {} given; pass all of them or none",
                                                         plan.label, plan.outputs.size(), outputs.size()));
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    outputs[k].validate(plan.label.c_str());
    check_one(plan, "output", plan.output_names, k, {true, plan.outputs[k], plan.outputs[k].dtype}, &outputs[k],
              DType::float32);
  }
}

// The plan's device, which must have the multiprocessor count the plan was made for.
Device device_for(const CallPlan& plan) {
  Device device = plan.engine->device(plan.options.device, plan.options.backend);
  if (plan.multiprocessors != 0 && device.multiprocessors() != plan.multiprocessors) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: the plan is for a GPU with {} multiprocessors; GPU {} has {} (plan with "
                            "CallOptions::multiprocessors unset, or = Device::multiprocessors())",
                            plan.label, plan.multiprocessors, device.ordinal(), device.multiprocessors()));
  }
  return device;
}

// Whether two arrays, at `a` and `b` with these spans, share a byte.
bool overlap(std::uint64_t a, const Span& a_span, std::uint64_t b, const Span& b_span) {
  const std::uint64_t a_low = a + static_cast<std::uint64_t>(a_span.low), a_high = a + static_cast<std::uint64_t>(a_span.high);
  const std::uint64_t b_low = b + static_cast<std::uint64_t>(b_span.low), b_high = b + static_cast<std::uint64_t>(b_span.high);
  return a_low < b_high && b_low < a_high;
}

// A copy of `array` in fresh C-contiguous memory (used when an input overlaps an output).
DeviceArray copy_of(const ArrayRef& array, const CallPlan& plan, StreamRef stream) {
  static const ElementwiseKernel copy("T x", "T y", "y = x", "kernc_copy");
  CallOptions options;
  options.stream = stream;
  options.device = plan.options.device;
  options.backend = plan.options.backend;
  options.engine = plan.engine;
  return copy({array}, {}, options).front();
}

// Launches `plan` into `outputs`, the caller's when `callers` (then the aliasing rules
// apply: outputs must not share memory; an input that shares memory with an output is read
// from a copy unless it is the very same view and the kind allows it). Allocates nothing
// unless an input overlaps an output (NOTE [ kept plan ]).
void launch_into_outputs(const CallPlan& plan, ListView<Arg> inputs, ListView<ArrayRef> outputs, bool callers,
                         StreamRef stream, const Device& device) {
  if (callers && !plan.raw) {
    for (std::size_t a = 0; a < outputs.size(); ++a) {
      for (std::size_t b = a + 1; b < outputs.size(); ++b) {
        if (overlap(outputs[a].data, plan.output_spans[a], outputs[b].data, plan.output_spans[b])) {
          throw Error(ErrorCode::invalid_argument, fmt::format("{}: outputs {} and {} overlap in memory", plan.label,
                                                               plan.output_names[a], plan.output_names[b]));
        }
      }
    }
    // Copies are made only when an input overlaps an output (rare): the common call copies
    // no argument list.
    std::vector<Arg> copied;
    std::vector<DeviceArray> temporaries;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      if (!inputs[k].is_array() || plan.raw_input[k]) continue;
      const std::uint64_t address = inputs[k].array().data;
      for (std::size_t o = 0; o < outputs.size(); ++o) {
        if (plan.raw_output[o] || !overlap(address, plan.input_spans[k], outputs[o].data, plan.output_spans[o])) continue;
        if (plan.same_view_safe && plan.same_description[k * outputs.size() + o] && address == outputs[o].data) continue;
        if (copied.empty()) copied = inputs.to_vector();
        temporaries.push_back(copy_of(inputs[k].array(), plan, stream));
        copied[k] = Arg(temporaries.back());
        break;
      }
    }
    if (!temporaries.empty()) {
      // The copies are laid out differently from the descriptions: plan again for them.
      auto replanned = plan.replan(copied, outputs);
      launch_into_outputs(*replanned, copied, outputs, true, stream, device);
      return;
    }
  }
  plan.launch_matched(inputs, outputs, stream, device);
}

}  // namespace

bool matches(const CallPlan& plan, ListView<Arg> inputs, ListView<ArrayRef> outputs) noexcept {
  if (inputs.size() != plan.inputs.size()) return false;
  // Outputs: those described, or none when the launch allocates them; a plan that allocates
  // also takes outputs laid out exactly as it would allocate them.
  if (outputs.empty() ? !plan.outputs_given.empty() : outputs.size() != plan.outputs.size()) return false;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const dsl::ArgDescription& want = plan.inputs[k];
    if (want.is_array != inputs[k].is_array()) return false;
    if (want.is_array) {
      if (!plan.raw && !same_layout(want.array, inputs[k].array())) return false;
    } else if (want.scalar_dtype != inputs[k].scalar().dtype) {
      return false;
    }
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (!same_layout(plan.outputs[k], outputs[k])) return false;
  }
  return true;
}

std::string nvtx_subject_of(const CallPlan& plan) {
  if (plan.kind == KernelKind::raw) return nvtx_subject(plan.kernel, "");
  return nvtx_subject(plan.kernel, format_call_signature(dsl::resolved_call_types(plan.types, plan.resolved)) + " " +
                                       plan.layout.str());
}

std::vector<DeviceArray> run(const CallPlan& plan, ListView<Arg> inputs, ListView<ArrayRef> outputs, StreamRef stream,
                             bool into, bool matched) {
  // NOTE [ NVTX ranges ]: off, two relaxed loads; a first launch's load and compile nest here.
  const NvtxSubject subject([&plan]() -> const std::string& {
    return plan.nvtx_subject.get([&plan] { return nvtx_subject_of(plan); });
  });
  const NvtxRange range([&plan] { return nvtx_range_name(NvtxPhase::launch, nvtx_subject_or(plan.kernel)); });
  if (!matched && !matches(plan, inputs, outputs)) {
    check_arguments(plan, inputs, outputs);
  }
  // A kept plan's launch may take other scalar values than planning saw: range-checked.
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].is_array() && plan.scalar_types[k]) {
      check_scalar_range(plan.label, plan.input_texts[k], inputs[k].scalar(), *plan.scalar_types[k]);
    }
  }
  const Device device = device_for(plan);
  // Before anything is launched or allocated: a kernel given another GPU's memory would
  // fault and lose its context (NOTE [ arrays know their device ]).
  check_devices(plan, inputs, outputs, device);
  std::vector<DeviceArray> result;
  if (!into) {
    result.reserve(plan.outputs.size());
    for (std::size_t k = 0; k < plan.outputs.size(); ++k) {
      result.push_back(outputs.empty() ? DeviceArray::empty(device, plan.outputs[k].dtype, plan.outputs[k].shape)
                                       : DeviceArray::wrap(device, outputs[k]));
    }
  }
  if (plan.empty) return result;
  if (!outputs.empty() || plan.outputs.empty()) {
    launch_into_outputs(plan, inputs, outputs, true, stream, device);
    return result;
  }
  std::vector<ArrayRef> allocated;
  allocated.reserve(result.size());
  for (const auto& output : result) allocated.push_back(output.ref());
  launch_into_outputs(plan, inputs, allocated, false, stream, device);
  return result;
}

namespace {

bool same_launch(const std::optional<LaunchConfig>& planned, const LaunchConfig* launch) noexcept {
  if (planned.has_value() != (launch != nullptr)) return false;
  if (!launch) return true;
  return std::memcmp(planned->grid, launch->grid, sizeof launch->grid) == 0 &&
         std::memcmp(planned->block, launch->block, sizeof launch->block) == 0 &&
         planned->shared_bytes == launch->shared_bytes && planned->cooperative == launch->cooperative &&
         std::memcmp(planned->cluster, launch->cluster, sizeof launch->cluster) == 0 &&
         planned->programmatic_dependent_launch == launch->programmatic_dependent_launch &&
         planned->priority == launch->priority;
}

// Whether a plan is the plan of a call with `options` (the stream aside), whose launch
// configuration and function are `launch` and `function` (a raw call's own arguments, or
// the options'). Cheapest and likeliest differences first; the engine as the options name
// it (nullptr: the global one), so no lookup.
bool same_options(const CallPlan& plan, const CallOptions& options, const LaunchConfig* launch,
                  const std::string& function) noexcept {
  const CallOptions& planned = plan.options;
  return planned.device == options.device && planned.backend == options.backend && planned.engine == options.engine && planned.size == options.size &&
         planned.block_size == options.block_size && planned.keepdims == options.keepdims &&
         planned.multiprocessors == options.multiprocessors && same_launch(planned.launch, launch) &&
         planned.function == function && planned.axes == options.axes && planned.bindings == options.bindings;
}

}  // namespace

// NOTE [ call memo ]
// operator() is plan + launch, and planning (type resolution, broadcasting, the loop plan)
// allocates a few dozen times. A program calls a kernel with the same shapes over and over,
// so each kernel object (shared by copies) keeps the last plans its calls made, in a ring
// under a mutex. A call first looks for one made for the same options whose descriptions
// its arguments match exactly (matches(): the very check Call::launch makes) and launches
// it as Call::launch would; only then does it plan (usage errors still come before the GPU
// is touched: a plan is kept only once its call planned, and planned without error). The
// ring bounds the memory: a program that cycles through more shapes than that plans per
// call, as before.
std::shared_ptr<const CallPlan> RecentCalls::find(ListView<Arg> inputs, ListView<ArrayRef> outputs,
                                                  const CallOptions& options, const LaunchConfig* launch,
                                                  const std::string* function) {
  const LaunchConfig* launch_of_call = launch ? launch : (options.launch ? &*options.launch : nullptr);
  const std::string& function_of_call = function ? *function : options.function;
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t n = 1; n <= kSize; ++n) {
    const auto& plan = ring_[(next_ + kSize - n) % kSize];
    if (!plan) break;
    if (same_options(*plan, options, launch_of_call, function_of_call) && matches(*plan, inputs, outputs)) return plan;
  }
  return nullptr;
}

void RecentCalls::remember(std::shared_ptr<const CallPlan> plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  ring_[next_] = std::move(plan);
  next_ = (next_ + 1) % kSize;
}

}  // namespace detail
}  // namespace kernc
