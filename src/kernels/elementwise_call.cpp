// ElementwiseKernel calls: plan (CuPy's call semantics, on descriptions), then launch.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/kernel_codegen.hpp"
#include "dsl/definitions.hpp"
#include "kernc/engine.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernels/call_support.hpp"
#include "kernels/plan_data.hpp"

namespace kernc {

namespace {

constexpr unsigned kBlock = 256;
// Each thread of the multi-index and tiled kernels takes kUnroll (4) elements per step
// (templates/elementwise*.cu.in); the contiguous kernel's count is
// dsl::contiguous_elements_per_thread().
constexpr std::int64_t kUnroll = 4;
// The most blocks a launch asks for (NOTE [ one pass ]): far under CUDA's 2^31 - 1, and
// with at most kMaxThreadsX threads along x, HIP's limit (so fewer blocks of more than
// 256 threads).
constexpr std::int64_t kMaxGrid = (std::int64_t{1} << 24) - 1;
constexpr std::int64_t kMaxThreadsX = (std::int64_t{1} << 32) - 1;

// A copy of `array` in fresh C-contiguous memory (used when an input overlaps an output).
DeviceArray copy_of(const ArrayRef& array, const CallOptions& options) {
  static const ElementwiseKernel copy("T x", "T y", "y = x", "kernc_copy");
  CallOptions plain = options;
  plain.bindings.clear();
  return copy({array}, {}, plain).front();
}

void check_counts(const detail::ElementwiseDefinition& def, ListView<Arg> inputs,
                  ListView<ArrayRef> outputs, bool descriptions) {
  const auto& sig = def.signature;
  if (inputs.size() != sig.in.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} takes {} input(s) ({}), got {}", def.name, sig.in.size(),
                                                         sig.in.size() ? sig.in.front().text + ", ..." : "", inputs.size()));
  }
  if (!outputs.empty() && outputs.size() != sig.out.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} has {} output(s); pass all of them or none, got {}",
                                                         def.name, sig.out.size(), outputs.size()));
  }
  for (const auto& out : outputs) descriptions ? out.validate_description(def.name.c_str()) : out.validate(def.name.c_str());
  for (const auto& in : inputs) {
    if (in.is_array()) descriptions ? in.array().validate_description(def.name.c_str()) : in.array().validate(def.name.c_str());
  }
}

// Everything but the geometry: types, the loop shape, outputs, and the strides of the
// loop over every non-raw array. No GPU.
std::shared_ptr<detail::ElementwisePlanData> plan_shapes(const ElementwiseKernel& kernel,
                                                         const detail::ElementwiseDefinition& def,
                                                         detail::HandleTable& handles, ListView<Arg> inputs,
                                                         ListView<ArrayRef> outputs_in,
                                                         const std::optional<std::int64_t>& size_option,
                                                         const std::map<std::string, DType>& bindings) {
  const auto& sig = def.signature;
  const std::string& name = def.name;
  check_counts(def, inputs, outputs_in, true);
  auto plan = std::make_shared<detail::ElementwisePlanData>();
  plan->types = detail::call_types(inputs, outputs_in, bindings);
  plan->entry = &detail::type_entry(handles, detail::types_key(plan->types), [&] { return kernel.resolve(plan->types); });
  plan->resolved = plan->entry->resolved;
  plan->table = &handles;
  plan->inputs = detail::describe(inputs);
  for (size_t k = 0; k < sig.in.size(); ++k) {
    if (!inputs[k].is_array()) detail::check_scalar_range(name, sig.in[k].text, inputs[k].scalar(), plan->resolved.inputs[k]);
  }
  for (const auto& out : outputs_in) plan->outputs_given.push_back({true, out, out.dtype});

  // The loop shape, as CuPy decides it (cupy/_core/_kernel.pyx, _broadcast): the broadcast
  // of every non-raw array passed, inputs and outputs alike (so an output may be larger than
  // the inputs, which broadcast up to it); or size=, allowed only when no non-raw array is
  // passed. Each non-raw output must then have the loop shape exactly.
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::string_view> names;
  for (size_t k = 0; k < sig.in.size(); ++k) {
    if (!inputs[k].is_array() || sig.in[k].raw) continue;
    shapes.push_back(inputs[k].array().shape);
    names.push_back(sig.in[k].name);
  }
  for (size_t k = 0; k < outputs_in.size(); ++k) {
    if (sig.out[k].raw) continue;
    shapes.push_back(outputs_in[k].shape);
    names.push_back(sig.out[k].name);
  }
  std::vector<std::int64_t>& shape = plan->shape;
  if (size_option) {
    if (!shapes.empty()) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: size= cannot be used with non-raw array arguments ({} passed); as in CuPy, size= "
                              "sets the loop only when every array passed is raw",
                              name, fmt::join(names, ", ")));
    }
    if (*size_option < 0) throw Error(ErrorCode::invalid_argument, fmt::format("{}: size= is negative", name));
    shape = {*size_option};
  } else if (!shapes.empty()) {
    shape = dsl::broadcast_shape(shapes, names);
  } else {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: the loop size cannot be decided: every array passed is raw (raw arrays do not set "
                            "it); pass size= or a non-raw array",
                            name));
  }
  for (size_t k = 0; k < outputs_in.size(); ++k) {
    if (!sig.out[k].raw && outputs_in[k].shape != shape) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: output {} has shape {} but the arguments broadcast to {} (an output is written "
                              "whole: it cannot be broadcast)",
                              name, sig.out[k].name, outputs_in[k].shape, shape));
    }
  }
  // Outputs: the descriptions given, or the C-contiguous arrays the launch allocates, of
  // the loop shape; raw ones too when size= decides it, as CuPy allocates them.
  for (size_t k = 0; k < sig.out.size(); ++k) {
    if (!outputs_in.empty()) {
      plan->outputs.push_back(outputs_in[k]);
    } else if (sig.out[k].raw && !size_option) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: the size of raw output {} cannot be decided; pass the outputs, or size= (raw "
                              "outputs are then allocated with shape (size,))",
                              name, sig.out[k].name));
    } else {
      plan->outputs.push_back(ArrayRef::contiguous(std::uint64_t{0}, plan->resolved.outputs[k], shape));
    }
  }
  return plan;
}

// The loop plan and launch geometry for a GPU of `multiprocessors` multiprocessors, with
// `block_size` threads per block (CuPy's block_size=) or kBlock.
void plan_geometry(const detail::ElementwiseDefinition& def, detail::ElementwisePlanData& plan, int multiprocessors,
                   std::optional<unsigned> block_size) {
  const auto& sig = def.signature;
  if (multiprocessors <= 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: a plan needs the GPU's multiprocessor count (PlanOptions::multiprocessors), got {}",
                            def.name, multiprocessors));
  }
  // Every NVIDIA GPU since Fermi and every AMD GPU allows 1024 threads per block; a launch
  // still checks its device's own limit.
  if (block_size && (*block_size == 0 || *block_size > 1024)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: block_size {} is outside 1..1024 (threads per block)", def.name, *block_size));
  }
  const std::int64_t block = block_size ? static_cast<std::int64_t>(*block_size) : kBlock;
  plan.multiprocessors = multiprocessors;
  std::vector<std::vector<std::int64_t>> strides;
  std::vector<std::size_t> item_sizes;
  std::int64_t extra = 0;
  for (size_t k = 0; k < sig.in.size(); ++k) {
    const auto& in = plan.inputs[k];
    if (!in.is_array) continue;
    if (sig.in[k].raw) {
      extra = std::max(extra, detail::raw_extent(in.array));
    } else {
      strides.push_back(dsl::broadcast_strides(in.array, plan.shape));
      item_sizes.push_back(itemsize(in.array.dtype));
    }
  }
  const size_t outputs_from = strides.size();
  for (size_t k = 0; k < sig.out.size(); ++k) {
    const ArrayRef& out = plan.outputs[k];
    if (sig.out[k].raw) {
      extra = std::max(extra, detail::raw_extent(out));
    } else {
      strides.push_back(dsl::broadcast_strides(out, plan.shape));
      item_sizes.push_back(itemsize(out.dtype));
    }
  }
  const std::int64_t max_blocks = static_cast<std::int64_t>(multiprocessors) * 32;
  // Elements a thread takes per step: kUnroll, or in the contiguous kernel 16 bytes of the
  // smallest item (at least kUnroll).
  const std::int64_t contiguous_per_thread = dsl::contiguous_elements_per_thread(item_sizes);
  // A thread's last index may run a whole step of the grid past the end, which 32-bit
  // indexing must still hold. The index width is chosen as if the grid were max_blocks, so
  // that it does not change with the grid of NOTE [ one pass ], which 32-bit indexing then
  // bounds below (never under max_blocks).
  plan.loop = dsl::plan_loop(plan.shape, std::move(strides), item_sizes, def.options.reduce_dims,
                             max_blocks * block * std::max(kUnroll, contiguous_per_thread), extra,
                             def.any_loop_order && def.options.reduce_dims, outputs_from);
  // The tiled template is written for kBlock threads (templates/elementwise_tiled.cu.in).
  if (block == kBlock) dsl::tile_transposed_inputs(plan.loop, outputs_from);
  plan.rank = plan.loop.layout.view_rank();
  plan.launch = LaunchConfig{};
  plan.launch.block[0] = static_cast<unsigned>(block);
  // Each thread takes per_thread elements a step; the tiled kernel's block a whole tile
  // (block * kUnroll elements) a step.
  const std::int64_t per_thread = plan.loop.layout.kind == LayoutKind::contiguous ? contiguous_per_thread : kUnroll;
  std::int64_t steps = (plan.loop.size + block * per_thread - 1) / (block * per_thread);
  if (plan.loop.layout.kind == LayoutKind::tiled) {
    constexpr std::int64_t kTile = 32;
    const auto& dims = plan.loop.shape;
    const std::int64_t rows = dims[dims.size() - 2], cols = dims[dims.size() - 1];
    steps = plan.loop.size / (rows * cols) * ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
  }
  // NOTE [ one pass ]
  // The grid covers the whole loop in one pass: every block takes one step and exits.
  // A grid-stride loop over a grid capped at 32 blocks a multiprocessor read and wrote
  // DRAM 4-6% slower on an H100 than one pass of the same kernel (saxpy float64 0.94x ->
  // 1.02x copy, float32 0.98x -> 1.03x, x[::2] 0.59x -> 0.63x; tools/bench/stream_probe.cu,
  // NOTES v21): blocks then sweep memory in order, as the copy engine does. The kernels keep
  // their grid-stride loops for what one pass cannot cover: kMaxGrid blocks, kMaxThreadsX
  // threads, and with 32-bit indices the grid whose last step would overflow them.
  std::int64_t cap = std::min(kMaxGrid, kMaxThreadsX / block);
  if (!plan.loop.layout.index64) {
    const std::int64_t room = std::numeric_limits<std::int32_t>::max() - 1 - plan.loop.size;
    cap = std::min(cap, std::max(max_blocks, room / (block * per_thread)));
  }
  plan.launch.grid[0] = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(steps, cap)));
}

// NOTE [ kept plan ]
// A plan fixes everything of a launch but the addresses of the arrays and the values of
// the scalars: the launch geometry, the strides of the loop, the index width, and so every
// byte of the kernel's parameters but those. So planning also packs the parameters once,
// with addresses and scalars zero (`packed`), and the byte range of each described view
// relative to its address (`*_spans`, for the aliasing rules). A launch of the plan then
// checks the arguments against the descriptions with one allocation-free comparison
// (detail::matches; the checks that name what differs run only when it fails), takes the
// kernel function from the plan (one atomic load; PreparedFunctions), copies the packed
// bytes and writes the addresses and scalars in place. The checks a user relies on all
// remain: they are made cheap by what the plan knows, not dropped. What still allocates is
// the returned std::vector<DeviceArray> (the API's; three allocations for one output).
// ElementwiseKernel::operator() launches plans the same way (NOTE [ call memo ]).
void prepare_launch(const detail::ElementwiseDefinition& def, detail::ElementwisePlanData& plan) {
  const auto& sig = def.signature;
  if (plan.loop.size == 0) return;  // nothing is launched: nothing to check or pack
  auto span_of = [](const ArrayRef& array) {
    detail::ElementwisePlanData::Span span;
    if (array.size() == 0) return span;  // as ArrayRef::byte_range: {data, data}
    for (std::size_t d = 0; d < array.shape.size(); ++d) {
      const std::int64_t extent = (array.shape[d] - 1) * array.strides[d];
      (extent < 0 ? span.low : span.high) += extent;
    }
    span.high += static_cast<std::int64_t>(itemsize(array.dtype));
    return span;
  };
  plan.input_spans.clear();
  for (const auto& in : plan.inputs) plan.input_spans.push_back(in.is_array ? span_of(in.array) : detail::ElementwisePlanData::Span{});
  plan.output_spans.clear();
  for (const auto& out : plan.outputs) plan.output_spans.push_back(span_of(out));
  plan.same_description.assign(plan.inputs.size() * plan.outputs.size(), 0);
  for (std::size_t k = 0; k < plan.inputs.size(); ++k) {
    if (!plan.inputs[k].is_array) continue;
    const ArrayRef& in = plan.inputs[k].array;
    for (std::size_t o = 0; o < plan.outputs.size(); ++o) {
      const ArrayRef& out = plan.outputs[o];
      plan.same_description[k * plan.outputs.size() + o] =
          in.dtype == out.dtype && in.shape == out.shape && in.strides == out.strides;
    }
  }

  // The parameters, in the kernel's order, addresses and scalars zero: one parameter per
  // input and output (the launch writes each one's address or value at its start), then
  // the loop's shape.
  const Layout& layout = plan.loop.layout;
  detail::ParamPack pack;
  std::size_t array_index = 0;
  auto pack_array = [&] {
    const auto& array_strides = plan.loop.strides[array_index++];
    detail::pack_view(pack, 0, plan.loop.size, plan.loop.shape, array_strides, plan.rank, layout.index64, false);
  };
  for (std::size_t k = 0; k < sig.in.size(); ++k) {
    if (!plan.inputs[k].is_array) {
      detail::pack_scalar(pack, Scalar(), plan.resolved.inputs[k]);
    } else if (sig.in[k].raw) {
      detail::pack_raw(pack, plan.inputs[k].array, layout.index64);
    } else {
      pack_array();
    }
  }
  for (std::size_t k = 0; k < sig.out.size(); ++k) {
    if (sig.out[k].raw) {
      detail::pack_raw(pack, plan.outputs[k], layout.index64);
    } else {
      pack_array();
    }
  }
  detail::pack_shape(pack, plan.loop.size, plan.loop.shape, plan.rank, layout.index64);
  if (layout.kind == LayoutKind::tiled) {
    pack.begin(4);
    pack.field<std::uint32_t>(plan.loop.staged);
  }
  plan.packed = pack.snapshot();
}

// Whether two arrays, at `a` and `b` with these spans, share a byte (detail::overlaps).
bool overlap(std::uint64_t a, const detail::ElementwisePlanData::Span& a_span, std::uint64_t b,
             const detail::ElementwisePlanData::Span& b_span) {
  const std::uint64_t a_low = a + static_cast<std::uint64_t>(a_span.low), a_high = a + static_cast<std::uint64_t>(a_span.high);
  const std::uint64_t b_low = b + static_cast<std::uint64_t>(b_span.low), b_high = b + static_cast<std::uint64_t>(b_span.high);
  return a_low < b_high && b_low < a_high;
}

// The plan for `inputs` and `outputs` with `options` on a GPU of `multiprocessors`.
std::shared_ptr<detail::ElementwisePlanData> make_plan(const ElementwiseKernel& kernel,
                                                       const detail::ElementwiseDefinition& def,
                                                       detail::HandleTable& handles, ListView<Arg> inputs,
                                                       ListView<ArrayRef> outputs,
                                                       const std::optional<std::int64_t>& size_option,
                                                       const std::map<std::string, DType>& bindings,
                                                       int multiprocessors, std::optional<unsigned> block_size) {
  auto plan = plan_shapes(kernel, def, handles, inputs, outputs, size_option, bindings);
  plan_geometry(def, *plan, multiprocessors, block_size);
  plan->size_option = size_option;
  plan->block_option = block_size;
  prepare_launch(def, *plan);
  return plan;
}

// Runs a plan whose arguments are known to match it (checked by launch(), or made from
// them by operator()), writing `outputs`: the caller's (`callers`: they may alias each
// other or an input, which is checked) or arrays allocated for this call. Allocates
// nothing unless an input overlaps an output (NOTE [ kept plan ]).
void launch_planned_into(const ElementwiseKernel& kernel, const detail::ElementwiseDefinition& def,
                         detail::HandleTable& handles, const detail::ElementwisePlanData& plan, ListView<Arg> inputs_in,
                         ListView<ArrayRef> outputs, bool callers, const CallOptions& options, Engine& engine,
                         const Device& device) {
  const auto& sig = def.signature;
  const std::string& name = def.name;
  if (plan.loop.size == 0) return;
  const ListView<ArrayRef> outputs_in = callers ? outputs : ListView<ArrayRef>{};

  // Aliasing (only arrays the caller passed can alias): outputs must not share memory; an
  // input that shares memory with an output is read from a copy unless it is the very same
  // view (then each element is read before it is written, in the same thread). The byte
  // ranges come from the plan's spans (the arguments match its descriptions).
  if (!outputs_in.empty()) {
    for (size_t a = 0; a < outputs_in.size(); ++a) {
      for (size_t b = a + 1; b < outputs_in.size(); ++b) {
        if (overlap(outputs_in[a].data, plan.output_spans[a], outputs_in[b].data, plan.output_spans[b])) {
          throw Error(ErrorCode::invalid_argument, fmt::format("{}: outputs {} and {} overlap in memory", name,
                                                               sig.out[a].name, sig.out[b].name));
        }
      }
    }
    // Copies are made only when an input overlaps an output (rare): the common call copies
    // no argument list.
    std::vector<Arg> copied;
    std::vector<DeviceArray> temporaries;
    for (size_t k = 0; k < inputs_in.size(); ++k) {
      if (!inputs_in[k].is_array() || sig.in[k].raw) continue;
      const std::uint64_t address = inputs_in[k].array().data;
      for (size_t o = 0; o < outputs_in.size(); ++o) {
        if (sig.out[o].raw || !overlap(address, plan.input_spans[k], outputs_in[o].data, plan.output_spans[o])) continue;
        if (plan.same_description[k * outputs_in.size() + o] && address == outputs_in[o].data) continue;
        if (copied.empty()) copied = inputs_in.to_vector();
        temporaries.push_back(copy_of(inputs_in[k].array(), options));
        copied[k] = Arg(temporaries.back());
        break;
      }
    }
    if (!temporaries.empty()) {
      // The copies are laid out differently from the descriptions: plan again for them.
      auto replanned = make_plan(kernel, def, handles, copied, outputs_in, std::nullopt, plan.types.bindings,
                                 plan.multiprocessors, plan.launch.block[0]);
      launch_planned_into(kernel, def, handles, *replanned, copied, outputs_in, true, options, engine, device);
      return;
    }
  }

  // The kernel function: the plan's own after its first launch on this device, else the
  // kernel's memo (loading on first use).
  const Layout& layout = plan.loop.layout;
  const detail::LoadedFunctions* loaded = plan.prepared.find(engine.id(), device.ordinal());
  if (!loaded) {
    loaded = &detail::find_or_load(handles, *plan.entry, engine, device, layout, [&] {
      try {
        return engine.load(codegen::elementwise_variant(def, plan.types, plan.resolved, layout),
                           [&] { return kernel.program(plan.types, layout); }, device);
      } catch (const Error& error) {
        throw detail::load_error(error, name, plan.types, plan.resolved, layout);
      }
    }, [&](const Engine::Loaded& l) {
      detail::LoadedFunctions picked;
      picked.functions.push_back(l.module.function(name));
      return picked;
    });
    plan.prepared.remember(engine.id(), device.ordinal(), loaded);
  }
  const Function& function = loaded->functions.front();

  // Arguments: the plan's packed parameters with this call's addresses and scalars written
  // at the start of each parameter (NOTE [ kept plan ]).
  detail::ParamPack pack;
  pack.restore(plan.packed);
  for (size_t k = 0; k < sig.in.size(); ++k) {
    if (inputs_in[k].is_array()) {
      const std::uint64_t address = inputs_in[k].array().data;
      std::memcpy(pack.parameter(k), &address, sizeof address);
    } else {
      // A kept plan's launch takes new scalar values: each is range-checked as planning does.
      detail::check_scalar_range(def.name, sig.in[k].text, inputs_in[k].scalar(), plan.resolved.inputs[k]);
      inputs_in[k].scalar().convert_to(plan.resolved.inputs[k], pack.parameter(k));
    }
  }
  for (size_t k = 0; k < sig.out.size(); ++k) {
    const std::uint64_t address = outputs[k].data;
    std::memcpy(pack.parameter(sig.in.size() + k), &address, sizeof address);
  }
  LaunchConfig config = plan.launch;
  config.stream = options.stream;
  function.launch(config, pack.pointers());
}

// The same, returning the outputs: the caller's as non-owning arrays, or those allocated.
std::vector<DeviceArray> launch_planned(const ElementwiseKernel& kernel, const detail::ElementwiseDefinition& def,
                                        detail::HandleTable& handles, const detail::ElementwisePlanData& plan,
                                        ListView<Arg> inputs_in, ListView<ArrayRef> outputs_in,
                                        const CallOptions& options, Engine& engine, const Device& device) {
  std::vector<DeviceArray> outputs = detail::outputs_for(device, plan, outputs_in);
  if (plan.loop.size == 0) return outputs;
  if (!outputs_in.empty()) {
    launch_planned_into(kernel, def, handles, plan, inputs_in, outputs_in, true, options, engine, device);
    return outputs;
  }
  std::vector<ArrayRef> allocated;
  allocated.reserve(outputs.size());
  for (const auto& output : outputs) allocated.push_back(output.ref());
  launch_planned_into(kernel, def, handles, plan, inputs_in, allocated, false, options, engine, device);
  return outputs;
}

}  // namespace

ElementwisePlan ElementwiseKernel::plan(ListView<Arg> inputs, ListView<ArrayRef> outputs,
                                        const PlanOptions& options) const {
  ElementwisePlan plan;
  plan.data_ = make_plan(*this, *definition_, *handles_, inputs, outputs, options.size, options.bindings,
                         options.multiprocessors, options.block_size);
  return plan;
}

namespace {

// The arguments of a kept plan's launch: one comparison when they are what the plan
// describes; the checks that say what differs only when they are not (NOTE [ kept plan ]).
void check_planned_arguments(const detail::ElementwiseDefinition& def, const detail::HandleTable& handles,
                             const detail::ElementwisePlanData& plan, ListView<Arg> inputs, ListView<ArrayRef> outputs) {
  if (plan.table == &handles && detail::matches(plan, inputs, outputs)) return;
  check_counts(def, inputs, outputs, false);
  detail::check_launch_arguments(def.name, handles, def.signature.in, def.signature.out, plan, inputs, outputs);
}

}  // namespace

void ElementwiseKernel::launch_into(const ElementwisePlan& planned, ListView<Arg> inputs, ListView<ArrayRef> outputs,
                                    const CallOptions& options) const {
  const auto& def = *definition_;
  if (!planned.valid()) throw Error(ErrorCode::invalid_argument, fmt::format("{}: launch of an empty plan", def.name));
  if (outputs.empty() && !def.signature.out.empty()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: launch_into writes the caller's outputs, and none were given (launch() allocates them)",
                            def.name));
  }
  const detail::ElementwisePlanData& plan = *planned.data_;
  check_planned_arguments(def, *handles_, plan, inputs, outputs);
  Engine& engine = detail::engine_of(options);
  const Device device = detail::device_for(def.name, engine, options.device, plan);
  launch_planned_into(*this, def, *handles_, plan, inputs, outputs, true, options, engine, device);
}

std::vector<DeviceArray> ElementwiseKernel::launch(const ElementwisePlan& planned, ListView<Arg> inputs,
                                                   ListView<ArrayRef> outputs,
                                                   const CallOptions& options) const {
  const auto& def = *definition_;
  if (!planned.valid()) throw Error(ErrorCode::invalid_argument, fmt::format("{}: launch of an empty plan", def.name));
  const detail::ElementwisePlanData& plan = *planned.data_;
  check_planned_arguments(def, *handles_, plan, inputs, outputs);
  Engine& engine = detail::engine_of(options);
  const Device device = detail::device_for(def.name, engine, options.device, plan);
  return launch_planned(*this, def, *handles_, plan, inputs, outputs, options, engine, device);
}

// NOTE [ call memo ]
// operator() is plan + launch, and planning (type resolution, broadcasting, the loop plan)
// allocates a few dozen times. A program calls a kernel with the same shapes over and over,
// so each kernel object (HandleTable, shared by copies) keeps the last kRecentPlans plans
// its calls made, in a ring under the memo's mutex. A call first looks for one made for the
// same options whose descriptions its arguments match exactly (detail::matches: the very
// check launch(plan) makes) and launches it as launch(plan) would; only then does it plan
// (usage errors still come before the GPU is touched: a plan is kept only once its call
// planned, and planned without error). A remembered plan is for the multiprocessor count of
// the GPU it was made on; a call on another GPU plans anew. The ring bounds the memory: a
// program that cycles through more shapes than that plans per call, as before.
namespace {

std::shared_ptr<const detail::ElementwisePlanData> recent_plan(detail::HandleTable& handles,
                                                               ListView<Arg> inputs,
                                                               ListView<ArrayRef> outputs,
                                                               const CallOptions& options) {
  std::lock_guard<std::mutex> lock(handles.mutex);
  for (std::size_t n = 1; n <= detail::HandleTable::kRecentPlans; ++n) {
    const auto& plan = handles.recent_plans[(handles.next_plan + detail::HandleTable::kRecentPlans - n) %
                                            detail::HandleTable::kRecentPlans];
    if (!plan) break;
    if (plan->size_option == options.size && plan->block_option == options.block_size &&
        plan->types.bindings == options.bindings && detail::matches(*plan, inputs, outputs)) {
      return plan;
    }
  }
  return nullptr;
}

void remember_plan(detail::HandleTable& handles, std::shared_ptr<const detail::ElementwisePlanData> plan) {
  std::lock_guard<std::mutex> lock(handles.mutex);
  handles.recent_plans[handles.next_plan] = std::move(plan);
  handles.next_plan = (handles.next_plan + 1) % detail::HandleTable::kRecentPlans;
}

}  // namespace

std::vector<DeviceArray> ElementwiseKernel::operator()(ListView<Arg> inputs,
                                                       ListView<ArrayRef> outputs,
                                                       const CallOptions& options) const {
  const auto& def = *definition_;
  if (auto recent = recent_plan(*handles_, inputs, outputs, options)) {
    Engine& engine = detail::engine_of(options);
    const Device device = engine.device(options.device);
    if (device.multiprocessors() == recent->multiprocessors) {
      return launch_planned(*this, def, *handles_, *recent, inputs, outputs, options, engine, device);
    }
  }
  // Usage errors first, without the GPU; then the geometry for the call's device.
  check_counts(def, inputs, outputs, false);
  auto data = plan_shapes(*this, def, *handles_, inputs, outputs, options.size, options.bindings);
  Engine& engine = detail::engine_of(options);
  const Device device = engine.device(options.device);
  plan_geometry(def, *data, device.multiprocessors(), options.block_size);
  data->size_option = options.size;
  data->block_option = options.block_size;
  prepare_launch(def, *data);
  remember_plan(*handles_, data);
  return launch_planned(*this, def, *handles_, *data, inputs, outputs, options, engine, device);
}

}  // namespace kernc
