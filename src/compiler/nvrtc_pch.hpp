#pragma once
// NOTE [ precompiled headers ]
// NVRTC 12.8+ can save the state of a compile after a source's leading #include lines (a
// precompiled header, PCH) and start later compiles of the same lines from it: a raw kernel
// that includes <cub/block/block_reduce.cuh> compiles in 0.33 s of CPU instead of 1.6 s
// once a PCH of that line exists (tools/bench/NOTES.md, "pch"); generated programs gain
// nothing measurable (kernc's own headers parse in a few ms of their compile). kernc uses it so:
//  - Explicit PCH (--create-pch / --use-pch), never NVRTC's automatic mode (-pch with
//    --pch-dir), which would leave files kernc does not manage.
//  - A PCH lives as long as the NVRTC instance that made it, never longer. NVRTC maps a PCH
//    at the address of its process-wide PCH heap, which ASLR places anew in every process:
//    another process's PCH is refused (warning #20282-D, "incompatible ... heap allocation
//    address"), so a PCH stored in the cache for other processes would cost a 178 MB write
//    and a read per use and never be used. kernc keeps PCHs per compiler object instead.
//  - Its file is created in a private directory the cache owns (<cache dir>/pch, 0700; the
//    compile needs a path: NVRTC deletes and recreates it), opened, checked (a regular file
//    of this user, like a cache entry: NOTE [ entry trust ]) and unlinked at once: from then
//    on only this process's descriptor reaches it (NVRTC reads it as /proc/self/fd/N), it
//    takes no room in the cache and vanishes with the process, crash or not.
//  - Its key is SHA-256 over the NVRTC release, the toolkit headers' identity, every flag,
//    the leading #include lines and every in-memory header (name and content). A program
//    with include directories of its own gets no PCH: their files are not hashed here.
//  - The binary is the one a compile without PCH gives (tests/unit/test_compiler_pch.cpp
//    compares bytes), and so is the log: NVRTC's "creating/using precompiled header" line
//    is taken out, and a compile that does not report using the PCH it was given (NVRTC
//    refused it: damaged, options or heap changed) is done again without it and the PCH
//    is dropped. A compile that creates a PCH costs about 1.3x one that does not; the
//    first program of a header prefix pays it, every later one gains.
//  - Concurrent compiles: one thread creates a given PCH; the others compile without it
//    meanwhile (no waiting). Processes never share files (each names its own).
// KERNC_PCH=0 (CacheConfig::precompiled_headers) turns it off.

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kernc::compiler {

/// The leading #include lines of `source` (blank lines and // comments between them
/// skipped, `#pragma once` kept), one per line; empty when the source starts otherwise.
std::string leading_includes(std::string_view source);

/// The PCHs of one NVRTC instance, by key. Thread-safe.
class PchSet {
 public:
  enum class Mode { none, create, use };
  struct Plan {
    Mode mode = Mode::none;
    std::string key;
    std::string path;  ///< the path NVRTC is given (create: in the directory; use: /proc/self/fd/N)
  };

  PchSet() = default;
  ~PchSet();
  PchSet(const PchSet&) = delete;
  PchSet& operator=(const PchSet&) = delete;

  /// What a compile of `key` should do: use a ready PCH, create one in `directory` (when no
  /// other thread is creating it), or neither.
  Plan plan(const std::string& key, const std::string& directory);
  /// After a compile that created `plan.path`: keeps the file (opened, checked, unlinked)
  /// when `created`, else forgets it; a key that failed is not tried again.
  void finish_create(const Plan& plan, bool created);
  /// A PCH NVRTC did not use: dropped, and its key is not tried again.
  void drop(const Plan& plan);
  /// How many PCHs are ready (for tests).
  size_t ready() const;
  /// A compile started from a ready PCH (NVRTC said it used it); how many did (for tests).
  void count_use();
  size_t uses() const;

  /// What the ready PCHs of one set may hold, in bytes (a PCH of CUB's block reduction
  /// is 178 MB); past it, new PCHs are not kept.
  static constexpr std::size_t kMaxBytes = std::size_t{1} << 30;

 private:
  enum class State { creating, ready, refused };
  struct Slot {
    State state = State::creating;
    int fd = -1;
    std::size_t bytes = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Slot> slots_;
  std::size_t uses_ = 0;
  std::size_t bytes_ = 0;          // of the ready PCHs' files, kept under kMaxBytes
  std::size_t created_files_ = 0;  // makes each creation's file name unique in the process
};

}  // namespace kernc::compiler
