// ReductionKernel calls: the plan (src/dsl/reduction_plan.cpp) with both passes'
// parameters packed once, then load and launch. The call path itself is src/kernels/call.cpp.

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "codegen/kernel_codegen.hpp"
#include "dsl/definitions.hpp"
#include "dsl/reduction_plan.hpp"
#include "kernc/engine.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernels/call_plan.hpp"
#include "kernels/call_support.hpp"

namespace kernc {

namespace {

class ReductionCall final : public detail::CallPlan {
 public:
  std::shared_ptr<const detail::ReductionDefinition> def;
  detail::HandleTable* handles = nullptr;  // kept alive by the kernel, or by keep_alive (plan())
  detail::TypeEntry* entry = nullptr;
  dsl::ReductionPlan plan;
  /// Both passes' parameters with addresses, scalars and the scratch buffers zero
  /// (NOTE [ kept plan ], src/kernels/elementwise_call.cpp): the launch writes those only.
  detail::PackedParams main_packed, finish_packed;
  std::size_t partials_parameter = 0;  // then the validity flags' parameter
  detail::Prepared<const detail::LoadedFunctions> prepared;

  void launch_matched(ListView<Arg> inputs, ListView<ArrayRef> outputs, StreamRef stream,
                      const Device& device) const override;
  std::shared_ptr<const CallPlan> replan(ListView<Arg> inputs, ListView<ArrayRef> outputs) const override;
};

// The parameters of one pass (`group` threads per output), addresses zero.
detail::PackedParams pack_pass(const ReductionCall& call, std::int64_t group, std::size_t* scratch_parameter) {
  const auto& sig = call.def->signature;
  const dsl::ReductionPlan& plan = call.plan;
  const Layout& layout = plan.layout;
  const bool contiguous = layout.kind == LayoutKind::contiguous;
  const int rank = layout.view_rank();
  detail::ParamPack pack;
  std::size_t in_index = 0, out_index = 0;
  for (std::size_t k = 0; k < sig.in.size(); ++k) {
    if (!call.inputs[k].is_array) {
      detail::pack_scalar(pack, Scalar(), call.resolved.inputs[k]);
    } else if (sig.in[k].raw) {
      detail::pack_raw(pack, call.inputs[k].array, layout.index64);
    } else {
      const auto& view = plan.input_views[in_index++];
      detail::pack_view(pack, 0, plan.out_size * plan.reduce_size, view.shape, view.strides, rank, layout.index64,
                        contiguous);
    }
  }
  for (std::size_t k = 0; k < sig.out.size(); ++k) {
    if (sig.out[k].raw) {
      detail::pack_raw(pack, plan.outputs[k], layout.index64);
    } else {
      const auto& view = plan.output_views[out_index++];
      detail::pack_view(pack, 0, plan.out_size, view.shape, view.strides, rank, layout.index64, contiguous);
    }
  }
  for (std::int64_t value : {plan.out_size, plan.reduce_size, group, plan.splits}) {
    pack.begin(layout.index64 ? 8 : 4);
    detail::pack_index(pack, value, layout.index64);
  }
  *scratch_parameter = sig.in.size() + sig.out.size() + 4;
  pack.begin(8);
  pack.field<std::uint64_t>(0);  // partial results of the splits
  pack.begin(8);
  pack.field<std::uint64_t>(0);  // their validity flags
  return pack.snapshot();
}

std::shared_ptr<ReductionCall> make_call(const std::shared_ptr<const detail::ReductionDefinition>& definition,
                                               detail::HandleTable& handles,
                                               ListView<Arg> inputs, ListView<ArrayRef> outputs,
                                               const CallOptions& options) {
  const auto& def = *definition;
  const auto& sig = def.signature;
  auto call = std::make_shared<ReductionCall>();
  call->def = definition;
  call->handles = &handles;
  const std::vector<ArrayRef> given = detail::plan_dsl_arguments(*call, KernelKind::reduction, def.name, sig, handles,
                                                                 call->entry, inputs, outputs, options);
  call->plan = dsl::plan_reduction_shapes(def, call->resolved, call->inputs, given, options.axes, options.keepdims);
  dsl::ReductionPlan& plan = call->plan;
  call->shape = plan.in_shape;
  call->axes = plan.axes;
  call->outputs = plan.outputs;
  call->reduce_size = plan.reduce_size;
  call->empty = plan.out_size == 0;
  if (!call->empty) {
    call->multiprocessors = detail::multiprocessors_for(options);
    dsl::plan_reduction_geometry(def.name, call->multiprocessors, plan, detail::backend_for(options));
  } else {
    call->multiprocessors = options.multiprocessors.value_or(0);
  }
  call->layout = plan.layout;
  call->splits = plan.splits;
  call->launch.block[0] = plan.block;
  call->launch.grid[0] = plan.grid;
  call->launch.grid[1] = static_cast<unsigned>(plan.splits);
  call->describe_spans(sig.in, sig.out);
  if (!call->empty) {
    call->main_packed = pack_pass(*call, plan.group, &call->partials_parameter);
    if (plan.splits > 1) call->finish_packed = pack_pass(*call, plan.finish_group, &call->partials_parameter);
  }
  return call;
}

std::shared_ptr<const detail::CallPlan> ReductionCall::replan(ListView<Arg> inputs, ListView<ArrayRef> outputs) const {
  auto call = make_call(def, *handles, inputs, outputs, options);
  call->keep_alive = keep_alive;
  return call;
}

void ReductionCall::launch_matched(ListView<Arg> inputs, ListView<ArrayRef> outputs, StreamRef stream,
                                   const Device& device) const {
  const auto& sig = def->signature;
  // Kernel functions for this layout on this device (and the size of _type_reduce): the
  // plan's own after its first launch, else the kernel's memo.
  const detail::LoadedFunctions* loaded = prepared.get(engine->id());
  if (!loaded) {
    loaded = &detail::load_generated(
        *handles, *entry, *engine, device, kernel, types, resolved, layout,
        [&] { return codegen::reduction_variant(*def, types, resolved, layout); },
        [&] { return codegen::render_reduction(*def, types, resolved, layout); }, [&](const Engine::Loaded& module) {
      detail::LoadedFunctions picked;
      picked.functions = {module.module.function(kernel), module.module.function(kernel + "_finish")};
      if (layout.kind == LayoutKind::generic) {
        // NOTE [ reduction columns ]: codegen adds the kernel when the inputs' items allow it.
        try {
          picked.functions.push_back(module.module.function(kernel + "_columns"));
        } catch (const Error& error) {
          if (error.code() != ErrorCode::not_found) throw;
        }
      }
      auto [address, bytes] = module.module.global("kernc_reduce_type_size");
      unsigned int size = 0;
      device.copy_to_host(&size, address, std::min<std::size_t>(bytes, sizeof size));
      picked.reduce_type_size = size;
      return picked;
    });
    prepared.set(loaded);
  }
  const detail::LoadedFunctions& fns = *loaded;

  // The columns kernel when the plan allows it and every input's address is aligned for it.
  bool by_columns = plan.columns > 1 && fns.functions.size() > 2;
  if (by_columns) {
    std::size_t view = 0;
    for (std::size_t k = 0; k < sig.in.size() && by_columns; ++k) {
      if (!inputs[k].is_array() || sig.in[k].raw) continue;
      by_columns = inputs[k].array().data % static_cast<std::uint64_t>(plan.column_alignments[view++]) == 0;
    }
  }
  DeviceBuffer partials, valid;
  if (plan.splits > 1) {
    // Stream-ordered: freed on the call's stream after the two kernels, without a wait.
    partials = device.allocate_on(stream, static_cast<std::size_t>(plan.out_size * plan.splits) * fns.reduce_type_size);
    valid = device.allocate_on(stream, static_cast<std::size_t>(plan.out_size * plan.splits));
  }
  // Each pass restores its packed parameters and writes this call's addresses, scalars and
  // scratch buffers in place (no allocation per call).
  auto fill = [&](detail::ParamPack& pack, const detail::PackedParams& packed) {
    pack.restore(packed);
    detail::write_call_arguments(pack, inputs, outputs, resolved.inputs);
    const std::uint64_t scratch[2] = {partials.address(), valid.address()};
    std::memcpy(pack.parameter(partials_parameter), &scratch[0], sizeof scratch[0]);
    std::memcpy(pack.parameter(partials_parameter + 1), &scratch[1], sizeof scratch[1]);
  };
  LaunchConfig config = launch;
  config.stream = stream;
  if (by_columns) config.grid[0] = plan.columns_grid;
  {
    detail::ParamPack pack;
    fill(pack, main_packed);
    fns.functions[by_columns ? 2 : 0].launch(config, pack.pointers());
  }
  if (plan.splits > 1) {
    LaunchConfig finish = config;
    finish.grid[0] = plan.finish_grid;
    finish.grid[1] = 1;
    detail::ParamPack pack;
    fill(pack, finish_packed);
    fns.functions[1].launch(finish, pack.pointers());
  }
}

}  // namespace

Call ReductionKernel::plan(ListView<Arg> inputs, ListView<ArrayRef> outputs, const CallOptions& options) const {
  auto call = make_call(definition_, *handles_, inputs, outputs, options);
  call->keep_alive = handles_;
  return Call(std::move(call));
}

std::vector<DeviceArray> ReductionKernel::operator()(ListView<Arg> inputs, const std::optional<std::vector<int>>& axes,
                                                     bool keepdims, ListView<ArrayRef> outputs,
                                                     const CallOptions& options) const {
  CallOptions with_axes = options;
  with_axes.axes = axes;
  with_axes.keepdims = keepdims;
  return detail::call_through_memo(handles_->recent, inputs, outputs, with_axes,
                                   [&] { return make_call(definition_, *handles_, inputs, outputs, with_axes); });
}

}  // namespace kernc
