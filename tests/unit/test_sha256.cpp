// SHA-256 (src/platform/sha256.cpp): the digest computed with the CPU's SHA instructions
// against OpenSSL's and against FIPS 180-4's examples (NOTE [ sha256 without OpenSSL's
// start-up ]).

#include <openssl/evp.h>

#include <random>
#include <string>

#include <doctest/doctest.h>

#include "platform/sha256.hpp"

namespace {

using kernc::platform::Sha256;

std::string openssl_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  REQUIRE(EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) == 1);
  static const char* kDigits = "0123456789abcdef";
  std::string hex;
  for (unsigned k = 0; k < length; ++k) {
    hex += kDigits[digest[k] >> 4];
    hex += kDigits[digest[k] & 15];
  }
  return hex;
}

std::string random_bytes(std::mt19937& rng, std::size_t size) {
  std::string bytes(size, '\0');
  for (auto& c : bytes) c = static_cast<char>(rng() & 0xff);
  return bytes;
}

// Runs `body` once with the default choice and once with OpenSSL forced.
template <class Body>
void both_ways(Body&& body) {
  for (bool openssl : {false, true}) {
    CAPTURE(openssl);
    kernc::platform::set_sha256_openssl_only(openssl);
    body();
  }
  kernc::platform::set_sha256_openssl_only(false);
}

}  // namespace

TEST_CASE("sha256: FIPS 180-4 examples, one-shot and incremental") {
  MESSAGE("this CPU's SHA instructions in use: " << kernc::platform::sha256_uses_cpu_instructions());
  both_ways([] {
    CHECK(kernc::platform::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(kernc::platform::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(kernc::platform::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    // One million 'a', fed 1000 bytes at a time.
    Sha256 hash;
    const std::string thousand(1000, 'a');
    for (int k = 0; k < 1000; ++k) hash.update(thousand);
    CHECK(hash.hex_digest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  });
}

TEST_CASE("sha256: equals OpenSSL's on every length 0-300 and around block boundaries") {
  both_ways([] {
    std::mt19937 rng(14);
    for (std::size_t size = 0; size <= 300; ++size) {
      const std::string bytes = random_bytes(rng, size);
      CAPTURE(size);
      CHECK(kernc::platform::sha256_hex(bytes) == openssl_hex(bytes));
      CHECK(kernc::platform::sha256_raw(bytes).size() == 32);
    }
    for (std::size_t size : {4095u, 4096u, 4097u, 26000u, 1u << 20}) {
      const std::string bytes = random_bytes(rng, size);
      CAPTURE(size);
      CHECK(kernc::platform::sha256_hex(bytes) == openssl_hex(bytes));
    }
  });
}

TEST_CASE("sha256: any split of the input into updates gives the one-shot digest") {
  both_ways([] {
    std::mt19937 rng(28);
    for (int trial = 0; trial < 200; ++trial) {
      const std::string bytes = random_bytes(rng, rng() % 700);
      Sha256 hash;
      std::size_t at = 0;
      while (at < bytes.size()) {
        const std::size_t piece = std::min<std::size_t>(bytes.size() - at, rng() % 130);
        hash.update(std::string_view(bytes).substr(at, piece));
        at += piece;
      }
      CAPTURE(bytes.size());
      CHECK(hash.hex_digest() == openssl_hex(bytes));
    }
  });
}
