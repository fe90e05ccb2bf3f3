#pragma once
// RAII over dlopen with an ordered list of candidates.

#include <string>
#include <vector>

// The symbol name of a function after macro expansion: cuda.h maps cuDeviceTotalMem to
// cuDeviceTotalMem_v2, and dlsym must ask for the name the header really means.
#define KERNC_SYMBOL_NAME(fn) KERNC_SYMBOL_NAME_EXPANDED(fn)
#define KERNC_SYMBOL_NAME_EXPANDED(fn) #fn

namespace kernc::platform {

/// A shared library loaded with dlopen; move-only. The library stays loaded for the
/// process's life (RTLD_NODELETE): destruction only gives the handle back.
class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  /// Tries each candidate in order and keeps the first that loads. Throws
  /// kernc::Error(library_not_found) listing every candidate with dlerror's reason.
  static DynamicLibrary open_first(const std::string& what, const std::vector<std::string>& candidates);

  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

  /// The symbol's address, or nullptr if the library lacks it.
  void* find(const char* symbol) const noexcept;
  /// The symbol's address; throws kernc::Error(symbol_not_found) naming it and the library.
  void* require(const char* symbol) const;
  /// The absolute path of the file the loader actually opened.
  const std::string& path() const noexcept { return path_; }
  bool loaded() const noexcept { return handle_ != nullptr; }

 private:
  void* handle_ = nullptr;
  std::string path_;
};

/// Absolute paths of the shared objects loaded in this process whose file name starts
/// with one of `prefixes` (e.g. "libamd_comgr"), in load order.
std::vector<std::string> loaded_libraries_matching(const std::vector<std::string>& prefixes);

}  // namespace kernc::platform
