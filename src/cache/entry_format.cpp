#include "cache/entry_format.hpp"

#include <chrono>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "cache/cache_key.hpp"
#include "platform/sha256.hpp"

namespace kernc::cache {

namespace {

template <class T>
void put_le(std::string& out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

template <class T>
T get_le(std::string_view bytes, size_t offset) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    value |= static_cast<T>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return value;
}

std::string utc_now() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::optional<StoredEntry> fail(std::string* problem, std::string why) {
  if (problem) *problem = std::move(why);
  return std::nullopt;
}

}  // namespace

EntryDescription describe_entry(const Program& program, const Target& target, const CompilerIdentity& compiler) {
  return {program.origin, key_inputs(program, target, compiler)};
}

std::string encode_entry(const std::string& key, const CompiledProgram& program, const CompilerIdentity& compiler,
                         const EntryDescription& description) {
  nlohmann::json metadata = {
      {"key", key},
      {"backend", to_string(program.target.backend())},
      {"target", program.target.str()},
      {"binary_kind", to_string(program.target.binary_kind())},
      {"compiler", program.compiler},
      {"compiler_library", compiler.library_path},
      {"compiler_reported", compiler.reported()},
      {"compiler_tag", compiler.tag()},
      {"flags", program.flags},
      {"lowered_names", program.lowered_names},
      {"log", program.log},
      {"compile_ms", program.compile_ms},
      {"created", utc_now()},
  };
  // NOTE [ entry description ]
  const ProgramOrigin& origin = description.origin;
  if (!origin.kernel.empty()) {
    metadata["kernel"] = {{"name", origin.kernel}, {"signature", origin.signature}, {"layout", origin.layout}};
  }
  if (!description.inputs.empty()) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& input : description.inputs) inputs.push_back({input.field, input.value});
    metadata["inputs"] = std::move(inputs);
  }
  // Logs and raw flags may carry bytes that are not UTF-8; they are informational, so
  // they are stored with replacement characters rather than refusing the entry.
  std::string meta = metadata.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(kEntryHeaderSize + meta.size() + program.binary.size());
  out.append(kEntryMagic);
  put_le<std::uint32_t>(out, kFormatVersion);
  put_le<std::uint32_t>(out, static_cast<std::uint32_t>(meta.size()));
  put_le<std::uint64_t>(out, program.binary.size());
  platform::Sha256 checksum;
  checksum.update(meta);
  checksum.update(program.binary);
  std::string hex = checksum.hex_digest();
  for (size_t i = 0; i < 32; ++i) out.push_back(static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16)));
  out += meta;
  out += program.binary;
  return out;
}

std::optional<StoredEntry> decode_entry(std::string_view bytes, const std::string& expected_key,
                                        std::string* problem, EntryMetadata kept) {
  if (bytes.size() < kEntryHeaderSize) {
    return fail(problem, fmt::format("truncated: {} bytes, shorter than the {}-byte header", bytes.size(),
                                     kEntryHeaderSize));
  }
  if (bytes.substr(0, kEntryMagic.size()) != kEntryMagic) return fail(problem, "not a kernc cache entry (bad magic)");
  auto version = get_le<std::uint32_t>(bytes, 8);
  if (version != kFormatVersion) {
    return fail(problem, fmt::format("format version {}, this kernc reads version {}", version, kFormatVersion));
  }
  auto meta_size = get_le<std::uint32_t>(bytes, 12);
  auto payload_size = get_le<std::uint64_t>(bytes, 16);
  std::uint64_t expected = kEntryHeaderSize + std::uint64_t{meta_size} + payload_size;
  if (payload_size > bytes.size() || expected != bytes.size()) {
    return fail(problem, fmt::format("size mismatch: header says {} bytes, file has {}", expected, bytes.size()));
  }
  std::string_view body = bytes.substr(kEntryHeaderSize);
  if (platform::sha256_raw(body) != bytes.substr(24, 32)) return fail(problem, "checksum mismatch");

  StoredEntry entry;
  try {
    // A look-up leaves the description out of the tree it builds (see NOTE [ entry
    // description ] in entry_format.hpp): it is most of the metadata, and building it was a
    // tenth of a fresh process's warm-disk first call (tools/bench/first_call_split.cpp,
    // NOTES compile-v4). The text is still read whole, so a malformed description fails the
    // entry either way.
    nlohmann::json::parser_callback_t skip_description = nullptr;
    if (kept == EntryMetadata::for_loading) {
      skip_description = [](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        return !(depth == 1 && event == nlohmann::json::parse_event_t::key && parsed.is_string() &&
                 (parsed.get_ref<const std::string&>() == "inputs" || parsed.get_ref<const std::string&>() == "kernel"));
      };
    }
    entry.metadata = nlohmann::json::parse(body.substr(0, meta_size), skip_description);
    entry.key = entry.metadata.at("key").get<std::string>();
    if (!expected_key.empty() && entry.key != expected_key) {
      return fail(problem, fmt::format("entry belongs to key {}, not {}", entry.key, expected_key));
    }
    auto& program = entry.program;
    program.target = Target::parse(entry.metadata.at("target").get<std::string>());
    program.binary = std::string(body.substr(meta_size));
    program.lowered_names = entry.metadata.at("lowered_names").get<std::map<std::string, std::string>>();
    program.log = entry.metadata.at("log").get<std::string>();
    program.flags = entry.metadata.at("flags").get<std::vector<std::string>>();
    program.compiler = entry.metadata.at("compiler").get<std::string>();
    program.compile_ms = entry.metadata.at("compile_ms").get<double>();
  } catch (const std::exception& error) {
    return fail(problem, fmt::format("unreadable metadata: {}", error.what()));
  }
  return entry;
}

}  // namespace kernc::cache
