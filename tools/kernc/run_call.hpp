#pragma once
// `kernc run`, between its stages: the command line as parsed, the run's plan (every
// argument read or made on the host and checked against the kernel, without a GPU), and
// the report. run_command.cpp reads the command line, run_plan.cpp makes the plan,
// run_execute.cpp runs it on the GPU.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernc/engine.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/spec_file.hpp"
#include "run_sources.hpp"

namespace kernc::cli {

struct RunCommandOptions {
  std::string spec;
  std::string kernel;
  std::string function;
  std::vector<std::string> inputs;    // NAME=SOURCE
  std::vector<std::string> args;      // SOURCE, in parameter order (raw kernels)
  std::vector<std::string> outputs;   // NAME=FILE.npy
  std::vector<std::string> bindings;  // T=DTYPE
  std::vector<std::string> globals;   // NAME=SOURCE (raw modules' __device__/__constant__ globals)
  std::vector<std::string> read_globals;  // NAME[:DTYPE[:SHAPE]][=FILE.npy], read back after the launches
  std::string axis;
  bool keepdims = false;
  std::string grid;
  std::string block;
  unsigned shared = 0;
  bool cooperative = false;
  std::string cluster;                // X[,Y[,Z]]: thread-block cluster dimensions
  bool pdl = false;                   // programmatic dependent launch
  std::optional<int> priority;
  std::int64_t size = -1;
  unsigned repeat = 0;
  std::string device = "0";  // --device as given: N (of the configured runtime), cuda[:N] or cpu
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

// Every argument of the call, read or made on the host, checked against the kernel.
struct Argument {
  std::string name;  // the parameter's name, or "#k" for an unnamed raw argument
  SourceValue value;
  // An "@NAME" SOURCE: the argument whose device buffer this one views (the one that owns
  // it, past any chain), and `value` has no data. See NOTE [ shared buffers ] in run_plan.cpp.
  std::string shares;
};

// A raw module's global read back after the launches (--read-global).
struct GlobalRead {
  std::string name;
  DType dtype = DType::float32;
  std::optional<std::vector<std::int64_t>> shape;  // else (bytes / itemsize,), or its --global's shape
  std::string file;                                // "" : shown, not written
};

struct RunPlan {
  const SpecKernel* entry = nullptr;
  /// The library's plan of the call (SpecKernel::plan), made once from descriptions of the
  /// arguments and launched by execute() as it is.
  Call call;
  std::vector<Argument> inputs;           // in parameter order (raw: argument order)
  std::vector<Argument> given_outputs;    // elementwise/reduction outputs given with --in: all or none
  std::vector<std::string> output_names;  // elementwise/reduction: out_params order
  std::vector<bool> show;                 // raw: which arguments are shown after the launch
  std::map<std::string, std::string> out_files;
  // Raw.
  std::string function;
  LaunchConfig launch;
  std::vector<Argument> globals;  // raw_module: written to the module's globals before the launch
  std::vector<GlobalRead> read_globals;  // raw_module: read back after the launches
};

/// A usage error: exit 2.
inline Error usage(const std::string& message) { return Error(ErrorCode::invalid_argument, message); }

/// The run's plan from the command line: every usage error is raised here, before any
/// launch. `call` holds the engine, device and multiprocessor count the call is planned for.
RunPlan make_plan(const Spec& spec, const RunCommandOptions& options, const CallOptions& call);

/// Uploads the arguments, launches the plan's call (reporting what the first launch cost),
/// times --repeat launches and shows or writes the results. Returns the exit code.
int execute(const RunPlan& plan, const RunCommandOptions& options, Engine& engine, const Device& device,
            RunReport& report);

}  // namespace kernc::cli
