#include "platform/files.hpp"

#include "kernc/files.hpp"

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

std::vector<std::pair<std::string, std::uintmax_t>> list_tree(const std::string& directory, std::error_code& error) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::uintmax_t>> files;
  error.clear();
  for (auto it = fs::recursive_directory_iterator(directory, fs::directory_options::follow_directory_symlink, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    std::error_code ignored;  // a file that vanished or cannot be stat'ed is left out
    if (!it->is_regular_file(ignored)) continue;
    // Lexically: the iterator's paths are `directory` joined with the names under it.
    // fs::relative canonicalizes both sides, a readlink per path component of every file:
    // 70,000 system calls, ~100 ms, for the CUDA toolkit's 1,982 headers, paid by every
    // process's first compile (issue 35). Both give the same names in a tree without
    // symbolic links to directories; through one, this names the file where it is found.
    files.emplace_back(it->path().lexically_relative(directory).string(), it->file_size(ignored));
  }
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
