// The host backend through the public API: choosing it per call, its device, every kernel
// kind, module globals, DLPack, events, and the checks on what it loads. Real compiles with
// the system C++ compiler; no GPU.

#ifdef KERNC_WITH_DLPACK
#include <dlpack/dlpack.h>
#endif

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "kernc/array.hpp"
#include "kernc/config.hpp"
#include "kernc/engine.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "platform/process.hpp"
#include "unit/temp_dir.hpp"

namespace kernc {
namespace {

// An engine with its own cache directory whose runtime is cuda (the default): the host
// is chosen per call, through CallOptions::backend.
struct HostFixture {
  test::TempDir dir;
  Engine engine{Config::from_environment([this](const char* name) -> const char* {
    static std::string cache;
    if (std::string(name) == "KERNC_CACHE_DIR") return (cache = dir.path() + "/cache").c_str();
    return nullptr;
  })};
  Device host = engine.device(0, Backend::cpu);

  CallOptions options() {
    CallOptions options;
    options.engine = &engine;
    options.backend = Backend::cpu;
    return options;
  }
};

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (auto& value : values) value = uniform(engine);
  return values;
}

TEST_CASE("host api: the cpu device is device 0 of Backend::cpu, at this machine's ISA level") {
  HostFixture fixture;
  CHECK(fixture.host.backend() == Backend::cpu);
  CHECK(fixture.host.ordinal() == 0);
  CHECK(fixture.host.target() == host_target());
  CHECK(fixture.host.target().binary_kind() == BinaryKind::shared_object);
  CHECK(fixture.host.multiprocessors() >= 1);
  CHECK(fixture.host.supports_cooperative_launch());
  CHECK(fixture.engine.runtime_backend() == Backend::cuda);
  try {
    fixture.engine.device(1, Backend::cpu);
    FAIL("device 1 of the cpu backend exists");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::no_device);
    CHECK(std::string(error.what()).find("one device, 0") != std::string::npos);
  }
}

TEST_CASE("host api: targets and their ladder") {
  CHECK(Target::parse("cpu-x86-64-v3").str() == "cpu-x86-64-v3");
  CHECK(Target::parse("cpu-x86-64-v3").backend() == Backend::cpu);
  CHECK(Target::parse("cpu") == host_target());
  std::vector<std::string> rungs;
  for (const auto& rung : binary_ladder(Target::parse("cpu-x86-64-v3"))) rungs.push_back(rung.str());
  CHECK(rungs == std::vector<std::string>{"cpu-x86-64-v3", "cpu-x86-64-v2", "cpu-x86-64"});
  CHECK_THROWS_WITH_AS(Target::parse("cpu-x86-64-v9"), doctest::Contains("unknown host ISA level"), Error);
  CHECK_FALSE(host_can_run(Target::parse("cpu-armv8-a")) == host_can_run(Target::parse("cpu-x86-64")));
  CHECK_THROWS_AS(Target::parse("cpu-x86-64").with_binary_kind(BinaryKind::cubin), Error);
}

TEST_CASE("host api: an elementwise kernel and a reduction run on the cpu device per call") {
  HostFixture fixture;
  const std::size_t n = 10007;
  const auto x = random_floats(n, 1), y = random_floats(n, 2);
  auto dx = DeviceArray::from_host(fixture.host, DType::float32, {static_cast<std::int64_t>(n)}, x.data());
  auto dy = DeviceArray::from_host(fixture.host, DType::float32, {static_cast<std::int64_t>(n)}, y.data());
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "host_api_saxpy");
  auto z = saxpy({Scalar(2.5f), dx, dy}, {}, fixture.options()).front().to_host_vector<float>();
  REQUIRE(z.size() == n);
  for (std::size_t k = 0; k < n; ++k) {
    // The host program rounds a * x + y twice (-ffp-contract=off); this test's own
    // compiler may fuse it: within one rounding.
    CHECK(z[k] == doctest::Approx(2.5f * x[k] + y[k]).epsilon(1e-6));
  }

  const ReductionKernel count_positive("T x", "int64 y", "x > 0 ? 1 : 0", "a + b", "y = a", "0", "host_api_count");
  auto counted = count_positive({dx}, std::nullopt, false, {}, fixture.options()).front().to_host_vector<std::int64_t>();
  std::int64_t expected = 0;
  for (float value : x) expected += value > 0 ? 1 : 0;
  CHECK(counted == std::vector<std::int64_t>{expected});
}

TEST_CASE("host api: a raw module's globals, name expressions and dynamic shared memory") {
  HostFixture fixture;
  const RawModule module(R"(
__constant__ float scale;
__device__ int calls;
template <class T>
__global__ void scaled(const T* x, T* y, int n) {
  extern __shared__ unsigned char staging[];
  T* mine = reinterpret_cast<T*>(staging);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) mine[threadIdx.x] = x[i] * scale;
  __syncthreads();
  if (i < n) y[i] = mine[threadIdx.x];
  if (i == 0) atomicAdd(&calls, 1);
}
)",
                         {}, {"scaled<float>", "scaled<double>"});
  const auto [scale_address, scale_bytes] = module.get_global("scale", fixture.options());
  CHECK(scale_bytes == sizeof(float));
  const float scale = 3.0f;
  fixture.host.copy_to_device(scale_address, &scale, sizeof scale);

  const int n = 1000;
  const auto x = random_floats(n, 3);
  auto dx = DeviceArray::from_host(fixture.host, DType::float32, {n}, x.data());
  auto dy = DeviceArray::empty(fixture.host, DType::float32, {n});
  LaunchConfig config;
  config.grid[0] = (n + 127) / 128;
  config.block[0] = 128;
  config.shared_bytes = 128 * sizeof(float);
  module.launch("scaled<float>", config, {dx, dy, n}, fixture.options());
  module.launch("scaled<float>", config, {dx, dy, n}, fixture.options());
  const auto y = dy.to_host_vector<float>();
  for (int k = 0; k < n; ++k) CHECK(y[k] == x[k] * 3.0f);
  const auto [calls_address, calls_bytes] = module.get_global("calls", fixture.options());
  REQUIRE(calls_bytes == sizeof(int));
  int calls = 0;
  fixture.host.copy_to_host(&calls, calls_address, sizeof calls);
  CHECK(calls == 2);
  CHECK_THROWS_WITH_AS(module.get_global("no_such_global", fixture.options()), doctest::Contains("no_such_global"),
                       Error);
}

#ifdef KERNC_WITH_DLPACK
TEST_CASE("host api: DLPack of a cpu array is kDLCPU, and host memory imports onto the cpu device") {
  HostFixture fixture;
  const auto x = random_floats(64, 4);
  auto array = DeviceArray::from_host(fixture.host, DType::float32, {8, 8}, x.data());
  DLManagedTensor* tensor = array.to_dlpack();
  CHECK(tensor->dl_tensor.device.device_type == kDLCPU);
  CHECK(std::memcmp(tensor->dl_tensor.data, x.data(), x.size() * sizeof(float)) == 0);
  DeviceArray back = DeviceArray::from_dlpack(tensor);
  CHECK(back.device().backend() == Backend::cpu);
  CHECK(back.to_host_vector<float>() == x);
}
#endif

TEST_CASE("host api: events time host work and streams are in order") {
  HostFixture fixture;
  Stream stream = fixture.host.create_stream();
  Event start = fixture.host.create_event(), stop = fixture.host.create_event();
  start.record(stream);
  std::vector<float> big(1 << 20, 1.0f);
  auto array = DeviceArray::from_host(fixture.host, DType::float32, {1 << 20}, big.data(), stream);
  stop.record(stream);
  stop.synchronize();
  CHECK(stop.elapsed_ms_since(start) >= 0.0f);
  CHECK(array.to_host_vector<float>(stream) == big);
}

TEST_CASE("host api: a binary for an ISA level this CPU lacks is never loaded") {
  HostFixture fixture;
  const Compiler& compiler = fixture.engine.compiler(Backend::cpu);
  Program program;
  program.name = "isa.cu";
  program.source = "extern \"C\" __global__ void touch(int* p) { *p = 1; }\n";
  CompiledProgram compiled = compiler.compile(program, Target::parse("cpu-x86-64-v2"));
  CHECK_NOTHROW(fixture.host.load(compiled.binary));
  // The target the binary names is what the runtime checks: rename it to another family.
  const std::string named = std::string("cpu-x86-64-v2") + '\0';
  const auto at = compiled.binary.find(named);
  REQUIRE(at != std::string::npos);
  std::string foreign = compiled.binary;
  foreign.replace(at, named.size(), std::string("cpu-armv8-a") + '\0' + '\0' + '\0');
  CHECK_THROWS_WITH_AS(fixture.host.load(foreign), doctest::Contains("which this CPU"), Error);
  CHECK_THROWS_WITH_AS(fixture.host.load("not a shared object"), doctest::Contains("cannot load a host program"),
                       Error);
}

TEST_CASE("host api: the host compiler's identity keys the cache; another compiler is another key") {
  HostFixture fixture;
  const Compiler& gxx = fixture.engine.compiler(Backend::cpu);
  CHECK(gxx.identity().backend == Backend::cpu);
  CHECK(gxx.identity().str().find("host-c++") == 0);
  CHECK(gxx.identity().reported().find("-ffp-contract=off") != std::string::npos);
  if (platform::find_program("clang++").empty()) return;  // the comparison needs a second compiler
  Config config = fixture.engine.config();
  config.host_cxx.set("clang++", "test");
  Engine clang(config);
  const Compiler& other = clang.compiler(Backend::cpu);
  CHECK(other.identity().tag() != gxx.identity().tag());
  Program program;
  program.name = "clang.cu";
  program.source = "extern \"C\" __global__ void add_one(int* p) { p[threadIdx.x] += 1; }\n";
  CompiledProgram compiled = other.compile(program, Target::parse("cpu-x86-64"));
  Module module = fixture.host.load(compiled.binary);
  std::vector<int> values{1, 2, 3, 4};
  auto array = DeviceArray::from_host(fixture.host, DType::int32, {4}, values.data());
  std::uint64_t address = array.ref().data;
  void* args[] = {&address};
  LaunchConfig launch;
  launch.block[0] = 4;
  module.function("add_one").launch(launch, args);
  CHECK(array.to_host_vector<int>() == std::vector<int>{2, 3, 4, 5});
}

}  // namespace
}  // namespace kernc

namespace kernc {
namespace {

TEST_CASE("host api: what cannot run on a host is a compile error naming the construct at the user's line") {
  HostFixture fixture;
  const Compiler& compiler = fixture.engine.compiler(Backend::cpu);
  Program program;
  program.name = "lane.cu";
  program.source =
      "extern \"C\" __global__ void lane(unsigned* out) {\n"
      "  unsigned id;\n"
      "  asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(id));\n"
      "  out[threadIdx.x] = id;\n"
      "}\n";
  CHECK_THROWS_WITH_AS(compiler.compile(program, host_target()),
                       doctest::Contains("lane.cu:3:3: inline PTX asm cannot run on the host backend"), Error);
  program.name = "fetch.cu";
  program.source =
      "extern \"C\" __global__ void fetch(cudaTextureObject_t t, float* out) {\n"
      "  out[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x);\n"
      "}\n";
  CHECK_THROWS_WITH_AS(compiler.compile(program, host_target()),
                       doctest::Contains("fetch.cu:1:"), Error);
  CHECK_THROWS_WITH_AS(compiler.compile(program, host_target()),
                       doctest::Contains("texture objects cannot run on the host backend"), Error);
}

}  // namespace
}  // namespace kernc
