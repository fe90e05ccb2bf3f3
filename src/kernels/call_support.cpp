#include "kernels/call_support.hpp"

#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsl/type_resolution.hpp"
#include "kernc/error.hpp"
#include "kernc/engine.hpp"

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

void write_call_arguments(ParamPack& pack, ListView<Arg> inputs, ListView<ArrayRef> outputs,
                          const std::vector<DType>& input_types) {
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].is_array()) {
      const std::uint64_t address = inputs[k].array().data;
      std::memcpy(pack.parameter(k), &address, sizeof address);
    } else {
      inputs[k].scalar().convert_to(input_types[k], pack.parameter(k));
    }
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const std::uint64_t address = outputs[k].data;
    std::memcpy(pack.parameter(inputs.size() + k), &address, sizeof address);
  }
}

void pack_raw(ParamPack& pack, const ArrayRef& array, bool index64) {
  pack_view(pack, array.data, array.size(), array.shape, array.strides, -1, index64, array.c_contiguous());
}

}  // namespace kernc::detail
