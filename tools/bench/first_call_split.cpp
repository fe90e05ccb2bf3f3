// kernc_first_call_split: where a fresh process's warm-disk first call spends its time,
// the driver's part apart from kernc's (issue 35, item 5: "the warm-disk first call <= 0.3
// ms, or a profile that shows what of the remainder is the driver's").
//
// kernc_bench's fresh-process row times the whole first call of a kernel whose binary is
// in the cache directory. Here each fresh child wraps GPU 0's real driver (or, with --fake,
// the unit tests' fake GPU, tests/unit/fake_driver.hpp) in a decorator that times every
// call kernc makes into it, registers it as GPU 0 (detail::register_device) and makes that
// same first call. A child reports the call's wall time and the time inside each driver
// entry point; the parent prints the median of each over its children. What is left,
// the call less the driver, is kernc's own: look-up, checks, load bookkeeping, planning
// and argument packing, with the page faults and lazy symbol binding a fresh process pays
// for code it runs the first time.
//
// With --fake it needs no GPU (NVRTC compiles the binary for the fake sm_90 GPU), so the
// remainder can be profiled on any machine:
//   perf record -g kernc_first_call_split --fake --child CACHE_DIR UNIQUE
// after a parent run with --keep has left CACHE_DIR.
//
// Usage: kernc_first_call_split [--fake] [--children N] [--keep]
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fake_driver.hpp"  // tests/unit: the fake GPU of the unit tests
#include "first_call.hpp"
#include "kernc/config.hpp"
#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"
#include "median.hpp"
#include "runtime/driver.hpp"

using namespace kernc;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The driver entry points a call can reach, in the order the report lists them.
enum Entry : int {
  kLoadLibrary, kLibraryModule, kLoadModule, kFindFunction, kAttributes, kParameterSizes, kOccupancy,
  kSharedLimit, kSetShared, kLaunch, kSynchronize, kCopies, kMemory, kStreamsEvents, kOther, kEntries
};
const char* const kEntryNames[kEntries] = {
    "load_library (cuLibraryLoadData)", "library_module (cuLibraryGetModule)", "load_module (cuModuleLoadData)",
    "find_function", "attributes (cuFuncGetAttribute)", "parameter_sizes (cuFuncGetParamInfo)",
    "max_active_blocks (occupancy)", "dynamic_shared_limit", "set_max_dynamic_shared / carveout",
    "launch", "synchronize", "copies and fills", "allocate / release", "streams and events", "other"};

struct Tally {
  double ms = 0;
  int calls = 0;
};

// Every call of kernc's into the driver, timed and passed on.
class TimedDriver : public detail::Driver {
 public:
  explicit TimedDriver(std::unique_ptr<detail::Driver> inner) : inner_(std::move(inner)) {}
  std::array<Tally, kEntries> tallies{};
  void reset() { tallies = {}; }

  Backend backend() const noexcept override { return inner_->backend(); }
  const detail::DeviceProperties& properties() const noexcept override { return inner_->properties(); }
  void make_current() override { timed(kOther, [&] { inner_->make_current(); }); }
  std::uint64_t allocate(std::size_t bytes) override { return timed(kMemory, [&] { return inner_->allocate(bytes); }); }
  std::uint64_t allocate_async(std::size_t bytes, void* stream) override {
    return timed(kMemory, [&] { return inner_->allocate_async(bytes, stream); });
  }
  void release_memory(std::uint64_t address, bool ordered, void* stream) noexcept override {
    timed(kMemory, [&] { inner_->release_memory(address, ordered, stream); });
  }
  void copy_to_device(std::uint64_t dst, const void* src, std::size_t bytes, void* stream) override {
    timed(kCopies, [&] { inner_->copy_to_device(dst, src, bytes, stream); });
  }
  void copy_to_host(void* dst, std::uint64_t src, std::size_t bytes, void* stream) override {
    timed(kCopies, [&] { inner_->copy_to_host(dst, src, bytes, stream); });
  }
  void copy_device(std::uint64_t dst, std::uint64_t src, std::size_t bytes, void* stream) override {
    timed(kCopies, [&] { inner_->copy_device(dst, src, bytes, stream); });
  }
  void fill_bytes(std::uint64_t dst, unsigned char value, std::size_t bytes, void* stream) override {
    timed(kCopies, [&] { inner_->fill_bytes(dst, value, bytes, stream); });
  }
  void synchronize() override { timed(kSynchronize, [&] { inner_->synchronize(); }); }
  void synchronize_stream(void* stream) override { timed(kSynchronize, [&] { inner_->synchronize_stream(stream); }); }
  bool is_device_pointer(std::uint64_t address) noexcept override {
    return timed(kOther, [&] { return inner_->is_device_pointer(address); });
  }
  DeviceId locate(std::uint64_t address) noexcept override { return timed(kOther, [&] { return inner_->locate(address); }); }
  bool can_access_peer(Driver& other) noexcept override {
    return timed(kOther, [&] { return inner_->can_access_peer(other); });
  }
  void enable_peer_access(Driver& other) override { timed(kOther, [&] { inner_->enable_peer_access(other); }); }
  void* create_stream() override { return timed(kStreamsEvents, [&] { return inner_->create_stream(); }); }
  void release_stream(void* stream) noexcept override { timed(kStreamsEvents, [&] { inner_->release_stream(stream); }); }
  void* create_event() override { return timed(kStreamsEvents, [&] { return inner_->create_event(); }); }
  void release_event(void* event) noexcept override { timed(kStreamsEvents, [&] { inner_->release_event(event); }); }
  void record_event(void* event, void* stream) override {
    timed(kStreamsEvents, [&] { inner_->record_event(event, stream); });
  }
  void synchronize_event(void* event) override { timed(kSynchronize, [&] { inner_->synchronize_event(event); }); }
  float elapsed_ms(void* start, void* stop) override {
    return timed(kStreamsEvents, [&] { return inner_->elapsed_ms(start, stop); });
  }
  void* load_module(const std::string& image) override { return timed(kLoadModule, [&] { return inner_->load_module(image); }); }
  void release_module(void* module) noexcept override { timed(kOther, [&] { inner_->release_module(module); }); }
  void* find_function(void* module, const std::string& name) override {
    return timed(kFindFunction, [&] { return inner_->find_function(module, name); });
  }
  bool find_global(void* module, const std::string& name, std::uint64_t* address, std::size_t* bytes) override {
    return timed(kOther, [&] { return inner_->find_global(module, name, address, bytes); });
  }
  FunctionAttributes attributes(void* function) override {
    return timed(kAttributes, [&] { return inner_->attributes(function); });
  }
  void set_max_dynamic_shared(void* function, int bytes) override {
    timed(kSetShared, [&] { inner_->set_max_dynamic_shared(function, bytes); });
  }
  void set_preferred_shared_carveout(void* function, int percent) override {
    timed(kSetShared, [&] { inner_->set_preferred_shared_carveout(function, percent); });
  }
  int max_active_blocks_per_multiprocessor(void* function, int threads, std::size_t shared) override {
    return timed(kOccupancy, [&] { return inner_->max_active_blocks_per_multiprocessor(function, threads, shared); });
  }
  int dynamic_shared_limit(void* function) noexcept override {
    return timed(kSharedLimit, [&] { return inner_->dynamic_shared_limit(function); });
  }
  std::vector<std::size_t> parameter_sizes(void* function, std::optional<std::size_t> count) override {
    return timed(kParameterSizes, [&] { return inner_->parameter_sizes(function, count); });
  }
  void launch(void* function, const LaunchConfig& config, void** args) override {
    timed(kLaunch, [&] { inner_->launch(function, config, args); });
  }
  void begin_capture(void* stream) override { timed(kOther, [&] { inner_->begin_capture(stream); }); }
  void* end_capture(void* stream) override { return timed(kOther, [&] { return inner_->end_capture(stream); }); }
  void launch_graph(void* graph, void* stream) override { timed(kLaunch, [&] { inner_->launch_graph(graph, stream); }); }
  void release_graph(void* graph) noexcept override { timed(kOther, [&] { inner_->release_graph(graph); }); }
  void* load_library(const std::string& image) override {
    return timed(kLoadLibrary, [&] { return inner_->load_library(image); });
  }
  void release_library(void* library) noexcept override { timed(kOther, [&] { inner_->release_library(library); }); }
  void* library_module(void* library) override {
    return timed(kLibraryModule, [&] { return inner_->library_module(library); });
  }
  int max_active_clusters(void* function, const LaunchConfig& config) override {
    return timed(kOccupancy, [&] { return inner_->max_active_clusters(function, config); });
  }

 private:
  template <typename Body>
  auto timed(Entry entry, Body&& body) -> decltype(body()) {
    struct Count {
      Tally& tally;
      Clock::time_point start = Clock::now();
      ~Count() {
        tally.ms += ms_since(start);
        ++tally.calls;
      }
    } count{tallies[entry]};
    return body();
  }

  std::unique_ptr<detail::Driver> inner_;
};


// A child: `prepare` compiles the saxpy into the cache directory; `measure` makes the
// first call of a fresh process with the binary on disk, and prints what it measured.
int child(bool fake, const std::string& mode, const std::string& cache_dir, const std::string& unique) {
  std::unique_ptr<detail::Driver> inner;
  if (fake) {
    inner = std::make_unique<test::FakeGpuDriver>();
  } else {
    inner = detail::open_cuda_driver(0, Config::from_environment().cuda_driver_library.value);
  }
  auto owned = std::make_unique<TimedDriver>(std::move(inner));
  TimedDriver& driver = *owned;
  const auto state = detail::register_device(Backend::cuda, 0, std::move(owned));
  Config config = Config::from_environment();
  config.cache_dir.set(cache_dir, "kernc_first_call_split");
  if (mode == "measure") config.compile_policy.set("never", "kernc_first_call_split");
  Engine engine(config);
  CallOptions options;
  options.engine = &engine;
  // What a host program has done before its first kernel: the GPU opened, arrays made.
  Device device = engine.device(0, Backend::cuda);
  auto x = DeviceArray::empty(device, DType::float32, {1024});
  auto z = DeviceArray::empty(device, DType::float32, {1024});
  device.fill_bytes(x.ref().data, 0x3f, 1024 * 4);
  device.synchronize();
  const ElementwiseKernel saxpy = bench::first_call_saxpy(unique);  // kernc_bench's, the same text
  driver.reset();
  const auto start = Clock::now();
  saxpy({2.0f, x, x}, {z}, options);
  device.synchronize();
  const double total_ms = ms_since(start);
  const auto tallies = driver.tallies;
  if (!fake) {  // the fake GPU runs nothing: there is no result to check
    if (const std::string problem = bench::first_call_problem(device, z); !problem.empty()) {
      throw std::runtime_error(problem);
    }
  }
  std::printf("split %.6f", total_ms);
  for (const auto& tally : tallies) std::printf(" %.6f %d", tally.ms, tally.calls);
  std::printf("\n");
  return 0;
}

std::string run_child(const std::vector<std::string>& args) {
  std::string command;
  for (const auto& arg : args) command += "'" + arg + "' ";
  FILE* pipe = ::popen((command + "2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot start " + command);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  if (::pclose(pipe) != 0) throw std::runtime_error("child failed: " + command + "\n" + output);
  return output;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    bool fake = false, keep = false;
    int children = 9;
    std::vector<std::string> rest;
    for (int k = 1; k < argc; ++k) {
      const std::string arg = argv[k];
      if (arg == "--fake") fake = true;
      else if (arg == "--keep") keep = true;
      else if (arg == "--children" && k + 1 < argc) children = std::max(1, std::atoi(argv[++k]));
      else rest.push_back(arg);
    }
    if (rest.size() == 4 && rest[0] == "--child") return child(fake, rest[1], rest[2], rest[3]);
    if (!rest.empty()) {
      std::fprintf(stderr, "usage: %s [--fake] [--children N] [--keep]\n", argv[0]);
      return 2;
    }
    char pattern[] = "/tmp/kernc-first-call-split.XXXXXX";
    if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
    const std::string cache_dir = pattern;
    const std::string unique = std::to_string(::getpid());
    const std::string self = std::filesystem::canonical("/proc/self/exe").string();
    std::vector<std::string> base = {self};
    if (fake) base.push_back("--fake");
    auto with = [&](const char* mode) {
      auto args = base;
      for (const char* word : {"--child", mode}) args.push_back(word);
      args.push_back(cache_dir);
      args.push_back(unique);
      return args;
    };
    run_child(with("prepare"));
    std::vector<double> totals;
    std::array<std::vector<double>, kEntries> entry_ms;
    std::array<int, kEntries> calls{};
    std::vector<double> driver_totals, own;
    for (int k = 0; k < children; ++k) {
      const std::string output = run_child(with("measure"));
      const char* line = std::strstr(output.c_str(), "split ");
      if (!line) throw std::runtime_error("no result from a child: " + output);
      char* end = nullptr;
      const double total = std::strtod(line + 6, &end);
      double driver_sum = 0;
      for (int e = 0; e < kEntries; ++e) {
        const double value = std::strtod(end, &end);
        calls[e] = static_cast<int>(std::strtol(end, &end, 10));
        entry_ms[e].push_back(value);
        driver_sum += value;
      }
      totals.push_back(total);
      driver_totals.push_back(driver_sum);
      own.push_back(total - driver_sum);
    }
    std::printf("warm-disk first call of a fresh process, %s; median of %d children (ms)\n",
                fake ? "the fake GPU (no driver work: kernc's own part alone)" : "GPU 0 through the real driver",
                children);
    std::printf("  %-44s %9.3f\n", "the first call, launch and synchronize", bench::median(totals));
    for (int e = 0; e < kEntries; ++e) {
      if (calls[e] == 0) continue;
      std::printf("    driver: %-36s %9.3f  (%d call(s))\n", kEntryNames[e], bench::median(entry_ms[e]), calls[e]);
    }
    std::printf("  %-44s %9.3f\n", "the driver, all of it", bench::median(driver_totals));
    std::printf("  %-44s %9.3f\n", "kernc's own (the call less the driver)", bench::median(own));
    if (keep) {
      std::printf("cache directory kept: %s (unique %s)\n", cache_dir.c_str(), unique.c_str());
    } else {
      std::filesystem::remove_all(cache_dir);
    }
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "kernc_first_call_split: %s\n", error.what());
    return 1;
  }
}
