#pragma once
// The variant index of a writable cache directory (NOTE [ variant index ]).
//
// NOTE [ variant index ]
// A generated kernel's program is a pure function of what it is made from: the kernel's
// definition, the call's resolved types, the layout class, and the code of kernc itself
// (its templates and code generator). Finding its binary in the disk cache the plain way
// means generating the whole source and hashing it with kernc's device headers (about
// 30 KB), which on a process's first call is most of the cost of a hit: 0.16 of 0.31 ms
// of cold CPU on the build machine (tools/bench/NOTES.md v23).
//
// The index maps the variant straight to its program digest (cache::program_digest), so
// a hit skips code generation. Each variant is a file
//     <cache>/index/<build id>/<sha256(build id, variant)>
// holding the digest as 64 hex digits and a newline. The build id is the GNU build ID of
// the object kernc was linked into (platform::code_build_id): another build of kernc, which
// may generate other source for the same variant, reads and writes another directory, and
// without a build ID there is no index. A digest only names a program; what is loaded is
// still the cache entry of that program, found and checked as always (NOTE [ cache key ],
// NOTE [ entry trust ]). A missing, damaged or untrusted index file, or one naming a
// program no tier holds, is a miss: the source is generated and the file rewritten.
// Files are written atomically (a temp file renamed into place). The directories of all
// but the kKeptBuilds most recently used builds are removed when a new build's directory
// is made, and `kernc cache clear` removes them all. Only the user's writable cache has
// an index; read-only tiers and the remote tier are searched by the digest it gives.

#include <optional>
#include <string>

namespace kernc::cache {

class VariantIndex {
 public:
  static constexpr int kKeptBuilds = 4;

  /// The index under `directory` (<cache>/index) for the running build of kernc.
  explicit VariantIndex(std::string directory);

  /// False when this build of kernc has no build ID: then find() finds nothing and
  /// record() writes nothing.
  bool enabled() const noexcept { return !build_.empty(); }
  /// The program digest recorded for `variant`, or std::nullopt (none, or a file that is
  /// damaged or untrusted: why is logged at debug level).
  std::optional<std::string> find(const std::string& variant) const;
  /// Records `digest` for `variant`. Never throws: an index that cannot be written only
  /// costs the next process the code generation (logged at debug level).
  void record(const std::string& variant, const std::string& digest) const;
  /// The file of `variant` (for tests and for people).
  std::string path(const std::string& variant) const;

 private:
  void remove_old_builds() const;

  std::string directory_;
  std::string build_;
  std::string build_directory_;
};

}  // namespace kernc::cache
