#include "platform/dynamic_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <fmt/format.h>

#include "kernc/error.hpp"

namespace kernc::platform {

DynamicLibrary DynamicLibrary::open_first(const std::string& what,
                                          const std::vector<std::string>& candidates) {
  std::string tried;
  for (const auto& candidate : candidates) {
    dlerror();
    // RTLD_NODELETE: the compilers, drivers and clients loaded here stay mapped for the
    // process's life; dlclose only drops the handle. Unmapping NVRTC ran its teardown and
    // cost a fresh process's first compile 6-7% of its time at exit, which a program that
    // calls NVRTC itself never pays (issue 35, NOTES compile-v4); and a driver must not
    // leave while contexts it made may still be used.
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle) {
      const char* reason = dlerror();
      tried += fmt::format("\n  {}: {}", candidate, reason ? reason : "unknown error");
      continue;
    }
    DynamicLibrary lib;
    lib.handle_ = handle;
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) {
      lib.path_ = map->l_name;
    } else {
      lib.path_ = candidate;
    }
    return lib;
  }
  throw Error(ErrorCode::library_not_found,
              fmt::format("could not load {}; tried:{}", what, tried.empty() ? " (nothing)" : tried));
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(other.handle_), path_(std::move(other.path_)) {
  other.handle_ = nullptr;
}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_) dlclose(handle_);
    handle_ = other.handle_;
    path_ = std::move(other.path_);
    other.handle_ = nullptr;
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_) dlclose(handle_);
}

void* DynamicLibrary::find(const char* symbol) const noexcept {
  return handle_ ? dlsym(handle_, symbol) : nullptr;
}

void* DynamicLibrary::require(const char* symbol) const {
  void* address = find(symbol);
  if (!address) {
    throw Error(ErrorCode::symbol_not_found,
                fmt::format("{} does not export the required symbol {}", path_, symbol));
  }
  return address;
}

namespace {
struct MatchState {
  const std::vector<std::string>* prefixes;
  std::vector<std::string> found;
};

int collect_matching(dl_phdr_info* info, size_t, void* data) {
  auto* state = static_cast<MatchState*>(data);
  if (!info->dlpi_name || !*info->dlpi_name) return 0;
  std::string path = info->dlpi_name;
  std::string file = path.substr(path.find_last_of('/') + 1);
  for (const auto& prefix : *state->prefixes) {
    if (file.rfind(prefix, 0) == 0) {
      state->found.push_back(path);
      break;
    }
  }
  return 0;
}
}  // namespace

std::vector<std::string> loaded_libraries_matching(const std::vector<std::string>& prefixes) {
  MatchState state{&prefixes, {}};
  dl_iterate_phdr(collect_matching, &state);
  return state.found;
}

}  // namespace kernc::platform
