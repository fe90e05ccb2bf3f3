// Reads the golden entry files written by tools/make-golden-entries.py (a writer
// independent of kernc's C++ encoder) and checks they decode as cache/FORMAT.md says.

#include <doctest/doctest.h>

#include <string>

#include "cache/entry_format.hpp"
#include "platform/files.hpp"

namespace {
const std::string kGoldenKey(std::string("0123456789abcdef") + "0123456789abcdef" + "0123456789abcdef" +
                             "0123456789abcdef" + "-fedcba9876543210");
const std::string kGoldenKeyV1 = kGoldenKey.substr(0, 64);

std::string golden(const std::string& name) {
  return kernc::platform::read_file(std::string(KERNC_SOURCE_DIR) + "/cache/golden/" + name);
}
}  // namespace

TEST_CASE("cache::decode_entry reads the version 2 golden entry field by field") {
  std::string problem;
  auto entry = kernc::cache::decode_entry(golden("v2_valid.kce"), kGoldenKey, &problem);
  REQUIRE_MESSAGE(entry.has_value(), problem);
  CHECK(entry->key == kGoldenKey);
  CHECK(entry->program.target.str() == "compute_90");
  CHECK(entry->program.target.binary_kind() == kernc::BinaryKind::ptx);
  CHECK(entry->program.compiler == "nvrtc 13.0");
  CHECK(entry->program.log == "golden log line");
  CHECK(entry->program.compile_ms == doctest::Approx(12.5));
  REQUIRE(entry->program.flags.size() == 2);
  CHECK(entry->program.flags[0] == "-arch=compute_90");
  CHECK(entry->program.lowered_name("golden_kernel<float>") == "_Z13golden_kernelIfEvPT_");
  CHECK(entry->program.binary.rfind(".version 9.0\n.target sm_90\n", 0) == 0);
  CHECK(entry->program.binary.find(".visible .entry golden_kernel") != std::string::npos);
  CHECK(entry->metadata.at("created") == "2026-11-22T00:00:00Z");
  CHECK(entry->metadata.at("compiler_reported") == "nvrtc 13.0 sm_75 sm_80 sm_90");
  CHECK(entry->metadata.at("compiler_tag") == "fedcba9876543210");
}

TEST_CASE("cache::decode_entry rejects each damaged golden entry for the documented reason") {
  struct Case {
    const char* file;
    const char* reason;
  };
  const Case cases[] = {
      {"v2_truncated.kce", "size mismatch"},
      {"v2_flipped_payload.kce", "checksum mismatch"},
      {"v3_future_version.kce", "format version 3, this kernc reads version 2"},
      {"foreign_magic.kce", "bad magic"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    std::string problem;
    CHECK_FALSE(kernc::cache::decode_entry(golden(c.file), kGoldenKey, &problem).has_value());
    CHECK(problem.find(c.reason) != std::string::npos);
  }
  // Format 1 entries, valid or not, are refused by their version: old caches are misses.
  for (const char* file : {"v1_valid.kce", "v1_truncated.kce", "v1_flipped_payload.kce"}) {
    CAPTURE(file);
    std::string problem;
    CHECK_FALSE(kernc::cache::decode_entry(golden(file), kGoldenKeyV1, &problem).has_value());
    CHECK(problem.find("format version 1, this kernc reads version 2") != std::string::npos);
  }
}

TEST_CASE("cache::decode_entry rejects the golden entry under another key") {
  std::string problem;
  CHECK_FALSE(kernc::cache::decode_entry(golden("v2_valid.kce"), std::string(64, 'f') + "-" + std::string(16, 'f'),
                                         &problem)
                  .has_value());
  CHECK(problem.find("belongs to key") != std::string::npos);
}
