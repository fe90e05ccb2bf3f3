#pragma once
// NOTE [ host precompiled headers ]
// A host compile spends most of its time parsing what kernc puts before every program
// (templates/host_cuda.cuh and the standard headers it includes: 33,000 lines): g++ -O3
// of a saxpy takes 0.35 s of CPU, 0.28 s of it with -fsyntax-only. A GCC precompiled
// header of that prefix halves it (0.16-0.19 s), and the shared object is byte for byte
// the one a compile without it makes (tests/unit/test_host_pch.cpp compares bytes). Unlike
// NVRTC's (NOTE [ precompiled headers ], nvrtc_pch.hpp), a GCC PCH serves any process of
// the same compiler and flags, so it is kept in the cache's private PCH directory
// (<cache dir>/pch, 0700) for the processes that follow:
//  - Its files are pch-host-KEY.hpp (the prefix, two #include lines) and its .gch; KEY is
//    SHA-256 over the compiler's identity, every flag, the prefix and every header the
//    compile is given (name and content). A program with include directories of its own
//    gets none: their files are not hashed here. The compile adds `-include` of the .hpp
//    and changes nothing else.
//  - GCC checks a .gch against the compile and silently reads the .hpp instead when it does
//    not fit (another compiler release, other options): the result is the same either way.
//  - Made on a key's second compile in a process, never its first: a process that compiles
//    once (a first `kernc run`) does not pay the 0.7 s of making it. Written under a
//    temporary name and renamed, so a reader sees the whole file or none; used only when
//    both files are regular files of this user that only this user may write.
//  - Each use refreshes the files' times: the cache removes pch-* files unused for an hour
//    (src/cache/cache.cpp), so stale ones (a compiler since upgraded) do not stay.
//  - A compile that fails with the PCH is compiled again without it: the program's own
//    error comes back from that compile, and a PCH that was the fault is not used again in
//    this process.
// A .gch is about 24 MB; with KERNC_PCH=0 none is made or used.

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace kernc::compiler {

/// What kernc puts before every host program: the prefix a host PCH holds.
inline constexpr const char* kHostPrefix = "#include \"kernc/host_cuda.cuh\"\n#include <type_traits>\n";

/// The host PCHs one compiler object has seen, by key. Thread-safe.
class HostPchSet {
 public:
  /// Makes `gch` from `header` (the prefix, already written); false when it could not.
  using Create = std::function<bool(const std::string& header, const std::string& gch)>;

  /// The header to `-include` for a compile of `key` with PCHs in `directory`: the one
  /// found there (its times refreshed), or one made now with `create` when this is not the
  /// key's first compile in this process; empty for none.
  std::string header(const std::string& key, const std::string& directory, const Create& create);
  /// A compile failed with the header and succeeded without it: not used again here.
  void refuse(const std::string& key);
  /// How many keys have a PCH in use (for tests).
  std::size_t ready() const;
  /// A compile given a PCH succeeded; how many did (for tests).
  void count_use();
  std::size_t uses() const;

 private:
  enum class State { seen, creating, ready, refused };
  mutable std::mutex mutex_;
  std::map<std::string, State> states_;
  std::size_t uses_ = 0;
};

}  // namespace kernc::compiler
