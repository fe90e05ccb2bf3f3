#pragma once
// What every kernc subcommand shares: the exit codes, the configuration (environment
// overridden by global flags), lazily loaded compilers, and a few printing helpers.

#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kernc/cache.hpp"
#include "kernc/compiler.hpp"
#include "kernc/config.hpp"
#include "kernc/error.hpp"

namespace kernc::cli {

/// NOTE [ exit codes ] — documented in README.md; tests/cli checks them.
enum ExitCode : int {
  kExitOk = 0,
  kExitCompileFailed = 1,  ///< the user's source did not compile (the log is printed)
  kExitUsage = 2,          ///< bad command line, bad target name, malformed option
  kExitEnvironment = 3,    ///< a library or backend is missing, or a target unsupported
  kExitIo = 4,             ///< a file could not be read or written
  kExitCacheDamaged = 5,   ///< `cache verify` found bad entries it did not remove
  kExitNotFound = 6,       ///< `cache inspect` found no such entry
  kExitNoGpu = 7,          ///< the command needs a GPU and there is none
  kExitNotPrecompiled = 8, ///< compiling is off and a kernel is in no cache; `cache check` found gaps
  kExitInternal = 70,      ///< a bug in kernc
};

/// "Exit codes: 0 ok, ..." for a --help footer: `codes` with what each means, and 0, 2 and
/// 70, which every command can return (README.md and docs/cli.md list them all).
std::string exit_codes_help(std::initializer_list<int> codes);

/// A command-line parse error in kernc's words (not CLI11's: "--target: At Most 1 required
/// but received 2"), with the command whose --help to read; for main().
std::string usage_message(const CLI::ParseError& error, const CLI::App& app);

/// The exit code that matches an error's code.
int exit_code_for(const Error& error);

/// Prints `error` to stderr as "kernc: error: MESSAGE", `prefix` (e.g. "kernel a (...) for
/// sm_80: ") before the message; for a compile error, the compiler log follows once: the
/// copy of its first error that ends the message is not printed a second time.
void print_error(const Error& error, const std::string& prefix = "");

/// Flags every subcommand accepts.
struct GlobalOptions {
  std::string cache_dir;
  bool no_cache = false;
  bool save_source = false;
  std::string log_level;
  std::string compile_policy;
  std::string cache_path;
  std::string remote_cache;
};

/// Adds the global flags to `app`.
void add_global_options(CLI::App& app, GlobalOptions& options);

/// The configuration from the environment with the global flags applied (sources say which).
Config resolve_config(const GlobalOptions& options);

/// NOTE [ fail before compiling ]
/// A command whose product is the cache (precompile, and compile SPEC.json, which is a
/// precompile) checks before it compiles anything that the cache directory can take what
/// it compiles, and otherwise fails at once (exit 4, the reason): a cache that cannot be
/// written is known at the start, and finding out after minutes of compiles helps nobody.
/// `kernc compile FILE.cu` does not: its product is the binary (-o) and the report, and
/// the cache a by-product, so an unusable or read-only cache only warns, once, and the
/// compile goes on (tests/cli/test_cache_commands.sh, tests/cli/test_faults.sh).
/// Throws kernc::Error(io) naming the directory and the reason.
void require_cache_directory(const CacheConfig& config, bool must_write, const std::string& command);

/// Loads compilers on first use, once per process.
class Compilers {
 public:
  explicit Compilers(CompilerLibraryPaths paths) : paths_(std::move(paths)) {}
  const Compiler& get(Backend backend);

 private:
  CompilerLibraryPaths paths_;
  std::map<Backend, std::shared_ptr<const Compiler>> loaded_;
};

/// Splits "sm_90,sm_80, gfx90a" at commas, trimming blanks and dropping empty items.
std::vector<std::string> split_list(const std::string& text);

/// "3f2a9c01d2e4" — enough of a key to find it again with `kernc cache inspect`.
std::string short_key(const std::string& key);

/// A subcommand: its CLI11 node and the function that runs it once parsed.
struct Subcommand {
  CLI::App* app;
  std::function<int()> run;
};

Subcommand setup_compile(CLI::App& app, const GlobalOptions& global);
Subcommand setup_cache(CLI::App& app, const GlobalOptions& global);
Subcommand setup_info(CLI::App& app, const GlobalOptions& global);
Subcommand setup_precompile(CLI::App& app, const GlobalOptions& global);
Subcommand setup_run(CLI::App& app, const GlobalOptions& global);

/// What `kernc precompile` is asked (shared by `precompile` and `compile SPEC.json`).
struct PrecompileRequest {
  std::string spec;
  std::string targets;
  unsigned jobs = 0;     ///< 0: the number of CPUs
  bool list = false;     ///< print each variant's key instead of compiling
  bool quiet = false;    ///< no progress
  std::string format = "text";
  std::string shard;     ///< "K/N": this job's part of a precompile split over N jobs; empty: all
  /// "processes": with -j > 1, NVRTC and HIPRTC compile in worker processes (kernc runs
  /// itself as kCompileWorkerArgument); "threads": in this process.
  std::string compile_in = "processes";
};

/// The argument with which kernc runs as a compile worker of its own precompile or of an
/// Engine's compiles (the library's own name for it).
inline constexpr const char* kCompileWorkerArgument = kernc::kCompileWorkerArgument;

/// `kernc cache check SPEC --target ...`: whether every variant of the spec can be served
/// for those devices from the caches alone (architecture ladder included); exit 0 or 8.
int run_cache_check(const std::string& spec_path, const std::string& target_list, const std::string& format,
                    const Config& config);

/// `kernc cache explain SPEC --kernel NAME --target ...`: which entry serves each variant
/// of the kernel for those devices, and for one that none serves, which inputs of the
/// nearest entry in the user's cache differ; exit 0 or 8.
int run_cache_explain(const std::string& spec_path, const std::string& kernel, const std::string& target_list,
                      const std::string& format, const Config& config);

/// Runs precompile for a spec file.
int run_precompile_spec(const PrecompileRequest& request, const GlobalOptions& global);

}  // namespace kernc::cli
