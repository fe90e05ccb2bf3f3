// Long and malformed input is refused with a clear error or handled in time linear in its
// length, never with recursion that grows with it (docs/ARCHITECTURE.md, "Hostile input and CI"; issue 15 item 1:
// a 30 KB identifier in an operation crashed `kernc compile` inside std::regex).

#include <doctest/doctest.h>

#include <pthread.h>

#include <functional>
#include <string>
#include <vector>

#include "kernc/compiler.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/limits.hpp"
#include "kernc/spec_file.hpp"
#include "kernels/raw_state.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"

using kernc::ArgType;
using kernc::CallTypes;
using kernc::DType;
using kernc::Error;
using kernc::ErrorCode;
using kernc::Layout;
using kernc::Target;
using kernc::test::contains;

namespace {

// Runs `work` on a thread with a 64 KiB stack (a worker thread's stack is often small) and
// rethrows what it threw. Recursion per input character dies here on a few KB of input.
void on_small_stack(const std::function<void()>& work) {
  struct Job {
    const std::function<void()>* work;
    std::exception_ptr error;
  } job{&work, nullptr};
  pthread_attr_t attr;
  REQUIRE(pthread_attr_init(&attr) == 0);
  REQUIRE(pthread_attr_setstacksize(&attr, 64 * 1024) == 0);
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    auto* j = static_cast<Job*>(arg);
    try {
      (*j->work)();
    } catch (...) {
      j->error = std::current_exception();
    }
    return nullptr;
  };
  REQUIRE(pthread_create(&thread, &attr, run, &job) == 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  if (job.error) std::rethrow_exception(job.error);
}

CallTypes unary_float() {
  CallTypes types;
  types.inputs = {ArgType::array(DType::float32)};
  return types;
}

Error error_thrown_by(const std::function<void()>& work) {
  try {
    work();
  } catch (const Error& error) {
    return error;
  }
  FAIL("no kernc::Error was thrown");
  return Error(ErrorCode::invalid_argument, "unreachable");
}

}  // namespace

TEST_CASE("kernels::map_log_to_snippets is linear and needs no stack for long tokens") {
  const std::string token(1 << 20, 'q');  // a 1 MiB identifier quoted by the compiler
  const std::string log = "k operation(1): error: identifier \"" + token + "\" is undefined\n" + token +
                          " operation:3:7: error: again\nk post_map_expr(9): " + token;
  const std::string expected = "k operation, line 1: error: identifier \"" + token + "\" is undefined\n" + token +
                               " operation, line 3, column 7: error: again\nk post_map_expr, line 9: " + token;
  std::string mapped;
  on_small_stack([&] { mapped = kernc::map_log_to_snippets(log); });
  CHECK(mapped.size() == expected.size());
  CHECK(mapped == expected);
  // Unfinished or malformed locations stay as they are.
  on_small_stack([&] { mapped = kernc::map_log_to_snippets(token + " operation(" + token); });
  CHECK(mapped == token + " operation(" + token);
  on_small_stack([&] { mapped = kernc::map_log_to_snippets("k operation:1:: x k identity(): y k map_expr:4:"); });
  CHECK(mapped == "k operation:1:: x k identity(): y k map_expr:4:");
}

TEST_CASE("kernels::declared_params reads declarations of long sources with little stack") {
  const std::string filler(1 << 20, 'w');
  const std::string source = "// " + filler + "\n__device__ int " + filler + ";\n" +
                             "extern \"C\" __global__ void __launch_bounds__(256) scale(const float* __restrict__ x, "
                             "float* y, const long n, double a) { }\n";
  std::optional<std::vector<kernc::detail::DeclaredParam>> params;
  on_small_stack([&] { params = kernc::detail::declared_params(source, "scale"); });
  REQUIRE(params.has_value());
  REQUIRE(params->size() == 4);
  CHECK((*params)[0].pointer);
  CHECK((*params)[0].text == "const float* __restrict__ x");
  CHECK((*params)[1].pointer);
  CHECK_FALSE((*params)[2].pointer);
  CHECK((*params)[2].dtype == DType::int64);
  CHECK((*params)[3].dtype == DType::float64);
  // A name that is only a prefix of the declared one, or absent, is not found.
  on_small_stack([&] { params = kernc::detail::declared_params(source, "scal"); });
  CHECK_FALSE(params.has_value());
  on_small_stack([&] { params = kernc::detail::declared_params(source, filler); });
  CHECK_FALSE(params.has_value());
  // Names with characters that a regular expression would read as operators are plain text.
  params = kernc::detail::declared_params("__global__ void f(int a) {}", ".*");
  CHECK_FALSE(params.has_value());
  params = kernc::detail::declared_params("__global__\nvoid\n__launch_bounds__(128, 2)\nf ( int a, float b ) {}", "f");
  REQUIRE(params.has_value());
  CHECK(params->size() == 2);
  params = kernc::detail::declared_params("__global__ void f() {}", "f");
  REQUIRE(params.has_value());
  CHECK(params->empty());
}

TEST_CASE("kernels: a 30 KB identifier in an operation is a compile error at the snippet's line, not a crash") {
  const std::string token(30 * 1024, 'q');
  kernc::ElementwiseKernel kernel("T x", "T y", "y = x;\ny = x + " + token, "long_token");
  Error error = error_thrown_by([&] {
    kernc::test::nvrtc().compile(kernc::program(kernel, unary_float(), Layout::parse("contiguous-i32")), Target::parse("sm_90"));
  });
  REQUIRE(error.code() == ErrorCode::compile_failed);
  Error mapped = kernc::map_error_to_snippets(error);
  CHECK(contains(mapped.what(), "long_token operation, line 2: error: identifier \"" + token + "\" is undefined"));
}

TEST_CASE("kernels: a 100 KB post_map_expr token is a compile error at the snippet's line, not a crash") {
  const std::string token(100 * 1024, 'p');
  kernc::ReductionKernel kernel("T x", "T y", "x", "a + b", "y = a + " + token, "0", "long_post");
  Error error = error_thrown_by([&] {
    kernc::test::nvrtc().compile(kernc::program(kernel, unary_float(), Layout::parse("contiguous-i32")), Target::parse("sm_90"));
  });
  REQUIRE(error.code() == ErrorCode::compile_failed);
  Error mapped = kernc::map_error_to_snippets(error);
  CHECK(contains(mapped.what(), "long_post post_map_expr, line 1: error: identifier \"" + token + "\" is undefined"));
}

TEST_CASE("kernels: definitions past kernc's limits are refused, naming the limit") {
  const std::string huge(kernc::limits::kMaxSourceBytes + 1, ' ');
  Error operation = error_thrown_by([&] { kernc::ElementwiseKernel("T x", "T y", "y = x" + huge, "big"); });
  CHECK(operation.code() == ErrorCode::invalid_argument);
  CHECK(contains(operation.what(), "big: operation is 16777222 bytes long"));
  CHECK(contains(operation.what(), "over kernc's limit of 16777216 bytes"));

  kernc::ReductionOptions options;
  options.preamble = huge;
  Error preamble = error_thrown_by([&] { kernc::ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "r", options); });
  CHECK(contains(preamble.what(), "r: preamble is 16777217 bytes long"));

  Error raw = error_thrown_by([&] { kernc::RawKernel("__global__ void f() {}" + huge, "f"); });
  CHECK(contains(raw.what(), "RawKernel f: the code is 16777239 bytes long"));

  const std::string long_name(kernc::limits::kMaxNameLength + 1, 'n');
  Error name = error_thrown_by([&] { kernc::ElementwiseKernel("T x", "T y", "y = x", long_name); });
  CHECK(contains(name.what(), "the kernel name is 1025 bytes long (\"nnnn"));
  CHECK(std::string(name.what()).size() < 200);  // the name is not quoted whole
  Error param = error_thrown_by([&] { kernc::ElementwiseKernel("T " + long_name, "T y", "y = x", "k"); });
  CHECK(contains(param.what(), "in_params: a parameter name is 1025 bytes long"));

  std::string many;
  for (size_t k = 0; k <= kernc::limits::kMaxParams; ++k) many += (k ? ", T x" : "T x") + std::to_string(k);
  Error params = error_thrown_by([&] { kernc::ElementwiseKernel(many, "T y", "y = x0", "wide"); });
  CHECK(contains(params.what(), "wide: 258 parameters, over kernc's limit of 256"));

  std::vector<std::string> expressions(kernc::limits::kMaxNameExpressions + 1, "f");
  Error module = error_thrown_by([&] { kernc::RawModule("__global__ void f() {}", {}, expressions, "m"); });
  CHECK(contains(module.what(), "RawModule m: 4097 name expressions, over kernc's limit of 4096"));

  Error spec = error_thrown_by([&] { kernc::parse_spec(std::string(kernc::limits::kMaxSpecFileBytes + 1, ' '), "."); });
  CHECK(contains(spec.what(), "over kernc's limit"));
}

TEST_CASE("spec::parse_spec: a number too large for a double is a clear error (found by fuzz_spec)") {
  for (const char* text : {"333E3333", "{\"kernels\": [1e999]}", "-1E400"}) {
    CAPTURE(text);
    Error error = error_thrown_by([&] { kernc::parse_spec(text, "."); });
    CHECK(error.code() == ErrorCode::invalid_argument);
    CHECK(contains(error.what(), "spec is not valid JSON"));
  }
}

TEST_CASE("kernels: definitions at kernc's limits are accepted") {
  const std::string name(kernc::limits::kMaxNameLength, 'n');
  CHECK_NOTHROW(kernc::ElementwiseKernel("T x", "T y", "y = x", name));
  std::string many;
  for (size_t k = 0; k + 1 < kernc::limits::kMaxParams; ++k) many += (k ? ", T x" : "T x") + std::to_string(k);
  CHECK_NOTHROW(kernc::ElementwiseKernel(many, "T y", "y = x0", "wide"));
}
