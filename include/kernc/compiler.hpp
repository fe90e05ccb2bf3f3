#pragma once
/// \file
/// One compiler interface with NVRTC, HIPRTC and host C++ compiler implementations.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernc/program.hpp"
#include "kernc/target.hpp"
#include "kernc/export.hpp"

namespace kernc {

/// What a compiler library says it is, and where it was found.
///
/// The cache key names a compiler by what it reports (release and supported targets),
/// never by its file's path or bytes: one release installed from two packages (the
/// toolkit, a pip wheel, a container layer) shares cache entries, and two releases never
/// do (see NOTE [ cache key ] in src/cache/cache_key.hpp).
struct KERNC_API CompilerIdentity {
  Backend backend = Backend::cuda;
  std::string library_path;         ///< the file that was loaded (informational, not in the key)
  std::string version;              ///< the release it reports, e.g. "13.0"
  std::vector<std::string> targets;  ///< the architectures it reports supporting, sorted
  /// The toolkit include directories passed to every compile after the program's own
  /// (informational: their identity below is what the key holds).
  std::vector<std::string> include_dirs;
  /// What identifies those directories' contents: "cuda 13000, cccl 3000100, 1982 files
  /// sha256:..." (versions read from the headers; a digest of every file's path and size),
  /// or "none". A header input of every program, so part of the compiler's identity.
  std::string headers = "none";
  std::string include_source;        ///< where the directories came from (for `kernc info`)
  std::string str() const;           ///< "nvrtc 13.0"
  /// The reported facts as hashed into cache keys: backend, release, targets, headers.
  std::string reported() const;
  /// 16 hex digits of SHA-256 over reported(): the compiler part of a cache key.
  std::string tag() const;
};

/// Compiles Programs for Targets of one backend. Thread-safe: compile() may be called
/// from several threads at once; NVRTC compiles run in parallel, HIPRTC compiles take
/// turns (see NOTE [ HIPRTC threads ] in src/compiler/hiprtc_compiler.cpp).
class KERNC_API Compiler {
 public:
  virtual ~Compiler() = default;
  virtual Backend backend() const noexcept = 0;
  virtual const CompilerIdentity& identity() const noexcept = 0;
  /// Human-readable names of the architectures this compiler accepts ("sm_75", ..., "gfx90a").
  virtual std::vector<std::string> supported_targets() const = 0;
  /// Throws kernc::Error(unsupported_target) listing supported_targets() if `target` is not one.
  virtual void check_target(const Target& target) const = 0;
  /// The exact flags compile() would pass; pure, no compiler call.
  virtual std::vector<std::string> flags(const CompileOptions& options,
                                         const Target& target) const = 0;
  /// Compiles; throws kernc::Error(compile_failed) with the log, source, flags and target.
  virtual CompiledProgram compile(const Program& program, const Target& target) const = 0;
};

/// Where to look for the compiler libraries; filled from the environment at the edge (Config).
struct KERNC_API CompilerLibraryPaths {
  std::string nvrtc_override;   ///< KERNC_NVRTC_LIBRARY: tried first and alone when set
  std::string hiprtc_override;  ///< KERNC_HIPRTC_LIBRARY
  std::string cuda_home;        ///< CUDA_HOME / CUDA_PATH, searched after the sonames
  std::string rocm_home;        ///< ROCM_PATH / HIP_PATH: where ROCm's include/ is looked for
  std::string host_cxx;         ///< KERNC_HOST_CXX: the host backend's C++ compiler; empty: found on PATH
  /// KERNC_CUDA_INCLUDE / KERNC_ROCM_INCLUDE: the toolkit include directories, separated by
  /// ':', or "none"; unset, they are found next to the compiler (see CompilerIdentity).
  std::optional<std::string> cuda_include;
  std::optional<std::string> rocm_include;
  /// KERNC_DRIVER_COMPILE_CACHE: whether NVRTC may take binaries from, and add them to, the
  /// CUDA driver's compute cache (~/.nv/ComputeCache). Off by default (NOTE [ the driver's
  /// compute cache ] in src/compiler/nvrtc_compiler.cpp).
  bool driver_compile_cache = false;
};

/// Loads the compiler of a backend. Throws kernc::Error(library_not_found) listing every
/// path tried, or (backend_disabled) when this build left the backend out.
KERNC_API std::shared_ptr<const Compiler> load_compiler(Backend backend, const CompilerLibraryPaths& paths);

/// The compiler of `backend` with each compile run in one of up to `max_workers` worker
/// processes, each started as `worker_command` (a program that calls
/// serve_compile_requests(3), such as `kernc __compile-worker`) on the first compile that
/// finds none idle, and kept for the next. Same identity, flags and binaries as
/// load_compiler's; a compile error comes back as the same Error, a worker that dies fails
/// the compile it ran with ErrorCode::compiler_api naming the program and how the worker
/// ended. NVRTC runs part of every compile under a process-wide lock and HIPRTC all of it,
/// so threads of one process do not use the machine's cores (NOTE [ compile worker
/// processes ], src/compiler/compile_workers.cpp). Backend::cpu gives load_compiler's
/// compiler: the host compiler already runs as a process.
KERNC_API std::shared_ptr<const Compiler> compile_in_workers(Backend backend, const CompilerLibraryPaths& paths,
                                                             std::vector<std::string> worker_command,
                                                             unsigned max_workers);

/// The argument that makes the kernc CLI a compile worker: `kernc __compile-worker` calls
/// serve_compile_requests(3). An Engine's workers (Config::compile_workers) run it so.
inline constexpr const char* kCompileWorkerArgument = "__compile-worker";

/// The worker side of compile_in_workers: answers requests on file descriptor `fd` until
/// the client closes it, and returns the process's exit status (0 at a clean end).
KERNC_API int serve_compile_requests(int fd);

/// Whether this build includes a backend (HIP needs hip/hiprtc.h at build time).
KERNC_API bool backend_built(Backend backend) noexcept;

}  // namespace kernc
