// kernc_host_bench: elementwise and reduction kernels on the host backend (Backend::cpu),
// the cases tools/bench/host-run compares with NumPy (tools/bench/host_bench.py): saxpy
// float32 2^26, full / axis-0 / axis-1 sums of an 8192^2 float32 matrix, a raw
// shared-memory block reduction (__syncthreads, so it runs on fibers) against the same sum
// as a ReductionKernel, STREAM-style read and triad loops on plain threads over the same
// buffers (host_stream.hpp: what the memory gives the same worker count), and first-call
// compile times of the host compiler against NVRTC's on the same generated programs. The worker count is the host device's: KERNC_CPU_THREADS.
// Prints one JSON object. No GPU is used; NVRTC only compiles.
//
// Usage: kernc_host_bench [--repeat R] [--scale S]   (S divides every size, for a quick run)

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernc/kernc.hpp"
#include "kernc/pipeline.hpp"
#include "host_stream.hpp"
#include "median.hpp"

using namespace kernc;

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The median of `repeat` timed runs of `body` (after one untimed run), in ms.
double median_ms(int repeat, const std::function<void()>& body) {
  body();
  std::vector<double> samples;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    body();
    samples.push_back(ms_since(start));
  }
  return bench::median(samples);
}

// One block of 256 threads sums a grid-stride share in shared memory (a tree of
// __syncthreads) and adds its total to out[0]: the textbook block reduction.
constexpr const char* kBlockSum = R"(
extern "C" __global__ void block_sum(const float* x, float* out, long long n) {
  __shared__ float partial[256];
  float s = 0.0f;
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) s += x[i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int offset = 128; offset > 0; offset /= 2) {
    if (threadIdx.x < offset) partial[threadIdx.x] += partial[threadIdx.x + offset];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}
)";

}  // namespace

int main(int argc, char** argv) {
  int repeat = 7;
  std::int64_t scale = 1;
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string arg = argv[a];
    if (arg == "--repeat") repeat = std::atoi(argv[a + 1]);
    else if (arg == "--scale") scale = std::atoll(argv[a + 1]);
  }
  try {
    const std::string cache_dir = (std::filesystem::temp_directory_path() / "kernc-host-bench-cache").string();
    Config config = Config::from_environment();
    config.runtime.set("cpu", "kernc_host_bench");
    config.cache_dir.set(cache_dir, "kernc_host_bench");
    Engine engine(config);
    CallOptions options;
    options.engine = &engine;
    const Device device = engine.device(0);
    const int workers = device.multiprocessors();

    const std::int64_t n = (std::int64_t{1} << 26) / scale, side = 8192 / (scale > 1 ? 8 : 1);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> host_x(static_cast<std::size_t>(std::max(n, side * side)));
    for (auto& v : host_x) v = dist(rng);
    const auto x = DeviceArray::from_host(device, DType::float32, {n}, host_x.data());
    const auto y = DeviceArray::from_host(device, DType::float32, {n}, host_x.data());
    const auto z = DeviceArray::empty(device, DType::float32, {n});
    const auto m = DeviceArray::from_host(device, DType::float32, {side, side}, host_x.data());
    const auto full_out = DeviceArray::empty(device, DType::float32, {});
    const auto cols_out = DeviceArray::empty(device, DType::float32, {side});
    const auto rows_out = DeviceArray::empty(device, DType::float32, {side});

    const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "host_bench_saxpy");
    const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "host_bench_sum");
    Call saxpy_call = saxpy.plan({2.0f, x, y}, {z}, options);
    auto planned_sum = [&](const std::optional<std::vector<int>>& axes, const DeviceArray& out) {
      CallOptions with = options;
      with.axes = axes;
      return sum.plan({m}, {out}, with);
    };
    Call full_call = planned_sum(std::nullopt, full_out);
    Call axis0_call = planned_sum(std::vector<int>{0}, cols_out);
    Call axis1_call = planned_sum(std::vector<int>{1}, rows_out);

    const double saxpy_ms = median_ms(repeat, [&] { saxpy_call.launch_into({2.0f, x, y}, {z}); });
    const double full_ms = median_ms(repeat, [&] { full_call.launch_into({m}, {full_out}); });
    const double axis0_ms = median_ms(repeat, [&] { axis0_call.launch_into({m}, {cols_out}); });
    const double axis1_ms = median_ms(repeat, [&] { axis1_call.launch_into({m}, {rows_out}); });

    // What a launch costs before any work: one block a worker, each storing one float
    // (waking the pool, handing out blocks, waiting for the last worker), part of every
    // row's time.
    const auto tiny_z = DeviceArray::empty(device, DType::float32, {workers});
    const RawKernel one_store(R"(extern "C" __global__ void one_store(float* z) { z[blockIdx.x] = 1.0f; })", "one_store");
    LaunchConfig one_per_worker;
    one_per_worker.grid[0] = static_cast<unsigned>(workers);
    const double tiny_ms = median_ms(std::max(repeat, 101), [&] { one_store(one_per_worker, {tiny_z}, options); });

    // The memory's bound at this worker count, on the same pages: a read of the matrix (the
    // sums' traffic) and a triad over saxpy's arrays.
    auto host_floats = [](const DeviceArray& array) { return reinterpret_cast<float*>(array.ref().data); };
    const double stream_read = bench::stream_read_ms(host_floats(m), side * side, workers, repeat);
    const double stream_triad = bench::stream_triad_ms(host_floats(z), host_floats(x), host_floats(y), n, workers, repeat);

    // The timed results are checked against sums in double: a fast wrong answer is no result.
    {
      const auto full = full_out.to_host_vector<float>();
      const auto cols = cols_out.to_host_vector<float>();
      const auto rows = rows_out.to_host_vector<float>();
      std::vector<double> want_cols(static_cast<std::size_t>(side), 0.0), want_rows(static_cast<std::size_t>(side), 0.0);
      double want_full = 0.0, magnitude = 0.0;
      for (std::int64_t r = 0; r < side; ++r) {
        for (std::int64_t c = 0; c < side; ++c) {
          const double v = host_x[static_cast<std::size_t>(r * side + c)];
          want_cols[static_cast<std::size_t>(c)] += v;
          want_rows[static_cast<std::size_t>(r)] += v;
          want_full += v;
          magnitude += std::abs(v);
        }
      }
      // float sums of n terms in lanes: within ~n * 2^-24 of the sum of magnitudes.
      auto check = [&](const char* what, double got, double want, double scale) {
        if (std::abs(got - want) > 1e-5 * scale + 1e-3) {
          throw std::runtime_error(std::string("wrong result: ") + what + " got " + std::to_string(got) + ", want " +
                                   std::to_string(want));
        }
      };
      check("full sum", full.at(0), want_full, magnitude);
      for (std::int64_t k = 0; k < side; ++k) {
        check("axis-0 sum", cols[static_cast<std::size_t>(k)], want_cols[static_cast<std::size_t>(k)], static_cast<double>(side));
        check("axis-1 sum", rows[static_cast<std::size_t>(k)], want_rows[static_cast<std::size_t>(k)], static_cast<double>(side));
      }
    }

    // The raw block reduction and the ReductionKernel of the same sum, over 2^24 / scale
    // elements (the raw kernel's fibers cost ~300 ns a thread a barrier).
    const std::int64_t raw_n = (std::int64_t{1} << 24) / scale;
    const auto raw_x = DeviceArray::from_host(device, DType::float32, {raw_n}, host_x.data());
    const auto raw_out = DeviceArray::empty(device, DType::float32, {1});
    const RawKernel block_sum(kBlockSum, "block_sum");
    LaunchConfig launch;
    launch.grid[0] = 256;
    launch.block[0] = 256;
    const float zero = 0.0f;
    const double raw_ms = median_ms(std::max(3, repeat / 2), [&] {
      device.copy_to_device(raw_out.ref().data, &zero, sizeof zero);
      block_sum(launch, {raw_x, raw_out, Scalar(static_cast<long long>(raw_n))}, options);
    });
    const auto raw_full_out = DeviceArray::empty(device, DType::float32, {});
    Call raw_sum_call = sum.plan({raw_x}, {raw_full_out}, options);
    const double raw_as_reduction_ms = median_ms(repeat, [&] { raw_sum_call.launch_into({raw_x}, {raw_full_out}); });

    // First-call compile time: the same generated programs through the host compiler
    // (the device's own target) and NVRTC (sm_90), each a median of 3 fresh compiles.
    const Program saxpy_program = kernc::program(saxpy, parse_call_signature("scalar float32, float32, float32 -> float32"), Layout{});
    const Program sum_program = kernc::program(sum, parse_call_signature("float32 -> float32"), Layout{});
    auto compile_ms = [&](Backend backend, const Target& target, const Program& program) {
      std::vector<double> samples;
      for (int r = 0; r < 3; ++r) samples.push_back(engine.compiler(backend).compile(program, target).compile_ms);
      return bench::median(samples);
    };
    const Target host_target = device.target();
    const double host_saxpy_compile = compile_ms(Backend::cpu, host_target, saxpy_program);
    const double host_sum_compile = compile_ms(Backend::cpu, host_target, sum_program);
    double nvrtc_saxpy_compile = -1, nvrtc_sum_compile = -1;
    try {
      const Target sm90 = Target::parse("sm_90");
      nvrtc_saxpy_compile = compile_ms(Backend::cuda, sm90, saxpy_program);
      nvrtc_sum_compile = compile_ms(Backend::cuda, sm90, sum_program);
    } catch (const Error& error) {
      std::fprintf(stderr, "kernc_host_bench: NVRTC unavailable: %s\n", error.what());
    }

    std::printf(
        "{\"workers\": %d, \"target\": \"%s\", \"repeat\": %d, \"n\": %lld, \"side\": %lld, \"raw_n\": %lld,\n"
        " \"saxpy_ms\": %.4f, \"sum_full_ms\": %.4f, \"sum_axis0_ms\": %.4f, \"sum_axis1_ms\": %.4f,\n"
        " \"raw_block_sum_ms\": %.4f, \"raw_as_reduction_ms\": %.4f,\n"
        " \"stream_read_ms\": %.4f, \"stream_triad_ms\": %.4f, \"tiny_launch_ms\": %.4f,\n"
        " \"host_compile_saxpy_ms\": %.1f, \"host_compile_sum_ms\": %.1f, \"nvrtc_compile_saxpy_ms\": %.1f, "
        "\"nvrtc_compile_sum_ms\": %.1f}\n",
        workers, host_target.str().c_str(), repeat, static_cast<long long>(n), static_cast<long long>(side),
        static_cast<long long>(raw_n), saxpy_ms, full_ms, axis0_ms, axis1_ms, raw_ms, raw_as_reduction_ms,
        stream_read, stream_triad, tiny_ms,
        host_saxpy_compile, host_sum_compile, nvrtc_saxpy_compile, nvrtc_sum_compile);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "kernc_host_bench: %s\n", error.what());
    return 1;
  }
}
