#include "cache/local_store.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cache/cache_key.hpp"
#include "cache/entry_trust.hpp"
#include "kernc/error.hpp"
#include "platform/files.hpp"

namespace kernc::cache {

namespace {

constexpr std::time_t kAbandonedTempSeconds = 3600;

// Entries are named by their key; format 1 named them by a bare 64-digit hash. Old entries
// are listed so that prune, clear and verify see them (lookups never ask for them).
bool is_entry_name(const std::string& name) {
  bool legacy = name.size() == kProgramKeyLength && name.find_first_not_of("0123456789abcdef") == std::string::npos;
  return legacy || is_key(name);
}

// Removes whatever stands at `path` (a file, a symlink, a directory tree).
bool remove_any(const std::string& path) {
  std::error_code error;
  return std::filesystem::remove_all(path, error) > 0 && !error;
}

std::vector<std::string> list_directory(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return names;
  while (dirent* item = ::readdir(dir)) {
    std::string name = item->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(dir);
  return names;
}

// An exclusive flock on a lock file, released on destruction.
class FileLock {
 public:
  FileLock(const std::string& path, bool wait) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) return;
    if (::flock(fd_, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Every counter of CacheStats by its name in stats.json (and `kernc cache stats --json`).
#define KERNC_CACHE_COUNTERS(X)                                                                            \
  X(memory_hits) X(disk_hits) X(read_only_hits) X(fallback_hits) X(compiles) X(compile_failures)          \
  X(driver_cache_hits) X(corrupt_entries) X(evictions) X(store_failures) X(remote_hits) X(remote_misses)   \
  X(remote_rejected) X(remote_errors) X(remote_timeouts) X(remote_skipped) X(remote_writes)                \
  X(remote_bytes_read) X(remote_bytes_written)
#define KERNC_CACHE_TIMES(X) X(compile_ms) X(load_ms) X(remote_ms)

nlohmann::json stats_to_json(const CacheStats& s) {
  nlohmann::json j;
#define KERNC_WRITE(name) j[#name] = s.name;
  KERNC_CACHE_COUNTERS(KERNC_WRITE)
  KERNC_CACHE_TIMES(KERNC_WRITE)
#undef KERNC_WRITE
  return j;
}

CacheStats stats_from_json(const nlohmann::json& j) {
  CacheStats s;
#define KERNC_READ_COUNT(name) s.name = j.value(#name, std::uint64_t{0});
#define KERNC_READ_TIME(name) s.name = j.value(#name, 0.0);
  KERNC_CACHE_COUNTERS(KERNC_READ_COUNT)
  KERNC_CACHE_TIMES(KERNC_READ_TIME)
#undef KERNC_READ_COUNT
#undef KERNC_READ_TIME
  return s;
}

}  // namespace

LocalStore::LocalStore(std::string root, std::uint64_t max_size, Mode mode)
    : root_(std::move(root)), entries_(root_ + "/entries"), index_(root_ + "/index"), max_size_(max_size), mode_(mode) {
  const bool read_only = mode_ == Mode::read_only;
  if (!read_only) platform::make_directories(root_, 0700);
  struct stat info {};
  if (::stat(root_.c_str(), &info) != 0) {
    throw Error(ErrorCode::io, fmt::format("cannot use cache directory {}: {}", root_, std::strerror(errno)));
  }
  if (!S_ISDIR(info.st_mode)) throw Error(ErrorCode::io, fmt::format("cache directory {} is not a directory", root_));
  // Entries are code that will run on the GPU: never trust a directory someone else can
  // write (NOTE [ entry trust ]).
  if (read_only) {
    if (info.st_uid != ::geteuid() && info.st_uid != 0) {
      throw Error(ErrorCode::io, fmt::format("read-only cache {} is owned by uid {}: a read-only tier must be owned "
                                             "by root or by this user (uid {})",
                                             root_, info.st_uid, ::geteuid()));
    }
  } else if (info.st_uid != ::geteuid()) {
    throw Error(ErrorCode::io,
                fmt::format("cache directory {} is owned by uid {}, not by this user (uid {}); to use its entries "
                            "without writing to it, name it in KERNC_CACHE_PATH (a read-only tier must be owned by "
                            "root or by you and not writable by group or others)",
                            root_, info.st_uid, ::geteuid()));
  }
  if (info.st_mode & (S_IWGRP | S_IWOTH)) {
    throw Error(ErrorCode::io, fmt::format("{} {} is writable by other users (mode {:o}); kernc loads no code from "
                                           "a directory others can write",
                                           read_only ? "read-only cache" : "cache directory", root_,
                                           info.st_mode & 0777));
  }
  if (read_only) {
    writable_ = false;
    struct stat entries {};
    if (::stat(entries_.c_str(), &entries) != 0 || !S_ISDIR(entries.st_mode)) {
      throw Error(ErrorCode::io, fmt::format("read-only cache {} has no entries/ directory: it is not a kernc cache",
                                             root_));
    }
    if ((entries.st_uid != ::geteuid() && entries.st_uid != 0) || (entries.st_mode & (S_IWGRP | S_IWOTH))) {
      throw Error(ErrorCode::io, fmt::format("read-only cache {}: entries/ must be owned by root or this user and "
                                             "not writable by group or others",
                                             root_));
    }
    return;
  }
  try {
    platform::make_directories(entries_, 0700);
  } catch (const Error&) {
    if (::access(entries_.c_str(), R_OK | X_OK) != 0) throw;
  }
  writable_ = ::access(entries_.c_str(), W_OK) == 0;
  if (writable_ && ::access((root_ + "/CACHEDIR.TAG").c_str(), F_OK) != 0) {
    try {
      platform::write_file_atomic(root_ + "/CACHEDIR.TAG",
                                  "Signature: 8a477f597d28d172789f06886806bc55\n"
                                  "# This directory is a kernc compile cache; backups may skip it.\n");
    } catch (const Error&) {
      writable_ = false;
    }
  }
}

std::string LocalStore::entry_path(const std::string& key) const {
  return fmt::format("{}/{}/{}", entries_, key.substr(0, 2), key);
}

StoreLookup LocalStore::get(const std::string& key) {
  StoreLookup lookup;
  const std::string path = entry_path(key);
  auto corrupt = [&](std::string problem) {
    lookup.status = StoreLookup::Status::corrupt;
    lookup.problem = fmt::format("{}: {}", path, problem);
    return lookup;
  };
  // O_NOFOLLOW: a symlink in an entry's place is refused, never followed.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return lookup;
    if (errno == ELOOP) return corrupt("it is a symbolic link");
    return corrupt(std::strerror(errno));
  }
  std::string bytes;
  {
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat info {};
    if (::fstat(fd, &info) != 0) return corrupt(std::strerror(errno));
    if (std::string why = untrusted(info); !why.empty()) return corrupt("not trusted: " + why);
    try {
      bytes = platform::read_all(fd, path);
    } catch (const Error& error) {
      return corrupt(error.what());
    }
  }
  lookup.entry = decode_entry(bytes, key, &lookup.problem, EntryMetadata::for_loading);
  if (!lookup.entry) return corrupt(lookup.problem);
  lookup.status = StoreLookup::Status::hit;
  lookup.encoded = std::move(bytes);
  if (writable_) ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // LRU: mark as used now
  return lookup;
}

std::vector<std::string> LocalStore::find_program(const std::string& program_key) const {
  struct Found {
    std::string key;
    struct timespec used;
  };
  std::vector<Found> found;
  const std::string shard = fmt::format("{}/{}", entries_, program_key.substr(0, 2));
  const std::string prefix = program_key + "-";
  for (const auto& name : list_directory(shard)) {
    if (name.compare(0, prefix.size(), prefix) != 0 || !is_key(name)) continue;
    struct stat info {};
    if (::lstat((shard + "/" + name).c_str(), &info) != 0) continue;
    found.push_back({name, info.st_mtim});
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    if (a.used.tv_sec != b.used.tv_sec) return a.used.tv_sec > b.used.tv_sec;
    if (a.used.tv_nsec != b.used.tv_nsec) return a.used.tv_nsec > b.used.tv_nsec;
    return a.key < b.key;
  });
  std::vector<std::string> keys;
  for (auto& f : found) keys.push_back(std::move(f.key));
  return keys;
}

std::uint64_t LocalStore::put(const std::string& key, std::string_view encoded) {
  if (!writable_) throw Error(ErrorCode::io, fmt::format("cache directory {} is not writable", entries_));
  std::string path = entry_path(key);
  platform::make_directories(path.substr(0, path.find_last_of('/')), 0700);
  // Whatever stands in the entry's place and is not a regular file (a directory, a
  // symlink) would make the rename fail, or keep the entry from ever being read: it goes.
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) remove_any(path);
  platform::write_file_atomic(path, encoded, 0600);
  {
    std::lock_guard<std::mutex> lock(size_mutex_);
    if (size_estimate_) *size_estimate_ += encoded.size();
  }
  return evict_if_needed();
}

void LocalStore::put_source(const std::string& key, std::string_view source) {
  if (!writable_) throw Error(ErrorCode::io, fmt::format("cache directory {} is not writable", entries_));
  platform::write_file_atomic(source_path(key), source, 0600);
}

std::uint64_t LocalStore::evict_if_needed() {
  {
    std::lock_guard<std::mutex> lock(size_mutex_);
    if (!size_estimate_) {
      std::uint64_t total = 0;
      for (const auto& entry : list()) total += entry.size;
      size_estimate_ = total;
    }
    if (*size_estimate_ <= max_size_) return 0;
  }
  // Another process cleaning up already does the work: do not wait for it.
  FileLock lock(root_ + "/cleanup.lock", /*wait=*/false);
  if (!lock.held()) return 0;
  // Cleaning to 90% of the cap leaves room, so that every put does not trigger a scan.
  return prune_locked(max_size_ - max_size_ / 10).removed;
}

std::vector<EntryFile> LocalStore::list() const {
  std::vector<EntryFile> files;
  for (const auto& shard : list_directory(entries_)) {
    std::string shard_path = entries_ + "/" + shard;
    for (const auto& name : list_directory(shard_path)) {
      if (!is_entry_name(name)) continue;
      std::string path = shard_path + "/" + name;
      struct stat info {};
      if (::lstat(path.c_str(), &info) != 0) continue;
      const bool regular = S_ISREG(info.st_mode);
      files.push_back({name, path, regular, regular ? static_cast<std::uint64_t>(info.st_size) : 0,
                       info.st_mtim.tv_sec, info.st_mtim.tv_nsec});
    }
  }
  std::sort(files.begin(), files.end(), [](const EntryFile& a, const EntryFile& b) {
    if (a.last_used != b.last_used) return a.last_used < b.last_used;
    if (a.last_used_nsec != b.last_used_nsec) return a.last_used_nsec < b.last_used_nsec;
    return a.key < b.key;
  });
  return files;
}

VerifyReport LocalStore::verify(bool remove) const {
  VerifyReport report;
  for (const auto& file : list()) {
    ++report.checked;
    std::string problem;
    struct stat info {};
    if (::lstat(file.path.c_str(), &info) != 0) continue;  // gone since the listing
    if (std::string why = untrusted(info); !why.empty()) {
      problem = "not trusted: " + why;
    } else {
      try {
        auto bytes = platform::read_file(file.path);
        if (decode_entry(bytes, file.key, &problem, EntryMetadata::for_loading)) continue;
      } catch (const Error& error) {
        problem = error.what();
      }
    }
    report.bad.emplace_back(file.path, problem);
    if (remove && remove_any(file.path)) ++report.removed;
  }
  return report;
}

PruneReport LocalStore::prune(std::uint64_t max_size) {
  FileLock lock(root_ + "/cleanup.lock", /*wait=*/true);
  return prune_locked(max_size);
}

PruneReport LocalStore::prune_locked(std::uint64_t max_size) {
  PruneReport report;
  auto files = list();
  std::uint64_t total = 0;
  for (const auto& file : files) total += file.size;
  for (const auto& file : files) {  // oldest use first
    if (total <= max_size) break;
    if (!file.regular) continue;  // holds no bytes; `cache verify --fix` removes it
    if (::unlink(file.path.c_str()) == 0) {
      ::unlink((file.path + ".cu").c_str());  // a saved source goes with its entry
      total -= file.size;
      report.freed_bytes += file.size;
      ++report.removed;
    }
  }
  // Temp files left by writers that died between write and rename.
  std::time_t now = std::time(nullptr);
  for (const auto& shard : list_directory(entries_)) {
    std::string shard_path = entries_ + "/" + shard;
    for (const auto& name : list_directory(shard_path)) {
      if (!platform::is_temp_name(name)) continue;
      std::string path = shard_path + "/" + name;
      struct stat info {};
      if (::stat(path.c_str(), &info) == 0 && now - info.st_mtime > kAbandonedTempSeconds &&
          ::unlink(path.c_str()) == 0) {
        ++report.temp_files_removed;
      }
    }
  }
  report.remaining_bytes = total;
  std::lock_guard<std::mutex> guard(size_mutex_);
  size_estimate_ = total;
  return report;
}

std::uint64_t LocalStore::clear() {
  FileLock lock(root_ + "/cleanup.lock", /*wait=*/true);
  std::uint64_t removed = 0;
  for (const auto& file : list()) {
    removed += remove_any(file.path) ? 1 : 0;
    ::unlink((file.path + ".cu").c_str());
  }
  remove_any(root_ + "/index");  // digests of programs that are gone
  // The host compiler's precompiled headers kept for later processes: not entries, but
  // kernc's files too.
  remove_precompiled_headers(0);
  std::lock_guard<std::mutex> guard(size_mutex_);
  size_estimate_ = 0;
  return removed;
}

namespace {

// Calls visit(path, stat) for each compiler's file in `directory` (named pch-*).
template <class Visit>
void for_each_precompiled_header(const std::string& directory, Visit visit) {
  DIR* dir = ::opendir(directory.c_str());
  if (!dir) return;
  while (const dirent* item = ::readdir(dir)) {
    const std::string path = directory + "/" + item->d_name;
    struct stat file {};
    if (std::string_view(item->d_name).rfind("pch-", 0) == 0 && ::lstat(path.c_str(), &file) == 0) visit(path, file);
  }
  ::closedir(dir);
}

}  // namespace

void LocalStore::remove_precompiled_headers(std::time_t max_age) {
  const std::time_t now = std::time(nullptr);
  for_each_precompiled_header(root_ + "/pch", [&](const std::string& path, const struct stat& file) {
    if (max_age == 0 || now - file.st_mtime > max_age) ::unlink(path.c_str());
  });
}

std::pair<std::uint64_t, std::uint64_t> LocalStore::precompiled_header_usage() const {
  std::pair<std::uint64_t, std::uint64_t> usage{0, 0};
  for_each_precompiled_header(root_ + "/pch", [&](const std::string&, const struct stat& file) {
    if (!S_ISREG(file.st_mode)) return;
    ++usage.first;
    usage.second += static_cast<std::uint64_t>(file.st_size);
  });
  return usage;
}

std::string LocalStore::resolve(const std::string& text) const {
  std::string prefix = text;
  for (auto& c : prefix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (prefix.empty() || prefix.find_first_not_of("0123456789abcdef-") != std::string::npos) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("\"{}\" is not a cache key: expected hex digits (a key or a prefix of one)", text));
  }
  std::vector<std::string> matches;
  for (const auto& file : list()) {
    if (file.key.rfind(prefix, 0) == 0) matches.push_back(file.key);
  }
  if (matches.empty()) throw Error(ErrorCode::not_found, fmt::format("no cache entry has a key starting with {}", prefix));
  if (matches.size() > 1) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{} entries have keys starting with {}; give more characters", matches.size(), prefix));
  }
  return matches.front();
}

void LocalStore::add_stats(const CacheStats& delta) {
  if (!writable_) return;
  FileLock lock(root_ + "/stats.lock", /*wait=*/true);
  CacheStats total = read_stats();
  total += delta;
  platform::write_file_atomic(root_ + "/stats.json", stats_to_json(total).dump(2) + "\n");
}

CacheStats LocalStore::read_stats() const {
  try {
    auto text = platform::read_file_if_exists(root_ + "/stats.json");
    if (text) return stats_from_json(nlohmann::json::parse(*text));
  } catch (const std::exception&) {
    // A damaged stats file only loses counts; it is rewritten on the next update.
  }
  return {};
}

void LocalStore::reset_stats() {
  FileLock lock(root_ + "/stats.lock", /*wait=*/true);
  platform::write_file_atomic(root_ + "/stats.json", stats_to_json({}).dump(2) + "\n");
}

}  // namespace kernc::cache
