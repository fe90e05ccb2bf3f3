#pragma once
// The host backend's worker threads: one fixed pool per host device, running the parts of
// one launch at a time (NOTE [ host launches ] in host_driver.cpp).

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kernc::detail {

class HostPool {
 public:
  /// `threads` workers in all, the calling thread of run() counted as one of them.
  explicit HostPool(int threads);
  ~HostPool();
  HostPool(const HostPool&) = delete;
  HostPool& operator=(const HostPool&) = delete;

  int threads() const noexcept { return threads_; }

  /// Calls `work(worker)` once on each of `workers` threads (the caller's among them, as
  /// worker 0) and returns when every call has returned. One run at a time: concurrent
  /// callers take turns. `work` must not throw.
  void run(int workers, const std::function<void(int worker)>& work);

 private:
  void serve(int worker);

  const int threads_;
  std::mutex run_mutex_;  // one run at a time
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* work_ = nullptr;  // under mutex_
  int wanted_ = 0;                                   // workers of the current run, under mutex_
  int finished_ = 0;                                 // under mutex_
  unsigned long long generation_ = 0;                // under mutex_
  bool stopping_ = false;                            // under mutex_
  std::vector<std::thread> workers_;
};

}  // namespace kernc::detail
