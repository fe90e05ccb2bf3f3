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
#include <vector>

#include <nlohmann/json.hpp>

#include "kernc/compiler.hpp"
#include "kernc/program.hpp"
#include "cache/cache_key.hpp"

namespace kernc::cache {

inline constexpr std::string_view kEntryMagic = "KERNCENT";
inline constexpr size_t kEntryHeaderSize = 56;

/// A decoded entry: its key, its metadata as stored, and the program it holds.
struct StoredEntry {
  std::string key;
  nlohmann::json metadata;
  CompiledProgram program;
};

// NOTE [ entry description ]
// An entry says what it is for: the kernel and variant (ProgramOrigin) under "kernel",
// and the inputs of its key (cache::key_inputs) under "inputs", so that `kernc cache ls`
// names kernels and `kernc cache explain` can say which input differs when a kernel
// misses. Both are optional metadata fields: entries of an older kernc have neither and
// stay readable (tests/unit/test_cache_golden.cpp reads one), and the format version is
// unchanged, as neither the layout nor the key changed.
// Trust: the description lies inside the checksummed metadata, so it is covered by the
// same checksum and the same file trust rule (NOTE [ entry trust ]) as the binary. It is
// never an input of a look-up either: an entry is found by its key, which kernc computes
// itself, so a description that lies can mislead `cache ls`/`explain` but cannot make
// kernc load a binary built from other inputs.
struct EntryDescription {
  ProgramOrigin origin;
  std::vector<KeyInput> inputs;
};

/// What an entry of (program, target) compiled by `compiler` records about itself.
EntryDescription describe_entry(const Program& program, const Target& target, const CompilerIdentity& compiler);

/// The bytes of an entry file for `program` under `key`.
std::string encode_entry(const std::string& key, const CompiledProgram& program, const CompilerIdentity& compiler,
                         const EntryDescription& description = {});

/// What of an entry's metadata decode_entry keeps in StoredEntry::metadata.
enum class EntryMetadata {
  whole,       ///< every field, the description included (cache ls, inspect, explain)
  for_loading  ///< without the description ("kernel", "inputs"), which a look-up never reads
};

/// Decodes and checks an entry file. On any problem (short, foreign magic, other version,
/// bad sizes, checksum mismatch, unreadable metadata, a key other than `expected_key`
/// when that is non-empty) returns std::nullopt and says why in `problem`. The checks are
/// the same whatever `kept` says.
std::optional<StoredEntry> decode_entry(std::string_view bytes, const std::string& expected_key,
                                        std::string* problem, EntryMetadata kept = EntryMetadata::whole);

}  // namespace kernc::cache
