#pragma once
// The host backend's compiler: the system C++ compiler, run as a process, turning a
// program's CUDA C++ into a shared object (NOTE [ host compiler ] in host_compiler.cpp).

#include <memory>
#include <string>
#include <vector>

#include "kernc/compiler.hpp"

namespace kernc::compiler {

/// Finds the host C++ compiler (KERNC_HOST_CXX, else g++, clang++ or c++ on PATH) and asks
/// it what it is. Throws kernc::Error(library_not_found) naming what was tried.
std::shared_ptr<const Compiler> load_host_compiler(const CompilerLibraryPaths& paths);

/// The one place CompileOptions become host compiler flags (before the file names).
std::vector<std::string> host_flags(const CompileOptions& options, const Target& target);

}  // namespace kernc::compiler
