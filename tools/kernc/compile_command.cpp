// kernc compile FILE.cu --target sm_90,sm_80,gfx90a [...]: compile one source file for
// several targets through the cache and say, per target, what happened.

#include <cstdio>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_context.hpp"
#include "kernc/config.hpp"
#include "kernc/files.hpp"

namespace kernc::cli {

namespace {

struct CompileCommandOptions {
  std::string file;
  std::string targets;
  std::string emit;
  std::string output;
  std::vector<std::string> name_expressions;
  std::vector<std::string> defines;
  std::vector<std::string> include_dirs;
  std::vector<std::string> headers;
  std::vector<std::string> raw_flags;
  std::string standard = "c++17";
  bool fast_math = false;
  bool line_info = false;
  bool debug = false;
  bool explain_key = false;
  std::string format = "text";
  unsigned jobs = 0;
  /// The per-source flags given on the command line (a spec file refuses them).
  std::vector<std::string> source_flags_given;
};

std::string file_stem(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  return name.substr(0, name.find_last_of('.'));
}

const char* extension(BinaryKind kind) {
  switch (kind) {
    case BinaryKind::cubin: return "cubin";
    case BinaryKind::ptx: return "ptx";
    case BinaryKind::hsaco: return "hsaco";
    case BinaryKind::shared_object: return "so";
  }
  return "bin";
}

Program read_program(const CompileCommandOptions& options) {
  Program program;
  program.name = options.file.substr(options.file.find_last_of('/') + 1);
  program.origin.kernel = program.name;  // what `kernc cache ls` names the entry by
  program.source = read_file(options.file);
  program.name_expressions = options.name_expressions;
  auto& compile = program.options;
  compile.language_standard = options.standard;
  for (const auto& define : options.defines) {
    auto eq = define.find('=');
    compile.defines[define.substr(0, eq)] = eq == std::string::npos ? "" : define.substr(eq + 1);
  }
  compile.include_dirs = options.include_dirs;
  for (const auto& header : options.headers) {
    auto eq = header.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == header.size()) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--header \"{}\": expected NAME=FILE, e.g. --header my/util.h=src/util.h", header));
    }
    compile.headers[header.substr(0, eq)] = read_file(header.substr(eq + 1));
  }
  compile.fast_math = options.fast_math;
  compile.line_info = options.line_info;
  compile.debug = options.debug;
  compile.raw_flags = options.raw_flags;
  validate(compile);
  return program;
}

std::vector<Target> parse_targets(const CompileCommandOptions& options) {
  std::vector<Target> targets;
  for (const auto& name : split_list(options.targets)) {
    Target target = Target::parse(name);
    if (!options.emit.empty()) target = target.with_binary_kind(parse_binary_kind(options.emit));
    targets.push_back(target);
  }
  if (targets.empty()) throw Error(ErrorCode::invalid_argument, "--target names no target");
  return targets;
}

// Where the binary for `target` goes: OUT itself for one target, OUT/<stem>.<target>.<ext> for several.
std::string output_path(const CompileCommandOptions& options, const Target& target, size_t target_count) {
  if (options.output.empty()) return {};
  bool into_directory = target_count > 1 || options.output.back() == '/' || std::filesystem::is_directory(options.output);
  if (!into_directory) return options.output;
  std::string dir = options.output.back() == '/' ? options.output.substr(0, options.output.size() - 1) : options.output;
  return fmt::format("{}/{}.{}.{}", dir, file_stem(options.file), target.str(), extension(target.binary_kind()));
}

bool is_spec_file(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
}

int run_compile(const CompileCommandOptions& options, const GlobalOptions& global) {
  if (is_spec_file(options.file)) {
    // A spec file: every variant of its kernels, as `kernc precompile` does. Its kernels
    // carry their own options, so the flags that shape one source's compile would be
    // silently ignored: they are an error instead.
    if (!options.source_flags_given.empty()) {
      std::string given;
      for (const auto& flag : options.source_flags_given) given += (given.empty() ? "" : ", ") + flag;
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{} is a spec file: its kernels carry their own options, so {} do(es) not apply; use "
                              "them with a source file, or set options in the spec (docs/spec-format.md)",
                              options.file, given));
    }
    PrecompileRequest request;
    request.spec = options.file;
    request.targets = options.targets;
    request.format = options.format;
    request.jobs = options.jobs;
    return run_precompile_spec(request, global);
  }
  if (options.jobs != 0) {
    throw Error(ErrorCode::invalid_argument, "-j/--jobs applies to a spec file only; a source file compiles its "
                                             "targets one after another");
  }
  const bool json = options.format == "json";
  nlohmann::json report = {{"file", options.file}, {"targets", nlohmann::json::array()}};
  Config config = resolve_config(global);
  Program program = read_program(options);
  std::vector<Target> targets = parse_targets(options);
  // A source file's product is its binary and report; the cache is a by-product, so an
  // unusable one only warns (NOTE [ fail before compiling ]).
  Cache cache(config.cache_config());
  Compilers compilers(config.compiler_paths());
  if (!options.output.empty() && (targets.size() > 1 || options.output.back() == '/')) make_directories(options.output, 0755);

  int status = kExitOk;
  // Counted per target, so that the summary adds up to the targets: an error that is no
  // compile failure (an unsupported target, a missing compiler) is a failed target too.
  std::size_t compiled = 0, hits = 0, failed = 0;
  for (const auto& target : targets) {
    const Compiler* compiler = nullptr;
    try {
      compiler = &compilers.get(target.backend());
      std::string material;
      if (options.explain_key) {
        material = cache.key_material(program, target, *compiler);
        if (!json) fmt::print("{}", material);
      }
      CacheResult result = cache.get_or_compile(program, target, *compiler);
      ++(result.outcome == CacheOutcome::compiled ? compiled : hits);
      const std::string path = output_path(options, target, targets.size());
      if (!path.empty()) write_file_atomic(path, result.program->binary, 0644);
      if (json) {
        nlohmann::json row = {{"target", target.str()},
                              {"outcome", to_string(result.outcome)},
                              {"elapsed_ms", result.elapsed_ms},
                              {"binary_kind", extension(target.binary_kind())},
                              {"size_bytes", result.program->binary.size()},
                              {"key", result.key},
                              {"lowered_names", result.program->lowered_names},
                              {"log", result.program->log},
                              {"output", path}};
        if (options.explain_key) row["key_material"] = material;
        report["targets"].push_back(row);
        continue;
      }
      fmt::print("{:<16} {:<12} {:>9.2f} ms  {:<5} {:>10}  key {}\n", target.str(), to_string(result.outcome),
                 result.elapsed_ms, extension(target.binary_kind()), format_size(result.program->binary.size()),
                 short_key(result.key));
      for (const auto& [expression, lowered] : result.program->lowered_names) {
        fmt::print("    {} -> {}\n", expression, lowered);
      }
      std::fflush(stdout);  // keep stdout and stderr lines in order on a terminal
      if (!result.program->log.empty()) fmt::print(stderr, "{} compiler log:\n{}\n", target.str(), result.program->log);
      if (!path.empty()) fmt::print("    wrote {}\n", path);
    } catch (const Error& error) {
      ++failed;
      if (json) {
        report["targets"].push_back({{"target", target.str()},
                                     {"outcome", "failed"},
                                     {"code", to_string(error.code())},
                                     {"error", error.what()},
                                     {"log", error.compile_failure() ? error.compile_failure()->log : ""}});
      } else {
        fmt::print("{:<16} {}\n", target.str(), error.code() == ErrorCode::compile_failed ? "FAILED" : "ERROR");
      }
      std::fflush(stdout);
      print_error(error);
      int code = exit_code_for(error);
      // A compile error outranks the others: it is what the user came to see.
      if (status == kExitOk || code == kExitCompileFailed) status = code;
    }
  }
  auto stats = cache.stats();
  if (json) {
    report["summary"] = {{"targets", targets.size()},
                         {"compiled", compiled},
                         {"cache_hits", hits},
                         {"failed", failed},
                         {"corrupt_entries_replaced", stats.corrupt_entries}};
    fmt::print("{}\n", report.dump(2));
    return status;
  }
  fmt::print("{} target(s): {} compiled, {} cache hit(s), {} failed; {} corrupt entr{} replaced\n", targets.size(),
             compiled, hits, failed, stats.corrupt_entries, stats.corrupt_entries == 1 ? "y" : "ies");
  return status;
}

}  // namespace

Subcommand setup_compile(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<CompileCommandOptions>();
  auto* sub = app.add_subcommand("compile", "Compile a CUDA/HIP source file (or every kernel of a .json spec file) for one or more targets, through the cache");
  sub->footer(exit_codes_help({kExitCompileFailed, kExitEnvironment, kExitIo}));
  // Not CLI::ExistingFile: a missing file is an I/O error (exit 4), as everywhere else.
  sub->add_option("file", options->file, "Source file (.cu), or a spec file (.json)")->required();
  sub->add_option("-t,--target", options->targets, "Comma-separated targets: sm_90, compute_90, gfx90a:xnack-, cpu-x86-64-v3 (the host: a .so), cpu, ... (repeatable: -t sm_80 -t sm_90)")
      ->join(',')->required();
  sub->add_option("--emit", options->emit, "Binary kind: cubin or ptx (CUDA), hsaco (HIP), so (the host)")
      ->check(CLI::IsMember({"cubin", "ptx", "hsaco", "so"}));
  sub->add_option("-o,--output", options->output,
                  "Write the binary here; with several targets, a directory receiving STEM.TARGET.EXT");
  sub->add_option("-n,--name-expression", options->name_expressions,
                  "A name expression whose lowered (mangled) name to report, e.g. 'scale<float>'");
  sub->add_option("-D,--define", options->defines, "Preprocessor define NAME or NAME=VALUE");
  sub->add_option("-I,--include-dir", options->include_dirs, "Include directory (its files are hashed into the key)");
  sub->add_option("--header", options->headers, "Extra header NAME=FILE, handed to the compiler by name");
  sub->add_option("--std", options->standard, "Language standard")
      ->check(CLI::IsMember({"c++11", "c++14", "c++17", "c++20"}));
  sub->add_flag("--fast-math", options->fast_math, "Fast, less precise math");
  sub->add_flag("--line-info", options->line_info, "Keep line information for profilers");
  sub->add_flag("-G,--debug", options->debug, "Device debug information");
  sub->add_option("--flag", options->raw_flags, "A raw compiler flag, passed and hashed verbatim")
      ->allow_extra_args(false);
  sub->add_flag("--explain-key", options->explain_key, "Print what the cache key hashes, per target");
  sub->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  sub->add_option("-j,--jobs", options->jobs, "Spec files: parallel compiles (default: the number of CPUs)");
  return {sub, [options, &global, sub] {
            for (const char* flag : {"--emit", "--output", "--name-expression", "--define", "--include-dir", "--header",
                                     "--std", "--fast-math", "--line-info", "--debug", "--flag", "--explain-key"}) {
              if (sub->count(flag) > 0) options->source_flags_given.push_back(flag);
            }
            return run_compile(*options, global);
          }};
}

}  // namespace kernc::cli
