// kernc precompile SPEC --target sm_80,sm_90,gfx90a [-j N]: build every variant a later
// call could need for the spec's kernels and signatures, in parallel, into the cache.
// `kernc compile SPEC.json` runs the same thing (see compile_command.cpp).
//
// A precompile exists to leave an artifact: it exits non-zero when any variant failed or
// is not in the cache directory at the end, so that a CI job never ships an empty cache.

#include <unistd.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli_context.hpp"
#include "kernc/kernels.hpp"
#include "kernc/spec_file.hpp"

namespace kernc::cli {

namespace {

// Prints a failure, unless the same kernel already failed the same way for the same
// target in another variant (one typo would otherwise print a dozen identical logs).
void print_failure(const PrecompileEvent& event, std::set<std::string>& seen) {
  const Error& error = *event.error;
  const auto* failure = error.compile_failure();
  std::string identity = fmt::format("{}|{}|{}", event.kernel, event.target.str(), failure ? failure->log : error.what());
  if (!seen.insert(identity).second) return;
  print_error(error, fmt::format("kernel {} ({}) for {}: ", event.kernel, event.description, event.target.str()));
}

nlohmann::json summary_json(const PrecompileSummary& summary, const Spec& spec, const std::vector<Target>& targets,
                            unsigned jobs, Cache& cache) {
  nlohmann::json target_names = nlohmann::json::array();
  for (const auto& target : targets) target_names.push_back(target.str());
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& failure : summary.failures) {
    failures.push_back({{"kernel", failure.kernel},
                        {"variant", failure.description},
                        {"target", failure.target.str()},
                        {"code", to_string(failure.error->code())},
                        {"error", failure.error->what()}});
  }
  return {{"programs", summary.total},
          {"kernels", spec.kernels.size()},
          {"targets", target_names},
          {"compiled", summary.compiled},
          {"cache_hits", summary.hits},
          {"read_only_hits", summary.read_only_hits},
          {"remote_hits", summary.remote_hits},
          {"failed", summary.failed},
          {"not_stored", summary.not_stored},
          {"not_stored_reason", summary.not_stored_reason},
          {"cache_dir", cache.uses_disk() ? cache.config().directory : ""},
          {"seconds", summary.seconds},
          {"jobs", jobs},
          {"shard", summary.shard.str()},
          {"all_programs", summary.all_units},
          {"failures", failures}};
}

// "106 cache hit(s)", and which tiers copied how many into the cache directory:
// "106 cache hit(s) (106 copied from a read-only tier)".
std::string hits_text(const PrecompileSummary& summary) {
  std::vector<std::string> copied;
  if (summary.read_only_hits > 0) copied.push_back(fmt::format("{} copied from a read-only tier", summary.read_only_hits));
  if (summary.remote_hits > 0) copied.push_back(fmt::format("{} copied from the remote tier", summary.remote_hits));
  if (copied.empty()) return fmt::format("{} cache hit(s)", summary.hits);
  return fmt::format("{} cache hit(s) ({})", summary.hits, fmt::join(copied, ", "));
}

}  // namespace

int run_precompile_spec(const PrecompileRequest& request, const GlobalOptions& global) {
  Config config = resolve_config(global);
  Spec spec = load_spec(request.spec);
  std::vector<Target> targets;
  for (const auto& name : split_list(request.targets)) targets.push_back(Target::parse(name));
  if (targets.empty()) throw Error(ErrorCode::invalid_argument, "--target names no target");
  const PrecompileShard shard = request.shard.empty() ? PrecompileShard{} : PrecompileShard::parse(request.shard);
  // The artifact is the cache directory: a read-only tier's entry is copied into it, not
  // compiled again (as a remote hit is), so a hit there never stands in for an entry the
  // directory lacks; the check after the run (not_stored) holds either way.
  CacheConfig cache_config = config.cache_config();
  cache_config.copy_read_only_hits = true;
  if (!request.list) require_cache_directory(cache_config, true, "precompile");  // NOTE [ fail before compiling ]
  Cache cache(cache_config);
  Compilers compilers(config.compiler_paths());
  if (request.list) {
    if (request.format == "json") {
      throw Error(ErrorCode::invalid_argument, "--list prints one line per variant; it has no --format json");
    }
    const std::vector<SpecVariant> variants = spec.variants();
    for (const auto& unit : precompile_units(variants, targets, shard)) {
      const Compiler& compiler = compilers.get(unit.target.backend());
      fmt::print("{}  {:<8} {:<14} {}\n", cache.key(unit.variant->program, unit.target, compiler), unit.target.str(),
                 unit.variant->kernel, unit.variant->description);
    }
    return kExitOk;
  }
  for (const auto& entry : spec.kernels) {
    const bool typed = std::holds_alternative<ElementwiseKernel>(entry.kernel) ||
                       std::holds_alternative<ReductionKernel>(entry.kernel);
    if (typed && entry.signatures.empty()) {
      fmt::print(stderr, "kernc: note: kernel {} lists no \"signatures\": nothing is precompiled for it (a call "
                 "compiles it on first use)\n", entry.name());
    }
    const auto* module = std::get_if<RawModule>(&entry.kernel);
    if (module && module->is_binary()) {
      fmt::print(stderr, "kernc: note: kernel {} is a module of binary files (\"path\"/\"paths\"): it is loaded as "
                 "built, nothing is compiled for it\n", entry.name());
    }
  }
  const unsigned jobs = request.jobs == 0 ? std::max(1u, std::thread::hardware_concurrency()) : request.jobs;
  // Progress goes to stderr: one line rewritten in place on a terminal, plain lines in a
  // CI log, none with --quiet.
  const bool show_progress = !request.quiet;
  const bool terminal = ::isatty(STDERR_FILENO);
  std::set<std::string> seen_failures;
  std::mutex compilers_mutex;
  // NVRTC serializes part of each compile inside a process, HIPRTC all of it: with several
  // jobs, compiles run in kernc's own worker processes (NOTE [ compile worker processes ]).
  const bool use_workers = jobs > 1 && request.compile_in == "processes";
  // The worker program: this very kernc, unless KERNC_COMPILE_WORKER names another (as for
  // an Engine's workers; checked here, before any compile starts).
  std::vector<std::string> worker_command;
  if (use_workers) {
    try {
      worker_command = compile_worker_command(config);
    } catch (const Error&) {  // the CLI always names a worker program: this one is not one
      throw Error(ErrorCode::library_not_found,
                  fmt::format("{} names {} as the compile worker program, which is not an executable file; name "
                              "the kernc executable of this build, or pass --compile-in threads",
                              config.compile_worker.source, config.compile_worker.value));
    }
  }
  std::map<Backend, std::shared_ptr<const Compiler>> workers;
  auto compiler_for = [&](Backend backend) -> const Compiler& {
    std::lock_guard<std::mutex> lock(compilers_mutex);
    if (!use_workers || backend == Backend::cpu) return compilers.get(backend);
    auto& slot = workers[backend];
    if (!slot) slot = compile_in_workers(backend, config.compiler_paths(), worker_command, jobs);
    return *slot;
  };
  auto summary = precompile(spec, targets, cache, compiler_for, jobs,
                            [&](const PrecompileEvent& event, std::size_t done, std::size_t total) {
                              if (event.failed) {
                                if (show_progress && terminal) fmt::print(stderr, "\r\033[K");
                                print_failure(event, seen_failures);
                              }
                              if (!show_progress) return;
                              const std::string line = fmt::format(
                                  "[{}/{}] {} {} {}: {}", done, total, event.target.str(), event.kernel,
                                  event.description, event.failed ? "failed" : event.read_only ? "read-only tier hit, copied" : to_string(event.outcome));
                              fmt::print(stderr, terminal ? "\r\033[K{}" : "{}\n", line);
                              std::fflush(stderr);
                            },
                            shard);
  if (show_progress && terminal) fmt::print(stderr, "\r\033[K");
  const std::string hits = hits_text(summary);
  if (request.format == "json") {
    fmt::print("{}\n", summary_json(summary, spec, targets, jobs, cache).dump(2));
  } else {
    if (shard.count > 1) {
      fmt::print("shard {}: {} of the {} program(s) ({} variant(s) of {} kernel(s) x {} target(s)): {} compiled, {}, "
                 "{} failed in {:.1f} s ({} jobs)\n",
                 shard.str(), summary.total, summary.all_units, summary.all_units / targets.size(), spec.kernels.size(),
                 targets.size(), summary.compiled, hits, summary.failed, summary.seconds, jobs);
    } else {
      fmt::print("{} program(s) ({} variant(s) of {} kernel(s) x {} target(s)): {} compiled, {}, {} failed in {:.1f} "
                 "s ({} jobs)\n",
                 summary.total, summary.total / targets.size(), spec.kernels.size(), targets.size(), summary.compiled,
                 hits, summary.failed, summary.seconds, jobs);
    }
  }
  if (summary.failed > seen_failures.size()) {
    fmt::print(stderr, "({} failure(s) repeated an error shown above in another variant)\n",
               summary.failed - seen_failures.size());
  }
  if (summary.not_stored > 0) {
    fmt::print(stderr, "kernc: error: {} compiled program(s) are not in the cache directory{}, so the cache is "
               "incomplete: {}\n",
               summary.not_stored, cache.uses_disk() ? " " + cache.config().directory : "", summary.not_stored_reason);
  }
  if (summary.failed > 0) {
    for (const auto& failure : summary.failures) {
      if (failure.error->code() == ErrorCode::compile_failed) return kExitCompileFailed;
    }
    return exit_code_for(*summary.failures.front().error);
  }
  return summary.not_stored > 0 ? kExitIo : kExitOk;
}

Subcommand setup_precompile(CLI::App& app, const GlobalOptions& global) {
  auto request = std::make_shared<PrecompileRequest>();
  auto* sub = app.add_subcommand("precompile", "Compile every variant of a spec file's kernels into the cache");
  sub->footer(exit_codes_help({kExitCompileFailed, kExitEnvironment, kExitIo}));
  sub->add_option("spec", request->spec, "Spec file (JSON; see docs/spec-format.md)")->required();  // a missing file: exit 4
  sub->add_option("-t,--target", request->targets, "Comma-separated targets: sm_90, compute_90, gfx90a, cpu-x86-64-v3, cpu (this machine's level), ... (repeatable: -t sm_80 -t sm_90)")->join(',')->required();
  sub->add_option("-j,--jobs", request->jobs, "Parallel compiles (default: the number of CPUs)");
  sub->add_flag("--list", request->list, "Print each variant's cache key instead of compiling");
  sub->add_option("--shard", request->shard,
                  "K/N: build only part K of N, for a precompile split over N CI jobs (disjoint parts whose union is "
                  "the whole; merge them with `kernc cache merge` or share a remote cache)");
  sub->add_option("--compile-in", request->compile_in,
                  "With -j above 1: compile in worker processes (NVRTC and HIPRTC serialize within a process; "
                  "the workers run this kernc, or the program KERNC_COMPILE_WORKER names), or in threads of this one")
      ->check(CLI::IsMember({"processes", "threads"}));
  sub->add_flag("-q,--quiet", request->quiet, "No progress lines on stderr");
  sub->add_option("--format", request->format, "Summary format")->check(CLI::IsMember({"text", "json"}));
  return {sub, [request, &global] { return run_precompile_spec(*request, global); }};
}

}  // namespace kernc::cli
