#pragma once
// What a RawKernel / RawModule keeps once loaded: per device, the module and its program;
// for a RawModule made from files, the files it was read from.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"
#include "kernels/handle_table.hpp"
#include "kernc/runtime.hpp"

namespace kernc::detail {

/// One number for a call's device choice (ordinal and backend, unset apart), for keys.
inline int device_slot(const CallOptions& options) noexcept {
  return options.device * 4 + (options.backend ? 1 + static_cast<int>(*options.backend) : 0);
}

/// One parameter of a kernel as declared in its source (public: include/kernc/kernels.hpp).
using DeclaredParam = RawParameter;

/// What a launch of one function on one device needs, found once: the loaded function and
/// what is known of its parameters. A repeated launch looks this up and does nothing else
/// before packing (no cuModuleGetFunction, no declaration copy).
struct RawLaunchEntry {
  Function function;
  /// The declaration read from the source; for a name expression ("axpby<float>") only the
  /// template's parameter count is kept (its types are placeholders), so this is empty.
  std::optional<std::vector<DeclaredParam>> declared;
  /// The parameter count when the source says it (a declaration or the template's).
  std::optional<std::size_t> count;
  /// The driver's parameter sizes, asked on first need only (see sizes_for in raw_call.cpp).
  std::optional<std::vector<std::size_t>> sizes;
  std::uint64_t engine = 0;  ///< Engine::id() it was loaded through (detail::Prepared)
};

struct ModuleFiles;  // raw_module_file.hpp

struct RawState {
  /// A RawModule made from files: its binaries and their bytes (null for source). load_raw
  /// (raw_call.cpp) loads these with load_module_files instead of compiling a program.
  /// Set once, before the state is shared; immutable after.
  std::shared_ptr<const ModuleFiles> files;
  /// The program of a kernel or module of source (raw_program of its definition's copies);
  /// set once, before the state is shared.
  std::function<Program()> make_program;
  std::mutex mutex;
  std::map<std::tuple<std::uint64_t, int>, Engine::Loaded> loaded;  // by Engine::id() and device_slot()
  /// Declared parameters by kernel name, read from the source once (not per launch).
  std::map<std::string, std::optional<std::vector<DeclaredParam>>> declared;
  /// Launch entries by engine, device ordinal and function name (as the caller names it).
  /// std::map: entries stay where they are while others are added, so a launch may use
  /// one after the lock is released.
  std::map<std::tuple<std::uint64_t, int, std::string>, RawLaunchEntry> launches;  // by engine, device_slot(), function
  /// operator()'s and RawModule::launch's last plans (NOTE [ call memo ], src/kernels/call.cpp).
  RecentCalls recent;
};

/// The template a name expression instantiates: "axpby<float>" → "axpby". Its declaration
/// gives the instance's parameter count and pointer-ness, not its (placeholder) types.
std::string template_name(const std::string& expression);

/// The parameters of `__global__ void name(...)` in `source`, if it can be found and read.
std::optional<std::vector<DeclaredParam>> declared_params(const std::string& source, const std::string& name);

/// The parameters of the template instance a name expression names ("k<float *>"): the
/// template's declaration with each type parameter replaced by the instance's argument
/// (or its default), so `T p` of `k<float *>` is a pointer. std::nullopt when the template
/// header or the arguments cannot be read (a parameter pack, deduced arguments).
std::optional<std::vector<DeclaredParam>> instance_params(const std::string& source, const std::string& expression);

}  // namespace kernc::detail
