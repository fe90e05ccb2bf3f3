#include "cli_context.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernc/cache_directory.hpp"

#include "kernc/profiling.hpp"

namespace kernc::cli {

int exit_code_for(const Error& error) {
  switch (error.code()) {
    case ErrorCode::compile_failed: return kExitCompileFailed;
    case ErrorCode::invalid_argument: return kExitUsage;
    case ErrorCode::unsupported_target:
    case ErrorCode::library_not_found:
    case ErrorCode::symbol_not_found:
    case ErrorCode::backend_disabled:
    case ErrorCode::compiler_api: return kExitEnvironment;
    case ErrorCode::io: return kExitIo;
    case ErrorCode::not_found: return kExitNotFound;
    case ErrorCode::no_device: return kExitNoGpu;
    case ErrorCode::driver:
    case ErrorCode::launch_config:
    case ErrorCode::out_of_memory:
    case ErrorCode::device_fault: return kExitEnvironment;
    case ErrorCode::not_precompiled: return kExitNotPrecompiled;
  }
  return kExitInternal;
}

std::string exit_codes_help(std::initializer_list<int> codes) {
  static const std::map<int, const char*> kMeaning = {
      {kExitOk, "ok"},
      {kExitCompileFailed, "a source did not compile (the log is printed)"},
      {kExitUsage, "bad command line, target, option or spec"},
      {kExitEnvironment, "a compiler library or backend is missing, or a target is unsupported"},
      {kExitIo, "a file could not be read or written, or the cache directory cannot store what is compiled"},
      {kExitCacheDamaged, "damaged cache entries were found and not removed"},
      {kExitNotFound, "no such cache entry or kernel"},
      {kExitNoGpu, "no usable GPU (--device cpu runs on this machine's cores)"},
      {kExitNotPrecompiled, "not precompiled: no cache entry serves a kernel and compiling is off, or a check found "
                            "variants no entry serves"},
      {kExitInternal, "internal error (a bug in kernc)"},
  };
  std::set<int> all(codes);
  all.insert({kExitOk, kExitUsage, kExitInternal});
  std::string text = "Exit codes:";
  for (int code : all) text += fmt::format("\n  {:<3} {}", code, kMeaning.at(code));
  return text;
}

namespace {

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// CLI11's message, reworded; the messages are those of CLI11 2.1 (CLI/Error.hpp).
std::string reworded(const CLI::ParseError& error) {
  const std::string name = error.get_name(), what = error.what();
  const std::size_t colon = what.find(": ");
  const std::string option = colon == std::string::npos ? what : what.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : what.substr(colon + 2);
  if (name == "ArgumentMismatch") {
    if (starts_with(rest, "At Most ")) {
      return fmt::format("{} is given more than once, and takes one value", option);
    }
    return fmt::format("{} needs a value", option);
  }
  // (A subcommand's ExtrasError carries the subcommand's name, not "ExtrasError".)
  if (starts_with(what, "The following argument")) {
    const std::size_t list = what.find(": ");
    return fmt::format("unexpected argument(s): {}", list == std::string::npos ? what : what.substr(list + 2));
  }
  if (name == "RequiredError") {
    if (starts_with(what, "A subcommand")) return "a command is needed";  // main() names them
    const std::string suffix = " is required";
    if (what.size() > suffix.size() && what.compare(what.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return fmt::format("{} is required", what.substr(0, what.size() - suffix.size()));
    }
  }
  if (name == "ConversionError" && starts_with(what, "Could not convert: ")) {
    const std::string item = what.substr(std::string("Could not convert: ").size());
    const std::size_t equals = item.find(" = ");
    if (equals != std::string::npos) {
      return fmt::format("{}: \"{}\" is not a valid value", item.substr(0, equals), item.substr(equals + 3));
    }
  }
  if (name == "ValidationError" && !rest.empty()) return fmt::format("{}: {}", option, rest);
  return what;
}

}  // namespace

std::string usage_message(const CLI::ParseError& error, const CLI::App& app) {
  // The deepest command the command line named, for its --help.
  std::string command = "kernc";
  const CLI::App* at = &app;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : at->get_subcommands()) {
      command += " " + sub->get_name();
      at = sub;
      deeper = true;
      break;
    }
  }
  std::string message = reworded(error);
  if (message == "a command is needed") {
    std::vector<std::string> names;
    for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
    if (!names.empty()) {
      const std::string last = names.back();
      names.pop_back();
      message += fmt::format(": {}{}{}", fmt::join(names, ", "), names.empty() ? "" : " or ", last);
    }
  }
  return fmt::format("kernc: error: {}\nRun `{} --help` for the options.\n", message, command);
}

void print_error(const Error& error, const std::string& prefix) {
  std::string message = error.what();
  const CompileFailure* failure = error.compile_failure();
  if (!failure || failure->log.empty()) {
    fmt::print(stderr, "kernc: error: {}{}\n", prefix, message);
    return;
  }
  // The library's message ends with the log's first error ("x.cu failed to compile for
  // sm_80: <first error>"), for programs that show only the message; here the log follows.
  const std::string marker = fmt::format(" failed to compile for {}: ", failure->target);
  const std::size_t at = message.rfind(marker);
  if (at != std::string::npos && failure->log.find(message.substr(at + marker.size())) != std::string::npos) {
    message = message.substr(0, at + marker.size() - 2) + ":";
  }
  fmt::print(stderr, "kernc: error: {}{}\n{}\n", prefix, message, failure->log);
}

void add_global_options(CLI::App& app, GlobalOptions& options) {
  app.add_option("--cache-dir", options.cache_dir, "Cache directory (overrides KERNC_CACHE_DIR)");
  app.add_flag("--no-cache", options.no_cache, "Do not use the disk cache (as KERNC_CACHE_DISABLE=1)");
  app.add_flag("--save-source", options.save_source,
               "Keep each compiled program's source next to its cache entry (as KERNC_SAVE_SOURCE=1)");
  app.add_option("--cache-path", options.cache_path,
                 "Read-only caches searched after the cache dir, DIR[:DIR...] (overrides KERNC_CACHE_PATH)");
  app.add_option("--remote-cache", options.remote_cache,
                 "Shared Redis tier searched after the disk caches, redis://HOST[:PORT][/DB][?OPTIONS] or "
                 "unix:///SOCKET (overrides KERNC_REMOTE_CACHE; put passwords in the variable, not here)");
  app.add_option("--compile", options.compile_policy,
                 "auto: compile what no cache holds; never: a missing kernel is an error (as KERNC_COMPILE)")
      ->check(CLI::IsMember({"auto", "never"}));
  app.add_option("--log-level", options.log_level,
                 "Library log level: trace, debug, info, warn (default), error, critical or off, in any case "
                 "(overrides KERNC_LOG_LEVEL)");
}

Config resolve_config(const GlobalOptions& options) {
  Config config = Config::from_environment();
  if (!options.cache_dir.empty()) config.cache_dir.set(options.cache_dir, "--cache-dir");
  if (options.no_cache) config.cache_disabled.set(true, "--no-cache");
  if (options.save_source) config.save_sources.set(true, "--save-source");
  if (!options.cache_path.empty()) config.cache_path.set(options.cache_path, "--cache-path");
  if (!options.compile_policy.empty()) config.compile_policy.set(options.compile_policy, "--compile");
  if (!options.remote_cache.empty()) {
    try {
      config.remote_cache.set(parse_remote_cache_url(options.remote_cache), "--remote-cache");
    } catch (const Error& error) {
      throw Error(ErrorCode::invalid_argument, fmt::format("--remote-cache: {}", error.what()));
    }
  }
  if (!options.log_level.empty()) {
    try {
      config.log_level.set(to_string(parse_log_level(options.log_level)), "--log-level");
    } catch (const Error& error) {
      throw Error(ErrorCode::invalid_argument, fmt::format("--log-level: {}", error.what()));
    }
  }
  // An Engine's compile workers (KERNC_COMPILE_WORKERS, e.g. for `kernc run`) are this very
  // program, unless KERNC_COMPILE_WORKER names another.
  if (config.compile_worker.value.empty()) config.compile_worker.set("/proc/self/exe", "the kernc CLI itself");
  set_log_level(config.log_level.value);
  // KERNC_NVTX: ranges for `nsys profile kernc ...` (compile and precompile make no Engine).
  if (config.nvtx.source != "default" && nvtx_ranges_built()) set_nvtx_ranges(config.nvtx.value);
  return config;
}

void require_cache_directory(const CacheConfig& config, bool must_write, const std::string& command) {
  // NOTE [ fail before compiling ]
  if (!config.disk_enabled) {
    if (must_write && !config.remote) {
      throw Error(ErrorCode::io, fmt::format("{} stores what it compiles in the cache directory, and the disk cache is "
                                             "off (--no-cache or KERNC_CACHE_DISABLE=1); nothing was compiled",
                                             command));
    }
    return;
  }
  std::string root;
  try {
    root = CacheDirectory(config).root();
  } catch (const Error& error) {
    throw Error(ErrorCode::io, fmt::format("the cache directory is unusable, so nothing was compiled: {}", error.what()));
  }
  if (must_write && ::access(root.c_str(), W_OK) != 0) {
    throw Error(ErrorCode::io, fmt::format("{} stores what it compiles in the cache directory {}, which is not "
                                           "writable ({}); nothing was compiled",
                                           command, root, std::strerror(errno)));
  }
}

const Compiler& Compilers::get(Backend backend) {
  auto& slot = loaded_[backend];
  if (!slot) slot = load_compiler(backend, paths_);
  return *slot;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    auto first = item.find_first_not_of(" \t");
    auto last = item.find_last_not_of(" \t");
    if (first != std::string::npos) items.push_back(item.substr(first, last - first + 1));
    start = end + 1;
  }
  return items;
}

std::string short_key(const std::string& key) { return key.substr(0, 12); }

}  // namespace kernc::cli
