#pragma once
/// \file
/// Typed compile options. They become compiler flags in exactly one function per
/// compiler (nvrtc_flags in src/compiler/nvrtc_compiler.cpp, hiprtc_flags in
/// src/compiler/hiprtc_compiler.cpp) and canonical bytes for the cache key.

#include <map>
#include <string>
#include <vector>
#include "kernc/export.hpp"

namespace kernc {

/// Options common to NVRTC and HIPRTC.
struct KERNC_API CompileOptions {
  /// C++ dialect: "c++11", "c++14", "c++17" or "c++20".
  std::string language_standard = "c++17";
  /// Preprocessor macros: name → value; an empty value means `-DNAME`.
  std::map<std::string, std::string> defines;
  /// Directories searched for `#include`, in order. See NOTE [ include dirs ] in cache/FORMAT.md:
  /// files found through them are not part of the cache key; prefer `headers`.
  std::vector<std::string> include_dirs;
  /// Extra headers handed to the compiler by name → content; their bytes are hashed into the key.
  std::map<std::string, std::string> headers;
  bool fast_math = false;  ///< --use_fast_math (NVRTC) / -ffast-math (HIPRTC)
  bool line_info = false;  ///< keep line information for profilers
  bool debug = false;      ///< device debug information (-G / -g)
  /// Passed verbatim after the typed flags, and hashed verbatim. An escape hatch.
  std::vector<std::string> raw_flags;
};

/// Throws kernc::Error(invalid_argument) naming the first malformed field
/// (unknown standard, a define name that is not an identifier, an empty header name, ...).
KERNC_API void validate(const CompileOptions& options);

/// A stable byte string that identifies the options: equal for options that produce
/// the same flags, different otherwise. It feeds the cache key (see NOTE [ cache key ]).
KERNC_API std::string canonical_bytes(const CompileOptions& options);

}  // namespace kernc
