// RawModule from binary files on a GPU (CuPy's RawModule(path=...), issue 36): a cubin for
// the device's architecture and a PTX built here by NVRTC through kernc's compiler, and a
// fatbin built by nvcc when the toolkit has it, each loaded with RawModule::from_file(s),
// launched on fresh random data and compared with a host reference; __constant__ and
// __device__ globals through get_global; the ladder's choice seen in the function's
// binary and PTX versions. tests/unit/test_raw_module_file.cpp checks the rest without a GPU.

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "gpu_helpers.hpp"
#include "kernc/compiler.hpp"

namespace kernc::gpu_test {
namespace {

const char* const kAffineSource = R"(
__constant__ float affine_gain[4];
__device__ float affine_offset;

extern "C" __global__ void affine(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] * affine_gain[i % 4] + affine_offset;
}
)";

// Writes `bytes` to `name` in `dir`, mode 0644: a file RawModule trusts whatever the umask.
std::string put(const TempDir& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir.path() + "/" + name;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    REQUIRE_MESSAGE(out.good(), "cannot write " << path);
  }
  REQUIRE(::chmod(path.c_str(), 0644) == 0);
  return path;
}

// kAffineSource compiled by NVRTC (the engine's compiler) for `target`.
std::string compile_affine(const Target& target) {
  Program program;
  program.name = "affine.cu";
  program.source = kAffineSource;
  return Engine::global().compiler(Backend::cuda).compile(program, target).binary;
}

// The nvcc of the toolkit, or empty.
std::string find_nvcc() {
  for (const char* candidate : {"/usr/local/cuda/bin/nvcc"}) {
    if (::access(candidate, X_OK) == 0) return candidate;
  }
  if (const char* home = std::getenv("CUDA_HOME")) {
    std::string candidate = std::string(home) + "/bin/nvcc";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

LaunchConfig module_config_for(std::int64_t n, unsigned block = 256) {
  LaunchConfig config;
  config.block[0] = block;
  config.grid[0] = static_cast<unsigned>((n + block - 1) / block);
  return config;
}

// Sets the module's globals, runs affine at every size on fresh data and checks it.
void check_affine(const RawModule& module, Random& random, const std::string& what) {
  Device dev = device();
  const std::vector<float> gain = random.uniform<float>(4, 0.5, 2.0);
  const float offset = random.uniform<float>(1)[0];
  auto [gain_address, gain_bytes] = module.get_global("affine_gain");
  REQUIRE(gain_bytes == 4 * sizeof(float));
  dev.copy_to_device(gain_address, gain.data(), gain_bytes);
  auto [offset_address, offset_bytes] = module.get_global("affine_offset");
  REQUIRE(offset_bytes == sizeof(float));
  dev.copy_to_device(offset_address, &offset, sizeof(float));
  // The globals read back as written (the module's own memory, not a copy).
  std::vector<unsigned char> back = download_bytes(gain_address, gain_bytes);
  CHECK(std::memcmp(back.data(), gain.data(), gain_bytes) == 0);

  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    const auto x = random.uniform<float>(n);
    const float a = random.uniform<float>(1, -4.0, 4.0)[0];
    const auto dx = upload(DType::float32, {n}, x);
    auto y = poisoned(DType::float32, {n});
    module.launch("affine", module_config_for(n), {y, dx, a, static_cast<int>(n)});
    dev.synchronize();
    std::vector<double> want(x.size()), scale(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      double term = static_cast<double>(a) * x[i] * gain[i % 4];
      want[i] = term + offset;
      scale[i] = std::fabs(term) + std::fabs(offset);  // the terms' magnitude (FMA may fuse)
    }
    std::vector<double> got;
    for (float v : download<float>(y)) got.push_back(v);
    expect_close(got, want, 4e-7, what + " affine", scale);
  }
}

}  // namespace

TEST_CASE("RawModule::from_file loads a cubin for the device's architecture, launches it and reads its globals") {
  KERNC_GPU_ONLY("cubin files: a binary for the GPU's architecture, compiled by NVRTC");
  KERNC_GPU_RANDOM(random, "raw module file cubin");
  TempDir dir;
  const Target target = device().target();
  const RawModule module = RawModule::from_file(put(dir, "affine.cubin", compile_affine(target)), "affine_cubin");
  REQUIRE(module.binaries().size() == 1);
  CHECK(module.binaries()[0].kind == ModuleFileKind::cubin);
  CHECK(module.binaries()[0].target->sm_number() == target.sm_number());
  check_affine(module, random, "cubin");
  CHECK(module.get_function("affine").attributes().binary_version == device().compute_capability());
  // No declaration: the driver's parameter sizes check what is passed.
  const auto x = upload(DType::float32, {4}, random.uniform<float>(4));
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "takes 4 argument(s), 2 given",
                    module.launch("affine", module_config_for(4), {x, x}));
  KERNC_CHECK_ERROR(ErrorCode::invalid_argument, "parameter 2 is 4 bytes but the float64 scalar given is 8",
                    module.launch("affine", module_config_for(4), {x, x, 2.0, 4}));
  KERNC_CHECK_ERROR(ErrorCode::not_found, "", module.get_function("no_such_kernel"));
}

TEST_CASE("RawModule::from_file loads PTX, JIT-compiled by the driver") {
  KERNC_GPU_ONLY("PTX files, JIT-compiled by the CUDA driver");
  KERNC_GPU_RANDOM(random, "raw module file ptx");
  TempDir dir;
  const int cc = device().compute_capability();
  const int ptx_arch = cc >= 80 ? 80 : 75;  // older than the device: the ladder's PTX rung
  const RawModule module = RawModule::from_file(
      put(dir, "affine.ptx", compile_affine(Target::parse("compute_" + std::to_string(ptx_arch)))), "affine_ptx");
  CHECK(module.binaries()[0].kind == ModuleFileKind::ptx);
  check_affine(module, random, "PTX");
  CHECK(module.get_function("affine").attributes().ptx_version == ptx_arch);
}

TEST_CASE("RawModule::from_files picks the device's cubin over PTX, and PTX when no cubin fits") {
  KERNC_GPU_ONLY("cubin and PTX files, chosen by the GPU's compute capability");
  KERNC_GPU_RANDOM(random, "raw module file ladder");
  TempDir dir;
  const Target target = device().target();
  const int cc = device().compute_capability();
  const std::string ptx = put(dir, "affine.ptx", compile_affine(Target::parse("compute_75")));
  const std::string cubin = put(dir, "affine.cubin", compile_affine(target));
  // A cubin of another major: never runs here.
  const std::string other = put(dir, "other.cubin", compile_affine(Target::parse(cc / 10 == 8 ? "sm_90" : "sm_80")));

  const RawModule both = RawModule::from_files({{ptx, std::nullopt}, {cubin, std::nullopt}, {other, std::nullopt}});
  REQUIRE(both.binaries_for(target).size() == 2);
  CHECK(both.binaries_for(target)[0].path == cubin);
  check_affine(both, random, "cubin of three files");
  CHECK(both.get_function("affine").attributes().binary_version == cc);

  const RawModule ptx_only = RawModule::from_files({{other, std::nullopt}, {ptx, std::nullopt}});
  check_affine(ptx_only, random, "PTX beside a cubin of another major");
  CHECK(ptx_only.get_function("affine").attributes().ptx_version == 75);

  const RawModule none = RawModule::from_files({{other, std::nullopt}}, "wrong_major");
  KERNC_CHECK_ERROR(ErrorCode::unsupported_target, "RawModule wrong_major: no binary runs on " + target.str(),
                    none.get_function("affine"));
}

TEST_CASE("RawModule::from_file loads a fatbin built by nvcc; the driver picks its image") {
  KERNC_GPU_ONLY("fatbin files built by nvcc");
  KERNC_GPU_RANDOM(random, "raw module file fatbin");
  const std::string nvcc = find_nvcc();
  if (nvcc.empty()) {
    MESSAGE("no nvcc (/usr/local/cuda/bin/nvcc or $CUDA_HOME/bin/nvcc): the fatbin case is skipped");
    return;
  }
  TempDir dir;
  const int cc = device().compute_capability();
  const std::string source = put(dir, "affine.cu", kAffineSource);
  const std::string fatbin = dir.path() + "/affine.fatbin";
  // A cubin for this device and PTX of an older architecture, in one file.
  const std::string command = nvcc + " -fatbin -gencode arch=compute_" + std::to_string(cc) + ",code=sm_" +
                              std::to_string(cc) + " -gencode arch=compute_75,code=compute_75 -o " + fatbin + " " +
                              source + " 2>&1";
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0, command);
  REQUIRE(::chmod(fatbin.c_str(), 0644) == 0);
  const RawModule module = RawModule::from_file(fatbin, "affine_fatbin");
  REQUIRE(module.binaries().size() == 1);
  CHECK(module.binaries()[0].kind == ModuleFileKind::fatbin);
  CHECK_FALSE(module.binaries()[0].target);
  check_affine(module, random, "fatbin");
  CHECK(module.get_function("affine").attributes().binary_version == cc);  // the driver took the cubin
}

}  // namespace kernc::gpu_test
