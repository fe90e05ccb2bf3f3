// kernc benchmarks on a GPU: bandwidth of contiguous elementwise and reduction kernels
// against a device-to-device copy, per-call cost against raw cuLaunchKernel through the
// same driver layer, cold compile against a raw compile of the same code, and warm-disk
// first calls; float16 and float64 saxpy and sums at the end. Prints one table, and with
// --json FILE writes every row as JSON for tools/bench/report.py (tools/bench/run runs both).
// See tools/bench/NOTES.md for what was measured when.
// Usage: kernc_bench [--size N] [--repeat R] [--json FILE]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bare_nvrtc.hpp"
#include "call_costs.hpp"
#include "first_call.hpp"
#include "median.hpp"
#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"

using namespace kernc;

namespace {

using bench::median;

// Median milliseconds of `body` over `repeat` runs, timed with events on the default stream.
template <class Body>
double time_ms(const Device& device, int repeat, Body&& body) {
  body();  // warm-up
  device.synchronize();
  std::vector<double> times;
  Event start = device.create_event(), stop = device.create_event();
  for (int r = 0; r < repeat; ++r) {
    start.record();
    body();
    stop.record();
    stop.synchronize();
    times.push_back(stop.elapsed_ms_since(start));
  }
  return median(times);
}

double host_us(const std::chrono::steady_clock::time_point& start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

// One line of the table: a measure, and its ratio to the row's reference (0: none).
struct Row {
  std::string label;
  double value;
  const char* unit;
  double ratio;
};

void print_rows(const std::vector<Row>& rows) {
  std::printf("\n%-44s %12s %10s\n", "measure", "value", "vs ref");
  for (const auto& row : rows) {
    const char* format = std::strcmp(row.unit, "TB/s") == 0 ? "%-44s %9.3f %s " : "%-44s %9.2f %s ";
    if (!std::strcmp(row.unit, "ms") && row.value < 1) format = "%-44s %9.3f %s ";
    std::printf(format, row.label.c_str(), row.value, row.unit);
    if (row.ratio > 0) std::printf(std::strlen(row.unit) == 2 ? "  %9.2fx\n" : "%9.2fx\n", row.ratio);
    else std::printf("\n");
  }
}

// {"implementation": "kernc", "case": LABEL, "value": V, "unit": U} per row, as a JSON array.
void write_json(const std::string& path, const std::vector<Row>& rows) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (!file) throw std::runtime_error("cannot write " + path);
  std::fprintf(file, "[\n");
  for (std::size_t k = 0; k < rows.size(); ++k) {
    std::fprintf(file, "  {\"implementation\": \"kernc\", \"case\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}%s\n",
                 rows[k].label.c_str(), rows[k].value, rows[k].unit, k + 1 < rows.size() ? "," : "");
  }
  std::fprintf(file, "]\n");
  std::fclose(file);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && !std::strcmp(argv[1], "--first-call-child")) return bench::first_call_child(argc - 2, argv + 2);
  std::int64_t n = 1ll << 28;  // 1 GiB of float32 per array
  int repeat = 20;
  std::string json_path;
  for (int k = 1; k + 1 < argc; k += 2) {
    if (!std::strcmp(argv[k], "--size")) n = std::atoll(argv[k + 1]);
    if (!std::strcmp(argv[k], "--repeat")) repeat = std::atoi(argv[k + 1]);
    if (!std::strcmp(argv[k], "--json")) json_path = argv[k + 1];
  }
  if (!Device::available()) {
    std::printf("kernc_bench: no usable GPU\n");
    return 77;
  }
  try {
    Engine& engine = Engine::global();
    Device device = engine.device();
    std::printf("device: %s (sm_%d, %d SMs); arrays of %lld float32 (%.2f GiB each)\n", device.name().c_str(),
                device.compute_capability(), device.multiprocessors(), static_cast<long long>(n),
                n * 4.0 / (1 << 30));
    // Random-ish data generated on the device (never zeros).
    RawKernel init("extern \"C\" __global__ void init(float* x, long long n, unsigned seed) {\n"
                   "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                   "  if (i < n) { unsigned h = (unsigned)i * 2654435761u ^ seed; x[i] = (h >> 8) * (1.0f / 16777216.0f) - 0.5f; }\n"
                   "}\n",
                   "init");
    auto x = DeviceArray::empty(device, DType::float32, {n});
    auto y = DeviceArray::empty(device, DType::float32, {n});
    auto z = DeviceArray::empty(device, DType::float32, {n});
    LaunchConfig fill;
    fill.block[0] = 256;
    fill.grid[0] = static_cast<unsigned>((n + 255) / 256);
    init(fill, {x, n, 1u});
    init(fill, {y, n, 2u});
    device.synchronize();

    const double bytes1 = n * 4.0;
    double copy_ms = time_ms(device, repeat, [&] { device.copy_device(z.ref().data, x.ref().data, n * 4); });
    double copy_tbs = 2 * bytes1 / copy_ms / 1e9;

    ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "saxpy");
    double saxpy_ms = time_ms(device, repeat, [&] { saxpy({2.0f, x, y}, {z}); });
    double saxpy_tbs = 3 * bytes1 / saxpy_ms / 1e9;

    // A raw NVRTC saxpy with float4 loads and stores: what a hand-written kernel reaches.
    RawKernel raw4("extern \"C\" __global__ void raw_saxpy4(float a, const float4* x, const float4* y, float4* z,\n"
                   "                                        long long n4) {\n"
                   "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;\n"
                   "       i += (long long)gridDim.x * blockDim.x) {\n"
                   "    float4 u = x[i], v = y[i];\n"
                   "    z[i] = make_float4(a * u.x + v.x, a * u.y + v.y, a * u.z + v.z, a * u.w + v.w);\n"
                   "  }\n}\n",
                   "raw_saxpy4");
    LaunchConfig config4;
    config4.block[0] = 256;
    config4.grid[0] = static_cast<unsigned>(device.multiprocessors() * 8);
    const long long n4 = n / 4;
    double raw4_ms = time_ms(device, repeat, [&] { raw4(config4, {2.0f, x, y, z, n4}); });
    double raw4_tbs = 3 * (n4 * 4) * 4.0 / raw4_ms / 1e9;

    ReductionKernel sum_sq("T x", "T y", "x * x", "a + b", "y = a", "0", "sum_sq");
    auto out = DeviceArray::empty(device, DType::float32, {});
    double reduce_ms = time_ms(device, repeat, [&] { sum_sq({x}, std::nullopt, false, {out}); });
    double reduce_tbs = bytes1 / reduce_ms / 1e9;

    // saxpy on layouts other than flat (issue 14's elementwise cases), over the same 2^28
    // floats seen as square matrices; bytes are those of every element read and written.
    std::int64_t square_side = 1;
    while ((square_side * 2) * (square_side * 2) <= n) square_side *= 2;
    const std::int64_t square = square_side * square_side;
    auto as_square = [&](const DeviceArray& a) {
      return ArrayRef::contiguous(a.ref().data, DType::float32, {square_side, square_side});
    };
    struct LayoutCase {
      const char* label;
      ArrayRef x, y, z;
      double bytes;
    };
    ArrayRef row = as_square(y);  // y[:side] as a row, the same in every row
    row.shape = {square_side, square_side};
    row.strides = {0, 4};
    ArrayRef column = as_square(y);  // y[:side] as a column, the same value along each row
    column.strides = {4, 0};
    ArrayRef x_half = ArrayRef::contiguous(x.ref().data, DType::float32, {n}).sliced(0, 0, n, 2);
    ArrayRef y_half = ArrayRef::contiguous(y.ref().data, DType::float32, {n}).sliced(0, 0, n, 2);
    const std::vector<LayoutCase> layout_cases = {
        {"saxpy broadcast row (y[None, :])", as_square(x), row, as_square(z), 2.0 * square * 4},
        {"saxpy broadcast column (y[:, None])", as_square(x), column, as_square(z), 2.0 * square * 4},
        {"saxpy all Fortran-ordered (x.T, y.T, z.T)", as_square(x).transposed(), as_square(y).transposed(),
         as_square(z).transposed(), 3.0 * square * 4},
        {"saxpy one operand transposed (x.T)", as_square(x).transposed(), as_square(y), as_square(z),
         3.0 * square * 4},
        {"saxpy every second element (x[::2], y[::2])", x_half, y_half,
         ArrayRef::contiguous(z.ref().data, DType::float32, {n / 2}), 3.0 * (n / 2) * 4},
    };
    std::vector<double> layout_tbs;
    for (const auto& c : layout_cases) {
      double ms = time_ms(device, repeat, [&] { saxpy({2.0f, c.x, c.y}, {c.z}); });
      layout_tbs.push_back(c.bytes / ms / 1e9);
    }

    // Reductions by shape, over the same 2^28 floats seen as matrices (issue 14's cases):
    // the inner axis, the outer axis, the middle axis of a 3-D array, many short rows.
    struct ShapeCase {
      const char* label;
      std::vector<std::int64_t> shape;
      std::vector<int> axes;
    };
    std::vector<ShapeCase> shape_cases;
    const std::int64_t side = square_side;
    shape_cases.push_back({"reduction axis=1 of a square (inner)", {side, side}, {1}});
    shape_cases.push_back({"reduction axis=0 of a square (outer)", {side, side}, {0}});
    shape_cases.push_back({"reduction axis=1 of a cube (middle)", {n / (side * 64), 64, side}, {1}});
    shape_cases.push_back({"reduction axis=1 of rows of 32 (segments)", {n / 32, 32}, {1}});
    std::vector<double> shape_tbs;
    for (const auto& c : shape_cases) {
      ArrayRef view = ArrayRef::contiguous(x.ref().data, DType::float32, c.shape);
      std::vector<std::int64_t> out_shape;
      for (int d = 0; d < static_cast<int>(c.shape.size()); ++d) {
        if (std::find(c.axes.begin(), c.axes.end(), d) == c.axes.end()) out_shape.push_back(c.shape[d]);
      }
      auto reduced = DeviceArray::empty(device, DType::float32, out_shape);
      double ms = time_ms(device, repeat, [&] { sum_sq({view}, c.axes, false, {reduced}); });
      std::int64_t elements = 1;
      for (auto e : c.shape) elements *= e;
      shape_tbs.push_back(elements * 4.0 / ms / 1e9);
    }

    // Per-call cost: back-to-back launches of a tiny kernel, host time per call.
    auto small_x = DeviceArray::empty(device, DType::float32, {1024});
    auto small_z = DeviceArray::empty(device, DType::float32, {1024});
    init(LaunchConfig{{4, 1, 1}, {256, 1, 1}, 0, {}}, {small_x, 1024LL, 3u});
    // Two measures per path: host time per call over 2000 back-to-back calls (the steady
    // state, which is the GPU's time per kernel when that is longer), and over a burst of
    // 200 calls after the GPU has gone idle (the host's own cost: 200 launches fit in the
    // launch queue, so none waits for the GPU). The paths take turns, round after round,
    // each round in a rotated order, on a thread kept on one CPU; each measure is the median
    // over the rounds. Measured one path after another (v21), the host's drift between
    // loops moved the ratios by 0.3-1.5 us, more than kernc's own 0.4 us (NOTES v21).
    CallOptions plan_options;
    plan_options.multiprocessors = device.multiprocessors();
    const Call plan = saxpy.plan({2.0f, small_x, small_x}, {small_z}, plan_options);
    RawKernel raw("extern \"C\" __global__ void raw_saxpy(float a, const float* x, const float* y, float* z, int n) {\n"
                  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) z[i] = a * x[i] + y[i];\n}\n",
                  "raw_saxpy");
    Function raw_fn = raw.function();
    float a = 2.0f;
    std::uint64_t px = small_x.ref().data, pz = small_z.ref().data;
    int small_n = 1024;
    void* args[] = {&a, &px, &px, &pz, &small_n};
    LaunchConfig small;
    small.block[0] = 256;
    small.grid[0] = 4;
    // A reduction of the same 1024 floats as 32 rows of 32 (one launch, no second pass),
    // called and kept; the raw kernel's call kept as well.
    const ArrayRef small_m = ArrayRef::contiguous(small_x.ref().data, DType::float32, {32, 32});
    const ArrayRef small_rows = ArrayRef::contiguous(small_z.ref().data, DType::float32, {32});
    CallOptions by_row = plan_options;
    by_row.axes = std::vector<int>{1};
    const Call reduction_plan = sum_sq.plan({small_m}, {small_rows}, by_row);
    const Call raw_plan = raw.plan(small, {2.0f, small_x, small_x, small_z, small_n});
    // The kept plan given raw addresses (ArrayRef::contiguous: device unknown), whose device
    // check looks each address up once and then compares it with the plan's memo (NOTE
    // [ arrays know their device ], src/kernels/device_check.cpp).
    const ArrayRef raw_x = ArrayRef::contiguous(small_x.ref().data, DType::float32, {1024});
    const ArrayRef raw_z = ArrayRef::contiguous(small_z.ref().data, DType::float32, {1024});
    const std::vector<std::function<void()>> call_paths = {
        [&] { saxpy({2.0f, small_x, small_x}, {small_z}); },
        // The same call through a kept plan (include/kernc/call.hpp): no type resolution,
        // broadcasting or loop planning per call, and the function taken from the plan.
        [&] { plan.launch_into({2.0f, small_x, small_x}, {small_z}); },
        [&] { raw_fn.launch(small, args); },
        // The same raw kernel through RawKernel::operator(): argument checks against the
        // declaration, packing, and the launch entry found per call.
        [&] { raw(small, {2.0f, small_x, small_x, small_z, small_n}); },
        // launch(), which returns the outputs as arrays (one allocation, two reference counts).
        [&] { plan.launch({2.0f, small_x, small_x}, {small_z}); },
        [&] { sum_sq({small_m}, std::vector<int>{1}, false, {small_rows}); },
        [&] { reduction_plan.launch_into({small_m}, {small_rows}); },
        [&] { raw_plan.launch_into({2.0f, small_x, small_x, small_z, small_n}, {}); },
        [&] { plan.launch_into({2.0f, raw_x, raw_x}, {raw_z}); },
    };
    const std::vector<bench::CallCost> costs = bench::interleaved_call_costs(device, call_paths, 2000, 200, 15);
    const bench::CallCost &kernc_cost = costs[0], &plan_cost = costs[1], &raw_cost = costs[2],
                          &raw_kernel_cost = costs[3], &plan_returning_cost = costs[4], &reduction_cost = costs[5],
                          &reduction_plan_cost = costs[6], &raw_plan_cost = costs[7], &raw_address_plan_cost = costs[8];
    const double kernc_us = kernc_cost.steady_us, plan_us = plan_cost.steady_us, raw_us = raw_cost.steady_us;
    const double raw_kernel_us = raw_kernel_cost.steady_us;

    // Cold compile: a fresh kernel text (never cached) through kernc vs the raw program.
    Config fresh = engine.config();
    fresh.cache_dir.set((std::filesystem::temp_directory_path() / "kernc-bench-cache").string(), "bench");
    std::filesystem::remove_all(fresh.cache_dir.value);
    Engine cold(fresh);
    CallOptions cold_options;
    cold_options.engine = &cold;
    std::string unique = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    ElementwiseKernel fresh_saxpy = bench::first_call_saxpy(unique);
    auto start = std::chrono::steady_clock::now();
    fresh_saxpy({2.0f, small_x, small_x}, {small_z}, cold_options);
    device.synchronize();
    double cold_first_ms = host_us(start) / 1000;
    Program raw_program = kernc::program(raw);
    raw_program.source += "/*" + unique + "*/";

    // The same for a reduction: its first call in the cold engine (issue 14: <= 150 ms).
    ReductionOptions fresh_options;
    fresh_options.preamble = "/*" + unique + "*/";
    ReductionKernel fresh_sum("T x", "T y", "x * x", "a + b", "y = a", "0", "sum_sq", fresh_options);
    auto fresh_out = DeviceArray::empty(device, DType::float32, {});
    start = std::chrono::steady_clock::now();
    fresh_sum({small_x}, std::nullopt, false, {fresh_out}, cold_options);
    device.synchronize();
    double cold_reduction_ms = host_us(start) / 1000;

    // Compile times are medians of 5 (one compile moved by 10-20% between calls). Each
    // generated program is also compiled by NVRTC directly (bare_nvrtc.hpp), the same
    // source with its headers: what kernc's compile path adds over a hand-written host.
    const int compiles = 5;
    const Compiler& nvrtc = cold.compiler(Backend::cuda);
    CallTypes types = parse_call_signature("scalar float32, float32, float32 -> float32");
    const Program generated_program = kernc::program(fresh_saxpy, types, Layout{});
    const Program reduction_program = kernc::program(fresh_sum, parse_call_signature("float32 -> float32"), Layout{});
    std::vector<double> raw_ms, generated_ms, bare_ms, reduction_ms, bare_reduction_ms;
    for (int k = 0; k < compiles; ++k) {
      raw_ms.push_back(nvrtc.compile(raw_program, device.target()).compile_ms);
      generated_ms.push_back(nvrtc.compile(generated_program, device.target()).compile_ms);
      bare_ms.push_back(bench::bare_nvrtc_compile_ms(generated_program, device.target().str()));
      reduction_ms.push_back(nvrtc.compile(reduction_program, device.target()).compile_ms);
      bare_reduction_ms.push_back(bench::bare_nvrtc_compile_ms(reduction_program, device.target().str()));
    }
    const double raw_compile_ms = median(raw_ms), generated_compile_ms = median(generated_ms);
    const double bare_compile_ms = median(bare_ms), reduction_compile_ms = median(reduction_ms);
    const double bare_reduction_compile_ms = median(bare_reduction_ms);

    // Warm disk, in this process: the first call of the kernel through each of 9 new engines
    // on the same cache directory (nothing of it in the engine's memory; the process and
    // the driver warm). The fresh-process figure, issue 14's, comes from child processes
    // (first_call.hpp), once the second kernel they use is in the cache too.
    bench::first_call_other(unique)({small_x}, {small_z}, cold_options);
    std::vector<double> warm_engine_ms;
    for (int k = 0; k < 9; ++k) {
      Engine warm(fresh);
      CallOptions warm_options;
      warm_options.engine = &warm;
      start = std::chrono::steady_clock::now();
      fresh_saxpy({2.0f, small_x, small_x}, {small_z}, warm_options);
      device.synchronize();
      warm_engine_ms.push_back(host_us(start) / 1000);
    }
    const double warm_engine_first_ms = warm_engine_ms.front(), warm_engine_median_ms = median(warm_engine_ms);
    // A second GPU, for the first call on GPU 1 after GPU 0 (NOTE [ load once for every GPU ]).
    bool two_gpus = false;
    try {
      two_gpus = engine.device(1).backend() == Backend::cuda;
    } catch (const Error&) {
    }
    const bench::FirstCallResults first_calls = bench::measure_first_calls(
        std::filesystem::read_symlink("/proc/self/exe").string(), fresh.cache_dir.value, unique, 7, two_gpus);
    // The same by phase, through a third engine: Engine::load (disk read, checksum and key
    // checks, then the driver's module load), and the driver's load alone of the same binary
    // with its function lookup. What is left of the first call is planning and the launch.
    Engine phases(fresh);
    start = std::chrono::steady_clock::now();
    const Engine::Loaded phase_loaded = phases.load(generated_program, device);
    const double warm_load_ms = host_us(start) / 1000;
    start = std::chrono::steady_clock::now();
    const Module driver_only = device.load(phase_loaded.program->binary);
    const Function driver_fn = driver_only.function("saxpy");
    const double driver_load_ms = host_us(start) / 1000;
    // Its first launch, synchronized, then a second: what the driver adds to a first call
    // after the load (a module's code reaches the GPU at its first launch when the driver
    // loads lazily, CUDA_MODULE_LOADING=LAZY, its default). The parameters are the
    // contiguous 32-bit saxpy's: a float, three {address, int size} views, {int size}.
    struct View32 {
      std::uint64_t data;
      std::int32_t size;
    };
    float phase_a = 2.0f;
    View32 phase_x{small_x.ref().data, 1024}, phase_z{small_z.ref().data, 1024};
    std::int32_t phase_size = 1024;
    void* phase_args[] = {&phase_a, &phase_x, &phase_x, &phase_z, &phase_size};
    LaunchConfig phase_config;
    phase_config.block[0] = 256;
    start = std::chrono::steady_clock::now();
    driver_fn.launch(phase_config, phase_args);
    device.synchronize();
    const double first_launch_ms = host_us(start) / 1000;
    start = std::chrono::steady_clock::now();
    driver_fn.launch(phase_config, phase_args);
    device.synchronize();
    const double second_launch_ms = host_us(start) / 1000;

    // float16 and float64 (issue 14: within 5% of float32's ratio): the same bytes per
    // array, so 2n halves and n/2 doubles, over x, y and z re-filled with each type.
    struct TypedCase {
      DType dtype;
      const char* name;
      const char* init;
      std::int64_t count;
      double size;
    };
    const std::vector<TypedCase> typed_cases = {
        {DType::float16, "float16",
         "#include <cuda_fp16.h>\nextern \"C\" __global__ void init_t(__half* x, long long n, unsigned seed) {\n"
         "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
         "  if (i < n) { unsigned h = (unsigned)i * 2654435761u ^ seed; x[i] = __float2half((h >> 8) * (1.0f / 16777216.0f) - 0.5f); }\n}\n",
         2 * n, 2},
        {DType::float64, "float64",
         "extern \"C\" __global__ void init_t(double* x, long long n, unsigned seed) {\n"
         "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
         "  if (i < n) { unsigned h = (unsigned)i * 2654435761u ^ seed; x[i] = (h >> 8) * (1.0 / 16777216.0) - 0.5; }\n}\n",
         n / 2, 8},
    };
    // float16 with the opt-in native half arithmetic (NOTE [ half arithmetic is float
    // arithmetic ], templates/float16.cuh): the default computes in float as CuPy does; these
    // rows measure what the opt-in is worth beside it.
    ElementwiseOptions native_elementwise;
    native_elementwise.native_half_arithmetic = true;
    ElementwiseKernel saxpy_native("T a, T x, T y", "T z", "z = a * x + y", "saxpy", native_elementwise);
    ReductionOptions native_reduction;
    native_reduction.native_half_arithmetic = true;
    ReductionKernel sum_sq_native("T x", "T y", "x * x", "a + b", "y = a", "0", "sum_sq", native_reduction);
    std::vector<Row> typed_rows;
    for (const auto& c : typed_cases) {
      RawKernel init_t(c.init, "init_t");
      LaunchConfig fill_t;
      fill_t.block[0] = 256;
      fill_t.grid[0] = static_cast<unsigned>((c.count + 255) / 256);
      ArrayRef xt = ArrayRef::contiguous(x.ref().data, c.dtype, {c.count});
      ArrayRef yt = ArrayRef::contiguous(y.ref().data, c.dtype, {c.count});
      ArrayRef zt = ArrayRef::contiguous(z.ref().data, c.dtype, {c.count});
      init_t(fill_t, {xt, c.count, 1u});
      init_t(fill_t, {yt, c.count, 2u});
      device.synchronize();
      const double bytes_t = c.count * c.size;
      double ms = time_ms(device, repeat, [&] { saxpy({2.0, xt, yt}, {zt}); });
      typed_rows.push_back({std::string("elementwise saxpy ") + c.name + " (3 arrays)", 3 * bytes_t / ms / 1e9, "TB/s",
                            3 * bytes_t / ms / 1e9 / copy_tbs});
      auto out_t = DeviceArray::empty(device, c.dtype, {});
      ms = time_ms(device, repeat, [&] { sum_sq({xt}, std::nullopt, false, {out_t}); });
      typed_rows.push_back({std::string("reduction sum of squares ") + c.name + " (read)", bytes_t / ms / 1e9, "TB/s",
                            bytes_t / ms / 1e9 / copy_tbs});
      for (int axis : {1, 0}) {
        const std::int64_t cols = c.dtype == DType::float16 ? 2 * side : side / 2;
        ArrayRef view = ArrayRef::contiguous(x.ref().data, c.dtype, {side, cols});
        auto reduced = DeviceArray::empty(device, c.dtype, {axis == 1 ? side : cols});
        ms = time_ms(device, repeat, [&] { sum_sq({view}, std::vector<int>{axis}, false, {reduced}); });
        const double bytes_v = side * cols * c.size;
        typed_rows.push_back({std::string("reduction ") + c.name + (axis == 1 ? " axis=1 (inner)" : " axis=0 (outer)"),
                              bytes_v / ms / 1e9, "TB/s", bytes_v / ms / 1e9 / copy_tbs});
        if (c.dtype == DType::float16) {
          ms = time_ms(device, repeat, [&] { sum_sq_native({view}, std::vector<int>{axis}, false, {reduced}); });
          typed_rows.push_back({std::string("reduction float16 native half (opt-in)") +
                                    (axis == 1 ? " axis=1 (inner)" : " axis=0 (outer)"),
                                bytes_v / ms / 1e9, "TB/s", bytes_v / ms / 1e9 / copy_tbs});
        }
      }
      if (c.dtype == DType::float16) {
        ms = time_ms(device, repeat, [&] { saxpy_native({2.0, xt, yt}, {zt}); });
        typed_rows.push_back({"elementwise saxpy float16 native half (opt-in) (3 arrays)", 3 * bytes_t / ms / 1e9, "TB/s",
                              3 * bytes_t / ms / 1e9 / copy_tbs});
        ms = time_ms(device, repeat, [&] { sum_sq_native({xt}, std::nullopt, false, {out_t}); });
        typed_rows.push_back({"reduction sum of squares float16 native half (opt-in) (read)", bytes_t / ms / 1e9, "TB/s",
                              bytes_t / ms / 1e9 / copy_tbs});
      }
    }

    std::vector<Row> rows = {
        {"device copy (read+write)", copy_tbs, "TB/s", 1.0},
        {"raw NVRTC float4 saxpy (3 arrays)", raw4_tbs, "TB/s", raw4_tbs / copy_tbs},
        {"elementwise saxpy float32 (3 arrays)", saxpy_tbs, "TB/s", saxpy_tbs / copy_tbs},
        {"reduction sum of squares float32 (read)", reduce_tbs, "TB/s", reduce_tbs / copy_tbs},
    };
    for (std::size_t k = 0; k < layout_cases.size(); ++k) {
      rows.push_back({layout_cases[k].label, layout_tbs[k], "TB/s", layout_tbs[k] / copy_tbs});
    }
    for (std::size_t k = 0; k < shape_cases.size(); ++k) {
      rows.push_back({shape_cases[k].label, shape_tbs[k], "TB/s", shape_tbs[k] / copy_tbs});
    }
    rows.insert(rows.end(), typed_rows.begin(), typed_rows.end());
    rows.push_back({"elementwise call, host time per call", kernc_us, "us", kernc_us / raw_us});
    rows.push_back({"elementwise launch_into of a kept plan, per call", plan_us, "us", plan_us / raw_us});
    rows.push_back({"elementwise launch_into of a kept plan, raw-address ArrayRefs, per call",
                    raw_address_plan_cost.steady_us, "us", raw_address_plan_cost.steady_us / raw_us});
    rows.push_back({"kept plan through launch() (returns outputs), per call", plan_returning_cost.steady_us, "us",
                    plan_returning_cost.steady_us / raw_us});
    rows.push_back({"RawKernel call, host time per call", raw_kernel_us, "us", raw_kernel_us / raw_us});
    rows.push_back({"RawKernel kept call (launch_into), per call", raw_plan_cost.steady_us, "us",
                    raw_plan_cost.steady_us / raw_us});
    rows.push_back({"reduction call (32 x 32, axis 1), host time per call", reduction_cost.steady_us, "us",
                    reduction_cost.steady_us / raw_us});
    rows.push_back({"reduction launch_into of a kept plan, per call", reduction_plan_cost.steady_us, "us",
                    reduction_plan_cost.steady_us / raw_us});
    rows.push_back({"raw cuLaunchKernel per call (same driver)", raw_us, "us", 1.0});
    rows.push_back({"elementwise call, host cost of a burst of 200", kernc_cost.burst_us, "us",
                    kernc_cost.burst_us / raw_cost.burst_us});
    rows.push_back({"kept plan, host cost of a burst of 200", plan_cost.burst_us, "us",
                    plan_cost.burst_us / raw_cost.burst_us});
    rows.push_back({"RawKernel call, host cost of a burst of 200", raw_kernel_cost.burst_us, "us",
                    raw_kernel_cost.burst_us / raw_cost.burst_us});
    rows.push_back({"raw cuLaunchKernel, host cost of a burst of 200", raw_cost.burst_us, "us", 1.0});
    rows.push_back({"compile of generated saxpy (NVRTC only)", generated_compile_ms, "ms",
                    generated_compile_ms / raw_compile_ms});
    rows.push_back({"compile of raw saxpy (NVRTC only)", raw_compile_ms, "ms", 1.0});
    rows.push_back({"compile of generated saxpy, kernc / bare NVRTC", generated_compile_ms, "ms",
                    generated_compile_ms / bare_compile_ms});
    rows.push_back({"compile of generated saxpy, bare NVRTC", bare_compile_ms, "ms", 1.0});
    rows.push_back({"compile of a reduction, kernc / bare NVRTC", reduction_compile_ms, "ms",
                    reduction_compile_ms / bare_reduction_compile_ms});
    rows.push_back({"compile of a reduction, bare NVRTC", bare_reduction_compile_ms, "ms", 1.0});
    rows.push_back({"cold first call (compile+store+load+launch)", cold_first_ms, "ms", 0});
    rows.push_back({"cold first call of a reduction", cold_reduction_ms, "ms", 0});
    rows.push_back({"warm-disk first call, fresh process (median of 7)", first_calls.fresh.total_ms, "ms", 0});
    rows.push_back({"warm-disk first call of a second kernel in its process", first_calls.warmed.total_ms, "ms", 0});
    rows.push_back({"warm-disk phase: variant text (fresh process)", first_calls.phases.variant_ms, "ms", 0});
    rows.push_back({"warm-disk phase: Engine::load by the variant index, driver's first load included (fresh process)",
                    first_calls.phases.load_ms, "ms", 0});
    rows.push_back({"warm-disk phase: the call after the load (fresh process)", first_calls.phases.call_ms, "ms", 0});
    rows.push_back({"warm-disk: the driver's first module load alone (fresh process)", first_calls.driver.driver_ms, "ms", 0});
    if (first_calls.second_gpu_measured) {
      // Ratio: to the same with a module loaded per GPU (KERNC_CUDA_LOAD_ONCE=0).
      rows.push_back({"first call on GPU 1 after GPU 0 (loaded once, fresh process)", first_calls.second_gpu.total_ms,
                      "ms", first_calls.second_gpu.total_ms / first_calls.second_gpu_per_context.total_ms});
      rows.push_back({"first call on GPU 1 after GPU 0, a module per GPU (KERNC_CUDA_LOAD_ONCE=0)",
                      first_calls.second_gpu_per_context.total_ms, "ms", 1.0});
    } else {
      std::printf("first call on GPU 1 after GPU 0: skipped, one GPU visible (run on a machine with two)\n");
    }
    rows.push_back({"warm-disk first call via a new Engine, this process, median of 9", warm_engine_median_ms, "ms", 0});
    rows.push_back({"warm-disk first call via the first new Engine", warm_engine_first_ms, "ms", 0});
    rows.push_back({"warm-disk phase: Engine::load (read, checks, module load)", warm_load_ms, "ms", 0});
    rows.push_back({"warm-disk phase: module load + function, driver only", driver_load_ms, "ms", 0});
    rows.push_back({"warm-disk phase: its first launch + sync, driver only", first_launch_ms, "ms", 0});
    rows.push_back({"warm-disk phase: a second launch + sync, driver only", second_launch_ms, "ms", 0});
    print_rows(rows);
    if (!json_path.empty()) write_json(json_path, rows);
    return 0;
  } catch (const std::exception& error) {
    std::printf("kernc_bench: %s\n", error.what());
    return 1;
  }
}
