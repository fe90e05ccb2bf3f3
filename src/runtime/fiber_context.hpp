#pragma once
// The context switch under the host backend's fibers (NOTE [ host fibers ], host_threads.hpp).
//
// NOTE [ fiber switch ]
// glibc's swapcontext saves and restores the signal mask with a system call on every switch:
// on the lent 16-core Xeons a __syncthreads cost ~480 ns a thread, so a raw block reduction
// ran ~100x the same sum as a ReductionKernel (tools/bench/NOTES.md host-v5). A fiber needs
// only what the System V x86-64 ABI says a call preserves: rbx, rbp, r12-r15, the stack
// pointer, and the x87 and SSE control words; fiber_context.cpp switches those in a dozen
// instructions and no system call. Elsewhere (another architecture), and under
// AddressSanitizer or ThreadSanitizer, which follow stack switches only through the
// interceptors of swapcontext, it stays ucontext. Signal masks are never changed by kernc's
// fibers, so nothing is lost by not saving them.

#include <cstddef>

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#if defined(__has_feature)
#if !__has_feature(address_sanitizer) && !__has_feature(thread_sanitizer)
#define KERNC_FIBER_SWITCH_ASM 1
#endif
#else
#define KERNC_FIBER_SWITCH_ASM 1
#endif
#endif

#ifndef KERNC_FIBER_SWITCH_ASM
#include <ucontext.h>
#endif

namespace kernc::detail {

/// A suspended execution context: a fiber's, or the OS thread's own while its fibers run.
struct FiberContext {
#ifdef KERNC_FIBER_SWITCH_ASM
  void* stack_pointer = nullptr;  // the saved registers lie at the top of its stack
#else
  ucontext_t context;  // glibc's point into themselves: a FiberContext must not move
  bool initialized = false;  // getcontext (a system call) once; makecontext per block
#endif
};

/// Makes `fiber` start `entry` (which must never return) on the stack [base, base + bytes)
/// the next time it is switched to. Cheap: called per block for every fiber.
void prepare_fiber(FiberContext& fiber, void* base, std::size_t bytes, void (*entry)());

/// Saves the running context into `from` and resumes `to`.
void switch_fiber(FiberContext& from, FiberContext& to);

}  // namespace kernc::detail
