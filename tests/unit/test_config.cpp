#include <doctest/doctest.h>

#include <map>
#include <string>

#include "kernc/config.hpp"
#include "kernc/error.hpp"
#include "temp_dir.hpp"

using kernc::Config;
using kernc::Error;
using kernc::ErrorCode;
using kernc::parse_size;
using kernc::test::contains;

namespace {

// A fake environment: from_environment reads only what is in `vars`.
Config config_from(const std::map<std::string, std::string>& vars) {
  return Config::from_environment([&vars](const char* name) -> const char* {
    auto found = vars.find(name);
    return found == vars.end() ? nullptr : found->second.c_str();
  });
}

// Expects an invalid_argument whose message names `variable` and quotes `value`.
void check_rejected(const std::map<std::string, std::string>& vars, const std::string& variable,
                    const std::string& value) {
  try {
    config_from(vars);
    FAIL(variable << "=" << value << " was accepted");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::invalid_argument);
    CHECK(contains(error.what(), variable));
    CHECK(contains(error.what(), "\"" + value + "\""));
  }
}

}  // namespace

TEST_CASE("config::Config::from_environment picks the cache directory and says from where") {
  SUBCASE("KERNC_CACHE_DIR wins over XDG_CACHE_HOME and HOME") {
    Config config = config_from({{"KERNC_CACHE_DIR", "/a/cache"}, {"XDG_CACHE_HOME", "/x"}, {"HOME", "/home/u"}});
    CHECK(config.cache_dir.value == "/a/cache");
    CHECK(config.cache_dir.source == "KERNC_CACHE_DIR");
  }
  SUBCASE("XDG_CACHE_HOME wins over HOME") {
    Config config = config_from({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/home/u"}});
    CHECK(config.cache_dir.value == "/x/kernc");
    CHECK(config.cache_dir.source == "XDG_CACHE_HOME");
  }
  SUBCASE("HOME last") {
    Config config = config_from({{"HOME", "/home/u"}});
    CHECK(config.cache_dir.value == "/home/u/.cache/kernc");
    CHECK(config.cache_dir.source == "HOME");
  }
  SUBCASE("an empty variable counts as unset") {
    Config config = config_from({{"KERNC_CACHE_DIR", ""}, {"XDG_CACHE_HOME", ""}, {"HOME", "/home/u"}});
    CHECK(config.cache_dir.value == "/home/u/.cache/kernc");
    CHECK(config.cache_dir.source == "HOME");
  }
  SUBCASE("none of them: no directory, and the disk layer is off") {
    Config config = config_from({});
    CHECK(config.cache_dir.value.empty());
    CHECK(contains(config.cache_dir.source, "HOME"));
    CHECK_FALSE(config.cache_config().disk_enabled);
  }
}

TEST_CASE("config::Config::from_environment has defaults that say so") {
  Config config = config_from({{"HOME", "/home/u"}});
  CHECK(config.cache_max_size.value == 4ull << 30);
  CHECK(config.cache_max_size.source == "default");
  CHECK_FALSE(config.cache_disabled.value);
  CHECK(config.cache_disabled.source == "default");
  CHECK(config.log_level.value == "warn");
  CHECK(config.nvrtc_library.value.empty());
  CHECK(config.nvrtc_library.source == "default");
  kernc::CacheConfig cache = config.cache_config();
  CHECK(cache.directory == "/home/u/.cache/kernc");
  CHECK(cache.max_size == 4ull << 30);
  CHECK(cache.disk_enabled);
  CHECK(cache.read_only_directories.empty());
  CHECK(config.compile_policy.value == "auto");
  CHECK(config.compile_policy.source == "default");
}

TEST_CASE("config::Config::from_environment reads every variable") {
  Config config = config_from({{"KERNC_CACHE_DIR", "/c"},
                               {"KERNC_CACHE_MAX_SIZE", "512M"},
                               {"KERNC_NVRTC_LIBRARY", "/opt/nvrtc.so"},
                               {"KERNC_HIPRTC_LIBRARY", "/opt/hiprtc.so"},
                               {"KERNC_CUDA_LIBRARY", "/opt/libcuda.so"},
                               {"KERNC_HIP_LIBRARY", "/opt/rocm/lib/libamdhip64.so.6"},
                               {"CUDA_HOME", "/opt/cuda"},
                               {"CUDA_PATH", "/opt/other"},
                               {"KERNC_LOG_LEVEL", "debug"},
                               {"KERNC_CACHE_PATH", "/opt/image-cache::/mnt/ro:"},
                               {"KERNC_COMPILE", "never"}});
  CHECK(config.cache_max_size.value == 512ull << 20);
  CHECK(config.cache_max_size.source == "KERNC_CACHE_MAX_SIZE");
  CHECK(config.nvrtc_library.value == "/opt/nvrtc.so");
  CHECK(config.nvrtc_library.source == "KERNC_NVRTC_LIBRARY");
  CHECK(config.hiprtc_library.value == "/opt/hiprtc.so");
  CHECK(config.cuda_driver_library.value == "/opt/libcuda.so");
  // The HIP runtime is its own setting: not the compiler's library (ROCm 6 splits them).
  CHECK(config.hip_runtime_library.value == "/opt/rocm/lib/libamdhip64.so.6");
  CHECK(config.hip_runtime_library.source == "KERNC_HIP_LIBRARY");
  CHECK(config.cuda_home.value == "/opt/cuda");
  CHECK(config.cuda_home.source == "CUDA_HOME");
  CHECK(config.log_level.value == "debug");
  CHECK(config.log_level.source == "KERNC_LOG_LEVEL");
  kernc::CompilerLibraryPaths paths = config.compiler_paths();
  CHECK(paths.nvrtc_override == "/opt/nvrtc.so");
  CHECK(paths.hiprtc_override == "/opt/hiprtc.so");
  CHECK(paths.cuda_home == "/opt/cuda");
  CHECK(config.compile_policy.value == "never");
  CHECK(config.compile_policy.source == "KERNC_COMPILE");
  CHECK(config.cache_path.source == "KERNC_CACHE_PATH");
  // Empty items (a stray or doubled ':') are skipped, the order is kept.
  CHECK(config.cache_config().read_only_directories == std::vector<std::string>{"/opt/image-cache", "/mnt/ro"});
  CHECK(config.cache_config().max_size == 512ull << 20);

  SUBCASE("CUDA_PATH when CUDA_HOME is unset") {
    Config other = config_from({{"CUDA_PATH", "/opt/other"}});
    CHECK(other.cuda_home.value == "/opt/other");
    CHECK(other.cuda_home.source == "CUDA_PATH");
  }
}

TEST_CASE("config::Config::from_environment reads KERNC_COMPILE as auto or never only") {
  CHECK(config_from({{"KERNC_COMPILE", "auto"}}).compile_policy.value == "auto");
  try {
    config_from({{"KERNC_COMPILE", "no"}});
    FAIL("KERNC_COMPILE=no was accepted");
  } catch (const kernc::Error& error) {
    CHECK(error.code() == kernc::ErrorCode::invalid_argument);
    CHECK(std::string(error.what()) == "KERNC_COMPILE must be auto or never, not \"no\"");
  }
}

TEST_CASE("config::Config::from_environment reads KERNC_CACHE_DISABLE as 0 or 1 only") {
  SUBCASE("1 turns the disk layer off") {
    Config config = config_from({{"HOME", "/home/u"}, {"KERNC_CACHE_DISABLE", "1"}});
    CHECK(config.cache_disabled.value);
    CHECK(config.cache_disabled.source == "KERNC_CACHE_DISABLE");
    CHECK_FALSE(config.cache_config().disk_enabled);
    CHECK(config.cache_config().read_only_directories.empty());
  }
  SUBCASE("0 leaves it on") {
    Config config = config_from({{"HOME", "/home/u"}, {"KERNC_CACHE_DISABLE", "0"}});
    CHECK_FALSE(config.cache_disabled.value);
    CHECK(config.cache_disabled.source == "KERNC_CACHE_DISABLE");
    CHECK(config.cache_config().disk_enabled);
  }
  for (const char* value : {"yes", "true", "2", "on"}) {
    INFO("KERNC_CACHE_DISABLE = " << value);
    check_rejected({{"HOME", "/home/u"}, {"KERNC_CACHE_DISABLE", value}}, "KERNC_CACHE_DISABLE", value);
  }
}

TEST_CASE("config::Config::from_environment reads KERNC_DRIVER_COMPILE_CACHE, off by default") {
  Config unset = config_from({{"HOME", "/home/u"}});
  CHECK_FALSE(unset.driver_compile_cache.value);
  CHECK(unset.driver_compile_cache.source == "default");
  CHECK_FALSE(unset.compiler_paths().driver_compile_cache);
  Config allowed = config_from({{"HOME", "/home/u"}, {"KERNC_DRIVER_COMPILE_CACHE", "1"}});
  CHECK(allowed.driver_compile_cache.value);
  CHECK(allowed.driver_compile_cache.source == "KERNC_DRIVER_COMPILE_CACHE");
  CHECK(allowed.compiler_paths().driver_compile_cache);
  Config off = config_from({{"HOME", "/home/u"}, {"KERNC_DRIVER_COMPILE_CACHE", "0"}});
  CHECK_FALSE(off.compiler_paths().driver_compile_cache);
  check_rejected({{"HOME", "/home/u"}, {"KERNC_DRIVER_COMPILE_CACHE", "yes"}}, "KERNC_DRIVER_COMPILE_CACHE", "yes");
}

TEST_CASE("config::Config::from_environment reads KERNC_PCH, on by default") {
  Config defaults = config_from({{"HOME", "/home/u"}});
  CHECK(defaults.precompiled_headers.value);
  CHECK(defaults.precompiled_headers.source == "default");
  CHECK(defaults.cache_config().precompiled_headers);
  Config off = config_from({{"HOME", "/home/u"}, {"KERNC_PCH", "0"}});
  CHECK_FALSE(off.precompiled_headers.value);
  CHECK(off.precompiled_headers.source == "KERNC_PCH");
  CHECK_FALSE(off.cache_config().precompiled_headers);
  for (const char* value : {"yes", "off", "2"}) {
    INFO("KERNC_PCH = " << value);
    check_rejected({{"HOME", "/home/u"}, {"KERNC_PCH", value}}, "KERNC_PCH", value);
  }
}

TEST_CASE("config::Config::from_environment rejects malformed values naming the variable") {
  check_rejected({{"KERNC_CACHE_MAX_SIZE", "lots"}}, "KERNC_CACHE_MAX_SIZE", "lots");
  check_rejected({{"KERNC_CACHE_MAX_SIZE", "12X"}}, "KERNC_CACHE_MAX_SIZE", "12X");
  check_rejected({{"KERNC_CACHE_MAX_SIZE", "-1G"}}, "KERNC_CACHE_MAX_SIZE", "-1G");
  check_rejected({{"KERNC_LOG_LEVEL", "verbose"}}, "KERNC_LOG_LEVEL", "verbose");
}

TEST_CASE("config::parse_size reads bytes with binary units") {
  struct Row {
    const char* text;
    std::uint64_t bytes;
  };
  const Row rows[] = {
      {"1048576", 1048576},        {"0", 0},
      {"512M", 512ull << 20},      {"512m", 512ull << 20},
      {"512MB", 512ull << 20},     {"4G", 4ull << 30},
      {"2GiB", 2ull << 30},        {"2gib", 2ull << 30},
      {"1.5G", 3ull << 29},        {"10K", 10240},
      {"1T", 1ull << 40},          {"100B", 100},
  };
  for (const auto& row : rows) {
    INFO("text = " << row.text);
    CHECK(parse_size(row.text, "SIZE") == row.bytes);
  }
}

TEST_CASE("config::parse_size rejects what is not a size, naming the setting") {
  for (const char* text : {"", "abc", "G", "12X", "5 M", "-1", "-1G", "nan", "inf", "4GG", "1E", "100000000T"}) {
    INFO("text = " << text);
    try {
      parse_size(text, "--max-size");
      FAIL("accepted");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::invalid_argument);
      CHECK(contains(error.what(), "--max-size"));
      CHECK(contains(error.what(), "\"" + std::string(text) + "\""));
    }
  }
}

TEST_CASE("config::format_size writes sizes for people") {
  CHECK(kernc::format_size(0) == "0 B");
  CHECK(kernc::format_size(12) == "12 B");
  CHECK(kernc::format_size(1023) == "1023 B");
  CHECK(kernc::format_size(1024) == "1.0 KiB");
  CHECK(kernc::format_size(320ull << 10) == "320.0 KiB");
  CHECK(kernc::format_size(3ull << 29) == "1.5 GiB");
  CHECK(kernc::format_size(5ull << 40) == "5.0 TiB");
}

TEST_CASE("config::Config::from_environment reads KERNC_COMPILE_WORKERS and KERNC_COMPILE_WORKER, in-process by default") {
  Config defaults = config_from({{"HOME", "/home/u"}});
  CHECK(defaults.compile_workers.value == 0);
  CHECK(defaults.compile_workers.source == "default");
  CHECK(defaults.compile_worker.value.empty());
  CHECK(defaults.compile_worker.source == "default");
  Config set = config_from({{"HOME", "/home/u"}, {"KERNC_COMPILE_WORKERS", "12"}, {"KERNC_COMPILE_WORKER", "/opt/k/bin/kernc"}});
  CHECK(set.compile_workers.value == 12);
  CHECK(set.compile_workers.source == "KERNC_COMPILE_WORKERS");
  CHECK(set.compile_worker.value == "/opt/k/bin/kernc");
  CHECK(set.compile_worker.source == "KERNC_COMPILE_WORKER");
  CHECK(config_from({{"KERNC_COMPILE_WORKERS", "0"}}).compile_workers.value == 0);
  CHECK(config_from({{"KERNC_COMPILE_WORKERS", "1024"}}).compile_workers.value == 1024);
  Config automatic = config_from({{"KERNC_COMPILE_WORKERS", "auto"}});
  CHECK(automatic.compile_workers.value >= 1);
  CHECK(automatic.compile_workers.source == "KERNC_COMPILE_WORKERS");
  for (const char* value : {"-1", "1025", "four", "2.5", " 3", "3 ", "+3", "0x10", "AUTO", "99999999999999999999"}) {
    INFO("KERNC_COMPILE_WORKERS = " << value);
    check_rejected({{"HOME", "/home/u"}, {"KERNC_COMPILE_WORKERS", value}}, "KERNC_COMPILE_WORKERS", value);
  }
  try {
    kernc::parse_compile_workers("x", "--workers");
    FAIL("x was read as a worker count");
  } catch (const Error& error) {
    CHECK(contains(error.what(), "--workers must be a number of compile worker processes from 0 (compile in this "
                                 "process) to 1024, or auto (one per hardware thread), not \"x\""));
  }
}
