#include "compiler/nvrtc_pch.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>

#include <fmt/format.h>

namespace kernc::compiler {

namespace {

std::string_view trim(std::string_view line) {
  const size_t first = line.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
}

// Whether `line` (trimmed) is the directive `name`: "#", spaces, the name, then a space,
// '<', '"' or nothing.
bool is_directive(std::string_view line, std::string_view name) {
  if (line.empty() || line[0] != '#') return false;
  line = trim(line.substr(1));
  if (line.substr(0, name.size()) != name) return false;
  line = line.substr(name.size());
  return line.empty() || line[0] == ' ' || line[0] == '\t' || line[0] == '<' || line[0] == '"';
}

// A private, unguessable file name for one creation (the directory is shared by processes).
std::string creation_name(std::size_t count) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  return fmt::format("pch-{}-{}-{:016x}", ::getpid(), count, random());
}

}  // namespace

std::string leading_includes(std::string_view source) {
  std::string prefix;
  bool any_include = false;
  while (!source.empty()) {
    const size_t end = source.find('\n');
    std::string_view line = trim(source.substr(0, end));
    source = end == std::string_view::npos ? std::string_view{} : source.substr(end + 1);
    if (line.empty() || line.substr(0, 2) == "//") continue;
    // A line continued with '\' could hide anything in the next one: stop before it.
    if (line.back() == '\\') break;
    const bool include = is_directive(line, "include");
    if (!include && line != "#pragma once") break;
    any_include = any_include || include;
    prefix.append(line).push_back('\n');
  }
  return any_include ? prefix : std::string{};
}

PchSet::~PchSet() {
  for (auto& [key, slot] : slots_) {
    if (slot.fd >= 0) ::close(slot.fd);
  }
}

PchSet::Plan PchSet::plan(const std::string& key, const std::string& directory) {
  Plan plan;
  plan.key = key;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = slots_.find(key);
  if (found == slots_.end()) {
    if (bytes_ >= kMaxBytes) return plan;
    slots_.emplace(key, Slot{});
    plan.mode = Mode::create;
    plan.path = directory + "/" + creation_name(created_files_++);
    return plan;
  }
  if (found->second.state == State::ready) {
    plan.mode = Mode::use;
    plan.path = fmt::format("/proc/self/fd/{}", found->second.fd);
  }
  return plan;  // being created by another thread, or refused: compile without
}

void PchSet::finish_create(const Plan& plan, bool created) {
  int fd = -1;
  std::size_t bytes = 0;
  if (created) {
    // O_NOFOLLOW + fstat: what is opened must be the regular file of this user that NVRTC
    // wrote, not something put in its place (the directory is 0700, this is a second wall).
    fd = ::open(plan.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat info {};
    if (fd >= 0 && (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid() ||
                    (info.st_mode & (S_IWGRP | S_IWOTH)) || info.st_size <= 0)) {
      ::close(fd);
      fd = -1;
    }
    if (fd >= 0) bytes = static_cast<std::size_t>(info.st_size);
  }
  ::unlink(plan.path.c_str());  // from now on only the descriptor reaches it
  std::lock_guard<std::mutex> lock(mutex_);
  Slot& slot = slots_[plan.key];
  if (fd >= 0 && bytes_ + bytes <= kMaxBytes) {
    slot.state = State::ready;
    slot.fd = fd;
    slot.bytes = bytes;
    bytes_ += bytes;
  } else {
    if (fd >= 0) ::close(fd);
    slot.state = State::refused;
  }
}

void PchSet::drop(const Plan& plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = slots_.find(plan.key);
  if (found == slots_.end()) return;
  // The descriptor stays open: a compile of another thread may be reading it right now.
  // It is closed with the set; the bytes it holds no longer count.
  bytes_ -= found->second.bytes;
  found->second.bytes = 0;
  found->second.state = State::refused;
}

void PchSet::count_use() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++uses_;
}

size_t PchSet::uses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return uses_;
}

size_t PchSet::ready() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t count = 0;
  for (const auto& [key, slot] : slots_) count += slot.state == State::ready ? 1 : 0;
  return count;
}

}  // namespace kernc::compiler
