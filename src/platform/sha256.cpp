#include "platform/sha256.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "kernc/error.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#if __has_include(<sys/platform/x86.h>)
// glibc 2.33+. Its inline functions return the C type _Bool, which clang's C++ does not
// know (g++ takes it as an extension): spelled bool while the header is read.
#define _Bool bool
#include <sys/platform/x86.h>
#undef _Bool
#define KERNC_HAVE_GLIBC_CPU_FEATURES 1
#endif
#endif

namespace kernc::platform {

// NOTE [ sha256 without OpenSSL's start-up ]
// Every first call of a kernel hashes its program and checks its cache entry's checksum.
// OpenSSL's first digest in a process costs 0.7-1.4 ms on an x86 host (loading its
// configuration and initialising its default provider, measured on this project's build
// machine), and a fresh process's first kernel call measured 1.8-2.0 ms on the H100 host
// where the same call in a warmed process took 0.3 ms (tools/bench/NOTES.md v22). On a
// CPU with the SHA extensions (Intel since Ice Lake server / Goldmont, AMD since Zen) the
// compression function below does the work in a few instructions per byte, as fast as
// OpenSSL's own SHA-NI code, with no start-up at all. Elsewhere (older x86, ARM) OpenSSL
// computes it, and pays its start-up once. Both give the same digest: FIPS 180-4 SHA-256
// (the unit tests compare them on many lengths and on the standard's examples).

namespace {

#if defined(__x86_64__)

// Asked of glibc, which read CPUID once when the process started: CPUID itself traps to
// the hypervisor on a virtual machine (8.5 us an instruction on this project's build VM,
// four of them here), and that was a sixth of a fresh process's first cache look-up.
bool cpu_has_sha_extensions() {
#ifdef KERNC_HAVE_GLIBC_CPU_FEATURES
  return CPU_FEATURE_ACTIVE(SHA) && CPU_FEATURE_ACTIVE(SSSE3) && CPU_FEATURE_ACTIVE(SSE4_1);
#else
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool ssse3 = ecx & (1u << 9), sse41 = ecx & (1u << 19);
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool sha = ebx & (1u << 29);
  return ssse3 && sse41 && sha;
#endif
}

// The 64 round constants of FIPS 180-4, 4.2.2.
alignas(16) constexpr std::uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// Compresses `blocks` 64-byte blocks into `state` (a..h) with the SHA instructions.
// sha256rnds2 does two rounds on the state split as {a, b, e, f} and {c, d, g, h}; the
// message schedule takes four words at a time: W[t..t+3] = msg2(msg1(W[t-16..], W[t-12..])
// + W[t-7..t-4], W[t-4..t-1]), which adds sigma0, W[t-7] and sigma1 as 6.2.2 step 1 says.
__attribute__((target("sha,sse4.1,ssse3"))) void compress_sha_ni(std::uint32_t state[8], const unsigned char* data,
                                                                  std::size_t blocks) {
  // Big-endian words: reverse the bytes of each 32-bit lane.
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));
  const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    __m128i w[4];  // w[g % 4] holds W[4g..4g+3] of group g, the last four groups
    for (int g = 0; g < 16; ++g) {
      __m128i words;
      if (g < 4) {
        words = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * g)), byte_swap);
      } else {
        __m128i sum = _mm_sha256msg1_epu32(w[g % 4], w[(g + 1) % 4]);       // W[t-16] + sigma0(W[t-15])
        sum = _mm_add_epi32(sum, _mm_alignr_epi8(w[(g + 3) % 4], w[(g + 2) % 4], 4));  // + W[t-7]
        words = _mm_sha256msg2_epu32(sum, w[(g + 3) % 4]);                   // + sigma1(W[t-2])
      }
      w[g % 4] = words;
      __m128i k = _mm_add_epi32(words, _mm_load_si128(reinterpret_cast<const __m128i*>(kRound + 4 * g)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k);  // rounds 4g, 4g+1: cdgh now holds the new abef
      k = _mm_shuffle_epi32(k, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, k);  // rounds 4g+2, 4g+3
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  dcba = _mm_blend_epi16(feba, dchg, 0xF0);
  hgfe = _mm_alignr_epi8(dchg, feba, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), dcba);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), hgfe);
}

#endif

std::atomic<bool> openssl_only{false};  // set_sha256_openssl_only (tests)

// Whether this digest is computed here rather than by OpenSSL (see the NOTE).
bool own_sha256() {
#if defined(__x86_64__)
  static const bool cpu = cpu_has_sha_extensions();
  return cpu && !openssl_only.load(std::memory_order_relaxed);
#else
  return false;
#endif
}

}  // namespace

// FIPS 180-4 SHA-256 over the compression function above: buffering, padding, length.
// Outside the anonymous namespace: Sha256::Impl holds one (GCC's -Wsubobject-linkage where
// this file is compiled inside a unity batch).
class OwnSha256 {
 public:
  void update(const unsigned char* data, std::size_t size) {
    total_ += size;
    if (buffered_ > 0) {
      const std::size_t take = std::min(size, sizeof buffer_ - buffered_);
      std::memcpy(buffer_ + buffered_, data, take);
      buffered_ += take;
      data += take;
      size -= take;
      if (buffered_ < sizeof buffer_) return;
      compress(buffer_, 1);
      buffered_ = 0;
    }
    if (size >= 64) {
      compress(data, size / 64);
      data += size / 64 * 64;
      size %= 64;
    }
    std::memcpy(buffer_, data, size);
    buffered_ = size;
  }

  // 5.1.1: a 1 bit, zeros up to 56 bytes mod 64, then the length in bits, big-endian.
  void finish(unsigned char digest[32]) {
    const std::uint64_t bits = total_ * 8;
    unsigned char tail[72] = {0x80};
    const std::size_t pad = (buffered_ < 56 ? 56 : 120) - buffered_;
    for (int k = 0; k < 8; ++k) tail[pad + k] = static_cast<unsigned char>(bits >> (56 - 8 * k));
    update(tail, pad + 8);
    for (int k = 0; k < 8; ++k) {
      for (int b = 0; b < 4; ++b) digest[4 * k + b] = static_cast<unsigned char>(state_[k] >> (24 - 8 * b));
    }
  }

 private:
  void compress(const unsigned char* data, std::size_t blocks) {
#if defined(__x86_64__)
    compress_sha_ni(state_, data, blocks);
#else
    (void)data;
    (void)blocks;
#endif
  }

  // 5.3.3: the initial hash value.
  std::uint32_t state_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char buffer_[64] = {};
  std::size_t buffered_ = 0;
  std::uint64_t total_ = 0;
};

bool sha256_uses_cpu_instructions() { return own_sha256(); }
void set_sha256_openssl_only(bool only) { openssl_only.store(only, std::memory_order_relaxed); }

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;  // OpenSSL's state, when it computes the digest
  OwnSha256 own;
  ~Impl() {
    if (ctx) EVP_MD_CTX_free(ctx);  // not reached through the PLT when OpenSSL was never used
  }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  if (own_sha256()) return;
  impl_->ctx = EVP_MD_CTX_new();
  if (!impl_->ctx || EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1) {
    throw Error(ErrorCode::io, "OpenSSL could not initialise SHA-256");
  }
}
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;
Sha256::~Sha256() = default;

void Sha256::update(std::string_view bytes) {
  if (!impl_->ctx) {
    impl_->own.update(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
    return;
  }
  EVP_DigestUpdate(impl_->ctx, bytes.data(), bytes.size());
}

namespace {

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

std::string Sha256::raw_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 32;
  if (impl_->ctx) {
    EVP_DigestFinal_ex(impl_->ctx, digest, &length);
  } else {
    impl_->own.finish(digest);
  }
  return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string Sha256::hex_digest() { return to_hex(raw_digest()); }

std::string sha256_raw(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.raw_digest();
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
