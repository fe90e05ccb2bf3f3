// ElementwiseKernel::operator(): CuPy's call semantics on top of the generated programs.

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsl/definitions.hpp"
#include "dsl/loop_plan.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernels/call_support.hpp"

namespace kernc {

namespace {

constexpr unsigned kBlock = 256;

// A copy of `array` in fresh C-contiguous memory (used when an input overlaps an output).
DeviceArray copy_of(const ArrayRef& array, const CallOptions& options) {
  static const ElementwiseKernel copy("T x", "T y", "y = x", "kernc_copy");
  CallOptions plain = options;
  plain.bindings.clear();
  return copy({array}, {}, plain).front();
}

}  // namespace

std::vector<DeviceArray> ElementwiseKernel::operator()(const std::vector<Arg>& inputs_in,
                                                       const std::vector<ArrayRef>& outputs_in,
                                                       const CallOptions& options) const {
  const auto& def = *definition_;
  const auto& sig = def.signature;
  const std::string& name = def.name;
  if (inputs_in.size() != sig.in.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} takes {} input(s) ({}), got {}", name, sig.in.size(),
                                                         sig.in.size() ? sig.in.front().text + ", ..." : "", inputs_in.size()));
  }
  if (!outputs_in.empty() && outputs_in.size() != sig.out.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} has {} output(s); pass all of them or none, got {}", name,
                                                         sig.out.size(), outputs_in.size()));
  }
  for (const auto& out : outputs_in) out.validate(name.c_str());
  for (const auto& in : inputs_in) {
    if (in.is_array()) in.array().validate(name.c_str());
  }

  Engine& engine = detail::engine_of(options);
  CallTypes types = detail::call_types(inputs_in, outputs_in, options.bindings);
  detail::TypeEntry& entry = detail::type_entry(def.handles, detail::types_key(types), [&] { return resolve(types); });
  const ResolvedTypes& resolved = entry.resolved;

  // The loop shape: broadcast of the non-raw input arrays; outputs must match it.
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::string_view> names;
  bool any_raw = false;
  for (size_t k = 0; k < sig.in.size(); ++k) {
    if (!inputs_in[k].is_array()) continue;
    if (sig.in[k].raw) {
      any_raw = true;
    } else {
      shapes.push_back(inputs_in[k].array().shape);
      names.push_back(sig.in[k].name);
    }
  }
  bool non_raw_output = false;
  for (const auto& p : sig.out) non_raw_output = non_raw_output || !p.raw;
  std::vector<std::int64_t> shape;
  if (options.size) {
    if (!shapes.empty() || non_raw_output) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: size= is allowed only when every array parameter is raw (as in CuPy)", name));
    }
    if (*options.size < 0) throw Error(ErrorCode::invalid_argument, fmt::format("{}: size= is negative", name));
    shape = {*options.size};
  } else if (!shapes.empty()) {
    shape = dsl::broadcast_shape(shapes, names);
  } else if (!outputs_in.empty()) {
    for (size_t k = 0; k < sig.out.size(); ++k) {
      if (!sig.out[k].raw) {
        shape = outputs_in[k].shape;
        break;
      }
    }
    if (shape.empty() && !non_raw_output) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: the loop size cannot be decided: every array is raw; pass size=", name));
    }
  } else {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: the loop size cannot be decided: no non-raw input array{}; pass the outputs{}", name,
                            any_raw ? " (raw arrays do not set it)" : "", any_raw ? " or size=" : ""));
  }
  for (size_t k = 0; k < outputs_in.size(); ++k) {
    if (!sig.out[k].raw && outputs_in[k].shape != shape) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: output {} has shape {} but the inputs broadcast to {} (outputs are not broadcast)", name,
                              sig.out[k].name, outputs_in[k].shape, shape));
    }
  }

  // Outputs: the arrays passed, or new C-contiguous ones.
  Device device = engine.device(options.device);
  std::vector<DeviceArray> outputs;
  for (size_t k = 0; k < sig.out.size(); ++k) {
    if (!outputs_in.empty()) {
      outputs.push_back(DeviceArray::wrap(device, outputs_in[k]));
    } else if (sig.out[k].raw) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: raw output {} cannot be allocated by kernc; pass the outputs", name, sig.out[k].name));
    } else {
      outputs.push_back(DeviceArray::empty(device, resolved.outputs[k], shape));
    }
  }
  std::int64_t size = 1;
  for (auto extent : shape) size *= extent;
  if (size == 0) return outputs;

  // Aliasing: outputs must not share memory; an input that shares memory with an output
  // is read from a copy unless it is the very same view (then each element is read before
  // it is written, in the same thread).
  for (size_t a = 0; a < outputs.size(); ++a) {
    for (size_t b = a + 1; b < outputs.size(); ++b) {
      if (detail::overlaps(outputs[a].ref(), outputs[b].ref())) {
        throw Error(ErrorCode::invalid_argument, fmt::format("{}: outputs {} and {} overlap in memory", name,
                                                             sig.out[a].name, sig.out[b].name));
      }
    }
  }
  std::vector<Arg> inputs = inputs_in;
  std::vector<DeviceArray> temporaries;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].is_array() || sig.in[k].raw) continue;
    for (size_t o = 0; o < outputs.size(); ++o) {
      if (sig.out[o].raw || !detail::overlaps(inputs[k].array(), outputs[o].ref())) continue;
      ArrayRef broadcast_in = inputs[k].array();
      if (broadcast_in.shape == outputs[o].shape() && detail::same_view(broadcast_in, outputs[o].ref())) continue;
      temporaries.push_back(copy_of(inputs[k].array(), options));
      inputs[k] = Arg(temporaries.back());
      break;
    }
  }

  // The loop plan over the non-raw arrays (inputs, then outputs).
  std::vector<std::vector<std::int64_t>> strides;
  std::vector<std::size_t> item_sizes;
  std::int64_t extra = 0;
  for (size_t k = 0; k < sig.in.size(); ++k) {
    if (!inputs[k].is_array()) continue;
    if (sig.in[k].raw) {
      extra = std::max(extra, detail::raw_extent(inputs[k].array()));
    } else {
      strides.push_back(dsl::broadcast_strides(inputs[k].array(), shape));
      item_sizes.push_back(itemsize(inputs[k].array().dtype));
    }
  }
  for (size_t k = 0; k < sig.out.size(); ++k) {
    if (sig.out[k].raw) {
      extra = std::max(extra, detail::raw_extent(outputs[k].ref()));
    } else {
      strides.push_back(dsl::broadcast_strides(outputs[k].ref(), shape));
      item_sizes.push_back(itemsize(outputs[k].dtype()));
    }
  }
  const std::int64_t max_blocks = static_cast<std::int64_t>(device.multiprocessors()) * 32;
  // The contiguous kernel steps kUnroll (4) elements per thread: its last index may run
  // 4 grid strides past the end, which 32-bit indexing must still hold.
  dsl::LoopPlan plan = dsl::plan_loop(shape, std::move(strides), item_sizes, def.options.reduce_dims,
                                      max_blocks * kBlock * 4, extra);
  const int rank = plan.layout.kind == LayoutKind::contiguous ? 0
                   : plan.layout.kind == LayoutKind::strided  ? plan.layout.rank
                                                              : -1;

  // The kernel function for this layout on this device: loaded once, then reused.
  Function function;
  {
    const auto key = detail::function_key(engine, plan.layout, device.ordinal());
    std::unique_lock<std::mutex> lock(def.handles.mutex);
    auto found = entry.functions.find(key);
    if (found != entry.functions.end()) {
      function = found->second.front();
    } else {
      lock.unlock();  // compiling must not block other calls of this kernel
      Engine::Loaded loaded;
      try {
        loaded = engine.load(program(types, plan.layout), device);
      } catch (const Error& error) {
        throw detail::load_error(error, name, types, resolved, plan.layout);
      }
      function = loaded.module.function(name);
      lock.lock();
      entry.functions.emplace(key, std::vector<Function>{function});
    }
  }

  // Arguments, in the kernel's parameter order.
  detail::ParamPack pack;
  size_t array_index = 0;
  auto pack_array = [&](const ArrayRef& array) {
    const auto& array_strides = plan.strides[array_index++];
    detail::pack_view(pack, array.data, plan.size, plan.shape, array_strides, rank, plan.layout.index64, false);
  };
  for (size_t k = 0; k < sig.in.size(); ++k) {
    if (!inputs[k].is_array()) {
      detail::pack_scalar(pack, inputs[k].scalar(), resolved.inputs[k]);
    } else if (sig.in[k].raw) {
      detail::pack_raw(pack, inputs[k].array(), plan.layout.index64);
    } else {
      pack_array(inputs[k].array());
    }
  }
  for (size_t k = 0; k < sig.out.size(); ++k) {
    if (sig.out[k].raw) {
      detail::pack_raw(pack, outputs[k].ref(), plan.layout.index64);
    } else {
      pack_array(outputs[k].ref());
    }
  }
  detail::pack_shape(pack, plan.size, plan.shape, rank, plan.layout.index64);

  LaunchConfig config;
  config.block[0] = kBlock;
  // The contiguous kernel takes 4 elements per thread per step (kUnroll in its template).
  const std::int64_t per_block = rank == 0 ? kBlock * 4 : kBlock;
  config.grid[0] = static_cast<unsigned>(std::min<std::int64_t>((plan.size + per_block - 1) / per_block, max_blocks));
  config.stream = options.stream;
  function.launch(config, pack.pointers());
  return outputs;
}

}  // namespace kernc
