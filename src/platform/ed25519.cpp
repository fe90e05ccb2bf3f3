#include "platform/ed25519.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdio>

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "platform/files.hpp"

namespace kernc::platform {

namespace {

using PkeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

std::string raw_public_key(EVP_PKEY* key) {
  std::string raw(kEd25519PublicKeySize, '\0');
  size_t size = raw.size();
  if (EVP_PKEY_get_raw_public_key(key, reinterpret_cast<unsigned char*>(raw.data()), &size) != 1 ||
      size != kEd25519PublicKeySize) {
    return "";
  }
  return raw;
}

std::string read_key_file(const std::string& path, const char* what) {
  auto text = read_file_if_exists(path);
  if (!text) throw Error(ErrorCode::io, fmt::format("{} {}: no such file", what, path));
  return *text;
}

}  // namespace

struct Ed25519Signer::Key {
  PkeyPtr pkey{nullptr, &EVP_PKEY_free};
};

Ed25519Signer::Ed25519Signer() : key_(std::make_unique<Key>()) {}
Ed25519Signer::Ed25519Signer(Ed25519Signer&&) noexcept = default;
Ed25519Signer& Ed25519Signer::operator=(Ed25519Signer&&) noexcept = default;
Ed25519Signer::~Ed25519Signer() = default;

Ed25519Signer Ed25519Signer::from_pem_file(const std::string& path) {
  std::string text = read_key_file(path, "signing key");
  BioPtr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())), &BIO_free);
  Ed25519Signer signer;
  signer.key_->pkey.reset(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!signer.key_->pkey || EVP_PKEY_id(signer.key_->pkey.get()) != EVP_PKEY_ED25519) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("signing key {}: not a PEM Ed25519 private key (make one with "
                            "`openssl genpkey -algorithm ed25519 -out {}`)", path, path));
  }
  signer.public_key_ = raw_public_key(signer.key_->pkey.get());
  return signer;
}

std::string Ed25519Signer::sign(std::string_view message) const {
  MdCtxPtr context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  std::string signature(kEd25519SignatureSize, '\0');
  size_t size = signature.size();
  if (!context || EVP_DigestSignInit(context.get(), nullptr, nullptr, nullptr, key_->pkey.get()) != 1 ||
      EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1 ||
      size != kEd25519SignatureSize) {
    throw Error(ErrorCode::io, "Ed25519 signing failed in OpenSSL");
  }
  return signature;
}

std::vector<std::string> read_ed25519_public_keys(const std::string& path) {
  std::string text = read_key_file(path, "trusted signers file");
  BioPtr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())), &BIO_free);
  std::vector<std::string> keys;
  while (bio) {
    PkeyPtr key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr), &EVP_PKEY_free);
    if (!key) break;
    std::string raw = EVP_PKEY_id(key.get()) == EVP_PKEY_ED25519 ? raw_public_key(key.get()) : "";
    if (raw.empty()) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("trusted signers file {}: public key {} is not an Ed25519 key", path, keys.size() + 1));
    }
    keys.push_back(raw);
  }
  if (keys.empty()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("trusted signers file {}: no PEM public key in it (write one with "
                            "`openssl pkey -in KEY.pem -pubout`)", path));
  }
  return keys;
}

bool ed25519_verify(const std::string& public_key, std::string_view message, std::string_view signature) {
  if (public_key.size() != kEd25519PublicKeySize || signature.size() != kEd25519SignatureSize) return false;
  PkeyPtr key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                          reinterpret_cast<const unsigned char*>(public_key.data()), public_key.size()),
              &EVP_PKEY_free);
  MdCtxPtr context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  return key && context && EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr, key.get()) == 1 &&
         EVP_DigestVerify(context.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                          reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
}

}  // namespace kernc::platform
