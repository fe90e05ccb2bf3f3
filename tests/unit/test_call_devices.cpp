// Arrays know their device (NOTE [ arrays know their device ], src/kernels/device_check.cpp):
// what a call does with arrays of another device, without a GPU. Two or three fake CUDA
// GPUs (as in test_elementwise_launch.cpp) whose driver places raw addresses as the test
// says and counts the look-ups; the programs are really compiled (NVRTC, sm_90) into a
// temporary cache. The host backend's own checks run for real.

#ifdef KERNC_WITH_DLPACK
#include <dlpack/dlpack.h>
#endif

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fake_driver.hpp"
#include "kernc/array.hpp"
#include "kernc/engine.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "runtime/driver.hpp"
#include "temp_dir.hpp"

using namespace kernc;
using kernc::test::contains;

namespace {

// A GPU (test::FakeGpuDriver, allocating from `base`) that launches nothing but counts
// launches, places raw addresses by range (`places`: the first address of a 1 GiB range and
// where it lives; elsewhere it cannot tell) and may reach its peers.
class PlacingDriver final : public test::FakeGpuDriver {
 public:
  explicit PlacingDriver(std::uint64_t base) : FakeGpuDriver("Fake GPU (test_call_devices)", base) {}

  std::size_t launches = 0;
  std::size_t lookups = 0;
  static constexpr std::uint64_t kRange = 1ull << 30;
  static constexpr std::uint64_t kTypeSize = 0x1000;  // where the fake keeps kernc_reduce_type_size
  std::map<std::uint64_t, DeviceId> places;  // start of a range of kRange bytes -> where it lives
  bool peers_possible = false;
  std::size_t peer_enables = 0;

  void copy_to_host(void* dst, std::uint64_t src, std::size_t bytes, void*) override {
    if (src == kTypeSize && bytes == sizeof(unsigned)) *static_cast<unsigned*>(dst) = 4;  // a float's reduce type
  }
  DeviceId locate(std::uint64_t address) noexcept override {
    ++lookups;
    auto found = places.upper_bound(address);
    if (found == places.begin() || address - std::prev(found)->first >= kRange) return DeviceId::unknown();
    return std::prev(found)->second;
  }
  bool can_access_peer(Driver&) noexcept override { return peers_possible; }
  void enable_peer_access(Driver&) override { ++peer_enables; }
  // A reduction's program says the size of its reduce type in a global.
  bool find_global(void*, const std::string& name, std::uint64_t* address, std::size_t* bytes) override {
    if (name != "kernc_reduce_type_size") return false;
    *address = kTypeSize;
    *bytes = sizeof(unsigned);
    return true;
  }
  void launch(void*, const LaunchConfig&, void**) override { ++launches; }
};

// Three fake CUDA GPUs at ordinals kFirst.. (beyond any real machine's), each allocating in
// an address range of its own, and an engine whose cache is a temporary directory.
struct ThreeGpus {
  static constexpr int kFirst = 40;
  test::TempDir dir;
  PlacingDriver* drivers[3] = {};
  std::shared_ptr<detail::DeviceState> states[3];
  std::unique_ptr<Engine> engine;

  ThreeGpus() {
    for (int k = 0; k < 3; ++k) {
      auto driver = std::make_unique<PlacingDriver>(0x100000000000ull * static_cast<std::uint64_t>(k + 1));
      drivers[k] = driver.get();
      states[k] = detail::register_device(Backend::cuda, kFirst + k, std::move(driver));
    }
    const std::string cache_dir = dir / "cache";
    engine = std::make_unique<Engine>(Config::from_environment([&](const char* name) -> const char* {
      if (std::string(name) == "KERNC_CACHE_DIR") return cache_dir.c_str();
      if (std::string(name) == "KERNC_CACHE_PATH" || std::string(name) == "KERNC_COMPILE" ||
          std::string(name) == "KERNC_RUNTIME" || std::string(name) == "KERNC_REMOTE_CACHE") {
        return nullptr;
      }
      return std::getenv(name);
    }));
  }
  ~ThreeGpus() { engine.reset(); }  // the engine's modules hold the fake devices: go first

  Device device(int k) { return engine->device(kFirst + k); }
  CallOptions on(int k) {
    CallOptions options;
    options.engine = engine.get();
    options.device = kFirst + k;
    options.multiprocessors = 132;
    return options;
  }
  DeviceArray array(int k, std::int64_t n) { return DeviceArray::empty(device(k), DType::float32, {n}); }
  std::size_t launches() const { return drivers[0]->launches + drivers[1]->launches + drivers[2]->launches; }
};

std::string invalid_argument_message(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::invalid_argument);
    return error.what();
  }
  return "no error";
}

const char* const kSaxpyRaw =
    "extern \"C\" __global__ void devices_raw(float a, const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = a * x[i];\n}\n";

}  // namespace

TEST_CASE("call::an array of another GPU is refused before launch, naming the argument and both devices") {
  ThreeGpus gpus;
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "devices_saxpy");
  const ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "devices_sum");
  const RawKernel raw(kSaxpyRaw, "devices_raw");
  LaunchConfig config;
  config.grid[0] = 4;
  config.block[0] = 256;
  DeviceArray x0 = gpus.array(0, 1000), y1 = gpus.array(1, 1000), z1 = gpus.array(1, 1000);
  const std::string on_0 = fmt::format("cuda:{}", ThreeGpus::kFirst), on_1 = fmt::format("cuda:{}", ThreeGpus::kFirst + 1);
  const std::string expected = "argument \"x\" lives on " + on_0 + " but the call runs on " + on_1;

  // Every kernel kind, one-shot and kept; nothing reaches either GPU.
  CHECK(contains(invalid_argument_message([&] { saxpy({2.0f, x0, y1}, {z1}, gpus.on(1)); }), "devices_saxpy: " + expected));
  CHECK(contains(invalid_argument_message([&] { saxpy({2.0f, x0, y1}, {z1}, gpus.on(1)); }), "Device::enable_peer_access"));
  CHECK(contains(invalid_argument_message([&] { sum({x0}, std::nullopt, false, {}, gpus.on(1)); }), expected));
  CHECK(contains(invalid_argument_message([&] { raw(config, {2.0f, x0, y1, 1000}, gpus.on(1)); }), expected));
  const Call kept = saxpy.plan({2.0f, y1, y1}, {z1}, gpus.on(1));
  CHECK(contains(invalid_argument_message([&] { kept.launch_into({2.0f, x0, y1}, {z1}); }), expected));
  CHECK(contains(invalid_argument_message([&] { kept.launch_into({2.0f, y1, y1}, {x0}); }),
                 "output \"z\" lives on " + on_0 + " but the call runs on " + on_1));
  CHECK(gpus.launches() == 0);

  // The same calls with the arrays where they belong run.
  saxpy({2.0f, y1, y1}, {z1}, gpus.on(1));
  kept.launch_into({2.0f, y1, y1}, {z1});
  raw(config, {2.0f, y1, z1, 1000}, gpus.on(1));
  sum({y1}, std::nullopt, false, {}, gpus.on(1));
  CHECK(gpus.drivers[1]->launches >= 4);
  CHECK(gpus.drivers[0]->launches == 0);
}

TEST_CASE("call::peer access lets a GPU take another's arrays, one direction, where the driver allows it") {
  ThreeGpus gpus;
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "devices_saxpy");
  DeviceArray x0 = gpus.array(0, 1000), y1 = gpus.array(1, 1000), z1 = gpus.array(1, 1000);
  Device gpu0 = gpus.device(0), gpu1 = gpus.device(1), gpu2 = gpus.device(2);
  CHECK_FALSE(gpu1.can_access_peer(gpu0));
  CHECK(contains(invalid_argument_message([&] { gpu1.enable_peer_access(gpu0); }), "is not possible"));
  CHECK_FALSE(gpu1.peer_access_enabled(gpu0.id()));

  gpus.drivers[1]->peers_possible = true;
  CHECK(gpu1.can_access_peer(gpu0));
  gpu1.enable_peer_access(gpu0);
  gpu1.enable_peer_access(gpu0);  // idempotent
  CHECK(gpu1.peer_access_enabled(gpu0.id()));
  CHECK_FALSE(gpu0.peer_access_enabled(gpu1.id()));
  CHECK(gpu1.peer_access_enabled(gpu1.id()));
  const std::size_t before = gpus.drivers[1]->launches;
  saxpy({2.0f, x0, y1}, {z1}, gpus.on(1));
  CHECK(gpus.drivers[1]->launches == before + 1);
  // Not the other way round, and not from a third GPU.
  CHECK(contains(invalid_argument_message([&] { saxpy({2.0f, y1, x0}, {x0}, gpus.on(0)); }), "lives on cuda:41 but the call runs on cuda:40"));
  CHECK(contains(invalid_argument_message([&] { saxpy({2.0f, x0, x0}, {x0}, gpus.on(2)); }), "but the call runs on cuda:42"));
  (void)gpu2;
  // A wrapped view of GPU 0 on GPU 1 is refused unless GPU 1 reaches GPU 0.
  CHECK(DeviceArray::wrap(gpu1, x0.ref()).ref().device == gpu0.id());
  CHECK(contains(invalid_argument_message([&] { DeviceArray::wrap(gpu2, x0.ref()); }), "lives on cuda:40 but is wrapped as an array of cuda:42"));
}

TEST_CASE("call::a raw address is looked up once per plan and argument, and placed where the driver says") {
  ThreeGpus gpus;
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "devices_saxpy");
  PlacingDriver& gpu1 = *gpus.drivers[1];
  const std::uint64_t mine = 0x200000000000ull, theirs = 0x100000000000ull, host = 0x7000000000ull,
                      managed = 0x500000000000ull;
  gpu1.places = {{host, {Backend::cpu, 0}},
                 {theirs, {Backend::cuda, ThreeGpus::kFirst}},
                 {mine, {Backend::cuda, ThreeGpus::kFirst + 1}},
                 {managed, DeviceId::shared(Backend::cuda)}};
  const ArrayRef a = ArrayRef::contiguous(mine, DType::float32, {1000});
  const ArrayRef b = ArrayRef::contiguous(mine + 0x10000, DType::float32, {1000});
  CHECK_FALSE(a.device.known());

  const Call kept = saxpy.plan({2.0f, a, a}, {b}, gpus.on(1));
  for (int k = 0; k < 100; ++k) kept.launch_into({2.0f, a, a}, {b});
  CHECK(gpu1.launches == 100);
  CHECK(gpu1.lookups == 3);  // x, y and z, once each
  // Another address in a slot is looked up (once), then remembered in its place.
  const ArrayRef c = ArrayRef::contiguous(mine + 0x20000, DType::float32, {1000});
  for (int k = 0; k < 10; ++k) kept.launch_into({2.0f, c, a}, {b});
  CHECK(gpu1.lookups == 4);
  // Managed memory is any GPU's.
  const ArrayRef shared = ArrayRef::contiguous(managed, DType::float32, {1000});
  kept.launch_into({2.0f, shared, a}, {b});
  CHECK(gpu1.launches == 111);

  // Another GPU's raw address, and host memory this GPU cannot reach, are refused; the
  // one-shot call looks up as the kept one does.
  const ArrayRef other = ArrayRef::contiguous(theirs, DType::float32, {1000});
  CHECK(contains(invalid_argument_message([&] { kept.launch_into({2.0f, other, a}, {b}); }),
                 "argument \"x\" lives on cuda:40 but the call runs on cuda:41"));
  CHECK(contains(invalid_argument_message([&] { saxpy({2.0f, a, other}, {b}, gpus.on(1)); }),
                 "argument \"y\" lives on cuda:40 but the call runs on cuda:41"));
  const ArrayRef malloced = ArrayRef::contiguous(host, DType::float32, {1000});
  CHECK(contains(invalid_argument_message([&] { kept.launch_into({2.0f, a, a}, {malloced}); }),
                 "output \"z\" is host memory (cpu:0) but the call runs on cuda:41, which cannot address pageable "
                 "host memory"));
  CHECK(gpu1.launches == 111);
  // The caller may say where an array is reachable (memory mapped on several GPUs).
  kept.launch_into({2.0f, other.on(gpus.device(1).id()), a}, {b});
  CHECK(gpu1.launches == 112);
}

TEST_CASE("call::a host-backend call refuses GPU memory and takes host memory") {
  ThreeGpus gpus;  // cuda:40..42 open: a host call asks one of them about raw addresses
  CallOptions host_options;
  host_options.engine = gpus.engine.get();
  host_options.backend = Backend::cpu;
  const ElementwiseKernel scale("T a, T x", "T y", "y = a * x", "devices_scale");
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(257), y(257, 0.0f);
  for (auto& value : x) value = uniform(random);
  const ArrayRef hx = ArrayRef::contiguous(x.data(), DType::float32, {257});
  const ArrayRef hy = ArrayRef::contiguous(y.data(), DType::float32, {257});

  // An array that says it is on a GPU.
  DeviceArray gpu_array = gpus.array(0, 257);
  CHECK(contains(invalid_argument_message([&] { scale({3.0f, gpu_array}, {hy}, host_options); }),
                 "devices_scale: argument \"x\" lives on cuda:40 but the call runs on cpu:0 (the host backend cannot "
                 "address GPU memory"));
  CHECK(contains(invalid_argument_message([&] { scale({3.0f, hx.on({Backend::cuda, 0})}, {hy}, host_options); }),
                 "lives on cuda:0 but the call runs on cpu:0"));
  // A raw address a GPU driver places on a GPU.
  gpus.drivers[0]->places = {{0x100000000000ull, {Backend::cuda, ThreeGpus::kFirst}}};
  gpus.drivers[1]->places = gpus.drivers[0]->places;
  gpus.drivers[2]->places = gpus.drivers[0]->places;
  const ArrayRef gpu_raw = ArrayRef::contiguous(0x100000000000ull, DType::float32, {257});
  CHECK(contains(invalid_argument_message([&] { scale({3.0f, hx}, {gpu_raw}, host_options); }),
                 "output \"y\" lives on cuda:40 but the call runs on cpu:0"));
  CHECK(std::all_of(y.begin(), y.end(), [](float v) { return v == 0.0f; }));
  // Host memory (the drivers place nothing below their ranges) runs, and gives the answer.
  scale({3.0f, hx}, {hy}, host_options);
  for (std::size_t k = 0; k < x.size(); ++k) CHECK(y[k] == 3.0f * x[k]);
  // Managed memory is the host's too.
  scale({2.0f, hx.on(DeviceId::shared(Backend::cuda))}, {hy}, host_options);
  for (std::size_t k = 0; k < x.size(); ++k) CHECK(y[k] == 2.0f * x[k]);
}

TEST_CASE("DeviceArray::a device array's views carry its device") {
  ThreeGpus gpus;
  const Device gpu2 = gpus.device(2);
  DeviceArray a = DeviceArray::empty(gpu2, DType::float32, {6, 8});
  CHECK(a.ref().device == DeviceId{Backend::cuda, ThreeGpus::kFirst + 2});
  CHECK(a.ref().device.str() == "cuda:42");
  CHECK(a.ref().transposed().device == a.ref().device);
  CHECK(a.ref().transposed({1, 0}).device == a.ref().device);
  CHECK(a.ref().sliced(1, 1, 7, 2).device == a.ref().device);
  CHECK(a.ref().sliced(0, 5, 0, -1).device == a.ref().device);
  // A raw view wrapped takes the device it is wrapped on; one that knows keeps it.
  const ArrayRef raw = ArrayRef::contiguous(std::uint64_t{0x300000000000ull}, DType::float32, {4});
  CHECK(raw.device == DeviceId::unknown());
  CHECK(raw.device.str() == "an unknown device");
  CHECK(raw.sliced(0, 1, 3).device == DeviceId::unknown());
  CHECK(DeviceArray::wrap(gpu2, raw).ref().device == gpu2.id());
  CHECK(DeviceId::shared(Backend::cuda).str() == "cuda managed or pinned host memory");
  CHECK(DeviceArray::wrap(gpu2, raw.on(DeviceId::shared(Backend::cuda))).ref().device.is_shared());

  std::vector<float> values(12, 1.5f);
  const Device host = gpus.engine->device(0, Backend::cpu);
  DeviceArray on_host = DeviceArray::from_host(host, DType::float32, {3, 4}, values.data());
  CHECK(on_host.ref().device == DeviceId{Backend::cpu, 0});
  CHECK(on_host.ref().device.str() == "cpu:0");
  CHECK(host.id() == DeviceId{Backend::cpu, 0});
}

#ifdef KERNC_WITH_DLPACK
namespace {
// A foreign tensor of 4 floats on `type`/`id` at `data`, deleted through `deleted`.
DLManagedTensor* foreign_tensor(DLDeviceType type, int id, void* data, bool* deleted) {
  struct Owned {
    DLManagedTensor tensor{};
    std::int64_t shape[1] = {4};
    bool* deleted = nullptr;
  };
  auto* owned = new Owned;
  owned->deleted = deleted;
  DLTensor& t = owned->tensor.dl_tensor;
  t.data = data;
  t.device = {type, id};
  t.ndim = 1;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = owned->shape;
  owned->tensor.manager_ctx = owned;
  owned->tensor.deleter = [](DLManagedTensor* self) {
    auto* mine = static_cast<Owned*>(self->manager_ctx);
    *mine->deleted = true;
    delete mine;
  };
  return &owned->tensor;
}
}  // namespace

TEST_CASE("DeviceArray::DLPack import and export carry the device id") {
  ThreeGpus gpus;
  float data[4] = {1, 2, 3, 4};
  bool deleted = false;
  {
    DeviceArray on_gpu = DeviceArray::from_dlpack(foreign_tensor(kDLCUDA, ThreeGpus::kFirst + 1, data, &deleted));
    CHECK(on_gpu.device().ordinal() == ThreeGpus::kFirst + 1);
    CHECK(on_gpu.ref().device == DeviceId{Backend::cuda, ThreeGpus::kFirst + 1});
    DLManagedTensor* out = on_gpu.to_dlpack();
    CHECK(out->dl_tensor.device.device_type == kDLCUDA);
    CHECK(out->dl_tensor.device.device_id == ThreeGpus::kFirst + 1);
    out->deleter(out);
    // A call on another GPU refuses it.
    const ElementwiseKernel scale("T a, T x", "T y", "y = a * x", "devices_scale");
    DeviceArray y0 = gpus.array(0, 4);
    CHECK(contains(invalid_argument_message([&] { scale({2.0f, on_gpu}, {y0}, gpus.on(0)); }), "lives on cuda:41 but the call runs on cuda:40"));
  }
  CHECK(deleted);
  deleted = false;
  DeviceArray managed = DeviceArray::from_dlpack(foreign_tensor(kDLCUDAManaged, ThreeGpus::kFirst, data, &deleted));
  CHECK(managed.ref().device.is_shared());
  DeviceArray pinned = DeviceArray::from_dlpack(foreign_tensor(kDLCUDAHost, 0, data, &deleted));
  CHECK(pinned.ref().device.is_shared());
  CHECK(pinned.device().backend() == Backend::cpu);
  DeviceArray host = DeviceArray::from_dlpack(foreign_tensor(kDLCPU, 0, data, &deleted));
  CHECK(host.ref().device == DeviceId{Backend::cpu, 0});
  DLManagedTensor* exported = host.to_dlpack();
  CHECK(exported->dl_tensor.device.device_type == kDLCPU);
  exported->deleter(exported);
}
#endif
