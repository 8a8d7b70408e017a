//===- FoldFillCopies.cpp - copies of a filled buffer as fills ------------===//
//
// One-shot bufferization gives a loop-carried tensor that starts as a fill
// (a flash attention's zero scores, its -inf row maxima) its own buffer and
// copies the filled buffer into the loop's buffer, often once per iteration:
// a GPU kernel spends shared memory on a buffer of zeros and a block-wide
// copy on every key tile. A copy out of a buffer that holds nothing but one
// fill is that fill of the copy's target.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dominance.h"

namespace lcc {
#define GEN_PASS_DEF_FOLDFILLCOPIES
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// The source and target of a whole-buffer copy, or none.
std::optional<std::pair<Value, Value>> copyOperands(Operation *op) {
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return std::make_pair(copy.getSource(), copy.getTarget());
  if (auto copy = dyn_cast<linalg::CopyOp>(op);
      copy && copy.hasPureBufferSemantics())
    return std::make_pair(copy.getInputs()[0], copy.getOutputs()[0]);
  return std::nullopt;
}

/// The one fill of `alloc` and the copies that read it, when those and
/// deallocations are all its uses and the fill dominates every copy.
struct FilledBuffer {
  linalg::FillOp fill;
  SmallVector<Operation *> copies;
};

std::optional<FilledBuffer> filledBuffer(memref::AllocOp alloc,
                                         DominanceInfo &dominance) {
  FilledBuffer filled;
  for (Operation *user : alloc->getUsers()) {
    if (isa<memref::DeallocOp>(user))
      continue;
    if (auto fill = dyn_cast<linalg::FillOp>(user)) {
      if (filled.fill || !fill.hasPureBufferSemantics() ||
          fill.getOutputs()[0] != alloc.getResult())
        return std::nullopt;
      filled.fill = fill;
      continue;
    }
    std::optional<std::pair<Value, Value>> copy = copyOperands(user);
    if (!copy || copy->first != alloc.getResult() ||
        copy->second == alloc.getResult())
      return std::nullopt;
    filled.copies.push_back(user);
  }
  if (!filled.fill || filled.copies.empty())
    return std::nullopt;
  for (Operation *copy : filled.copies)
    if (!dominance.properlyDominates(filled.fill.getOperation(), copy))
      return std::nullopt;
  return filled;
}

struct FoldFillCopies : lcc::impl::FoldFillCopiesBase<FoldFillCopies> {
  void runOnOperation() override {
    DominanceInfo dominance(getOperation());
    SmallVector<memref::AllocOp> allocs;
    getOperation()->walk(
        [&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    for (memref::AllocOp alloc : allocs) {
      std::optional<FilledBuffer> filled = filledBuffer(alloc, dominance);
      if (!filled)
        continue;
      Value value = filled->fill.getInputs()[0];
      for (Operation *copy : filled->copies) {
        OpBuilder b(copy);
        linalg::FillOp::create(b, copy->getLoc(), value,
                               copyOperands(copy)->second);
        copy->erase();
      }
      // Only the fill (and deallocations) use the buffer now.
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        user->erase();
      alloc.erase();
    }
  }
};

} // namespace
