#include "kernc/config.hpp"

#include <cctype>
#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "kernc/error.hpp"

namespace kernc {

std::uint64_t parse_size(const std::string& text, const std::string& what) {
  auto bad = [&] {
    return Error(ErrorCode::invalid_argument,
                 fmt::format("{}: cannot read \"{}\" as a size; expected a number of bytes with an optional "
                             "unit K, M, G or T (powers of 1024), e.g. 512M or 4G",
                             what, text));
  };
  // Digits with an optional fraction, then the unit: no signs, spaces, hex or exponents.
  size_t digits_end = text.find_first_not_of("0123456789.");
  std::string digits = text.substr(0, digits_end);
  if (digits.empty() || digits.front() == '.' || digits.find('.') != digits.rfind('.')) throw bad();
  size_t pos = 0;
  double number = 0;
  try {
    number = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw bad();
  }
  if (!(number >= 0) || !std::isfinite(number)) throw bad();
  std::string unit = text.substr(pos);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && (unit.substr(1) == "B" || unit.substr(1) == "IB")) unit = unit.substr(0, 1);
  double scale = 1;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K") scale = 1024.0;
  else if (unit == "M") scale = 1024.0 * 1024;
  else if (unit == "G") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  else throw bad();
  double bytes = number * scale;
  if (bytes >= 1.8e19) throw bad();
  return static_cast<std::uint64_t>(bytes);
}

std::string format_size(std::uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, kUnits[unit]);
}

void check_compile_policy(const std::string& policy, const std::string& what) {
  if (policy != "auto" && policy != "never") {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} must be auto or never, not \"{}\"", what, policy));
  }
}

int parse_compile_workers(const std::string& text, const std::string& what) {
  if (text == "auto") return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  char* end = nullptr;
  const long count = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front())) || *end != '\0' || count < 0 ||
      count > kMaxCompileWorkers) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{} must be a number of compile worker processes from 0 (compile in this process) to {}, "
                            "or auto (one per hardware thread), not \"{}\"",
                            what, kMaxCompileWorkers, text));
  }
  return static_cast<int>(count);
}

Config Config::from_environment() {
  return from_environment([](const char* name) { return std::getenv(name); });
}

Config Config::from_environment(const std::function<const char*(const char*)>& lookup) {
  auto get = [&lookup](const char* name) -> std::string {
    const char* value = lookup(name);
    return value ? std::string(value) : std::string();
  };
  Config config;
  config.cache_max_size.value = 4ull << 30;
  config.log_level.value = "warn";
  config.runtime.value = "cuda";
  config.compile_policy.value = "auto";

  if (auto dir = get("KERNC_CACHE_DIR"); !dir.empty()) {
    config.cache_dir.set(dir, "KERNC_CACHE_DIR");
  } else if (auto xdg = get("XDG_CACHE_HOME"); !xdg.empty()) {
    config.cache_dir.set(xdg + "/kernc", "XDG_CACHE_HOME");
  } else if (auto home = get("HOME"); !home.empty()) {
    config.cache_dir.set(home + "/.cache/kernc", "HOME");
  } else {
    config.cache_dir.set("", "no KERNC_CACHE_DIR, XDG_CACHE_HOME or HOME");
  }
  if (auto path = get("KERNC_CACHE_PATH"); !path.empty()) config.cache_path.set(path, "KERNC_CACHE_PATH");
  if (auto url = get("KERNC_REMOTE_CACHE"); !url.empty()) {
    try {
      config.remote_cache.set(parse_remote_cache_url(url), "KERNC_REMOTE_CACHE");
    } catch (const Error& error) {
      throw Error(ErrorCode::invalid_argument, fmt::format("KERNC_REMOTE_CACHE: {}", error.what()));
    }
  }
  if (auto policy = get("KERNC_COMPILE"); !policy.empty()) {
    check_compile_policy(policy, "KERNC_COMPILE");
    config.compile_policy.set(policy, "KERNC_COMPILE");
  }
  if (auto size = get("KERNC_CACHE_MAX_SIZE"); !size.empty()) {
    config.cache_max_size.set(parse_size(size, "KERNC_CACHE_MAX_SIZE"), "KERNC_CACHE_MAX_SIZE");
  }
  auto flag = [&get](const char* name, Setting<bool>& setting) {
    auto value = get(name);
    if (value.empty()) return;
    if (value != "0" && value != "1") {
      throw Error(ErrorCode::invalid_argument, fmt::format("{} must be 0 or 1, not \"{}\"", name, value));
    }
    setting.set(value == "1", name);
  };
  flag("KERNC_CACHE_DISABLE", config.cache_disabled);
  flag("KERNC_SAVE_SOURCE", config.save_sources);
  flag("KERNC_DRIVER_COMPILE_CACHE", config.driver_compile_cache);
  flag("KERNC_PCH", config.precompiled_headers);
  if (auto workers = get("KERNC_COMPILE_WORKERS"); !workers.empty()) {
    config.compile_workers.set(parse_compile_workers(workers, "KERNC_COMPILE_WORKERS"), "KERNC_COMPILE_WORKERS");
  }
  if (auto program = get("KERNC_COMPILE_WORKER"); !program.empty()) {
    config.compile_worker.set(program, "KERNC_COMPILE_WORKER");
  }
  if (auto path = get("KERNC_NVRTC_LIBRARY"); !path.empty()) config.nvrtc_library.set(path, "KERNC_NVRTC_LIBRARY");
  if (auto path = get("KERNC_HIPRTC_LIBRARY"); !path.empty()) config.hiprtc_library.set(path, "KERNC_HIPRTC_LIBRARY");
  if (auto path = get("KERNC_CUDA_LIBRARY"); !path.empty()) config.cuda_driver_library.set(path, "KERNC_CUDA_LIBRARY");
  if (auto path = get("KERNC_HIP_LIBRARY"); !path.empty()) config.hip_runtime_library.set(path, "KERNC_HIP_LIBRARY");
  if (auto runtime = get("KERNC_RUNTIME"); !runtime.empty()) {
    if (runtime != "cuda" && runtime != "hip" && runtime != "cpu") {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("KERNC_RUNTIME must be cuda, hip or cpu, not \"{}\"", runtime));
    }
    config.runtime.set(runtime, "KERNC_RUNTIME");
  }
  if (auto cxx = get("KERNC_HOST_CXX"); !cxx.empty()) config.host_cxx.set(cxx, "KERNC_HOST_CXX");
  if (auto threads = get("KERNC_CPU_THREADS"); !threads.empty()) {
    char* end = nullptr;
    const long count = std::strtol(threads.c_str(), &end, 10);
    if (end == threads.c_str() || *end != '\0' || count < 0 || count > 4096) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("KERNC_CPU_THREADS must be a thread count from 0 (one per hardware thread) to "
                              "4096, not \"{}\"", threads));
    }
    config.cpu_threads.set(static_cast<int>(count), "KERNC_CPU_THREADS");
  }
  if (auto home = get("CUDA_HOME"); !home.empty()) {
    config.cuda_home.set(home, "CUDA_HOME");
  } else if (auto path = get("CUDA_PATH"); !path.empty()) {
    config.cuda_home.set(path, "CUDA_PATH");
  }
  if (auto root = get("ROCM_PATH"); !root.empty()) {
    config.rocm_home.set(root, "ROCM_PATH");
  } else if (auto path = get("HIP_PATH"); !path.empty()) {
    config.rocm_home.set(path, "HIP_PATH");
  }
  if (auto dirs = get("KERNC_CUDA_INCLUDE"); !dirs.empty()) config.cuda_include.set(dirs, "KERNC_CUDA_INCLUDE");
  if (auto dirs = get("KERNC_ROCM_INCLUDE"); !dirs.empty()) config.rocm_include.set(dirs, "KERNC_ROCM_INCLUDE");
  if (auto level = get("KERNC_LOG_LEVEL"); !level.empty()) {
    try {
      config.log_level.set(to_string(parse_log_level(level)), "KERNC_LOG_LEVEL");
    } catch (const Error& error) {
      throw Error(ErrorCode::invalid_argument, fmt::format("KERNC_LOG_LEVEL: {}", error.what()));
    }
  }
  flag("KERNC_NVTX", config.nvtx);
  return config;
}

CacheConfig Config::cache_config() const {
  CacheConfig cache;
  cache.directory = cache_dir.value;
  cache.max_size = cache_max_size.value;
  cache.disk_enabled = !cache_disabled.value && !cache_dir.value.empty();
  cache.save_sources = save_sources.value;
  cache.precompiled_headers = precompiled_headers.value;
  cache.remote = remote_cache.value;
  // Read-only tiers are searched even without a writable cache: a production host may
  // have only the cache baked into its image.
  for (size_t start = 0; start <= cache_path.value.size();) {
    size_t end = cache_path.value.find(':', start);
    if (end == std::string::npos) end = cache_path.value.size();
    if (end > start) cache.read_only_directories.push_back(cache_path.value.substr(start, end - start));
    start = end + 1;
  }
  return cache;
}

CompilerLibraryPaths Config::compiler_paths() const {
  CompilerLibraryPaths paths;
  paths.nvrtc_override = nvrtc_library.value;
  paths.hiprtc_override = hiprtc_library.value;
  paths.cuda_home = cuda_home.value;
  paths.rocm_home = rocm_home.value;
  paths.host_cxx = host_cxx.value;
  if (cuda_include.source != "default") paths.cuda_include = cuda_include.value;
  if (rocm_include.source != "default") paths.rocm_include = rocm_include.value;
  paths.driver_compile_cache = driver_compile_cache.value;
  return paths;
}

}  // namespace kernc
