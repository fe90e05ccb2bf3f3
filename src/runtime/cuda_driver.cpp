// The CUDA implementation of detail::Driver over libcuda (see NOTE [ runtime backends ]).

#include <atomic>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "platform/cuda_driver_api.hpp"
#include "runtime/driver.hpp"

namespace kernc::detail {

namespace {

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
std::string describe(const platform::CudaDriverApi& api, CUresult status) {
  const char* name = nullptr;
  const char* text = nullptr;
  api.cuGetErrorName(status, &name);
  api.cuGetErrorString(status, &text);
  return fmt::format("{} ({})", name ? name : fmt::format("CUresult {}", static_cast<int>(status)),
                     text ? text : "no description");
}

void check(const platform::CudaDriverApi& api, CUresult status, const char* call, const std::string& what = {}) {
  if (status == CUDA_SUCCESS) return;
  throw Error(ErrorCode::driver, fmt::format("{}{}{} failed: {}", what, what.empty() ? "" : ": ", call, describe(api, status)));
}

// NOTE [ sticky device faults ]
// A kernel that faults (illegal or misaligned address, trap, assert, hardware stack
// error, ...) leaves its CUDA context unusable: the driver returns the same error from
// every later call in that context, usually first from a call that has nothing to do with
// the kernel (the next synchronisation or copy). kernc reports these as
// ErrorCode::device_fault, remembers the first one, and answers every later call on that
// device with it (naming the call that first saw it) instead of a confusing driver error
// from an unrelated call. The process must be restarted to use the GPU again.
// The context is not all that is lost: with driver 580 on two H100s, a kernel fault on GPU
// 1 made every later call on GPU 0 fail with CUDA_ERROR_ILLEGAL_ADDRESS too, in kernc and in
// a bare CUDA program alike (tools/bench/NOTES.md, issue 32). So the first fault of the
// process is remembered across devices, and a GPU that reports one after another GPU's
// says so: the user looks for the bug on the GPU that faulted first.
struct ProcessFault {
  std::mutex mutex;
  int ordinal = -1;  // the GPU that faulted first in this process; -1 before any fault
  std::string where;
};
ProcessFault& process_fault() {
  static ProcessFault fault;
  return fault;
}

bool is_sticky_fault(CUresult status) {
  switch (status) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

// libcuda, loaded and initialised once per process.
std::shared_ptr<platform::CudaDriverApi> cuda_api(const std::string& library) {
  static std::mutex mutex;
  static std::shared_ptr<platform::CudaDriverApi> api;
  std::lock_guard<std::mutex> lock(mutex);
  if (api) return api;
  try {
    auto loaded = std::make_shared<platform::CudaDriverApi>(platform::CudaDriverApi::load(library));
    check(*loaded, loaded->cuInit(0), "cuInit", "initialising the CUDA driver");
    api = loaded;
  } catch (const Error& error) {
    throw Error(ErrorCode::no_device, fmt::format("no usable NVIDIA GPU: {}", error.what()));
  }
  return api;
}

// KERNC_CUDA_LOAD_ONCE=0 turns context-independent loading off (NOTE [ load once for every
// GPU ]), to compare the two (tools/bench). Read once; a value other than 0 or 1 is an
// error at every load, naming the variable (docs/environment.md).
bool load_once_enabled() {
  static const std::string text = [] {
    const char* value = std::getenv("KERNC_CUDA_LOAD_ONCE");
    return std::string(value ? value : "1");
  }();
  if (text != "0" && text != "1" && !text.empty()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("KERNC_CUDA_LOAD_ONCE must be 0 or 1, not \"{}\"", text));
  }
  return text != "0";
}

class CudaDriver final : public Driver {
 public:
  CudaDriver(std::shared_ptr<platform::CudaDriverApi> api, int ordinal) : api_(std::move(api)), ordinal_(ordinal) {
    int count = 0;
    checked(api_->cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (ordinal < 0 || ordinal >= count) {
      throw Error(ErrorCode::no_device, fmt::format("no GPU with ordinal {}: the driver sees {} GPU(s)", ordinal, count));
    }
    checked(api_->cuDeviceGet(&device_, ordinal), "cuDeviceGet");
    char name[256] = {};
    checked(api_->cuDeviceGetName(name, sizeof name, device_), "cuDeviceGetName");
    props_.name = name;
    auto attribute = [this](CUdevice_attribute which) {
      int value = 0;
      checked(api_->cuDeviceGetAttribute(&value, which, device_), "cuDeviceGetAttribute");
      return value;
    };
    props_.compute_capability = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
                                attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    props_.target = fmt::format("sm_{}", props_.compute_capability);
    props_.multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    size_t total_memory = 0;
    checked(api_->cuDeviceTotalMem(&total_memory, device_), "cuDeviceTotalMem");
    props_.total_memory = total_memory;
    props_.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    props_.max_shared_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    props_.max_shared_per_block_optin = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    props_.max_grid[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    props_.max_grid[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    props_.max_grid[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    props_.max_block[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
    props_.max_block[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
    props_.max_block[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    props_.cooperative_launch = attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH) != 0;
    if (!props_.cooperative_launch) props_.cooperative_launch_missing = "the driver says this GPU cannot launch cooperatively";
    props_.pageable_memory_access = attribute(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS) != 0;
    checked(api_->cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    read_launch_attribute_limits(attribute);
    // Scratch memory (allocate_async) comes from the default pool, which by default hands
    // freed memory back to the system at every synchronisation, so each reduction would
    // map its scratch anew. Keep it (the standard advice for stream-ordered allocation).
    if (api_->cuDeviceGetDefaultMemPool && api_->cuMemPoolSetAttribute) {
      CUmemoryPool pool = nullptr;
      if (api_->cuDeviceGetDefaultMemPool(&pool, device_) == CUDA_SUCCESS) {
        cuuint64_t keep = ~cuuint64_t{0};
        api_->cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
      }
    }
  }

  ~CudaDriver() override {
    if (context_) api_->cuDevicePrimaryCtxRelease(device_);  // errors at exit are ignored
  }

  Backend backend() const noexcept override { return Backend::cuda; }
  const DeviceProperties& properties() const noexcept override { return props_; }

  void make_current() override {
    throw_if_faulted();
    CUcontext current = nullptr;
    if (api_->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context_) return;
    checked(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  }

  std::uint64_t allocate(std::size_t bytes) override {
    make_current();
    CUdeviceptr address = 0;
    if (bytes > props_.total_memory && props_.total_memory > 0) {
      throw Error(ErrorCode::out_of_memory, fmt::format("allocating {} bytes: more than GPU {} ({}) has in all ({} bytes)",
                                                        bytes, ordinal_, props_.name, props_.total_memory));
    }
    checked(api_->cuMemAlloc(&address, bytes), "cuMemAlloc", fmt::format("allocating {} bytes", bytes));
    return address;
  }

  std::uint64_t allocate_async(std::size_t bytes, void* stream) override {
    if (!api_->cuMemAllocAsync || !api_->cuMemFreeAsync) return 0;
    make_current();
    CUdeviceptr address = 0;
    checked(api_->cuMemAllocAsync(&address, bytes, static_cast<CUstream>(stream)), "cuMemAllocAsync",
          fmt::format("allocating {} bytes of scratch memory", bytes));
    return address;
  }

  void release_memory(std::uint64_t address, bool stream_ordered, void* stream) noexcept override {
    api_->cuCtxSetCurrent(context_);
    if (stream_ordered) {
      api_->cuMemFreeAsync(address, static_cast<CUstream>(stream));
    } else {
      api_->cuMemFree(address);
    }
  }

  void copy_to_device(std::uint64_t dst, const void* src, std::size_t bytes, void* stream) override {
    make_current();
    checked(api_->cuMemcpyHtoDAsync(dst, src, bytes, static_cast<CUstream>(stream)), "cuMemcpyHtoDAsync",
          "copying to the device");
  }

  void copy_to_host(void* dst, std::uint64_t src, std::size_t bytes, void* stream) override {
    make_current();
    auto s = static_cast<CUstream>(stream);
    checked(api_->cuMemcpyDtoHAsync(dst, src, bytes, s), "cuMemcpyDtoHAsync", "copying to the host");
    checked(api_->cuStreamSynchronize(s), "cuStreamSynchronize", "copying to the host");
  }

  void copy_device(std::uint64_t dst, std::uint64_t src, std::size_t bytes, void* stream) override {
    make_current();
    checked(api_->cuMemcpyDtoDAsync(dst, src, bytes, static_cast<CUstream>(stream)), "cuMemcpyDtoDAsync",
          "copying on the device");
  }

  void fill_bytes(std::uint64_t dst, unsigned char value, std::size_t bytes, void* stream) override {
    make_current();
    checked(api_->cuMemsetD8Async(dst, value, bytes, static_cast<CUstream>(stream)), "cuMemsetD8Async");
  }

  void synchronize() override {
    make_current();
    checked(api_->cuCtxSynchronize(), "cuCtxSynchronize");
  }

  void synchronize_stream(void* stream) override {
    make_current();
    checked(api_->cuStreamSynchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
  }

  bool is_device_pointer(std::uint64_t address) noexcept override {
    unsigned int type = 0;
    api_->cuCtxSetCurrent(context_);
    CUresult status = api_->cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address);
    return status == CUDA_SUCCESS && (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED);
  }

  // Arrays know their device (NOTE [ arrays know their device ], src/kernels/device_check.cpp).
  DeviceId locate(std::uint64_t address) noexcept override {
    unsigned int type = 0, managed = 0;
    int ordinal = -1;
    CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void* values[] = {&type, &managed, &ordinal};
    // Unlike cuPointerGetAttribute, this answers CUDA_SUCCESS with zeros for an address
    // the driver does not know (host memory from malloc, or no memory at all).
    if (api_->cuCtxSetCurrent(context_) != CUDA_SUCCESS ||
        api_->cuPointerGetAttributes(3, which, values, address) != CUDA_SUCCESS) {
      return DeviceId::unknown();
    }
    if (managed || type == CU_MEMORYTYPE_HOST || type == CU_MEMORYTYPE_UNIFIED) return DeviceId::shared(Backend::cuda);
    if (type == CU_MEMORYTYPE_DEVICE && ordinal >= 0) return {Backend::cuda, ordinal};
    if (type == 0) return {Backend::cpu, 0};
    return DeviceId::unknown();
  }

  bool can_access_peer(Driver& other) noexcept override {
    auto* peer = dynamic_cast<CudaDriver*>(&other);
    int can = 0;
    return peer && api_->cuDeviceCanAccessPeer(&can, device_, peer->device_) == CUDA_SUCCESS && can != 0;
  }

  void enable_peer_access(Driver& other) override {
    auto& peer = dynamic_cast<CudaDriver&>(other);
    make_current();
    const CUresult status = api_->cuCtxEnablePeerAccess(peer.context_, 0);
    if (status == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) return;  // idempotent
    checked(status, "cuCtxEnablePeerAccess");
  }

  void* create_stream() override {
    make_current();
    CUstream handle = nullptr;
    checked(api_->cuStreamCreate(&handle, CU_STREAM_DEFAULT), "cuStreamCreate");
    return handle;
  }
  void release_stream(void* stream) noexcept override { api_->cuStreamDestroy(static_cast<CUstream>(stream)); }

  void* create_event() override {
    make_current();
    CUevent handle = nullptr;
    checked(api_->cuEventCreate(&handle, CU_EVENT_DEFAULT), "cuEventCreate");
    return handle;
  }
  void release_event(void* event) noexcept override { api_->cuEventDestroy(static_cast<CUevent>(event)); }
  void record_event(void* event, void* stream) override {
    make_current();
    checked(api_->cuEventRecord(static_cast<CUevent>(event), static_cast<CUstream>(stream)), "cuEventRecord");
  }
  void synchronize_event(void* event) override {
    checked(api_->cuEventSynchronize(static_cast<CUevent>(event)), "cuEventSynchronize");
  }
  float elapsed_ms(void* start, void* stop) override {
    float ms = 0;
    checked(api_->cuEventElapsedTime(&ms, static_cast<CUevent>(start), static_cast<CUevent>(stop)),
          "cuEventElapsedTime");
    return ms;
  }

  // NOTE [ graph capture ] (include/kernc/runtime.hpp)
  void begin_capture(void* stream) override {
    require_graphs();
    make_current();
    checked(api_->cuStreamBeginCapture(static_cast<CUstream>(stream), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            "cuStreamBeginCapture");
  }
  void* end_capture(void* stream) override {
    require_graphs();
    make_current();
    CUgraph graph = nullptr;
    const CUresult status = api_->cuStreamEndCapture(static_cast<CUstream>(stream), &graph);
    if (status == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) {
      if (graph) api_->cuGraphDestroy(graph);
      throw Error(ErrorCode::driver,
                  fmt::format("cuStreamEndCapture failed: {}. A call during the capture could not be captured (an "
                              "allocation, a synchronization, a copy to the host, a module load): pass outputs, and "
                              "launch once before capturing so that the kernels are loaded",
                              describe(*api_, status)));
    }
    checked(status, "cuStreamEndCapture");
    CUgraphExec exec = nullptr;
    const CUresult instantiated = api_->cuGraphInstantiate(&exec, graph, 0);
    api_->cuGraphDestroy(graph);  // the executable graph keeps what it needs
    checked(instantiated, "cuGraphInstantiate");
    return exec;
  }
  void launch_graph(void* graph, void* stream) override {
    require_graphs();
    make_current();
    checked(api_->cuGraphLaunch(static_cast<CUgraphExec>(graph), static_cast<CUstream>(stream)), "cuGraphLaunch");
  }
  void release_graph(void* graph) noexcept override {
    if (api_->cuGraphExecDestroy) api_->cuGraphExecDestroy(static_cast<CUgraphExec>(graph));
  }

  void* load_module(const std::string& image) override {
    make_current();
    CUmodule module = nullptr;
    // PTX must be NUL-terminated for the driver; a cubin is read by its ELF header.
    std::string terminated = image + '\0';
    checked(api_->cuModuleLoadData(&module, terminated.data()), "cuModuleLoadData", "loading a module");
    return module;
  }
  void release_module(void* module) noexcept override { api_->cuModuleUnload(static_cast<CUmodule>(module)); }

  // NOTE [ load once for every GPU ]
  // cuModuleLoadData loads an image into one context: a kernel used on N GPUs was read from
  // the cache, checked (NOTE [ entry trust ], src/cache/local_store.hpp) and loaded N times.
  // CUDA 12.0's context-independent loading loads the image once for the process
  // (cuLibraryLoadData) and gives each context its module of it on demand
  // (cuLibraryGetModule), which is where the driver refuses a binary this GPU cannot run,
  // as cuModuleLoadData would. So the Engine (src/kernels/engine.cpp) keeps one Library per
  // (backend, cache key) and asks each device for its Module of it: a second GPU's first
  // call finds the library and costs the driver's per-context load of a module it already
  // holds, with no cache read, no trust check and no copy of the image. The per-context
  // module (not cuLibraryGetKernel + cuKernelGetFunction) keeps everything after loading
  // as it was: functions and globals are found per context with cuModuleGetFunction and
  // cuModuleGetGlobal, each context's CUfunction carries its own attributes (the dynamic
  // shared-memory opt-in, the non-portable cluster size), and graphs capture launches of
  // those functions unchanged. The module belongs to the library (cuLibraryUnload unloads
  // it from every context), so release_module is never called on it. Drivers without the
  // cuLibrary symbols, and KERNC_CUDA_LOAD_ONCE=0, load a module per context as before;
  // HIP and the host backend load per device (Driver::load_library's default).
  void* load_library(const std::string& image) override {
    if (!api_->cuLibraryLoadData || !api_->cuLibraryGetModule || !api_->cuLibraryUnload || !load_once_enabled()) {
      return nullptr;
    }
    make_current();
    CUlibrary library = nullptr;
    std::string terminated = image + '\0';  // as for cuModuleLoadData
    checked(api_->cuLibraryLoadData(&library, terminated.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
            "cuLibraryLoadData", "loading a library");
    return library;
  }
  void release_library(void* library) noexcept override {
    if (api_->cuLibraryUnload) api_->cuLibraryUnload(static_cast<CUlibrary>(library));
  }
  void* library_module(void* library) override {
    make_current();
    CUmodule module = nullptr;
    checked(api_->cuLibraryGetModule(&module, static_cast<CUlibrary>(library)), "cuLibraryGetModule",
            fmt::format("loading a library's module on GPU {}", ordinal_));
    return module;
  }

  void* find_function(void* module, const std::string& name) override {
    make_current();
    CUfunction function = nullptr;
    CUresult status = api_->cuModuleGetFunction(&function, static_cast<CUmodule>(module), name.c_str());
    if (status == CUDA_ERROR_NOT_FOUND) return nullptr;
    checked(status, "cuModuleGetFunction", "finding kernel " + name);
    return function;
  }

  bool find_global(void* module, const std::string& name, std::uint64_t* address, std::size_t* bytes) override {
    make_current();
    CUdeviceptr found = 0;
    size_t size = 0;
    CUresult status = api_->cuModuleGetGlobal(&found, &size, static_cast<CUmodule>(module), name.c_str());
    if (status == CUDA_ERROR_NOT_FOUND) return false;
    checked(status, "cuModuleGetGlobal", "finding global " + name);
    *address = found;
    *bytes = size;
    return true;
  }

  FunctionAttributes attributes(void* function) override {
    auto get = [&](CUfunction_attribute which) {
      int value = 0;
      checked(api_->cuFuncGetAttribute(&value, which, static_cast<CUfunction>(function)), "cuFuncGetAttribute");
      return value;
    };
    FunctionAttributes a;
    a.registers = get(CU_FUNC_ATTRIBUTE_NUM_REGS);
    a.static_shared_bytes = get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    a.max_dynamic_shared_bytes = get(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    a.max_threads_per_block = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    a.local_bytes = get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    a.const_bytes = get(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
    a.ptx_version = get(CU_FUNC_ATTRIBUTE_PTX_VERSION);
    a.binary_version = get(CU_FUNC_ATTRIBUTE_BINARY_VERSION);
    a.cache_mode_ca = get(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA);
    a.preferred_shared_carveout = get(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
    return a;
  }

  void set_max_dynamic_shared(void* function, int bytes) override {
    checked(api_->cuFuncSetAttribute(static_cast<CUfunction>(function), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          bytes),
          "cuFuncSetAttribute");
  }

  void set_preferred_shared_carveout(void* function, int percent) override {
    checked(api_->cuFuncSetAttribute(static_cast<CUfunction>(function), CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                     percent),
            "cuFuncSetAttribute", "setting the preferred shared-memory carveout");
  }

  int max_active_blocks_per_multiprocessor(void* function, int block_threads, std::size_t dynamic_shared) override {
    make_current();
    int blocks = 0;
    checked(api_->cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, static_cast<CUfunction>(function), block_threads,
                                                              dynamic_shared),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    return blocks;
  }

  int max_active_clusters(void* function, const LaunchConfig& c) override {
    make_current();
    auto f = static_cast<CUfunction>(function);
    if (!api_->cuOccupancyMaxActiveClusters) require_launch_ex();
    if (1ull * c.cluster[0] * c.cluster[1] * c.cluster[2] > 8) {
      checked(api_->cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), "cuFuncSetAttribute",
              "allowing a non-portable cluster size");
    }
    LaunchAttributes attributes(c, /*cooperative=*/false, /*programmatic=*/false);
    attributes.config.hStream = nullptr;  // the occupancy does not depend on the stream
    int clusters = 0;
    const CUresult status = api_->cuOccupancyMaxActiveClusters(&clusters, f, &attributes.config);
    // A cluster the GPU cannot hold at all is refused as an invalid size: none fits.
    if (status == CUDA_ERROR_INVALID_CLUSTER_SIZE) return 0;
    checked(status, "cuOccupancyMaxActiveClusters");
    return clusters;
  }

  int dynamic_shared_limit(void* function) noexcept override {
    int allowed = 0;
    api_->cuFuncGetAttribute(&allowed, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<CUfunction>(function));
    return allowed;
  }

  std::vector<std::size_t> parameter_sizes(void* function, std::optional<std::size_t> count) override {
    std::vector<std::size_t> sizes;
    if (!api_->cuFuncGetParamInfo) return sizes;
    for (size_t index = 0; !count || index < *count; ++index) {
      size_t offset = 0, size = 0;
      if (api_->cuFuncGetParamInfo(static_cast<CUfunction>(function), index, &offset, &size) != CUDA_SUCCESS) break;
      sizes.push_back(size);
    }
    return sizes;
  }

  void launch(void* function, const LaunchConfig& c, void** args) override {
    make_current();
    auto f = static_cast<CUfunction>(function);
    auto stream = static_cast<CUstream>(c.stream.handle);
    // NOTE [ launch attributes ] (src/runtime/device.cpp): plain launches stay cuLaunchKernel.
    if (c.has_attributes() || (c.cooperative && api_->cuLaunchKernelEx)) {
      launch_ex(f, c, args);
      return;
    }
    if (!c.cooperative) {
      checked(api_->cuLaunchKernel(f, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2], c.shared_bytes,
                                   stream, args, nullptr),
              "cuLaunchKernel");
      return;
    }
    CUresult status = api_->cuLaunchCooperativeKernel(f, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2],
                                                      c.shared_bytes, stream, args);
    if (status == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) {
      // Function::launch checks the grid against the occupancy first; the driver may still
      // refuse (another limit of its own, such as MPS), and says only this.
      throw Error(ErrorCode::launch_config,
                  fmt::format("cuLaunchCooperativeKernel refused a grid of {} x {} x {} blocks: {}", c.grid[0], c.grid[1],
                              c.grid[2], describe(*api_, status)));
    }
    checked(status, "cuLaunchCooperativeKernel");
  }

 private:
  // The cuLaunchKernelEx configuration of a LaunchConfig, with its attributes stored here.
  struct LaunchAttributes {
    CUlaunchConfig config{};
    CUlaunchAttribute values[4]{};
    // `programmatic`: whether the GPU has programmatic dependent launch (sm_90+); before it
    // the attribute is left out and the launch is in plain stream order (NOTE [ launch
    // attributes ]), which is what the device code's empty bridge functions expect (NOTE
    // [ grid dependency bridge ], templates/grid_dependency_bridge.cuh).
    LaunchAttributes(const LaunchConfig& c, bool cooperative, bool programmatic) {
      config.gridDimX = c.grid[0];
      config.gridDimY = c.grid[1];
      config.gridDimZ = c.grid[2];
      config.blockDimX = c.block[0];
      config.blockDimY = c.block[1];
      config.blockDimZ = c.block[2];
      config.sharedMemBytes = c.shared_bytes;
      config.hStream = static_cast<CUstream>(c.stream.handle);
      config.attrs = values;
      auto add = [this](CUlaunchAttributeID id) -> CUlaunchAttributeValue& {
        values[config.numAttrs].id = id;
        return values[config.numAttrs++].value;
      };
      if (c.cluster[0] != 1 || c.cluster[1] != 1 || c.cluster[2] != 1) {
        auto& v = add(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
        v.clusterDim.x = c.cluster[0];
        v.clusterDim.y = c.cluster[1];
        v.clusterDim.z = c.cluster[2];
      }
      if (cooperative) add(CU_LAUNCH_ATTRIBUTE_COOPERATIVE).cooperative = 1;
      if (c.programmatic_dependent_launch && programmatic) {
        add(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION).programmaticStreamSerializationAllowed = 1;
      }
      if (c.priority) add(CU_LAUNCH_ATTRIBUTE_PRIORITY).priority = *c.priority;
    }
  };

  void launch_ex(CUfunction f, const LaunchConfig& c, void** args) {
    require_launch_ex();
    LaunchAttributes attributes(c, c.cooperative, props_.compute_capability >= 90);
    const CUresult status = api_->cuLaunchKernelEx(&attributes.config, f, args, nullptr);
    if (status == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE || status == CUDA_ERROR_INVALID_CLUSTER_SIZE) {
      // Function::launch checked the grid and the cluster first; the driver may still
      // refuse (a limit of its own, such as MPS), and says only this.
      throw Error(ErrorCode::launch_config,
                  fmt::format("cuLaunchKernelEx refused a grid of {} x {} x {} blocks{}: {}", c.grid[0], c.grid[1],
                              c.grid[2],
                              c.cluster[0] * c.cluster[1] * c.cluster[2] != 1
                                  ? fmt::format(" in clusters of {} x {} x {}", c.cluster[0], c.cluster[1], c.cluster[2])
                                  : std::string(),
                              describe(*api_, status)));
    }
    checked(status, "cuLaunchKernelEx");
  }

  void require_launch_ex() const {
    if (api_->cuLaunchKernelEx && api_->cuOccupancyMaxActiveClusters) return;
    throw Error(ErrorCode::launch_config,
                fmt::format("GPU {} ({}): launch attributes (clusters, programmatic dependent launch, priority) need "
                            "cuLaunchKernelEx, which this CUDA driver lacks (CUDA 12.0+); update the driver",
                            ordinal_, props_.name));
  }

  // What Function::launch checks launch attributes against (NOTE [ launch attributes ]).
  template <typename Attribute>
  void read_launch_attribute_limits(Attribute& attribute) {
    if (!api_->cuLaunchKernelEx) {
      props_.cluster_launch_missing = "this CUDA driver has no cuLaunchKernelEx (CUDA 12.0+); update the driver";
    } else if (props_.compute_capability < 90 || attribute(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) == 0) {
      props_.cluster_launch_missing = "thread-block clusters need a GPU of compute capability 9.0 or newer";
    } else {
      props_.cluster_launch = true;
      props_.cluster_launch_missing.clear();
    }
    if (api_->cuCtxGetStreamPriorityRange) {
      // The range is the context's: asked with this device's context current, then the
      // thread's own put back.
      CUcontext previous = nullptr;
      api_->cuCtxGetCurrent(&previous);
      if (api_->cuCtxSetCurrent(context_) == CUDA_SUCCESS) {
        int least = 0, greatest = 0;
        if (api_->cuCtxGetStreamPriorityRange(&least, &greatest) == CUDA_SUCCESS) {
          props_.least_priority = least;
          props_.greatest_priority = greatest;
        }
        api_->cuCtxSetCurrent(previous);
      }
    }
  }

  // A failed driver call as a kernc::Error: out of memory, a sticky fault (remembered; see
  // NOTE [ sticky device faults ]) or any other driver error, each naming the call.
  void require_graphs() const {
    if (api_->cuStreamBeginCapture && api_->cuStreamEndCapture && api_->cuGraphInstantiate && api_->cuGraphLaunch &&
        api_->cuGraphExecDestroy && api_->cuGraphDestroy) {
      return;
    }
    throw Error(ErrorCode::driver, fmt::format("GPU {} ({}): this CUDA driver has no graph capture (cuStreamBeginCapture "
                                               "and cuGraphInstantiate); update the driver",
                                               ordinal_, props_.name));
  }

  void checked(CUresult status, const char* call, const std::string& what = {}) {
    if (status == CUDA_SUCCESS) return;
    const std::string where = fmt::format("{}{}{}", what, what.empty() ? "" : ": ", call);
    if (status == CUDA_ERROR_OUT_OF_MEMORY) {
      throw Error(ErrorCode::out_of_memory, fmt::format("{} failed: {}{}", where, describe(*api_, status), memory_report()));
    }
    if (is_sticky_fault(status)) {
      std::lock_guard<std::mutex> lock(fault_mutex_);
      if (!faulted_.load(std::memory_order_relaxed)) {
        fault_ = fmt::format("GPU {} ({}) is unusable: a kernel faulted with {}, first reported by {}. The CUDA context "
                             "of this GPU cannot recover: every later call on it fails; restart the process",
                             ordinal_, props_.name, describe(*api_, status), where);
        ProcessFault& first = process_fault();
        std::lock_guard<std::mutex> process_lock(first.mutex);
        if (first.ordinal < 0) {
          first.ordinal = ordinal_;
          first.where = where;
        } else if (first.ordinal != ordinal_) {
          fault_ += fmt::format(" (GPU {} faulted first in this process, reported by {}: the driver ended this GPU's "
                                "context with it)",
                                first.ordinal, first.where);
        }
        faulted_.store(true, std::memory_order_release);
      }
      throw Error(ErrorCode::device_fault, fault_);
    }
    throw Error(ErrorCode::driver, fmt::format("{} failed: {}", where, describe(*api_, status)));
  }

  // On every call's path (make_current): one atomic load, the lock only after a fault.
  void throw_if_faulted() {
    if (!faulted_.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(fault_mutex_);
    if (!fault_.empty()) throw Error(ErrorCode::device_fault, fault_);
  }

  // "; GPU 0 (NVIDIA H100) has 12.3 GiB free of 79.1 GiB", or "" when the driver cannot say.
  std::string memory_report() {
    size_t free_bytes = 0, total_bytes = 0;
    if (api_->cuMemGetInfo(&free_bytes, &total_bytes) != CUDA_SUCCESS) return "";
    return fmt::format("; GPU {} ({}) has {:.1f} GiB free of {:.1f} GiB", ordinal_, props_.name,
                       static_cast<double>(free_bytes) / (1ull << 30), static_cast<double>(total_bytes) / (1ull << 30));
  }

  std::shared_ptr<platform::CudaDriverApi> api_;
  int ordinal_ = 0;
  std::atomic<bool> faulted_{false};
  std::mutex fault_mutex_;  // guards fault_, written once
  std::string fault_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  DeviceProperties props_;
};

}  // namespace

std::unique_ptr<Driver> open_cuda_driver(int ordinal, const std::string& library) {
  return std::make_unique<CudaDriver>(cuda_api(library), ordinal);
}

}  // namespace kernc::detail
