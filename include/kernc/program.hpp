#pragma once
/// \file
/// The input of a compile and its result.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernc/compile_options.hpp"
#include "kernc/target.hpp"
#include "kernc/export.hpp"

namespace kernc {

/// What a program was generated for, recorded in its cache entry so that `kernc cache ls`
/// can name it. Descriptive only: it is not part of the cache key (two kernels that
/// generate the same program share one entry, which names the first one compiled).
struct KERNC_API ProgramOrigin {
  std::string kernel;     ///< the kernel's (or raw module's) name; empty: unknown
  std::string signature;  ///< the variant's resolved types, e.g. "float32, float32 -> float32"; empty for raw code
  std::string layout;     ///< the variant's layout class, e.g. "contiguous"; empty for raw code
};

/// Source code plus everything that decides how it compiles, except the target.
struct KERNC_API Program {
  std::string name = "kernel.cu";              ///< file name the compiler reports in its log
  std::string source;                          ///< the whole translation unit
  std::vector<std::string> name_expressions;   ///< e.g. "my_kernel<float, 4>"
  CompileOptions options;
  ProgramOrigin origin;                        ///< not hashed: see ProgramOrigin
  /// The compiler may compile first without the CUDA runtime declarations device code
  /// rarely uses (NVRTC's -minimal: texture and surface types, device-side cudaMalloc and
  /// launches, driver types), and compiles again with them if that fails. It changes no
  /// binary, so it is not hashed; kernc's generated programs set it (NOTE [ minimal
  /// built-ins ] in src/compiler/nvrtc_compiler.cpp).
  bool try_minimal_builtins = false;
};

/// What a compiler produced for one Program and one Target.
struct KERNC_API CompiledProgram {
  Target target = Target::parse("sm_80");
  std::string binary;                           ///< cubin / PTX text / code object bytes
  std::map<std::string, std::string> lowered_names;  ///< name expression → mangled name
  std::string log;                              ///< compiler log (warnings), may be empty
  std::vector<std::string> flags;               ///< the exact flags the compiler was given
  std::string compiler;                         ///< human-readable compiler identity
  double compile_ms = 0;                        ///< wall time of the compile itself
  /// NVRTC took the binary from the CUDA driver's compute cache instead of compiling it
  /// (only possible with KERNC_DRIVER_COMPILE_CACHE=1; NOTE [ the driver's compute cache ]
  /// in src/compiler/nvrtc_compiler.cpp). Counted as CacheStats::driver_cache_hits, never as a compile.
  bool driver_cache_hit = false;

  /// The mangled name of a name expression; throws kernc::Error(not_found) listing the known ones.
  const std::string& lowered_name(const std::string& name_expression) const;
};

}  // namespace kernc
