#include "compiler/host_pch.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>

#include "platform/files.hpp"

namespace kernc::compiler {

namespace {

// A regular file of this user that only this user may write (NOTE [ host precompiled headers ]).
bool trusted_file(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == ::geteuid() &&
         !(info.st_mode & (S_IWGRP | S_IWOTH)) && info.st_size > 0;
}

// Refreshes a file's times, so that the cache's cleanup of unused PCHs leaves it.
void touch(const std::string& path) { ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); }

}  // namespace

std::string HostPchSet::header(const std::string& key, const std::string& directory, const Create& create) {
  const std::string header = directory + "/pch-host-" + key + ".hpp";
  const std::string gch = header + ".gch";
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [slot, first] = states_.emplace(key, State::seen);
    if (slot->second == State::refused || slot->second == State::creating) return {};
    if (trusted_file(header) && trusted_file(gch)) {
      slot->second = State::ready;
      touch(header);
      touch(gch);
      return header;
    }
    if (first) return {};  // a key's first compile makes none
    slot->second = State::creating;  // its second, or a PCH gone since (a cleanup): made now
  }
  // Made outside the lock: other compiles of the key go on without it meanwhile.
  static std::atomic<unsigned> serial{0};
  const std::string temporary = gch + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  bool made = false;
  try {
    platform::make_directories(directory);
    platform::write_file_atomic(header, kHostPrefix);
    made = create(header, temporary) && ::chmod(temporary.c_str(), 0600) == 0 && trusted_file(temporary) &&
           std::rename(temporary.c_str(), gch.c_str()) == 0;
  } catch (...) {
    made = false;
  }
  if (!made) std::remove(temporary.c_str());
  std::lock_guard<std::mutex> lock(mutex_);
  states_[key] = made ? State::ready : State::refused;
  return made ? header : std::string();
}

void HostPchSet::refuse(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  states_[key] = State::refused;
}

void HostPchSet::count_use() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++uses_;
}

std::size_t HostPchSet::uses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return uses_;
}

std::size_t HostPchSet::ready() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t count = 0;
  for (const auto& [key, state] : states_) count += state == State::ready;
  return count;
}

}  // namespace kernc::compiler
