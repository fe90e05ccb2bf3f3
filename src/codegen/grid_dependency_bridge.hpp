#pragma once
// Raw code using programmatic dependent launch's device functions (NOTE [ grid dependency
// bridge ], templates/grid_dependency_bridge.cuh).

#include "kernc/program.hpp"

namespace kernc::codegen {

/// Where `program`'s source names cudaGridDependencySynchronize or
/// cudaTriggerProgrammaticLaunchCompletion and does not include cuda_device_runtime_api.h,
/// includes kernc's definitions of both first, followed by `#line 1`, so that compile
/// errors keep the user's line numbers, and adds the file to the program's headers (so its
/// bytes are part of the key). Other sources are left as they are.
void bridge_grid_dependency(Program& program);

}  // namespace kernc::codegen
