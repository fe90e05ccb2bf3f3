#pragma once
// Raw code written for CuPy's translate_cucomplex=True (NOTE [ cuComplex bridge ],
// templates/cucomplex_bridge.cuh).

#include <string>

#include "kernc/program.hpp"

namespace kernc::codegen {

/// Where `program`'s source includes <cuComplex.h> (CuPy's pattern: `#include <cuComplex.h>`,
/// spaces allowed), includes kernc's bridge right after it, followed by a #line directive
/// so that compile errors keep the user's line numbers, and adds the bridge to the
/// program's headers (so its bytes are part of the key). Other sources are left as they are.
void bridge_cucomplex(Program& program);

}  // namespace kernc::codegen
