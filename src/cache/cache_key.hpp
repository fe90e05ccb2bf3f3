#pragma once
// NOTE [ cache key ]
// An entry's key is "<program>-<compiler>": 64 hex digits, a dash, 16 hex digits.
//
// <program> is SHA-256 over every input of the compiler except the compiler itself, each
// field written as   tag '=' decimal-length ':' bytes '\n'   so that no two different
// inputs share an encoding. Its fields, in order:
//   format      kernc's cache format version (kFormatVersion)
//   backend     "cuda" | "hip"
//   target      canonical target name, binary kind
//   program     the program digest: SHA-256, in the same encoding, over
//     options      canonical_bytes(CompileOptions): standard, defines, include dirs,
//                  extra headers by name and full content, switches, raw flags
//     include_tree one per include dir: SHA-256 over every file under it (relative path
//                  and contents), because NVRTC cannot report which ones were read
//     name         the program's file name (it reaches __FILE__ and the log)
//     source       the full source
//     name_expr    each name expression, in order
// The digest does not depend on the target, so trying the architecture ladder (see
// NOTE [ architecture ladder ] in src/kernels/engine.cpp) costs one small hash per target.
//
// <compiler> is CompilerIdentity::tag(): what the compiler reports (release, supported
// targets), never its file bytes, so one release from two packages shares entries.
//
// A look-up that has a compiler asks for the exact key. One that has none — a host with
// only the driver, or KERNC_COMPILE=never — accepts an entry of any compiler release for
// its <program> (Store::find_program): the binary was built from the same inputs.
// cache/FORMAT.md documents the same list; Cache::key_material prints it.

#include <cstdint>
#include <string>
#include <vector>

#include "kernc/compiler.hpp"
#include "kernc/program.hpp"

namespace kernc::cache {

/// Bumped whenever the key's fields or the entry file layout change.
inline constexpr std::uint32_t kFormatVersion = 2;

/// Hex digits of the <program> part and the <compiler> part of a key.
inline constexpr std::size_t kProgramKeyLength = 64;
inline constexpr std::size_t kCompilerTagLength = 16;
inline constexpr std::size_t kKeyLength = kProgramKeyLength + 1 + kCompilerTagLength;

/// The target-independent digest of a program (its options, include trees, name, source,
/// name expressions). `material`, when given, receives a readable dump of the fields.
std::string program_digest(const Program& program, std::string* material = nullptr);

/// The <program> part of a key: the digest placed for one backend and target.
std::string program_key(const std::string& digest, const Target& target, std::string* material = nullptr);

/// "<program_key>-<compiler tag>".
std::string entry_key(const std::string& program_key, const CompilerIdentity& compiler);

/// The whole key of (program, target) for a compiler; `material` as above.
std::string compute_key(const Program& program, const Target& target, const CompilerIdentity& compiler,
                        std::string* material = nullptr);

/// One input of a key, as an entry records it (NOTE [ entry description ] in
/// entry_format.hpp) and `kernc cache explain` compares it: a field of NOTE [ cache key ],
/// with the options broken out one field per option, and its value, or when it is long
/// or spans lines, "<size> bytes, sha256 <hex>".
struct KeyInput {
  std::string field;
  std::string value;
  bool operator==(const KeyInput& other) const { return field == other.field && value == other.value; }
};

/// The inputs that compute_key hashes for (program, target, compiler), in the key's order.
std::vector<KeyInput> key_inputs(const Program& program, const Target& target, const CompilerIdentity& compiler);

/// Whether `name` has the shape of a key ("<64 hex>-<16 hex>").
bool is_key(std::string_view name);

/// SHA-256 over every regular file under `directory` (sorted relative paths and contents).
/// Memoised per process. Throws kernc::Error(invalid_argument) if it holds more than
/// 256 MiB, or (io) if it cannot be read.
std::string hash_include_tree(const std::string& directory);

}  // namespace kernc::cache
