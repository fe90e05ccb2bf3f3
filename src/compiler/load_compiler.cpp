#include <fmt/format.h>

#include "compiler/host_compiler.hpp"
#include "compiler/nvrtc_compiler.hpp"
#include "kernc/compiler.hpp"
#include "kernc/error.hpp"
#include "platform/sha256.hpp"
#ifdef KERNC_WITH_HIP
#include "compiler/hiprtc_compiler.hpp"
#endif

namespace kernc {

namespace {
const char* compiler_kind(Backend backend) {
  switch (backend) {
    case Backend::cuda: return "nvrtc";
    case Backend::hip: return "hiprtc";
    case Backend::cpu: return "host-c++";
  }
  return "unknown";
}
}  // namespace

std::string CompilerIdentity::str() const { return fmt::format("{} {}", compiler_kind(backend), version); }

std::string CompilerIdentity::reported() const {
  std::string text = fmt::format("{} {}", compiler_kind(backend), version);
  for (const auto& target : targets) text += " " + target;
  // "none" (no toolkit headers found) keeps the key of a compiler without them as it was.
  if (headers != "none") text += " headers " + headers;
  return text;
}

std::string CompilerIdentity::tag() const { return platform::sha256_hex(reported()).substr(0, 16); }

bool backend_built(Backend backend) noexcept {
#ifdef KERNC_WITH_HIP
  (void)backend;
  return true;
#else
  return backend != Backend::hip;
#endif
}

std::shared_ptr<const Compiler> load_compiler(Backend backend, const CompilerLibraryPaths& paths) {
  if (backend == Backend::cuda) return compiler::load_nvrtc(paths);
  if (backend == Backend::cpu) return compiler::load_host_compiler(paths);
#ifdef KERNC_WITH_HIP
  return compiler::load_hiprtc(paths);
#else
  throw Error(ErrorCode::backend_disabled,
              "this build of kernc has no HIP backend: hip/hiprtc.h was not found when it was configured "
              "(on Debian: apt-get install libamdhip64-dev, then re-run cmake)");
#endif
}

}  // namespace kernc
