#pragma once
// The include directories of the toolkit a runtime compiler belongs to (CUDA: the
// toolkit's include/ and CCCL's; ROCm: its include/), passed after the program's own, as
// CuPy passes them, so that `#include <cuda/std/complex>` or <cuda_fp16.h> resolves.
// They are a header input of every program: their identity is part of the compiler's
// (CompilerIdentity::headers), and so of every cache key it writes.

#include <string>
#include <vector>

#include "kernc/compiler.hpp"

namespace kernc::compiler {

struct ToolkitIncludes {
  std::vector<std::string> dirs;  ///< in search order; empty when none was found or "none" was asked
  /// What identifies their contents: versions read from the headers, the file count and a
  /// digest of every file's relative path and size; "none" without directories.
  std::string identity = "none";
  std::string found_by;  ///< where they came from, for `kernc info` and errors
};

/// The CUDA toolkit's include directories for the NVRTC at `nvrtc_library`: the override
/// (KERNC_CUDA_INCLUDE) if given, else the first of CUDA_HOME/include, the include/ next to
/// the library's lib/ or lib64/ (symlinks resolved), /usr/local/cuda/include that has
/// cuda.h; its cccl/ subdirectory (CUDA 13) is added when present. Throws
/// kernc::Error(invalid_argument) for an override naming something that is not a directory.
ToolkitIncludes cuda_toolkit_includes(const CompilerLibraryPaths& paths, const std::string& nvrtc_library);

/// ROCm's include directory for HIPRTC: the override (KERNC_ROCM_INCLUDE), else
/// ROCM_PATH's (or HIP_PATH's) include/, else /opt/rocm/include, that has hip/hip_runtime.h.
/// A system-wide /usr/include (Debian's packages) is never used: HIPRTC has its own
/// builtin HIP headers, and the C library's headers would shadow them.
ToolkitIncludes rocm_includes(const CompilerLibraryPaths& paths);

/// The identity of `dirs` as described at ToolkitIncludes::identity (memoised per process).
std::string include_dirs_identity(const std::vector<std::string>& dirs);

}  // namespace kernc::compiler
