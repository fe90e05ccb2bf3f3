#pragma once
// Fixtures shared by the unit tests: a temporary directory that cleans up after itself,
// a CacheConfig that points into one, and the test kernels under tests/unit/data/ (the
// vendor compilers are test_compilers.hpp's).

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include "kernc/cache.hpp"
#include "kernc/error.hpp"

namespace kernc::test {

/// A fresh directory under /tmp, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/kernc-test.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    }
    path_ = pattern;
  }
  ~TempDir() {
    // Tests make directories read-only or hand them to another user; give every
    // directory back to its owner's full access first so that removal cannot fail.
    restore_permissions(path_);
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const noexcept { return path_; }
  /// The path of `name` inside the directory (nothing is created).
  std::string operator/(std::string_view name) const { return path_ + "/" + std::string(name); }

  /// Writes `contents` to `name` (parents created) and returns its path.
  std::string write(std::string_view name, std::string_view contents) const {
    std::filesystem::path file = *this / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out) throw std::runtime_error("cannot write " + file.string());
    return file.string();
  }

 private:
  static void restore_permissions(const std::filesystem::path& directory) {
    ::chmod(directory.c_str(), 0700);
    std::error_code error;
    for (std::filesystem::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
      if (it->symlink_status(error).type() == std::filesystem::file_type::directory) restore_permissions(it->path());
    }
  }

  std::string path_;
};

/// A cache configuration whose store lives in `<dir>/<name>`; no Config, no environment.
inline CacheConfig cache_config_in(const TempDir& dir, std::string_view name = "cache",
                                   std::uint64_t max_size = 64ull << 20) {
  CacheConfig config;
  config.directory = dir / name;
  config.max_size = max_size;
  config.disk_enabled = true;
  return config;
}

/// The contents of tests/unit/data/<name>.
inline std::string test_data(std::string_view name) {
  std::string path = std::string(KERNC_SOURCE_DIR) + "/tests/unit/data/" + std::string(name);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read test data " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// The ELF magic that cubins and HSA code objects start with.
inline constexpr std::string_view kElfMagic = "\x7f" "ELF";

inline bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

/// Whether `key` has the shape of a cache key: "<64 hex>-<16 hex>" (NOTE [ cache key ]).
inline bool is_cache_key(std::string_view key) {
  auto hex = [](std::string_view text) { return text.find_first_not_of("0123456789abcdef") == std::string_view::npos; };
  return key.size() == 81 && key[64] == '-' && hex(key.substr(0, 64)) && hex(key.substr(65));
}

}  // namespace kernc::test
