// kernc run: the plan of one run from its command line. This file matches the command
// line's names and sources to parameters; the library plans the call itself
// (SpecKernel::plan), once, and execute() launches that plan.

#include <algorithm>
#include <functional>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "cli_context.hpp"
#include "kernc/call.hpp"
#include "kernc/pipeline.hpp"
#include "run_call.hpp"

namespace kernc::cli {

namespace {

constexpr unsigned kDefaultBlock = 256;     // raw kernels without --block


// The same error with `context` in front of its message (compile failures keep their log).
// A message that starts with `repeated` (the library's "saxpy: ") loses that start, which
// the context already says: a message names its kernel once.
Error with_context(const Error& error, const std::string& context, const std::string& repeated = "") {
  if (error.compile_failure()) return error;
  std::string message = error.what();
  if (!repeated.empty() && message.rfind(repeated, 0) == 0) message.erase(0, repeated.size());
  return Error(error.code(), fmt::format("{}: {}", context, message));
}

// Splits NAME=VALUE; `example` shows the expected form in the error.
std::pair<std::string, std::string> split_assignment(const std::string& text, const char* option, const char* example) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw usage(fmt::format("{} \"{}\": expected {}", option, text, example));
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::vector<unsigned> parse_dims(const std::string& text, const char* option) {
  std::vector<unsigned> dims;
  for (const auto& item : split_list(text)) {
    char* end = nullptr;
    unsigned long value = std::strtoul(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || item[0] == '-' || value == 0 || value > std::numeric_limits<unsigned>::max()) {
      throw usage(fmt::format("{} \"{}\": expected 1 to 3 positive integers joined by commas, e.g. 256 or 16,16", option,
                              text));
    }
    dims.push_back(static_cast<unsigned>(value));
  }
  if (dims.empty() || dims.size() > 3) {
    throw usage(fmt::format("{} \"{}\": expected 1 to 3 positive integers joined by commas", option, text));
  }
  return dims;
}

// --block of an elementwise kernel: one extent (CuPy's block_size=).
unsigned parse_block_size(const std::string& text) {
  auto dims = parse_dims(text, "--block");
  if (dims.size() != 1) {
    throw usage(fmt::format("--block \"{}\": an elementwise kernel's block is one extent (threads per block), e.g. 128",
                            text));
  }
  return dims[0];
}

// "1", "0,-1", or "()": no axis (CuPy's axis=(): each output is post_map(map(x)) of one
// element). Not "None", which is NumPy's every axis: leaving --axis out says that.
std::vector<int> parse_axes(const std::string& text) {
  std::string bare;
  for (char c : text) {
    if (c != ' ') bare += c;
  }
  if (bare == "()") return {};
  if (bare == "None" || bare == "none") {
    throw usage(fmt::format("--axis {}: NumPy's axis=None, every axis, is the default: leave --axis out; --axis '()' "
                            "reduces no axis",
                            text));
  }
  std::vector<int> axes;
  for (const auto& item : split_list(text)) {
    char* end = nullptr;
    long value = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || value < -64 || value > 64) {
      throw usage(fmt::format("--axis \"{}\": expected axes joined by commas, e.g. 1 or 0,-1, or '()' for none",
                              text));
    }
    axes.push_back(static_cast<int>(value));
  }
  if (axes.empty()) throw usage(fmt::format("--axis \"{}\" names no axis", text));
  return axes;
}

// A kernel's parameter lists, as the library parsed them.
struct Params {
  const std::vector<Parameter>& in;
  const std::vector<Parameter>& out;
};

std::string describe_params(const Params& sig) {
  std::string in, out;
  for (const auto& p : sig.in) in += (in.empty() ? "" : ", ") + p.text;
  for (const auto& p : sig.out) out += (out.empty() ? "" : ", ") + p.text;
  return in + " -> " + out;
}

const SpecKernel& find_kernel(const Spec& spec, const std::string& name) {
  try {
    return spec.find(name);
  } catch (const Error& error) {
    throw usage(fmt::format("--kernel {}: {}", name, error.what()));  // a usage error, not a missing cache entry
  }
}

// How messages name an argument: "--in x=SOURCE", or "--arg SOURCE" (name empty).
std::string argument_label(const std::string& name, const std::string& text, const char* option) {
  return fmt::format("{} {}", option, name.empty() ? text : name + "=" + text);
}

SourceValue load_argument(const std::string& name, const std::string& text, const char* option) {
  try {
    return load_source(text);
  } catch (const Error& error) {
    throw with_context(error, argument_label(name, text, option));
  }
}

// A kernel argument from its SOURCE: read or made now, or, for "@NAME", left without a
// value until resolve_shared (see NOTE [ shared buffers ]).
Argument given_argument(const std::string& name, const std::string& label_name, const std::string& text,
                        const char* option) {
  try {
    if (parse_shared_source(text)) return Argument{name, SourceValue{}, ""};
  } catch (const Error& error) {
    throw with_context(error, argument_label(label_name, text, option));
  }
  return Argument{name, load_argument(label_name, text, option), ""};
}

// NOTE [ shared buffers ]
// A SOURCE "@NAME" has no data of its own: it is the device buffer of the call's argument
// NAME, so that a call can write one of its inputs, as CuPy's in-place k(x, y, x) does.
// resolve_shared gives each such argument the owner's dtype and view (its own view suffix
// applied: "@x[::2]") and no host bytes, and records in Argument::shares the argument that
// owns the buffer, past chains (z=@y, y=@x: both share x's). run_execute.cpp uploads the
// owners only and wraps an owner's buffer for each argument that shares it, so the library
// sees the same device memory twice, exactly as in CuPy (ElementwiseKernel reads an input
// that overlaps an output from a copy unless it is the very same view; two outputs that
// overlap are its error, at the launch). The outputs are read back after the launches, so
// a shared output shows the buffer as the kernel left it.

// One argument of the call as the command line gave it, for resolve_shared.
struct Slot {
  Argument* argument;
  std::string source;  // the SOURCE text
  std::string label;   // "--in z=@x" or "--arg @x"
};

// Resolves the "@NAME" sources among `slots` (the call's arguments in parameter order);
// `positions`: NAME may also be a 0-based position (raw kernels, as --out).
void resolve_shared(const std::vector<Slot>& slots, bool positions, const std::string& what) {
  enum State { open, resolving, resolved };
  std::vector<State> state(slots.size(), resolved);
  for (std::size_t k = 0; k < slots.size(); ++k) {
    if (parse_shared_source(slots[k].source)) state[k] = open;
  }
  std::function<void(std::size_t)> resolve = [&](std::size_t k) {
    if (state[k] == resolved) return;
    const Slot& slot = slots[k];
    if (state[k] == resolving) {
      throw usage(fmt::format("{}: the @NAME sources refer to each other in a circle and none has data: give one of "
                              "them a SOURCE such as random:1000:float32",
                              slot.label));
    }
    state[k] = resolving;
    const SharedSource shared = *parse_shared_source(slot.source);
    std::optional<std::size_t> target;
    for (std::size_t j = 0; j < slots.size(); ++j) {
      if (slots[j].argument->name == shared.name) target = j;
    }
    if (!target && positions && shared.name.find_first_not_of("0123456789") == std::string::npos &&
        shared.name.size() < 10 && std::stoul(shared.name) < slots.size()) {
      target = std::stoul(shared.name);
    }
    if (!target) {
      throw usage(fmt::format("{}: {} has no argument named {}{}", slot.label, what, shared.name,
                              positions ? " (name one, or give its 0-based position)" : ""));
    }
    if (*target == k) {
      throw usage(fmt::format("{}: an argument cannot share its own buffer: @NAME names another argument", slot.label));
    }
    resolve(*target);
    const Argument& owner = *slots[*target].argument;
    const std::string owner_name = owner.shares.empty() ? owner.name : owner.shares;
    try {
      slot.argument->value = shared_value(shared, owner.value, owner_name);
    } catch (const Error& error) {
      throw with_context(error, slot.label);
    }
    slot.argument->shares = owner_name;
    state[k] = resolved;
  };
  for (std::size_t k = 0; k < slots.size(); ++k) resolve(k);
}

// The options only the command line has (the library refuses the call's own options for a
// kind that does not take them, naming them).
void check_options_for(const RunCommandOptions& options, const SpecKernel& entry) {
  const bool module = std::holds_alternative<RawModule>(entry.kernel);
  auto refuse = [&](bool given, const char* option, const char* which) {
    if (given) throw usage(fmt::format("{} is for {}; kernel {} is {}", option, which, entry.name(), entry.kind()));
  };
  refuse(!module && !options.globals.empty(), "--global", "raw_module kernels");
  refuse(!module && !options.read_globals.empty(), "--read-global", "raw_module kernels");
}

std::map<std::string, std::string> parse_out_files(const RunCommandOptions& options) {
  std::map<std::string, std::string> files;
  for (const auto& text : options.outputs) {
    auto [name, path] = split_assignment(text, "--out", "NAME=FILE.npy, e.g. --out y=y.npy");
    if (!files.emplace(name, path).second) throw usage(fmt::format("--out {} is given twice", name));
  }
  return files;
}

// An argument as the library's planner sees it: dtype, shape and strides (as the view will
// be on the device), or the scalar.
Arg describe(const SourceValue& value) {
  if (value.is_array) return Arg(value.view(0));
  return Arg(value.scalar);
}

// Elementwise and reduction kernels: parameters by name, types resolved as the call will.
template <class Kernel>
void plan_dsl_call(const Kernel& kernel, const RunCommandOptions& options, const CallOptions& call, RunPlan& plan) {
  const Params sig{kernel.in_params(), kernel.out_params()};
  const std::string params = describe_params(sig);
  std::vector<std::optional<Argument>> inputs(sig.in.size()), outputs(sig.out.size());
  // Arguments by name (--in NAME=SOURCE) or in order (--arg SOURCE: the inputs, then
  // optionally every output, as in a CuPy call).
  struct Given {
    std::string name, source;
    const char* option;
  };
  std::vector<Given> named;
  if (!options.args.empty()) {
    if (!options.inputs.empty()) {
      throw usage("give a kernel's arguments either by name (--in NAME=SOURCE) or in order (--arg SOURCE), not both");
    }
    const std::size_t n = options.args.size();
    if (n != sig.in.size() && n != sig.in.size() + sig.out.size()) {
      throw usage(fmt::format("kernel {} takes {} argument(s) in order (its inputs), or {} (inputs, then outputs); {} "
                              "given with --arg ({})",
                              kernel.name(), sig.in.size(), sig.in.size() + sig.out.size(), n, params));
    }
    for (std::size_t k = 0; k < n; ++k) {
      const Parameter& p = k < sig.in.size() ? sig.in[k] : sig.out[k - sig.in.size()];
      named.push_back({p.name, options.args[k], "--arg"});
    }
  }
  for (const auto& text : options.inputs) {
    const auto assignment = split_assignment(text, "--in", "NAME=SOURCE, e.g. --in x=random:1000:float32");
    named.push_back({assignment.first, assignment.second, "--in"});
  }
  std::map<std::string, std::pair<std::string, std::string>> sources;  // name -> SOURCE, label
  for (const auto& arg : named) {
    // Plain references, not a structured binding: lambdas may capture those only from C++20.
    const std::string& name = arg.name;
    auto in = std::find_if(sig.in.begin(), sig.in.end(), [&](const Parameter& p) { return p.name == name; });
    auto out = std::find_if(sig.out.begin(), sig.out.end(), [&](const Parameter& p) { return p.name == name; });
    std::optional<Argument>* slot = in != sig.in.end()     ? &inputs[static_cast<std::size_t>(in - sig.in.begin())]
                                    : out != sig.out.end() ? &outputs[static_cast<std::size_t>(out - sig.out.begin())]
                                                           : nullptr;
    if (!slot) {
      throw usage(fmt::format("--in {}={}: kernel {} has no parameter named {} ({})", name, arg.source, kernel.name(),
                              name, params));
    }
    if (*slot) throw usage(fmt::format("--in {} is given twice", name));
    const std::string label_name = arg.option == std::string("--arg") ? "" : name;
    *slot = given_argument(name, label_name, arg.source, arg.option);
    sources[name] = {arg.source, argument_label(label_name, arg.source, arg.option)};
  }
  std::string missing;
  for (std::size_t k = 0; k < sig.in.size(); ++k) {
    if (!inputs[k]) missing += (missing.empty() ? "" : ", ") + sig.in[k].name;
  }
  if (!missing.empty()) {
    throw usage(fmt::format("kernel {} needs --in NAME=SOURCE for {} ({})\n{}", kernel.name(), missing, params, kSourceHint));
  }
  std::size_t given = std::count_if(outputs.begin(), outputs.end(), [](const auto& o) { return o.has_value(); });
  if (given != 0 && given != outputs.size()) {
    throw usage(fmt::format("kernel {}: give every output with --in or none (kernc then allocates them): {}",
                            kernel.name(), params));
  }
  std::vector<Slot> slots;
  for (auto* list : {&inputs, &outputs}) {
    for (auto& argument : *list) {
      if (!argument) continue;
      const auto& source = sources.at(argument->name);
      slots.push_back(Slot{&*argument, source.first, source.second});
    }
  }
  resolve_shared(slots, false, fmt::format("kernel {} ({})", kernel.name(), params));
  CallTypes types;
  types.bindings = call.bindings;
  for (auto& in : inputs) {
    types.inputs.push_back(in->value.is_array ? ArgType::array(in->value.dtype) : ArgType::scalar_of(in->value.dtype));
    plan.inputs.push_back(std::move(*in));
  }
  for (std::size_t k = 0; k < sig.out.size(); ++k) {
    plan.output_names.push_back(sig.out[k].name);
    if (!outputs[k]) {
      types.outputs.emplace_back(std::nullopt);
      continue;
    }
    if (!outputs[k]->value.is_array) throw usage(fmt::format("--in {}: an output must be an array", sig.out[k].name));
    types.outputs.emplace_back(outputs[k]->value.dtype);
    plan.given_outputs.push_back(std::move(*outputs[k]));
  }
  try {
    kernc::resolve(kernel, types);
  } catch (const Error& error) {
    throw with_context(error, fmt::format("kernel {} ({}) with {}", kernel.name(), params, format_call_signature(types)),
                       kernel.name() + ": ");
  }
  for (const auto& out_file : plan.out_files) {
    const std::string& name = out_file.first;
    const std::string& path = out_file.second;
    bool output = std::find(plan.output_names.begin(), plan.output_names.end(), name) != plan.output_names.end();
    bool array_input = std::any_of(plan.inputs.begin(), plan.inputs.end(),
                                   [&](const Argument& a) { return a.name == name && a.value.is_array; });
    if (!output && !array_input) {
      throw usage(fmt::format("--out {}={}: {} is neither an output nor an array input of kernel {} ({})", name, path,
                              name, kernel.name(), params));
    }
  }
}

void plan_raw_call(const SpecKernel& entry, const RunCommandOptions& options, RunPlan& plan) {
  std::optional<std::vector<RawParameter>> declared;
  if (const auto* kernel = std::get_if<RawKernel>(&entry.kernel)) {
    plan.function = kernel->name();
    declared = kernel->parameters();
  } else {
    const auto& module = std::get<RawModule>(entry.kernel);
    std::string expressions;
    for (const auto& e : module.name_expressions()) expressions += (expressions.empty() ? "" : ", ") + e;
    if (options.function.empty()) {
      throw usage(fmt::format("kernel {} is a raw_module: name the function to launch with --function NAME{}",
                              entry.name(), expressions.empty() ? "" : " (name expressions: " + expressions + ")"));
    }
    plan.function = options.function;
    // A template instance ("axpby<float>") is declared as its template ("axpby"): the names
    // and pointer-ness hold, the placeholder types do not (the library leaves them empty).
    declared = module.parameters(plan.function);
  }
  std::vector<std::string> names;
  if (declared) {
    for (const auto& p : *declared) names.push_back(p.name);
  }
  std::string described;
  if (declared) {
    for (const auto& p : *declared) described += (described.empty() ? "" : ", ") + p.text;
  }
  const std::string signature = declared ? fmt::format("{}({})", plan.function, described) : plan.function;

  if (!options.inputs.empty() && !options.args.empty()) {
    throw usage("give a raw kernel's arguments either by name (--in NAME=SOURCE) or in order (--arg SOURCE), not both");
  }
  std::vector<std::string> sources;  // each argument's SOURCE, in argument order
  if (!options.inputs.empty()) {
    if (!declared) {
      throw usage(fmt::format("cannot read the parameters of {} from its source: give its arguments in order with "
                              "--arg SOURCE",
                              plan.function));
    }
    std::vector<std::optional<Argument>> args(declared->size());
    sources.resize(declared->size());
    for (const auto& text : options.inputs) {
      auto [name, value] = split_assignment(text, "--in", "NAME=SOURCE, e.g. --in n=1000");
      auto found = std::find(names.begin(), names.end(), name);
      if (found == names.end()) throw usage(fmt::format("--in {}: {} has no parameter named {}", text, signature, name));
      auto& slot = args[static_cast<std::size_t>(found - names.begin())];
      if (slot) throw usage(fmt::format("--in {} is given twice", name));
      slot = given_argument(name, name, value, "--in");
      sources[static_cast<std::size_t>(found - names.begin())] = value;
    }
    std::string missing;
    for (std::size_t k = 0; k < args.size(); ++k) {
      if (!args[k]) missing += (missing.empty() ? "" : ", ") + (names[k].empty() ? fmt::format("#{}", k) : names[k]);
    }
    if (!missing.empty()) {
      throw usage(fmt::format("{} needs --in NAME=SOURCE for {}\n{}", signature, missing, kSourceHint));
    }
    for (auto& arg : args) plan.inputs.push_back(std::move(*arg));
  } else {
    for (std::size_t k = 0; k < options.args.size(); ++k) {
      std::string name = k < names.size() && !names[k].empty() ? names[k] : fmt::format("#{}", k);
      plan.inputs.push_back(given_argument(name, "", options.args[k], "--arg"));
      sources.push_back(options.args[k]);
    }
    if (declared && plan.inputs.size() != declared->size()) {
      throw usage(fmt::format("{} takes {} argument(s), {} given with --arg{}", signature, declared->size(),
                              plan.inputs.size(), declared->empty() ? "" : "\n" + std::string(kSourceHint)));
    }
  }
  std::vector<Slot> slots;
  for (std::size_t k = 0; k < plan.inputs.size(); ++k) {
    const bool by_name = !options.inputs.empty();
    slots.push_back(Slot{&plan.inputs[k], sources[k],
                         argument_label(by_name ? plan.inputs[k].name : "", sources[k], by_name ? "--in" : "--arg")});
  }
  resolve_shared(slots, true, signature);
  for (std::size_t k = 0; k < plan.inputs.size(); ++k) {
    auto& arg = plan.inputs[k];
    const RawParameter* param = declared && k < declared->size() ? &(*declared)[k] : nullptr;
    if (param && param->pointer != arg.value.is_array) {
      throw usage(fmt::format("{}: parameter \"{}\" is {} but {} is {}", signature, param->text,
                              param->pointer ? "a pointer" : "a scalar", arg.name,
                              arg.value.is_array ? "an array" : "a scalar"));
    }
    // Scalars take the declared type where the source says it (template placeholders excepted).
    if (param && param->dtype && !arg.value.is_array) {
      if (!arg.value.scalar.fits(*param->dtype)) {
        throw usage(fmt::format("{}: {} ({}) is out of bounds for parameter \"{}\" ({}); an integer is never "
                                "wrapped, nor a NaN made an integer",
                                signature, arg.name, arg.value.description, param->text, to_string(*param->dtype)));
      }
      if (*param->dtype != arg.value.dtype) arg.value.description += fmt::format(" as {}", to_string(*param->dtype));
      arg.value.scalar = scalar_as(arg.value.scalar, *param->dtype);
      arg.value.dtype = *param->dtype;
    }
    plan.show.push_back(arg.value.is_array && !(param && param->const_pointee));
  }
  for (const auto& [name, path] : plan.out_files) {
    bool found = false;
    for (std::size_t k = 0; k < plan.inputs.size(); ++k) {
      if ((plan.inputs[k].name == name || fmt::format("{}", k) == name) && plan.inputs[k].value.is_array) found = true;
    }
    if (!found) {
      throw usage(fmt::format("--out {}={}: {} is no array argument of {} (name one, or give its 0-based position)", name,
                              path, name, signature));
    }
  }

  // Launch configuration: --block defaults to 256 threads, --grid to enough blocks for
  // --size elements (else for the largest array).
  std::vector<unsigned> block = options.block.empty() ? std::vector<unsigned>{kDefaultBlock} : parse_dims(options.block, "--block");
  std::copy(block.begin(), block.end(), plan.launch.block);
  if (!options.grid.empty()) {
    auto grid = parse_dims(options.grid, "--grid");
    std::copy(grid.begin(), grid.end(), plan.launch.grid);
  } else {
    std::int64_t elements = options.size;
    for (const auto& arg : plan.inputs) {
      if (options.size < 0 && arg.value.is_array) elements = std::max(elements, arg.value.size());
    }
    if (elements < 0) throw usage(fmt::format("{} has no array argument to size the grid by: give --grid or --size", signature));
    std::int64_t blocks = std::max<std::int64_t>(1, (elements + plan.launch.block[0] - 1) / plan.launch.block[0]);
    if (blocks > std::numeric_limits<std::int32_t>::max()) throw usage("the grid would need more than 2^31 - 1 blocks");
    plan.launch.grid[0] = static_cast<unsigned>(blocks);
  }
  plan.launch.shared_bytes = options.shared;
  plan.launch.cooperative = options.cooperative;
  if (!options.cluster.empty()) {
    auto cluster = parse_dims(options.cluster, "--cluster");
    std::copy(cluster.begin(), cluster.end(), plan.launch.cluster);
  }
  plan.launch.programmatic_dependent_launch = options.pdl;
  plan.launch.priority = options.priority;
}

// The call's options from the command line; what a kind does not take is refused by the
// library's planner.
CallOptions call_options(const RunCommandOptions& options, const CallOptions& base) {
  CallOptions call = base;
  for (const auto& text : options.bindings) {
    auto [letter, dtype] = split_assignment(text, "--bind", "LETTER=DTYPE, e.g. --bind T=float32");
    call.bindings[letter] = parse_dtype_name(dtype, "--bind " + text);
  }
  if (!options.axis.empty()) call.axes = parse_axes(options.axis);
  call.keepdims = options.keepdims;
  return call;
}

// Elementwise and reduction kernels take --size and --block as the call's size= and
// block_size=; a raw kernel's launch configuration is made of --grid, --block, --shared,
// --cooperative, --cluster, --pdl, --priority (and --size sizes its default grid).
void dsl_launch_options(const RunCommandOptions& options, const SpecKernel& entry, CallOptions& call) {
  auto refuse = [&](bool given, const char* option) {
    if (given) throw usage(fmt::format("{} is for raw kernels; kernel {} is {}", option, entry.name(), entry.kind()));
  };
  refuse(!options.grid.empty(), "--grid");
  refuse(options.shared != 0, "--shared");
  refuse(options.cooperative, "--cooperative");
  refuse(!options.cluster.empty(), "--cluster");
  refuse(options.pdl, "--pdl");
  refuse(options.priority.has_value(), "--priority");
  if (options.size >= 0) call.size = options.size;
  if (!options.block.empty()) call.block_size = parse_block_size(options.block);
}

// --read-global NAME[:DTYPE[:SHAPE]][=FILE.npy]. NAME may be a C++ name with "::"
// (a name expression): its end is the first ':' that is not half of a "::".
GlobalRead parse_read_global(const std::string& text, const std::vector<Argument>& globals) {
  const char* const form = "NAME[:DTYPE[:SHAPE]][=FILE.npy], e.g. --read-global counts:int32 or "
                           "--read-global counts:int32:4x4=counts.npy";
  GlobalRead read;
  std::string spec = text;
  if (auto eq = text.find('='); eq != std::string::npos) {
    spec = text.substr(0, eq);
    read.file = text.substr(eq + 1);
    if (read.file.empty()) throw usage(fmt::format("--read-global \"{}\": no file after the =; expected {}", text, form));
  }
  std::size_t colon = std::string::npos;
  for (std::size_t k = 0; k < spec.size(); ++k) {
    if (spec[k] != ':') continue;
    if (k + 1 < spec.size() && spec[k + 1] == ':') {
      ++k;  // "::"
      continue;
    }
    colon = k;
    break;
  }
  read.name = spec.substr(0, colon);
  if (read.name.empty()) throw usage(fmt::format("--read-global \"{}\": no global named; expected {}", text, form));
  std::vector<std::string> parts;
  if (colon != std::string::npos) {
    const std::string rest = spec.substr(colon + 1);
    for (std::size_t start = 0;;) {
      std::size_t end = rest.find(':', start);
      parts.push_back(rest.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  if (parts.size() > 2) throw usage(fmt::format("--read-global \"{}\": expected {}", text, form));
  const Argument* written = nullptr;
  for (const auto& global : globals) {
    if (global.name == read.name) written = &global;
  }
  if (!parts.empty()) {
    read.dtype = parse_dtype_name(parts[0], "--read-global " + text);
  } else if (written) {
    read.dtype = written->value.dtype;
  } else {
    throw usage(fmt::format("--read-global {}: give the global's dtype, e.g. --read-global {}:float32 (no --global "
                            "{}=SOURCE gives it)",
                            text, read.name, read.name));
  }
  if (parts.size() == 2) {
    try {
      read.shape = parse_shape(parts[1]);
    } catch (const Error& error) {
      throw with_context(error, "--read-global " + text);
    }
  } else if (written && written->value.dtype == read.dtype) {
    read.shape = written->value.is_array ? written->value.shape : std::vector<std::int64_t>{};
  }
  return read;
}

}  // namespace

RunPlan make_plan(const Spec& spec, const RunCommandOptions& options, const CallOptions& base) {
  RunPlan plan;
  plan.entry = &find_kernel(spec, options.kernel);
  const SpecKernel& entry = *plan.entry;
  check_options_for(options, entry);
  if (options.print && options.format == "json") {
    throw usage("--print shows elements as text; with --format json, write outputs with --out NAME=FILE.npy");
  }
  plan.out_files = parse_out_files(options);
  CallOptions call = call_options(options, base);
  // Arguments are matched to parameters by name or position: a raw kernel's come from its
  // declaration, the others' from their in_params and out_params.
  if (const auto* k = std::get_if<ElementwiseKernel>(&entry.kernel)) {
    dsl_launch_options(options, entry, call);
    plan_dsl_call(*k, options, call, plan);
  } else if (const auto* r = std::get_if<ReductionKernel>(&entry.kernel)) {
    dsl_launch_options(options, entry, call);
    plan_dsl_call(*r, options, call, plan);
  } else {
    plan_raw_call(entry, options, plan);
    call.launch = plan.launch;
    if (std::holds_alternative<RawModule>(entry.kernel)) call.function = plan.function;
  }
  // The library's plan of the call, on descriptions of the arguments: every check the call
  // makes (broadcasting, output shapes, axes, size=, the kind's options) fails here, before
  // any launch; execute() launches this plan.
  std::vector<Arg> described;
  for (const auto& in : plan.inputs) described.push_back(describe(in.value));
  std::vector<ArrayRef> described_outputs;
  for (const auto& out : plan.given_outputs) described_outputs.push_back(describe(out.value).array());
  try {
    plan.call = entry.plan(described, described_outputs, call);
  } catch (const Error& error) {
    if (error.code() == ErrorCode::no_device || error.code() == ErrorCode::driver) throw;
    // A message names its kernel once: a raw kernel's says "kernel NAME: ", the others' "NAME: ".
    const std::string raw_label = "kernel " + entry.name() + ": ";
    const bool raw_message = std::string(error.what()).rfind(raw_label, 0) == 0;
    throw with_context(error, "kernel " + entry.name(), raw_message ? raw_label : entry.name() + ": ");
  }
  for (const auto& text : options.globals) {
    const auto assignment = split_assignment(text, "--global", "NAME=SOURCE, e.g. --global scale=2.5:float32");
    for (const auto& seen : plan.globals) {
      if (seen.name == assignment.first) throw usage(fmt::format("--global {} is given twice", seen.name));
    }
    if (assignment.second[0] == '@') {
      throw usage(fmt::format("--global {}: a global takes a value; @NAME (another argument's device buffer) is for "
                              "kernel arguments",
                              text));
    }
    plan.globals.push_back(Argument{assignment.first, load_argument(assignment.first, assignment.second, "--global"), ""});
  }
  for (const auto& text : options.read_globals) {
    GlobalRead read = parse_read_global(text, plan.globals);
    for (const auto& seen : plan.read_globals) {
      if (seen.name == read.name) throw usage(fmt::format("--read-global {} is given twice", seen.name));
    }
    plan.read_globals.push_back(std::move(read));
  }
  return plan;
}

}  // namespace kernc::cli
