#include "runtime/host_pool.hpp"

namespace kernc::detail {

HostPool::HostPool(int threads) : threads_(threads < 1 ? 1 : threads) {
  for (int worker = 1; worker < threads_; ++worker) workers_.emplace_back([this, worker] { serve(worker); });
}

HostPool::~HostPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& thread : workers_) thread.join();
}

void HostPool::run(int workers, const std::function<void(int)>& work) {
  if (workers > threads_) workers = threads_;
  if (workers <= 1) {
    work(0);
    return;
  }
  std::lock_guard<std::mutex> turn(run_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    work_ = &work;
    wanted_ = workers;
    finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  work(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return finished_ == wanted_ - 1; });
  work_ = nullptr;
}

void HostPool::serve(int worker) {
  unsigned long long seen = 0;
  for (;;) {
    const std::function<void(int)>* work = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || (generation_ != seen && worker < wanted_); });
      if (stopping_) return;
      seen = generation_;
      work = work_;
    }
    (*work)(worker);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++finished_;
    }
    done_.notify_one();
  }
}

}  // namespace kernc::detail
