#pragma once
// The vendor compilers as the unit tests load them: the CUDA toolkit in /usr/local/cuda
// (compiler_paths), NVRTC and HIPRTC loaded once per process because loading hashes the
// library files. Shared by every unit test that compiles or loads a compiler of its own
// (test_nvrtc_compiler.cpp, test_compile_workers.cpp, test_toolkit_includes.cpp, ...).

#include <memory>

#include "kernc/compiler.hpp"

namespace kernc::test {

/// Where the tests find the compilers: the toolkit in /usr/local/cuda; everything else as
/// CompilerLibraryPaths' defaults (found next to NVRTC, the driver's cache off).
inline CompilerLibraryPaths compiler_paths() {
  CompilerLibraryPaths paths;
  paths.cuda_home = "/usr/local/cuda";
  return paths;
}

/// A compiler of its own for `backend` from `paths` (a test that changes the paths).
inline std::shared_ptr<const Compiler> load_for_tests(Backend backend, const CompilerLibraryPaths& paths = compiler_paths()) {
  return load_compiler(backend, paths);
}

/// NVRTC, loaded on first use and shared by every test of this process.
inline const Compiler& nvrtc() {
  static const std::shared_ptr<const Compiler> compiler = load_for_tests(Backend::cuda);
  return *compiler;
}

#ifdef KERNC_WITH_HIP
/// HIPRTC, loaded on first use and shared by every test of this process.
inline const Compiler& hiprtc() {
  static const std::shared_ptr<const Compiler> compiler = load_for_tests(Backend::hip);
  return *compiler;
}
#endif

}  // namespace kernc::test
