// NOTE [ host kernel ABI ]
// The contract between libkernc's host backend (src/runtime/host_driver.cpp) and a kernel
// program compiled for the host (Backend::cpu) into a shared object. Plain C, so that it
// means the same to both sides whatever their C++ flags; both include this one file.
//
// For each kernel the program exports `void kernc_host_entry_<N>(const kernc_host_launch*,
// void** args)` (N numbers the kernels; the table `kernc_host_kernels` maps names to it).
// The runtime splits a launch's grid over its worker threads and calls the entry once per
// worker with a range of linear block indices; `args[k]` points at the k-th parameter's
// bytes, exactly as for cuLaunchKernel. The entry runs each block of its range: when the
// program needs per-thread state (`kernc_host_needs_threads`: barriers, warp functions, grid
// sync), through `services->run_block`, which runs the block's threads as fibers calling
// `thread` for each; otherwise as a plain loop over the threads.
// Bump KERNC_HOST_ABI_VERSION on any change: it is part of every host program's cache key
// and checked when a program is loaded.
#ifndef KERNC_HOST_ABI_CUH
#define KERNC_HOST_ABI_CUH

#define KERNC_HOST_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kernc_host_dim {
  unsigned x, y, z;
} kernc_host_dim;

struct kernc_host_launch;

// What libkernc offers a running kernel. `context` is the runtime's per-worker state.
typedef struct kernc_host_services {
  // Runs block `block` of the launch with one fiber per thread; `thread(args, launch, block,
  // thread_index)` runs one thread to completion (it may call the barriers below). Returns
  // when every thread of the block has returned (in a cooperative launch, possibly later:
  // see NOTE [ cooperative host launch ], src/runtime/host_threads.hpp).
  void (*run_block)(const struct kernc_host_launch* launch, void** args, kernc_host_dim block,
                    void (*thread)(void** args, const struct kernc_host_launch* launch, kernc_host_dim block,
                                   kernc_host_dim thread_index));
  // __syncthreads: returns when every thread of the caller's block has called it.
  void (*block_barrier)(const struct kernc_host_launch* launch);
  // __syncwarp and the warp functions: returns when every thread of the caller's warp (32
  // lanes of linear thread index, the last warp of a block possibly shorter) whose lane is
  // in `mask` has called it or returned from the kernel.
  void (*warp_barrier)(const struct kernc_host_launch* launch, unsigned mask);
  // cooperative_groups::this_grid().sync(): returns when every thread of the grid has
  // called it (cooperative launches only; the runtime then runs the whole grid at once).
  void (*grid_barrier)(const struct kernc_host_launch* launch);
  // Writes a message the runtime raises as kernc::Error(launch_failed) after the launch
  // (a kernel that traps, a barrier in a program compiled without per-thread state), then
  // ends the calling thread's work on this launch.
  void (*fail)(const struct kernc_host_launch* launch, const char* message);
} kernc_host_services;

typedef struct kernc_host_launch {
  kernc_host_dim grid;
  kernc_host_dim block;
  unsigned dynamic_shared_bytes;
  // This worker's dynamic shared memory (at least dynamic_shared_bytes, 16-byte aligned;
  // the same address for every launch on this worker thread).
  void* dynamic_shared;
  // Linear block indices [block_begin, block_end) are this call's (x fastest).
  unsigned long long block_begin;
  unsigned long long block_end;
  // Whether blocks run as fibers (services->run_block) or as plain loops.
  int threads_as_fibers;
  const kernc_host_services* services;
  void* context;  // the runtime's; the kernel never reads it
} kernc_host_launch;

typedef void (*kernc_host_entry)(const kernc_host_launch* launch, void** args);

// One kernel of a program: its name as the runtime looks it up (the extern "C" name, or a
// name expression's lowered name) and its entry.
typedef struct kernc_host_kernel {
  const char* name;
  kernc_host_entry entry;
} kernc_host_kernel;

// One global a name expression names (a `__device__` variable template, say): its lowered
// name, address and size. Globals named plainly are found with dlsym.
typedef struct kernc_host_global {
  const char* name;
  void* address;
  unsigned long long bytes;
} kernc_host_global;

// A host program exports (all extern "C"; src/compiler/host_entries.cpp writes them):
//   const unsigned kernc_host_abi_version;         // KERNC_HOST_ABI_VERSION
//   const int kernc_host_needs_threads;            // 1: run blocks as fibers
//   const char kernc_host_target[];                // the target it was built for ("cpu-x86-64-v3")
//   const kernc_host_kernel kernc_host_kernels[];  // ends with {0, 0}; entries may be 0 (a
//                                                  // name expression naming a global)
//   const kernc_host_global kernc_host_globals[];  // ends with {0, 0, 0}; names may be 0

#ifdef __cplusplus
}
#endif

#endif  // KERNC_HOST_ABI_CUH
