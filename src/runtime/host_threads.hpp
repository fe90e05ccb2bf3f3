#pragma once
// libkernc's side of NOTE [ host kernel ABI ] (templates/host_abi.cuh): the services a host
// program calls (barriers, the fiber scheduler, the fail path) and the per-worker state they
// run on.
//
// NOTE [ host fibers ]
// A block whose program needs per-thread state runs on one OS thread, its CUDA threads as
// fibers (NOTE [ fiber switch ], fiber_context.hpp). A barrier marks the fiber
// waiting and switches straight to the next runnable fiber of the block (round-robin from
// the caller); the last thread to arrive releases the others and runs on, so a barrier costs
// one context switch per thread. Stacks: one mmap'd region per HostWorker, one slot of
// `fiber_stack_bytes` (default kDefaultFiberStackBytes) plus a PROT_NONE guard page below it
// per thread of the largest block seen so far, reused by every later block and launch. No
// allocation happens per block or per barrier, and no system call.
// A barrier that can never complete (threads returned while others wait at __syncthreads,
// or threads wait at different barriers) is found when no fiber can run; it fails the launch
// with a message naming the barrier, the counts and the block, never hangs.
//
// NOTE [ host fail path ]
// services->fail records the first message of the launch on the worker and ends the
// worker's work on the launch with longjmp back to HostWorker::run (from a fiber: first a
// switch back to the worker's own stack, then the longjmp). The frames skipped are the
// program's (the entry, the kernel): like a GPU trap, their destructors do not run. No C++
// exception crosses the program's frames, so programs may be compiled with or without
// -fexceptions.
//
// NOTE [ cooperative host launch ]
// __shared__ is per OS thread (`static thread_local`, templates/host_cuda.cuh) and so is the
// dynamic shared arena, so a cooperative launch cannot run several blocks on one OS thread.
// run_cooperative_grid runs one OS thread per block, every block resident at once; the
// block's threads are fibers as usual, and grid_barrier, once every thread of the block has
// reached it, waits on a HostGrid shared by the block threads. A block that returns while
// others wait at the grid barrier fails the launch, as a divergent __syncthreads does.

#include <csetjmp>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "host_abi.cuh"
#include "runtime/fiber_context.hpp"

namespace kernc::detail {

/// The dynamic shared memory a host block may use: an H100's opt-in limit per block.
inline constexpr unsigned kHostMaxSharedBytes = 228u * 1024u;
/// The stack of each fiber (one per CUDA thread of a block), guard page not included.
inline constexpr std::size_t kDefaultFiberStackBytes = 64u * 1024u;

/// The services every host launch points at (launch.services).
const kernc_host_services* host_services() noexcept;

/// The calling OS thread's dynamic shared memory: kHostMaxSharedBytes, 64-byte aligned, the
/// same address for the thread's whole life (allocated on first use, freed at thread exit).
void* host_dynamic_shared();

class HostGrid;

/// One worker thread's state for host launches: its fiber stacks and the launch's failure.
/// Use it from one OS thread at a time; keep one per pool thread so that stacks are reused.
class HostWorker {
 public:
  explicit HostWorker(std::size_t fiber_stack_bytes = kDefaultFiberStackBytes);
  ~HostWorker();
  HostWorker(const HostWorker&) = delete;
  HostWorker& operator=(const HostWorker&) = delete;

  /// Calls `entry(&launch, args)` on this thread after filling launch.services,
  /// launch.context and launch.dynamic_shared; the caller sets the rest (grid, block,
  /// dynamic_shared_bytes, block_begin/end, threads_as_fibers). Returns false when the
  /// launch failed on this worker; failure() then says why.
  bool run(kernc_host_entry entry, kernc_host_launch launch, void** args);

  /// The first failure of the last run(), or nothing.
  const std::optional<std::string>& failure() const noexcept { return failure_; }
  /// Moves the failure out (nothing left behind).
  std::optional<std::string> take_failure() noexcept;

  // Services (templates/host_abi.cuh), called through host_services().
  void run_block(const kernc_host_launch* launch, void** args, kernc_host_dim block,
                 void (*thread)(void**, const kernc_host_launch*, kernc_host_dim, kernc_host_dim));
  void block_barrier();
  void warp_barrier(unsigned mask);
  void grid_barrier();
  [[noreturn]] void fail(const char* message);

 private:
  friend std::optional<std::string> run_cooperative_grid(kernc_host_entry, kernc_host_launch, void**, std::size_t);
  struct Fiber;
  struct Warp;
  static void fiber_main();
  void reserve_fibers(unsigned count);
  /// Switches from fiber `from` to the next runnable one, or back to the worker's stack when
  /// none is (the block is done, or stuck: then the failure is recorded first).
  void switch_from(unsigned from);
  void finish_current();
  void release_warp(Warp& warp);
  std::string stuck_message() const;

  std::size_t stack_bytes_;
  std::size_t slot_bytes_ = 0;   // stack plus guard page
  void* stacks_ = nullptr;       // mmap'd: capacity_ slots
  unsigned capacity_ = 0;
  std::unique_ptr<Fiber[]> fibers_;
  std::unique_ptr<Warp[]> warps_;

  // The block being run.
  const kernc_host_launch* launch_ = nullptr;
  void** args_ = nullptr;
  void (*thread_)(void**, const kernc_host_launch*, kernc_host_dim, kernc_host_dim) = nullptr;
  kernc_host_dim block_{0, 0, 0};
  unsigned count_ = 0;           // threads of the block
  unsigned current_ = 0;         // the fiber running
  unsigned finished_ = 0;
  unsigned at_block_barrier_ = 0;
  unsigned at_grid_barrier_ = 0;
  bool in_fiber_ = false;

  HostGrid* grid_ = nullptr;     // cooperative launches only
  FiberContext home_;            // the worker's own stack, inside run_block
  std::jmp_buf jump_;            // set by run()
  std::optional<std::string> failure_;
};

/// Runs a cooperative launch (NOTE [ cooperative host launch ]): one OS thread per block of
/// `launch.grid`, each with its own HostWorker; the caller sets grid, block,
/// dynamic_shared_bytes and threads_as_fibers (block_begin/end and the rest are set here).
/// Returns the launch's first failure, or nothing when it succeeded.
std::optional<std::string> run_cooperative_grid(kernc_host_entry entry, kernc_host_launch launch, void** args,
                                                std::size_t fiber_stack_bytes = kDefaultFiberStackBytes);

}  // namespace kernc::detail
