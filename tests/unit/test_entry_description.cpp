// Entries that explain themselves (NOTE [ entry description ] in src/cache/entry_format.hpp):
// what an entry records about its kernel and its key's inputs, and the log clean-up that
// shows a snippet's error once.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "cache/cache_key.hpp"
#include "cache/entry_format.hpp"
#include "codegen/snippets.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "kernc/signature.hpp"
#include "platform/sha256.hpp"

using kernc::CompilerIdentity;
using kernc::Program;
using kernc::Target;
using kernc::cache::KeyInput;

namespace {

CompilerIdentity identity(const std::string& version = "13.0") {
  CompilerIdentity id;
  id.backend = kernc::Backend::cuda;
  id.library_path = "/usr/local/cuda/lib64/libnvrtc.so.13";
  id.version = version;
  id.targets = {"sm_80", "sm_90"};
  return id;
}

Program sample() {
  Program program;
  program.name = "scale.cu";
  program.source = "extern \"C\" __global__ void scale(float* x) { x[0] *= 2; }\n";
  program.options.defines = {{"N", "4"}};
  program.options.headers = {{"my.h", "#define M 1\n"}};
  program.origin = {"scale", "", ""};
  return program;
}

// The fields (with values) in which `a` and `b` differ.
std::vector<std::string> differing(const std::vector<KeyInput>& a, const std::vector<KeyInput>& b) {
  std::vector<std::string> out;
  for (const auto& input : a) {
    if (std::find(b.begin(), b.end(), input) == b.end()) out.push_back(input.field);
  }
  for (const auto& input : b) {
    if (std::find(a.begin(), a.end(), input) == a.end() && std::find(out.begin(), out.end(), input.field) == out.end()) {
      out.push_back(input.field);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("cache::key_inputs lists the key's fields, one per option, in the key's order") {
  const auto inputs = kernc::cache::key_inputs(sample(), Target::parse("sm_80"), identity());
  std::vector<std::string> fields;
  for (const auto& input : inputs) fields.push_back(input.field);
  CHECK(fields == std::vector<std::string>{"format", "backend", "target", "binary", "std", "define N", "header my.h",
                                           "fast_math", "line_info", "debug", "name", "source", "compiler"});
  CHECK(inputs[2].value == "sm_80");
  CHECK(inputs[5].value == "4");
  // Long or multi-line values are shown by size and digest, short ones verbatim.
  CHECK(inputs[6].value == "12 bytes, sha256 " + kernc::platform::sha256_hex("#define M 1\n"));
  CHECK(inputs.back().value.rfind("nvrtc 13.0 (tag ", 0) == 0);
}

TEST_CASE("cache::key_inputs differ exactly where the key's inputs differ") {
  const Target sm80 = Target::parse("sm_80");
  const auto base = kernc::cache::key_inputs(sample(), sm80, identity());
  Program other_define = sample();
  other_define.options.defines["N"] = "8";
  CHECK(differing(base, kernc::cache::key_inputs(other_define, sm80, identity())) == std::vector<std::string>{"define N"});
  Program other_header = sample();
  other_header.options.headers["my.h"] = "#define M 2\n";
  CHECK(differing(base, kernc::cache::key_inputs(other_header, sm80, identity())) ==
        std::vector<std::string>{"header my.h"});
  CHECK(differing(base, kernc::cache::key_inputs(sample(), sm80, identity("12.8"))) ==
        std::vector<std::string>{"compiler"});
  CHECK(differing(base, kernc::cache::key_inputs(sample(), Target::parse("sm_90"), identity())) ==
        std::vector<std::string>{"target"});
  Program fast = sample();
  fast.options.fast_math = true;
  CHECK(differing(base, kernc::cache::key_inputs(fast, sm80, identity())) == std::vector<std::string>{"fast_math"});
  // The origin is a description, not an input: it changes neither the inputs nor the key.
  Program renamed = sample();
  renamed.origin.kernel = "other";
  CHECK(kernc::cache::key_inputs(renamed, sm80, identity()) == base);
  CHECK(kernc::cache::compute_key(renamed, sm80, identity()) == kernc::cache::compute_key(sample(), sm80, identity()));
}

TEST_CASE("cache::encode_entry records the kernel, its variant and its key's inputs, under the checksum") {
  const Target sm80 = Target::parse("sm_80");
  kernc::CompiledProgram compiled;
  compiled.target = sm80;
  compiled.binary = "\x7f" "ELF";
  compiled.compiler = "nvrtc 13.0";
  Program program = sample();
  program.origin = {"saxpy", "float32, float32 -> float32", "contiguous-i32"};
  const std::string key = kernc::cache::compute_key(program, sm80, identity());
  const std::string bytes =
      kernc::cache::encode_entry(key, compiled, identity(), kernc::cache::describe_entry(program, sm80, identity()));
  std::string problem;
  auto entry = kernc::cache::decode_entry(bytes, key, &problem);
  REQUIRE_MESSAGE(entry, problem);
  CHECK(entry->metadata["kernel"]["name"] == "saxpy");
  CHECK(entry->metadata["kernel"]["signature"] == "float32, float32 -> float32");
  CHECK(entry->metadata["kernel"]["layout"] == "contiguous-i32");
  const auto inputs = kernc::cache::key_inputs(program, sm80, identity());
  REQUIRE(entry->metadata["inputs"].size() == inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    CHECK(entry->metadata["inputs"][k][0] == inputs[k].field);
    CHECK(entry->metadata["inputs"][k][1] == inputs[k].value);
  }
  // The description is covered by the checksum: a changed kernel name is a damaged entry.
  std::string tampered = bytes;
  const auto at = tampered.find("saxpy");
  REQUIRE(at != std::string::npos);
  tampered[at] = 'S';
  CHECK_FALSE(kernc::cache::decode_entry(tampered, key, &problem).has_value());
  CHECK(problem == "checksum mismatch");
  // Without a description (what an older kernc wrote) the fields are absent, and it decodes.
  auto bare = kernc::cache::decode_entry(kernc::cache::encode_entry(key, compiled, identity()), key, &problem);
  REQUIRE(bare);
  CHECK_FALSE(bare->metadata.contains("kernel"));
  CHECK_FALSE(bare->metadata.contains("inputs"));
  // A look-up's decode leaves the description out and keeps all it loads by, the same as
  // a whole decode gives.
  auto loading = kernc::cache::decode_entry(bytes, key, &problem, kernc::cache::EntryMetadata::for_loading);
  REQUIRE_MESSAGE(loading, problem);
  CHECK_FALSE(loading->metadata.contains("kernel"));
  CHECK_FALSE(loading->metadata.contains("inputs"));
  nlohmann::json without_description = entry->metadata;
  without_description.erase("kernel");
  without_description.erase("inputs");
  CHECK(loading->metadata == without_description);
  CHECK(loading->key == entry->key);
  CHECK(loading->program.binary == entry->program.binary);
  CHECK(loading->program.target.str() == "sm_80");
  CHECK(loading->program.compiler == "nvrtc 13.0");
  CHECK_FALSE(kernc::cache::decode_entry(tampered, key, &problem, kernc::cache::EntryMetadata::for_loading));
  CHECK(problem == "checksum mismatch");
}

TEST_CASE("kernels: a generated program's origin names its kernel, signature and layout class") {
  kernc::ElementwiseKernel saxpy("T a, T x", "T z", "z = a * x", "saxpy");
  const kernc::CallTypes types = kernc::parse_call_signature("scalar float32, float32 -> float32");
  const Program program = kernc::program(saxpy, types, kernc::Layout::parse("contiguous-i32"));
  CHECK(program.origin.kernel == "saxpy");
  CHECK(program.origin.signature == "scalar float32, float32 -> float32");
  CHECK(program.origin.layout == "contiguous-i32");
  kernc::RawKernel raw("extern \"C\" __global__ void k(float* x) { x[0] = 1; }", "k");
  CHECK(kernc::program(raw).origin.kernel == "k");
  CHECK(kernc::program(raw).origin.signature.empty());
}

TEST_CASE("codegen::drop_repeated_diagnostics keeps each diagnostic once, with its own context") {
  using kernc::codegen::drop_repeated_diagnostics;
  const std::string host =
      "w operation: In function 'void w()':\n"
      "w operation, line 1, column 5: error: 'u' was not declared in this scope\n"
      "w operation, line 1, column 5: error: 'u' was not declared in this scope";
  CHECK(drop_repeated_diagnostics(host) ==
        "w operation: In function 'void w()':\n"
        "w operation, line 1, column 5: error: 'u' was not declared in this scope");
  const std::string nvrtc =
      "w operation, line 1: error: identifier \"u\" is undefined\n"
      "  y = u;\n"
      "      ^\n"
      "\n"
      "w operation, line 1: error: identifier \"u\" is undefined\n"
      "  y = u;\n"
      "      ^\n"
      "\n"
      "w operation, line 2: error: expected a \";\"\n"
      "\n"
      "2 errors detected in the compilation of \"w.cu\".";
  CHECK(drop_repeated_diagnostics(nvrtc) ==
        "w operation, line 1: error: identifier \"u\" is undefined\n"
        "  y = u;\n"
        "      ^\n"
        "\n"
        "w operation, line 2: error: expected a \";\"\n"
        "\n"
        "2 errors detected in the compilation of \"w.cu\".");
  CHECK(drop_repeated_diagnostics("") == "");
  CHECK(drop_repeated_diagnostics("one line, no newline") == "one line, no newline");
}
