#include <doctest/doctest.h>

#include <string>

#include "kernc/error.hpp"
#include "kernc/target.hpp"
#include "temp_dir.hpp"

using kernc::Backend;
using kernc::BinaryKind;
using kernc::Error;
using kernc::ErrorCode;
using kernc::Target;
using kernc::test::contains;

TEST_CASE("target::Target::parse accepts CUDA and HIP names") {
  struct Row {
    const char* text;
    Backend backend;
    BinaryKind kind;
    const char* arch;
    int sm_number;
  };
  const Row rows[] = {
      {"sm_80", Backend::cuda, BinaryKind::cubin, "80", 80},
      {"sm_90a", Backend::cuda, BinaryKind::cubin, "90a", 90},
      {"compute_90", Backend::cuda, BinaryKind::ptx, "90", 90},
      {"compute_90a", Backend::cuda, BinaryKind::ptx, "90a", 90},
      {"sm_100f", Backend::cuda, BinaryKind::cubin, "100f", 100},
      {"gfx90a", Backend::hip, BinaryKind::hsaco, "gfx90a", 0},
      {"gfx90a:xnack-", Backend::hip, BinaryKind::hsaco, "gfx90a:xnack-", 0},
      {"gfx90a:sramecc+:xnack-", Backend::hip, BinaryKind::hsaco, "gfx90a:sramecc+:xnack-", 0},
      {"gfx1100", Backend::hip, BinaryKind::hsaco, "gfx1100", 0},
  };
  for (const auto& row : rows) {
    INFO("row.text = " << row.text);
    Target target = Target::parse(row.text);
    CHECK(target.backend() == row.backend);
    CHECK(target.binary_kind() == row.kind);
    CHECK(target.arch() == row.arch);
    CHECK(target.sm_number() == row.sm_number);
    CHECK(target.str() == row.text);
    CHECK(Target::parse(target.str()) == target);
  }
}

TEST_CASE("target::Target::parse rejects malformed names with invalid_argument quoting the text") {
  const char* rejected[] = {"",       "sm_",    "sm_9x",        "sm_90b",  "sm_1000", "compute_", "gfxzz",
                            "gfx",    "gfx90a:xnack", "gfx90a:", "gfx90a::xnack-", "cuda", "SM_90", "sm_90 "};
  for (const char* text : rejected) {
    INFO("text = " << text);
    bool threw = false;
    try {
      Target::parse(text);
    } catch (const Error& error) {
      threw = true;
      CHECK(error.code() == ErrorCode::invalid_argument);
      CHECK(contains(error.what(), "\"" + std::string(text) + "\""));
      CHECK(error.compile_failure() == nullptr);
    }
    CHECK(threw);
  }
}

TEST_CASE("target::Target::parse explains what it expected") {
  SUBCASE("an unknown suffix is named") {
    try {
      Target::parse("sm_90b");
      FAIL("sm_90b was accepted");
    } catch (const Error& error) {
      CHECK(contains(error.what(), "suffix \"b\""));
      CHECK(contains(error.what(), "sm_NN"));
    }
  }
  SUBCASE("a feature without + or - is named") {
    try {
      Target::parse("gfx90a:xnack");
      FAIL("gfx90a:xnack was accepted");
    } catch (const Error& error) {
      CHECK(contains(error.what(), "feature \"xnack\""));
    }
  }
  SUBCASE("an empty name says so") {
    try {
      Target::parse("");
      FAIL("the empty name was accepted");
    } catch (const Error& error) {
      CHECK(contains(error.what(), "empty"));
    }
  }
}

TEST_CASE("target::Target::with_binary_kind switches between cubin and PTX") {
  Target sm90 = Target::parse("sm_90");
  SUBCASE("cubin to PTX") {
    Target ptx = sm90.with_binary_kind(BinaryKind::ptx);
    CHECK(ptx.str() == "compute_90");
    CHECK(ptx.binary_kind() == BinaryKind::ptx);
    CHECK(ptx.sm_number() == 90);
    CHECK(ptx == Target::parse("compute_90"));
    CHECK(ptx != sm90);
  }
  SUBCASE("PTX back to cubin keeps the suffix") {
    Target ptx = Target::parse("compute_90a");
    CHECK(ptx.with_binary_kind(BinaryKind::cubin).str() == "sm_90a");
  }
  SUBCASE("the same kind is the same target") { CHECK(sm90.with_binary_kind(BinaryKind::cubin) == sm90); }
  SUBCASE("a CUDA target cannot produce an HSA code object") {
    try {
      sm90.with_binary_kind(BinaryKind::hsaco);
      FAIL("sm_90 produced hsaco");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::invalid_argument);
      CHECK(contains(error.what(), "sm_90"));
      CHECK(contains(error.what(), "hsaco"));
    }
  }
  SUBCASE("a HIP target cannot produce PTX") {
    CHECK_THROWS_AS(Target::parse("gfx90a").with_binary_kind(BinaryKind::ptx), Error);
    CHECK(Target::parse("gfx90a").with_binary_kind(BinaryKind::hsaco) == Target::parse("gfx90a"));
  }
}

TEST_CASE("target::Target equality compares backend, kind and architecture") {
  CHECK(Target::parse("sm_90") == Target::parse("sm_90"));
  CHECK(Target::parse("sm_90") != Target::parse("sm_90a"));
  CHECK(Target::parse("sm_90") != Target::parse("compute_90"));
  CHECK(Target::parse("gfx90a") != Target::parse("gfx90a:xnack-"));
}

TEST_CASE("target::parse_binary_kind reads the names to_string writes") {
  for (BinaryKind kind : {BinaryKind::cubin, BinaryKind::ptx, BinaryKind::hsaco}) {
    CHECK(kernc::parse_binary_kind(kernc::to_string(kind)) == kind);
  }
  CHECK(std::string(kernc::to_string(Backend::cuda)) == "cuda");
  CHECK(std::string(kernc::to_string(Backend::hip)) == "hip");
  try {
    kernc::parse_binary_kind("fatbin");
    FAIL("fatbin was accepted");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::invalid_argument);
    CHECK(contains(error.what(), "\"fatbin\""));
  }
}
