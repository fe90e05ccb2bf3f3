// Launching RawKernel and RawModule functions: loading per device and argument checks.

#include <algorithm>

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernels/call_support.hpp"
#include "kernels/raw_state.hpp"

namespace kernc {

namespace detail {

namespace {

// The driver's parameter sizes of `function`, asked once per kernel object and name.
// Without a count, cuFuncGetParamInfo is asked index by index until it fails (CUDA 13 has
// no cuFuncGetParamCount), and that failure is an API error under compute-sanitizer: so
// sizes are asked only where the declaration does not say enough, never twice, and for
// exactly `count` parameters when the source declares how many (issue 15, item 5).
const std::vector<std::size_t>& sizes_once(RawState& state, const Function& function, std::optional<std::size_t> count) {
  std::lock_guard<std::mutex> lock(state.mutex);
  auto found = state.parameter_sizes.find(function.name());
  if (found == state.parameter_sizes.end()) {
    found = state.parameter_sizes.emplace(function.name(), function.parameter_sizes(count)).first;
  }
  return found->second;
}

// The checks of `args` that the declaration alone allows (no driver): the count, and an
// array for each pointer parameter, a scalar for each other one.
void check_declared(const std::string& name, const std::vector<DeclaredParam>& declared, const std::vector<Arg>& args) {
  if (args.size() != declared.size()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("kernel {} takes {} argument(s), {} given", name, declared.size(), args.size()));
  }
  for (size_t k = 0; k < args.size(); ++k) {
    const DeclaredParam& param = declared[k];
    if (args[k].is_array() && !param.pointer) {
      throw Error(ErrorCode::invalid_argument, fmt::format("kernel {}: argument {} is an array but parameter \"{}\" is "
                                                           "not a pointer",
                                                           name, k, param.text));
    }
    if (!args[k].is_array() && param.pointer) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("kernel {}: argument {} is a scalar but parameter \"{}\" is a pointer", name, k, param.text));
    }
  }
}

// Packs `args` for `function`, checking them against what is known of its parameters.
void launch_checked(RawState& state, const Function& function,
                    const std::optional<std::vector<DeclaredParam>>& declared, std::optional<std::size_t> count,
                    const LaunchConfig& config, const std::vector<Arg>& args) {
  const std::string& name = function.name();
  if (declared) check_declared(name, *declared, args);
  // A declaration read from the source says every parameter's kind; the driver's sizes are
  // needed without one, or for a scalar of a C type kernc does not know.
  bool need_sizes = !declared;
  for (size_t k = 0; declared && k < args.size(); ++k) {
    need_sizes = need_sizes || (!args[k].is_array() && !(*declared)[k].dtype);
  }
  static const std::vector<std::size_t> kUnknown;
  const std::vector<std::size_t>& sizes = need_sizes ? sizes_once(state, function, count) : kUnknown;
  if (!declared && !sizes.empty() && args.size() != sizes.size()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("kernel {} takes {} argument(s), {} given", name, sizes.size(), args.size()));
  }
  ParamPack pack;
  for (size_t k = 0; k < args.size(); ++k) {
    const Arg& arg = args[k];
    const DeclaredParam* param = declared ? &(*declared)[k] : nullptr;
    if (arg.is_array()) {
      pack.begin(8);
      pack.field<std::uint64_t>(arg.array().data);
      continue;
    }
    if (param && param->dtype) {
      pack_scalar(pack, arg.scalar(), *param->dtype);  // converted to the declared type
      continue;
    }
    std::size_t own = itemsize(arg.scalar().dtype);
    if (k < sizes.size() && sizes[k] != own) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("kernel {}: parameter {} is {} bytes but the {} scalar given is {}; pass a scalar of the "
                              "parameter's own type",
                              name, k, sizes[k], to_string(arg.scalar().dtype), own));
    }
    pack_scalar(pack, arg.scalar(), arg.scalar().dtype);
  }
  function.launch(config, pack.pointers());
}

// The loaded module for the call's (engine, device); `make_program` runs only on a miss
// (a raw program is a copy of the source: not made per launch).
template <class MakeProgram>
Engine::Loaded load_raw(RawState& state, MakeProgram&& make_program, const CallOptions& options) {
  Engine& engine = engine_of(options);
  const auto key = std::make_pair(static_cast<const Engine*>(&engine), options.device);
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    auto found = state.loaded.find(key);
    if (found != state.loaded.end()) return found->second;
  }
  Device device = engine.device(options.device);
  Engine::Loaded loaded = engine.load(make_program(), device);
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.loaded.emplace(key, std::move(loaded)).first->second;
}

// The declared parameters of `name`, parsed once per kernel object.
std::optional<std::vector<DeclaredParam>> declared_once(RawState& state, const std::string& source, const std::string& name) {
  std::lock_guard<std::mutex> lock(state.mutex);
  auto found = state.declared.find(name);
  if (found == state.declared.end()) found = state.declared.emplace(name, declared_params(source, name)).first;
  return found->second;
}

}  // namespace
}  // namespace detail

std::optional<std::vector<RawParameter>> RawKernel::parameters() const {
  return detail::declared_once(*state_, code_, name_);
}

void RawKernel::check_arguments(const std::vector<Arg>& args) const {
  if (auto declared = parameters()) detail::check_declared(name_, *declared, args);
}

std::optional<std::vector<RawParameter>> RawModule::parameters(const std::string& function) const {
  bool is_expression = std::find(name_expressions_.begin(), name_expressions_.end(), function) != name_expressions_.end();
  auto declared = detail::declared_once(*state_, code_, is_expression ? detail::template_name(function) : function);
  if (declared && is_expression) {
    for (auto& param : *declared) param.dtype.reset();  // placeholder types: not known from the template
  }
  return declared;
}

void RawModule::check_arguments(const std::string& function, const std::vector<Arg>& args) const {
  if (auto declared = parameters(function)) detail::check_declared(function, *declared, args);
}

Function RawKernel::function(const CallOptions& options) const {
  return detail::load_raw(*state_, [this] { return program(); }, options).module.function(name_);
}

void RawKernel::operator()(const LaunchConfig& config, const std::vector<Arg>& args, const CallOptions& options) const {
  Function f = function(options);
  LaunchConfig c = config;
  if (!c.stream.handle) c.stream = options.stream;
  auto declared = detail::declared_once(*state_, code_, name_);
  detail::launch_checked(*state_, f, declared, declared ? std::optional<std::size_t>(declared->size()) : std::nullopt, c,
                         args);
}

Function RawModule::get_function(const std::string& name, const CallOptions& options) const {
  auto loaded = detail::load_raw(*state_, [this] { return program(); }, options);
  auto lowered = loaded.program->lowered_names.find(name);
  return loaded.module.function(lowered != loaded.program->lowered_names.end() ? lowered->second : name);
}

std::pair<std::uint64_t, std::size_t> RawModule::get_global(const std::string& name, const CallOptions& options) const {
  auto loaded = detail::load_raw(*state_, [this] { return program(); }, options);
  auto lowered = loaded.program->lowered_names.find(name);
  return loaded.module.global(lowered != loaded.program->lowered_names.end() ? lowered->second : name);
}

void RawModule::launch(const std::string& function, const LaunchConfig& config, const std::vector<Arg>& args,
                       const CallOptions& options) const {
  Function f = get_function(function, options);
  LaunchConfig c = config;
  if (!c.stream.handle) c.stream = options.stream;
  // Template instances have no readable declaration; their parameter sizes still are checked.
  bool is_expression = std::find(name_expressions_.begin(), name_expressions_.end(), function) != name_expressions_.end();
  if (!is_expression) {
    auto declared = detail::declared_once(*state_, code_, function);
    detail::launch_checked(*state_, f, declared, declared ? std::optional<std::size_t>(declared->size()) : std::nullopt,
                           c, args);
    return;
  }
  // "axpby<float>" is declared as its template "axpby": the count of parameters holds,
  // their (placeholder) types do not.
  auto templated = detail::declared_once(*state_, code_, detail::template_name(function));
  detail::launch_checked(*state_, f, std::nullopt,
                         templated ? std::optional<std::size_t>(templated->size()) : std::nullopt, c, args);
}

}  // namespace kernc
