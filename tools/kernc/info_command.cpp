// kernc info: which compilers and driver were found, what they support, and where
// every setting came from.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli_context.hpp"
#include "kernc/devices.hpp"
#include "kernc/profiling.hpp"
#include "kernc/remote_cache.hpp"
#include "kernc/runtime.hpp"
#include "kernc/version.hpp"

namespace kernc::cli {

namespace {

struct InfoCommandOptions {
  std::string format = "text";
};

nlohmann::json compiler_json(Backend backend, const Config& config) {
  if (!backend_built(backend)) return {{"available", false}, {"problem", "not built into this kernc"}};
  try {
    auto compiler = load_compiler(backend, config.compiler_paths());
    const auto& id = compiler->identity();
    return {{"available", true},
            {"library", id.library_path},
            {"version", id.version},
            {"cache_tag", id.tag()},
            {"include_dirs", id.include_dirs},
            {"headers", id.headers},
            {"include_source", id.include_source},
            {"supported_targets", compiler->supported_targets()}};
  } catch (const Error& error) {
    return {{"available", false}, {"problem", error.what()}};
  }
}

nlohmann::json driver_json(const Config& config) {
  try {
    auto driver = probe_cuda_driver(config.cuda_driver_library.value);
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& gpu : driver.gpus) {
      gpus.push_back({{"ordinal", gpu.ordinal}, {"name", gpu.name}, {"arch", fmt::format("sm_{}", gpu.compute_capability)},
                      {"memory_bytes", gpu.memory_bytes}});
    }
    return {{"available", true}, {"library", driver.library_path},
            {"version", fmt::format("{}.{}", driver.version / 1000, driver.version % 1000 / 10)}, {"gpus", gpus}};
  } catch (const Error& error) {
    return {{"available", false}, {"problem", error.what()}, {"gpus", nlohmann::json::array()}};
  }
}

// The host backend's device: this machine's cores, the ISA level it runs and the host
// targets whose binaries it can load (its ladder).
nlohmann::json host_device_json() {
  try {
    const Device device = Device::get(0, "", Backend::cpu);
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& target : binary_ladder(device.target())) runs.push_back(target.str());
    return {{"available", true},          {"name", device.name()}, {"arch", device.target().str()},
            {"threads", device.multiprocessors()}, {"runs", runs}};
  } catch (const Error& error) {
    return {{"available", false}, {"problem", error.what()}};
  }
}

nlohmann::json remote_json() {
  const RemoteCacheSupport support = remote_cache_support();
  if (support.available) return {{"available", true}, {"library", support.library}};
  return {{"available", false}, {"problem", support.problem}};
}

template <class T>
nlohmann::json setting_json(const Setting<T>& setting) {
  return {{"value", setting.value}, {"source", setting.source}};
}

int run_info(const InfoCommandOptions& options, const GlobalOptions& global) {
  Config config = resolve_config(global);
  nlohmann::json info = {
      {"version", kernc::version()},
      {"nvrtc", compiler_json(Backend::cuda, config)},
      {"hiprtc", compiler_json(Backend::hip, config)},
      {"host_compiler", compiler_json(Backend::cpu, config)},
      {"cuda_driver", driver_json(config)},
      {"host_device", host_device_json()},
      {"remote_cache", remote_json()},
      {"settings",
       {{"cache_dir", setting_json(config.cache_dir)},
        {"cache_path", setting_json(config.cache_path)},
        {"remote_cache", {{"value", config.remote_cache.value ? config.remote_cache.value->redacted() : ""},
                          {"source", config.remote_cache.source}}},
        {"compile", setting_json(config.compile_policy)},
        {"cache_max_size", setting_json(config.cache_max_size)},
        {"cache_disabled", setting_json(config.cache_disabled)},
        {"save_sources", setting_json(config.save_sources)},
        {"driver_compile_cache", setting_json(config.driver_compile_cache)},
        {"precompiled_headers", setting_json(config.precompiled_headers)},
        {"compile_workers", setting_json(config.compile_workers)},
        {"compile_worker", setting_json(config.compile_worker)},
        {"nvrtc_library", setting_json(config.nvrtc_library)},
        {"hiprtc_library", setting_json(config.hiprtc_library)},
        {"cuda_home", setting_json(config.cuda_home)},
        {"rocm_home", setting_json(config.rocm_home)},
        {"cuda_include", setting_json(config.cuda_include)},
        {"rocm_include", setting_json(config.rocm_include)},
        {"cuda_driver_library", setting_json(config.cuda_driver_library)},
        {"hip_runtime_library", setting_json(config.hip_runtime_library)},
        {"runtime", setting_json(config.runtime)},
        {"host_cxx", setting_json(config.host_cxx)},
        {"cpu_threads", setting_json(config.cpu_threads)},
        {"log_level", setting_json(config.log_level)},
        {"nvtx", setting_json(config.nvtx)}}},
  };
  if (options.format == "json") {
    fmt::print("{}\n", info.dump(2));
    return kExitOk;
  }
  fmt::print("kernc {}\n\n", kernc::version());
  for (const auto& [name, label] : {std::pair<const char*, const char*>{"nvrtc", "nvrtc"}, {"hiprtc", "hiprtc"},
                                    {"host_compiler", "host c++"}}) {
    const auto& c = info[name];
    if (c["available"].get<bool>()) {
      fmt::print("{:<8} {} ({})\n         cache tag: {}\n         targets: {}\n", label, c["version"].get<std::string>(),
                 c["library"].get<std::string>(), c["cache_tag"].get<std::string>(),
                 fmt::join(c["supported_targets"].get<std::vector<std::string>>(), " "));
      const auto dirs = c["include_dirs"].get<std::vector<std::string>>();
      fmt::print("         includes: {} ({})\n         headers: {}\n", dirs.empty() ? "none" : fmt::format("{}", fmt::join(dirs, " ")),
                 c["include_source"].get<std::string>(), c["headers"].get<std::string>());
    } else {
      fmt::print("{:<8} not available: {}\n", label, c["problem"].get<std::string>());
    }
  }
  const auto& driver = info["cuda_driver"];
  if (driver["available"].get<bool>()) {
    fmt::print("driver   CUDA {} ({})\n", driver["version"].get<std::string>(), driver["library"].get<std::string>());
    for (const auto& gpu : driver["gpus"]) {
      fmt::print("  gpu {}  {} ({}, {})\n", gpu["ordinal"].get<int>(), gpu["name"].get<std::string>(),
                 gpu["arch"].get<std::string>(), format_size(gpu["memory_bytes"].get<std::uint64_t>()));
    }
  } else {
    fmt::print("driver   no GPU usable: {}\n", driver["problem"].get<std::string>());
  }
  const auto& cpu = info["host_device"];
  if (cpu["available"].get<bool>()) {
    fmt::print("cpu      {}, {} (kernc run --device cpu)\n         runs: {}\n", cpu["name"].get<std::string>(),
               cpu["arch"].get<std::string>(),
               fmt::join(cpu["runs"].get<std::vector<std::string>>(), " "));
  } else {
    fmt::print("cpu      not usable: {}\n", cpu["problem"].get<std::string>());
  }
  const auto& remote = info["remote_cache"];
  if (remote["available"].get<bool>()) {
    fmt::print("redis    hiredis ({}): KERNC_REMOTE_CACHE can be used\n", remote["library"].get<std::string>());
  } else {
    fmt::print("redis    no remote cache: {}\n", remote["problem"].get<std::string>());
  }
  fmt::print("\nsettings\n");
  auto show = [](const char* name, const std::string& value, const std::string& source) {
    fmt::print("  {:<20} {:<40} ({})\n", name, value.empty() ? "-" : value, source);
  };
  show("cache dir", config.cache_dir.value, config.cache_dir.source);
  show("cache path", config.cache_path.value, config.cache_path.source);
  show("remote cache", config.remote_cache.value ? config.remote_cache.value->redacted() : "",
       config.remote_cache.source);
  show("compile", config.compile_policy.value, config.compile_policy.source);
  show("cache max size", format_size(config.cache_max_size.value), config.cache_max_size.source);
  show("cache disabled", config.cache_disabled.value ? "yes" : "no", config.cache_disabled.source);
  show("save sources", config.save_sources.value ? "yes" : "no", config.save_sources.source);
  show("driver compile cache", config.driver_compile_cache.value ? "allowed" : "off (-no-cache)",
       config.driver_compile_cache.source);
  show("precompiled headers", config.precompiled_headers.value ? "yes" : "no", config.precompiled_headers.source);
  show("compile workers",
       config.compile_workers.value == 0 ? std::string("0 (compiles run in the calling process)")
                                         : fmt::format("{} processes", config.compile_workers.value),
       config.compile_workers.source);
  show("compile worker", config.compile_worker.value, config.compile_worker.source);
  show("nvrtc library", config.nvrtc_library.value, config.nvrtc_library.source);
  show("hiprtc library", config.hiprtc_library.value, config.hiprtc_library.source);
  show("cuda home", config.cuda_home.value, config.cuda_home.source);
  show("rocm home", config.rocm_home.value, config.rocm_home.source);
  show("cuda include", config.cuda_include.value, config.cuda_include.source);
  show("rocm include", config.rocm_include.value, config.rocm_include.source);
  show("cuda driver library", config.cuda_driver_library.value, config.cuda_driver_library.source);
  show("hip runtime library", config.hip_runtime_library.value, config.hip_runtime_library.source);
  show("runtime", config.runtime.value, config.runtime.source);
  show("host cxx", config.host_cxx.value, config.host_cxx.source);
  show("cpu threads", config.cpu_threads.value == 0 ? std::string("one per hardware thread")
                                                    : std::to_string(config.cpu_threads.value),
       config.cpu_threads.source);
  show("log level", config.log_level.value, config.log_level.source);
  show("nvtx ranges", config.nvtx.value ? std::string(nvtx_ranges_built() ? "on" : "on, but not built in") : "off",
       config.nvtx.source);
  return kExitOk;
}

}  // namespace

Subcommand setup_info(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<InfoCommandOptions>();
  auto* sub = app.add_subcommand("info", "Show the compilers, driver, GPUs and host CPU found, and where each setting came from");
  sub->footer(exit_codes_help({kExitIo}));
  sub->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  return {sub, [options, &global] { return run_info(*options, global); }};
}

}  // namespace kernc::cli
