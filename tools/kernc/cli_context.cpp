#include "cli_context.hpp"

#include <fmt/format.h>

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
  set_log_level(config.log_level.value);
  // KERNC_NVTX: ranges for `nsys profile kernc ...` (compile and precompile make no Engine).
  if (config.nvtx.source != "default" && nvtx_ranges_built()) set_nvtx_ranges(config.nvtx.value);
  return config;
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
