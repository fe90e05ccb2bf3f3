// ReductionKernel::operator(): axes, keepdims, outputs and the two-pass launch plan.

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

constexpr std::int64_t kBlock = 256;  // templates/reduction.cu.in _kReduceBlock

std::int64_t pow2_at_least(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// The axes to reduce, sorted; throws for duplicates and out-of-range axes.
std::vector<int> normalize_axes(const std::optional<std::vector<int>>& axes, int ndim, const std::string& name) {
  std::vector<int> out;
  if (!axes) {
    for (int d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int axis : *axes) {
    int normalized = axis < 0 ? axis + ndim : axis;
    if (normalized < 0 || normalized >= ndim) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: axis {} is out of range for {} dimension(s)", name, axis, ndim));
    }
    if (std::find(out.begin(), out.end(), normalized) != out.end()) {
      throw Error(ErrorCode::invalid_argument, fmt::format("{}: axis {} is repeated in {}", name, axis, *axes));
    }
    out.push_back(normalized);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool c_contiguous(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides, std::size_t item) {
  std::int64_t expected = static_cast<std::int64_t>(item);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

struct Functions {
  Function main, finish;
  std::size_t reduce_type_size = 0;
};

}  // namespace

std::vector<DeviceArray> ReductionKernel::operator()(const std::vector<Arg>& inputs,
                                                     const std::optional<std::vector<int>>& axes_in, bool keepdims,
                                                     const std::vector<ArrayRef>& outputs_in,
                                                     const CallOptions& options) const {
  const auto& def = *definition_;
  const auto& sig = def.signature;
  const std::string& name = def.name;
  if (inputs.size() != sig.in.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} takes {} input(s), got {}", name, sig.in.size(), inputs.size()));
  }
  if (!outputs_in.empty() && outputs_in.size() != sig.out.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} has {} output(s); pass all of them or none, got {}", name,
                                                         sig.out.size(), outputs_in.size()));
  }
  for (const auto& in : inputs) {
    if (in.is_array()) in.array().validate(name.c_str());
  }
  for (const auto& out : outputs_in) out.validate(name.c_str());

  Engine& engine = detail::engine_of(options);
  CallTypes types = detail::call_types(inputs, outputs_in, options.bindings);
  detail::TypeEntry& entry = detail::type_entry(def.handles, detail::types_key(types), [&] { return resolve(types); });
  const ResolvedTypes& resolved = entry.resolved;

  // The reduced shape: broadcast of the non-raw input arrays.
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::string_view> names;
  for (size_t k = 0; k < sig.in.size(); ++k) {
    if (inputs[k].is_array() && !sig.in[k].raw) {
      shapes.push_back(inputs[k].array().shape);
      names.push_back(sig.in[k].name);
    }
  }
  if (shapes.empty()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: there is nothing to reduce: no non-raw input array", name));
  }
  const std::vector<std::int64_t> in_shape = dsl::broadcast_shape(shapes, names);
  const int ndim = static_cast<int>(in_shape.size());
  const std::vector<int> reduced = normalize_axes(axes_in, ndim, name);
  std::vector<int> kept;
  for (int d = 0; d < ndim; ++d) {
    if (!std::binary_search(reduced.begin(), reduced.end(), d)) kept.push_back(d);
  }
  std::vector<std::int64_t> out_shape, kept_shape;
  std::int64_t out_size = 1, reduce_size = 1;
  for (int d = 0; d < ndim; ++d) {
    bool is_reduced = std::binary_search(reduced.begin(), reduced.end(), d);
    if (is_reduced) {
      reduce_size *= in_shape[d];
      if (keepdims) out_shape.push_back(1);
    } else {
      out_size *= in_shape[d];
      out_shape.push_back(in_shape[d]);
      kept_shape.push_back(in_shape[d]);
    }
  }

  Device device = engine.device(options.device);
  std::vector<DeviceArray> outputs;
  for (size_t k = 0; k < sig.out.size(); ++k) {
    if (!outputs_in.empty()) {
      if (!sig.out[k].raw && outputs_in[k].shape != out_shape) {
        throw Error(ErrorCode::invalid_argument, fmt::format("{}: output {} has shape {}, the reduction gives {}", name,
                                                             sig.out[k].name, outputs_in[k].shape, out_shape));
      }
      outputs.push_back(DeviceArray::wrap(device, outputs_in[k]));
    } else if (sig.out[k].raw) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: raw output {} cannot be allocated by kernc; pass the outputs", name, sig.out[k].name));
    } else {
      outputs.push_back(DeviceArray::empty(device, resolved.outputs[k], out_shape));
    }
  }
  if (out_size == 0) return outputs;
  if (reduce_size == 0 && !has_identity()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: cannot reduce zero elements: the kernel has no identity", name));
  }

  // Each non-raw input, seen with the kept axes first and the reduced axes last: element
  // (_i, _J) is then flat index _i * reduce_size + _J in that order.
  std::vector<int> order = kept;
  order.insert(order.end(), reduced.begin(), reduced.end());
  struct View {
    std::vector<std::int64_t> shape, strides;
  };
  std::vector<View> input_views;
  bool contiguous = true;
  std::int64_t extent = out_size * reduce_size;
  for (size_t k = 0; k < sig.in.size(); ++k) {
    if (!inputs[k].is_array()) continue;
    const ArrayRef& array = inputs[k].array();
    if (sig.in[k].raw) {
      extent = std::max(extent, detail::raw_extent(array));
      continue;
    }
    auto strides = dsl::broadcast_strides(array, in_shape);
    View view;
    for (int d : order) {
      view.shape.push_back(in_shape[d]);
      view.strides.push_back(strides[d]);
    }
    contiguous = contiguous && c_contiguous(view.shape, view.strides, itemsize(array.dtype));
    ArrayRef permuted = array;
    permuted.shape = view.shape;
    permuted.strides = view.strides;
    extent = std::max(extent, detail::raw_extent(permuted));
    input_views.push_back(std::move(view));
  }
  std::vector<View> output_views;
  for (size_t k = 0; k < sig.out.size(); ++k) {
    const ArrayRef& array = outputs[k].ref();
    extent = std::max(extent, detail::raw_extent(array));
    if (sig.out[k].raw) continue;
    View view;  // the output over the kept axes only (keepdims' extent-1 axes dropped)
    for (int d = 0, j = 0; d < ndim; ++d) {
      bool is_reduced = std::binary_search(reduced.begin(), reduced.end(), d);
      if (is_reduced) {
        if (keepdims) ++j;
        continue;
      }
      view.shape.push_back(array.shape[j]);
      view.strides.push_back(array.strides[j]);
      ++j;
    }
    contiguous = contiguous && c_contiguous(view.shape, view.strides, itemsize(array.dtype));
    output_views.push_back(std::move(view));
  }
  Layout layout;
  layout.kind = contiguous ? LayoutKind::contiguous : LayoutKind::generic;
  const std::int64_t max_blocks = static_cast<std::int64_t>(device.multiprocessors()) * 32;
  layout.index64 = !dsl::fits_index32(extent, max_blocks * kBlock);
  if (!contiguous && static_cast<int>(order.size()) > Layout::kMaxDims) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: at most {} dimensions", name, Layout::kMaxDims));
  }
  const int rank = contiguous ? 0 : -1;

  // Kernel functions for this layout on this device (and the size of _type_reduce).
  Functions fns;
  {
    const auto key = detail::function_key(engine, layout, device.ordinal());
    std::unique_lock<std::mutex> lock(def.handles.mutex);
    auto found = entry.functions.find(key);
    if (found != entry.functions.end()) {
      fns = {found->second[0], found->second[1], entry.reduce_type_sizes[key]};
    } else {
      lock.unlock();
      Engine::Loaded loaded;
      try {
        loaded = engine.load(program(types, layout), device);
      } catch (const Error& error) {
        throw detail::load_error(error, name, types, resolved, layout);
      }
      fns.main = loaded.module.function(name);
      fns.finish = loaded.module.function(name + "_finish");
      auto [address, bytes] = loaded.module.global("kernc_reduce_type_size");
      unsigned int size = 0;
      device.copy_to_host(&size, address, std::min<std::size_t>(bytes, sizeof size));
      fns.reduce_type_size = size;
      lock.lock();
      entry.functions.emplace(key, std::vector<Function>{fns.main, fns.finish});
      entry.reduce_type_sizes[key] = size;
    }
  }

  // Launch plan: a group of threads per output; split long reductions of few outputs
  // across blocks (second pass: name_finish) so that every multiprocessor has work.
  const std::int64_t group = pow2_at_least(std::clamp<std::int64_t>(reduce_size, 1, kBlock));
  const std::int64_t per_block = kBlock / group;
  const std::int64_t out_blocks = (out_size + per_block - 1) / per_block;
  const std::int64_t target_blocks = static_cast<std::int64_t>(device.multiprocessors()) * 8;
  std::int64_t splits = 1;
  if (out_blocks < target_blocks && reduce_size > group * 32) {
    splits = std::min<std::int64_t>((target_blocks + out_blocks - 1) / out_blocks, reduce_size / (group * 16));
    splits = std::clamp<std::int64_t>(splits, 1, 65535);
    std::int64_t chunk = (reduce_size + splits - 1) / splits;
    splits = (reduce_size + chunk - 1) / chunk;  // no empty split
  }
  DeviceBuffer partials, valid;
  if (splits > 1) {
    // Stream-ordered: freed on the call's stream after the two kernels, without a wait.
    partials = device.allocate_on(options.stream, static_cast<std::size_t>(out_size * splits) * fns.reduce_type_size);
    valid = device.allocate_on(options.stream, static_cast<std::size_t>(out_size * splits));
  }

  auto pack_arguments = [&](std::int64_t group_value) {
    auto pack = std::make_unique<detail::ParamPack>();
    size_t in_index = 0, out_index = 0;
    for (size_t k = 0; k < sig.in.size(); ++k) {
      if (!inputs[k].is_array()) {
        detail::pack_scalar(*pack, inputs[k].scalar(), resolved.inputs[k]);
      } else if (sig.in[k].raw) {
        detail::pack_raw(*pack, inputs[k].array(), layout.index64);
      } else {
        const View& view = input_views[in_index++];
        detail::pack_view(*pack, inputs[k].array().data, out_size * reduce_size, view.shape, view.strides, rank,
                          layout.index64, contiguous);
      }
    }
    for (size_t k = 0; k < sig.out.size(); ++k) {
      if (sig.out[k].raw) {
        detail::pack_raw(*pack, outputs[k].ref(), layout.index64);
      } else {
        const View& view = output_views[out_index++];
        detail::pack_view(*pack, outputs[k].ref().data, out_size, view.shape, view.strides, rank, layout.index64,
                          contiguous);
      }
    }
    auto index = [&](std::int64_t v) {
      pack->begin(layout.index64 ? 8 : 4);
      detail::pack_index(*pack, v, layout.index64);
    };
    index(out_size);
    index(reduce_size);
    index(group_value);
    index(splits);
    pack->begin(8);
    pack->field<std::uint64_t>(partials.address());
    pack->begin(8);
    pack->field<std::uint64_t>(valid.address());
    return pack;
  };

  LaunchConfig config;
  config.block[0] = static_cast<unsigned>(kBlock);
  config.grid[0] = static_cast<unsigned>(std::min(out_blocks, max_blocks));
  config.grid[1] = static_cast<unsigned>(splits);
  config.stream = options.stream;
  auto main_args = pack_arguments(group);
  fns.main.launch(config, main_args->pointers());
  if (splits > 1) {
    const std::int64_t finish_group = pow2_at_least(std::min<std::int64_t>(splits, kBlock));
    const std::int64_t finish_blocks = (out_size + (kBlock / finish_group) - 1) / (kBlock / finish_group);
    LaunchConfig finish = config;
    finish.grid[0] = static_cast<unsigned>(std::min(finish_blocks, max_blocks));
    finish.grid[1] = 1;
    auto finish_args = pack_arguments(finish_group);
    fns.finish.launch(finish, finish_args->pointers());
  }
  return outputs;
}

}  // namespace kernc
