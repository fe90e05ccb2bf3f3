// What ElementwiseKernel launches hand the driver, without a GPU: a fake detail::Driver is
// a GPU (and a second one, with fewer multiprocessors), as in test_runtime_function.cpp, and
// records each launch's parameters. The programs are really compiled (NVRTC, sm_90) into a
// temporary cache; the fake accepts any image. Checks the hot path of NOTE [ kept plan ]
// and NOTE [ call memo ] (src/kernels/call.cpp): a plan's packed parameters
// with each call's addresses and scalars written in, the plans operator() remembers, and
// the aliasing rules on the plan's byte spans.

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "allocation_count.hpp"
#include "cache/cache_internals.hpp"
#include "cache/cache_key.hpp"
#include "cache/local_store.hpp"
#include "fake_driver.hpp"
#include "kernc/engine.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "platform/files.hpp"
#include "runtime/driver.hpp"
#include "temp_dir.hpp"
#include "thrown.hpp"

using namespace kernc;
using kernc::test::error_message;
using kernc::test::contains;

namespace {

// One launch as the fake saw it: the kernel's name, the grid, and the first bytes of each
// parameter (as many parameters as the test said the kernel has).
struct Launch {
  std::string function;
  unsigned grid = 0;
  std::vector<std::vector<unsigned char>> params;

  template <class T>
  T field(std::size_t param, std::size_t offset = 0) const {
    T value;
    std::memcpy(&value, params.at(param).data() + offset, sizeof value);
    return value;
  }
};

// A GPU (test::FakeGpuDriver) of `multiprocessors` multiprocessors that records its launches.
class RecordingDriver final : public test::FakeGpuDriver {
 public:
  explicit RecordingDriver(int multiprocessors) : FakeGpuDriver("Fake GPU (test_elementwise_launch)") {
    props().multiprocessors = multiprocessors;
  }

  std::map<std::string, std::size_t> param_counts;  // by kernel name: how many to record
  std::vector<Launch> launches;
  // Off: launches are only counted (recording allocates, which an allocation count must not see).
  bool recording = true;
  std::size_t unrecorded_launches = 0;

  void launch(void* function, const LaunchConfig& config, void** args) override {
    if (!recording) {
      ++unrecorded_launches;
      return;
    }
    Launch launch;
    launch.function = function_name(function);
    launch.grid = config.grid[0];
    const std::size_t count = param_counts.at(launch.function);
    for (std::size_t k = 0; k < count; ++k) {
      const auto* bytes = static_cast<const unsigned char*>(args[k]);
      launch.params.emplace_back(bytes, bytes + 32);  // every parameter checked here fits
    }
    launches.push_back(std::move(launch));
  }
};

// Two fake GPUs, CUDA GPUs `first_ordinal` and the next (below Engine::kDeviceSlots, and
// more than any machine running the unit tests has), and an engine whose cache is a
// temporary directory. A test that launches kernc's own copy kernel (held by a static
// kernel object, so its GPUs stay open) uses ordinals of its own.
struct FakeGpus {
  static constexpr int kFirst = 61;
  int first_ordinal, second_ordinal;
  test::TempDir dir;
  RecordingDriver* first = nullptr;
  RecordingDriver* second = nullptr;
  std::shared_ptr<detail::DeviceState> first_state, second_state;
  std::unique_ptr<Engine> engine;
  CallOptions options;

  explicit FakeGpus(int ordinal = kFirst) : first_ordinal(ordinal), second_ordinal(ordinal + 1) {
    auto a = std::make_unique<RecordingDriver>(132);
    auto b = std::make_unique<RecordingDriver>(80);
    first = a.get();
    second = b.get();
    first_state = detail::register_device(Backend::cuda, first_ordinal, std::move(a));
    second_state = detail::register_device(Backend::cuda, second_ordinal, std::move(b));
    const std::string cache_dir = dir / "cache";
    engine = std::make_unique<Engine>(Config::from_environment([&](const char* name) -> const char* {
      if (std::string(name) == "KERNC_CACHE_DIR") return cache_dir.c_str();
      if (std::string(name) == "KERNC_CACHE_PATH" || std::string(name) == "KERNC_COMPILE" ||
          std::string(name) == "KERNC_RUNTIME" || std::string(name) == "KERNC_REMOTE_CACHE") {
        return nullptr;
      }
      return std::getenv(name);
    }));
    options.engine = engine.get();
    options.device = first_ordinal;
    for (auto* driver : {first, second}) {
      driver->param_counts["saxpy_hot"] = 5;   // a, x, y, z, shape
      driver->param_counts["kernc_copy"] = 3;  // x, y, shape
      driver->param_counts["split_hot"] = 4;   // x, y, z, shape
    }
  }
  ~FakeGpus() {
    // The engine's modules hold the fake devices: go first.
    engine.reset();
  }
  DeviceArray array(std::int64_t n) { return DeviceArray::empty(engine->device(first_ordinal), DType::float32, {n}); }
};

// The saxpy these tests launch, three arrays of 1000 floats on the first fake GPU, and a
// kept plan of it on them (an H100's 132 multiprocessors).
struct KeptSaxpy {
  explicit KeptSaxpy(FakeGpus& gpus)
      : x(gpus.array(1000)), y(gpus.array(1000)), z(gpus.array(1000)), plan(saxpy.plan({2.0f, x, y}, {z}, h100(gpus))) {}
  static CallOptions h100(const FakeGpus& gpus) {
    CallOptions options = gpus.options;
    options.multiprocessors = 132;
    return options;
  }
  const ElementwiseKernel saxpy{"T a, T x, T y", "T z", "z = a * x + y", "saxpy_hot"};
  DeviceArray x, y, z;
  const Call plan;
};

}  // namespace

TEST_CASE("elementwise::launch of a kept plan packs each call's addresses and scalars into the plan's parameters") {
  FakeGpus gpus;
  KeptSaxpy kept(gpus);
  const ElementwiseKernel& saxpy = kept.saxpy;
  const DeviceArray &x = kept.x, &y = kept.y, &z = kept.z;
  const Call& plan = kept.plan;
  REQUIRE(plan.layout().kind == LayoutKind::contiguous);

  DeviceArray x2 = gpus.array(1000), y2 = gpus.array(1000), z2 = gpus.array(1000);
  plan.launch({2.0f, x, y}, {z});
  plan.launch({-0.5f, x2, y2}, {z2});
  REQUIRE(gpus.first->launches.size() == 2);
  // Copies: later launches grow the vector and move its elements.
  const Launch one = gpus.first->launches[0];
  const Launch two = gpus.first->launches[1];
  // Contiguous, 32-bit: a float; three views {address, int size}; the shape {int size}.
  CHECK(one.field<float>(0) == 2.0f);
  CHECK(one.field<std::uint64_t>(1) == x.ref().data);
  CHECK(one.field<std::uint64_t>(2) == y.ref().data);
  CHECK(one.field<std::uint64_t>(3) == z.ref().data);
  CHECK(two.field<float>(0) == -0.5f);
  CHECK(two.field<std::uint64_t>(1) == x2.ref().data);
  CHECK(two.field<std::uint64_t>(2) == y2.ref().data);
  CHECK(two.field<std::uint64_t>(3) == z2.ref().data);
  for (const Launch* launch : {&one, &two}) {
    for (std::size_t view = 1; view <= 3; ++view) CHECK(launch->field<std::int32_t>(view, 8) == 1000);
    CHECK(launch->field<std::int32_t>(4) == 1000);
    CHECK(launch->grid == 1);
  }

  // The plain call packs the same fields.
  saxpy({-0.5f, x2, y2}, {z2}, gpus.options);
  REQUIRE(gpus.first->launches.size() == 3);
  const Launch three = gpus.first->launches[2];
  CHECK(three.field<float>(0) == -0.5f);
  for (std::size_t view = 1; view <= 3; ++view) {
    CHECK(three.field<std::uint64_t>(view) == two.field<std::uint64_t>(view));
    CHECK(three.field<std::int32_t>(view, 8) == 1000);
  }
  CHECK(three.field<std::int32_t>(4) == 1000);
}

TEST_CASE("elementwise::a strided plan keeps its shapes and strides; scalars convert to the resolved type") {
  FakeGpus gpus;
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "saxpy_hot");
  DeviceArray base = gpus.array(2000), z = gpus.array(1000);
  const ArrayRef every_other = base.ref().sliced(0, 0, 2000, 2);  // 1000 elements, 8 bytes apart
  for (int a : {3, 4}) saxpy({a, every_other, z}, {z}, gpus.options);  // int scalars for a float32 parameter
  REQUIRE(gpus.first->launches.size() == 2);  // y is the very view of z: no copy
  for (int k = 0; k < 2; ++k) {
    const Launch& launch = gpus.first->launches[k];
    CHECK(launch.function == "saxpy_hot");
    CHECK(launch.field<float>(0) == 3.0f + k);
    // Rank 1, 32-bit: {address, int size, int shape[1], int strides[1]}.
    CHECK(launch.field<std::uint64_t>(1) == every_other.data);
    CHECK(launch.field<std::int32_t>(1, 8) == 1000);
    CHECK(launch.field<std::int32_t>(1, 12) == 1000);
    CHECK(launch.field<std::int32_t>(1, 16) == 8);
    CHECK(launch.field<std::uint64_t>(2) == z.ref().data);
    CHECK(launch.field<std::int32_t>(2, 16) == 4);
    CHECK(launch.field<std::uint64_t>(3) == z.ref().data);
  }
}

TEST_CASE("elementwise::operator() remembers its plans: the same arguments launch alike, others are planned") {
  FakeGpus gpus;
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "saxpy_hot");
  // More shapes than the kernel remembers plans for, twice round: every launch has its own size.
  std::vector<std::int64_t> sizes;
  for (int round = 0; round < 2; ++round) {
    for (std::int64_t n = 1; n <= 12; ++n) sizes.push_back(n * 100);
  }
  sizes.push_back(300);
  for (std::int64_t n : sizes) {
    DeviceArray x = gpus.array(n), z = gpus.array(n);
    saxpy({1.0f, x, x}, {z}, gpus.options);
    const Launch& launch = gpus.first->launches.back();
    CHECK(launch.field<std::int32_t>(4) == n);
    CHECK(launch.field<std::uint64_t>(1) == x.ref().data);
    CHECK(launch.field<std::uint64_t>(3) == z.ref().data);
  }
  // A remembered shape with another dtype, or allocated outputs, is another plan.
  DeviceArray x = gpus.array(300), z = gpus.array(300);
  auto allocated = saxpy({1.0f, x, x}, {}, gpus.options);
  REQUIRE(allocated.size() == 1);
  CHECK(allocated[0].owns_memory());
  CHECK(gpus.first->launches.back().field<std::uint64_t>(3) == allocated[0].ref().data);
  // The usage errors of a call are those of a first call, remembered plans or not.
  CHECK(contains(error_message([&] { saxpy({1.0f, x}, {z}, gpus.options); }), "saxpy_hot takes 3 input(s)"));
  CHECK(contains(error_message([&] { saxpy({1.0f, x, ArrayRef::contiguous(std::uint64_t{0}, DType::float32, {300})}, {z}, gpus.options); }),
                 "null data pointer"));
  // An empty loop launches nothing, planned or remembered.
  const std::size_t launched = gpus.first->launches.size();
  DeviceArray empty = gpus.array(0);
  for (int k = 0; k < 2; ++k) CHECK(saxpy({1.0f, empty, empty}, {empty}, gpus.options).size() == 1);
  CallOptions plan_options = gpus.options;
  plan_options.multiprocessors = 132;
  saxpy.plan({1.0f, empty, empty}, {empty}, plan_options).launch({1.0f, empty, empty}, {empty});
  CHECK(gpus.first->launches.size() == launched);
  // size= is an option of the plan: the same arrays with it are refused, as without a memo.
  CallOptions sized = gpus.options;
  sized.size = 300;
  CHECK(contains(error_message([&] { saxpy({1.0f, x, x}, {z}, sized); }), "size= cannot be used"));
}

TEST_CASE("elementwise::a remembered plan is for its GPU's multiprocessors: another GPU gets its own plan") {
  FakeGpus gpus;
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "saxpy_hot");
  // Far more elements than 32 blocks a multiprocessor take in one step: the grid still
  // covers them in one pass (NOTE [ one pass ]): 2^24 / (256 threads x 4 elements).
  const std::int64_t n = std::int64_t{1} << 24;
  DeviceArray x = gpus.array(n), z = gpus.array(n);
  saxpy({1.0f, x, x}, {z}, gpus.options);
  CallOptions on_second = gpus.options;
  on_second.device = gpus.second_ordinal;
  // The same memory as raw addresses, which the fakes cannot place: the first GPU's arrays
  // as such are refused on the second (NOTE [ arrays know their device ]).
  const ArrayRef raw_x = x.ref().on(DeviceId::unknown()), raw_z = z.ref().on(DeviceId::unknown());
  saxpy({1.0f, raw_x, raw_x}, {raw_z}, on_second);
  saxpy({1.0f, x, x}, {z}, gpus.options);
  REQUIRE(gpus.first->launches.size() == 2);
  REQUIRE(gpus.second->launches.size() == 1);
  CHECK(gpus.first->launches[0].grid == n / 1024);
  CHECK(gpus.second->launches[0].grid == n / 1024);
  CHECK(gpus.first->launches[1].grid == n / 1024);
  // A kept plan made for another multiprocessor count than its GPU's is refused, naming both.
  CallOptions plan_options = on_second;
  plan_options.multiprocessors = 132;
  const Call plan = saxpy.plan({1.0f, raw_x, raw_x}, {raw_z}, plan_options);
  CHECK(contains(error_message([&] { plan.launch({1.0f, raw_x, raw_x}, {raw_z}); }),
                 "the plan is for a GPU with 132 multiprocessors; GPU 62 has 80"));
}

TEST_CASE("elementwise::aliasing is checked on every launch of a plan: overlapping inputs are copied, outputs refused") {
  FakeGpus gpus(58);
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "saxpy_hot");
  DeviceArray buffer = gpus.array(2000), y = gpus.array(1000);
  const ArrayRef head = buffer.ref().sliced(0, 0, 1000), shifted = buffer.ref().sliced(0, 1, 1001);
  CallOptions plan_options = gpus.options;
  plan_options.multiprocessors = 132;
  const Call plan = saxpy.plan({2.0f, head, y}, {head}, plan_options);
  // x is the very view of z: read in place.
  plan.launch({2.0f, head, y}, {head});
  REQUIRE(gpus.first->launches.size() == 1);
  CHECK(gpus.first->launches[0].field<std::uint64_t>(1) == head.data);
  // The same descriptions one element apart overlap without being the same view: x is copied first.
  const ArrayRef shifted_out = ArrayRef::contiguous(shifted.data, DType::float32, {1000});
  plan.launch({2.0f, head, y}, {shifted_out});
  REQUIRE(gpus.first->launches.size() == 3);
  CHECK(gpus.first->launches[1].function == "kernc_copy");
  CHECK(gpus.first->launches[1].field<std::uint64_t>(0) == head.data);
  const std::uint64_t copy = gpus.first->launches[1].field<std::uint64_t>(1);
  CHECK(copy != head.data);
  CHECK(gpus.first->launches[2].function == "saxpy_hot");
  CHECK(gpus.first->launches[2].field<std::uint64_t>(1) == copy);
  CHECK(gpus.first->launches[2].field<std::uint64_t>(3) == shifted_out.data);
  // Disjoint again: no copy.
  plan.launch({2.0f, y, y}, {head});
  REQUIRE(gpus.first->launches.size() == 4);
  CHECK(gpus.first->launches[3].field<std::uint64_t>(1) == y.ref().data);

  const ElementwiseKernel split("T x", "T y, T z", "y = x; z = x", "split_hot");
  const Call two = split.plan({y}, {head, head}, plan_options);
  CHECK(contains(error_message([&] { two.launch({y}, {head, shifted_out}); }),
                 "split_hot: outputs y and z overlap in memory"));
  DeviceArray w = gpus.array(1000);
  two.launch({y}, {head, w});
  CHECK(gpus.first->launches.back().function == "split_hot");
}

TEST_CASE("elementwise::a new engine at a dead engine's address is not handed the dead engine's functions") {
  // Kernels remember what they loaded per engine (Engine::id()). An address is reused by the
  // next engine of the same size more often than not; here always (the same storage), and
  // the new engine may not compile and has an empty cache: what it launches it must load.
  FakeGpus gpus;
  KeptSaxpy kept(gpus);
  const ElementwiseKernel& saxpy = kept.saxpy;
  const DeviceArray &x = kept.x, &y = kept.y, &z = kept.z;
  auto config_for = [](const std::string& cache_dir, const char* compile) {
    return Config::from_environment([&](const char* name) -> const char* {
      const std::string variable = name;
      if (variable == "KERNC_CACHE_DIR") return cache_dir.c_str();
      if (variable == "KERNC_COMPILE") return compile;
      if (variable == "KERNC_CACHE_PATH" || variable == "KERNC_RUNTIME" || variable == "KERNC_REMOTE_CACHE") return nullptr;
      return std::getenv(name);
    });
  };
  alignas(Engine) unsigned char storage[sizeof(Engine)];
  Engine* first = new (storage) Engine(config_for(gpus.dir / "first", "auto"));
  CallOptions options = gpus.options;
  options.engine = first;
  CallOptions plan_options = options;
  plan_options.multiprocessors = 132;
  const Call first_plan = saxpy.plan({2.0f, x, y}, {z}, plan_options);  // a plan through the first engine
  saxpy({2.0f, x, y}, {z}, options);
  first_plan.launch({2.0f, x, y}, {z});
  const std::uint64_t first_id = first->id();
  CHECK(first->loaded_modules() == 1);
  first->~Engine();

  Engine* second = new (storage) Engine(config_for(gpus.dir / "empty", "never"));
  CHECK(second->id() != first_id);
  options.engine = second;
  CHECK(contains(error_message([&] { saxpy({2.0f, x, y}, {z}, options); }), "and compiling is off"));
  // A plan outliving its engine must not be used (the engine is its own, and gone); a new
  // engine at the dead one's address is still never handed the dead engine's functions.
  CHECK(contains(error_message([&] { first_plan.launch({2.0f, x, y}, {z}); }), "and compiling is off"));
  CHECK(second->loaded_modules() == 0);
  second->~Engine();
}

TEST_CASE("elementwise::launch_into packs what launch packs, into the caller's outputs, and allocates nothing") {
  FakeGpus gpus;
  KeptSaxpy kept(gpus);
  const DeviceArray &x = kept.x, &y = kept.y, &z = kept.z;
  const Call& plan = kept.plan;
  DeviceArray x2 = gpus.array(1000), y2 = gpus.array(1000), z2 = gpus.array(1000);
  plan.launch({0.25f, x2, y2}, {z2});  // loads the module
  plan.launch_into({0.25f, x2, y2}, {z2});
  REQUIRE(gpus.first->launches.size() == 2);
  {
    const Launch &by_launch = gpus.first->launches[0], &by_launch_into = gpus.first->launches[1];
    CHECK(by_launch_into.field<float>(0) == by_launch.field<float>(0));
    for (std::size_t view = 1; view <= 3; ++view) {
      CHECK(by_launch_into.field<std::uint64_t>(view) == by_launch.field<std::uint64_t>(view));
      CHECK(by_launch_into.field<std::int32_t>(view, 8) == 1000);
    }
    CHECK(by_launch_into.field<std::int32_t>(4) == 1000);
    CHECK(by_launch_into.field<std::uint64_t>(3) == z2.ref().data);
  }
  gpus.first->recording = false;
  const int before = kernc_test::thread_allocations();
  for (int k = 0; k < 10; ++k) plan.launch_into({0.5f * k, x, y}, {z});
  CHECK(kernc_test::thread_allocations() - before == 0);
  CHECK(gpus.first->unrecorded_launches == 10);
  gpus.first->recording = true;
  plan.launch_into({-3.0f, x, y}, {z});
  REQUIRE(gpus.first->launches.size() == 3);
  const Launch& last = gpus.first->launches[2];
  CHECK(last.field<float>(0) == -3.0f);
  CHECK(last.field<std::uint64_t>(1) == x.ref().data);
  CHECK(last.field<std::uint64_t>(2) == y.ref().data);
  CHECK(last.field<std::uint64_t>(3) == z.ref().data);

  // The checks launch() makes, and one of its own: the outputs are required.
  CHECK(contains(error_message([&] { plan.launch_into({2.0f, x, y}, {}); }),
                 "launch_into writes the caller's outputs, and none were given"));
  ArrayRef null_z = z.ref();
  null_z.data = 0;
  CHECK(contains(error_message([&] { plan.launch_into({2.0f, x, y}, {null_z}); }),
                 "saxpy_hot: null data pointer"));
  DeviceArray short_z = gpus.array(999);
  CHECK(error_message([&] { plan.launch_into({2.0f, x, y}, {short_z}); }) ==
        error_message([&] { plan.launch({2.0f, x, y}, {short_z}); }));
  CHECK(error_message([&] { plan.launch_into({2.0f, x, y}, {short_z}); }) != "no error");
  // An input that is the very same view as the output is read before it is written: no copy.
  const std::size_t launches = gpus.first->launches.size();
  ArrayRef z_as_input = z.ref();
  plan.launch_into({2.0f, x, z_as_input}, {z});  // the very same view: no copy
  CHECK(gpus.first->launches.size() == launches + 1);
}

TEST_CASE("elementwise::a kept plan's launch from braced lists allocates only the vector it returns") {
  // NOTE [ argument lists ] (kernc/list_view.hpp) and NOTE [ inline dims ]: the lists are
  // read where the caller built them, and their views copy without allocating.
  FakeGpus gpus;
  KeptSaxpy kept(gpus);
  const ElementwiseKernel& saxpy = kept.saxpy;
  const DeviceArray &x = kept.x, &y = kept.y, &z = kept.z;
  const Call& plan = kept.plan;
  plan.launch({2.0f, x, y}, {z});  // the first launch loads the module
  saxpy({2.0f, x, y}, {z}, gpus.options);              // and the plain call plans once
  gpus.first->recording = false;
  const int before = kernc_test::thread_allocations();
  for (int k = 0; k < 10; ++k) {
    const auto returned = plan.launch({0.5f * k, x, y}, {z});
    CHECK(returned.size() == 1);
  }
  CHECK(kernc_test::thread_allocations() - before == 10);
  const int plain_before = kernc_test::thread_allocations();
  for (int k = 0; k < 10; ++k) saxpy({0.5f * k, x, y}, {z}, gpus.options);  // a remembered plan (NOTE [ call memo ])
  CHECK(kernc_test::thread_allocations() - plain_before == 10);
  CHECK(gpus.first->unrecorded_launches == 20);
  gpus.first->recording = true;
}

TEST_CASE("elementwise::a new engine loads a generated program through the variant index, without generating it") {
  FakeGpus gpus;
  const ElementwiseKernel saxpy{"T a, T x, T y", "T z", "z = a * x + y", "saxpy_hot"};
  const CallTypes types = parse_call_signature("scalar float32, float32, float32 -> float32");
  const Layout layout{};
  const std::string variant = kernc::variant(saxpy, types, layout);
  REQUIRE(!variant.empty());
  const std::string digest = cache::program_digest(kernc::program(saxpy, types, layout));
  int made = 0;
  auto make = [&] {
    ++made;
    return kernc::program(saxpy, types, layout);
  };
  // Each load in an engine of its own: a fresh process, as far as kernc's memory goes.
  auto load_in_new_engine = [&] {
    Engine engine(gpus.engine->config());
    return engine.load(variant, make, engine.device(gpus.first_ordinal));
  };

  const Engine::Loaded first = gpus.engine->load(variant, make, gpus.engine->device(gpus.first_ordinal));
  CHECK(made == 1);
  CHECK(first.outcome == CacheOutcome::compiled);
  const cache::VariantIndex* index = kernc::cache::disk_store(gpus.engine->cache())->variant_index();
  REQUIRE(index);
  const std::string file = index->path(variant);
  CHECK(platform::read_file(file) == digest + "\n");

  const Engine::Loaded second = load_in_new_engine();
  CHECK(made == 1);  // found by the index: no source generated
  CHECK(second.outcome == CacheOutcome::disk_hit);
  CHECK(second.key == first.key);

  SUBCASE("a damaged file: generated, found on disk, and recorded again") {
    std::filesystem::remove(file);
    platform::write_file_atomic(file, "garbage\n", 0600);
    CHECK(load_in_new_engine().key == first.key);
    CHECK(made == 2);
    CHECK(platform::read_file(file) == digest + "\n");
    load_in_new_engine();
    CHECK(made == 2);
  }
  SUBCASE("a file naming a program no cache holds: the same") {
    std::filesystem::remove(file);
    platform::write_file_atomic(file, std::string(64, 'e') + "\n", 0600);
    CHECK(load_in_new_engine().outcome == CacheOutcome::disk_hit);
    CHECK(made == 2);
    CHECK(platform::read_file(file) == digest + "\n");
  }
  SUBCASE("an untrusted file: not read, and replaced by a trusted one") {
    REQUIRE(::chmod(file.c_str(), 0622) == 0);
    load_in_new_engine();
    CHECK(made == 2);
    struct stat info {};
    REQUIRE(::stat(file.c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0600);
  }
  SUBCASE("the cache cleared: the program is compiled again, and the index follows") {
    kernc::cache::disk_store(gpus.engine->cache())->clear();
    CHECK(load_in_new_engine().outcome == CacheOutcome::compiled);
    CHECK(made == 2);
    CHECK(platform::read_file(file) == digest + "\n");
  }
  SUBCASE("an empty variant is neither looked up nor recorded") {
    Engine engine(gpus.engine->config());
    CHECK(engine.load("", make, engine.device(gpus.first_ordinal)).key == first.key);
    CHECK(made == 2);
  }
}

TEST_CASE("elementwise::the plain call records its variant, and a new engine's first call finds it there") {
  FakeGpus gpus;
  const ElementwiseKernel saxpy{"T a, T x, T y", "T z", "z = a * x + y", "saxpy_hot"};
  DeviceArray x = gpus.array(1000), y = gpus.array(1000), z = gpus.array(1000);
  saxpy({2.0f, x, y}, {z}, gpus.options);
  const CallTypes types = parse_call_signature("scalar float32, float32, float32 -> float32");
  const std::string file = kernc::cache::disk_store(gpus.engine->cache())->variant_index()->path(kernc::variant(saxpy, types, Layout{}));
  CHECK(platform::read_file(file) == cache::program_digest(kernc::program(saxpy, types, Layout{})) + "\n");

  // A new engine and a new kernel object: what a fresh process has. Its first call reaches
  // the entry through the file: one naming another program's entry loads that entry
  // (which is why the index is trusted only as the entries are: NOTE [ entry trust ]).
  const ElementwiseKernel other{"T x", "T z", "z = x + 1", "plus_one_hot"};
  gpus.first->param_counts["plus_one_hot"] = 3;
  other({x}, {z}, gpus.options);
  const std::string other_digest =
      cache::program_digest(kernc::program(other, parse_call_signature("float32 -> float32"), Layout{}));
  std::filesystem::remove(file);
  platform::write_file_atomic(file, other_digest + "\n", 0600);
  Engine engine(gpus.engine->config());
  CallOptions options = gpus.options;
  options.engine = &engine;
  const ElementwiseKernel fresh{"T a, T x, T y", "T z", "z = a * x + y", "saxpy_hot"};
  fresh({2.0f, x, y}, {z}, options);
  const std::vector<Engine::Loaded> loaded = engine.loaded();
  REQUIRE(loaded.size() == 1);
  CHECK(loaded[0].key.rfind(cache::program_key(other_digest, Target::parse("sm_90")), 0) == 0);
  CHECK(loaded[0].outcome == CacheOutcome::disk_hit);
}

