#pragma once
// One self-describing file per cache entry; cache/FORMAT.md is the specification.
//
//   offset  size  field
//   0       8     magic "KERNCENT"
//   8       4     format version, little-endian u32 (kFormatVersion)
//   12      4     metadata size M, little-endian u32
//   16      8     payload size P, little-endian u64
//   24      32    SHA-256 of metadata || payload
//   56      M     metadata, UTF-8 JSON
//   56+M    P     payload: the binary (cubin, PTX text or HSA code object)

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kernc/compiler.hpp"
#include "kernc/program.hpp"

namespace kernc::cache {

inline constexpr std::string_view kEntryMagic = "KERNCENT";
inline constexpr size_t kEntryHeaderSize = 56;

/// A decoded entry: its key, its metadata as stored, and the program it holds.
struct StoredEntry {
  std::string key;
  nlohmann::json metadata;
  CompiledProgram program;
};

/// The bytes of an entry file for `program` under `key`.
std::string encode_entry(const std::string& key, const CompiledProgram& program, const CompilerIdentity& compiler);

/// Decodes and checks an entry file. On any problem (short, foreign magic, other version,
/// bad sizes, checksum mismatch, unreadable metadata, a key other than `expected_key`
/// when that is non-empty) returns std::nullopt and says why in `problem`.
std::optional<StoredEntry> decode_entry(std::string_view bytes, const std::string& expected_key,
                                        std::string* problem);

}  // namespace kernc::cache
