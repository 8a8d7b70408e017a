//===- RematerializeArgumentOps.cpp - recompute what the arguments give ---===//
//
// CSE merges every computation of the same value, wherever it is: a bias
// broadcast into a contraction's init in the forward and the same
// broadcast in a reversible block's recomputation in the backward become
// one tensor, alive from the forward to the backward, one per layer. A
// cheap elementwise op that reads only the function's arguments (the
// parameters) and constants keeps nothing else alive, so it is cloned
// before each of its users instead: each copy lives next to its use.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace lcc {
#define GEN_PASS_DEF_REMATERIALIZEARGUMENTOPS
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// Whether `v` is free to read anywhere in `body`: an argument of the
/// function, or made by an op without operands (a constant, an empty
/// tensor).
bool isFreeToRead(Value v, Block &body) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &body;
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && isMemoryEffectFree(def);
}

/// A cheap elementwise linalg op of free values, used more than once.
bool isRematerializable(Operation &op, Block &body) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || op.getNumResults() != 1 || op.getResult(0).hasOneUse() ||
      op.getResult(0).use_empty() || !isMemoryEffectFree(&op) ||
      linalgOp.getNumLoops() != linalgOp.getNumParallelLoops() ||
      !lcc::isCheapPerElement(&op))
    return false;
  return llvm::all_of(op.getOperands(),
                      [&](Value v) { return isFreeToRead(v, body); });
}

struct RematerializeArgumentOpsPass
    : lcc::impl::RematerializeArgumentOpsBase<RematerializeArgumentOpsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp func) {
      if (func.isExternal())
        return;
      Block &body = func.getBody().front();
      SmallVector<Operation *> candidates;
      for (Operation &op : body)
        if (isRematerializable(op, body))
          candidates.push_back(&op);
      for (Operation *op : candidates) {
        SmallVector<OpOperand *> uses;
        for (OpOperand &use : op->getResult(0).getUses())
          uses.push_back(&use);
        auto userInBody = [&](OpOperand *use) {
          return body.findAncestorOpInBlock(*use->getOwner());
        };
        // The first user keeps the op; every other use gets its own copy,
        // right before its user.
        OpOperand *first =
            *llvm::min_element(uses, [&](OpOperand *x, OpOperand *y) {
              return userInBody(x)->isBeforeInBlock(userInBody(y));
            });
        for (OpOperand *use : uses) {
          if (use == first)
            continue;
          OpBuilder b(userInBody(use));
          use->set(b.clone(*op)->getResult(0));
        }
      }
    });
  }
};

} // namespace
