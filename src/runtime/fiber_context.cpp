// NOTE [ fiber switch ] (fiber_context.hpp).

#include "runtime/fiber_context.hpp"

#include <cstdint>

namespace kernc::detail {

#ifdef KERNC_FIBER_SWITCH_ASM

extern "C" {
// kernc_fiber_switch(&from_stack_pointer, to_stack_pointer): pushes the callee-saved
// registers and control words on the running stack, stores the stack pointer in *from,
// loads `to` and pops the same frame from it (prepare_fiber builds one for a new fiber).
void kernc_fiber_switch(void** from, void* to);
// Where a new fiber's first switch returns to: calls the entry that prepare_fiber left in
// rbx, on a 16-byte aligned stack. The entry never returns.
void kernc_fiber_start();
}

asm(R"(
  .text
  .p2align 4
  .globl kernc_fiber_switch
  .hidden kernc_fiber_switch
  .type kernc_fiber_switch, @function
kernc_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  stmxcsr 8(%rsp)
  fnstcw (%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  fldcw (%rsp)
  ldmxcsr 8(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size kernc_fiber_switch, .-kernc_fiber_switch

  .p2align 4
  .globl kernc_fiber_start
  .hidden kernc_fiber_start
  .type kernc_fiber_start, @function
kernc_fiber_start:
  callq *%rbx
  ud2
  .size kernc_fiber_start, .-kernc_fiber_start
)");

void prepare_fiber(FiberContext& fiber, void* base, std::size_t bytes, void (*entry)()) {
  // The frame kernc_fiber_switch pops, from the saved stack pointer up: x87 control word,
  // MXCSR, r15, r14, r13, r12, rbx (the entry), rbp, then the return address. The stack
  // pointer is 8 mod 16 so that kernc_fiber_start's call sees an aligned stack, as a call
  // would.
  auto top = (reinterpret_cast<std::uintptr_t>(base) + bytes) & ~std::uintptr_t{15};
  auto* frame = reinterpret_cast<std::uint64_t*>(top - 88);
  std::uint16_t x87 = 0;
  std::uint32_t mxcsr = 0;
  asm volatile("fnstcw %0" : "=m"(x87));
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  frame[0] = x87;
  frame[1] = mxcsr;
  for (int r = 2; r <= 5; ++r) frame[r] = 0;  // r15..r12
  frame[6] = reinterpret_cast<std::uint64_t>(entry);  // rbx
  frame[7] = 0;                                        // rbp
  frame[8] = reinterpret_cast<std::uint64_t>(&kernc_fiber_start);
  fiber.stack_pointer = frame;
}

void switch_fiber(FiberContext& from, FiberContext& to) { kernc_fiber_switch(&from.stack_pointer, to.stack_pointer); }

#else

void prepare_fiber(FiberContext& fiber, void* base, std::size_t bytes, void (*entry)()) {
  if (!fiber.initialized) ::getcontext(&fiber.context);
  fiber.initialized = true;
  fiber.context.uc_stack.ss_sp = base;
  fiber.context.uc_stack.ss_size = bytes;
  fiber.context.uc_link = nullptr;
  ::makecontext(&fiber.context, entry, 0);
}

void switch_fiber(FiberContext& from, FiberContext& to) { ::swapcontext(&from.context, &to.context); }

#endif

}  // namespace kernc::detail
