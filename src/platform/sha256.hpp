#pragma once
// SHA-256, incremental and one-shot: computed with the CPU's SHA instructions where it has
// them, else through OpenSSL's EVP interface (NOTE [ sha256 without OpenSSL's start-up ]).

#include <memory>
#include <string>
#include <string_view>

namespace kernc::platform {

/// Incremental SHA-256. Move-only.
class Sha256 {
 public:
  Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  ~Sha256();
  void update(std::string_view bytes);
  /// The 32-byte digest as 64 lowercase hex characters; the object is spent afterwards.
  std::string hex_digest();
  /// The raw 32-byte digest; the object is spent afterwards.
  std::string raw_digest();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// SHA-256 of `bytes` as lowercase hex.
std::string sha256_hex(std::string_view bytes);
/// SHA-256 of a file's contents as lowercase hex; throws kernc::Error(io) if unreadable.
std::string sha256_file_hex(const std::string& path);
/// Raw 32-byte digest.
std::string sha256_raw(std::string_view bytes);

/// Whether digests begun now use the CPU's SHA instructions (else OpenSSL).
bool sha256_uses_cpu_instructions();
/// Makes digests begun from now on use OpenSSL even where the CPU has SHA instructions
/// (`true`), or lets them use the instructions again; for tests that compare the two.
void set_sha256_openssl_only(bool only);

}  // namespace kernc::platform
