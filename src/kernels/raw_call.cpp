// RawKernel and RawModule calls: the plan (argument checks against the declaration, the
// caller's LaunchConfig), then load per device and launch. The call path itself is
// src/kernels/call.cpp.

#include <algorithm>
#include <cstring>
#include <functional>

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernels/call_plan.hpp"
#include "kernels/call_support.hpp"
#include "kernels/raw_module_file.hpp"
#include "kernels/raw_state.hpp"
#include "kernc/pipeline.hpp"

namespace kernc {

namespace detail {

namespace {

// Whether `function` is one of a module's name expressions (then its lowered name is
// looked up, and its declaration is its template's with the instance's arguments).
bool is_name_expression(const std::vector<std::string>& expressions, const std::string& function) {
  return std::find(expressions.begin(), expressions.end(), function) != expressions.end();
}


// The driver's parameter sizes of the entry's function, asked on first need only.
// Without a count, cuFuncGetParamInfo is asked index by index until it fails (CUDA 13 has
// no cuFuncGetParamCount), and that failure is an API error under compute-sanitizer: so
// sizes are asked only where the declaration does not say enough, never twice, and for
// exactly `count` parameters when the source declares how many (issue 15, item 5).
const std::vector<std::size_t>& sizes_for(RawState& state, RawLaunchEntry& entry) {
  std::lock_guard<std::mutex> lock(state.mutex);
  if (!entry.sizes) entry.sizes = entry.function.parameter_sizes(entry.count);
  return *entry.sizes;  // never changed once set: usable after the lock is released
}

// The checks of `args` that the declaration alone allows (no driver): the count, and an
// array for each pointer parameter, a scalar for each other one.
void check_declared(const std::string& name, const std::vector<DeclaredParam>& declared, ListView<Arg> args) {
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
    if (!args[k].is_array() && param.dtype) check_scalar_range("kernel " + name, param.text, args[k].scalar(), *param.dtype);
  }
}

// The loaded module for the call's (engine, device); `make_program` runs only on a miss
// (a raw program is a copy of the source: not made per launch).
template <class MakeProgram>
Engine::Loaded load_raw(RawState& state, MakeProgram&& make_program, const CallOptions& options) {
  Engine& engine = engine_of(options);
  const auto key = std::make_tuple(engine.id(), device_slot(options));
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    auto found = state.loaded.find(key);
    if (found != state.loaded.end()) return found->second;
  }
  Device device = engine.device(options.device, options.backend);
  // A module of binary files loads its own (no program, no cache): raw_module_file.hpp.
  Engine::Loaded loaded = state.files ? load_module_files(*state.files, device) : engine.load(make_program(), device);
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.loaded.emplace(key, std::move(loaded)).first->second;
}

// The declared parameters of `name`, parsed once per kernel object (the caller holds the
// lock); of a name expression's template instance when `is_expression`.
const std::optional<std::vector<DeclaredParam>>& declared_locked(RawState& state, const std::string& source,
                                                                 const std::string& name, bool is_expression = false) {
  auto found = state.declared.find(name);
  if (found == state.declared.end()) {
    const bool instance = is_expression && name.find('<') != std::string::npos;
    found = state.declared.emplace(name, instance ? instance_params(source, name) : declared_params(source, name)).first;
  }
  return found->second;
}

std::optional<std::vector<DeclaredParam>> declared_once(RawState& state, const std::string& source, const std::string& name,
                                                        bool is_expression = false) {
  std::lock_guard<std::mutex> lock(state.mutex);
  return declared_locked(state, source, name, is_expression);
}

// The launch entry of `function` (as the caller names it) on the call's engine and device,
// made on the first launch: the module loaded, the function looked up, its declaration read.
// `is_expression`: a RawModule name expression, whose template gives only the count.
template <class MakeProgram, class Lower>
RawLaunchEntry& launch_entry(RawState& state, MakeProgram&& make_program, Lower&& lower, const std::string& source,
                             const std::string& function, bool is_expression, const CallOptions& options) {
  Engine& engine = engine_of(options);
  auto key = std::make_tuple(engine.id(), device_slot(options), function);
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    auto found = state.launches.find(key);
    if (found != state.launches.end()) return found->second;
  }
  RawLaunchEntry entry;
  entry.engine = engine.id();
  Engine::Loaded loaded = load_raw(state, make_program, options);
  entry.function = loaded.module.function(lower(loaded, function));
  std::lock_guard<std::mutex> lock(state.mutex);
  if (is_expression) {
    // "axpby<float>": its template's declaration with the instance's arguments substituted.
    // Where that cannot be read, the template still gives the count of parameters.
    entry.declared = declared_locked(state, source, function, true);
    // The template's name in a variable: g++ 13 took a reference returned by a call given a
    // temporary argument for one into that temporary (-Wdangling-reference).
    const std::string template_of = template_name(function);
    const auto& templated = entry.declared ? entry.declared : declared_locked(state, source, template_of);
    if (templated) entry.count = templated->size();
  } else {
    entry.declared = declared_locked(state, source, function);
    if (entry.declared) entry.count = entry.declared->size();
  }
  return state.launches.emplace(std::move(key), std::move(entry)).first->second;  // another thread's if it was first
}

// The lowered name of `name` in a loaded RawModule (a name expression's mangled name), or `name`.
const std::string& lowered_name(const Engine::Loaded& loaded, const std::string& name) {
  auto lowered = loaded.program->lowered_names.find(name);
  return lowered != loaded.program->lowered_names.end() ? lowered->second : name;
}

}  // namespace
}  // namespace detail

std::optional<std::vector<RawParameter>> RawKernel::parameters() const {
  return detail::declared_once(*state_, code_, name_);
}

void RawKernel::check_arguments(ListView<Arg> args) const {
  if (auto declared = parameters()) detail::check_declared(name_, *declared, args);
}

std::optional<std::vector<RawParameter>> RawModule::parameters(const std::string& function) const {
  bool is_expression = detail::is_name_expression(name_expressions_, function);
  // A template instance's parameters are its template's with the instance's arguments
  // substituted (`T p` of `k<float *>` is a pointer), not the placeholders' text.
  return detail::declared_once(*state_, code_, function, is_expression);
}

void RawModule::check_arguments(const std::string& function, ListView<Arg> args) const {
  if (auto declared = parameters(function)) detail::check_declared(function, *declared, args);
}

namespace detail {
namespace {

const std::string& same_name(const Engine::Loaded&, const std::string& name) { return name; }

class RawCall final : public CallPlan {
 public:
  RawState* state = nullptr;  // kept alive by the kernel, or by keep_alive (Call::plan)
  std::string source;
  bool module = false;                    // names are lowered through the module's name expressions
  bool is_expression = false;
  std::optional<std::vector<DeclaredParam>> declared;
  bool need_sizes = false;  // the driver's parameter sizes are needed (see sizes_for)
  /// The launch entry, found on the first launch (std::map nodes do not move).
  Prepared<RawLaunchEntry> prepared;

  void launch_matched(ListView<Arg> args, ListView<ArrayRef> outputs, StreamRef stream,
                      const Device& device) const override;
};

// The plan of a raw kernel or module function: the checks the declaration allows (count,
// an array for each pointer, a scalar for each other one, scalar ranges), the caller's
// LaunchConfig, and whether the driver's parameter sizes will be needed.
std::shared_ptr<RawCall> make_raw_call(RawState& state, const std::string& source, const std::string& function,
                                       bool module, bool is_expression, ListView<Arg> args, const CallOptions& options) {
  check_options(KernelKind::raw, module, function, options);
  auto call = std::make_shared<RawCall>();
  init_plan(*call, KernelKind::raw, function, options);
  call->state = &state;
  call->source = source;
  call->module = module;
  call->is_expression = is_expression;
  call->raw = true;
  call->declared = declared_once(state, source, function, is_expression);
  if (call->declared) check_declared(function, *call->declared, args);
  call->types = call_types(args, {}, {});
  call->inputs = describe(args);
  call->need_sizes = !call->declared;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const DeclaredParam* param = call->declared ? &(*call->declared)[k] : nullptr;
    call->input_names.push_back(param ? param->name : std::string());
    call->input_texts.push_back(param ? param->text : std::string());
    const bool typed = param && !args[k].is_array() && param->dtype;
    call->scalar_types.push_back(typed ? param->dtype : std::nullopt);
    call->need_sizes = call->need_sizes || (!args[k].is_array() && !typed);
  }
  call->launch = *options.launch;
  call->launch.stream = StreamRef{};
  call->multiprocessors = 0;  // the geometry is the caller's: any GPU
  return call;
}

void RawCall::launch_matched(ListView<Arg> args, ListView<ArrayRef>, StreamRef stream, const Device&) const {
  RawLaunchEntry* entry = prepared.get(engine->id());
  if (!entry) {
    entry = module ? &launch_entry(*state, state->make_program, lowered_name, source, kernel, is_expression, options)
                   : &launch_entry(*state, state->make_program, same_name, source, kernel, false, options);
    prepared.set(entry);
  }
  static const std::vector<std::size_t> kUnknown;
  const std::vector<std::size_t>& sizes = need_sizes ? sizes_for(*state, *entry) : kUnknown;
  if (!declared && !sizes.empty() && args.size() != sizes.size()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("kernel {} takes {} argument(s), {} given", kernel, sizes.size(), args.size()));
  }
  ParamPack pack;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const Arg& arg = args[k];
    if (arg.is_array()) {
      pack.begin(8);
      pack.field<std::uint64_t>(arg.array().data);
      continue;
    }
    if (scalar_types[k]) {
      pack_scalar(pack, arg.scalar(), *scalar_types[k]);  // converted to the declared type
      continue;
    }
    const std::size_t own = itemsize(arg.scalar().dtype);
    if (k < sizes.size() && sizes[k] != own) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("kernel {}: parameter {} is {} bytes but the {} scalar given is {}; pass a scalar of the "
                              "parameter's own type",
                              kernel, k, sizes[k], to_string(arg.scalar().dtype), own));
    }
    pack_scalar(pack, arg.scalar(), arg.scalar().dtype);
  }
  LaunchConfig config = launch;
  config.stream = stream;
  entry->function.launch(config, pack.pointers());
}

// The options of a raw call: its LaunchConfig and function; the LaunchConfig's stream
// when it names one, else the options'.: the LaunchConfig's when it names one, else the options'.
CallOptions with_launch(const CallOptions& options, const LaunchConfig& config, const std::string& function) {
  CallOptions out = options;
  out.launch = config;
  if (!function.empty()) out.function = function;  // a RawKernel's options name none (else refused)
  if (config.stream.handle) out.stream = config.stream;
  return out;
}

}  // namespace
}  // namespace detail

Function RawKernel::function(const CallOptions& options) const {
  return detail::launch_entry(
             *state_, [this] { return kernc::program(*this); }, detail::same_name, code_, name_, false, options)
      .function;
}

Call RawKernel::plan(const LaunchConfig& config, ListView<Arg> args, const CallOptions& options) const {
  auto call = detail::make_raw_call(*state_, code_, name_, false, false, args, detail::with_launch(options, config, {}));
  call->keep_alive = state_;
  return Call(std::move(call));
}

void RawKernel::operator()(const LaunchConfig& config, ListView<Arg> args, const CallOptions& options) const {
  detail::call_raw_through_memo(state_->recent, args, options, config, options.function, [&] {
    return detail::make_raw_call(*state_, code_, name_, false, false, args, detail::with_launch(options, config, {}));
  });
}

Function RawModule::get_function(const std::string& name, const CallOptions& options) const {
  auto loaded = detail::load_raw(*state_, [this] { return kernc::program(*this); }, options);
  return loaded.module.function(detail::lowered_name(loaded, name));
}

std::pair<std::uint64_t, std::size_t> RawModule::get_global(const std::string& name, const CallOptions& options) const {
  auto loaded = detail::load_raw(*state_, [this] { return kernc::program(*this); }, options);
  return loaded.module.global(detail::lowered_name(loaded, name));
}

Call RawModule::plan(const std::string& function, const LaunchConfig& config, ListView<Arg> args,
                     const CallOptions& options) const {
  auto call = detail::make_raw_call(*state_, code_, function, true, detail::is_name_expression(name_expressions_, function),
                                    args, detail::with_launch(options, config, function));
  call->keep_alive = state_;
  return Call(std::move(call));
}

void RawModule::launch(const std::string& function, const LaunchConfig& config, ListView<Arg> args,
                       const CallOptions& options) const {
  detail::call_raw_through_memo(state_->recent, args, options, config, function, [&] {
    return detail::make_raw_call(*state_, code_, function, true, detail::is_name_expression(name_expressions_, function),
                                 args, detail::with_launch(options, config, function));
  });
}

}  // namespace kernc
