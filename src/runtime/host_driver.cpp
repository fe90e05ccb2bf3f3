// The host backend's driver: the Driver interface (runtime/driver.hpp) over the host's
// own memory and cores.

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "host_abi.cuh"
#include "kernc/error.hpp"
#include "runtime/driver.hpp"
#include "runtime/host_pool.hpp"
#include "runtime/host_threads.hpp"

namespace kernc::detail {

// NOTE [ host launches ]
// The host device runs each operation to completion before the call returns: a stream is
// an in-order queue whose every operation is done when it is issued, so work on one
// stream is ordered, synchronize() has nothing to wait for, and an event records the time
// it was recorded at. (A queue drained by a thread of its own would let the host overlap
// its own work with kernels, at the price of a hand-off per launch; the CPU running the
// host's code is the one that runs the kernel, so there is little to overlap.)
// A launch splits its grid over the pool: each worker takes chunks of consecutive blocks
// from a shared counter and hands each chunk to the kernel's entry (NOTE [ host kernel
// ABI ]), so uneven blocks balance and a worker's blocks are neighbours in memory. A
// cooperative launch runs the whole grid on one worker as fibers, every block resident
// at once, so that grid.sync() can wait for all of them.

namespace {

constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kSharedPerBlock = 48 * 1024;
constexpr int kSharedPerBlockOptin = 227 * 1024;  // an H100's opt-in limit

int worker_count() {
  const char* text = std::getenv("KERNC_CPU_THREADS");
  if (text && *text) {
    char* end = nullptr;
    const long count = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || count < 0 || count > 4096) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("KERNC_CPU_THREADS must be a thread count from 0 (one per hardware thread) to 4096, "
                              "not \"{}\"", text));
    }
    if (count > 0) return static_cast<int>(count);
  }
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : static_cast<int>(hardware);
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "host CPU";
}

struct HostFunction {
  std::string name;
  kernc_host_entry entry = nullptr;
  bool needs_threads = false;
  int max_dynamic_shared = kSharedPerBlock;
  int carveout = -1;
};

struct HostModule {
  void* handle = nullptr;
  int fd = -1;  // the in-memory file it was loaded from, open while it is (see load_module)
  bool needs_threads = false;
  const kernc_host_kernel* kernels = nullptr;
  const kernc_host_global* globals = nullptr;
  std::mutex mutex;
  std::vector<std::unique_ptr<HostFunction>> functions;  // under mutex; handed out by address
};

std::string module_path(int fd) { return fmt::format("/proc/self/fd/{}", fd); }

bool still_loaded(int fd) {
  void* handle = ::dlopen(module_path(fd).c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!handle) return false;
  ::dlclose(handle);
  return true;
}

struct HostEvent {
  std::chrono::steady_clock::time_point at{};
  bool recorded = false;
};

class HostDriver final : public Driver {
 public:
  explicit HostDriver(int workers) : pool_(workers) {
    props_.name = fmt::format("{} ({} threads)", cpu_model(), pool_.threads());
    props_.target = host_target().str();
    props_.compute_capability = 0;
    props_.multiprocessors = pool_.threads();
    props_.pageable_memory_access = true;  // its memory is the host's
    props_.max_threads_per_block = kMaxThreadsPerBlock;
    props_.max_shared_per_block = kSharedPerBlock;
    props_.max_shared_per_block_optin = kSharedPerBlockOptin;
    props_.max_grid[0] = 2147483647;
    props_.max_grid[1] = props_.max_grid[2] = 65535;
    props_.max_block[0] = props_.max_block[1] = 1024;
    props_.max_block[2] = 64;
    props_.total_memory = static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
                          static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    props_.cooperative_launch = true;
    // NOTE [ launch attributes ] (src/runtime/device.cpp): launches run in order here, so
    // programmatic dependent launch is the plain order and a priority has nothing to
    // reorder: any priority is taken and ignored. Clusters are refused (cluster_launch_missing).
    props_.cluster_launch_missing =
        "the host backend (Backend::cpu) has no thread-block clusters or distributed shared memory; run clusters on "
        "an sm_90+ GPU";
    props_.greatest_priority = std::numeric_limits<int>::min();
    props_.least_priority = std::numeric_limits<int>::max();
  }

  Backend backend() const noexcept override { return Backend::cpu; }
  const DeviceProperties& properties() const noexcept override { return props_; }
  void make_current() override {}

  std::uint64_t allocate(std::size_t bytes) override {
    // 256-byte aligned, as cudaMalloc's memory is: templates rely on vector alignment.
    const std::size_t rounded = (bytes + 255) / 256 * 256;
    void* memory = std::aligned_alloc(256, rounded == 0 ? 256 : rounded);
    if (!memory) {
      throw Error(ErrorCode::out_of_memory, fmt::format("cannot allocate {} bytes of host memory for the cpu device", bytes));
    }
    return reinterpret_cast<std::uintptr_t>(memory);
  }
  std::uint64_t allocate_async(std::size_t, void*) override { return 0; }
  void release_memory(std::uint64_t address, bool, void*) noexcept override {
    std::free(reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)));
  }
  void copy_to_device(std::uint64_t dst, const void* src, std::size_t bytes, void*) override {
    if (bytes) std::memmove(pointer(dst), src, bytes);
  }
  void copy_to_host(void* dst, std::uint64_t src, std::size_t bytes, void*) override {
    if (bytes) std::memmove(dst, pointer(src), bytes);
  }
  void copy_device(std::uint64_t dst, std::uint64_t src, std::size_t bytes, void*) override {
    if (bytes) std::memmove(pointer(dst), pointer(src), bytes);
  }
  void fill_bytes(std::uint64_t dst, unsigned char value, std::size_t bytes, void*) override {
    if (bytes) std::memset(pointer(dst), value, bytes);
  }
  void synchronize() override {}
  void synchronize_stream(void*) override {}
  // Any address the process can read is the host device's memory.
  bool is_device_pointer(std::uint64_t address) noexcept override { return address != 0; }

  // A stream needs no state (NOTE [ host launches ]); its handle only has to be unique.
  void* create_stream() override { return new char; }
  void release_stream(void* stream) noexcept override { delete static_cast<char*>(stream); }
  void* create_event() override { return new HostEvent; }
  void release_event(void* event) noexcept override { delete static_cast<HostEvent*>(event); }
  void record_event(void* event, void*) override {
    auto* host = static_cast<HostEvent*>(event);
    host->at = std::chrono::steady_clock::now();
    host->recorded = true;
  }
  void synchronize_event(void*) override {}
  float elapsed_ms(void* start, void* stop) override {
    const auto* a = static_cast<HostEvent*>(start);
    const auto* b = static_cast<HostEvent*>(stop);
    if (!a->recorded || !b->recorded) {
      throw Error(ErrorCode::invalid_argument, "elapsed time between events: both events must have been recorded");
    }
    return std::chrono::duration<float, std::milli>(b->at - a->at).count();
  }

  void* load_module(const std::string& image) override;
  void release_module(void* module) noexcept override {
    auto* host = static_cast<HostModule*>(module);
    if (host->handle) ::dlclose(host->handle);
    // A program whose thread_local state (threadIdx, __shared__ arrays) a live thread has
    // touched stays loaded after dlclose until that thread exits, and the pool's threads
    // live as long as the process. Its file stays open then too, so that its descriptor's
    // number, and so its name, is never another module's (see load_module).
    if (host->fd >= 0 && !still_loaded(host->fd)) ::close(host->fd);
    delete host;
  }
  void* find_function(void* module, const std::string& name) override;
  bool find_global(void* module, const std::string& name, std::uint64_t* address, std::size_t* bytes) override;

  FunctionAttributes attributes(void* function) override {
    const auto* host = static_cast<HostFunction*>(function);
    FunctionAttributes attributes;
    attributes.max_threads_per_block = kMaxThreadsPerBlock;
    attributes.max_dynamic_shared_bytes = host->max_dynamic_shared;
    attributes.preferred_shared_carveout = host->carveout;
    return attributes;
  }
  void set_max_dynamic_shared(void* function, int bytes) override {
    static_cast<HostFunction*>(function)->max_dynamic_shared = bytes;
  }
  void set_preferred_shared_carveout(void* function, int percent) override {
    static_cast<HostFunction*>(function)->carveout = percent;
  }
  int max_active_blocks_per_multiprocessor(void*, int block_threads, std::size_t) override {
    // A cooperative grid runs as fibers on one worker; as a GPU's multiprocessor holds
    // 2048 threads, so does each worker's share of the grid.
    return block_threads <= 0 ? 0 : std::max(1, 2048 / block_threads);
  }
  int dynamic_shared_limit(void* function) noexcept override {
    return static_cast<HostFunction*>(function)->max_dynamic_shared;
  }
  std::vector<std::size_t> parameter_sizes(void*, std::optional<std::size_t>) override { return {}; }
  void launch(void* function, const LaunchConfig& config, void** args) override;

 private:
  static void* pointer(std::uint64_t address) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)); }

  DeviceProperties props_;
  HostPool pool_;
};

void* HostDriver::load_module(const std::string& image) {
  // The binary is loaded from an anonymous in-memory file: nothing is written where
  // another user could replace it between the write and the load.
  const int fd = ::memfd_create("kernc-host-program", MFD_CLOEXEC);
  if (fd < 0) throw Error(ErrorCode::driver, fmt::format("memfd_create for a host program: {}", std::strerror(errno)));
  size_t written = 0;
  while (written < image.size()) {
    const ssize_t n = ::write(fd, image.data() + written, image.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      ::close(fd);
      throw Error(ErrorCode::driver, fmt::format("writing a host program to memory: {}", std::strerror(saved)));
    }
    written += static_cast<size_t>(n);
  }
  // NOTE [ unique names of host programs ]
  // A program is loaded under the name /proc/self/fd/N of its in-memory file, and dlopen
  // takes an object whose name it has loaded already for that object: a closed
  // descriptor's number, reused by the next module's file, would hand back the old
  // module. So the file stays open while the module is loaded, and longer when the module
  // outlives dlclose (release_module).
  void* handle = ::dlopen(module_path(fd).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    ::close(fd);
    const char* why = ::dlerror();
    throw Error(ErrorCode::driver, fmt::format("cannot load a host program: {}", why ? why : "dlopen failed"));
  }
  auto module = std::make_unique<HostModule>();
  module->handle = handle;
  module->fd = fd;
  auto symbol = [handle](const char* name) { return ::dlsym(handle, name); };
  const auto* version = static_cast<const unsigned*>(symbol("kernc_host_abi_version"));
  const auto* target = static_cast<const char*>(symbol("kernc_host_target"));
  const auto* needs = static_cast<const int*>(symbol("kernc_host_needs_threads"));
  module->kernels = static_cast<const kernc_host_kernel*>(symbol("kernc_host_kernels"));
  module->globals = static_cast<const kernc_host_global*>(symbol("kernc_host_globals"));
  auto refuse = [&](const std::string& why) {
    ::dlclose(handle);
    ::close(fd);
    module->handle = nullptr;
    module->fd = -1;
    throw Error(ErrorCode::driver, fmt::format("cannot load a host program: {}", why));
  };
  if (!version || !target || !needs || !module->kernels || !module->globals) {
    refuse("it is not a kernc host program (it lacks the tables of the host kernel ABI)");
  }
  if (*version != KERNC_HOST_ABI_VERSION) {
    refuse(fmt::format("it was built for host kernel ABI {}, this kernc speaks {}", *version, KERNC_HOST_ABI_VERSION));
  }
  const Target built = Target::parse(target);
  if (!host_can_run(built)) {
    refuse(fmt::format("it was built for {}, which this CPU ({}) cannot run", built.str(), props_.target));
  }
  module->needs_threads = *needs != 0;
  return module.release();
}

void* HostDriver::find_function(void* module, const std::string& name) {
  auto* host = static_cast<HostModule*>(module);
  for (const kernc_host_kernel* kernel = host->kernels; kernel->name; ++kernel) {
    if (name != kernel->name || !kernel->entry) continue;
    std::lock_guard<std::mutex> lock(host->mutex);
    for (const auto& function : host->functions) {
      if (function->name == name) return function.get();
    }
    auto function = std::make_unique<HostFunction>();
    function->name = name;
    function->entry = kernel->entry;
    function->needs_threads = host->needs_threads;
    host->functions.push_back(std::move(function));
    return host->functions.back().get();
  }
  return nullptr;
}

bool HostDriver::find_global(void* module, const std::string& name, std::uint64_t* address, std::size_t* bytes) {
  auto* host = static_cast<HostModule*>(module);
  for (const kernc_host_global* global = host->globals; global->name || global->address; ++global) {
    if (global->name && name == global->name) {
      *address = reinterpret_cast<std::uintptr_t>(global->address);
      *bytes = static_cast<std::size_t>(global->bytes);
      return true;
    }
  }
  void* found = ::dlsym(host->handle, name.c_str());
  if (!found) return false;
  Dl_info info{};
  void* entry = nullptr;
  const bool described = ::dladdr1(found, &info, &entry, RTLD_DL_SYMENT) != 0;
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  if (!described || !symbol ||
      ELF64_ST_TYPE(symbol->st_info) != STT_OBJECT) {
    return false;  // a function or something else: not a global
  }
  *address = reinterpret_cast<std::uintptr_t>(found);
  *bytes = static_cast<std::size_t>(symbol->st_size);
  return true;
}

// Each OS thread that runs blocks keeps its own fiber stacks (pool threads and, for
// launches too small to split, the caller).
HostWorker& this_thread_worker() {
  thread_local HostWorker worker;
  return worker;
}

void HostDriver::launch(void* function, const LaunchConfig& config, void** args) {
  const auto* host = static_cast<const HostFunction*>(function);
  const unsigned long long blocks =
      static_cast<unsigned long long>(config.grid[0]) * config.grid[1] * config.grid[2];
  kernc_host_launch base{};
  base.grid = {config.grid[0], config.grid[1], config.grid[2]};
  base.block = {config.block[0], config.block[1], config.block[2]};
  base.dynamic_shared_bytes = config.shared_bytes;
  // A block of one thread needs no fibers whatever its program (the host loops of
  // elementwise and reduction kernels are such blocks): its barriers complete when
  // reached (templates/host_cuda.cuh, need_threads). A cooperative grid's barrier spans
  // blocks, so it keeps them.
  const unsigned long long threads = static_cast<unsigned long long>(config.block[0]) * config.block[1] * config.block[2];
  base.threads_as_fibers = host->needs_threads && (threads > 1 || config.cooperative) ? 1 : 0;
  std::optional<std::string> failure;
  if (config.cooperative) {
    failure = run_cooperative_grid(host->entry, base, args);
  } else {
    const int workers =
        static_cast<int>(std::min<unsigned long long>(blocks, static_cast<unsigned long long>(pool_.threads())));
    // Chunks of neighbouring blocks: few enough hand-offs, small enough to balance.
    const unsigned long long chunk =
        std::max<unsigned long long>(1, blocks / (static_cast<unsigned long long>(workers) * 8));
    std::atomic<unsigned long long> next{0};
    std::atomic<bool> failed{false};
    std::mutex failure_mutex;
    pool_.run(workers, [&](int) {
      HostWorker& worker = this_thread_worker();
      kernc_host_launch mine = base;
      while (!failed.load(std::memory_order_relaxed)) {
        const unsigned long long begin = next.fetch_add(chunk, std::memory_order_relaxed);
        if (begin >= blocks) break;
        mine.block_begin = begin;
        mine.block_end = std::min(blocks, begin + chunk);
        if (!worker.run(host->entry, mine, args)) {
          std::lock_guard<std::mutex> lock(failure_mutex);
          if (!failed.exchange(true)) failure = worker.take_failure();
        }
      }
    });
  }
  if (failure) throw Error(ErrorCode::driver, fmt::format("kernel {} on the cpu device: {}", host->name, *failure));
}

}  // namespace

std::unique_ptr<Driver> open_host_driver(int ordinal) {
  if (ordinal != 0) {
    throw Error(ErrorCode::no_device, fmt::format("the cpu backend has one device, 0; there is no device {}", ordinal));
  }
  return std::make_unique<HostDriver>(worker_count());
}

}  // namespace kernc::detail
