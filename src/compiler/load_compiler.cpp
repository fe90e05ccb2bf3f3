#include <fmt/format.h>

#include "compiler/nvrtc_compiler.hpp"
#include "kernc/compiler.hpp"
#include "kernc/error.hpp"
#ifdef KERNC_WITH_HIP
#include "compiler/hiprtc_compiler.hpp"
#endif

namespace kernc {

std::string CompilerIdentity::str() const {
  return fmt::format("{} {}", backend == Backend::cuda ? "nvrtc" : "hiprtc", version);
}

bool backend_built(Backend backend) noexcept {
#ifdef KERNC_WITH_HIP
  (void)backend;
  return true;
#else
  return backend == Backend::cuda;
#endif
}

std::shared_ptr<const Compiler> load_compiler(Backend backend, const CompilerLibraryPaths& paths) {
  if (backend == Backend::cuda) return compiler::load_nvrtc(paths);
#ifdef KERNC_WITH_HIP
  return compiler::load_hiprtc(paths);
#else
  throw Error(ErrorCode::backend_disabled,
              "this build of kernc has no HIP backend: hip/hiprtc.h was not found when it was configured "
              "(on Debian: apt-get install libamdhip64-dev, then re-run cmake)");
#endif
}

}  // namespace kernc
