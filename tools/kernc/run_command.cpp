// kernc run SPEC --kernel NAME --in NAME=SOURCE ... : compile (through the cache), launch
// and time one kernel of a spec file on made-up or .npy data, and show or save its outputs.
//
// Everything the command line says is checked before the GPU is touched (sources read or
// made, parameter names matched, types resolved), so that usage errors exit 2 on any
// machine; only then is the device opened (no usable GPU: exit 7).

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_context.hpp"
#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"
#include "kernc/plan.hpp"
#include "kernc/npy.hpp"
#include "kernc/spec_file.hpp"
#include "run_sources.hpp"

namespace kernc::cli {

namespace {

struct RunCommandOptions {
  std::string spec;
  std::string kernel;
  std::string function;
  std::vector<std::string> inputs;    // NAME=SOURCE
  std::vector<std::string> args;      // SOURCE, in parameter order (raw kernels)
  std::vector<std::string> outputs;   // NAME=FILE.npy
  std::vector<std::string> bindings;  // T=DTYPE
  std::string axis;
  bool keepdims = false;
  std::string grid;
  std::string block;
  unsigned shared = 0;
  std::int64_t size = -1;
  unsigned repeat = 0;
  int device = 0;
  bool print = false;
  std::string format = "text";
};

// What a run reports: lines for people, or (--format json) one JSON document at the end.
struct RunReport {
  bool json = false;
  nlohmann::json doc = nlohmann::json::object();
  /// Prints a text line (text mode only).
  template <class... Args>
  void line(fmt::format_string<Args...> format, Args&&... args) {
    if (!json) fmt::print(format, std::forward<Args>(args)...);
  }
};

constexpr unsigned kDefaultBlock = 256;     // raw kernels without --block

Error usage(const std::string& message) { return Error(ErrorCode::invalid_argument, message); }

// The same error with `context` in front of its message (compile failures keep their log).
Error with_context(const Error& error, const std::string& context) {
  if (error.compile_failure()) return error;
  return Error(error.code(), fmt::format("{}: {}", context, error.what()));
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

std::vector<int> parse_axes(const std::string& text) {
  std::vector<int> axes;
  for (const auto& item : split_list(text)) {
    char* end = nullptr;
    long value = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || value < -64 || value > 64) {
      throw usage(fmt::format("--axis \"{}\": expected axes joined by commas, e.g. 1 or 0,-1", text));
    }
    axes.push_back(static_cast<int>(value));
  }
  if (axes.empty()) throw usage(fmt::format("--axis \"{}\" names no axis", text));
  return axes;
}

// ---------------------------------------------------------------------------------------
// The plan: every argument of the call, read or made on the host, checked against the
// kernel. Built without a GPU.

struct Argument {
  std::string name;  // the parameter's name, or "#k" for an unnamed raw argument
  SourceValue value;
};

struct Plan {
  const SpecKernel* entry = nullptr;
  std::vector<Argument> inputs;           // in parameter order (raw: argument order)
  std::vector<Argument> given_outputs;    // elementwise/reduction outputs given with --in: all or none
  std::vector<std::string> output_names;  // elementwise/reduction: out_params order
  std::vector<bool> show;                 // raw: which arguments are shown after the launch
  std::map<std::string, std::string> out_files;
  // Elementwise / reduction.
  std::map<std::string, DType> bindings;
  std::optional<std::vector<int>> axes;
  // Raw.
  std::string function;
  LaunchConfig launch;
};

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

SourceValue load_argument(const std::string& name, const std::string& text, const char* option) {
  try {
    return load_source(text);
  } catch (const Error& error) {
    throw with_context(error, fmt::format("{} {}", option, name.empty() ? text : name + "=" + text));
  }
}

void check_options_for(const RunCommandOptions& options, const SpecKernel& entry) {
  const std::string kind = entry.kind();
  const bool raw = kind == "raw" || kind == "raw_module";
  auto refuse = [&](bool given, const char* option, const char* which) {
    if (given) throw usage(fmt::format("{} is for {}; kernel {} is {}", option, which, entry.name(), kind));
  };
  refuse(!raw && !options.grid.empty(), "--grid", "raw kernels");
  refuse(!raw && !options.block.empty(), "--block", "raw kernels");
  refuse(!raw && options.shared != 0, "--shared", "raw kernels");
  refuse(!raw && !options.args.empty(), "--arg", "raw kernels (name the parameters with --in NAME=SOURCE)");
  refuse(kind != "raw_module" && !options.function.empty(), "--function", "raw_module kernels");
  refuse(kind != "reduction" && !options.axis.empty(), "--axis", "reduction kernels");
  refuse(kind != "reduction" && options.keepdims, "--keepdims", "reduction kernels");
  refuse(raw && !options.bindings.empty(), "--bind", "elementwise and reduction kernels");
  refuse(kind == "reduction" && options.size >= 0, "--size", "elementwise and raw kernels");
}

std::map<std::string, std::string> parse_out_files(const RunCommandOptions& options) {
  std::map<std::string, std::string> files;
  for (const auto& text : options.outputs) {
    auto [name, path] = split_assignment(text, "--out", "NAME=FILE.npy, e.g. --out y=y.npy");
    if (!files.emplace(name, path).second) throw usage(fmt::format("--out {} is given twice", name));
  }
  return files;
}

// An argument as the library's planner sees it: dtype and shape (C-contiguous, as it will
// be uploaded), or the scalar.
Arg describe(const SourceValue& value) {
  if (value.is_array) return Arg(ArrayRef::contiguous(std::uint64_t{0}, value.dtype, value.shape));
  return Arg(value.scalar);
}

// Elementwise and reduction kernels: parameters by name, types resolved as the call will.
template <class Kernel>
void plan_dsl_call(const Kernel& kernel, const RunCommandOptions& options, Plan& plan) {
  const Params sig{kernel.in_params(), kernel.out_params()};
  const std::string params = describe_params(sig);
  for (const auto& text : options.bindings) {
    auto [letter, dtype] = split_assignment(text, "--bind", "LETTER=DTYPE, e.g. --bind T=float32");
    plan.bindings[letter] = parse_dtype_name(dtype, "--bind " + text);
  }
  std::vector<std::optional<Argument>> inputs(sig.in.size()), outputs(sig.out.size());
  for (const auto& text : options.inputs) {
    // Plain variables, not a structured binding: lambdas may capture those only from C++20.
    const auto assignment = split_assignment(text, "--in", "NAME=SOURCE, e.g. --in x=random:1000:float32");
    const std::string& name = assignment.first;
    const std::string& source = assignment.second;
    auto in = std::find_if(sig.in.begin(), sig.in.end(), [&](const Parameter& p) { return p.name == name; });
    auto out = std::find_if(sig.out.begin(), sig.out.end(), [&](const Parameter& p) { return p.name == name; });
    std::optional<Argument>* slot = in != sig.in.end()     ? &inputs[static_cast<std::size_t>(in - sig.in.begin())]
                                    : out != sig.out.end() ? &outputs[static_cast<std::size_t>(out - sig.out.begin())]
                                                           : nullptr;
    if (!slot) throw usage(fmt::format("--in {}: kernel {} has no parameter named {} ({})", text, kernel.name(), name, params));
    if (*slot) throw usage(fmt::format("--in {} is given twice", name));
    *slot = Argument{name, load_argument(name, source, "--in")};
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
  CallTypes types;
  types.bindings = plan.bindings;
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
    kernel.resolve(types);
  } catch (const Error& error) {
    throw with_context(error, fmt::format("kernel {} ({}) with {}", kernel.name(), params, format_call_signature(types)));
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
  // The library's own plan of the call, on descriptions of the arguments: every check the
  // call makes (broadcasting, output shapes, axes, size=) fails here, before the GPU.
  if (!options.axis.empty()) plan.axes = parse_axes(options.axis);
  std::vector<Arg> described;
  for (const auto& in : plan.inputs) described.push_back(describe(in.value));
  std::vector<ArrayRef> described_outputs;
  for (const auto& out : plan.given_outputs) described_outputs.push_back(describe(out.value).array());
  PlanOptions plan_options;
  plan_options.bindings = plan.bindings;
  try {
    if constexpr (std::is_same_v<Kernel, ReductionKernel>) {
      kernel.plan(described, plan.axes, options.keepdims, described_outputs, plan_options);
    } else {
      if (options.size >= 0) plan_options.size = options.size;
      kernel.plan(described, described_outputs, plan_options);
    }
  } catch (const Error& error) {
    const std::string message = error.what();
    throw message.rfind(kernel.name() + ":", 0) == 0 ? error : with_context(error, "kernel " + kernel.name());
  }
}

void plan_raw_call(const SpecKernel& entry, const RunCommandOptions& options, Plan& plan) {
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
  if (!options.inputs.empty()) {
    if (!declared) {
      throw usage(fmt::format("cannot read the parameters of {} from its source: give its arguments in order with "
                              "--arg SOURCE",
                              plan.function));
    }
    std::vector<std::optional<Argument>> args(declared->size());
    for (const auto& text : options.inputs) {
      auto [name, value] = split_assignment(text, "--in", "NAME=SOURCE, e.g. --in n=1000");
      auto found = std::find(names.begin(), names.end(), name);
      if (found == names.end()) throw usage(fmt::format("--in {}: {} has no parameter named {}", text, signature, name));
      auto& slot = args[static_cast<std::size_t>(found - names.begin())];
      if (slot) throw usage(fmt::format("--in {} is given twice", name));
      slot = Argument{name, load_argument(name, value, "--in")};
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
      plan.inputs.push_back(Argument{name, load_argument("", options.args[k], "--arg")});
    }
    if (declared && plan.inputs.size() != declared->size()) {
      throw usage(fmt::format("{} takes {} argument(s), {} given with --arg{}", signature, declared->size(),
                              plan.inputs.size(), declared->empty() ? "" : "\n" + std::string(kSourceHint)));
    }
  }
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
}

Plan make_plan(const Spec& spec, const RunCommandOptions& options) {
  Plan plan;
  plan.entry = &find_kernel(spec, options.kernel);
  check_options_for(options, *plan.entry);
  if (options.print && options.format == "json") {
    throw usage("--print shows elements as text; with --format json, write outputs with --out NAME=FILE.npy");
  }
  plan.out_files = parse_out_files(options);
  if (const auto* k = std::get_if<ElementwiseKernel>(&plan.entry->kernel)) {
    plan_dsl_call(*k, options, plan);
  } else if (const auto* r = std::get_if<ReductionKernel>(&plan.entry->kernel)) {
    plan_dsl_call(*r, options, plan);
  } else {
    plan_raw_call(*plan.entry, options, plan);
  }
  return plan;
}

// ---------------------------------------------------------------------------------------
// Showing results.

// One result array, downloaded: summary or file, and every element with --print.
void report_output(const std::string& name, const DeviceArray& array, const Plan& plan, bool print, RunReport& report) {
  std::string data(static_cast<std::size_t>(array.size()) * itemsize(array.dtype()), '\0');
  if (!data.empty()) array.to_host(data.data());
  DType dtype = array.dtype();
  const std::string label = fmt::format("{} {}", to_string(dtype), format_numpy_shape(array.shape()));
  nlohmann::json row = {{"name", name}, {"dtype", to_string(dtype)}, {"shape", array.shape()}};
  if (auto file = plan.out_files.find(name); file != plan.out_files.end()) {
    row["file"] = file->second;
    if (dtype == DType::bfloat16) {
      // See NOTE [ npy dtypes ]: NumPy has no bfloat16; float32 holds every value exactly.
      std::vector<float> widened(static_cast<std::size_t>(array.size()));
      for (std::size_t k = 0; k < widened.size(); ++k) widened[k] = static_cast<float>(element_at(dtype, data, static_cast<std::int64_t>(k)).re);
      write_npy(file->second, DType::float32, array.shape(), widened.data());
      row["file_dtype"] = "float32";
      report.line("output  {} = {} written to {} as float32 (NumPy has no bfloat16)\n", name, label, file->second);
    } else {
      write_npy(file->second, dtype, array.shape(), data.data());
      report.line("output  {} = {} written to {}\n", name, label, file->second);
    }
  } else {
    const std::string summary = summarize(dtype, data, array.size());
    row["summary"] = summary;
    report.line("output  {} = {}  {}\n", name, label, summary);
  }
  report.doc["outputs"].push_back(row);
  if (print && !report.json) print_elements(dtype, data, array.shape());
}

// ---------------------------------------------------------------------------------------
// Running on the device.

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// What the first call cost, from the engine's counters before and after it.
std::string first_call_report(const CacheStats& before, const CacheStats& after, double wall_ms, std::size_t modules) {
  std::vector<std::string> parts;
  double cache_ms = 0;
  // "compiles: N" always: a shipped cache is proven by "compiles: 0".
  const auto compiles = after.compiles - before.compiles;
  cache_ms += after.compile_ms - before.compile_ms;
  parts.push_back(compiles ? fmt::format("compiles: {} in {}", compiles, format_ms(after.compile_ms - before.compile_ms))
                           : std::string("compiles: 0"));
  const auto disk = after.disk_hits - before.disk_hits;
  const auto read_only = after.read_only_hits - before.read_only_hits;
  if (disk + read_only > 0) {
    cache_ms += after.load_ms - before.load_ms;
    parts.push_back(fmt::format("{} disk cache hit(s){}, read and checked in {}", disk + read_only,
                                read_only ? fmt::format(" ({} from read-only tiers)", read_only) : "",
                                format_ms(after.load_ms - before.load_ms)));
  }
  if (auto n = after.memory_hits - before.memory_hits) parts.push_back(fmt::format("{} memory cache hit(s)", n));
  std::string joined;
  for (const auto& part : parts) joined += (joined.empty() ? "" : ", ") + part;
  return fmt::format("{}; module load, codegen and launch {} ({} module(s) loaded); first call {}", joined,
                     format_ms(std::max(0.0, wall_ms - cache_ms)), modules, format_ms(wall_ms));
}

int no_gpu(const std::string& reason) {
  std::string why = reason;
  const std::string prefix = "no usable NVIDIA GPU: ";
  if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
  // One line: the driver's list of paths tried becomes "...; path: reason; ...".
  for (std::size_t at; (at = why.find('\n')) != std::string::npos;) {
    std::size_t next = why.find_first_not_of(' ', at + 1);
    bool after_colon = at > 0 && why[at - 1] == ':';
    why.replace(at, (next == std::string::npos ? why.size() : next) - at, after_colon ? " " : "; ");
  }
  std::fflush(stdout);
  fmt::print(stderr, "kernc: run: no usable NVIDIA GPU/driver found: {}\n", why);
  return kExitNoGpu;
}

int execute(const Plan& plan, const RunCommandOptions& options, Engine& engine, const Device& device,
            RunReport& report) {
  const SpecKernel& entry = *plan.entry;
  report.line("kernel  {} ({}) on GPU {}: {} ({})\n", entry.name(), entry.kind(), device.ordinal(), device.name(),
              device.target().str());
  report.doc["kernel"] = {{"name", entry.name()}, {"kind", entry.kind()}};
  report.doc["device"] = {{"ordinal", device.ordinal()}, {"name", device.name()}, {"arch", device.target().str()}};
  report.doc["outputs"] = nlohmann::json::array();
  // Every argument on the device; `uploaded[k]` is plan.inputs[k]'s array (kept alive here).
  std::vector<std::optional<DeviceArray>> uploaded;
  auto to_args = [&](const std::vector<Argument>& arguments, std::vector<Arg>& args, const char* role) {
    for (const auto& arg : arguments) {
      report.line("{:<7} {} = {}\n", role, arg.name, arg.value.description);
      report.doc[std::string(role) + "s"].push_back({{"name", arg.name}, {"source", arg.value.description}});
      if (!arg.value.is_array) {
        args.emplace_back(arg.value.scalar);
        uploaded.emplace_back();
        continue;
      }
      uploaded.push_back(DeviceArray::from_host(device, arg.value.dtype, arg.value.shape, arg.value.data.data()));
      args.emplace_back(*uploaded.back());
    }
  };
  // The uploads first, so that the first call's time is the call's own. No compiler is
  // loaded here: a cache hit needs none (see NOTE [ cache key ]); a compile loads it and
  // its time is part of the first call.
  auto clock = std::chrono::steady_clock::now();
  auto lap_ms = [&clock] {
    auto now = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - clock).count();
    clock = now;
    return ms;
  };
  std::vector<Arg> inputs, given_outputs;
  to_args(plan.inputs, inputs, "input");
  to_args(plan.given_outputs, given_outputs, "output");
  device.synchronize();
  const double upload_ms = lap_ms();
  double upload_bytes = 0;
  for (const auto& array : uploaded) {
    if (array) upload_bytes += static_cast<double>(array->size()) * static_cast<double>(itemsize(array->dtype()));
  }
  report.line("setup   {} uploaded in {}\n", format_bytes(upload_bytes), format_ms(upload_ms));
  report.doc["setup"] = {{"upload_bytes", upload_bytes}, {"upload_ms", upload_ms}};
  std::fflush(stdout);

  CallOptions call;
  call.engine = &engine;
  call.device = device.ordinal();
  call.bindings = plan.bindings;
  if (options.size >= 0 && std::holds_alternative<ElementwiseKernel>(entry.kernel)) call.size = options.size;

  // One launch; the first one (outputs empty) allocates the outputs, later ones reuse them.
  std::vector<DeviceArray> results;
  bool raised_shared_limit = false;
  auto launch = [&]() {
    std::vector<ArrayRef> outs;
    for (const auto& r : results) outs.push_back(r.ref());
    if (outs.empty()) {
      for (const auto& o : given_outputs) outs.push_back(o.array());
    }
    if (const auto* k = std::get_if<ElementwiseKernel>(&entry.kernel)) {
      auto made = (*k)(inputs, outs, call);
      if (results.empty()) results = std::move(made);
    } else if (const auto* r = std::get_if<ReductionKernel>(&entry.kernel)) {
      auto made = (*r)(inputs, plan.axes, options.keepdims, outs, call);
      if (results.empty()) results = std::move(made);
    } else {
      if (plan.launch.shared_bytes > 48 * 1024 && !raised_shared_limit) {
        // Above 48 KiB the kernel must opt in (once: it is the function's attribute).
        Function function = std::holds_alternative<RawKernel>(entry.kernel)
                                ? std::get<RawKernel>(entry.kernel).function(call)
                                : std::get<RawModule>(entry.kernel).get_function(plan.function, call);
        function.set_max_dynamic_shared_bytes(static_cast<int>(plan.launch.shared_bytes));
        raised_shared_limit = true;
      }
      if (const auto* k = std::get_if<RawKernel>(&entry.kernel)) {
        (*k)(plan.launch, inputs, call);
      } else {
        std::get<RawModule>(entry.kernel).launch(plan.function, plan.launch, inputs, call);
      }
    }
  };

  const CacheStats before = engine.cache().stats();
  const std::size_t modules_before = engine.loaded_modules();
  auto start_time = std::chrono::steady_clock::now();
  launch();
  device.synchronize();
  double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_time).count();
  const CacheStats after = engine.cache().stats();
  report.line("compile {}\n", first_call_report(before, after, first_ms, engine.loaded_modules() - modules_before));
  report.doc["first_call"] = {{"compiles", after.compiles - before.compiles},
                              {"compile_ms", after.compile_ms - before.compile_ms},
                              {"disk_hits", after.disk_hits - before.disk_hits},
                              {"read_only_hits", after.read_only_hits - before.read_only_hits},
                              {"memory_hits", after.memory_hits - before.memory_hits},
                              {"fallback_hits", after.fallback_hits - before.fallback_hits},
                              {"modules_loaded", engine.loaded_modules() - modules_before},
                              {"ms", first_ms}};
  report.doc["binaries"] = nlohmann::json::array();
  for (const auto& module : engine.loaded()) {
    report.line("binary  {} {}\n", module.choice,
                module.location.empty() ? (module.outcome == CacheOutcome::compiled ? "(compiled here)" : "(memory)")
                                        : "from " + module.location);
    report.doc["binaries"].push_back({{"choice", module.choice},
                                      {"target", module.program->target.str()},
                                      {"outcome", to_string(module.outcome)},
                                      {"location", module.location},
                                      {"key", module.key}});
  }

  // The arrays to show: the outputs, a raw kernel's writable array arguments, and any
  // array input --out names (to keep generated data).
  std::vector<std::pair<std::string, DeviceArray>> shown;
  double bytes = 0;
  const bool raw = std::holds_alternative<RawKernel>(entry.kernel) || std::holds_alternative<RawModule>(entry.kernel);
  for (std::size_t k = 0; k < plan.inputs.size(); ++k) {
    if (!uploaded[k]) continue;
    bytes += static_cast<double>(plan.inputs[k].value.nbytes());
    const std::string position = fmt::format("{}", k);
    if (raw && plan.out_files.count(position)) {
      shown.emplace_back(position, *uploaded[k]);
    } else if (plan.out_files.count(plan.inputs[k].name) || (raw && plan.show[k])) {
      shown.emplace_back(plan.inputs[k].name, *uploaded[k]);
    }
  }
  for (std::size_t k = 0; k < results.size(); ++k) {
    bytes += static_cast<double>(results[k].size()) * static_cast<double>(itemsize(results[k].dtype()));
    shown.emplace_back(plan.output_names.at(k), results[k]);
  }

  if (options.repeat > 0) {
    Event begin = device.create_event();
    Event end = device.create_event();
    std::vector<double> times;
    for (unsigned k = 0; k < options.repeat; ++k) {
      begin.record();
      launch();
      end.record();
      end.synchronize();
      times.push_back(end.elapsed_ms_since(begin));
    }
    const double mid = median(times);
    const double best = *std::min_element(times.begin(), times.end());
    const double gb_per_s = mid > 0 ? bytes / (mid * 1e-3) / 1e9 : 0.0;
    report.line("time    median {}, min {} over {} launch(es) after 1 warm-up; {:.2f} GB/s effective "
                "({} of array inputs and outputs per launch)\n",
                format_ms(mid), format_ms(best), options.repeat, gb_per_s, format_bytes(bytes));
    report.doc["time"] = {{"median_ms", mid},   {"min_ms", best},          {"launches", options.repeat},
                          {"gb_per_s", gb_per_s}, {"bytes_per_launch", bytes}};
  }
  for (const auto& [name, array] : shown) report_output(name, array, plan, options.print, report);
  if (report.json) fmt::print("{}\n", report.doc.dump(2));
  return kExitOk;
}

int run_run(const RunCommandOptions& options, const GlobalOptions& global) {
  Config config = resolve_config(global);
  Spec spec = load_spec(options.spec);
  Plan plan = make_plan(spec, options);  // every usage error is raised here, before the GPU

  Engine engine(config);
  Device device;
  try {
    device = engine.device(options.device);
  } catch (const Error& error) {
    return no_gpu(error.what());
  }
  try {
    RunReport report;
    report.json = options.format == "json";
    return execute(plan, options, engine, device, report);
  } catch (const Error& error) {
    if (error.code() == ErrorCode::no_device) return no_gpu(error.what());
    if (error.code() == ErrorCode::not_precompiled) {
      std::fflush(stdout);
      fmt::print(stderr, "kernc: run: {}\nkernc: to add it, where the cache is built: kernc precompile {} --target {}\n",
                 error.what(), options.spec, device.target().str());
      return kExitNotPrecompiled;
    }
    throw;
  }
}

}  // namespace

Subcommand setup_run(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<RunCommandOptions>();
  auto* sub = app.add_subcommand(
      "run", "Compile (through the cache), launch and time one kernel of a spec file on generated or .npy data");
  sub->footer(fmt::format(
      "{}\n\n"
      "Elementwise and reduction kernels take every in_param by name (--in x=..., scalars too);\n"
      "outputs are allocated unless all of them are given with --in. Raw kernels take their\n"
      "arguments by the names their source declares (--in n=1000), or in order (--arg SOURCE,\n"
      "repeated; write --arg=-2 for a negative number); a scalar is converted to the declared\n"
      "type, except for template parameters of a raw_module function, which need a typed\n"
      "scalar (2.0:float32). A raw kernel's writable (non-const pointer) arguments are shown\n"
      "after the launch; --out takes a parameter name or a 0-based position. --block defaults\n"
      "to 256, --grid to enough blocks for --size N elements or the largest array.\n"
      "--out may also name an array input, to keep generated data (e.g. --out x=x.npy).\n\n"
      "Without --out an output is summarised (dtype, shape, min/max/mean of the finite values,\n"
      "the first elements); --print shows every element (at most {}). --repeat N times N more\n"
      "launches with CUDA events after the first and prints the median and minimum kernel time\n"
      "and the effective bandwidth (bytes of the array inputs and outputs / median time).\n\n"
      "Exit codes: 0 ok, 1 the kernel did not compile, 2 bad command line (checked before the GPU\n"
      "is used), 3 no compiler, 4 a file could not be read or written, 7 no usable NVIDIA GPU.\n\n"
      "Examples:\n"
      "  kernc run examples/kernels.json --kernel saxpy --in a=2.0 --in x=random:1000000:float32 \\\n"
      "      --in y=random:1000000:float32 --repeat 20\n"
      "  kernc run examples/kernels.json --kernel sum_of_squares --in x=x.npy --axis 1 --out y=y.npy\n"
      "  kernc run examples/kernels.json --kernel fill --in out=zeros:1000:float32 --in value=2.5 \\\n"
      "      --in n=1000 --print\n"
      "  kernc run examples/kernels.json --kernel scaling --function 'axpby<float>' --arg 2:float32 \\\n"
      "      --arg random:4096:float32 --arg 0.5:float32 --arg ones:4096:float32 --arg 4096",
      kSourceSyntax, kPrintLimit));
  sub->add_option("spec", options->spec, "Spec file (JSON; see docs/spec-format.md)")->required();  // a missing file: exit 4
  sub->add_option("-k,--kernel", options->kernel, "The kernel to run, by its name in the spec")->required();
  sub->add_option("--function", options->function, "raw_module kernels: the function or name expression to launch");
  sub->add_option("--in", options->inputs, "NAME=SOURCE: the value of parameter NAME (see SOURCE below)")
      ->allow_extra_args(false);
  sub->add_option("--arg", options->args, "SOURCE: the next argument of a raw kernel, in parameter order")
      ->allow_extra_args(false);
  sub->add_option("--out", options->outputs, "NAME=FILE.npy: write output NAME to a .npy file")->allow_extra_args(false);
  sub->add_option("--bind", options->bindings, "LETTER=DTYPE: bind a type placeholder no argument decides (T=float32)")
      ->allow_extra_args(false);
  sub->add_option("--axis", options->axis, "Reductions: the axes to reduce, e.g. 1 or 0,-1 (default: all)");
  sub->add_flag("--keepdims", options->keepdims, "Reductions: keep reduced axes with extent 1");
  sub->add_option("--grid", options->grid, "Raw kernels: grid size X[,Y[,Z]]");
  sub->add_option("--block", options->block, "Raw kernels: block size X[,Y[,Z]] (default 256)");
  sub->add_option("--shared", options->shared, "Raw kernels: dynamic shared memory in bytes");
  sub->add_option("--size", options->size,
                  "Elementwise: the loop size when every array is raw; raw kernels: the element count the default "
                  "grid covers")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--repeat", options->repeat, "Time N launches after the first with CUDA events");
  sub->add_option("--device", options->device, "GPU ordinal")->check(CLI::NonNegativeNumber);
  sub->add_flag("--print", options->print, "Print every element of the outputs (at most 1000)");
  sub->add_option("--format", options->format, "Output format: text, or one JSON document (--print does not apply)")
      ->check(CLI::IsMember({"text", "json"}));
  return {sub, [options, &global] { return run_run(*options, global); }};
}

}  // namespace kernc::cli
