#include "first_call.hpp"

#include "median.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "kernc/engine.hpp"
#include "kernc/pipeline.hpp"

using namespace kernc;

namespace bench {

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The last two are gpu1 children, the second with a module per GPU.
const char* const kModes[] = {"fresh", "warmed", "phases", "driver", "gpu1", "gpu1"};
const char* const kModePrefix[] = {"", "", "", "", "", "KERNC_CUDA_LOAD_ONCE=0 "};

// The shell word for `text`, which the bench makes from paths and digits only.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

ElementwiseKernel first_call_saxpy(const std::string& unique) {
  return ElementwiseKernel("float32 a, float32 x, float32 y", "float32 z", "z = a * x + y /*" + unique + "*/",
                           "saxpy");
}

ElementwiseKernel first_call_other(const std::string& unique) {
  return ElementwiseKernel("float32 x", "float32 z", "z = x + 1 /*" + unique + "*/", "plus_one");
}

std::string first_call_problem(const Device& device, const DeviceArray& z) {
  // x is filled with the bytes 0x3f (0.7470... as float32), so z = 2x + x = 3x.
  std::vector<float> host(static_cast<std::size_t>(z.size()));
  device.copy_to_host(host.data(), z.ref().data, host.size() * sizeof(float));
  float x = 0;
  const unsigned bits = 0x3f3f3f3fu;
  std::memcpy(&x, &bits, sizeof x);
  for (float v : host) {
    if (v != 3 * x) return "saxpy gave " + std::to_string(v) + ", expected " + std::to_string(3 * x);
  }
  return "";
}

FirstCallResults measure_first_calls(const std::string& self, const std::string& cache_dir, const std::string& unique,
                                     int children, bool two_gpus) {
  FirstCallResults results;
  results.children = children;
  results.second_gpu_measured = two_gpus;
  for (int mode = 0; mode < (two_gpus ? 6 : 4); ++mode) {
    std::vector<double> total, variant, load, call, driver;
    for (int child = 0; child < children; ++child) {
      const std::string command = std::string(kModePrefix[mode]) + quoted(self) + " --first-call-child " + kModes[mode] +
                                  " " + quoted(cache_dir) + " " + quoted(unique) + " 2>&1";
      FILE* pipe = ::popen(command.c_str(), "r");
      if (!pipe) throw std::runtime_error("cannot start " + command);
      std::string output;
      char buffer[512];
      while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
      const int status = ::pclose(pipe);
      FirstCallSample s;
      const char* line = std::strstr(output.c_str(), "first-call ");
      if (status != 0 || !line ||
          std::sscanf(line, "first-call %lf %lf %lf %lf %lf", &s.total_ms, &s.variant_ms, &s.load_ms, &s.call_ms,
                      &s.driver_ms) != 5) {
        throw std::runtime_error(std::string("the ") + kModes[mode] + " first-call child failed: " + output);
      }
      total.push_back(s.total_ms);
      variant.push_back(s.variant_ms);
      load.push_back(s.load_ms);
      call.push_back(s.call_ms);
      driver.push_back(s.driver_ms);
    }
    FirstCallSample& m = mode == 0   ? results.fresh
                         : mode == 1 ? results.warmed
                         : mode == 2 ? results.phases
                         : mode == 3 ? results.driver
                         : mode == 4 ? results.second_gpu
                                     : results.second_gpu_per_context;
    m = {median(total), median(variant), median(load), median(call), median(driver)};
  }
  return results;
}

int first_call_child(int argc, char** argv) {
  if (argc != 3) {
    std::printf("usage: kernc_bench --first-call-child fresh|warmed|phases|driver CACHE_DIR UNIQUE\n");
    return 1;
  }
  const std::string mode = argv[0];
  try {
    Config config = Config::from_environment();
    config.cache_dir.set(argv[1], "kernc_bench");
    config.compile_policy.set("never", "kernc_bench");  // a compile here would be a broken sample
    Engine engine(config);
    CallOptions options;
    options.engine = &engine;
    // What a host program has done before its first kernel: the GPU opened, arrays made.
    Device device = engine.device();
    auto x = DeviceArray::empty(device, DType::float32, {1024});
    auto z = DeviceArray::empty(device, DType::float32, {1024});
    device.fill_bytes(x.ref().data, 0x3f, 1024 * 4);
    device.synchronize();
    ElementwiseKernel saxpy = first_call_saxpy(argv[2]);
    FirstCallSample s;
    if (mode == "warmed") {
      ElementwiseKernel other = first_call_other(argv[2]);
      other({x}, {z}, options);
      device.synchronize();
    }
    // Parsed in the two children that need it only: it would warm code the fresh call runs.
    auto saxpy_types = [] { return parse_call_signature("scalar float32, float32, float32 -> float32"); };
    if (mode == "phases") {
      const CallTypes types = saxpy_types();
      auto start = std::chrono::steady_clock::now();
      const std::string variant = kernc::variant(saxpy, types, Layout{});
      s.variant_ms = ms_since(start);
      int generated = 0;
      start = std::chrono::steady_clock::now();
      engine.load(variant, [&] { ++generated; return kernc::program(saxpy, types, Layout{}); }, device);
      s.load_ms = ms_since(start);
      if (generated) throw std::runtime_error("the variant index did not answer: the program was generated");
      start = std::chrono::steady_clock::now();
      saxpy({2.0f, x, x}, {z}, options);
      device.synchronize();
      s.call_ms = ms_since(start);
      s.total_ms = s.variant_ms + s.load_ms + s.call_ms;
    } else if (mode == "driver") {
      const CallTypes types = saxpy_types();
      const Program program = kernc::program(saxpy, types, Layout{});
      const auto found = engine.cache().find(program, {device.target()}, nullptr);
      if (!found) throw std::runtime_error("the saxpy is not in the cache directory");
      const auto start = std::chrono::steady_clock::now();
      const Module module = device.load(found->program->binary);
      s.driver_ms = ms_since(start);
      saxpy({2.0f, x, x}, {z}, options);  // checked below like the others
      device.synchronize();
    } else if (mode == "gpu1") {
      // Arrays on GPU 1 made first, as a host program does; then GPU 0's first call,
      // which loads the binary, untimed; then GPU 1's.
      Device second = engine.device(1);
      auto x1 = DeviceArray::empty(second, DType::float32, {1024});
      auto z1 = DeviceArray::empty(second, DType::float32, {1024});
      second.fill_bytes(x1.ref().data, 0x3f, 1024 * 4);
      second.synchronize();
      saxpy({2.0f, x, x}, {z}, options);
      device.synchronize();
      CallOptions on_second = options;
      on_second.device = 1;
      const auto start = std::chrono::steady_clock::now();
      saxpy({2.0f, x1, x1}, {z1}, on_second);
      second.synchronize();
      s.total_ms = ms_since(start);
      // GPU 1's answer, checked here (the common check below reads GPU 0's).
      const auto got = z1.to_host_vector<float>();
      const auto in = x1.to_host_vector<float>();
      for (std::size_t k = 0; k < got.size(); ++k) {
        if (got[k] != 2.0f * in[k] + in[k]) throw std::runtime_error("GPU 1's saxpy gave a wrong result");
      }
    } else if (mode == "fresh" || mode == "warmed") {
      const auto start = std::chrono::steady_clock::now();
      saxpy({2.0f, x, x}, {z}, options);
      device.synchronize();
      s.total_ms = ms_since(start);
    } else {
      std::printf("unknown first-call mode %s\n", mode.c_str());
      return 1;
    }
    if (const std::string problem = first_call_problem(device, z); !problem.empty()) {
      std::printf("first-call child: %s\n", problem.c_str());
      return 1;
    }
    std::printf("first-call %.6f %.6f %.6f %.6f %.6f\n", s.total_ms, s.variant_ms, s.load_ms, s.call_ms,
                s.driver_ms);
    return 0;
  } catch (const std::exception& error) {
    std::printf("first-call child (%s): %s\n", mode.c_str(), error.what());
    return 1;
  }
}

}  // namespace bench
