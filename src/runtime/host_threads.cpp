// The host backend's fiber scheduler, barriers and fail path: see NOTE [ host fibers ],
// NOTE [ host fail path ] and NOTE [ cooperative host launch ] in host_threads.hpp.

#include "runtime/host_threads.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace kernc::detail {

// Outside the anonymous namespace: HostWorker::Fiber holds one (GCC's -Wsubobject-linkage
// where this file is compiled inside a unity batch).
enum class FiberState : unsigned char { runnable, at_block_barrier, at_warp_barrier, at_grid_barrier, finished };

namespace {

constexpr unsigned kWarpSize = 32;

// The worker whose fibers run on this OS thread (fiber_main takes no arguments).
thread_local HostWorker* tl_worker = nullptr;

HostWorker& worker_of(const kernc_host_launch* launch) { return *static_cast<HostWorker*>(launch->context); }

std::string dim_text(kernc_host_dim d) { return fmt::format("({},{},{})", d.x, d.y, d.z); }

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

// NOTE [ cooperative host launch ]: the barrier the blocks of a cooperative launch share.
class HostGrid {
 public:
  explicit HostGrid(unsigned blocks) : blocks_(blocks) {}

  /// Waits until every block has arrived; false when the launch failed meanwhile.
  bool arrive_and_wait() {
    std::unique_lock lock(mutex_);
    if (failed_) return false;
    ++arrived_;
    if (arrived_ + left_ == blocks_) {
      if (left_ > 0) return diverged(lock);
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
      return true;
    }
    unsigned generation = generation_;
    changed_.wait(lock, [&] { return failed_ || generation_ != generation; });
    return !failed_;
  }

  /// A block returned: the grid barrier can no longer complete if others wait at it.
  void leave() {
    std::unique_lock lock(mutex_);
    ++left_;
    if (!failed_ && arrived_ > 0 && arrived_ + left_ == blocks_) diverged(lock);
  }

  /// Records the launch's first failure and wakes every block waiting at the barrier.
  void fail(const std::string& message) {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = message;
    failed_ = true;
    changed_.notify_all();
  }

  std::optional<std::string> take_failure() {
    std::lock_guard lock(mutex_);
    return std::move(failure_);
  }

 private:
  bool diverged(std::unique_lock<std::mutex>&) {
    if (!failure_) {
      failure_ = fmt::format("this_grid().sync(): {} of {} blocks reached it; the others returned", arrived_, blocks_);
    }
    failed_ = true;
    changed_.notify_all();
    return false;
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  const unsigned blocks_;
  unsigned arrived_ = 0;
  unsigned left_ = 0;
  unsigned generation_ = 0;
  bool failed_ = false;
  std::optional<std::string> failure_;
};

struct HostWorker::Fiber {
  FiberContext context;
  kernc_host_dim thread{0, 0, 0};
  unsigned wait_mask = 0;  // the lanes a warp barrier waits for
  FiberState state = FiberState::runnable;
};

struct HostWorker::Warp {
  unsigned first = 0;          // its lane 0's fiber
  unsigned lanes = 0;          // the lanes that exist (the last warp may be short)
  unsigned arrived = 0;        // lanes waiting at a warp barrier
  unsigned finished = 0;       // lanes returned
};

HostWorker::HostWorker(std::size_t fiber_stack_bytes) {
  std::size_t page = page_size();
  stack_bytes_ = (fiber_stack_bytes + page - 1) / page * page;
  slot_bytes_ = stack_bytes_ + page;
}

HostWorker::~HostWorker() {
  if (stacks_) ::munmap(stacks_, capacity_ * slot_bytes_);
}

std::optional<std::string> HostWorker::take_failure() noexcept {
  std::optional<std::string> out = std::move(failure_);
  failure_.reset();
  return out;
}

void HostWorker::reserve_fibers(unsigned count) {
  if (count <= capacity_) return;
  unsigned capacity = (count + 63) / 64 * 64;
  void* stacks = ::mmap(nullptr, capacity * slot_bytes_, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (stacks == MAP_FAILED) throw std::bad_alloc();
  for (unsigned i = 0; i < capacity; ++i) {
    ::mprotect(static_cast<char*>(stacks) + i * slot_bytes_, page_size(), PROT_NONE);  // guard below the stack
  }
  if (stacks_) ::munmap(stacks_, capacity_ * slot_bytes_);
  stacks_ = stacks;
  capacity_ = capacity;
  // The contexts do not move afterwards (ucontext's point into themselves).
  fibers_ = std::make_unique<Fiber[]>(capacity);
  warps_ = std::make_unique<Warp[]>((capacity + kWarpSize - 1) / kWarpSize);
}

bool HostWorker::run(kernc_host_entry entry, kernc_host_launch launch, void** args) {
  failure_.reset();
  launch.services = host_services();
  launch.context = this;
  launch.dynamic_shared = host_dynamic_shared();
  HostWorker* outer = std::exchange(tl_worker, this);
  in_fiber_ = false;
  // NOTE [ host fail path ]: fail() comes back here. Only trivially destructible locals may
  // live between this setjmp and the longjmp (none in this frame after it).
  if (setjmp(jump_) == 0) entry(&launch, args);
  tl_worker = outer;
  in_fiber_ = false;
  return !failure_;
}

void HostWorker::run_block(const kernc_host_launch* launch, void** args, kernc_host_dim block,
                           void (*thread)(void**, const kernc_host_launch*, kernc_host_dim, kernc_host_dim)) {
  const kernc_host_dim dim = launch->block;
  const unsigned count = dim.x * dim.y * dim.z;
  if (count == 0) return;
  reserve_fibers(count);
  launch_ = launch;
  args_ = args;
  thread_ = thread;
  block_ = block;
  count_ = count;
  finished_ = at_block_barrier_ = at_grid_barrier_ = 0;
  unsigned index = 0;
  for (unsigned z = 0; z < dim.z; ++z) {
    for (unsigned y = 0; y < dim.y; ++y) {
      for (unsigned x = 0; x < dim.x; ++x, ++index) {
        Fiber& fiber = fibers_[index];
        fiber.thread = {x, y, z};
        fiber.state = FiberState::runnable;
        prepare_fiber(fiber.context, static_cast<char*>(stacks_) + index * slot_bytes_ + page_size(), stack_bytes_,
                      &HostWorker::fiber_main);
      }
    }
  }
  for (unsigned w = 0; w * kWarpSize < count; ++w) {
    unsigned lanes = std::min(kWarpSize, count - w * kWarpSize);
    warps_[w] = Warp{w * kWarpSize, lanes == kWarpSize ? ~0u : (1u << lanes) - 1u, 0, 0};
  }
  current_ = 0;
  in_fiber_ = true;
  switch_fiber(home_, fibers_[0].context);
  in_fiber_ = false;
  if (failure_) {
    if (grid_) grid_->fail(*failure_);
    std::longjmp(jump_, 1);
  }
}

void HostWorker::fiber_main() {
  HostWorker& worker = *tl_worker;
  Fiber& fiber = worker.fibers_[worker.current_];
  worker.thread_(worker.args_, worker.launch_, worker.block_, fiber.thread);
  worker.finish_current();
}

void HostWorker::finish_current() {
  Fiber& fiber = fibers_[current_];
  fiber.state = FiberState::finished;
  ++finished_;
  Warp& warp = warps_[current_ / kWarpSize];
  warp.finished |= 1u << (current_ % kWarpSize);
  if (warp.arrived) release_warp(warp);  // lanes that returned no longer hold a warp barrier
  if (finished_ == count_ && grid_) grid_->leave();
  switch_from(current_);  // never comes back: nothing resumes a finished fiber
}

void HostWorker::switch_from(unsigned from) {
  for (unsigned step = 1; step <= count_; ++step) {
    unsigned next = from + step < count_ ? from + step : from + step - count_;
    if (fibers_[next].state != FiberState::runnable) continue;
    if (next == from) return;
    current_ = next;
    switch_fiber(fibers_[from].context, fibers_[next].context);
    return;
  }
  // No fiber can run: the block is done, or stuck at a barrier that cannot complete.
  if (finished_ != count_ && !failure_) failure_ = stuck_message();
  switch_fiber(fibers_[from].context, home_);
}

std::string HostWorker::stuck_message() const {
  unsigned at_warp = count_ - finished_ - at_block_barrier_ - at_grid_barrier_;
  std::string block = dim_text(block_);
  if (at_block_barrier_ == count_ - finished_ && finished_ > 0) {
    return fmt::format("__syncthreads: {} of {} threads of block {} reached it; the others returned", at_block_barrier_,
                       count_, block);
  }
  if (at_grid_barrier_ == count_ - finished_ && finished_ > 0) {
    return fmt::format("this_grid().sync(): {} of {} threads of block {} reached it; the others returned",
                       at_grid_barrier_, count_, block);
  }
  return fmt::format(
      "threads of block {} wait at barriers that cannot complete: {} at __syncthreads, {} at a warp barrier "
      "(__syncwarp, a shuffle or a vote), {} at this_grid().sync(), {} returned, of {}",
      block, at_block_barrier_, at_warp, at_grid_barrier_, finished_, count_);
}

void HostWorker::block_barrier() {
  if (++at_block_barrier_ == count_) {
    for (unsigned i = 0; i < count_; ++i) {
      if (fibers_[i].state == FiberState::at_block_barrier) fibers_[i].state = FiberState::runnable;
    }
    at_block_barrier_ = 0;
    return;  // the last to arrive runs on
  }
  fibers_[current_].state = FiberState::at_block_barrier;
  switch_from(current_);
}

void HostWorker::release_warp(Warp& warp) {
  const unsigned ready = warp.arrived | warp.finished;
  for (unsigned waiting = warp.arrived; waiting;) {
    unsigned lane = static_cast<unsigned>(__builtin_ctz(waiting));
    waiting &= waiting - 1;
    Fiber& fiber = fibers_[warp.first + lane];
    if ((fiber.wait_mask & ~ready) == 0) {
      fiber.state = FiberState::runnable;
      warp.arrived &= ~(1u << lane);
    }
  }
}

void HostWorker::warp_barrier(unsigned mask) {
  Warp& warp = warps_[current_ / kWarpSize];
  const unsigned bit = 1u << (current_ % kWarpSize);
  Fiber& fiber = fibers_[current_];
  fiber.wait_mask = (mask & warp.lanes) | bit;
  fiber.state = FiberState::at_warp_barrier;
  warp.arrived |= bit;
  if ((fiber.wait_mask & ~(warp.arrived | warp.finished)) == 0) {
    release_warp(warp);  // this lane completes the barrier: it runs on
    if (fiber.state == FiberState::runnable) return;
  }
  switch_from(current_);
}

void HostWorker::grid_barrier() {
  if (!grid_) fail("this_grid().sync() needs a cooperative launch (LaunchConfig::cooperative)");
  if (++at_grid_barrier_ == count_) {
    // The whole block is here: wait for the other blocks (their own OS threads).
    if (!grid_->arrive_and_wait()) fail("this_grid().sync(): another block of the cooperative launch failed");
    for (unsigned i = 0; i < count_; ++i) {
      if (fibers_[i].state == FiberState::at_grid_barrier) fibers_[i].state = FiberState::runnable;
    }
    at_grid_barrier_ = 0;
    return;
  }
  fibers_[current_].state = FiberState::at_grid_barrier;
  switch_from(current_);
}

void HostWorker::fail(const char* message) {
  if (!failure_) failure_ = message;
  if (in_fiber_) {
    // Back to run_block's frame on the worker's own stack, which longjmps from there.
    switch_fiber(fibers_[current_].context, home_);
  }
  if (grid_) grid_->fail(*failure_);
  std::longjmp(jump_, 1);
}

// --- the services table -------------------------------------------------------------------

namespace {

void service_run_block(const kernc_host_launch* launch, void** args, kernc_host_dim block,
                       void (*thread)(void**, const kernc_host_launch*, kernc_host_dim, kernc_host_dim)) {
  worker_of(launch).run_block(launch, args, block, thread);
}
void service_block_barrier(const kernc_host_launch* launch) { worker_of(launch).block_barrier(); }
void service_warp_barrier(const kernc_host_launch* launch, unsigned mask) { worker_of(launch).warp_barrier(mask); }
void service_grid_barrier(const kernc_host_launch* launch) { worker_of(launch).grid_barrier(); }
void service_fail(const kernc_host_launch* launch, const char* message) {
  worker_of(launch).fail(message ? message : "the kernel failed");
}

const kernc_host_services kServices = {service_run_block, service_block_barrier, service_warp_barrier,
                                       service_grid_barrier, service_fail};

struct FreeArena {
  void operator()(void* p) const noexcept { std::free(p); }
};

}  // namespace

const kernc_host_services* host_services() noexcept { return &kServices; }

void* host_dynamic_shared() {
  thread_local std::unique_ptr<void, FreeArena> arena;
  if (!arena) {
    arena.reset(std::aligned_alloc(64, kHostMaxSharedBytes));
    if (!arena) throw std::bad_alloc();
  }
  return arena.get();
}

std::optional<std::string> run_cooperative_grid(kernc_host_entry entry, kernc_host_launch launch, void** args,
                                                std::size_t fiber_stack_bytes) {
  const unsigned long long blocks = 1ull * launch.grid.x * launch.grid.y * launch.grid.z;
  HostGrid grid(static_cast<unsigned>(blocks));
  std::vector<std::thread> threads;
  threads.reserve(blocks);
  for (unsigned long long b = 0; b < blocks; ++b) {
    threads.emplace_back([&, b] {
      HostWorker worker(fiber_stack_bytes);
      worker.grid_ = &grid;
      kernc_host_launch own = launch;
      own.block_begin = b;
      own.block_end = b + 1;
      if (!worker.run(entry, own, args)) grid.fail(*worker.failure());
    });
  }
  for (std::thread& thread : threads) thread.join();
  return grid.take_failure();
}

}  // namespace kernc::detail
