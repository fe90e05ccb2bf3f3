// ElementwiseKernel calls: the plan (src/dsl/elementwise_plan.cpp) with its parameters
// packed once, then load and launch. The call path itself is src/kernels/call.cpp.

#include <cstring>

#include <fmt/format.h>

#include "codegen/kernel_codegen.hpp"
#include "dsl/definitions.hpp"
#include "dsl/elementwise_plan.hpp"
#include "kernc/engine.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernels/call_plan.hpp"
#include "kernels/call_support.hpp"

namespace kernc {

namespace {

class ElementwiseCall final : public detail::CallPlan {
 public:
  std::shared_ptr<const detail::ElementwiseDefinition> def;
  detail::HandleTable* handles = nullptr;  // kept alive by the kernel, or by keep_alive (plan())
  detail::TypeEntry* entry = nullptr;            // unordered_map nodes do not move
  dsl::ElementwisePlan plan;
  detail::PackedParams packed;  // NOTE [ kept plan ]
  detail::Prepared<const detail::LoadedFunctions> prepared;

  void launch_matched(ListView<Arg> inputs, ListView<ArrayRef> outputs, StreamRef stream,
                      const Device& device) const override;
  std::shared_ptr<const CallPlan> replan(ListView<Arg> inputs, ListView<ArrayRef> outputs) const override;
};

// NOTE [ kept plan ]
// A plan fixes everything of a launch but the addresses of the arrays and the values of
// the scalars: the launch geometry, the strides of the loop, the index width, and so every
// byte of the kernel's parameters but those. So planning also packs the parameters once,
// with addresses and scalars zero (`packed`), and the byte range of each described view
// relative to its address (CallPlan's spans, for the aliasing rules). A launch of the plan
// then checks the arguments against the descriptions with one allocation-free comparison
// (detail::matches; the checks that name what differs run only when it fails), takes the
// kernel function from the plan (one atomic load; detail::Prepared), copies the packed
// bytes and writes the addresses and scalars in place. The checks a user relies on all
// remain: they are made cheap by what the plan knows, not dropped. What still allocates is
// the returned std::vector<DeviceArray> (the API's; three allocations for one output).
// Reductions keep their plans the same way (src/kernels/reduction_call.cpp).
detail::PackedParams pack_plan(const detail::ElementwiseDefinition& def, const ElementwiseCall& call) {
  const auto& sig = def.signature;
  const dsl::ElementwisePlan& plan = call.plan;
  const Layout& layout = plan.loop.layout;
  // The parameters, in the kernel's order, addresses and scalars zero: one parameter per
  // input and output (the launch writes each one's address or value at its start), then
  // the loop's shape.
  detail::ParamPack pack;
  std::size_t array_index = 0;
  auto pack_array = [&] {
    const auto& array_strides = plan.loop.strides[array_index++];
    detail::pack_view(pack, 0, plan.loop.size, plan.loop.shape, array_strides, plan.rank, layout.index64, false);
  };
  for (std::size_t k = 0; k < sig.in.size(); ++k) {
    if (!call.inputs[k].is_array) {
      detail::pack_scalar(pack, Scalar(), call.resolved.inputs[k]);
    } else if (sig.in[k].raw) {
      detail::pack_raw(pack, call.inputs[k].array, layout.index64);
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
  return pack.snapshot();
}

std::shared_ptr<ElementwiseCall> make_call(const std::shared_ptr<const detail::ElementwiseDefinition>& definition,
                                                 detail::HandleTable& handles,
                                                 ListView<Arg> inputs, ListView<ArrayRef> outputs,
                                                 const CallOptions& options) {
  const auto& def = *definition;
  const auto& sig = def.signature;
  auto call = std::make_shared<ElementwiseCall>();
  call->def = definition;
  call->handles = &handles;
  const std::vector<ArrayRef> given = detail::plan_dsl_arguments(*call, KernelKind::elementwise, def.name, sig, handles,
                                                                 call->entry, inputs, outputs, options);
  call->plan = dsl::plan_elementwise_shapes(def, call->resolved, call->inputs, given, options.size);
  call->multiprocessors = detail::multiprocessors_for(options);
  dsl::plan_elementwise_geometry(def, call->inputs, call->multiprocessors, options.block_size, call->plan,
                                 detail::backend_for(options));
  call->shape = call->plan.shape;
  call->outputs = call->plan.outputs;
  call->layout = call->plan.loop.layout;
  call->launch.block[0] = call->plan.block;
  call->launch.grid[0] = call->plan.grid;
  call->empty = call->plan.loop.size == 0;
  call->same_view_safe = true;
  call->describe_spans(sig.in, sig.out);
  if (!call->empty) call->packed = pack_plan(def, *call);
  return call;
}

std::shared_ptr<const detail::CallPlan> ElementwiseCall::replan(ListView<Arg> inputs, ListView<ArrayRef> outputs) const {
  auto call = make_call(def, *handles, inputs, outputs, options);
  call->keep_alive = keep_alive;
  return call;
}

void ElementwiseCall::launch_matched(ListView<Arg> inputs, ListView<ArrayRef> outputs, StreamRef stream,
                                     const Device& device) const {
  // The kernel function: the plan's own after its first launch, else the kernel's memo
  // (loading on first use).
  const detail::LoadedFunctions* loaded = prepared.get(engine->id());
  if (!loaded) {
    loaded = &detail::load_generated(
        *handles, *entry, *engine, device, kernel, types, resolved, layout,
        [&] { return codegen::elementwise_variant(*def, types, resolved, layout); },
        [&] { return codegen::render_elementwise(*def, types, resolved, layout); },
        [&](const Engine::Loaded& l) {
          detail::LoadedFunctions picked;
          picked.functions.push_back(l.module.function(kernel));
          return picked;
        });
    prepared.set(loaded);
  }
  // Arguments: the packed parameters with this call's addresses and scalars written at the
  // start of each parameter (NOTE [ kept plan ]).
  detail::ParamPack pack;
  pack.restore(packed);
  detail::write_call_arguments(pack, inputs, outputs, resolved.inputs);
  LaunchConfig config = launch;
  config.stream = stream;
  loaded->functions.front().launch(config, pack.pointers());
}

}  // namespace

Call ElementwiseKernel::plan(ListView<Arg> inputs, ListView<ArrayRef> outputs, const CallOptions& options) const {
  auto call = make_call(definition_, *handles_, inputs, outputs, options);
  call->keep_alive = handles_;
  return Call(std::move(call));
}

std::vector<DeviceArray> ElementwiseKernel::operator()(ListView<Arg> inputs, ListView<ArrayRef> outputs,
                                                       const CallOptions& options) const {
  return detail::call_through_memo(handles_->recent, inputs, outputs, options,
                                   [&] { return make_call(definition_, *handles_, inputs, outputs, options); });
}

}  // namespace kernc
