// kernc run SPEC --kernel NAME --in NAME=SOURCE ... : compile (through the cache), launch
// and time one kernel of a spec file on made-up or .npy data, and show or save its outputs.
//
// Everything the command line says is checked before anything runs on the device (sources
// read or made, parameter names matched, the call planned by the library: run_plan.cpp),
// so that usage errors exit 2 on any machine, a machine without a usable GPU included
// (then exit 7 after the plan); the plan is then run (run_execute.cpp).

#include <cstdio>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli_context.hpp"
#include "run_call.hpp"
#include "run_display.hpp"
#include "run_views.hpp"

namespace kernc::cli {

namespace {

// What --device names: a device of the configured runtime (KERNC_RUNTIME), or of the
// runtime its spelling names ("cpu": the host's cores; "cuda:N": a CUDA GPU).
struct DeviceChoice {
  int ordinal = 0;
  std::string runtime;  // "": the configured one (KERNC_RUNTIME)
};

DeviceChoice parse_device(const std::string& text) {
  const auto bad = [&text] {
    return usage(fmt::format("--device: expected a GPU ordinal (0, 1, ...), cuda:N, or cpu (this machine's cores), "
                             "not \"{}\"",
                             text));
  };
  if (text == "cpu" || text == "cpu:0") return {0, "cpu"};
  if (text == "cuda") return {0, "cuda"};
  DeviceChoice choice;
  std::string number = text;
  if (text.rfind("cuda:", 0) == 0) {
    choice.runtime = "cuda";
    number = text.substr(5);
  }
  if (number.empty() || number.size() > 6 || number.find_first_not_of("0123456789") != std::string::npos) throw bad();
  choice.ordinal = std::stoi(number);
  return choice;
}

// No device to run on: exit 7, saying why on one line and, for a GPU, that the host's
// cores can run the kernel instead.
int no_device(const std::string& reason, const std::string& runtime) {
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
  if (runtime == "cpu") {
    fmt::print(stderr, "kernc: run: the host device (this machine's CPU) cannot be used: {}\n", why);
  } else {
    // Still one line (scripts read it so): the hint goes at its end.
    fmt::print(stderr,
               "kernc: run: no usable {} GPU/driver found: {}; to run on this machine's CPU instead, add --device "
               "cpu (or set KERNC_RUNTIME=cpu)\n",
               runtime == "hip" ? "AMD" : "NVIDIA", why);
  }
  return kExitNoGpu;
}

int run_run(const RunCommandOptions& options, const GlobalOptions& global) {
  Config config = resolve_config(global);
  const DeviceChoice choice = parse_device(options.device);
  if (!choice.runtime.empty()) config.runtime.set(choice.runtime, "--device");
  Spec spec = load_spec(options.spec);
  // The call is planned once, for the device it runs on (the launch geometry depends on its
  // multiprocessors; the host's are its worker threads). Without a usable GPU it is still
  // planned, for a typical GPU, so that usage errors exit 2 on any machine; then the run
  // exits 7.
  Engine engine(config);
  Device device;
  std::optional<std::string> gpu_missing;
  try {
    device = engine.device(choice.ordinal);
  } catch (const Error& error) {
    gpu_missing = error.what();
  }
  CallOptions call;
  call.engine = &engine;
  call.device = choice.ordinal;
  call.multiprocessors = gpu_missing ? CallOptions::kDefaultMultiprocessors : device.multiprocessors();
  RunPlan plan = make_plan(spec, options, call);  // every usage error is raised here
  if (gpu_missing) return no_device(*gpu_missing, config.runtime.value);
  try {
    RunReport report;
    report.json = options.format == "json";
    return execute(plan, options, engine, device, report);
  } catch (const Error& error) {
    if (error.code() == ErrorCode::no_device) return no_device(error.what(), config.runtime.value);
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
      "{}\n{}\n\n"
      "Elementwise and reduction kernels take every in_param by name (--in x=..., scalars too), or\n"
      "in order (--arg SOURCE, repeated: the inputs, then optionally every output, as a CuPy call);\n"
      "outputs are allocated unless all of them are given. Raw kernels take their arguments by the\n"
      "names their source declares (--in n=1000), or in order (--arg SOURCE; write --arg=-2 for a\n"
      "negative number); a scalar is converted to the declared type, except for template\n"
      "parameters of a raw_module function, which need a typed scalar (2.0:float32). A raw\n"
      "kernel's writable (non-const pointer) arguments are shown after the launch; --out takes a\n"
      "parameter name or a 0-based position. --global NAME=SOURCE writes a raw_module's\n"
      "__device__ or __constant__ global before the launch (its byte size must match: 2.5:float32\n"
      "for a float). --block defaults to 256 (elementwise: kernc's choice; CuPy's block_size=),\n"
      "--grid to enough blocks for --size N elements or the largest array.\n"
      "--out may also name an array input, to keep generated data (e.g. --out x=x.npy).\n\n"
      "In-place calls: the SOURCE @NAME is no new data but the device buffer of argument NAME, so\n"
      "that an output can be one of the inputs, as CuPy's k(x, y, x): --arg x.npy --arg y.npy\n"
      "--arg @x (or --in z=@x); a view may follow (@x[::2]). The output then shows (or --out writes)\n"
      "that buffer as the kernel left it. Raw kernels: @K names the argument at 0-based position K.\n"
      "Reductions: --axis '()' reduces no axis (CuPy's axis=()): the output has the inputs' broadcast\n"
      "shape, each element post_map(map(x)) of one element; without --axis every axis is reduced.\n"
      "--read-global NAME[:DTYPE[:SHAPE]][=FILE.npy] reads a raw_module's __device__ or __constant__\n"
      "global back after the launches and shows it like an output, or writes it to FILE.npy. DTYPE\n"
      "defaults to that of --global NAME=SOURCE (SHAPE then to its shape), else is required; without\n"
      "SHAPE the global is a vector of every element, its byte size a multiple of DTYPE's.\n"
      "Outputs and globals are read after the last launch: with --repeat N, after N + 1 of them.\n\n"
      "Without --out an output is summarised (dtype, shape, min/max/mean of the finite values,\n"
      "the first elements); --print shows every element (at most {}). --repeat N times N more\n"
      "launches with CUDA events after the first (on the CPU: host clock times) and prints the\n"
      "median and minimum kernel time and the effective bandwidth (bytes of the array inputs' and\n"
      "outputs' elements / median time).\n\n"
      "Devices: --device N (or cuda:N) runs on GPU N of the runtime KERNC_RUNTIME names (default\n"
      "cuda); --device cpu runs on this machine's cores (the host backend: the system C++ compiler\n"
      "builds a shared object for the CPU's ISA level, e.g. cpu-x86-64-v3), whatever KERNC_RUNTIME\n"
      "says. Every kind of kernel and every option above works there, but --cluster; --cooperative\n"
      "runs the whole grid as fibers, so that grid.sync() works; --pdl and --priority are taken and\n"
      "change nothing (launches run in order there).\n\n"
      "{}\n\n"
      "Examples:\n"
      "  kernc run examples/kernels.json --kernel saxpy --in a=2.0 --in x=random:1000000:float32 \\\n"
      "      --in y=random:1000000:float32 --repeat 20\n"
      "  kernc run examples/kernels.json --kernel saxpy --arg 2.0 --arg 'random:4096x4096:float32.T' \\\n"
      "      --arg 'random:4096:float32[None, :]' --repeat 20\n"
      "  kernc run examples/kernels.json --kernel saxpy --in a=2.0 --in x=arange:8:float32 --in y=ones:8:float32 \\\n"
      "      --device cpu --print\n"
      "  kernc run examples/kernels.json --kernel sum_of_squares --in x=x.npy --axis 1 --out y=y.npy\n"
      "  kernc run examples/kernels.json --kernel sum_of_squares --arg x.npy --axis '()' --out y=y.npy\n"
      "  kernc run examples/kernels.json --kernel saxpy --arg 2.0 --arg x.npy --arg y.npy --arg @y --out z=z.npy\n"
      "  kernc run examples/kernels.json --kernel fill --in out=zeros:1000:float32 --in value=2.5 \\\n"
      "      --in n=1000 --print\n"
      "  kernc run examples/kernels.json --kernel scaling --function 'axpby<float>' --arg 2:float32 \\\n"
      "      --arg random:4096:float32 --arg 0.5:float32 --arg ones:4096:float32 --arg 4096",
      kSourceSyntax, kViewSyntax, kPrintLimit,
      exit_codes_help({kExitCompileFailed, kExitEnvironment, kExitIo, kExitNoGpu, kExitNotPrecompiled})));
  sub->add_option("spec", options->spec, "Spec file (JSON; see docs/spec-format.md)")->required();  // a missing file: exit 4
  sub->add_option("-k,--kernel", options->kernel, "The kernel to run, by its name in the spec")->required();
  sub->add_option("--function", options->function, "raw_module kernels: the function or name expression to launch");
  sub->add_option("--in", options->inputs, "NAME=SOURCE: the value of parameter NAME (see SOURCE below)")
      ->allow_extra_args(false);
  sub->add_option("--arg", options->args, "SOURCE: the next argument, in parameter order")->allow_extra_args(false);
  sub->add_option("--out", options->outputs, "NAME=FILE.npy: write output NAME to a .npy file")->allow_extra_args(false);
  sub->add_option("--bind", options->bindings, "LETTER=DTYPE: bind a type placeholder no argument decides (T=float32)")
      ->allow_extra_args(false);
  sub->add_option("--axis", options->axis,
                  "Reductions: the axes to reduce, e.g. 1 or 0,-1, or '()' for none (default: all)");
  sub->add_flag("--keepdims", options->keepdims, "Reductions: keep reduced axes with extent 1");
  sub->add_option("--grid", options->grid, "Raw kernels: grid size X[,Y[,Z]]");
  sub->add_option("--block", options->block,
                  "Raw kernels: block size X[,Y[,Z]] (default 256); elementwise: threads per block");
  sub->add_option("--global", options->globals, "NAME=SOURCE: raw_module kernels: set a __device__/__constant__ global")
      ->allow_extra_args(false);
  sub->add_option("--read-global", options->read_globals,
                  "NAME[:DTYPE[:SHAPE]][=FILE.npy]: raw_module kernels: read a global back after the launches")
      ->allow_extra_args(false);
  sub->add_option("--shared", options->shared, "Raw kernels: dynamic shared memory in bytes");
  sub->add_flag("--cooperative", options->cooperative,
                "Raw kernels: a cooperative launch (cuLaunchCooperativeKernel; CuPy's enable_cooperative_groups), so "
                "that grid.sync() works; the grid must fit on the GPU at once");
  sub->add_option("--cluster", options->cluster,
                  "Raw kernels: thread-block cluster dimensions X[,Y[,Z]] (sm_90+; cuLaunchKernelEx), so that "
                  "cooperative_groups::this_cluster() spans them; each grid extent must be a multiple");
  sub->add_flag("--pdl", options->pdl,
                "Raw kernels: programmatic dependent launch (sm_90+): the kernel may start before the previous one on "
                "the stream ends (with --repeat, its own previous launch); cudaGridDependencySynchronize() waits for it");
  sub->add_option("--priority", options->priority,
                  "Raw kernels: the launch's priority, in the GPU's stream-priority range (lower is more urgent)");
  sub->add_option("--size", options->size,
                  "Elementwise: the loop size when every array is raw; raw kernels: the element count the default "
                  "grid covers")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--repeat", options->repeat, "Time N launches after the first with CUDA events");
  sub->add_option("--device", options->device,
                  "Where the kernel runs: a GPU ordinal (default 0), cuda:N, or cpu (this machine's cores, the host "
                  "backend; as KERNC_RUNTIME=cpu)");
  sub->add_flag("--print", options->print, "Print every element of the outputs (at most 1000)");
  sub->add_option("--format", options->format, "Output format: text, or one JSON document (--print does not apply)")
      ->check(CLI::IsMember({"text", "json"}));
  return {sub, [options, &global] { return run_run(*options, global); }};
}

}  // namespace kernc::cli
