//===- PromoteTemporariesToStack.cpp - CPU kernel temporaries on the stack ===//
//
// A CPU dispatch runs once per workgroup and allocates its tile
// temporaries (score blocks, transposed query tiles, accumulators) on entry
// and frees them on exit. From the heap, a workgroup's hundred-odd KiB
// often sits at the top of glibc's heap: freeing it trims the heap (brk
// and a TLB flush) and the next workgroup faults the pages back in, a
// fifth of dense attention's time when its inputs need no padding. On the
// stack they cost nothing.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace lcc {
#define GEN_PASS_DEF_PROMOTETEMPORARIESTOSTACK
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// The bytes of a statically shaped buffer of `type`, or none.
std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bits = type.getElementTypeBitWidth();
  return (type.getNumElements() * bits + 7) / 8;
}

struct PromoteTemporariesToStack
    : lcc::impl::PromoteTemporariesToStackBase<PromoteTemporariesToStack> {
  using PromoteTemporariesToStackBase::PromoteTemporariesToStackBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Only allocations of the function's own body: one inside a loop would
    // grow the stack on every iteration, one inside a branch may be
    // yielded out of it.
    int64_t total = 0;
    SmallVector<memref::AllocOp> promoted;
    for (auto alloc : func.getBody().front().getOps<memref::AllocOp>()) {
      std::optional<int64_t> bytes = staticBytes(alloc.getType());
      if (!bytes || total + *bytes > maxBytes)
        continue;
      if (llvm::any_of(alloc->getUsers(), [](Operation *user) {
            return isa<func::ReturnOp>(user);
          }))
        continue;
      total += *bytes;
      promoted.push_back(alloc);
    }
    for (memref::AllocOp alloc : promoted) {
      OpBuilder b(alloc);
      auto alloca = memref::AllocaOp::create(
          b, alloc.getLoc(), alloc.getType(), alloc.getDynamicSizes(),
          alloc.getSymbolOperands(), alloc.getAlignmentAttr());
      alloc.replaceAllUsesWith(alloca.getResult());
      alloc.erase();
    }
  }
};

} // namespace
