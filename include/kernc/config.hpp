#pragma once
/// \file
/// Configuration, read once at the edge (environment, then CLI flags) into one object that
/// remembers where each value came from. Nothing else in kernc calls getenv.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernc/cache.hpp"
#include "kernc/compiler.hpp"
#include "kernc/export.hpp"
#include "kernc/log.hpp"

namespace kernc {

/// A value and where it came from ("default", "KERNC_CACHE_DIR", "--cache-dir", ...).
template <class T>
struct Setting {
  T value{};
  std::string source = "default";
  void set(T new_value, std::string new_source) {
    value = std::move(new_value);
    source = std::move(new_source);
  }
};

struct KERNC_API Config {
  Setting<std::string> cache_dir;
  /// Read-only cache tiers searched after cache_dir: directories separated by ':'
  /// (KERNC_CACHE_PATH). See cache/FORMAT.md, "Read-only tiers".
  Setting<std::string> cache_path;
  /// "auto" (compile what the caches lack) or "never" (a kernel missing from every cache
  /// is an ErrorCode::not_precompiled error; no compiler is loaded) — KERNC_COMPILE.
  Setting<std::string> compile_policy{"auto", "default"};
  /// The shared Redis tier (KERNC_REMOTE_CACHE), parsed; none when unset. Its url may hold
  /// a password: show remote_cache.value->redacted().
  Setting<std::optional<RemoteCacheConfig>> remote_cache;
  Setting<std::uint64_t> cache_max_size;
  Setting<bool> cache_disabled;
  Setting<bool> save_sources;
  /// KERNC_DRIVER_COMPILE_CACHE: NVRTC may use the CUDA driver's compute cache (default off).
  Setting<bool> driver_compile_cache;
  /// Precompiled headers between compiles of one process (KERNC_PCH; see CacheConfig).
  Setting<bool> precompiled_headers{true, "default"};
  /// Worker processes for an Engine's NVRTC / HIPRTC compiles (KERNC_COMPILE_WORKERS: a
  /// count, or "auto" for one per hardware thread). 0, the default: compiles run in this
  /// process. N > 0: each runs in one of up to N processes of compile_worker, started on
  /// the first compiles that find none idle and kept, so that concurrent first calls use
  /// the machine's cores (NVRTC holds a process-wide lock for part of every compile). Same
  /// keys and binaries either way. The host backend always compiles in processes of its
  /// own. NOTE [ compile workers of an engine ], src/kernels/compile_worker_program.cpp.
  Setting<int> compile_workers;
  /// The program a compile worker runs, as `PROGRAM __compile-worker` (KERNC_COMPILE_WORKER):
  /// a kernc executable of this very build. Empty with source "default": the kernc CLI
  /// installed beside this library (or in its build tree); the CLI sets itself.
  Setting<std::string> compile_worker;
  Setting<std::string> nvrtc_library;
  Setting<std::string> hiprtc_library;
  Setting<std::string> cuda_home;
  /// ROCM_PATH, else HIP_PATH: ROCm's root, whose include/ HIPRTC is given.
  Setting<std::string> rocm_home;
  /// The toolkit include directories passed to NVRTC / HIPRTC after a program's own
  /// (KERNC_CUDA_INCLUDE / KERNC_ROCM_INCLUDE: directories separated by ':', or "none").
  /// Empty with source "default": found next to the compiler (see CompilerIdentity).
  Setting<std::string> cuda_include;
  Setting<std::string> rocm_include;
  Setting<std::string> cuda_driver_library;
  /// The HIP runtime library (libamdhip64) for KERNC_RUNTIME=hip (KERNC_HIP_LIBRARY). Not
  /// the compiler's: from ROCm 6 on, HIPRTC is a library of its own (libhiprtc).
  Setting<std::string> hip_runtime_library;
  /// Which runtime launches kernels: "cuda" (default), "hip" (compile-tested only) or
  /// "cpu", the host's own cores (KERNC_RUNTIME).
  Setting<std::string> runtime;
  /// The host backend's C++ compiler (KERNC_HOST_CXX): a command on PATH or a path; unset,
  /// the first of g++, clang++ and c++ on PATH.
  Setting<std::string> host_cxx;
  /// The host backend's worker threads (KERNC_CPU_THREADS); 0, the default: one per
  /// hardware thread.
  Setting<int> cpu_threads;
  /// The library logger's level (KERNC_LOG_LEVEL), as to_string(LogLevel) names it.
  Setting<std::string> log_level;
  /// Whether kernc opens NVTX ranges for profilers (KERNC_NVTX=1; include/kernc/profiling.hpp).
  Setting<bool> nvtx;

  /// Reads KERNC_CACHE_DIR, KERNC_CACHE_PATH, KERNC_REMOTE_CACHE, KERNC_COMPILE, XDG_CACHE_HOME, HOME, KERNC_CACHE_MAX_SIZE, KERNC_CACHE_DISABLE,
  /// KERNC_SAVE_SOURCE, KERNC_DRIVER_COMPILE_CACHE, KERNC_PCH, KERNC_COMPILE_WORKERS, KERNC_COMPILE_WORKER, KERNC_NVRTC_LIBRARY, KERNC_HIPRTC_LIBRARY,
  /// CUDA_HOME/CUDA_PATH, KERNC_CUDA_LIBRARY, KERNC_HIP_LIBRARY, KERNC_RUNTIME, KERNC_HOST_CXX, KERNC_CPU_THREADS,
  /// KERNC_LOG_LEVEL and KERNC_NVTX. Throws kernc::Error(invalid_argument) naming a malformed variable.
  static Config from_environment();
  /// The same, with an injectable lookup (for tests).
  static Config from_environment(const std::function<const char*(const char*)>& lookup);

  CacheConfig cache_config() const;
  CompilerLibraryPaths compiler_paths() const;
};

/// Checks a compile policy ("auto" or "never"); throws kernc::Error(invalid_argument) naming `what`.
KERNC_API void check_compile_policy(const std::string& policy, const std::string& what);

/// The most compile worker processes a setting may ask for.
inline constexpr int kMaxCompileWorkers = 1024;

/// Reads a compile worker count: digits from 0 to kMaxCompileWorkers, or "auto" (one per
/// hardware thread); throws kernc::Error(invalid_argument) naming `what` and the text.
KERNC_API int parse_compile_workers(const std::string& text, const std::string& what);

/// The command compile worker processes run for `config`: {program, kCompileWorkerArgument},
/// the program being Config::compile_worker when set (it must be an executable file), else
/// the kernc executable beside this library. Throws Error(library_not_found) naming what
/// was tried and how to set it. An Engine's workers and `kernc precompile -j N` run it.
KERNC_API std::vector<std::string> compile_worker_command(const Config& config);

/// Parses a size such as "1048576", "512M", "4G", "2GiB", "1.5G"; throws kernc::Error(invalid_argument)
/// naming `what` and the text.
KERNC_API std::uint64_t parse_size(const std::string& text, const std::string& what);

/// Formats a byte count for people: "1.5 GiB", "320 KiB", "12 B".
KERNC_API std::string format_size(std::uint64_t bytes);

}  // namespace kernc
