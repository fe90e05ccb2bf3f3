#include "platform/files.hpp"

#include "kernc/files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "kernc/error.hpp"

namespace kernc::platform {

namespace {
Error io_error(const std::string& what, const std::string& path, int err) {
  return Error(ErrorCode::io, fmt::format("{} {}: {}", what, path, std::strerror(err)));
}

// Closes a file descriptor when it leaves scope.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};
}  // namespace

std::optional<std::string> read_file_if_exists(const std::string& path) {
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw io_error("cannot open", path, errno);
  }
  return read_all(file.fd, path);
}

std::string read_all(int fd, const std::string& path) {
  std::string contents;
  struct stat info {};
  if (::fstat(fd, &info) == 0 && info.st_size > 0) contents.reserve(info.st_size);
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw io_error("cannot read", path, errno);
    }
    contents.append(buffer, static_cast<size_t>(n));
  }
  return contents;
}

std::string read_file(const std::string& path) {
  auto contents = read_file_if_exists(path);
  if (!contents) throw io_error("cannot open", path, ENOENT);
  return *std::move(contents);
}

std::string unique_temp_path(const std::string& directory, std::string_view stem) {
  static std::atomic<unsigned> counter{0};
  thread_local std::mt19937_64 random(std::random_device{}() ^
                                      std::chrono::steady_clock::now().time_since_epoch().count());
  return fmt::format("{}/.tmp.{}.{}.{}.{:x}", directory, stem, ::getpid(), counter++, random());
}

namespace {

// Deeper than any real include tree: a symbolic link that loops back up stops here.
constexpr int kMaxTreeDepth = 64;

// Adds the regular files under the open directory `dir_fd` (taken over and closed) to
// `files`, their names prefixed with `prefix`. False with `error` set on a listing error.
// Every look-up is relative to the directory's descriptor (fstatat, openat): the kernel
// resolves one name, not the whole path again for every file (see list_tree).
bool list_tree_into(int dir_fd, const std::string& prefix, int depth,
                    std::vector<std::pair<std::string, std::uintmax_t>>& files, std::error_code& error) {
  DIR* stream = ::fdopendir(dir_fd);
  if (!stream) {
    error.assign(errno, std::generic_category());
    ::close(dir_fd);
    return false;
  }
  const int fd = ::dirfd(stream);
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(stream);
    if (!entry) {
      if (errno != 0) error.assign(errno, std::generic_category());
      break;
    }
    const char* name = entry->d_name;
    if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
    bool directory = entry->d_type == DT_DIR;
    if (!directory) {
      struct stat status {};
      // Follows symbolic links, as the search of an include directory does. A file that
      // vanished or cannot be examined is left out, as it is of the search.
      if (::fstatat(fd, name, &status, 0) != 0) continue;
      if (S_ISREG(status.st_mode)) {
        files.emplace_back(prefix + name, static_cast<std::uintmax_t>(status.st_size));
        continue;
      }
      directory = S_ISDIR(status.st_mode);
    }
    if (!directory) continue;
    if (depth >= kMaxTreeDepth) {
      error = std::make_error_code(std::errc::too_many_symbolic_link_levels);
      break;
    }
    const int child = ::openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (child < 0) {
      error.assign(errno, std::generic_category());
      break;
    }
    if (!list_tree_into(child, prefix + name + "/", depth + 1, files, error)) break;
  }
  ::closedir(stream);
  return !error;
}

}  // namespace

std::vector<std::pair<std::string, std::uintmax_t>> list_tree(const std::string& directory, std::error_code& error) {
  // Every process's first compile lists the toolkit's include directories (1,982 headers
  // for CUDA 13.0) for the compiler's identity. std::filesystem's iterator stats each entry
  // by its full path, twice (type, then size), and fs::relative added a readlink per path
  // component: 70,000 system calls, ~100 ms (issue 35). Descriptor-relative calls take one
  // fstatat per file and none per directory: a fifth of a fresh process's first compile
  // went to this listing before (NOTES compile-v4).
  std::vector<std::pair<std::string, std::uintmax_t>> files;
  error.clear();
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    error.assign(errno, std::generic_category());
    return files;
  }
  list_tree_into(fd, "", 0, files, error);
  std::sort(files.begin(), files.end());
  return files;
}

bool is_temp_name(std::string_view name) noexcept { return name.rfind(".tmp.", 0) == 0; }

void write_file_atomic(const std::string& path, std::string_view bytes, unsigned mode) {
  auto slash = path.find_last_of('/');
  std::string directory = slash == std::string::npos ? "." : path.substr(0, slash);
  std::string stem = path.substr(slash == std::string::npos ? 0 : slash + 1);
  std::string temp = unique_temp_path(directory, stem);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) throw io_error("cannot create", temp, errno);
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : ENOSPC;
      ::close(fd);
      ::unlink(temp.c_str());
      throw io_error("cannot write", temp, err);
    }
    written += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    throw io_error("cannot write", temp, err);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    throw io_error("cannot rename into", path, err);
  }
}

void make_directories(const std::string& path, unsigned mode) {
  if (path.empty()) throw Error(ErrorCode::io, "cannot create a directory with an empty path");
  size_t pos = 0;
  for (;;) {
    pos = path.find('/', pos + 1);
    std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) throw io_error("cannot create", prefix, errno);
    if (pos == std::string::npos) break;
  }
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw io_error("cannot stat", path, errno);
  if (!S_ISDIR(info.st_mode)) throw Error(ErrorCode::io, fmt::format("{} exists and is not a directory", path));
}

}  // namespace kernc::platform

// The public names (include/kernc/files.hpp) of the helpers above.
namespace kernc {

std::string read_file(const std::string& path) { return platform::read_file(path); }
void write_file_atomic(const std::string& path, std::string_view bytes, unsigned mode) {
  platform::write_file_atomic(path, bytes, mode);
}
void make_directories(const std::string& path, unsigned mode) { platform::make_directories(path, mode); }

}  // namespace kernc
