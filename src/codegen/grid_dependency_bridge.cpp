#include "codegen/grid_dependency_bridge.hpp"

#include <string>
#include <string_view>

#include "core/templates.hpp"

namespace kernc::codegen {

namespace {
constexpr std::string_view kGridDependencyBridge = "kernc/grid_dependency_bridge.cuh";
}  // namespace

void bridge_grid_dependency(Program& program) {
  const std::string& source = program.source;
  const bool named = source.find("cudaGridDependencySynchronize") != std::string::npos ||
                     source.find("cudaTriggerProgrammaticLaunchCompletion") != std::string::npos;
  if (!named || source.find("cuda_device_runtime_api.h") != std::string::npos) return;
  program.source = "#include \"" + std::string(kGridDependencyBridge) + "\"\n#line 1\n" + source;
  program.options.headers[std::string(kGridDependencyBridge)] = std::string(template_file("grid_dependency_bridge.cuh"));
}

}  // namespace kernc::codegen
