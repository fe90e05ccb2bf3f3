// kernc precompile SPEC --target sm_80,sm_90,gfx90a [-j N]: build every variant a later
// call could need for the spec's kernels and signatures, in parallel, into the cache.
// `kernc compile SPEC.json` runs the same thing (see compile_command.cpp).

#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "cli_context.hpp"
#include "kernc/kernels.hpp"
#include "kernc/spec_file.hpp"

namespace kernc::cli {

namespace {

struct PrecompileCommandOptions {
  std::string spec;
  std::string targets;
  unsigned jobs = 0;
  bool list = false;
  bool quiet = false;
};

// Prints a failure, unless the same kernel already failed the same way for the same
// target in another variant (one typo would otherwise print a dozen identical logs).
void print_failure(const PrecompileEvent& event, std::set<std::string>& seen) {
  const Error& error = *event.error;
  const auto* failure = error.compile_failure();
  std::string identity = fmt::format("{}|{}|{}", event.kernel, event.target.str(), failure ? failure->log : error.what());
  if (!seen.insert(identity).second) return;
  fmt::print(stderr, "kernc: error: kernel {} ({}) for {}: {}\n", event.kernel, event.description,
             event.target.str(), error.what());
  if (failure) fmt::print(stderr, "{}\n", failure->log);
}

}  // namespace

int run_precompile_spec(const std::string& spec_path, const std::string& target_list, unsigned jobs, bool list,
                        bool quiet, const GlobalOptions& global) {
  Config config = resolve_config(global);
  Spec spec = load_spec(spec_path);
  std::vector<Target> targets;
  for (const auto& name : split_list(target_list)) targets.push_back(Target::parse(name));
  if (targets.empty()) throw Error(ErrorCode::invalid_argument, "--target names no target");
  Cache cache(config.cache_config());
  Compilers compilers(config.compiler_paths());
  if (list) {
    for (const auto& target : targets) {
      const Compiler& compiler = compilers.get(target.backend());
      for (const auto& variant : spec.variants()) {
        fmt::print("{}  {:<8} {:<14} {}\n", cache.key(variant.program, target, compiler), target.str(), variant.kernel,
                   variant.description);
      }
    }
    return kExitOk;
  }
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  const bool progress = !quiet && ::isatty(STDOUT_FILENO);
  std::set<std::string> seen_failures;
  std::mutex compilers_mutex;
  auto compiler_for = [&](Backend backend) -> const Compiler& {
    std::lock_guard<std::mutex> lock(compilers_mutex);
    return compilers.get(backend);
  };
  auto summary = precompile(spec, targets, cache, compiler_for, jobs,
                            [&](const PrecompileEvent& event, std::size_t done, std::size_t total) {
                              if (event.failed) {
                                if (progress) fmt::print("\r\033[K");
                                std::fflush(stdout);
                                print_failure(event, seen_failures);
                              }
                              if (progress) {
                                fmt::print("\r\033[K[{}/{}] {} {} {}", done, total, event.target.str(),
                                           event.kernel, event.description);
                                std::fflush(stdout);
                              }
                            });
  if (progress) fmt::print("\r\033[K");
  fmt::print("{} program(s) ({} variant(s) of {} kernel(s) x {} target(s)): {} compiled, {} cache hit(s), {} failed "
             "in {:.1f} s ({} jobs)\n",
             summary.total, summary.total / targets.size(), spec.kernels.size(), targets.size(), summary.compiled,
             summary.hits, summary.failed, summary.seconds, jobs);
  if (summary.failed > seen_failures.size()) {
    fmt::print(stderr, "({} failure(s) repeated an error shown above in another variant)\n",
               summary.failed - seen_failures.size());
  }
  if (summary.failed == 0) return kExitOk;
  for (const auto& failure : summary.failures) {
    if (failure.error->code() == ErrorCode::compile_failed) return kExitCompileFailed;
  }
  return exit_code_for(*summary.failures.front().error);
}

Subcommand setup_precompile(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<PrecompileCommandOptions>();
  auto* sub = app.add_subcommand("precompile", "Compile every variant of a spec file's kernels into the cache");
  sub->add_option("spec", options->spec, "Spec file (JSON; see cache/SPEC.md)")->required()->check(CLI::ExistingFile);
  sub->add_option("-t,--target", options->targets, "Comma-separated targets: sm_90, compute_90, gfx90a, ...")->required();
  sub->add_option("-j,--jobs", options->jobs, "Parallel compiles (default: the number of CPUs)");
  sub->add_flag("--list", options->list, "Print each variant's cache key instead of compiling");
  sub->add_flag("-q,--quiet", options->quiet, "No progress display");
  return {sub, [options, &global] {
            return run_precompile_spec(options->spec, options->targets, options->jobs, options->list, options->quiet,
                                       global);
          }};
}

}  // namespace kernc::cli
