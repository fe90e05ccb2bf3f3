// Spec files (src/kernels/spec_file.cpp): what parse_spec accepts and how it rejects the
// rest, and the precompile round trip: every program a later call could ask for, found in
// the cache after `precompile`, checked by enumerating the call shapes independently of
// Spec::variants().

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

#include "cache/cache_internals.hpp"
#include "cache/local_store.hpp"
#include "dsl/definitions.hpp"
#include "kernc/cache.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/spec_file.hpp"
#include "platform/files.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::Cache;
using kernc::CacheOutcome;
using kernc::CallTypes;
using kernc::Error;
using kernc::ErrorCode;
using kernc::Layout;
using kernc::LayoutKind;
using kernc::Program;
using kernc::Spec;
using kernc::Target;
using kernc::test::contains;
using kernc::test::TempDir;

namespace {

const std::string kExamples = std::string(KERNC_SOURCE_DIR) + "/examples/kernels.json";

// The message of the kernc::Error parse_spec throws for `json`.
std::string spec_error(const std::string& json, const std::string& base_dir = "/nonexistent",
                       ErrorCode code = ErrorCode::invalid_argument) {
  try {
    kernc::parse_spec(json, base_dir);
  } catch (const Error& error) {
    CHECK(error.code() == code);
    return error.what();
  }
  FAIL("parse_spec accepted it");
  return {};
}

// A spec of one kernel whose JSON object is `fields`.
std::string one_kernel(const std::string& fields) { return "{\"kernels\": [{" + fields + "}]}"; }

const std::string kElementwise =
    R"("kind": "elementwise", "name": "ew", "in_params": "T x", "out_params": "T y", "operation": "y = x")";
const std::string kReduction =
    R"("kind": "reduction", "name": "red", "in_params": "T x", "out_params": "T y", "map_expr": "x", )"
    R"("reduce_expr": "a + b", "post_map_expr": "y = a", "identity": "0")";

const kernc::Compiler& compiler_for(kernc::Backend backend) {
#ifdef KERNC_WITH_HIP
  if (backend == kernc::Backend::hip) return kernc::test::hiprtc();
#endif
  (void)backend;
  return kernc::test::nvrtc();
}

std::vector<Target> targets() {
  std::vector<Target> list = {Target::parse("sm_90")};
#ifdef KERNC_WITH_HIP
  list.push_back(Target::parse("gfx90a"));
#endif
  return list;
}

unsigned jobs() { return std::max(2u, std::thread::hardware_concurrency()) + 1; }

// Every layout class a call of `kernel` with `types` can select, worked out here from the
// parameters rather than with reachable_layouts(): the strided and generic classes only
// exist when some non-raw array takes part in the loop.
std::vector<Layout> layouts_of(const kernc::ElementwiseKernel& kernel, const CallTypes& types) {
  const auto& in = kernel.in_params();
  bool loop_array = false;
  for (size_t k = 0; k < in.size(); ++k) loop_array |= !in[k].raw && !types.inputs[k].scalar;
  for (const auto& p : kernel.out_params()) loop_array |= !p.raw;
  std::vector<Layout> layouts;
  for (const auto& layout : Layout::elementwise_classes()) {
    if (loop_array || layout.kind == LayoutKind::contiguous) layouts.push_back(layout);
  }
  return layouts;
}

// (description, program) for every program the kernels of `spec` can need.
std::vector<std::pair<std::string, Program>> expected_programs(const Spec& spec) {
  std::vector<std::pair<std::string, Program>> programs;
  for (const auto& entry : spec.kernels) {
    std::visit(
        [&](const auto& kernel) {
          using K = std::decay_t<decltype(kernel)>;
          if constexpr (std::is_same_v<K, kernc::ElementwiseKernel> || std::is_same_v<K, kernc::ReductionKernel>) {
            for (const auto& types : entry.signatures) {
              std::vector<Layout> layouts;
              if constexpr (std::is_same_v<K, kernc::ElementwiseKernel>) {
                layouts = layouts_of(kernel, types);
              } else {
                layouts = Layout::reduction_classes();
              }
              for (const auto& layout : layouts) {
                programs.emplace_back(kernel.name() + " " + kernc::format_call_signature(types) + " " + layout.str(),
                                      kernc::program(kernel, types, layout));
              }
            }
          } else {
            programs.emplace_back(kernel.name(), kernc::program(kernel));
          }
        },
        entry.kernel);
  }
  return programs;
}

}  // namespace

TEST_CASE("spec::load_spec reads the examples: every kind, with its signatures") {
  Spec spec = kernc::load_spec(kExamples);
  std::map<std::string, int> kinds;
  for (const auto& kernel : spec.kernels) ++kinds[kernel.kind()];
  CHECK(kinds["elementwise"] >= 1);
  CHECK(kinds["reduction"] >= 1);
  CHECK(kinds["raw"] >= 1);
  CHECK(kinds["raw_module"] >= 1);

  const auto& saxpy = spec.find("saxpy");
  CHECK(std::string(saxpy.kind()) == "elementwise");
  REQUIRE(saxpy.signatures.size() == 3);
  CHECK(kernc::format_call_signature(saxpy.signatures[2]) == "scalar float32, float16, float16 -> float16");
  CHECK(std::string(spec.find("l2_norm").kind()) == "reduction");
  const auto& module = std::get<kernc::RawModule>(spec.find("scaling").kernel);
  CHECK(module.name_expressions() ==
        std::vector<std::string>{"axpby<float>", "axpby<double>", "block_sum<float, 256>"});
  // code_file is read relative to the spec's directory.
  CHECK(kernc::program(module).source ==
        kernc::platform::read_file(std::string(KERNC_SOURCE_DIR) + "/examples/templates.cu"));
  CHECK(kernc::program(std::get<kernc::RawKernel>(spec.find("fill").kernel)).source.find("__global__ void fill(") !=
        std::string::npos);
  CHECK(spec.find("fill").signatures.empty());

  try {
    spec.find("nope");
    FAIL("found");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::not_found);
    CHECK(contains(error.what(), "the spec has no kernel named nope; it has: saxpy, clip_add"));
  }
}

TEST_CASE("spec::parse_spec rejects what it does not understand, naming the kernel and the field") {
  struct Case {
    const char* what;
    std::string json;
    std::vector<std::string> message_parts;
  };
  const std::string sig = R"(, "signatures": ["float32 -> float32"])";
  const std::vector<Case> cases = {
      {"a typo in a field name",
       one_kernel(
           R"("kind": "elementwise", "name": "saxpy", "in_params": "T x", "out_params": "T y", "operaton": "y = x")" +
           sig),
       {"kernel saxpy: unknown field \"operaton\" (known fields: ", "operation"}},
      {"a typo in a reduction field",
       one_kernel(kReduction + R"(, "reduce_expression": "a")" + sig),
       {"kernel red: unknown field \"reduce_expression\"", "reduce_expr"}},
      {"signatures on a raw kernel",
       one_kernel(R"("kind": "raw", "name": "r", "code": "x")" + sig),
       {"kernel r: unknown field \"signatures\""}},
      {"a typo in an option",
       one_kernel(kElementwise + R"(, "options": {"fastmath": true})" + sig),
       {"kernel ew options: unknown field \"fastmath\"", "fast_math"}},
      {"an unknown kind",
       one_kernel(R"("kind": "elemwise", "name": "k")"),
       {"kernel k: unknown kind \"elemwise\": expected elementwise, reduction, raw or raw_module"}},
      {"no kind", one_kernel(R"("name": "k")"), {"kernel k: missing field \"kind\""}},
      {"no name", one_kernel(R"("kind": "raw", "code": "x")"), {"kernel #1: missing field \"name\""}},
      {"no operation",
       one_kernel(R"("kind": "elementwise", "name": "k", "in_params": "T x", "out_params": "T y")" + sig),
       {"kernel k: missing field \"operation\""}},
      {"an empty signature list",
       one_kernel(kReduction + R"(, "signatures": [])"),
       {"kernel red: lists no \"signatures\" to prepare"}},
      {"a signature with too many inputs",
       one_kernel(kElementwise + R"(, "signatures": ["float32, float32 -> float32"])"),
       {"kernel ew: signature \"float32, float32 -> float32\" has 2 input(s) and 1 output(s); the kernel has 1 and 1"}},
      {"a signature with too few outputs",
       one_kernel(kReduction + R"(, "signatures": ["float32 ->"])"),
       {"kernel red: signature \"float32 ->\" has 1 input(s) and 0 output(s); the kernel has 1 and 1"}},
      {"a malformed signature",
       one_kernel(kElementwise + R"(, "signatures": ["float33 -> float32"])"),
       {"kernel ew: signature \"float33 -> float32\": \"float33\" is not a dtype"}},
      {"a signature whose placeholder cannot be decided",
       one_kernel(kElementwise + R"(, "signatures": ["scalar float32 -> _"])"),
       {"kernel ew: the type placeholder T cannot be decided"}},
      {"a signature whose types disagree",
       one_kernel(kElementwise + R"(, "signatures": ["float32 -> float64"])"),
       {"kernel ew: type placeholder T is float64 (from y) but x is an array of float32"}},
      {"a reduction signature of the wrong dtype",
       one_kernel(
           R"("kind": "reduction", "name": "r", "in_params": "float32 x", "out_params": "float32 y", "map_expr": "x", )"
           R"("reduce_expr": "a + b", "post_map_expr": "y = a", "signatures": ["float64 -> float32"])"),
       {"kernel r: input x is float32 but an array of float64 was passed"}},
      {"a bad parameter list",
       one_kernel(
           R"("kind": "elementwise", "name": "k", "in_params": "float32 x float32 y", "out_params": "T z", "operation": "z = x")" +
           sig),
       {"kernel k: in_params: \"float32 x float32 y\"", "comma missing"}},
      {"a bad kernel name",
       one_kernel(R"("kind": "raw", "name": "my-kernel", "code": "x")"),
       {"kernel my-kernel: kernel name \"my-kernel\" is not a C identifier"}},
      {"a field of the wrong type",
       one_kernel(R"("kind": "raw", "name": "k", "code": 3)"),
       {"kernel k: field \"code\" must be a string"}},
      {"both code and code_file",
       one_kernel(R"("kind": "raw", "name": "k", "code": "x", "code_file": "k.cu")"),
       {"kernel k: give exactly one of \"code\" and \"code_file\""}},
      {"neither code nor code_file",
       one_kernel(R"("kind": "raw_module", "name": "m")"),
       {"kernel m: give exactly one of \"code\" and \"code_file\""}},
      {"two kernels of one name",
       R"({"kernels": [{"kind": "raw", "name": "k", "code": "x"}, {"kind": "raw", "name": "k", "code": "y"}]})",
       {"spec: two kernels are named k"}},
      {"not JSON", "{\"kernels\": [", {"spec is not valid JSON: line 1, column 14: syntax error"}},
      {"an ambiguous dtype", one_kernel(kElementwise + R"(, "signatures": ["float -> float"])"),
       {"\"float\" is ambiguous (NumPy's float is float64, CUDA's float is float32): write float32 or float64"}},
      {"an unknown top-level field",
       R"({"kernel": []})",
       {"spec: unknown field \"kernel\" (known fields: comment, kernels)"}},
      {"no kernels", R"({"kernels": []})", {"spec: \"kernels\" must be a non-empty list"}},
      {"a kernel that is not an object", R"({"kernels": [3]})", {"kernel #1: must be an object"}},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.what));
    std::string message = spec_error(c.json);
    CAPTURE(message);
    // kernc's words, naming the kernel once (issue 34: "kernel a: kernel a: missing field").
    CHECK(message.find("json.exception") == std::string::npos);
    CHECK(message.find("kernel k: kernel k") == std::string::npos);
    CHECK(message.find("kernel ew: kernel ew") == std::string::npos);
    for (const auto& part : c.message_parts) {
      CAPTURE(part);
      CHECK(contains(message, part));
    }
  }
}

TEST_CASE("spec::parse_spec: a kernel without \"signatures\" is read (it can be run) and adds no variant") {
  Spec spec = kernc::parse_spec(R"({"kernels": [{)" + kElementwise + R"(}, {)" + kReduction +
                                R"(, "signatures": ["float32 -> float32"]}]})",
                                ".");
  CHECK(spec.find("ew").signatures.empty());
  CHECK(spec.find("red").signatures.size() == 1);
  for (const auto& variant : spec.variants()) CHECK(variant.kernel == "red");
  CHECK(spec.variants().size() == 4);  // one reduction signature x its 4 layout classes
  // The library's message names the kernel once, after the spec's "kernel NAME:".
  const std::string message = spec_error(one_kernel(kElementwise + R"(, "signatures": ["scalar float32 -> _"])"));
  CHECK(message.find("ew: ew:") == std::string::npos);
}

TEST_CASE("spec::parse_spec reads code_file relative to the base directory, or absolute") {
  TempDir dir;
  const std::string code = "extern \"C\" __global__ void k(float* x) { x[0] = 1; }\n";
  const std::string absolute = dir.write("sub/k.cu", code);
  Spec relative = kernc::parse_spec(one_kernel(R"("kind": "raw", "name": "k", "code_file": "sub/k.cu")"), dir.path());
  CHECK(kernc::program(std::get<kernc::RawKernel>(relative.find("k").kernel)).source == code);
  Spec absolute_spec = kernc::parse_spec(
      one_kernel(R"("kind": "raw_module", "name": "m", "code_file": ")" + absolute + "\""), "/elsewhere");
  CHECK(kernc::program(std::get<kernc::RawModule>(absolute_spec.find("m").kernel)).source == code);

  SUBCASE("a missing file is an io error naming the path") {
    std::string message =
        spec_error(one_kernel(R"("kind": "raw", "name": "k", "code_file": "missing.cu")"), dir.path(), ErrorCode::io);
    CHECK(contains(message, dir / "missing.cu"));
  }
  SUBCASE("load_spec uses the spec file's directory and names the file in errors") {
    dir.write("specs/more/k.cu", code);
    const std::string path =
        dir.write("specs/s.json", one_kernel(R"("kind": "raw", "name": "k", "code_file": "more/k.cu")"));
    CHECK(kernc::program(std::get<kernc::RawKernel>(kernc::load_spec(path).find("k").kernel)).source == code);
    const std::string bad = dir.write("specs/bad.json", one_kernel(R"("kind": "elemwise", "name": "k")"));
    try {
      kernc::load_spec(bad);
      FAIL("accepted");
    } catch (const Error& error) {
      CHECK(error.code() == ErrorCode::invalid_argument);
      CHECK(std::string(error.what()) == bad +
                                             ": kernel k: unknown kind \"elemwise\": expected elementwise, "
                                             "reduction, raw or raw_module");
    }
  }
}

TEST_CASE("spec::parse_spec keeps every field of a kernel") {
  Spec spec = kernc::parse_spec(one_kernel(R"("kind": "elementwise", "name": "k", "in_params": "T x, raw T t",)"
                                           R"( "out_params": "T y", "operation": "y = x + t[0]", "preamble": "// p",)"
                                           R"( "loop_prep": "// lp", "after_loop": "// al", "reduce_dims": false,)"
                                           R"( "options": {"std": "c++14", "defines": {"A": "1"}, "fast_math": true},)"
                                           R"( "signatures": ["float32, float32 -> float32", "int8, int8 -> _"])"),
                                "/");
  const auto& kernel = std::get<kernc::ElementwiseKernel>(spec.find("k").kernel);
  const auto& options = kernel.options();
  CHECK(kernel.operation() == "y = x + t[0]");
  CHECK(options.preamble == "// p");
  CHECK(options.loop_prep == "// lp");
  CHECK(options.after_loop == "// al");
  CHECK_FALSE(options.reduce_dims);
  CHECK(options.compile.language_standard == "c++14");
  CHECK(options.compile.defines == std::map<std::string, std::string>{{"A", "1"}});
  CHECK(options.compile.fast_math);
  REQUIRE(spec.find("k").signatures.size() == 2);
  CHECK(kernc::format_call_signature(spec.find("k").signatures[1]) == "int8, int8 -> _");
  // One program per signature and layout class.
  CHECK(spec.variants().size() == 2 * Layout::elementwise_classes().size());
}

// Always cold: it needs a fresh cache directory, so it pays for every compile on every run
// (HIPRTC compiles take turns, about 0.2 s or more each). Part of the suite "slow".
TEST_CASE("spec::precompile round trip: every program a call could need is in the cache" *
          doctest::test_suite("slow")) {
  const Spec spec = kernc::load_spec(kExamples);
  const auto all_targets = targets();
  TempDir dir;
  const kernc::CacheConfig config = kernc::test::cache_config_in(dir, "cache", 256ull << 20);

  const std::size_t expected_total = spec.variants().size() * all_targets.size();
  std::size_t events = 0, last_done = 0;
  std::set<std::string> precompiled_keys;
  {
    Cache cache(config);
    REQUIRE(cache.disk_problem().empty());
    auto summary = kernc::precompile(spec, all_targets, cache, compiler_for, jobs(),
                                     [&](const kernc::PrecompileEvent& event, std::size_t done, std::size_t total) {
                                       ++events;
                                       CHECK(done == last_done + 1);
                                       last_done = done;
                                       CHECK(total == expected_total);
                                       CHECK(event.outcome == CacheOutcome::compiled);
                                       precompiled_keys.insert(event.key);
                                       if (event.failed)
                                         FAIL_CHECK(event.kernel << ": " << event.error->what());
                                     });
    CHECK(summary.total == expected_total);
    CHECK(summary.failed == 0);
    CHECK(summary.compiled == summary.total);
    CHECK(summary.hits == 0);
    CHECK(summary.failures.empty());
    CHECK(events == summary.total);
    CHECK(precompiled_keys.size() == summary.total);
    MESSAGE("precompile of " << summary.total << " programs, cold: " << summary.seconds << " s");
  }
  {
    Cache again(config);
    std::size_t disk_hits = 0;
    auto summary = kernc::precompile(spec, all_targets, again, compiler_for, jobs(),
                                     [&](const kernc::PrecompileEvent& event, std::size_t, std::size_t) {
                                       disk_hits += event.outcome == CacheOutcome::disk_hit;
                                     });
    CHECK(summary.compiled == 0);
    CHECK(summary.failed == 0);
    CHECK(summary.hits == summary.total);
    CHECK(disk_hits == summary.total);
  }

  // Independently of Spec::variants(): every call shape of every kernel, for every target.
  const auto programs = expected_programs(spec);
  CHECK(programs.size() * all_targets.size() == precompiled_keys.size());
  Cache lookup(config);
  REQUIRE(lookup.uses_disk());
  Cache fresh(config);
  std::set<std::string> expected_keys;
  for (const auto& target : all_targets) {
    for (const auto& named_program : programs) {
      const auto& what = named_program.first;  // not a structured binding: CAPTURE takes it (C++20 only)
      const auto& program = named_program.second;
      CAPTURE(what);
      CAPTURE(target.str());
      const std::string key = lookup.key(program, target, compiler_for(target.backend()));
      expected_keys.insert(key);
      CHECK(std::filesystem::is_regular_file(kernc::cache::disk_store(lookup)->entry_path(key)));
      auto result = fresh.get_or_compile(program, target, compiler_for(target.backend()));
      CHECK(result.outcome == CacheOutcome::disk_hit);
      CHECK(result.key == key);
      REQUIRE(result.program != nullptr);
      CHECK(kernc::test::starts_with(result.program->binary, kernc::test::kElfMagic));
      for (const auto& expression : program.name_expressions) CHECK(!result.program->lowered_name(expression).empty());
    }
  }
  CHECK(expected_keys == precompiled_keys);
}

TEST_CASE("spec::precompile reports a typo as failures naming the kernel, the snippet and its line") {
  const std::string spec_text = R"({"kernels": [
    {"kind": "elementwise", "name": "typo_ew", "in_params": "raw T x, int32 n", "out_params": "raw T y",
     "operation": "y[i] = x[i];\ny[i] = x[i] + nope", "signatures": ["float32, scalar int32 -> float32"]},
    {"kind": "reduction", "name": "typo_red", "in_params": "T x", "out_params": "T y", "map_expr": "x",
     "reduce_expr": "a + b", "post_map_expr": "y = a;\ny = nope", "identity": "0", "signatures": ["float64 -> float64"]},
    {"kind": "raw", "name": "fine", "code": "extern \"C\" __global__ void fine(int* p) { *p = 1; }"}
  ]})";
  const Spec spec = kernc::parse_spec(spec_text, "/");
  const auto all_targets = targets();
  // Only raw arrays and scalars in the loop of typo_ew: its two contiguous layouts.
  const std::size_t per_target = 2 + 4 + 1;
  CHECK(spec.variants().size() == per_target);
  // Spec::variants() and the independent enumeration agree on the programs.
  std::multiset<std::string> from_variants, from_enumeration;
  for (const auto& variant : spec.variants()) from_variants.insert(variant.program.source);
  for (const auto& [what, program] : expected_programs(spec)) from_enumeration.insert(program.source);
  CHECK(from_variants == from_enumeration);
  TempDir dir;
  Cache cache(kernc::test::cache_config_in(dir));
  std::map<std::string, int> failed_by_kernel;  // on_event is called under precompile's lock
  auto summary = kernc::precompile(spec, all_targets, cache, compiler_for, jobs(),
                                   [&](const kernc::PrecompileEvent& event, std::size_t, std::size_t) {
                                     if (event.failed) ++failed_by_kernel[event.kernel];
                                   });
  CHECK(summary.total == per_target * all_targets.size());
  CHECK(summary.compiled == all_targets.size());  // the raw kernel
  CHECK(summary.failed == (per_target - 1) * all_targets.size());
  CHECK(failed_by_kernel == std::map<std::string, int>{{"typo_ew", int(2 * all_targets.size())},
                                                       {"typo_red", int(4 * all_targets.size())}});
  REQUIRE(summary.failures.size() == summary.failed);
  for (const auto& failure : summary.failures) {
    REQUIRE(failure.failed);
    REQUIRE(failure.error != nullptr);
    CHECK(failure.error->code() == ErrorCode::compile_failed);
    const std::string message = failure.error->what();
    CAPTURE(message);
    // Mapped already: "<kernel> <snippet>, line 2" (with a column from HIPRTC).
    const bool hip = failure.target.backend() == kernc::Backend::hip;
    const bool ew = contains(message, "typo_ew.cu failed");
    const std::string where = ew ? "typo_ew operation, line 2" : "typo_red post_map_expr, line 2";
    CHECK(contains(message, where + (hip ? (ew ? ", column 15: " : ", column 5: ") : ": ")));
    REQUIRE(failure.error->compile_failure() != nullptr);
    CHECK(contains(failure.error->compile_failure()->log, where));
  }
}

// Failures carry their kernel and description by value: they outlive precompile()'s own
// list of variants (they once pointed into it).
TEST_CASE("spec::precompile failures still name their variant after precompile returns") {
  const Spec spec = kernc::parse_spec(one_kernel(R"("kind": "elementwise", "name": "ew", "in_params": "T x", )"
                                                 R"("out_params": "T y", "operation": "y = nope", )"
                                                 R"("signatures": ["float32 -> float32"])"),
                                      "/");
  TempDir dir;
  Cache cache(kernc::test::cache_config_in(dir));
  auto summary = kernc::precompile(spec, {Target::parse("sm_90")}, cache, compiler_for, 1);
  REQUIRE(summary.failures.size() == Layout::elementwise_classes().size());
  std::vector<std::string> filler(1000, std::string(200, 'x'));  // reuse the freed memory
  for (const auto& failure : summary.failures) {
    CHECK(failure.kernel == "ew");
    CHECK(failure.description.find("float32 -> float32") == 0);
  }
}
