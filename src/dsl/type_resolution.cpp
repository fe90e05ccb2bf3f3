#include "dsl/type_resolution.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernc/error.hpp"

namespace kernc::dsl {

namespace {
Error type_error(std::string message) { return Error(ErrorCode::invalid_argument, std::move(message)); }

// Binds `param`'s placeholder to `dtype`, or checks it agrees with an earlier binding.
void bind(std::map<std::string, DType>& bound, std::map<std::string, std::string>& bound_by, const Param& param,
          DType dtype, std::string_view kernel_name) {
  auto [it, inserted] = bound.emplace(param.placeholder, dtype);
  if (inserted) {
    bound_by[param.placeholder] = param.name;
  } else if (it->second != dtype) {
    throw type_error(fmt::format("{}: type placeholder {} is {} (from {}) but {} is an array of {}", kernel_name,
                          param.placeholder, to_string(it->second), bound_by[param.placeholder], param.name,
                          to_string(dtype)));
  }
}
}  // namespace

CallTypes resolved_call_types(const CallTypes& types, const ResolvedTypes& resolved) {
  CallTypes shown;
  shown.inputs = types.inputs;
  for (size_t k = 0; k < shown.inputs.size() && k < resolved.inputs.size(); ++k) {
    if (shown.inputs[k].scalar) shown.inputs[k].dtype = resolved.inputs[k];
  }
  for (DType d : resolved.outputs) shown.outputs.emplace_back(d);
  return shown;
}

ResolvedTypes resolve_types(const Signature& signature, const CallTypes& types, std::string_view kernel_name) {
  if (types.inputs.size() != signature.in.size()) {
    throw type_error(fmt::format("{} takes {} input(s), got {}", kernel_name, signature.in.size(), types.inputs.size()));
  }
  if (!types.outputs.empty() && types.outputs.size() != signature.out.size()) {
    throw type_error(fmt::format("{} has {} output(s); pass all of them or none, got {}", kernel_name, signature.out.size(),
                          types.outputs.size()));
  }
  std::map<std::string, DType> bound;
  std::map<std::string, std::string> bound_by;
  auto placeholders = signature.placeholders();
  for (const auto& [letter, dtype] : types.bindings) {
    if (std::find(placeholders.begin(), placeholders.end(), letter) == placeholders.end()) {
      throw type_error(fmt::format("{}: cannot bind {}: the kernel has no type placeholder {}", kernel_name, letter, letter));
    }
    bound[letter] = dtype;
    bound_by[letter] = "an explicit binding";
  }

  for (size_t k = 0; k < signature.out.size() && k < types.outputs.size(); ++k) {
    const auto& param = signature.out[k];
    if (!types.outputs[k]) continue;
    DType dtype = *types.outputs[k];
    if (param.dtype && *param.dtype != dtype) {
      throw type_error(fmt::format("{}: output {} is {} but an array of {} was passed", kernel_name, param.name,
                            to_string(*param.dtype), to_string(dtype)));
    }
    if (!param.placeholder.empty()) bind(bound, bound_by, param, dtype, kernel_name);
  }
  for (size_t k = 0; k < signature.in.size(); ++k) {
    const auto& param = signature.in[k];
    const ArgType& arg = types.inputs[k];
    if (arg.scalar) {
      if (param.raw) {
        throw type_error(fmt::format("{}: {} is a raw parameter and needs an array, not a scalar", kernel_name, param.name));
      }
      continue;  // scalars are converted, never bind
    }
    if (param.dtype && *param.dtype != arg.dtype) {
      throw type_error(fmt::format("{}: input {} is {} but an array of {} was passed (kernc does not convert arrays; "
                            "cast it first)",
                            kernel_name, param.name, to_string(*param.dtype), to_string(arg.dtype)));
    }
    if (!param.placeholder.empty()) bind(bound, bound_by, param, arg.dtype, kernel_name);
  }

  ResolvedTypes resolved;
  auto dtype_of = [&](const Param& param) -> DType {
    if (param.dtype) return *param.dtype;
    auto found = bound.find(param.placeholder);
    if (found != bound.end()) return found->second;
    std::string scalars;
    for (const auto& p : signature.in) {
      if (p.placeholder == param.placeholder) scalars += (scalars.empty() ? "" : ", ") + p.name;
    }
    throw type_error(fmt::format("{}: the type placeholder {} cannot be decided: no array argument has it{}. Pass an "
                          "output array, or bind {} explicitly (e.g. {}=float32)",
                          kernel_name, param.placeholder,
                          scalars.empty() ? "" : fmt::format(" ({} received only scalars, which never bind a type)",
                                                             scalars),
                          param.placeholder, param.placeholder));
  };
  for (const auto& param : signature.in) resolved.inputs.push_back(dtype_of(param));
  for (const auto& param : signature.out) resolved.outputs.push_back(dtype_of(param));
  resolved.placeholders = bound;  // complete: every placeholder belongs to a parameter decided above
  return resolved;
}

}  // namespace kernc::dsl
