#pragma once
// Ed25519 signatures through OpenSSL's EVP interface, for signed remote cache entries
// (NOTE [ remote entry trust ] in cache/remote_store.hpp). Keys are PEM files as
// `openssl genpkey -algorithm ed25519` and `openssl pkey -pubout` write them.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kernc::platform {

inline constexpr size_t kEd25519PublicKeySize = 32;
inline constexpr size_t kEd25519SignatureSize = 64;

/// A private key that signs. Move-only.
class Ed25519Signer {
 public:
  /// Reads a PEM private key; throws kernc::Error(io) if the file cannot be read, or
  /// (invalid_argument) if it holds no Ed25519 private key.
  static Ed25519Signer from_pem_file(const std::string& path);
  Ed25519Signer(Ed25519Signer&&) noexcept;
  Ed25519Signer& operator=(Ed25519Signer&&) noexcept;
  ~Ed25519Signer();

  /// The 64-byte signature of `message`.
  std::string sign(std::string_view message) const;
  /// The raw 32-byte public key.
  const std::string& public_key() const noexcept { return public_key_; }

 private:
  Ed25519Signer();
  struct Key;
  std::unique_ptr<Key> key_;
  std::string public_key_;
};

/// Raw 32-byte public keys read from a PEM file of one or more PUBLIC KEY blocks; throws
/// kernc::Error(io) if unreadable, (invalid_argument) if a block is not an Ed25519 key or
/// there is none.
std::vector<std::string> read_ed25519_public_keys(const std::string& path);

/// Whether `signature` is `public_key`'s signature of `message`.
bool ed25519_verify(const std::string& public_key, std::string_view message, std::string_view signature);

}  // namespace kernc::platform
