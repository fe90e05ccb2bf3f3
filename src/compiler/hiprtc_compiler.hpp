#pragma once
// The HIPRTC implementation of kernc::Compiler (built only with KERNC_WITH_HIP).

#include <memory>

#include "kernc/compiler.hpp"

namespace kernc::compiler {

/// Loads HIPRTC (see HiprtcApi::candidates) and returns a compiler over it.
std::shared_ptr<const Compiler> load_hiprtc(const CompilerLibraryPaths& paths);

/// The one place CompileOptions become HIPRTC flags.
/// `toolkit_dirs` (the toolkit include directories) come after the options' own.
std::vector<std::string> hiprtc_flags(const CompileOptions& options, const Target& target,
                                     const std::vector<std::string>& toolkit_dirs = {});

}  // namespace kernc::compiler
