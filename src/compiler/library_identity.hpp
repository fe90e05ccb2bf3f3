#pragma once
// Identifying a compiler by the bytes of its library files.

#include <string>
#include <vector>

namespace kernc::compiler {

/// One SHA-256 over the contents of `paths` (in order, each tagged with its file name).
///
/// Hashing libnvrtc (about 100 MB) takes ~0.1 s, too slow for every process, so when
/// `memo_dir` is set the result is memoised in `memo_dir`/compilers/, keyed by each
/// file's path, device, inode, size, mtime and ctime. Any change to a file changes its
/// ctime, so a replaced library is hashed again. Memo failures are ignored.
std::string hash_library_files(const std::vector<std::string>& paths, const std::string& memo_dir);

/// The version in a library file name after ".so." ("libamdhip64.so.5.2.21153" → "5.2.21153"),
/// after resolving symlinks; empty if there is none.
std::string soname_version(const std::string& path);

/// The first line of a compiler log that reports an error, trimmed; or the first line.
std::string first_error_line(const std::string& log);

}  // namespace kernc::compiler
