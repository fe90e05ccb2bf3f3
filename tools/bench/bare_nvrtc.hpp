#pragma once
// The floor for kernc's compile times: NVRTC called directly on the same source, with the
// program's headers by content and nothing but -arch and -std, as a hand-written host
// program would (issue 14: "cold compile ... vs raw NVRTC of the same source").

#include <string>

#include "kernc/program.hpp"

namespace bench {

/// Milliseconds nvrtcCreateProgram + nvrtcCompileProgram + getting the CUBIN take for
/// `program` compiled for `arch` ("sm_90"); throws std::runtime_error with the log on failure.
double bare_nvrtc_compile_ms(const kernc::Program& program, const std::string& arch);

}  // namespace bench
