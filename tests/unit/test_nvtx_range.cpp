// NVTX ranges (NOTE [ NVTX ranges ], src/base/nvtx_range.cpp): their names, that nothing is
// made while they are off, and the ranges a real call opens on the host backend, seen
// through the library's test observer (no profiler is attached here; tools/nsys-ranges shows
// them in Nsight Systems on a GPU machine).

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/nvtx_range.hpp"
#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"
#include "kernc/profiling.hpp"
#include "temp_dir.hpp"

using namespace kernc;
using kernc::test::contains;

namespace {

// Records the name of every range opened while in scope, with ranges on; puts both back.
class ObservedRanges {
 public:
  ObservedRanges() {
    detail::set_nvtx_observer([this](const std::string& name) {
      std::lock_guard<std::mutex> lock(mutex_);
      names_.push_back(name);
    });
    set_nvtx_ranges(true);
  }
  ~ObservedRanges() {
    set_nvtx_ranges(false);
    detail::set_nvtx_observer({});
  }
  std::vector<std::string> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(names_);
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> names_;
};

bool has_range(const std::vector<std::string>& names, const std::string& name) {
  for (const auto& n : names) {
    if (n == name) return true;
  }
  return false;
}

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += "  " + n + "\n";
  return out;
}

// An engine on the cpu runtime whose cache is `dir`.
std::unique_ptr<Engine> host_engine(const std::string& dir) {
  return std::make_unique<Engine>(Config::from_environment([&dir](const char* name) -> const char* {
    const std::string n = name;
    if (n == "KERNC_CACHE_DIR") return dir.c_str();
    if (n == "KERNC_RUNTIME") return "cpu";
    if (n == "KERNC_CACHE_PATH" || n == "KERNC_COMPILE" || n == "KERNC_REMOTE_CACHE" || n == "KERNC_NVTX") return nullptr;
    return std::getenv(name);
  }));
}

}  // namespace

TEST_CASE("nvtx::nvtx_range_name names the phase, the kernel and its variant, and the target") {
  using detail::NvtxPhase;
  const std::string saxpy = detail::nvtx_subject("saxpy", "scalar float32, float32, float32 -> float32 contiguous-i32");
  CHECK(saxpy == "saxpy<scalar float32, float32, float32 -> float32 contiguous-i32>");
  CHECK(detail::nvtx_subject("scale", "") == "scale");
  CHECK(detail::nvtx_range_name(NvtxPhase::compile, saxpy, "sm_90") ==
        "compile saxpy<scalar float32, float32, float32 -> float32 contiguous-i32> sm_90");
  CHECK(detail::nvtx_range_name(NvtxPhase::launch, saxpy) ==
        "launch saxpy<scalar float32, float32, float32 -> float32 contiguous-i32>");
  CHECK(detail::nvtx_range_name(NvtxPhase::module_load, "scale", "sm_80") == "module load scale sm_80");
  CHECK(detail::nvtx_range_name(NvtxPhase::cache_memory, "k", "sm_90") == "cache memory k sm_90");
  CHECK(detail::nvtx_range_name(NvtxPhase::cache_disk, "k", "sm_90") == "cache disk k sm_90");
  CHECK(detail::nvtx_range_name(NvtxPhase::cache_read_only, "k", "sm_90") == "cache read-only k sm_90");
  CHECK(detail::nvtx_range_name(NvtxPhase::cache_remote, "k", "sm_90") == "cache remote k sm_90");
}

TEST_CASE("nvtx::NvtxRange is off by default and then makes no name; on, it names the range once") {
  REQUIRE(nvtx_ranges_built());
  CHECK(!nvtx_ranges());
  int made = 0;
  auto name = [&made] {
    ++made;
    return std::string("launch k");
  };
  {
    const detail::NvtxRange range(name);
    const detail::NvtxSubject subject([&made] {
      ++made;
      return std::string("k");
    });
    CHECK(detail::nvtx_subject_or("fallback") == "fallback");
  }
  CHECK(made == 0);
  ObservedRanges observed;
  {
    const detail::NvtxSubject subject([] { return std::string("saxpy<float32 -> float32 contiguous-i32>"); });
    const detail::NvtxRange range(name);
    CHECK(detail::nvtx_subject_or("fallback") == "saxpy<float32 -> float32 contiguous-i32>");
  }
  CHECK(detail::nvtx_subject_or("fallback") == "fallback");
  CHECK(made == 1);
  CHECK(observed.take() == std::vector<std::string>{"launch k"});
}

TEST_CASE("nvtx::a host call opens launch, cache, compile and module load ranges named after its kernel and variant") {
  kernc::test::TempDir dir;
  const std::string cache_dir = dir / "cache";
  auto engine = host_engine(cache_dir);
  const Device device = engine->device(0);
  const std::string target = device.target().str();
  CallOptions options;
  options.engine = engine.get();
  const ElementwiseKernel saxpy("float32 a, float32 x, float32 y", "float32 z", "z = a * x + y", "nvtx_saxpy");
  const std::vector<float> x{1, 2, 3}, y{10, 20, 30};
  const DeviceArray dx = DeviceArray::from_host(device, DType::float32, {3}, x.data());
  const DeviceArray dy = DeviceArray::from_host(device, DType::float32, {3}, y.data());
  const std::string subject = "nvtx_saxpy<scalar float32, float32, float32 -> float32 contiguous-i32>";

  ObservedRanges observed;
  const Call call = saxpy.plan({2.0f, dx, dy}, {}, options);
  CHECK(call.launch({2.0f, dx, dy})[0].to_host_vector<float>() == std::vector<float>{12, 24, 36});
  std::vector<std::string> first = observed.take();
  INFO("first call's ranges:\n" << listed(first));
  REQUIRE(!first.empty());
  CHECK(first.front() == "launch " + subject);  // the outermost: the load nests in it
  CHECK(has_range(first, "cache memory " + subject + " " + target));
  CHECK(has_range(first, "cache disk " + subject + " " + target));
  CHECK(has_range(first, "compile " + subject + " " + target));
  CHECK(has_range(first, "module load " + subject + " " + target));

  // A kept plan's next launch: the launch alone.
  call.launch({3.0f, dx, dy});
  CHECK(observed.take() == std::vector<std::string>{"launch " + subject});

  // Another engine on the same cache: found on disk, loaded, not compiled.
  auto second = host_engine(cache_dir);
  options.engine = second.get();
  saxpy({2.0f, dx, dy}, {}, options);
  std::vector<std::string> again = observed.take();
  INFO("second engine's ranges:\n" << listed(again));
  CHECK(again.front() == "launch " + subject);
  CHECK(has_range(again, "cache disk " + subject + " " + target));
  CHECK(has_range(again, "module load " + subject + " " + target));
  for (const auto& name : again) CHECK(!contains(name, "compile"));

  // Off again: nothing.
  set_nvtx_ranges(false);
  call.launch({2.0f, dx, dy});
  CHECK(observed.take().empty());
}

TEST_CASE("nvtx::KERNC_NVTX must be 0 or 1, and an engine made from a Config that sets it applies it") {
  auto with = [](const char* value) {
    return Config::from_environment([value](const char* name) -> const char* {
      return std::string(name) == "KERNC_NVTX" ? value : nullptr;
    });
  };
  CHECK(with(nullptr).nvtx.source == "default");
  CHECK(!with(nullptr).nvtx.value);
  CHECK(with("1").nvtx.value);
  CHECK(with("1").nvtx.source == "KERNC_NVTX");
  try {
    with("yes");
    FAIL("no error");
  } catch (const Error& error) {
    CHECK(error.code() == ErrorCode::invalid_argument);
    CHECK(contains(error.what(), "KERNC_NVTX must be 0 or 1, not \"yes\""));
  }
  REQUIRE(!nvtx_ranges());
  {
    Engine engine(with("1"));
    CHECK(nvtx_ranges());
  }
  {
    Engine engine(with("0"));
    CHECK(!nvtx_ranges());
  }
  set_nvtx_ranges(false);
}
