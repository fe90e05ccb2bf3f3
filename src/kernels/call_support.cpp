#include "kernels/call_support.hpp"

#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsl/type_resolution.hpp"
#include "kernc/error.hpp"
#include "kernels/plan_data.hpp"

namespace kernc::detail {

CallTypes call_types(const std::vector<Arg>& inputs, const std::vector<ArrayRef>& outputs,
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

std::vector<ArgDescription> describe(const std::vector<Arg>& args) {
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

void check_matches(const std::string& kernel, const char* role, const std::vector<std::string>& names,
                   const std::vector<ArgDescription>& planned, const std::vector<Arg>& given) {
  if (planned.size() != given.size()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: the plan has {} {}(s), {} given", kernel, planned.size(), role, given.size()));
  }
  for (size_t k = 0; k < given.size(); ++k) {
    const ArgDescription& want = planned[k];
    const Arg& got = given[k];
    const std::string& name = k < names.size() ? names[k] : std::string("?");
    auto describe_one = [](bool is_array, DType dtype, const std::vector<std::int64_t>& shape,
                           const std::vector<std::int64_t>& strides) {
      return is_array ? fmt::format("a {} array of shape {} and strides {}", to_string(dtype), shape, strides)
                      : fmt::format("a {} scalar", to_string(dtype));
    };
    bool same = want.is_array == got.is_array();
    if (same && want.is_array) {
      same = want.array.dtype == got.array().dtype && want.array.shape == got.array().shape &&
             want.array.strides == got.array().strides;
    } else if (same) {
      same = want.scalar_dtype == got.scalar().dtype;
    }
    if (!same) {
      static const std::vector<std::int64_t> kNone;
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: {} {} is {}, but the plan was made for {}; make a plan for these arguments", kernel,
                              role, name,
                              got.is_array() ? describe_one(true, got.array().dtype, got.array().shape, got.array().strides)
                                             : describe_one(false, got.scalar().dtype, kNone, kNone),
                              describe_one(want.is_array, want.is_array ? want.array.dtype : want.scalar_dtype,
                                           want.array.shape, want.array.strides)));
    }
  }
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
