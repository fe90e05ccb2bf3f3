#pragma once
// The NVRTC implementation of kernc::Compiler.

#include <memory>

#include "kernc/compiler.hpp"

namespace kernc::compiler {

/// Loads libnvrtc (see NvrtcApi::candidates) and returns a compiler over it.
std::shared_ptr<const Compiler> load_nvrtc(const CompilerLibraryPaths& paths);

/// The one place CompileOptions become NVRTC flags.
/// `toolkit_dirs` (the toolkit include directories) come after the options' own.
std::vector<std::string> nvrtc_flags(const CompileOptions& options, const Target& target,
                                     const std::vector<std::string>& toolkit_dirs = {});

}  // namespace kernc::compiler
