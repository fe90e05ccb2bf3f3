// RawModule from binary files (CuPy's RawModule(path=...), issue 36), without a GPU: real
// cubins and PTX built here by NVRTC through kernc's compiler (a fatbin by nvcc when the
// toolkit has it), the trust rule of cache entries, kind and target detection, the
// architecture ladder's choice, spec files, and the load on a fake driver (which binary
// reaches the driver, and the next one when it refuses). tests/gpu/test_gpu_raw_module_file.cpp
// launches such modules on a real GPU.

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fake_driver.hpp"
#include "kernc/engine.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/spec_file.hpp"
#include "kernels/raw_module_file.hpp"
#include "platform/files.hpp"
#include "runtime/driver.hpp"
#include "temp_dir.hpp"
#include "test_compilers.hpp"
#include "thrown.hpp"

using kernc::Error;
using kernc::test::thrown_by;
using kernc::ErrorCode;
using kernc::ModuleFileKind;
using kernc::RawModule;
using kernc::RawModuleBinary;
using kernc::RawModuleFile;
using kernc::Target;
using kernc::test::contains;
using kernc::test::TempDir;

namespace {

const char* const kSource = R"(
extern "C" __global__ void scale(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
__device__ float gain = 2.0f;
)";

// The binary NVRTC makes of kSource for `target`, compiled once per process.
const std::string& built(const std::string& target) {
  static std::map<std::string, std::string> binaries;
  auto found = binaries.find(target);
  if (found != binaries.end()) return found->second;
  kernc::Program program;
  program.name = "scale.cu";
  program.source = kSource;
  return binaries[target] = kernc::test::nvrtc().compile(program, Target::parse(target)).binary;
}

// Writes `bytes` to `name` in `dir` with mode 0644 (trusted: owned by us, not group/other-writable).
std::string put(const TempDir& dir, const std::string& name, const std::string& bytes) {
  std::string path = dir.write(name, bytes);
  REQUIRE(::chmod(path.c_str(), 0644) == 0);
  return path;
}

const char* const kNvcc = "/usr/local/cuda/bin/nvcc";

// A fatbin of kSource with an sm_80 cubin and compute_90 PTX, made by nvcc; empty without it.
std::string nvcc_fatbin(const TempDir& dir) {
  if (::access(kNvcc, X_OK) != 0) return {};
  std::string source = put(dir, "fat.cu", kSource), out = dir / "fat.fatbin";
  std::string command = std::string(kNvcc) + " -fatbin -gencode arch=compute_80,code=sm_80 -gencode "
                        "arch=compute_90,code=compute_90 -o " + out + " " + source + " 2>&1";
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0, command);
  REQUIRE(::chmod(out.c_str(), 0644) == 0);
  return out;
}

std::vector<std::string> targets_of(const std::vector<RawModuleBinary>& binaries) {
  std::vector<std::string> names;
  for (const auto& binary : binaries) names.push_back(binary.target ? binary.target->str() : "fatbin");
  return names;
}

// A copy of `cubin` whose ELF header says ABI version `abi` and e_flags `flags`.
std::string with_header(std::string cubin, int abi, std::uint32_t flags) {
  cubin[8] = static_cast<char>(abi);
  for (int k = 0; k < 4; ++k) cubin[48 + static_cast<std::size_t>(k)] = static_cast<char>(flags >> (8 * k) & 0xff);
  return cubin;
}

}  // namespace

TEST_CASE("kernels::module_file_kind tells cubin, PTX and fatbin by their first bytes") {
  using kernc::detail::module_file_kind;
  CHECK(module_file_kind(built("sm_80")) == ModuleFileKind::cubin);
  CHECK(module_file_kind(built("compute_80")) == ModuleFileKind::ptx);
  CHECK(module_file_kind("  // a comment\n/* a block\n comment */\n.version 8.0\n.target sm_80\n") == ModuleFileKind::ptx);
  CHECK(module_file_kind(std::string("\x50\xed\x55\xba\x01\x00\x10\x00", 8)) == ModuleFileKind::fatbin);
  CHECK_FALSE(module_file_kind("extern \"C\" __global__ void k() {}"));  // CUDA source is not PTX
  CHECK_FALSE(module_file_kind(".versions 8.0"));
  CHECK_FALSE(module_file_kind("/* never closed .version 8.0"));
  CHECK_FALSE(module_file_kind(std::string("\x00\x01\x02\x03", 4)));
  CHECK_FALSE(module_file_kind(""));
  TempDir dir;
  const std::string fatbin = nvcc_fatbin(dir);
  if (fatbin.empty()) {
    MESSAGE("no nvcc at " << kNvcc << ": the fatbin nvcc makes is not checked");
  } else {
    CHECK(module_file_kind(kernc::platform::read_file(fatbin)) == ModuleFileKind::fatbin);
  }
}

TEST_CASE("kernels::cubin_target reads the architecture from ELF headers of both ABI layouts") {
  using kernc::detail::cubin_target;
  // NVRTC's own cubins (ABI version 8 from CUDA 13 on, 7 before).
  for (const char* target : {"sm_75", "sm_80", "sm_86", "sm_90"}) {
    CAPTURE(target);
    CHECK(cubin_target(built(target), "x").str() == target);
  }
  const std::string& cubin = built("sm_80");
  // The old layout: the SM number in the low byte, "a" as 0x800.
  CHECK(cubin_target(with_header(cubin, 7, 0x00140546), "x").str() == "sm_70");
  CHECK(cubin_target(with_header(cubin, 7, 0x005a0d5a), "x").str() == "sm_90a");
  // The new layout: bits 8-15, "a" as 0x8 (nvcc 13 writes 0x06007802 for sm_120).
  CHECK(cubin_target(with_header(cubin, 8, 0x06007802), "x").str() == "sm_120");
  CHECK(cubin_target(with_header(cubin, 8, 0x0600640a), "x").str() == "sm_100a");
  auto unreadable = thrown_by([&] { cubin_target(with_header(cubin, 8, 0x06000004), "f.cubin"); });
  REQUIRE(unreadable);
  CHECK(unreadable->code() == ErrorCode::invalid_argument);
  CHECK_MESSAGE(contains(unreadable->what(), "f.cubin: a CUDA cubin whose architecture cannot be read"), unreadable->what());
  std::string host = cubin;
  host[18] = 62;  // EM_X86_64
  host[19] = 0;
  auto not_cuda = thrown_by([&] { cubin_target(host, "f.o"); });
  REQUIRE(not_cuda);
  CHECK_MESSAGE(contains(not_cuda->what(), "f.o: an ELF file for machine 62, not a CUDA cubin"), not_cuda->what());
  auto short_file = thrown_by([&] { cubin_target(cubin.substr(0, 40), "f"); });
  REQUIRE(short_file);
  CHECK_MESSAGE(contains(short_file->what(), "shorter than an ELF64 header"), short_file->what());
}

TEST_CASE("kernels::ptx_target reads the .target directive") {
  using kernc::detail::ptx_target;
  CHECK(ptx_target(built("compute_80"), "x").str() == "compute_80");
  CHECK(ptx_target(built("compute_90"), "x").str() == "compute_90");
  CHECK(ptx_target(".version 8.0\n  .target sm_90a, texmode_independent\n.address_size 64\n", "x").str() == "compute_90a");
  auto none = thrown_by([] { ptx_target(".version 8.0\n.address_size 64\n", "k.ptx"); });
  REQUIRE(none);
  CHECK(none->code() == ErrorCode::invalid_argument);
  CHECK_MESSAGE(contains(none->what(), "k.ptx: PTX without a readable \".target sm_XY\" directive"), none->what());
  auto odd = thrown_by([] { ptx_target(".version 8.0\n.target sm_x\n", "k.ptx"); });
  REQUIRE(odd);
  CHECK_MESSAGE(contains(odd->what(), "PTX whose .target \"sm_x\" is not a CUDA architecture"), odd->what());
}

TEST_CASE("RawModule::from_files reads each file's kind, target and size") {
  TempDir dir;
  const std::string a = put(dir, "k80.cubin", built("sm_80")), b = put(dir, "k90.cubin", built("sm_90")),
                    c = put(dir, "k.ptx", built("compute_80"));
  const RawModule module = RawModule::from_files({{a, std::nullopt}, {b, std::nullopt}, {c, std::nullopt}}, "scaler");
  CHECK(module.name() == "scaler");
  CHECK(module.is_binary());
  REQUIRE(module.binaries().size() == 3);
  CHECK(module.binaries()[0].path == a);
  CHECK(module.binaries()[0].kind == ModuleFileKind::cubin);
  CHECK(module.binaries()[0].bytes == built("sm_80").size());
  CHECK(module.binaries()[2].kind == ModuleFileKind::ptx);
  CHECK(targets_of(module.binaries()) == std::vector<std::string>{"sm_80", "sm_90", "compute_80"});
  CHECK(module.name_expressions().empty());
  // No source: nothing to compile, no declarations; the driver's sizes check launches.
  auto program = thrown_by([&] { kernc::program(module); });
  REQUIRE(program);
  CHECK(program->code() == ErrorCode::invalid_argument);
  CHECK_MESSAGE(contains(program->what(), "RawModule scaler is loaded from binary files (" + a), program->what());
  CHECK_FALSE(module.parameters("scale"));
  CHECK_NOTHROW(module.check_arguments("scale", {1.0f}));
  // A module of source is not one of binaries.
  const RawModule source(kSource);
  CHECK_FALSE(source.is_binary());
  CHECK(source.binaries().empty());
  CHECK(source.binaries_for(Target::parse("sm_90")).empty());
  // One file, its target read from it; an explicit target may add the suffix a cubin lacks.
  CHECK(targets_of(RawModule::from_file(b).binaries()) == std::vector<std::string>{"sm_90"});
  CHECK(RawModule::from_file(b).name() == "module");
  CHECK(targets_of(RawModule::from_files({{b, Target::parse("sm_90a")}}).binaries()) == std::vector<std::string>{"sm_90a"});
}

TEST_CASE("RawModule::from_files refuses files it must not trust, naming the path and why") {
  TempDir dir;
  const std::string good = put(dir, "k.cubin", built("sm_80"));
  auto refusal = [](const std::string& path) {
    auto error = thrown_by([&] { RawModule::from_file(path, "m"); });
    REQUIRE(error);
    CHECK(error->code() == ErrorCode::io);
    CHECK_MESSAGE(contains(error->what(), "RawModule m: cannot load " + path + ": "), error->what());
    return std::string(error->what());
  };
  SUBCASE("group-writable") {
    REQUIRE(::chmod(good.c_str(), 0664) == 0);
    CHECK(contains(refusal(good), "not trusted: it is writable by its group (mode 664)"));
  }
  SUBCASE("writable by others") {
    REQUIRE(::chmod(good.c_str(), 0606) == 0);
    CHECK(contains(refusal(good), "not trusted: it is writable by others (mode 606)"));
  }
  SUBCASE("a symbolic link, even to a trusted file") {
    const std::string link = dir / "link.cubin";
    REQUIRE(::symlink(good.c_str(), link.c_str()) == 0);
    CHECK(contains(refusal(link), "not trusted: it is a symbolic link"));
  }
  SUBCASE("a directory") {
    CHECK(contains(refusal(dir.path()), "not trusted: a directory stands in its place"));
  }
  SUBCASE("owned by another user") {
    if (::geteuid() != 0) {
      MESSAGE("not root: a file owned by another user cannot be made here; ownership is not checked");
      return;
    }
    REQUIRE(::chown(good.c_str(), 12345, 12345) == 0);
    CHECK(contains(refusal(good), "not trusted: it is owned by uid 12345, not by this user (uid 0) or root"));
  }
  SUBCASE("missing") {
    CHECK(contains(refusal(dir / "absent.cubin"), "No such file or directory"));
  }
  SUBCASE("unreadable") {
    if (::geteuid() == 0) {
      MESSAGE("root reads files whatever their mode: an unreadable file cannot be made here");
      return;
    }
    REQUIRE(::chmod(good.c_str(), 0200) == 0);
    CHECK(contains(refusal(good), "Permission denied"));
  }
}

TEST_CASE("RawModule::from_files refuses empty and unrecognised files and contradictions") {
  TempDir dir;
  const std::string cubin = put(dir, "k80.cubin", built("sm_80")), cubin90 = put(dir, "k90.cubin", built("sm_90")),
                    ptx = put(dir, "k.ptx", built("compute_80"));
  auto refused = [](std::vector<RawModuleFile> files, const std::string& expected) {
    auto error = thrown_by([&] { RawModule::from_files(files, "m"); });
    REQUIRE(error);
    CHECK(error->code() == ErrorCode::invalid_argument);
    CHECK_MESSAGE(contains(error->what(), expected), std::string(error->what()));
  };
  const std::string empty = put(dir, "empty.cubin", "");
  refused({{empty, std::nullopt}}, "RawModule m: " + empty + ": the file is empty");
  const std::string source = put(dir, "k.cu", kSource);
  refused({{source, std::nullopt}}, source + ": not a cubin (\\x7fELF), fatbin (magic 0xba55ed50) or PTX");
  refused({}, "RawModule m: no binary file given");
  refused({{cubin, Target::parse("sm_90")}}, "the file was built for sm_80 but the target given is sm_90");
  refused({{cubin, Target::parse("compute_80")}}, "the file is cubin but the target given, compute_80, is not a cubin target");
  refused({{ptx, Target::parse("sm_80")}}, "the file is PTX but the target given, sm_80, is not a PTX target");
  refused({{cubin, std::nullopt}, {cubin, std::nullopt}}, "two files for sm_80: " + cubin + " and " + cubin);
  CHECK_NOTHROW(RawModule::from_files({{cubin, std::nullopt}, {cubin90, std::nullopt}, {ptx, std::nullopt}}));
  auto bad_name = thrown_by([&] { RawModule::from_file(cubin, "not a name"); });
  REQUIRE(bad_name);
  CHECK(bad_name->code() == ErrorCode::invalid_argument);
  TempDir fat_dir;
  const std::string fatbin = nvcc_fatbin(fat_dir);
  if (fatbin.empty()) {
    MESSAGE("no nvcc at " << kNvcc << ": fatbins are not checked");
    return;
  }
  const RawModule fat = RawModule::from_file(fatbin);
  REQUIRE(fat.binaries().size() == 1);
  CHECK(fat.binaries()[0].kind == ModuleFileKind::fatbin);
  CHECK_FALSE(fat.binaries()[0].target);
  refused({{fatbin, Target::parse("sm_80")}}, "a fatbin holds images for several targets");
  refused({{cubin, std::nullopt}, {fatbin, std::nullopt}}, fatbin + " is a fatbin, which must be the only file");
}

TEST_CASE("RawModule::binaries_for climbs the architecture ladder") {
  TempDir dir;
  const RawModule module = RawModule::from_files({{put(dir, "k80.cubin", built("sm_80")), std::nullopt},
                                                  {put(dir, "k90.cubin", built("sm_90")), std::nullopt},
                                                  {put(dir, "k.ptx", built("compute_80")), std::nullopt}});
  auto choice = [&](const char* device) { return targets_of(module.binaries_for(Target::parse(device))); };
  using List = std::vector<std::string>;
  CHECK(choice("sm_90") == List{"sm_90", "compute_80"});  // exact cubin first, then PTX
  CHECK(choice("sm_80") == List{"sm_80", "compute_80"});
  CHECK(choice("sm_86") == List{"sm_80", "compute_80"});  // same major, lower minor
  CHECK(choice("sm_89") == List{"sm_80", "compute_80"});
  CHECK(choice("sm_100") == List{"compute_80"});          // no cubin of its major: the PTX
  CHECK(choice("sm_120") == List{"compute_80"});
  CHECK(choice("sm_75").empty());                         // older than everything given
  auto not_device = thrown_by([&] { module.binaries_for(Target::parse("compute_90")); });
  REQUIRE(not_device);
  CHECK(not_device->code() == ErrorCode::invalid_argument);

  // Newest PTX first, only PTX at or below the device; arch-specific targets only on their GPU.
  const RawModule ptx = RawModule::from_files({{put(dir, "p80.ptx", built("compute_80")), std::nullopt},
                                               {put(dir, "p90.ptx", built("compute_90")), std::nullopt},
                                               {put(dir, "p75.ptx", built("compute_75")), std::nullopt}});
  CHECK(targets_of(ptx.binaries_for(Target::parse("sm_90"))) == List{"compute_90", "compute_80", "compute_75"});
  CHECK(targets_of(ptx.binaries_for(Target::parse("sm_86"))) == List{"compute_80", "compute_75"});
  const RawModule special = RawModule::from_files({{put(dir, "a.cubin", built("sm_90")), Target::parse("sm_90a")}});
  CHECK(targets_of(special.binaries_for(Target::parse("sm_90"))) == List{"sm_90a"});
  CHECK(special.binaries_for(Target::parse("sm_100")).empty());

  // The same order the loader uses, on the internal descriptions.
  CHECK(kernc::detail::ladder_order(module.binaries(), Target::parse("sm_86")) == std::vector<std::size_t>{0, 2});
}

namespace {

// A CUDA GPU (kernc::test::FakeGpuDriver) of architecture `target`, 8 multiprocessors and no
// opt-in shared memory beyond 48 KiB: it records the images it is asked to load and refuses
// those in `refuse`, as a driver refuses a binary it cannot run; its module has the function
// "scale" and the global "gain".
class ModuleFakeDriver final : public kernc::test::FakeGpuDriver {
 public:
  explicit ModuleFakeDriver(const std::string& target) {
    props().target = target;
    props().compute_capability = Target::parse(target).sm_number();
    props().multiprocessors = 8;
    props().max_shared_per_block_optin = 48 * 1024;
  }

  std::vector<std::string> loaded;
  std::set<std::string> refuse;
  std::vector<std::size_t> sizes = {8, 8, 4, 4};  // scale(float*, const float*, float, int)
  int launches = 0;

  void* load_module(const std::string& image) override {
    if (refuse.count(image)) throw Error(ErrorCode::driver, "cuModuleLoadData failed: CUDA_ERROR_NO_BINARY_FOR_GPU");
    loaded.push_back(image);
    return FakeGpuDriver::load_module(image);
  }
  void* find_function(void* module, const std::string& name) override {
    return name == "scale" ? FakeGpuDriver::find_function(module, name) : nullptr;
  }
  bool find_global(void*, const std::string& name, std::uint64_t* address, std::size_t* bytes) override {
    if (name != "gain") return false;
    *address = 0x1000;
    *bytes = 4;
    return true;
  }
  std::vector<std::size_t> parameter_sizes(void*, std::optional<std::size_t>) override { return sizes; }
  void launch(void*, const kernc::LaunchConfig&, void**) override { ++launches; }
};

// The fake GPU registered as CUDA GPU `kOrdinal` while this lives, and an engine to reach it.
struct ModuleFakeGpu {
  static constexpr int kOrdinal = 4091;  // no real machine has this many (test_runtime_function uses 4093)
  ModuleFakeDriver* driver = nullptr;
  std::shared_ptr<kernc::detail::DeviceState> state;
  kernc::Engine engine{kernc::Config::from_environment([](const char* name) -> const char* {
    return std::string(name) == "KERNC_CACHE_DISABLE" ? "1" : nullptr;
  })};
  kernc::CallOptions call;

  explicit ModuleFakeGpu(const std::string& target) {
    auto fake = std::make_unique<ModuleFakeDriver>(target);
    driver = fake.get();
    state = kernc::detail::register_device(kernc::Backend::cuda, kOrdinal, std::move(fake));
    call.device = kOrdinal;
    call.engine = &engine;
  }
};

}  // namespace

TEST_CASE("RawModule of binary files loads the ladder's binary on a device, and the next when the driver refuses it") {
  TempDir dir;
  const RawModule module = RawModule::from_files({{put(dir, "k80.cubin", built("sm_80")), std::nullopt},
                                                  {put(dir, "k90.cubin", built("sm_90")), std::nullopt},
                                                  {put(dir, "k.ptx", built("compute_80")), std::nullopt}},
                                                 "scaler");
  SUBCASE("a cubin of the device's major") {
    ModuleFakeGpu gpu("sm_86");
    CHECK(module.get_function("scale", gpu.call).name() == "scale");
    REQUIRE(gpu.driver->loaded.size() == 1);
    CHECK(gpu.driver->loaded[0] == built("sm_80"));
    const auto [address, bytes] = module.get_global("gain", gpu.call);
    CHECK(address == 0x1000);
    CHECK(bytes == 4);
    CHECK(gpu.driver->loaded.size() == 1);  // loaded once per device
    // Arguments are checked against the driver's parameter sizes (there is no declaration).
    kernc::LaunchConfig config;
    const kernc::ArrayRef x = kernc::ArrayRef::contiguous(0x2000, kernc::DType::float32, {16});
    module.launch("scale", config, {x, x, 2.0f, 16}, gpu.call);
    CHECK(gpu.driver->launches == 1);
    auto count = thrown_by([&] { module.launch("scale", config, {x, x}, gpu.call); });
    REQUIRE(count);
    CHECK(count->code() == ErrorCode::invalid_argument);
    CHECK_MESSAGE(contains(count->what(), "kernel scale takes 4 argument(s), 2 given"), count->what());
    auto size = thrown_by([&] { module.launch("scale", config, {x, x, 2.0, 1}, gpu.call); });
    REQUIRE(size);
    CHECK_MESSAGE(contains(size->what(), "parameter 2 is 4 bytes but the float64 scalar given is 8"), size->what());
    CHECK(gpu.driver->launches == 1);
  }
  SUBCASE("the PTX when the driver refuses the cubin") {
    ModuleFakeGpu gpu("sm_86");
    gpu.driver->refuse = {built("sm_80")};
    CHECK_NOTHROW(module.get_function("scale", gpu.call));
    REQUIRE(gpu.driver->loaded.size() == 1);
    CHECK(gpu.driver->loaded[0] == built("compute_80"));
  }
  SUBCASE("an error naming what was given when the driver refuses every binary that fits") {
    ModuleFakeGpu gpu("sm_90");
    gpu.driver->refuse = {built("sm_90"), built("compute_80")};
    auto error = thrown_by([&] { module.get_function("scale", gpu.call); });
    REQUIRE(error);
    CHECK(error->code() == ErrorCode::unsupported_target);
    CHECK_MESSAGE(contains(error->what(), "RawModule scaler: no binary runs on sm_90 (device 4091): given sm_80 cubin "),
                  error->what());
    CHECK_MESSAGE(contains(error->what(), "the driver refused sm_90 cubin " + dir / "k90.cubin" +
                                              ": cuModuleLoadData failed: CUDA_ERROR_NO_BINARY_FOR_GPU"),
                  error->what());
    CHECK(gpu.driver->loaded.empty());
  }
  SUBCASE("an error naming what was given when no binary fits") {
    ModuleFakeGpu gpu("sm_75");
    auto error = thrown_by([&] { module.get_function("scale", gpu.call); });
    REQUIRE(error);
    CHECK(error->code() == ErrorCode::unsupported_target);
    CHECK_MESSAGE(contains(error->what(), "no binary runs on sm_75 (device 4091): given sm_80 cubin " + dir / "k80.cubin" +
                                              ", sm_90 cubin " + dir / "k90.cubin" + ", compute_80 PTX " +
                                              dir / "k.ptx" + "; sm_75 runs an sm_75 cubin"),
                  error->what());
    CHECK(gpu.driver->loaded.empty());
  }
}

TEST_CASE("spec::raw_module with \"path\" or \"paths\" loads binary files relative to the spec") {
  TempDir dir;
  put(dir, "bin/k80.cubin", built("sm_80"));
  put(dir, "bin/k90.cubin", built("sm_90"));
  put(dir, "bin/k.ptx", built("compute_80"));
  const std::string spec_path = put(dir, "spec.json", R"({"kernels": [
    {"kind": "raw_module", "name": "one", "path": "bin/k80.cubin"},
    {"kind": "raw_module", "name": "ladder", "paths": ["bin/k80.cubin", {"path": "bin/k90.cubin", "target": "sm_90a"},
                                                       "bin/k.ptx"]},
    {"kind": "raw_module", "name": "source", "code": "extern \"C\" __global__ void k() {}"}
  ]})");
  const kernc::Spec spec = kernc::load_spec(spec_path);
  const auto& one = std::get<RawModule>(spec.find("one").kernel);
  REQUIRE(one.binaries().size() == 1);
  CHECK(one.binaries()[0].path == dir.path() + "/bin/k80.cubin");
  CHECK(one.binaries()[0].target->str() == "sm_80");
  const auto& ladder = std::get<RawModule>(spec.find("ladder").kernel);
  CHECK(targets_of(ladder.binaries()) == std::vector<std::string>{"sm_80", "sm_90a", "compute_80"});
  CHECK(ladder.binaries()[2].path == dir.path() + "/bin/k.ptx");
  CHECK(std::string(spec.find("ladder").kind()) == "raw_module");
  // Nothing to precompile for binaries: only the module of source has a variant.
  const auto variants = spec.variants();
  REQUIRE(variants.size() == 1);
  CHECK(variants[0].kernel == "source");

  auto refused = [&](const std::string& kernel, const std::string& expected) {
    auto error = thrown_by([&] { kernc::parse_spec(R"({"kernels": [)" + kernel + "]}", dir.path()); });
    REQUIRE(error);
    CHECK(error->code() == ErrorCode::invalid_argument);
    CHECK_MESSAGE(contains(error->what(), expected), std::string(error->what()));
  };
  refused(R"({"kind": "raw_module", "name": "m", "path": "bin/k80.cubin", "name_expressions": ["f<int>"]})",
          "kernel m: \"name_expressions\" cannot go with \"path\" or \"paths\": a module of binary files has no source "
          "and no lowered names");
  refused(R"({"kind": "raw_module", "name": "m", "path": "bin/k80.cubin", "code": "x"})",
          "kernel m: \"code\" cannot go with \"path\" or \"paths\"");
  refused(R"({"kind": "raw_module", "name": "m", "path": "bin/k80.cubin", "options": {"std": "c++17"}})",
          "\"options\" cannot go with \"path\" or \"paths\": a module of binary files has no source to compile");
  refused(R"({"kind": "raw_module", "name": "m", "path": "bin/k80.cubin", "paths": ["bin/k.ptx"]})",
          "give one of \"path\" and \"paths\", not both");
  refused(R"({"kind": "raw_module", "name": "m", "paths": []})", "\"paths\" must be a non-empty list");
  refused(R"({"kind": "raw_module", "name": "m", "paths": [{"path": "bin/k.ptx", "arch": "sm_80"}]})",
          "kernel m paths: unknown field \"arch\"");
  refused(R"({"kind": "raw_module", "name": "m", "paths": [{"path": "bin/k.ptx", "target": "sm80"}]})",
          "kernel m paths: ");
  refused(R"({"kind": "raw_module", "name": "m", "path": "bin/k80.cubin", "paths": 3})", "not both");
  refused(R"({"kind": "raw_module", "name": "m", "paths": [{"path": "bin/k80.cubin", "target": "sm_90"}]})",
          "kernel m: " + dir.path() + "/bin/k80.cubin: the file was built for sm_80 but the target given is sm_90");
  auto missing = thrown_by([&] {
    kernc::parse_spec(R"({"kernels": [{"kind": "raw_module", "name": "m", "path": "bin/absent.cubin"}]})", dir.path());
  });
  REQUIRE(missing);
  CHECK(missing->code() == ErrorCode::io);
  CHECK_MESSAGE(contains(missing->what(), "RawModule m: cannot load " + dir.path() + "/bin/absent.cubin"), missing->what());
}
