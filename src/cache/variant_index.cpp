#include "cache/variant_index.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "cache/cache_key.hpp"
#include "cache/entry_trust.hpp"
#include "kernc/error.hpp"
#include "platform/build_id.hpp"
#include "platform/files.hpp"
#include "platform/sha256.hpp"
#include "base/log.hpp"

namespace kernc::cache {

namespace {

constexpr std::size_t kFileBytes = kProgramKeyLength + 1;  // 64 hex digits and a newline

bool is_digest(std::string_view text) {
  return text.size() == kProgramKeyLength && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace

VariantIndex::VariantIndex(std::string directory)
    : directory_(std::move(directory)), build_(platform::code_build_id()) {
  if (!build_.empty()) build_directory_ = directory_ + "/" + build_;
}

std::string VariantIndex::path(const std::string& variant) const {
  platform::Sha256 hash;
  hash.update(build_);
  hash.update("\n");
  hash.update(variant);
  return build_directory_ + "/" + hash.hex_digest();
}

std::optional<std::string> VariantIndex::find(const std::string& variant) const {
  if (!enabled()) return std::nullopt;
  const std::string file = path(variant);
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno != ENOENT) detail::logger().debug("variant index {}: {}", file, std::strerror(errno));
    return std::nullopt;
  }
  char bytes[kFileBytes + 1];
  struct stat info {};
  ssize_t got = -1;
  std::string why;
  if (::fstat(fd, &info) != 0) {
    why = std::strerror(errno);
  } else if (why = untrusted(info); why.empty()) {
    got = ::read(fd, bytes, sizeof bytes);  // one byte more than a good file has
  }
  ::close(fd);
  const std::string_view text(bytes, got > 0 ? static_cast<std::size_t>(got) : 0);
  if (why.empty() && (text.size() != kFileBytes || text.back() != '\n' || !is_digest(text.substr(0, kProgramKeyLength)))) {
    why = fmt::format("not a digest and a newline ({} bytes)", got);
  }
  if (!why.empty()) {
    detail::logger().debug("variant index {} passed over: {}", file, why);
    return std::nullopt;
  }
  return std::string(text.substr(0, kProgramKeyLength));
}

void VariantIndex::record(const std::string& variant, const std::string& digest) const {
  if (!enabled() || !is_digest(digest)) return;
  try {
    struct stat info {};
    const bool new_build = ::stat(build_directory_.c_str(), &info) != 0;
    platform::make_directories(build_directory_, 0700);
    platform::write_file_atomic(path(variant), digest + "\n", 0600);
    if (new_build) remove_old_builds();
  } catch (const std::exception& error) {
    detail::logger().debug("variant index not written: {}", error.what());
  }
}

// Keeps the kKeptBuilds build directories most recently written to (a directory's mtime
// changes when a file is renamed into it); the others belong to builds of kernc that
// this cache has not served lately.
void VariantIndex::remove_old_builds() const {
  struct Build {
    std::string path;
    struct timespec modified;
  };
  std::vector<Build> builds;
  if (DIR* dir = ::opendir(directory_.c_str())) {
    while (dirent* item = ::readdir(dir)) {
      const std::string name = item->d_name;
      if (name == "." || name == "..") continue;
      struct stat info {};
      const std::string path = directory_ + "/" + name;
      if (::lstat(path.c_str(), &info) == 0) builds.push_back({path, info.st_mtim});
    }
    ::closedir(dir);
  }
  std::sort(builds.begin(), builds.end(), [](const Build& a, const Build& b) {
    if (a.modified.tv_sec != b.modified.tv_sec) return a.modified.tv_sec > b.modified.tv_sec;
    return a.modified.tv_nsec > b.modified.tv_nsec;
  });
  for (std::size_t k = 0; k < builds.size(); ++k) {
    if (k < static_cast<std::size_t>(kKeptBuilds) || builds[k].path == build_directory_) continue;
    std::error_code error;
    std::filesystem::remove_all(builds[k].path, error);
  }
}

}  // namespace kernc::cache
