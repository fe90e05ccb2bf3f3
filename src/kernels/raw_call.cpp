// Launching RawKernel and RawModule functions: loading per device and argument checks.

#include <algorithm>

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernels/call_support.hpp"
#include "kernels/raw_module_file.hpp"
#include "kernels/raw_state.hpp"

namespace kernc {

namespace detail {

namespace {

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

// Packs `args` for the entry's function, checking them against what is known of its
// parameters, and launches it.
void launch_checked(RawState& state, RawLaunchEntry& entry, const LaunchConfig& config, ListView<Arg> args) {
  const std::string& name = entry.function.name();
  const auto& declared = entry.declared;
  if (declared) check_declared(name, *declared, args);
  // A declaration read from the source says every parameter's kind; the driver's sizes are
  // needed without one, or for a scalar of a C type kernc does not know.
  bool need_sizes = !declared;
  for (size_t k = 0; declared && k < args.size(); ++k) {
    need_sizes = need_sizes || (!args[k].is_array() && !(*declared)[k].dtype);
  }
  static const std::vector<std::size_t> kUnknown;
  const std::vector<std::size_t>& sizes = need_sizes ? sizes_for(state, entry) : kUnknown;
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
  entry.function.launch(config, pack.pointers());
}

// The loaded module for the call's (engine, device); `make_program` runs only on a miss
// (a raw program is a copy of the source: not made per launch).
template <class MakeProgram>
Engine::Loaded load_raw(RawState& state, MakeProgram&& make_program, const CallOptions& options) {
  Engine& engine = engine_of(options);
  const auto key = std::make_pair(engine.id(), options.device);
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    auto found = state.loaded.find(key);
    if (found != state.loaded.end()) return found->second;
  }
  Device device = engine.device(options.device);
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
  auto key = std::make_tuple(engine.id(), options.device, function);
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    auto found = state.launches.find(key);
    if (found != state.launches.end()) return found->second;
  }
  RawLaunchEntry entry;
  Engine::Loaded loaded = load_raw(state, make_program, options);
  entry.function = loaded.module.function(lower(loaded, function));
  std::lock_guard<std::mutex> lock(state.mutex);
  if (is_expression) {
    // "axpby<float>": its template's declaration with the instance's arguments substituted.
    // Where that cannot be read, the template still gives the count of parameters.
    entry.declared = declared_locked(state, source, function, true);
    const auto& templated = entry.declared ? entry.declared : declared_locked(state, source, template_name(function));
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
  bool is_expression = std::find(name_expressions_.begin(), name_expressions_.end(), function) != name_expressions_.end();
  // A template instance's parameters are its template's with the instance's arguments
  // substituted (`T p` of `k<float *>` is a pointer), not the placeholders' text.
  return detail::declared_once(*state_, code_, function, is_expression);
}

void RawModule::check_arguments(const std::string& function, ListView<Arg> args) const {
  if (auto declared = parameters(function)) detail::check_declared(function, *declared, args);
}

namespace detail {
namespace {
RawLaunchEntry& kernel_entry(RawState& state, const RawKernel& kernel, const std::string& code,
                             const std::string& name, const CallOptions& options) {
  return launch_entry(
      state, [&] { return kernel.program(); }, [](const Engine::Loaded&, const std::string& n) { return n; }, code,
      name, false, options);
}
}  // namespace
}  // namespace detail

Function RawKernel::function(const CallOptions& options) const {
  return detail::kernel_entry(*state_, *this, code_, name_, options).function;
}

void RawKernel::operator()(const LaunchConfig& config, ListView<Arg> args, const CallOptions& options) const {
  auto& entry = detail::kernel_entry(*state_, *this, code_, name_, options);
  LaunchConfig c = config;
  if (!c.stream.handle) c.stream = options.stream;
  detail::launch_checked(*state_, entry, c, args);
}

Function RawModule::get_function(const std::string& name, const CallOptions& options) const {
  auto loaded = detail::load_raw(*state_, [this] { return program(); }, options);
  return loaded.module.function(detail::lowered_name(loaded, name));
}

std::pair<std::uint64_t, std::size_t> RawModule::get_global(const std::string& name, const CallOptions& options) const {
  auto loaded = detail::load_raw(*state_, [this] { return program(); }, options);
  return loaded.module.global(detail::lowered_name(loaded, name));
}

void RawModule::launch(const std::string& function, const LaunchConfig& config, ListView<Arg> args,
                       const CallOptions& options) const {
  // Template instances have no readable declaration; their parameter sizes still are checked.
  bool is_expression = std::find(name_expressions_.begin(), name_expressions_.end(), function) != name_expressions_.end();
  auto& entry = detail::launch_entry(
      *state_, [this] { return program(); }, detail::lowered_name, code_, function, is_expression, options);
  LaunchConfig c = config;
  if (!c.stream.handle) c.stream = options.stream;
  detail::launch_checked(*state_, entry, c, args);
}

}  // namespace kernc
