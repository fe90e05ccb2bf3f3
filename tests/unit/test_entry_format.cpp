#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "cache/cache_key.hpp"
#include "cache/entry_format.hpp"
#include "platform/sha256.hpp"
#include "temp_dir.hpp"

using kernc::CompiledProgram;
using kernc::CompilerIdentity;
using kernc::Target;
using kernc::cache::decode_entry;
using kernc::cache::encode_entry;
using kernc::cache::kEntryHeaderSize;
using kernc::test::contains;

namespace {

const std::string kKey = kernc::platform::sha256_hex("test_entry_format key");
const std::string kOtherKey = kernc::platform::sha256_hex("another key");

CompilerIdentity nvrtc_identity() {
  CompilerIdentity id;
  id.backend = kernc::Backend::cuda;
  id.library_path = "/usr/local/cuda/lib64/libnvrtc.so.13";
  id.version = "13.0";
  id.targets = {"sm_80", "sm_90"};
  return id;
}

// A program whose binary holds NULs and high bytes, as a real cubin does.
CompiledProgram sample_compiled() {
  CompiledProgram program;
  program.target = Target::parse("sm_90a");
  program.binary = std::string("\x7f" "ELF\0\1\2", 7);
  for (int i = 0; i < 200; ++i) program.binary.push_back(static_cast<char>((i * 37) & 0xff));
  program.lowered_names = {{"scale<float>", "_Z5scaleIfEvPT_S0_i"}, {"saxpy", "saxpy"}};
  program.log = "kernel.cu(7): warning: variable \"x\" was declared but never referenced\nsecond line";
  program.flags = {"-arch=sm_90a", "-std=c++17", "-DBLOCK=128"};
  program.compiler = "nvrtc 13.0";
  program.compile_ms = 12.5;
  return program;
}

void set_u32(std::string& bytes, size_t offset, std::uint32_t value) {
  for (size_t i = 0; i < 4; ++i) bytes[offset + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

// An entry built by hand around arbitrary metadata, with correct sizes and checksum.
std::string handmade_entry(const std::string& metadata, const std::string& payload) {
  std::string out = "KERNCENT";
  out.append(4, '\0');
  set_u32(out, 8, kernc::cache::kFormatVersion);
  out.append(4, '\0');
  set_u32(out, 12, static_cast<std::uint32_t>(metadata.size()));
  out.append(8, '\0');
  std::uint64_t payload_size = payload.size();
  for (size_t i = 0; i < 8; ++i) out[16 + i] = static_cast<char>((payload_size >> (8 * i)) & 0xff);
  out += kernc::platform::sha256_raw(metadata + payload);
  return out + metadata + payload;
}

std::uint32_t metadata_size(const std::string& entry) {
  std::uint32_t size = 0;
  for (size_t i = 0; i < 4; ++i) size |= static_cast<std::uint32_t>(static_cast<unsigned char>(entry[12 + i])) << (8 * i);
  return size;
}

}  // namespace

TEST_CASE("cache::encode_entry and decode_entry round trip every field") {
  const CompiledProgram program = sample_compiled();
  const std::string bytes = encode_entry(kKey, program, nvrtc_identity());
  REQUIRE(bytes.size() > kEntryHeaderSize + program.binary.size());
  CHECK(bytes.substr(0, 8) == "KERNCENT");
  CHECK(bytes.size() == kEntryHeaderSize + metadata_size(bytes) + program.binary.size());
  // The payload is the binary, verbatim, at the end.
  CHECK(bytes.substr(bytes.size() - program.binary.size()) == program.binary);

  std::string problem;
  auto entry = decode_entry(bytes, kKey, &problem);
  REQUIRE_MESSAGE(entry.has_value(), problem);
  CHECK(problem.empty());
  CHECK(entry->key == kKey);
  CHECK(entry->program.binary == program.binary);
  CHECK(entry->program.lowered_names == program.lowered_names);
  CHECK(entry->program.lowered_name("scale<float>") == "_Z5scaleIfEvPT_S0_i");
  CHECK(entry->program.log == program.log);
  CHECK(entry->program.flags == program.flags);
  CHECK(entry->program.target == program.target);
  CHECK(entry->program.target.str() == "sm_90a");
  CHECK(entry->program.compiler == program.compiler);
  CHECK(entry->program.compile_ms == doctest::Approx(program.compile_ms));
  CHECK(entry->metadata.at("compiler_library") == nvrtc_identity().library_path);
  CHECK(entry->metadata.at("compiler_tag") == nvrtc_identity().tag());
  CHECK(entry->metadata.at("compiler_reported") == "nvrtc 13.0 sm_80 sm_90");
  CHECK(entry->metadata.at("backend") == "cuda");
  CHECK(entry->metadata.at("binary_kind") == "cubin");
  CHECK(entry->metadata.at("created").get<std::string>().size() == 20);  // 2026-01-01T00:00:00Z

  SUBCASE("an empty expected key accepts the entry's own key") {
    auto any = decode_entry(bytes, "", &problem);
    REQUIRE(any.has_value());
    CHECK(any->key == kKey);
  }
  SUBCASE("PTX and HIP targets survive too") {
    for (const char* name : {"compute_90", "gfx90a:sramecc+:xnack-"}) {
      INFO("target = " << name);
      CompiledProgram other = program;
      other.target = Target::parse(name);
      auto decoded = decode_entry(encode_entry(kKey, other, nvrtc_identity()), kKey, &problem);
      REQUIRE_MESSAGE(decoded.has_value(), problem);
      CHECK(decoded->program.target == other.target);
    }
  }
  SUBCASE("an empty binary and log survive") {
    CompiledProgram empty = program;
    empty.binary.clear();
    empty.log.clear();
    empty.lowered_names.clear();
    auto decoded = decode_entry(encode_entry(kKey, empty, nvrtc_identity()), kKey, &problem);
    REQUIRE_MESSAGE(decoded.has_value(), problem);
    CHECK(decoded->program.binary.empty());
    CHECK(decoded->program.log.empty());
    CHECK(decoded->program.lowered_names.empty());
  }
  SUBCASE("a log with bytes that are not UTF-8 is stored, with replacement characters") {
    CompiledProgram odd = program;
    odd.log = "bad byte \xff here";
    auto decoded = decode_entry(encode_entry(kKey, odd, nvrtc_identity()), kKey, &problem);
    REQUIRE_MESSAGE(decoded.has_value(), problem);
    CHECK(contains(decoded->program.log, "bad byte "));
    CHECK(contains(decoded->program.log, " here"));
    CHECK(decoded->program.binary == odd.binary);
  }
}

TEST_CASE("cache::decode_entry rejects every truncation") {
  const std::string bytes = encode_entry(kKey, sample_compiled(), nvrtc_identity());
  for (size_t length = 0; length < bytes.size(); ++length) {
    std::string problem;
    auto entry = decode_entry(std::string_view(bytes).substr(0, length), kKey, &problem);
    if (entry.has_value() || problem.empty()) {
      FAIL("a prefix of " << length << " of " << bytes.size() << " bytes was accepted, problem \"" << problem << "\"");
    }
    if (length < kEntryHeaderSize) {
      if (!contains(problem, "truncated")) FAIL("length " << length << ": " << problem);
    } else if (!contains(problem, "size mismatch")) {
      FAIL("length " << length << ": " << problem);
    }
  }
  SUBCASE("and a trailing extra byte") {
    std::string problem;
    CHECK_FALSE(decode_entry(bytes + "x", kKey, &problem).has_value());
    CHECK(contains(problem, "size mismatch"));
  }
}

TEST_CASE("cache::decode_entry rejects every single flipped byte") {
  const std::string bytes = encode_entry(kKey, sample_compiled(), nvrtc_identity());
  const size_t metadata_end = kEntryHeaderSize + metadata_size(bytes);
  for (unsigned char mask : {0x01, 0x80, 0xff}) {
    for (size_t offset = 0; offset < bytes.size(); ++offset) {
      std::string damaged = bytes;
      damaged[offset] = static_cast<char>(damaged[offset] ^ mask);
      std::string problem;
      auto entry = decode_entry(damaged, kKey, &problem);
      if (entry.has_value() || problem.empty()) {
        FAIL("flipping byte " << offset << " with mask " << int(mask) << " went unnoticed");
      }
      // The first check that can see the damage is the one that reports it.
      const char* expected = offset < 8                 ? "bad magic"
                             : offset < 12              ? "format version"
                             : offset < 24              ? "size mismatch"
                                                        : "checksum mismatch";
      if (!contains(problem, expected)) {
        FAIL("byte " << offset << " (metadata ends at " << metadata_end << "): expected \"" << expected
                     << "\", got \"" << problem << "\"");
      }
    }
  }
  CHECK(metadata_end < bytes.size());  // both regions were covered
}

TEST_CASE("cache::decode_entry names the problem") {
  const std::string bytes = encode_entry(kKey, sample_compiled(), nvrtc_identity());
  std::string problem;
  SUBCASE("wrong magic") {
    std::string damaged = bytes;
    damaged.replace(0, 8, "KERNCENX");
    CHECK_FALSE(decode_entry(damaged, kKey, &problem).has_value());
    CHECK(contains(problem, "bad magic"));
  }
  SUBCASE("another file altogether") {
    CHECK_FALSE(decode_entry(std::string(100, 'x'), kKey, &problem).has_value());
    CHECK(contains(problem, "bad magic"));
  }
  SUBCASE("wrong version") {
    std::string damaged = bytes;
    set_u32(damaged, 8, kernc::cache::kFormatVersion + 1);
    CHECK_FALSE(decode_entry(damaged, kKey, &problem).has_value());
    CHECK(contains(problem, "format version " + std::to_string(kernc::cache::kFormatVersion + 1)));
    CHECK(contains(problem, "reads version " + std::to_string(kernc::cache::kFormatVersion)));
  }
  SUBCASE("wrong expected key") {
    CHECK_FALSE(decode_entry(bytes, kOtherKey, &problem).has_value());
    CHECK(contains(problem, kKey));
    CHECK(contains(problem, kOtherKey));
  }
  SUBCASE("a huge payload size") {
    std::string damaged = bytes;
    damaged[23] = static_cast<char>(0xff);
    CHECK_FALSE(decode_entry(damaged, kKey, &problem).has_value());
    CHECK(contains(problem, "size mismatch"));
  }
  SUBCASE("sizes that add up but are split wrongly") {
    std::string damaged = bytes;
    std::uint32_t meta = metadata_size(bytes);
    set_u32(damaged, 12, meta - 1);
    REQUIRE(static_cast<unsigned char>(damaged[16]) < 0xff);
    damaged[16] = static_cast<char>(static_cast<unsigned char>(damaged[16]) + 1);  // payload size + 1
    // The checksum covers the same bytes, so only the metadata parser can notice.
    CHECK_FALSE(decode_entry(damaged, kKey, &problem).has_value());
    CHECK(contains(problem, "unreadable metadata"));
  }
  SUBCASE("metadata that is not JSON, with a valid checksum") {
    CHECK_FALSE(decode_entry(handmade_entry("not json", "payload"), kKey, &problem).has_value());
    CHECK(contains(problem, "unreadable metadata"));
  }
  SUBCASE("metadata missing a required field, with a valid checksum") {
    CHECK_FALSE(decode_entry(handmade_entry("{\"key\": \"" + kKey + "\"}", "payload"), kKey, &problem).has_value());
    CHECK(contains(problem, "unreadable metadata"));
  }
  SUBCASE("metadata with a malformed target, with a valid checksum") {
    std::string good = bytes.substr(kEntryHeaderSize, metadata_size(bytes));
    std::string meta = good;
    auto at = meta.find("\"sm_90a\"");
    REQUIRE(at != std::string::npos);
    meta.replace(at, 8, "\"sm_9z\"");
    CHECK_FALSE(decode_entry(handmade_entry(meta, "payload"), kKey, &problem).has_value());
    CHECK(contains(problem, "unreadable metadata"));
    // The same hand-made framing around the good metadata decodes: the framing is right.
    auto framed = decode_entry(handmade_entry(good, "payload"), kKey, &problem);
    REQUIRE_MESSAGE(framed.has_value(), problem);
    CHECK(framed->program.binary == "payload");
  }
  SUBCASE("a null problem pointer is allowed") {
    CHECK_FALSE(decode_entry(bytes.substr(0, 10), kKey, nullptr).has_value());
  }
}
