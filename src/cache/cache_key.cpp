#include "cache/cache_key.hpp"

#include <filesystem>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "platform/files.hpp"
#include "platform/sha256.hpp"

namespace kernc::cache {

namespace {

constexpr std::uintmax_t kMaxIncludeTreeBytes = 256ull << 20;

// A field's bytes as the material dump and the recorded inputs show them.
std::string summary(std::string_view bytes) {
  bool printable = bytes.size() <= 120 && bytes.find('\n') == std::string_view::npos;
  if (printable) return std::string(bytes);
  return fmt::format("{} bytes, sha256 {}", bytes.size(), platform::sha256_hex(bytes));
}

// Writes tagged fields into the hash and, optionally, a readable dump of them and the
// list of inputs an entry records.
class KeyBuilder {
 public:
  explicit KeyBuilder(std::string* material, std::vector<KeyInput>* inputs = nullptr)
      : material_(material), inputs_(inputs) {}

  void add(std::string_view tag, std::string_view bytes) {
    hash_only(tag, bytes);
    describe(tag, bytes);
  }

  // Hashed, and dumped as material, but recorded in the inputs by describe() calls of
  // its parts (the options, one per option: a difference then names the option).
  void hash_only(std::string_view tag, std::string_view bytes) {
    hash_.update(fmt::format("{}={}:", tag, bytes.size()));
    hash_.update(bytes);
    hash_.update("\n");
    if (material_) *material_ += fmt::format("{:<12} {}\n", tag, summary(bytes));
  }

  void describe(std::string_view field, std::string_view bytes) {
    if (inputs_) inputs_->push_back({std::string(field), summary(bytes)});
  }

  std::string digest() { return hash_.hex_digest(); }

 private:
  platform::Sha256 hash_;
  std::string* material_;
  std::vector<KeyInput>* inputs_;
};

// The options, one input each, in canonical_bytes' order (src/core/compile_options.cpp).
void describe_options(KeyBuilder& key, const CompileOptions& options) {
  key.describe("std", options.language_standard);
  for (const auto& [name, value] : options.defines) key.describe("define " + name, value);
  for (const auto& dir : options.include_dirs) key.describe("include_dir", dir);
  for (const auto& [name, content] : options.headers) key.describe("header " + name, content);
  key.describe("fast_math", options.fast_math ? "on" : "off");
  key.describe("line_info", options.line_info ? "on" : "off");
  key.describe("debug", options.debug ? "on" : "off");
  for (const auto& flag : options.raw_flags) key.describe("flag", flag);
}

std::string digest_program(const Program& program, std::string* material, std::vector<KeyInput>* inputs) {
  KeyBuilder key(material, inputs);
  key.hash_only("options", canonical_bytes(program.options));
  describe_options(key, program.options);
  for (const auto& dir : program.options.include_dirs) key.add("include_tree", hash_include_tree(dir));
  key.add("name", program.name);
  key.add("source", program.source);
  for (const auto& expression : program.name_expressions) key.add("name_expr", expression);
  return key.digest();
}

std::string place_program(const std::string& digest, const Target& target, std::string* material,
                          std::vector<KeyInput>* inputs) {
  KeyBuilder key(material, inputs);
  key.add("format", std::to_string(kFormatVersion));
  key.add("backend", to_string(target.backend()));
  key.add("target", target.str());
  key.add("binary", to_string(target.binary_kind()));
  key.hash_only("program", digest);
  return key.digest();
}

}  // namespace

std::string hash_include_tree(const std::string& directory) {
  static std::mutex mutex;
  static std::map<std::string, std::string> memo;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto found = memo.find(directory); found != memo.end()) return found->second;
  }
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(directory, error)) {
    throw Error(ErrorCode::invalid_argument, fmt::format("include directory {} does not exist", directory));
  }
  const auto files = platform::list_tree(directory, error);
  if (error) {
    throw Error(ErrorCode::io, fmt::format("cannot list include directory {}: {}", directory, error.message()));
  }
  std::uintmax_t total = 0;
  for (const auto& file : files) total += file.second;
  if (total > kMaxIncludeTreeBytes) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("include directory {} holds more than {} MiB of files; kernc hashes every file "
                            "under an include directory into the cache key (NVRTC cannot say which it read). "
                            "Pass a narrower directory, or the headers themselves as CompileOptions::headers",
                            directory, kMaxIncludeTreeBytes >> 20));
  }
  platform::Sha256 hash;
  for (const auto& file : files) {
    std::string contents = platform::read_file(directory + "/" + file.first);
    hash.update(fmt::format("file={}:{}:", file.first, contents.size()));
    hash.update(contents);
  }
  std::string digest = hash.hex_digest();
  std::lock_guard<std::mutex> lock(mutex);
  memo.emplace(directory, digest);
  return digest;
}

std::string program_digest(const Program& program, std::string* material) {
  return digest_program(program, material, nullptr);
}

std::string program_key(const std::string& digest, const Target& target, std::string* material) {
  return place_program(digest, target, material, nullptr);
}

std::string entry_key(const std::string& program_key, const CompilerIdentity& compiler) {
  return program_key + "-" + compiler.tag();
}

std::string compute_key(const Program& program, const Target& target, const CompilerIdentity& compiler,
                        std::string* material) {
  std::string digest = program_digest(program, material);
  std::string key = entry_key(program_key(digest, target, material), compiler);
  if (material) *material += fmt::format("{:<12} {} (tag {})\n", "compiler", compiler.reported(), compiler.tag());
  return key;
}

std::vector<KeyInput> key_inputs(const Program& program, const Target& target, const CompilerIdentity& compiler) {
  // The target's fields first, then the program's: the order a reader expects.
  std::vector<KeyInput> program_inputs;
  const std::string digest = digest_program(program, nullptr, &program_inputs);
  std::vector<KeyInput> inputs;
  place_program(digest, target, nullptr, &inputs);
  inputs.insert(inputs.end(), program_inputs.begin(), program_inputs.end());
  inputs.push_back({"compiler", fmt::format("{} (tag {})", compiler.str(), compiler.tag())});
  return inputs;
}

bool is_key(std::string_view name) {
  auto hex = [](std::string_view text) { return text.find_first_not_of("0123456789abcdef") == std::string_view::npos; };
  return name.size() == kKeyLength && name[kProgramKeyLength] == '-' && hex(name.substr(0, kProgramKeyLength)) &&
         hex(name.substr(kProgramKeyLength + 1));
}

}  // namespace kernc::cache
