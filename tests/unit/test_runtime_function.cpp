// The checks Function makes before it asks the driver (issue 13: CuPy's settable function
// attributes and cooperative launch), without a GPU: a fake detail::Driver stands in for
// libcuda (detail::register_device), so the errors and what reaches the driver can be
// checked here. tests/gpu/test_gpu_raw_features.cpp checks the same on a real GPU.

#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fake_driver.hpp"
#include "kernc/error.hpp"
#include "kernc/runtime.hpp"
#include "runtime/driver.hpp"
#include "temp_dir.hpp"
#include "thrown.hpp"

using kernc::Device;
using kernc::test::thrown_by;
using kernc::Error;
using kernc::ErrorCode;
using kernc::Function;
using kernc::LaunchConfig;
using kernc::test::contains;

namespace {

// A GPU (kernc::test::FakeGpuDriver) that exists only in this file: 132 multiprocessors,
// 227 KiB of opt-in shared memory, and an occupancy of 2048 threads per multiprocessor (at
// most 32 blocks); it launches cooperatively, clusters of at most 2048 threads fit, and
// priorities run from -5 (most urgent) to 0. Its module has the one function "k", whose
// attributes the test sets, and addresses are never the GPU's.
class FakeDriver final : public kernc::test::FakeGpuDriver {
 public:
  FakeDriver() {
    props().cooperative_launch = true;
    props().cluster_launch = true;
    props().cluster_launch_missing.clear();
    props().greatest_priority = -5;
    props().least_priority = 0;
  }

  int static_shared = 0;
  std::optional<int> carveout;
  std::optional<int> max_dynamic;
  std::vector<LaunchConfig> launches;

  bool is_device_pointer(std::uint64_t) noexcept override { return false; }
  void* find_function(void* module, const std::string& name) override {
    return name == "k" ? FakeGpuDriver::find_function(module, name) : nullptr;
  }

  kernc::FunctionAttributes attributes(void*) override {
    kernc::FunctionAttributes a;
    a.registers = 32;
    a.static_shared_bytes = static_shared;
    a.max_dynamic_shared_bytes = max_dynamic.value_or(48 * 1024 - static_shared);
    a.max_threads_per_block = 1024;
    a.ptx_version = 90;
    a.binary_version = 90;
    a.cache_mode_ca = 0;
    a.preferred_shared_carveout = carveout.value_or(-1);
    return a;
  }
  void set_max_dynamic_shared(void*, int bytes) override { max_dynamic = bytes; }
  void set_preferred_shared_carveout(void*, int percent) override { carveout = percent; }
  int max_active_blocks_per_multiprocessor(void*, int block_threads, std::size_t) override {
    return std::min(32, 2048 / block_threads);
  }
  int dynamic_shared_limit(void*) noexcept override { return max_dynamic.value_or(48 * 1024 - static_shared); }
  void launch(void*, const LaunchConfig& config, void**) override { launches.push_back(config); }
  // Clusters of at most 2048 threads fit; larger ones do not.
  int max_active_clusters(void*, const LaunchConfig& c) override {
    cluster_queries.push_back(c);
    const unsigned long long threads = 1ull * c.cluster[0] * c.cluster[1] * c.cluster[2] * c.block[0] * c.block[1] * c.block[2];
    return threads <= 2048 ? 66 : 0;
  }
  std::vector<LaunchConfig> cluster_queries;

  // Context-independent loading: one fake library, a module per load of it.
  bool libraries = false;
  int library_loads = 0;
  int library_releases = 0;
  int library_modules = 0;
  void* load_library(const std::string&) override {
    if (!libraries) return nullptr;
    ++library_loads;
    return &library_;
  }
  void release_library(void*) noexcept override { ++library_releases; }
  void* library_module(void* library) override {
    CHECK(library == &library_);
    ++library_modules;
    return module_handle();
  }

 private:
  int library_ = 0;
};

// The fake GPU, registered as CUDA GPU `kOrdinal` while this lives, and its kernel "k".
struct FakeGpu {
  static constexpr int kOrdinal = 4093;  // no real machine has this many
  FakeDriver* driver = nullptr;
  std::shared_ptr<kernc::detail::DeviceState> state;
  Device device;
  Function function;

  FakeGpu() {
    auto fake = std::make_unique<FakeDriver>();
    driver = fake.get();
    state = kernc::detail::register_device(kernc::Backend::cuda, kOrdinal, std::move(fake));
    device = Device::get(kOrdinal);
    function = device.load("not a real image").function("k");
  }
};

LaunchConfig cooperative(unsigned gx, unsigned gy, unsigned gz, unsigned block) {
  LaunchConfig config;
  config.grid[0] = gx;
  config.grid[1] = gy;
  config.grid[2] = gz;
  config.block[0] = block;
  config.cooperative = true;
  return config;
}

}  // namespace

TEST_CASE("runtime::Function::set_preferred_shared_carveout takes -1 or a percentage, and refuses other values") {
  FakeGpu gpu;
  for (int percent : {-1, 0, 37, 100}) {
    CAPTURE(percent);
    gpu.function.set_preferred_shared_carveout(percent);
    CHECK(gpu.driver->carveout == percent);
    CHECK(gpu.function.attributes().preferred_shared_carveout == percent);
  }
  for (int percent : {-2, 101, 1000}) {
    CAPTURE(percent);
    gpu.driver->carveout.reset();
    auto error = thrown_by([&] { gpu.function.set_preferred_shared_carveout(percent); });
    REQUIRE(error);
    CHECK(error->code() == ErrorCode::invalid_argument);
    CHECK_MESSAGE(contains(error->what(), "k: a shared-memory carveout of " + std::to_string(percent)), error->what());
    CHECK_MESSAGE(contains(error->what(), "from 0 (most L1 cache) to 100 (most shared memory), or -1"), error->what());
    CHECK_FALSE(gpu.driver->carveout);  // nothing reached the driver
  }
}

TEST_CASE("runtime::Function::set_max_dynamic_shared_bytes allows the opt-in limit less static shared memory") {
  FakeGpu gpu;
  gpu.driver->static_shared = 16384;
  const int allowed = 232448 - 16384;
  gpu.function.set_max_dynamic_shared_bytes(allowed);
  CHECK(gpu.driver->max_dynamic == allowed);
  CHECK(gpu.function.attributes().max_dynamic_shared_bytes == allowed);

  gpu.driver->max_dynamic.reset();
  auto error = thrown_by([&] { gpu.function.set_max_dynamic_shared_bytes(allowed + 1); });
  REQUIRE(error);
  CHECK(error->code() == ErrorCode::launch_config);
  CHECK_MESSAGE(contains(error->what(), "k: 216065 bytes of dynamic shared memory asked for; Fake GPU allows at most "
                                        "232448 bytes of shared memory per block, and the kernel's static shared "
                                        "memory takes 16384, so at most 216064 can be dynamic"),
                error->what());
  CHECK_FALSE(gpu.driver->max_dynamic);

  error = thrown_by([&] { gpu.function.set_max_dynamic_shared_bytes(-1); });
  REQUIRE(error);
  CHECK(error->code() == ErrorCode::invalid_argument);
  CHECK_MESSAGE(contains(error->what(), "cannot be negative"), error->what());

  // A launch above the raised limit names what set_max_dynamic_shared_bytes may still allow.
  LaunchConfig config;
  config.shared_bytes = 100000;
  error = thrown_by([&] { gpu.function.launch(config, nullptr); });
  REQUIRE(error);
  CHECK(error->code() == ErrorCode::launch_config);
  CHECK_MESSAGE(contains(error->what(), "raise it up to 216064 with set_max_dynamic_shared_bytes"), error->what());
  CHECK(gpu.driver->launches.empty());
}

TEST_CASE("runtime::Function::launch launches a cooperative grid that fits, and names the limit of one that does not") {
  FakeGpu gpu;
  // 256 threads per block: 8 blocks per multiprocessor, 1056 on the GPU.
  CHECK(gpu.function.max_active_blocks_per_multiprocessor(256) == 8);
  CHECK(gpu.device.supports_cooperative_launch());
  gpu.function.launch(cooperative(1056, 1, 1, 256), nullptr);
  gpu.function.launch(cooperative(16, 6, 11, 256), nullptr);  // 1056 in three dimensions
  REQUIRE(gpu.driver->launches.size() == 2);
  CHECK(gpu.driver->launches[0].cooperative);
  CHECK(gpu.driver->launches[1].cooperative);

  for (const LaunchConfig& config : {cooperative(1057, 1, 1, 256), cooperative(16, 6, 12, 256)}) {
    auto error = thrown_by([&] { gpu.function.launch(config, nullptr); });
    REQUIRE(error);
    CHECK(error->code() == ErrorCode::launch_config);
    CHECK_MESSAGE(contains(error->what(), "k: a cooperative launch of "), error->what());
    CHECK_MESSAGE(contains(error->what(), "exceeds the 1056 that can be resident at once on Fake GPU: 8 per "
                                          "multiprocessor x 132 multiprocessors, with 256 threads and 0 bytes of "
                                          "dynamic shared memory per block"),
                  error->what());
  }
  auto error = thrown_by([&] { gpu.function.launch(cooperative(1057, 1, 1, 256), nullptr); });
  REQUIRE(error);
  CHECK_MESSAGE(contains(error->what(), "1057 blocks (grid 1057 x 1 x 1)"), error->what());
  CHECK(gpu.driver->launches.size() == 2);  // neither reached the driver

  // An ordinary launch is not limited by residency.
  LaunchConfig plain = cooperative(100000, 1, 1, 256);
  plain.cooperative = false;
  gpu.function.launch(plain, nullptr);
  REQUIRE(gpu.driver->launches.size() == 3);
  CHECK_FALSE(gpu.driver->launches[2].cooperative);
}

TEST_CASE("runtime::Function::launch refuses a cooperative launch where the device cannot make one, saying why") {
  FakeGpu gpu;
  gpu.driver->props().cooperative_launch = false;
  gpu.driver->props().cooperative_launch_missing = "the driver says this GPU cannot launch cooperatively";
  CHECK_FALSE(gpu.device.supports_cooperative_launch());
  auto error = thrown_by([&] { gpu.function.launch(cooperative(1, 1, 1, 32), nullptr); });
  REQUIRE(error);
  CHECK(error->code() == ErrorCode::launch_config);
  CHECK_MESSAGE(contains(error->what(), "k: a cooperative launch on Fake GPU: the driver says this GPU cannot launch "
                                        "cooperatively"),
                error->what());
  CHECK(gpu.driver->launches.empty());
}

TEST_CASE("runtime::Function::max_active_blocks_per_multiprocessor checks the block size") {
  FakeGpu gpu;
  CHECK(gpu.function.max_active_blocks_per_multiprocessor(32) == 32);
  CHECK(gpu.function.max_active_blocks_per_multiprocessor(1024, 4096) == 2);
  for (int threads : {0, -5, 1025}) {
    CAPTURE(threads);
    auto error = thrown_by([&] { (void)gpu.function.max_active_blocks_per_multiprocessor(threads); });
    REQUIRE(error);
    CHECK(error->code() == ErrorCode::invalid_argument);
    CHECK_MESSAGE(contains(error->what(), "Fake GPU allows 1 to 1024"), error->what());
  }
}

TEST_CASE("runtime::register_device refuses a GPU that is already open") {
  FakeGpu gpu;
  auto error = thrown_by([&] { kernc::detail::register_device(kernc::Backend::cuda, FakeGpu::kOrdinal, nullptr); });
  REQUIRE(error);
  CHECK(error->code() == ErrorCode::invalid_argument);
}

LaunchConfig clustered(unsigned gx, unsigned gy, unsigned cx, unsigned cy, unsigned block) {
  LaunchConfig config;
  config.grid[0] = gx;
  config.grid[1] = gy;
  config.block[0] = block;
  config.cluster[0] = cx;
  config.cluster[1] = cy;
  return config;
}

// NOTE [ launch attributes ] (src/runtime/device.cpp): what Function::launch checks before
// the driver sees a cluster.
TEST_CASE("runtime::Function::launch passes clusters that fit and names what is wrong with those that do not") {
  FakeGpu gpu;
  gpu.function.launch(clustered(8, 4, 2, 2, 128), nullptr);
  REQUIRE(gpu.driver->launches.size() == 1);
  CHECK(gpu.driver->launches[0].cluster[0] == 2);
  CHECK(gpu.driver->launches[0].cluster[1] == 2);
  CHECK(gpu.driver->launches[0].has_attributes());
  REQUIRE(gpu.driver->cluster_queries.size() == 1);  // the occupancy was asked, with the launch's blocks
  CHECK(gpu.driver->cluster_queries[0].block[0] == 128);
  gpu.function.launch(clustered(32, 1, 16, 1, 128), nullptr);  // non-portable, within 16
  CHECK(gpu.driver->launches.size() == 2);

  struct Case {
    LaunchConfig config;
    std::string message;
  };
  LaunchConfig zero = clustered(8, 1, 2, 1, 32);
  zero.cluster[2] = 0;
  const Case cases[] = {
      {clustered(9, 1, 2, 1, 32), "k: grid.x = 9 is not a multiple of cluster.x = 2: the grid must be made of whole clusters"},
      {clustered(8, 3, 2, 2, 32), "k: grid.y = 3 is not a multiple of cluster.y = 2"},
      {zero, "k: cluster.z = 0: cluster sizes must be at least 1"},
      {clustered(32, 1, 32, 1, 32), "k: a cluster of 32 blocks (32 x 1 x 1): at most 16 blocks (8 portably"},
      {clustered(8, 1, 8, 1, 512),
       "k: a cluster of 8 blocks (8 x 1 x 1) of 512 threads and 0 bytes of dynamic shared memory each cannot be "
       "resident at once on Fake GPU (every block of a cluster must be"},
      {clustered(16, 1, 16, 1, 256), "cannot be resident at once on Fake GPU, beyond the portable size of 8"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.message);
    auto error = thrown_by([&] { gpu.function.launch(c.config, nullptr); });
    REQUIRE(error);
    CHECK(error->code() == ErrorCode::launch_config);
    CHECK_MESSAGE(contains(error->what(), c.message), error->what());
  }
  CHECK(gpu.driver->launches.size() == 2);  // none reached the driver

  gpu.driver->props().cluster_launch = false;
  gpu.driver->props().cluster_launch_missing = "thread-block clusters need a GPU of compute capability 9.0 or newer";
  auto error = thrown_by([&] { gpu.function.launch(clustered(8, 1, 2, 1, 32), nullptr); });
  REQUIRE(error);
  CHECK(error->code() == ErrorCode::launch_config);
  CHECK_MESSAGE(contains(error->what(), "k: a cluster of 2 x 1 x 1 blocks on Fake GPU: thread-block clusters need a GPU "
                                        "of compute capability 9.0 or newer"),
                error->what());
  CHECK(gpu.driver->launches.size() == 2);
}

TEST_CASE("runtime::Function::launch takes a priority in the device's range and programmatic dependent launch") {
  FakeGpu gpu;
  LaunchConfig config;
  CHECK_FALSE(config.has_attributes());
  config.programmatic_dependent_launch = true;
  CHECK(config.has_attributes());
  gpu.function.launch(config, nullptr);
  for (int priority : {-5, -1, 0}) {
    config.priority = priority;
    gpu.function.launch(config, nullptr);
  }
  REQUIRE(gpu.driver->launches.size() == 4);
  CHECK(gpu.driver->launches[0].programmatic_dependent_launch);
  CHECK(gpu.driver->launches[3].priority == 0);
  CHECK(gpu.driver->cluster_queries.empty());  // no cluster, no occupancy question

  for (int priority : {-6, 1}) {
    CAPTURE(priority);
    config.priority = priority;
    auto error = thrown_by([&] { gpu.function.launch(config, nullptr); });
    REQUIRE(error);
    CHECK(error->code() == ErrorCode::launch_config);
    CHECK_MESSAGE(contains(error->what(), "k: priority " + std::to_string(priority) +
                                              ": Fake GPU takes priorities from -5 (the most urgent) to 0 (the least)"),
                  error->what());
  }
  CHECK(gpu.driver->launches.size() == 4);
}

// NOTE [ load once for every GPU ] (src/runtime/cuda_driver.cpp): the Device layer's part.
TEST_CASE("runtime::Device::load_library is empty where the driver cannot, and gives modules that keep it loaded") {
  FakeGpu gpu;
  CHECK_FALSE(gpu.device.load_library("image").valid());  // the driver declines: load per device
  gpu.driver->libraries = true;
  {
    kernc::Library library = gpu.device.load_library("image");
    REQUIRE(library.valid());
    CHECK(gpu.driver->library_loads == 1);
    kernc::Module module = gpu.device.load(library);
    CHECK(gpu.driver->library_modules == 1);
    library = kernc::Library();  // the module still holds it
    CHECK(gpu.driver->library_releases == 0);
    Function function = module.function("k");
    module = kernc::Module();
    CHECK(gpu.driver->library_releases == 0);  // the function does too
    CHECK(function.valid());
  }
  CHECK(gpu.driver->library_releases == 1);

  auto error = thrown_by([&] { (void)gpu.device.load(kernc::Library()); });
  REQUIRE(error);
  CHECK(error->code() == ErrorCode::invalid_argument);
  CHECK_MESSAGE(contains(error->what(), "Device::load(library): an empty library for a cuda device"), error->what());
}
