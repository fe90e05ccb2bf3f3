#pragma once
// A CUDA GPU that exists only in the process: the base of the fake drivers that the unit
// tests (test_call_devices.cpp, test_elementwise_launch.cpp, test_raw_module_file.cpp,
// test_runtime_function.cpp) and tools/bench/callpath_profile.cpp register with
// detail::register_device to check kernc's own code without a GPU.
//
// Its properties are an H100's (set in the constructor; props() changes them): sm_90,
// 132 multiprocessors, 1024 threads a block (blocks up to 1024 x 1024 x 64, grids up to
// 2^31-1 x 65535 x 65535), 48 KiB of shared memory a block and 232448 bytes opted in,
// 80 GiB of memory; no cooperative launch, no clusters, one priority.
// Its calls do nothing and succeed, except where they must answer:
//   - allocate: a bump allocator from `first_address`, each allocation 64 KiB aligned;
//   - is_device_pointer: true (every address is the GPU's);
//   - streams and events: nullptr (the default stream), elapsed_ms 0;
//   - load_module: any image loads, as one module;
//   - find_function: any name is found; the handle points to a std::string holding the
//     name, so a launch can tell which kernel it was given (function_name);
//   - find_global: no global exists;
//   - attributes: FunctionAttributes' defaults; one block a multiprocessor; the function's
//     dynamic shared memory limit is the block's 48 KiB; parameter sizes unknown;
//   - launch: nothing runs.
// A test's fake derives from it and overrides only what it does differently (counting,
// recording, placing addresses, refusing images or names).

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/driver.hpp"

namespace kernc::test {

class FakeGpuDriver : public detail::Driver {
 public:
  explicit FakeGpuDriver(std::string name = "Fake GPU", std::uint64_t first_address = 0x7f0000000000ull)
      : next_address_(first_address) {
    props_.name = std::move(name);
    props_.target = "sm_90";
    props_.compute_capability = 90;
    props_.multiprocessors = 132;
    props_.max_threads_per_block = 1024;
    props_.max_shared_per_block = 48 * 1024;
    props_.max_shared_per_block_optin = 232448;
    for (int k = 0; k < 3; ++k) props_.max_block[k] = k < 2 ? 1024 : 64;
    props_.max_grid[0] = 2147483647;
    props_.max_grid[1] = props_.max_grid[2] = 65535;
    props_.total_memory = 80ull << 30;
  }

  /// The properties properties() answers; a test changes them before it opens the device.
  detail::DeviceProperties& props() noexcept { return props_; }
  /// The name behind a handle that find_function returned.
  static const std::string& function_name(void* function) { return *static_cast<const std::string*>(function); }

  Backend backend() const noexcept override { return Backend::cuda; }
  const detail::DeviceProperties& properties() const noexcept override { return props_; }
  void make_current() override {}

  std::uint64_t allocate(std::size_t bytes) override {
    const std::uint64_t address = next_address_;
    next_address_ += (bytes + 0xffff) & ~std::uint64_t{0xffff};
    return address;
  }
  std::uint64_t allocate_async(std::size_t bytes, void*) override { return allocate(bytes); }
  void release_memory(std::uint64_t, bool, void*) noexcept override {}
  void copy_to_device(std::uint64_t, const void*, std::size_t, void*) override {}
  void copy_to_host(void*, std::uint64_t, std::size_t, void*) override {}
  void copy_device(std::uint64_t, std::uint64_t, std::size_t, void*) override {}
  void fill_bytes(std::uint64_t, unsigned char, std::size_t, void*) override {}
  void synchronize() override {}
  void synchronize_stream(void*) override {}
  bool is_device_pointer(std::uint64_t) noexcept override { return true; }

  void* create_stream() override { return nullptr; }
  void release_stream(void*) noexcept override {}
  void* create_event() override { return nullptr; }
  void release_event(void*) noexcept override {}
  void record_event(void*, void*) override {}
  void synchronize_event(void*) override {}
  float elapsed_ms(void*, void*) override { return 0; }

  void* load_module(const std::string&) override { return module_handle(); }
  void release_module(void*) noexcept override {}
  void* find_function(void*, const std::string& name) override {
    auto& slot = functions_[name];
    if (!slot) slot = std::make_unique<std::string>(name);
    return slot.get();
  }
  bool find_global(void*, const std::string&, std::uint64_t*, std::size_t*) override { return false; }

  FunctionAttributes attributes(void*) override { return {}; }
  void set_max_dynamic_shared(void*, int) override {}
  void set_preferred_shared_carveout(void*, int) override {}
  int max_active_blocks_per_multiprocessor(void*, int, std::size_t) override { return 1; }
  int dynamic_shared_limit(void*) noexcept override { return 48 * 1024; }
  std::vector<std::size_t> parameter_sizes(void*, std::optional<std::size_t>) override { return {}; }
  void launch(void*, const LaunchConfig&, void**) override {}

 protected:
  /// The one module every load_module answers.
  void* module_handle() noexcept { return &module_; }

 private:
  detail::DeviceProperties props_;
  std::uint64_t next_address_;
  int module_ = 0;
  std::map<std::string, std::unique_ptr<std::string>> functions_;
};

}  // namespace kernc::test
