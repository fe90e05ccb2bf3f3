#pragma once
// What a RawKernel / RawModule keeps once loaded: per device, the module and its program.

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kernc/engine.hpp"
#include "kernc/plan.hpp"

namespace kernc::detail {

/// One parameter of a kernel as declared in its source (public: include/kernc/plan.hpp).
using DeclaredParam = RawParameter;

struct RawState {
  std::mutex mutex;
  std::map<std::pair<const Engine*, int>, Engine::Loaded> loaded;  // by engine and device ordinal
  /// Declared parameters by kernel name, read from the source once (not per launch).
  std::map<std::string, std::optional<std::vector<DeclaredParam>>> declared;
  /// The driver's parameter sizes by function name, asked once (see sizes_once in raw_call.cpp).
  std::map<std::string, std::vector<std::size_t>> parameter_sizes;
};

/// The template a name expression instantiates: "axpby<float>" → "axpby". Its declaration
/// gives the instance's parameter count and pointer-ness, not its (placeholder) types.
std::string template_name(const std::string& expression);

/// The parameters of `__global__ void name(...)` in `source`, if it can be found and read.
std::optional<std::vector<DeclaredParam>> declared_params(const std::string& source, const std::string& name);

}  // namespace kernc::detail
