// kernc run on the device (a GPU, or the host's cores): uploads, the first call and what it cost, timed repeats, results.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "cli_context.hpp"
#include "kernc/npy.hpp"
#include "run_call.hpp"
#include "run_display.hpp"

namespace kernc::cli {

namespace {

// One result on the host (an output, an argument, a global read back): a summary, or
// written to `file`, and every element with --print. `role` starts its line.
void report_array(const char* role, const std::string& name, DType dtype, const std::vector<std::int64_t>& shape,
                  const std::string& data, const std::string& file, bool print, nlohmann::json& rows,
                  RunReport& report) {
  const std::int64_t count = element_count(shape);
  const std::string label = fmt::format("{} {}", to_string(dtype), format_numpy_shape(shape));
  nlohmann::json row = {{"name", name}, {"dtype", to_string(dtype)}, {"shape", shape}};
  if (!file.empty()) {
    row["file"] = file;
    write_npy(file, dtype, shape, data.data());
    // NOTE [ npy dtypes ]: these are written as ml_dtypes writes them, which NumPy alone
    // reads as raw bytes ('<V1', '<V2') or refuses ('<f1'); the line says which.
    const bool ml_dtypes = dtype == DType::bfloat16 || dtype == DType::float8_e4m3fn || dtype == DType::float8_e5m2;
    const std::string layout = ml_dtypes ? fmt::format(" (as ml_dtypes saves {}: '{}')", to_string(dtype), npy_descr(dtype)) : "";
    report.line("{:<7} {} = {} written to {}{}\n", role, name, label, file, layout);
  } else {
    const std::string summary = summarize(dtype, data, count);
    row["summary"] = summary;
    report.line("{:<7} {} = {}  {}\n", role, name, label, summary);
  }
  rows.push_back(row);
  if (print && !report.json) print_elements(dtype, data, shape);
}

// One result array, downloaded and reported.
void report_output(const std::string& name, const DeviceArray& array, const RunPlan& plan, bool print, RunReport& report) {
  std::string data(static_cast<std::size_t>(array.size()) * itemsize(array.dtype()), '\0');
  if (!data.empty()) array.to_host(data.data());
  auto file = plan.out_files.find(name);
  report_array("output", name, array.dtype(), array.shape(), data, file == plan.out_files.end() ? "" : file->second,
               print, report.doc["outputs"], report);
}

// A global read back (--read-global): its bytes as `dtype`, in `shape` when given (else a
// vector of every element), which must cover them exactly.
struct GlobalValue {
  std::vector<std::int64_t> shape;
  std::string data;
};

GlobalValue read_global(const GlobalRead& read, const RawModule& module, const CallOptions& call, const Device& device) {
  auto [address, bytes] = module.get_global(read.name, call);
  const std::size_t item = itemsize(read.dtype);
  GlobalValue value;
  if (read.shape) {
    value.shape = *read.shape;
    const auto wanted = static_cast<std::size_t>(element_count(value.shape)) * item;
    if (wanted != bytes) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--read-global {}: the global has {} byte(s), not the {} of a {} array of shape {}",
                              read.name, bytes, wanted, to_string(read.dtype), format_numpy_shape(value.shape)));
    }
  } else {
    if (bytes % item != 0) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--read-global {}: the global has {} byte(s), not a whole number of {} elements ({} "
                              "byte(s) each)",
                              read.name, bytes, to_string(read.dtype), item));
    }
    value.shape = {static_cast<std::int64_t>(bytes / item)};
  }
  value.data.assign(bytes, '\0');
  if (bytes != 0) device.copy_to_host(value.data.data(), address, bytes);
  return value;
}

// A scalar's bytes as its dtype stores them.
std::string scalar_bytes(const Scalar& scalar) {
  std::string bytes(itemsize(scalar.dtype), '\0');
  scalar.convert_to(scalar.dtype, reinterpret_cast<unsigned char*>(bytes.data()));
  return bytes;
}

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
}  // namespace

int execute(const RunPlan& plan, const RunCommandOptions& options, Engine& engine, const Device& device,
            RunReport& report) {
  const SpecKernel& entry = *plan.entry;
  const bool host = device.backend() == Backend::cpu;
  report.line("kernel  {} ({}) on {}: {} ({})\n", entry.name(), entry.kind(),
              host ? std::string("the CPU") : fmt::format("GPU {}", device.ordinal()), device.name(),
              device.target().str());
  report.doc["kernel"] = {{"name", entry.name()}, {"kind", entry.kind()}};
  report.doc["device"] = {{"backend", to_string(device.backend())},
                          {"ordinal", device.ordinal()},
                          {"name", device.name()},
                          {"arch", device.target().str()}};
  report.doc["outputs"] = nlohmann::json::array();
  // Every argument on the device: the bytes its view reads are uploaded whole (`buffers`,
  // kept alive here) and `uploaded[k]` is plan.inputs[k]'s view of them, strides and all.
  // An argument that shares another's buffer ("@NAME") uploads nothing and views its
  // owner's buffer (see NOTE [ shared buffers ] in run_plan.cpp).
  std::vector<DeviceArray> buffers;
  std::vector<std::optional<DeviceArray>> uploaded;
  std::map<std::string, std::uint64_t> buffer_of;  // an owner's name -> its buffer's address
  double upload_bytes = 0;
  auto upload = [&](const std::vector<Argument>& arguments) {
    for (const auto& arg : arguments) {
      if (!arg.value.is_array || !arg.shares.empty()) continue;
      const std::int64_t elements = static_cast<std::int64_t>(arg.value.data.size() / itemsize(arg.value.dtype));
      buffers.push_back(DeviceArray::from_host(device, arg.value.dtype, {elements}, arg.value.data.data()));
      upload_bytes += static_cast<double>(arg.value.data.size());
      buffer_of[arg.name] = buffers.back().ref().data;
    }
  };
  auto to_args = [&](const std::vector<Argument>& arguments, std::vector<Arg>& args, const char* role) {
    for (const auto& arg : arguments) {
      report.line("{:<7} {} = {}\n", role, arg.name, arg.value.description);
      nlohmann::json row = {{"name", arg.name}, {"source", arg.value.description}};
      if (!arg.shares.empty()) row["shares"] = arg.shares;
      report.doc[std::string(role) + "s"].push_back(row);
      if (!arg.value.is_array) {
        args.emplace_back(arg.value.scalar);
        uploaded.emplace_back();
        continue;
      }
      const std::uint64_t base = buffer_of.at(arg.shares.empty() ? arg.name : arg.shares);
      uploaded.push_back(DeviceArray::wrap(device, arg.value.view(base)));
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
  upload(plan.inputs);
  upload(plan.given_outputs);
  to_args(plan.inputs, inputs, "input");
  to_args(plan.given_outputs, given_outputs, "output");
  device.synchronize();
  const double upload_ms = lap_ms();
  report.line("setup   {} uploaded in {}\n", format_bytes(upload_bytes), format_ms(upload_ms));
  report.doc["setup"] = {{"upload_bytes", upload_bytes}, {"upload_ms", upload_ms}};
  std::fflush(stdout);

  // A raw module's globals and --read-global go through the module, on the call's GPU.
  CallOptions call;
  call.engine = &engine;
  call.device = device.ordinal();

  // One launch of the plan; the first one allocates the outputs the plan allocates, later
  // ones write into those.
  std::vector<DeviceArray> results;
  bool raised_shared_limit = false;
  auto launch = [&]() {
    if (plan.launch.shared_bytes > 48 * 1024 && !raised_shared_limit) {
      // Above 48 KiB a raw kernel must opt in (once: it is the function's attribute; the
      // library leaves that to the caller, as CuPy does).
      Function function = std::holds_alternative<RawKernel>(entry.kernel)
                              ? std::get<RawKernel>(entry.kernel).function(call)
                              : std::get<RawModule>(entry.kernel).get_function(plan.function, call);
      function.set_max_dynamic_shared_bytes(static_cast<int>(plan.launch.shared_bytes));
      raised_shared_limit = true;
    }
    std::vector<ArrayRef> outs;
    for (const auto& r : results) outs.push_back(r.ref());
    if (outs.empty()) {
      for (const auto& o : given_outputs) outs.push_back(o.array());
    }
    auto made = plan.call.launch(inputs, outs);
    if (results.empty()) results = std::move(made);
  };

  // A raw module's globals, written before its first launch (getting one compiles and
  // loads the module: part of the first call's cost).
  auto write_globals = [&] {
    for (const auto& global : plan.globals) {
      const auto& module = std::get<RawModule>(entry.kernel);
      auto [address, bytes] = module.get_global(global.name, call);
      std::string value = global.value.is_array ? global.value.c_order_data() : scalar_bytes(global.value.scalar);
      if (value.size() != bytes) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--global {}: the global has {} byte(s) but {} has {}{}", global.name, bytes,
                                global.value.description, value.size(),
                                global.value.is_array ? "" : " (give a typed scalar, e.g. 2.5:float32)"));
      }
      device.copy_to_device(address, value.data(), value.size());
      report.line("global  {} = {} ({} byte(s) at 0x{:x})\n", global.name, global.value.description, bytes, address);
      report.doc["globals"].push_back({{"name", global.name}, {"source", global.value.description}, {"bytes", bytes}});
    }
  };

  const CacheStats before = engine.cache().stats();
  const std::size_t modules_before = engine.loaded_modules();
  auto start_time = std::chrono::steady_clock::now();
  write_globals();
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
  const bool raw = plan.call.kind() == KernelKind::raw;
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
  // Globals are read after every launch, as the outputs are; all of them before anything
  // is reported, so that a wrong --read-global shape writes no file.
  std::vector<GlobalValue> globals_read;
  for (const auto& read : plan.read_globals) {
    globals_read.push_back(read_global(read, std::get<RawModule>(entry.kernel), call, device));
  }
  for (const auto& [name, array] : shown) report_output(name, array, plan, options.print, report);
  for (std::size_t k = 0; k < plan.read_globals.size(); ++k) {
    const GlobalRead& read = plan.read_globals[k];
    report_array("global", read.name, read.dtype, globals_read[k].shape, globals_read[k].data, read.file, options.print,
                 report.doc["read_globals"], report);
  }
  if (report.json) fmt::print("{}\n", report.doc.dump(2));
  return kExitOk;
}

}  // namespace kernc::cli
