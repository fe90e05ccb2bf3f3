#pragma once
// What a RawKernel / RawModule keeps once loaded: per device, the module and its program.

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kernc/engine.hpp"

namespace kernc::detail {

struct RawState {
  std::mutex mutex;
  std::map<int, Engine::Loaded> loaded;  // by device ordinal
};

/// One parameter of a kernel as declared in its source.
struct DeclaredParam {
  std::string text;
  bool pointer = false;
  std::optional<DType> dtype;  ///< for scalars whose C type kernc knows
};

/// The parameters of `__global__ void name(...)` in `source`, if it can be found and read.
std::optional<std::vector<DeclaredParam>> declared_params(const std::string& source, const std::string& name);

}  // namespace kernc::detail
