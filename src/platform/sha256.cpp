#include "platform/sha256.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "kernc/error.hpp"

namespace kernc::platform {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  if (!impl_->ctx || EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1) {
    throw Error(ErrorCode::io, "OpenSSL could not initialise SHA-256");
  }
}
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;
Sha256::~Sha256() = default;

void Sha256::update(std::string_view bytes) {
  EVP_DigestUpdate(impl_->ctx, bytes.data(), bytes.size());
}

namespace {
std::string finish_raw(EVP_MD_CTX* ctx) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx, digest, &length);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string to_hex(std::string_view raw) {
  static const char* kDigits = "0123456789abcdef";
  std::string hex;
  hex.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    hex.push_back(kDigits[c >> 4]);
    hex.push_back(kDigits[c & 15]);
  }
  return hex;
}
}  // namespace

std::string Sha256::hex_digest() { return to_hex(finish_raw(impl_->ctx)); }

std::string sha256_raw(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw Error(ErrorCode::io, "OpenSSL could not compute SHA-256");
  }
  return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string sha256_hex(std::string_view bytes) { return to_hex(sha256_raw(bytes)); }

std::string sha256_file_hex(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) {
    throw Error(ErrorCode::io, fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  }
  Sha256 hash;
  std::string buffer(1 << 20, '\0');
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), file)) > 0) {
    hash.update(std::string_view(buffer.data(), n));
  }
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed) throw Error(ErrorCode::io, fmt::format("error while reading {}", path));
  return hash.hex_digest();
}

}  // namespace kernc::platform
