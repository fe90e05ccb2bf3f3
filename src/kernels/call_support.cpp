#include "kernels/call_support.hpp"

#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsl/type_resolution.hpp"
#include "kernc/error.hpp"
#include "kernc/engine.hpp"
#include "kernels/plan_data.hpp"

namespace kernc::detail {

CallTypes call_types(ListView<Arg> inputs, ListView<ArrayRef> outputs,
                     const std::map<std::string, DType>& bindings) {
  CallTypes types;
  for (const auto& arg : inputs) {
    types.inputs.push_back(arg.is_array() ? ArgType::array(arg.array().dtype) : ArgType::scalar_of(arg.scalar().dtype));
  }
  for (const auto& out : outputs) types.outputs.emplace_back(out.dtype);
  types.bindings = bindings;
  return types;
}

std::string types_key(const CallTypes& types) {
  std::string key;
  key.reserve(2 * (types.inputs.size() + types.outputs.size()) + 8);
  for (const auto& arg : types.inputs) {
    key += static_cast<char>('a' + static_cast<int>(arg.dtype));
    key += arg.scalar ? 's' : 'a';
  }
  key += '|';
  for (const auto& out : types.outputs) key += out ? static_cast<char>('a' + static_cast<int>(*out)) : '_';
  for (const auto& [letter, dtype] : types.bindings) key += fmt::format("|{}={}", letter, static_cast<int>(dtype));
  return key;
}

std::vector<ArgDescription> describe(ListView<Arg> args) {
  std::vector<ArgDescription> out;
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

namespace {

// Throws unless argument `k` (an array view or a scalar's dtype) is what `want` describes.
void check_one(const std::string& kernel, const char* role, const std::vector<Parameter>& params, std::size_t k,
               const ArgDescription& want, const ArrayRef* array, DType scalar_dtype) {
  bool same = want.is_array == (array != nullptr);
  if (same && array) {
    same = want.array.dtype == array->dtype && want.array.shape == array->shape && want.array.strides == array->strides;
  } else if (same) {
    same = want.scalar_dtype == scalar_dtype;
  }
  if (same) return;
  auto describe_one = [](bool is_array, DType dtype, const std::vector<std::int64_t>& shape,
                         const std::vector<std::int64_t>& strides) {
    return is_array ? fmt::format("a {} array of shape {} and strides {}", to_string(dtype), shape, strides)
                    : fmt::format("a {} scalar", to_string(dtype));
  };
  static const std::vector<std::int64_t> kNone;
  throw Error(ErrorCode::invalid_argument,
              fmt::format("{}: {} {} is {}, but the plan was made for {}; make a plan for these arguments", kernel, role,
                          k < params.size() ? params[k].name : std::string("?"),
                          array ? describe_one(true, array->dtype, array->shape, array->strides)
                                : describe_one(false, scalar_dtype, kNone, kNone),
                          describe_one(want.is_array, want.is_array ? want.array.dtype : want.scalar_dtype,
                                       want.array.shape, want.array.strides)));
}

}  // namespace

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

}  // namespace

bool matches(const PlanData& plan, ListView<Arg> inputs, ListView<ArrayRef> outputs) noexcept {
  if (inputs.size() != plan.inputs.size() || outputs.size() != plan.outputs_given.size()) return false;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const ArgDescription& want = plan.inputs[k];
    if (want.is_array != inputs[k].is_array()) return false;
    if (want.is_array ? !same_layout(want.array, inputs[k].array()) : want.scalar_dtype != inputs[k].scalar().dtype) {
      return false;
    }
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (!same_layout(plan.outputs_given[k].array, outputs[k])) return false;
  }
  return true;
}

void check_launch_arguments(const std::string& kernel, const HandleTable& own, const std::vector<Parameter>& in_params,
                            const std::vector<Parameter>& out_params, const PlanData& plan,
                            ListView<Arg> inputs, ListView<ArrayRef> outputs) {
  if (plan.table != &own) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: the plan was made by another kernel", kernel));
  }
  if (plan.inputs.size() != inputs.size()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: the plan has {} input(s), {} given", kernel, plan.inputs.size(), inputs.size()));
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    check_one(kernel, "input", in_params, k, plan.inputs[k], inputs[k].is_array() ? &inputs[k].array() : nullptr,
              inputs[k].is_array() ? DType::float32 : inputs[k].scalar().dtype);
  }
  if (plan.outputs_given.empty() != outputs.empty()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: the plan {} the outputs; {}", kernel, plan.outputs_given.empty() ? "allocates" : "was given",
                            plan.outputs_given.empty() ? "pass none" : "pass them"));
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    check_one(kernel, "output", out_params, k, plan.outputs_given[k], &outputs[k], DType::float32);
  }
}

Device device_for(const std::string& kernel, Engine& engine, int ordinal, const PlanData& plan) {
  Device device = engine.device(ordinal);
  if (device.multiprocessors() != plan.multiprocessors) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: the plan is for a GPU with {} multiprocessors; GPU {} has {} (plan with "
                            "PlanOptions::multiprocessors = Device::multiprocessors())",
                            kernel, plan.multiprocessors, device.ordinal(), device.multiprocessors()));
  }
  return device;
}

std::vector<DeviceArray> outputs_for(const Device& device, const PlanData& plan, ListView<ArrayRef> outputs) {
  std::vector<DeviceArray> out;
  out.reserve(plan.outputs.size());
  for (std::size_t k = 0; k < plan.outputs.size(); ++k) {
    out.push_back(outputs.empty() ? DeviceArray::empty(device, plan.outputs[k].dtype, plan.outputs[k].shape)
                                  : DeviceArray::wrap(device, outputs[k]));
  }
  return out;
}

Error load_error(const Error& error, const std::string& kernel, const CallTypes& types, const ResolvedTypes& resolved,
                 const Layout& layout) {
  if (error.code() != ErrorCode::not_precompiled) return map_error_to_snippets(error);
  const CallTypes shown = dsl::resolved_call_types(types, resolved);
  return Error(ErrorCode::not_precompiled,
               fmt::format("kernel {}, signature \"{}\", layout {}: {}. To add it, list that signature under the "
                           "kernel's \"signatures\" in its spec file and run `kernc precompile SPEC.json --target "
                           "ARCH` where the cache is built",
                           kernel, format_call_signature(shown), layout.str(), error.what()));
}

void throw_scalar_out_of_range(const std::string& kernel, const std::string& parameter, const Scalar& scalar,
                               DType dtype) {
  if (!is_integer(scalar.dtype) && scalar.dtype != DType::bool_) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: a NaN cannot be converted to {} parameter \"{}\" (CuPy refuses it as well)", kernel,
                            to_string(dtype), parameter));
  }
  const std::string value = is_unsigned(scalar.dtype) || scalar.dtype == DType::bool_
                                ? std::to_string(scalar.bits)
                                : std::to_string(static_cast<std::int64_t>(scalar.bits));
  throw Error(ErrorCode::invalid_argument,
              fmt::format("{}: the integer {} is out of bounds for {} parameter \"{}\" (as in CuPy 14 and NumPy 2, "
                          "an integer scalar is never wrapped; convert it to the parameter's type first if a "
                          "wrap-around is meant)",
                          kernel, value, to_string(dtype), parameter));
}

void pack_scalar(ParamPack& pack, const Scalar& scalar, DType dtype) {
  unsigned char bytes[16];
  scalar.convert_to(dtype, bytes);
  std::size_t size = itemsize(dtype);
  std::size_t align = is_complex(dtype) ? size / 2 : size;
  pack.begin(align);
  pack.bytes(bytes, size, align);
}

void pack_raw(ParamPack& pack, const ArrayRef& array, bool index64) {
  pack_view(pack, array.data, array.size(), array.shape, array.strides, -1, index64, array.c_contiguous());
}

std::int64_t raw_extent(const ArrayRef& array) {
  std::int64_t span = 0;
  for (size_t d = 0; d < array.shape.size(); ++d) span += std::max<std::int64_t>(array.shape[d] - 1, 0) * std::llabs(array.strides[d]);
  return std::max(array.size(), span + 16);
}

bool overlaps(const ArrayRef& a, const ArrayRef& b) {
  auto [a_low, a_high] = a.byte_range();
  auto [b_low, b_high] = b.byte_range();
  return a_low < b_high && b_low < a_high;
}

bool same_view(const ArrayRef& a, const ArrayRef& b) {
  return a.data == b.data && a.dtype == b.dtype && a.shape == b.shape && a.strides == b.strides;
}

}  // namespace kernc::detail
