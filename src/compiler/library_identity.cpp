#include "compiler/library_identity.hpp"

#include <sys/stat.h>

#include <climits>
#include <cstdlib>

#include <fmt/format.h>

#include "platform/files.hpp"
#include "platform/sha256.hpp"

namespace kernc::compiler {

namespace {
// Everything about a file that changes when its contents could have changed.
std::string stat_fingerprint(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return {};
  return fmt::format("{}|{}|{}|{}|{}.{}|{}.{}", path, info.st_dev, info.st_ino, info.st_size,
                     info.st_mtim.tv_sec, info.st_mtim.tv_nsec, info.st_ctim.tv_sec, info.st_ctim.tv_nsec);
}

bool is_hex_digest(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}
}  // namespace

std::string hash_library_files(const std::vector<std::string>& paths, const std::string& memo_dir) {
  std::string fingerprint;
  for (const auto& path : paths) fingerprint += stat_fingerprint(path) + "\n";
  std::string memo_path;
  if (!memo_dir.empty()) {
    memo_path = memo_dir + "/compilers/" + platform::sha256_hex(fingerprint);
    try {
      if (auto memo = platform::read_file_if_exists(memo_path); memo && is_hex_digest(*memo)) return *memo;
    } catch (const std::exception&) {
      // An unreadable memo is only a lost shortcut.
    }
  }
  platform::Sha256 hash;
  for (const auto& path : paths) {
    hash.update(fmt::format("file={}:", path.substr(path.find_last_of('/') + 1)));
    hash.update(platform::sha256_file_hex(path));
  }
  std::string digest = hash.hex_digest();
  if (!memo_path.empty()) {
    try {
      platform::make_directories(memo_dir + "/compilers");
      platform::write_file_atomic(memo_path, digest);
    } catch (const std::exception&) {
      // The cache directory may be read-only; the hash is still right.
    }
  }
  return digest;
}

std::string soname_version(const std::string& path) {
  char resolved[PATH_MAX];
  std::string real = ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
  auto pos = real.rfind(".so.");
  return pos == std::string::npos ? std::string() : real.substr(pos + 4);
}

std::string first_error_line(const std::string& log) {
  size_t start = 0;
  std::string first;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    std::string line = log.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (first.empty() && !line.empty()) first = line;
    if (line.find("error") != std::string::npos) return line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return first;
}

}  // namespace kernc::compiler
