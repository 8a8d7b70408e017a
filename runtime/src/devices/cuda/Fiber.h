//===- Fiber.h - threads of a GPU block, run on one host thread -*- C++ -*-===//
//
// The CUDA emulator runs every thread of a block as a fiber: a stack of its
// own and the registers saved when it yields, so that a kernel stopped at a
// barrier resumes exactly where it was, its values kept, once every other
// thread of the block has arrived. Switching saves only what the x86-64
// System V ABI makes callee-saved (and the SSE and x87 control words), a few
// nanoseconds. The sanitizers are told about each switch.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_FIBER_H
#define LCC_RUNTIME_FIBER_H

#include "support/Status.h"

#include <cstddef>
#include <cstdint>

namespace lcc::runtime {

/// A fiber's stack: mapped once, with a guard page below it, and reused.
class FiberStack {
public:
  FiberStack() = default;
  FiberStack(FiberStack &&other) noexcept;
  FiberStack &operator=(FiberStack &&other) noexcept;
  FiberStack(const FiberStack &) = delete;
  FiberStack &operator=(const FiberStack &) = delete;
  ~FiberStack();

  static StatusOr<FiberStack> allocate(size_t bytes);
  uint8_t *top() const { return base + size; }
  uint8_t *bottom() const { return base; }
  size_t bytes() const { return size; }

private:
  uint8_t *mapping = nullptr;
  size_t mappingSize = 0;
  uint8_t *base = nullptr;
  size_t size = 0;
};

/// A function running on a FiberStack, started and resumed by a scheduler
/// on the host thread's own stack.
class Fiber {
public:
  Fiber() = default;
  Fiber(const Fiber &) = delete;
  Fiber &operator=(const Fiber &) = delete;
  ~Fiber();

  using Body = void (*)(void *argument);

  /// Prepares `fiber` to run `body(argument)` on `stack` from its start at
  /// the next resume(). A fiber whose body returned may be started again.
  void start(FiberStack &stack, Body body, void *argument);
  /// Runs this fiber until it yields or its body returns; returns true when
  /// it returned. Called by the scheduler only.
  bool resume();
  /// Called on this fiber: gives control back to the scheduler; returns at
  /// the next resume().
  void yield();

private:
  static void entry(Fiber *fiber);

  void *stackPointer = nullptr;
  void *schedulerStackPointer = nullptr;
  Body body = nullptr;
  void *argument = nullptr;
  bool finished = false;
  // For the sanitizers: both stacks, and their handles of both sides.
  const void *stackBottom = nullptr;
  size_t stackSize = 0;
  const void *schedulerBottom = nullptr;
  size_t schedulerSize = 0;
  void *fiberFakeStack = nullptr;
  void *schedulerFakeStack = nullptr;
  void *threadSanitizerFiber = nullptr;
  void *threadSanitizerScheduler = nullptr;
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_FIBER_H
