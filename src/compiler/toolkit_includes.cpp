#include "compiler/toolkit_includes.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "platform/files.hpp"
#include "platform/sha256.hpp"

namespace kernc::compiler {

namespace fs = std::filesystem;

namespace {

bool is_directory(const std::string& path) {
  std::error_code error;
  return !path.empty() && fs::is_directory(path, error);
}

bool is_file(const std::string& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

// The number a `#define NAME 12345` line of `header` gives, or "".
std::string defined_number(const std::string& header, const char* name) {
  auto text = platform::read_file_if_exists(header);
  if (!text) return {};
  // A plain scan (no std::regex: see issue 15): "define", blanks, NAME, blanks, digits.
  const std::string word = name;
  for (size_t at = text->find("define"); at != std::string::npos; at = text->find("define", at + 1)) {
    size_t k = text->find_first_not_of(" \t", at + 6);
    if (k == std::string::npos || k == at + 6 || text->compare(k, word.size(), word) != 0) continue;
    k = text->find_first_not_of(" \t", k + word.size());
    if (k == std::string::npos || !std::isdigit(static_cast<unsigned char>((*text)[k]))) continue;
    size_t end = text->find_first_not_of("0123456789", k);
    return text->substr(k, end == std::string::npos ? std::string::npos : end - k);
  }
  return {};
}

// A colon-separated override: "none" is no directory; each entry must be a directory.
ToolkitIncludes from_override(const std::string& list, const char* variable) {
  ToolkitIncludes includes;
  includes.found_by = variable;
  if (list == "none") return includes;
  for (size_t start = 0; start <= list.size();) {
    size_t end = std::min(list.find(':', start), list.size());
    std::string dir = list.substr(start, end - start);
    if (!dir.empty()) {
      if (!is_directory(dir)) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("{}: {} is not a directory (give directories separated by ':', or none)", variable, dir));
      }
      includes.dirs.push_back(dir);
    }
    start = end + 1;
  }
  includes.identity = include_dirs_identity(includes.dirs);
  return includes;
}

}  // namespace

std::string include_dirs_identity(const std::vector<std::string>& dirs) {
  if (dirs.empty()) return "none";
  static std::mutex mutex;
  static std::map<std::vector<std::string>, std::string> memo;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto found = memo.find(dirs); found != memo.end()) return found->second;
  }
  // Names and sizes, not contents: reading ~30 MB of toolkit headers would cost the first
  // compile of every process tens of milliseconds. A toolkit update changes the version
  // macros and nearly always some file's size; an edit that keeps every size is not seen.
  platform::Sha256 hash;
  std::size_t files = 0;
  std::vector<std::string> versions;
  std::vector<std::pair<std::string, platform::FileListing>> listed;  // (directory, its listing)
  for (const auto& dir : dirs) {
    // CUDA 13 searches the cccl directory of its include directory beside it: its listing is
    // taken from include/'s (the same names and sizes), not made a second time.
    platform::FileListing entries;
    const auto outer = std::find_if(listed.begin(), listed.end(), [&](const auto& earlier) {
      return dir.size() > earlier.first.size() + 1 && dir.compare(0, earlier.first.size(), earlier.first) == 0 &&
             dir[earlier.first.size()] == '/';
    });
    if (outer != listed.end()) {
      const std::string prefix = dir.substr(outer->first.size() + 1) + "/";
      for (const auto& [name, size] : outer->second) {
        if (name.compare(0, prefix.size(), prefix) == 0) entries.emplace_back(name.substr(prefix.size()), size);
      }
    } else {
      std::error_code error;  // an unreadable part is left out of the listing, as it is of the search
      entries = platform::list_tree(dir, error);
    }
    hash.update(fmt::format("dir {}\n", entries.size()));
    for (const auto& [name, size] : entries) hash.update(fmt::format("{} {}\n", name, size));
    files += entries.size();
    if (auto cuda = defined_number(dir + "/cuda.h", "CUDA_VERSION"); !cuda.empty()) versions.push_back("cuda " + cuda);
    if (auto cccl = defined_number(dir + "/cuda/std/__cccl/version.h", "CCCL_VERSION"); !cccl.empty()) {
      versions.push_back("cccl " + cccl);
    }
    if (auto hip = defined_number(dir + "/hip/hip_version.h", "HIP_VERSION"); !hip.empty()) versions.push_back("hip " + hip);
    listed.emplace_back(dir, std::move(entries));
  }
  std::string identity;
  for (const auto& version : versions) identity += version + ", ";
  identity += fmt::format("{} files sha256:{}", files, hash.hex_digest().substr(0, 16));
  std::lock_guard<std::mutex> lock(mutex);
  memo.emplace(dirs, identity);
  return identity;
}

ToolkitIncludes cuda_toolkit_includes(const CompilerLibraryPaths& paths, const std::string& nvrtc_library) {
  if (paths.cuda_include) return from_override(*paths.cuda_include, "KERNC_CUDA_INCLUDE");
  std::vector<std::pair<std::string, std::string>> candidates;  // (include dir, found by)
  if (!paths.cuda_home.empty()) candidates.emplace_back(paths.cuda_home + "/include", "CUDA_HOME");
  if (!nvrtc_library.empty()) {
    std::error_code error;
    fs::path library = fs::canonical(nvrtc_library, error);
    if (!error) {
      // .../lib64/libnvrtc.so.13 or .../targets/x86_64-linux/lib/libnvrtc.so.13
      candidates.emplace_back((library.parent_path().parent_path() / "include").string(), "next to " + nvrtc_library);
    }
  }
  candidates.emplace_back("/usr/local/cuda/include", "/usr/local/cuda");
  ToolkitIncludes includes;
  for (const auto& [dir, found_by] : candidates) {
    if (!is_file(dir + "/cuda.h")) continue;
    includes.dirs.push_back(dir);
    if (is_directory(dir + "/cccl")) includes.dirs.push_back(dir + "/cccl");  // CUDA 13: libcu++, CUB, Thrust
    includes.found_by = found_by;
    includes.identity = include_dirs_identity(includes.dirs);
    return includes;
  }
  includes.found_by = "no cuda.h in CUDA_HOME/include, next to libnvrtc, or in /usr/local/cuda/include";
  return includes;
}

ToolkitIncludes rocm_includes(const CompilerLibraryPaths& paths) {
  if (paths.rocm_include) return from_override(*paths.rocm_include, "KERNC_ROCM_INCLUDE");
  std::vector<std::pair<std::string, std::string>> candidates;
  if (!paths.rocm_home.empty()) candidates.emplace_back(paths.rocm_home + "/include", "ROCM_PATH");
  candidates.emplace_back("/opt/rocm/include", "/opt/rocm");
  ToolkitIncludes includes;
  for (const auto& [dir, found_by] : candidates) {
    if (!is_file(dir + "/hip/hip_runtime.h")) continue;
    includes.dirs.push_back(dir);
    includes.found_by = found_by;
    includes.identity = include_dirs_identity(includes.dirs);
    return includes;
  }
  includes.found_by = "no hip/hip_runtime.h in ROCM_PATH/include or /opt/rocm/include";
  return includes;
}

}  // namespace kernc::compiler
