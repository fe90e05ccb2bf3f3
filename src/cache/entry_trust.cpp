#include "cache/entry_trust.hpp"

#include <unistd.h>

#include <fmt/format.h>

namespace kernc::cache {

std::string untrusted(const struct stat& info) {
  if (S_ISLNK(info.st_mode)) return "it is a symbolic link";
  if (S_ISDIR(info.st_mode)) return "a directory stands in its place";
  if (!S_ISREG(info.st_mode)) return "it is not a regular file";
  if (info.st_uid != ::geteuid() && info.st_uid != 0) {
    return fmt::format("it is owned by uid {}, not by this user (uid {}) or root", info.st_uid, ::geteuid());
  }
  if (info.st_mode & (S_IWGRP | S_IWOTH)) {
    return fmt::format("it is writable by {} (mode {:o})", info.st_mode & S_IWOTH ? "others" : "its group",
                       info.st_mode & 0777);
  }
  return {};
}

}  // namespace kernc::cache
