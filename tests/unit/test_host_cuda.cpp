// The host backend's CUDA environment (templates/host_cuda.cuh), source preparation
// (src/compiler/host_source.cpp) and fiber scheduler (src/runtime/host_threads.cpp): real
// kernels compiled by the system g++, loaded with dlopen and run over a few threads.

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "core/templates.hpp"
#include "compiler/host_source.hpp"
#include "runtime/host_threads.hpp"
#include "temp_dir.hpp"

using kernc::compiler::needs_threads;
using kernc::compiler::rewrite_dynamic_shared;
using kernc::detail::HostWorker;
using kernc::test::contains;
using kernc::test::TempDir;

namespace {

struct CompileResult {
  bool ok = false;
  std::string log;
};

// Compiles `user` (as "user.cu", its lines numbered from 1) with the kernels `entries`
// ({name, entry expression}) into `<dir>/<stem>.so`, as the host backend would.
CompileResult compile_host(const TempDir& dir, const std::string& stem, const std::string& user,
                           const std::vector<std::pair<std::string, std::string>>& entries) {
  dir.write("include/kernc/host_cuda.cuh", kernc::codegen::template_file("host_cuda.cuh"));
  dir.write("include/kernc/host_abi.cuh", kernc::codegen::template_file("host_abi.cuh"));
  dir.write("include/cooperative_groups.h", kernc::codegen::template_file("host_cooperative_groups.cuh"));
  std::string source = "#include \"kernc/host_cuda.cuh\"\n#line 1 \"user.cu\"\n" + rewrite_dynamic_shared(user) +
                       "\n#line 1 \"entries\"\nextern \"C\" {\n__attribute__((visibility(\"default\"))) "
                       "extern const int kernc_host_needs_threads = " +
                       (needs_threads(user) ? "1" : "0") +
                       ";\n__attribute__((visibility(\"default\"))) extern const kernc_host_kernel kernc_host_kernels[] = {\n";
  for (const auto& [name, expression] : entries) source += "  {\"" + name + "\", &kernc_host_run<" + expression + ">},\n";
  source += "  {0, 0}};\n}\n";
  std::string path = dir.write(stem + ".cpp", source);
  std::string command = "g++ -std=c++17 -O2 -fPIC -shared -I" + dir.path() + "/include " + path + " -o " + dir.path() +
                        "/" + stem + ".so 2>&1";
  CompileResult result;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  REQUIRE(pipe);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe.get())) > 0;) result.log.append(buffer, n);
  result.ok = ::pclose(pipe.release()) == 0;
  return result;
}

struct Program {
  void* handle = nullptr;
  int needs_threads = 0;
  const kernc_host_kernel* kernels = nullptr;
  kernc_host_entry entry(const std::string& name) const {
    for (const kernc_host_kernel* k = kernels; k->name; ++k) {
      if (name == k->name) return k->entry;
    }
    FAIL("no kernel " << name);
    return nullptr;
  }
};

Program load(const std::string& path) {
  Program program;
  program.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(program.handle, ::dlerror());
  program.needs_threads = *static_cast<const int*>(::dlsym(program.handle, "kernc_host_needs_threads"));
  program.kernels = static_cast<const kernc_host_kernel*>(::dlsym(program.handle, "kernc_host_kernels"));
  REQUIRE(program.kernels);
  return program;
}

// A test launcher: the grid's blocks split over `workers` OS threads, each with a HostWorker.
std::optional<std::string> launch(kernc_host_entry entry, kernc_host_dim grid, kernc_host_dim block, void** args,
                                  int threads_as_fibers, unsigned workers = 4, unsigned dynamic_shared = 0) {
  kernc_host_launch base{};
  base.grid = grid;
  base.block = block;
  base.dynamic_shared_bytes = dynamic_shared;
  base.threads_as_fibers = threads_as_fibers;
  const unsigned long long blocks = 1ull * grid.x * grid.y * grid.z;
  std::vector<std::optional<std::string>> failures(workers);
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      HostWorker worker;
      kernc_host_launch own = base;
      own.block_begin = blocks * w / workers;
      own.block_end = blocks * (w + 1) / workers;
      if (!worker.run(entry, own, args)) failures[w] = worker.take_failure();
    });
  }
  for (std::thread& t : threads) t.join();
  for (auto& failure : failures) {
    if (failure) return failure;
  }
  return std::nullopt;
}

constexpr const char* kKernels = R"(
// Block sum in shared memory, block sums added atomically.
__global__ void block_sum(const int* in, unsigned long long* out, int n) {
  __shared__ long long s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, (unsigned long long)s[0]);
}

// Warp sums with shuffles; ballots and votes of each warp.
__global__ void warp_sum(const int* in, int* sums, unsigned* ballots, int* any_all, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  unsigned b = __ballot_sync(0xffffffffu, i < n && (in[i] & 1));
  int any = __any_sync(0xffffffffu, i < n && in[i] > 900);
  int all = __all_sync(0xffffffffu, i < n && in[i] >= 0);
  double d = __shfl_sync(0xffffffffu, 1.5 * (threadIdx.x & 31), 3, 8);
  if ((threadIdx.x & 31) == 0) {
    sums[i / 32] = v;
    ballots[i / 32] = b;
    any_all[i / 32] = any * 2 + all + (d == 1.5 * 3 ? 4 : 0);
  }
}

// Reverses each block's chunk through dynamic shared memory.
__global__ void reverse_chunks(const float* in, float* out) {
  extern __shared__ __align__(16) float chunk[];
  int t = threadIdx.x, base = blockIdx.x * blockDim.x;
  chunk[t] = in[base + t];
  __syncthreads();
  out[base + t] = chunk[blockDim.x - 1 - t];
}

// Atomics from every block at once.
__global__ void histogram(const int* in, int n, int* bins, unsigned* maximum, float* total, unsigned long long* cas_sum) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&bins[in[i] % 16], 1);
    atomicMax(maximum, (unsigned)in[i]);
    atomicAdd(total, 1.0f);
    unsigned long long old = *cas_sum, seen;
    while ((seen = atomicCAS(cas_sum, old, old + in[i])) != old) old = seen;
  }
}

// A cooperative grid: every block writes, the grid syncs, every block reads its neighbour's.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void grid_rotate(int* a, int* b) {
  cg::grid_group grid = cg::this_grid();
  unsigned long long r = grid.thread_rank();
  a[r] = (int)r * 3;
  grid.sync();
  b[r] = a[(r + blockDim.x) % grid.size()];
}

template <class T, int N>
__global__ void scale(T* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= N;
}

__global__ void divergent(int* x) {
  if (threadIdx.x >= 8) return;
  __syncthreads();
  x[threadIdx.x] = 1;
}

__global__ void barriers(int* x, int rounds) {
  for (int r = 0; r < rounds; ++r) __syncthreads();
  if (threadIdx.x == 0) x[blockIdx.x] = rounds;
}
)";

// The kernels above, compiled once for the whole file.
const Program& kernels() {
  static TempDir dir;
  static const Program program = [] {
    CompileResult result = compile_host(dir, "kernels", kKernels,
                                        {{"block_sum", "&block_sum"},
                                         {"warp_sum", "&warp_sum"},
                                         {"reverse_chunks", "&reverse_chunks"},
                                         {"histogram", "&histogram"},
                                         {"grid_rotate", "&grid_rotate"},
                                         {"scale<float,4>", "&scale<float, 4>"},
                                         {"divergent", "&divergent"},
                                         {"barriers", "&barriers"}});
    INFO(result.log);
    REQUIRE(result.ok);
    return load(dir / "kernels.so");
  }();
  return program;
}

std::vector<int> random_ints(size_t n, int high, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(0, high);
  std::vector<int> out(n);
  for (int& v : out) v = dist(rng);
  return out;
}

}  // namespace

TEST_CASE("compiler::needs_threads finds barriers and warp functions outside comments and strings") {
  CHECK(needs_threads("__global__ void f() { __syncthreads(); }"));
  CHECK(needs_threads("x = __syncthreads_count(p);"));
  CHECK(needs_threads("v += __shfl_down_sync(0xffffffff, v, 1);"));
  CHECK(needs_threads("#include <cooperative_groups.h>\n"));
  CHECK(needs_threads("auto t = cg::tiled_partition<8>(b);"));
  CHECK(needs_threads("w = kernc::shuffle_down(w, 4);"));
  CHECK(needs_threads("unsigned m = __ballot_sync(~0u, p);"));
  CHECK_FALSE(needs_threads("__global__ void f(float* x) { x[threadIdx.x] = 1; }"));
  CHECK_FALSE(needs_threads("// __syncthreads();\n/* __shfl_sync */ const char* s = \"__syncwarp\";"));
  CHECK_FALSE(needs_threads("const char* s = R\"x(__syncthreads)x\"; int my__syncthreads_like = 0;"));
  CHECK_FALSE(needs_threads(""));
}

TEST_CASE("compiler::rewrite_dynamic_shared makes extern __shared__ arrays pointers, keeping lines") {
  SUBCASE("function scope, with __align__") {
    std::string out = rewrite_dynamic_shared("void f() {\n  extern __shared__ __align__(16) float s[];\n  s[0] = 1;\n}\n");
    CHECK(contains(out, "static thread_local float* const s = static_cast<float*>(kernc_host_dynamic_shared());"));
    CHECK(std::count(out.begin(), out.end(), '\n') == 4);
  }
  SUBCASE("namespace scope, qualifiers, several lines, a 2-d array") {
    std::string in = "extern\n  __shared__ volatile unsigned char\n  bytes[];\nextern __shared__ double tile[][32];\n";
    std::string out = rewrite_dynamic_shared(in);
    CHECK(contains(out, "static thread_local volatile unsigned char* const bytes = static_cast<volatile unsigned char*>("));
    CHECK(contains(out, "static thread_local double (* const tile)[32] = static_cast<double (*)[32]>("));
    CHECK(std::count(out.begin(), out.end(), '\n') == std::count(in.begin(), in.end(), '\n'));
  }
  SUBCASE("other externs, comments and strings stay") {
    std::string in = "extern \"C\" __global__ void k(int n);\n// extern __shared__ int c[];\nextern int g;\n";
    CHECK(rewrite_dynamic_shared(in) == in);
  }
}

TEST_CASE("host_cuda: a shared-memory block reduction with __syncthreads is bit exact over 4 OS threads") {
  const Program& program = kernels();
  CHECK(program.needs_threads == 1);
  for (int n : {1, 1000, 37 * 256 + 5}) {
    std::vector<int> in = random_ints(static_cast<size_t>(n), 1 << 20, static_cast<unsigned>(n));
    unsigned long long out = 0, expected = 0;
    for (int v : in) expected += static_cast<unsigned long long>(v);
    const int* in_ptr = in.data();
    unsigned long long* out_ptr = &out;
    void* args[] = {&in_ptr, &out_ptr, &n};
    unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    CHECK(launch(program.entry("block_sum"), {blocks, 1, 1}, {256, 1, 1}, args, 1) == std::nullopt);
    CHECK(out == expected);
  }
}

TEST_CASE("host_cuda: warp shuffles, ballots and votes match a host reference") {
  const Program& program = kernels();
  const int n = 4 * 128 - 40;  // the last warps partly out of range
  std::vector<int> in = random_ints(n, 1000, 7);
  std::vector<int> sums(16, -1), any_all(16, -1);
  std::vector<unsigned> ballots(16, 0);
  const int* in_ptr = in.data();
  int* sums_ptr = sums.data();
  unsigned* ballots_ptr = ballots.data();
  int* any_all_ptr = any_all.data();
  int count = n;
  void* args[] = {&in_ptr, &sums_ptr, &ballots_ptr, &any_all_ptr, &count};
  CHECK(launch(program.entry("warp_sum"), {4, 1, 1}, {128, 1, 1}, args, 1, 2) == std::nullopt);
  for (int w = 0; w < 16; ++w) {
    int sum = 0, any = 0, all = 1;
    unsigned ballot = 0;
    for (int l = 0; l < 32; ++l) {
      int i = w * 32 + l;
      if (i < n) sum += in[i];
      if (i < n && (in[i] & 1)) ballot |= 1u << l;
      any |= i < n && in[i] > 900;
      all &= i < n;
    }
    CHECK(sums[w] == sum);
    CHECK(ballots[w] == ballot);
    CHECK(any_all[w] == any * 2 + all + 4);
  }
}

TEST_CASE("host_cuda: extern __shared__ is the worker's dynamic shared memory") {
  const Program& program = kernels();
  const unsigned block = 96, blocks = 7;
  std::vector<float> in(block * blocks), out(in.size(), -1.0f);
  std::mt19937 rng(3);
  for (float& v : in) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  const float* in_ptr = in.data();
  float* out_ptr = out.data();
  void* args[] = {&in_ptr, &out_ptr};
  CHECK(launch(program.entry("reverse_chunks"), {blocks, 1, 1}, {block, 1, 1}, args, 1, 3, block * 4) == std::nullopt);
  for (unsigned b = 0; b < blocks; ++b) {
    for (unsigned t = 0; t < block; ++t) CHECK(out[b * block + t] == in[b * block + block - 1 - t]);
  }
}

TEST_CASE("host_cuda: atomics from blocks running on several OS threads at once") {
  const Program& program = kernels();
  int n = 100000;
  std::vector<int> in = random_ints(static_cast<size_t>(n), 1 << 24, 11);
  std::vector<int> bins(16, 0), expected_bins(16, 0);
  unsigned maximum = 0;
  float total = 0;
  unsigned long long cas_sum = 0, expected_sum = 0;
  for (int v : in) ++expected_bins[v % 16], expected_sum += static_cast<unsigned>(v);
  const int* in_ptr = in.data();
  int* bins_ptr = bins.data();
  unsigned* max_ptr = &maximum;
  float* total_ptr = &total;
  unsigned long long* cas_ptr = &cas_sum;
  void* args[] = {&in_ptr, &n, &bins_ptr, &max_ptr, &total_ptr, &cas_ptr};
  // No barrier in this kernel, but the program needs fibers for the others: plain-loop it.
  CHECK(launch(program.entry("histogram"), {64, 1, 1}, {128, 1, 1}, args, 0, 8) == std::nullopt);
  CHECK(bins == expected_bins);
  CHECK(maximum == static_cast<unsigned>(*std::max_element(in.begin(), in.end())));
  CHECK(total == static_cast<float>(n));
  CHECK(cas_sum == expected_sum);
}

TEST_CASE("host_cuda: a cooperative launch syncs the whole grid") {
  const Program& program = kernels();
  const unsigned blocks = 6, block = 64, n = blocks * block;
  std::vector<int> a(n, -1), b(n, -1);
  int* a_ptr = a.data();
  int* b_ptr = b.data();
  void* args[] = {&a_ptr, &b_ptr};
  kernc_host_launch launch{};
  launch.grid = {blocks, 1, 1};
  launch.block = {block, 1, 1};
  launch.threads_as_fibers = 1;
  CHECK(kernc::detail::run_cooperative_grid(program.entry("grid_rotate"), launch, args) == std::nullopt);
  for (unsigned r = 0; r < n; ++r) CHECK(b[r] == static_cast<int>((r + block) % n) * 3);
  SUBCASE("grid sync outside a cooperative launch fails cleanly") {
    auto failure = ::launch(program.entry("grid_rotate"), {blocks, 1, 1}, {block, 1, 1}, args, 1, 2);
    REQUIRE(failure);
    CHECK(contains(*failure, "needs a cooperative launch"));
  }
}

TEST_CASE("host_cuda: a template kernel through its name expression's entry") {
  const Program& program = kernels();
  int n = 1000;
  std::vector<float> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i) - 3;
  std::vector<float> expected = x;
  for (float& v : expected) v *= 4;
  float* x_ptr = x.data();
  void* args[] = {&x_ptr, &n};
  CHECK(launch(program.entry("scale<float,4>"), {4, 1, 1}, {256, 1, 1}, args, 0, 2) == std::nullopt);
  CHECK(x == expected);
}

TEST_CASE("host_cuda: a divergent __syncthreads fails the launch with a message, and does not hang") {
  const Program& program = kernels();
  std::vector<int> x(64, 0);
  int* x_ptr = x.data();
  void* args[] = {&x_ptr};
  auto failure = launch(program.entry("divergent"), {3, 1, 1}, {64, 1, 1}, args, 1, 2);
  REQUIRE(failure);
  CHECK(contains(*failure, "__syncthreads: 8 of 64 threads of block ("));
  CHECK(contains(*failure, "the others returned"));
  SUBCASE("the worker runs the next launch normally") {
    std::vector<int> done(2, 0);
    int* done_ptr = done.data();
    int rounds = 3;
    void* next[] = {&done_ptr, &rounds};
    CHECK(launch(program.entry("barriers"), {2, 1, 1}, {64, 1, 1}, next, 1, 1) == std::nullopt);
    CHECK(done == std::vector<int>{3, 3});
  }
}

TEST_CASE("host_cuda: __syncthreads in a program run as plain loops fails the launch cleanly") {
  const Program& program = kernels();
  unsigned long long out = 0;
  std::vector<int> in(300, 1);
  const int* in_ptr = in.data();
  unsigned long long* out_ptr = &out;
  int n = 300;
  void* args[] = {&in_ptr, &out_ptr, &n};
  auto failure = launch(program.entry("block_sum"), {2, 1, 1}, {256, 1, 1}, args, 0, 2);
  REQUIRE(failure);
  CHECK(contains(*failure, "__syncthreads() was called in a program compiled without per-thread state"));
}

TEST_CASE("host_cuda: inline PTX asm and textures are refused at the user's line") {
  TempDir dir;
  CompileResult result = compile_host(dir, "asm",
                                      "__global__ void f(float* x) {\n"
                                      "  unsigned short h;\n"
                                      "  asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(x[0]));\n"
                                      "  x[1] = tex1Dfetch<float>(0, 1);\n"
                                      "}\n",
                                      {{"f", "&f"}});
  CHECK_FALSE(result.ok);
  INFO(result.log);
  CHECK(contains(result.log, "inline PTX asm cannot run on the host backend (Backend::cpu)"));
  CHECK(contains(result.log, "user.cu:3:3: note: in expansion of macro"));
  CHECK(contains(result.log, "texture fetch tex1Dfetch cannot run on the host backend"));
  CHECK(contains(result.log, "user.cu:4:"));
}

TEST_CASE("host_cuda: the cost of a __syncthreads with 256 fibers") {
  const Program& program = kernels();
  std::vector<int> x(8, 0);
  int* x_ptr = x.data();
  int rounds = 64;
  void* args[] = {&x_ptr, &rounds};
  kernc_host_launch base{};
  base.grid = {8, 1, 1};
  base.block = {256, 1, 1};
  base.block_end = 8;
  base.threads_as_fibers = 1;
  HostWorker worker;
  REQUIRE(worker.run(program.entry("barriers"), base, args));  // warm: stacks mapped and touched
  auto start = std::chrono::steady_clock::now();
  REQUIRE(worker.run(program.entry("barriers"), base, args));
  double with = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  rounds = 0;
  start = std::chrono::steady_clock::now();
  REQUIRE(worker.run(program.entry("barriers"), base, args));
  double without = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("__syncthreads: " << (with - without) / (8.0 * 256 * 64) << " ns per thread per barrier; a block of 256 "
                            << "fibers without barriers: " << without / 8 << " ns");
  CHECK(x[7] == 0);
}
