//===- Fiber.cpp - threads of a GPU block, run on one host thread ---------===//

#include "devices/cuda/Fiber.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LCC_FIBER_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define LCC_FIBER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(LCC_FIBER_ASAN)
#define LCC_FIBER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(LCC_FIBER_TSAN)
#define LCC_FIBER_TSAN 1
#endif
#ifdef LCC_FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef LCC_FIBER_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#if !defined(__x86_64__)
#error "the CUDA emulator's fibers are written for x86-64"
#endif

// Saves the callee-saved registers and the SSE/x87 control words on the
// current stack, stores its pointer in *save and continues on `next`, a
// stack saved the same way. A fresh stack "returns" into
// lcc_fiber_trampoline with the Fiber in r12 and Fiber::entry in r13.
extern "C" void lcc_fiber_switch(void **save, void *next);
extern "C" void lcc_fiber_trampoline();
asm(R"(
  .text
  .p2align 4
  .globl lcc_fiber_switch
  .hidden lcc_fiber_switch
  .type lcc_fiber_switch,@function
lcc_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size lcc_fiber_switch, .-lcc_fiber_switch

  .p2align 4
  .globl lcc_fiber_trampoline
  .hidden lcc_fiber_trampoline
  .type lcc_fiber_trampoline,@function
lcc_fiber_trampoline:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size lcc_fiber_trampoline, .-lcc_fiber_trampoline
)");

namespace lcc::runtime {

FiberStack::FiberStack(FiberStack &&other) noexcept { *this = std::move(other); }

FiberStack &FiberStack::operator=(FiberStack &&other) noexcept {
  std::swap(mapping, other.mapping);
  std::swap(mappingSize, other.mappingSize);
  std::swap(base, other.base);
  std::swap(size, other.size);
  return *this;
}

FiberStack::~FiberStack() {
  if (mapping)
    ::munmap(mapping, mappingSize);
}

StatusOr<FiberStack> FiberStack::allocate(size_t bytes) {
  size_t page = size_t(::sysconf(_SC_PAGESIZE));
  bytes = (bytes + page - 1) / page * page;
  FiberStack stack;
  // Pages are committed as the kernel first touches them; the guard page
  // below turns an overflow into a fault at once, not a corruption.
  void *mapping = ::mmap(nullptr, bytes + page, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED)
    return Status::error(StatusCode::ResourceExhausted,
                         "cannot map a stack of ", bytes,
                         " bytes for an emulated GPU thread: ",
                         std::strerror(errno));
  ::mprotect(mapping, page, PROT_NONE);
  stack.mapping = static_cast<uint8_t *>(mapping);
  stack.mappingSize = bytes + page;
  stack.base = stack.mapping + page;
  stack.size = bytes;
  return stack;
}

Fiber::~Fiber() {
#ifdef LCC_FIBER_TSAN
  if (threadSanitizerFiber)
    __tsan_destroy_fiber(threadSanitizerFiber);
#endif
}

void Fiber::start(FiberStack &stack, Body body, void *argument) {
  this->body = body;
  this->argument = argument;
  finished = false;
  stackBottom = stack.bottom();
  stackSize = stack.bytes();
  // What lcc_fiber_switch pops, lowest address first: the control words,
  // r15, r14, r13 (Fiber::entry), r12 (this), rbx, rbp, the return address.
  auto top = reinterpret_cast<uintptr_t>(stack.top()) & ~uintptr_t(15);
  auto *frame = reinterpret_cast<uint64_t *>(top - 64 - 16);
  uint32_t mxcsr;
  uint16_t fpcw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpcw));
  frame[0] = uint64_t(mxcsr) | (uint64_t(fpcw) << 32);
  frame[1] = 0;
  frame[2] = 0;
  frame[3] = reinterpret_cast<uint64_t>(&Fiber::entry);
  frame[4] = reinterpret_cast<uint64_t>(this);
  frame[5] = 0;
  frame[6] = 0;
  frame[7] = reinterpret_cast<uint64_t>(&lcc_fiber_trampoline);
  stackPointer = frame;
#ifdef LCC_FIBER_TSAN
  if (!threadSanitizerFiber)
    threadSanitizerFiber = __tsan_create_fiber(0);
#endif
}

bool Fiber::resume() {
#ifdef LCC_FIBER_TSAN
  threadSanitizerScheduler = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(threadSanitizerFiber, 0);
#endif
#ifdef LCC_FIBER_ASAN
  __sanitizer_start_switch_fiber(&schedulerFakeStack, stackBottom, stackSize);
#endif
  lcc_fiber_switch(&schedulerStackPointer, stackPointer);
#ifdef LCC_FIBER_ASAN
  __sanitizer_finish_switch_fiber(schedulerFakeStack, nullptr, nullptr);
#endif
  return finished;
}

void Fiber::yield() {
#ifdef LCC_FIBER_TSAN
  __tsan_switch_to_fiber(threadSanitizerScheduler, 0);
#endif
#ifdef LCC_FIBER_ASAN
  __sanitizer_start_switch_fiber(&fiberFakeStack, schedulerBottom,
                                 schedulerSize);
#endif
  lcc_fiber_switch(&stackPointer, schedulerStackPointer);
#ifdef LCC_FIBER_ASAN
  __sanitizer_finish_switch_fiber(fiberFakeStack, &schedulerBottom,
                                  &schedulerSize);
#endif
}

void Fiber::entry(Fiber *fiber) {
#ifdef LCC_FIBER_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &fiber->schedulerBottom,
                                  &fiber->schedulerSize);
#endif
  fiber->body(fiber->argument);
  fiber->finished = true;
#ifdef LCC_FIBER_TSAN
  __tsan_switch_to_fiber(fiber->threadSanitizerScheduler, 0);
#endif
#ifdef LCC_FIBER_ASAN
  // Null: this stack is done with; ASan may forget its fake frames.
  __sanitizer_start_switch_fiber(nullptr, fiber->schedulerBottom,
                                 fiber->schedulerSize);
#endif
  lcc_fiber_switch(&fiber->stackPointer, fiber->schedulerStackPointer);
  __builtin_unreachable();
}

} // namespace lcc::runtime
