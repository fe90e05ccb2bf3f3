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

// Writes tagged fields into the hash and, optionally, a readable dump of them.
class KeyBuilder {
 public:
  explicit KeyBuilder(std::string* material) : material_(material) {}

  void add(std::string_view tag, std::string_view bytes) {
    hash_.update(fmt::format("{}={}:", tag, bytes.size()));
    hash_.update(bytes);
    hash_.update("\n");
    if (!material_) return;
    bool printable = bytes.size() <= 120 && bytes.find('\n') == std::string_view::npos;
    if (printable) {
      *material_ += fmt::format("{:<12} {}\n", tag, bytes);
    } else {
      *material_ += fmt::format("{:<12} {} bytes, sha256 {}\n", tag, bytes.size(), platform::sha256_hex(bytes));
    }
  }

  std::string digest() { return hash_.hex_digest(); }

 private:
  platform::Sha256 hash_;
  std::string* material_;
};

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
  KeyBuilder key(material);
  key.add("options", canonical_bytes(program.options));
  for (const auto& dir : program.options.include_dirs) key.add("include_tree", hash_include_tree(dir));
  key.add("name", program.name);
  key.add("source", program.source);
  for (const auto& expression : program.name_expressions) key.add("name_expr", expression);
  return key.digest();
}

std::string program_key(const std::string& digest, const Target& target, std::string* material) {
  KeyBuilder key(material);
  key.add("format", std::to_string(kFormatVersion));
  key.add("backend", to_string(target.backend()));
  key.add("target", target.str());
  key.add("binary", to_string(target.binary_kind()));
  key.add("program", digest);
  return key.digest();
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

bool is_key(std::string_view name) {
  auto hex = [](std::string_view text) { return text.find_first_not_of("0123456789abcdef") == std::string_view::npos; };
  return name.size() == kKeyLength && name[kProgramKeyLength] == '-' && hex(name.substr(0, kProgramKeyLength)) &&
         hex(name.substr(kProgramKeyLength + 1));
}

}  // namespace kernc::cache
