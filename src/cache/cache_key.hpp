#pragma once
// NOTE [ cache key ]
// A cache key is SHA-256 over every input of the compiler, each written as
//   tag '=' decimal-length ':' bytes '\n'
// so that no two different inputs share an encoding. The fields, in order:
//   format      kernc's cache format version (kFormatVersion)
//   backend     "cuda" | "hip"
//   compiler    version string, then the SHA-256 of the loaded library files
//               (never compiler output: NVRTC's has not always been deterministic)
//   target      canonical target name, binary kind
//   options     canonical_bytes(CompileOptions): standard, defines, include dirs,
//               extra headers by name and full content, switches, raw flags
//   include_tree one per include dir: SHA-256 over every file under it (relative path
//               and contents), because NVRTC cannot report which ones were read
//   name        the program's file name (it reaches __FILE__ and the log)
//   source      the full source
//   name_expr   each name expression, in order
// cache/FORMAT.md documents the same list; Cache::key_material prints it.

#include <cstdint>
#include <string>

#include "kernc/compiler.hpp"
#include "kernc/program.hpp"

namespace kernc::cache {

/// Bumped whenever the key's fields or the entry file layout change.
inline constexpr std::uint32_t kFormatVersion = 1;

/// The key of (program, target) for a compiler; `material`, when given, receives a
/// readable dump of the hashed fields (long fields shown by size and SHA-256).
std::string compute_key(const Program& program, const Target& target, const CompilerIdentity& compiler,
                        std::string* material = nullptr);

/// SHA-256 over every regular file under `directory` (sorted relative paths and contents).
/// Memoised per process. Throws kernc::Error(invalid_argument) if it holds more than
/// 256 MiB, or (io) if it cannot be read.
std::string hash_include_tree(const std::string& directory);

}  // namespace kernc::cache
