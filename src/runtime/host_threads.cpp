#include "runtime/host_threads.hpp"

#include <cstdlib>
#include <memory>

namespace kernc::detail {
namespace {
struct Abort {};
void* arena() {
  thread_local std::unique_ptr<char, decltype(&std::free)> memory(static_cast<char*>(std::aligned_alloc(64, 227 * 1024)), &std::free);
  return memory.get();
}
void fail(const kernc_host_launch* launch, const char* message) {
  static_cast<HostLaunchFailure*>(launch->context)->set(message);
  throw Abort{};
}
void no_fibers(const kernc_host_launch* launch) { fail(launch, "per-thread state is not built yet"); }
void no_block(const kernc_host_launch* launch, void**, void (*)(void**, const kernc_host_launch*, kernc_host_dim)) {
  no_fibers(launch);
}
const kernc_host_services kServices = {no_block, no_fibers, no_fibers, no_fibers, fail};
}  // namespace

const kernc_host_services* host_services() { return &kServices; }

void run_blocks(kernc_host_launch& launch, kernc_host_entry entry, void** args, HostLaunchFailure& failure) {
  launch.context = &failure;
  launch.dynamic_shared = arena();
  try {
    entry(&launch, args);
  } catch (const Abort&) {
  }
}

void run_cooperative_grid(kernc_host_launch& launch, kernc_host_entry entry, void** args, HostLaunchFailure& failure) {
  run_blocks(launch, entry, args, failure);
}

}  // namespace kernc::detail
