#pragma once
// TEMPORARY (plain loops only) until the fibers land.
#include <atomic>
#include <mutex>
#include <string>

#include "host_abi.cuh"

namespace kernc::detail {

class HostLaunchFailure {
 public:
  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }
  std::string message() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return message_;
  }
  void set(const char* message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failed_.load(std::memory_order_relaxed)) message_ = message;
    failed_.store(true, std::memory_order_release);
  }

 private:
  mutable std::mutex mutex_;
  std::string message_;
  std::atomic<bool> failed_{false};
};

const kernc_host_services* host_services();
void run_blocks(kernc_host_launch& launch, kernc_host_entry entry, void** args, HostLaunchFailure& failure);
void run_cooperative_grid(kernc_host_launch& launch, kernc_host_entry entry, void** args, HostLaunchFailure& failure);

}  // namespace kernc::detail
