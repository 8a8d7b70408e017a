//===- FuseRecomputedFeedForward.cpp - one recomputation, not two ---------===//
//
// A reversible block's backward recomputes its feed-forward's result (to
// recompute the block's input, x2 = y2 - G(y1)) and then differentiates the
// feed-forward, whose backward recomputes the same hidden activations chunk
// by chunk: the up-projection of every position ran twice, a ninth of a
// reversible Reformer layer's feed-forward work. CSE cannot share them
// without holding every chunk's activations at once. The backward is
// instead asked for the result too (attn.feed_forward_backward
// with_output): each chunk's activations then serve both, one chunk at a
// time.
//
//===----------------------------------------------------------------------===//

#include "passes/Training/TrainStep.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

/// Whether `value` is available at `point` (a block argument of its block,
/// or defined before it there).
bool availableAt(Value value, Operation *point) {
  if (auto argument = dyn_cast<BlockArgument>(value))
    return argument.getOwner() == point->getBlock();
  Operation *def = value.getDefiningOp();
  return def->getBlock() == point->getBlock() && def->isBeforeInBlock(point);
}

/// The attributes of `op` that say what it computes (not lcc.recomputed).
SmallVector<NamedAttribute> computingAttributes(Operation *op) {
  SmallVector<NamedAttribute> kept;
  for (NamedAttribute attribute : op->getAttrs())
    if (attribute.getName() != kRecomputedAttrName)
      kept.push_back(attribute);
  return kept;
}

/// Whether `a` and `b` compute the same value: one value, or results of
/// equal pure ops (a clone and its original, lcc.recomputed aside) on
/// operands that are the same, looked at `depth` ops deep. attn.param ops
/// of one name are one weight.
bool sameComputation(Value a, Value b, unsigned depth = 8) {
  if (a == b)
    return true;
  auto result = dyn_cast<OpResult>(a), other = dyn_cast<OpResult>(b);
  if (!result || !other || depth == 0 ||
      result.getResultNumber() != other.getResultNumber())
    return false;
  Operation *opA = result.getOwner(), *opB = other.getOwner();
  if (opA->getName() != opB->getName() || !isPure(opA) ||
      opA->getNumRegions() != 0 || opB->getNumRegions() != 0 ||
      opA->getNumOperands() != opB->getNumOperands() ||
      opA->getResultTypes() != opB->getResultTypes() ||
      computingAttributes(opA) != computingAttributes(opB))
    return false;
  return llvm::all_of_zip(
      opA->getOperands(), opB->getOperands(),
      [&](Value x, Value y) { return sameComputation(x, y, depth - 1); });
}

/// The recomputed feed-forward `backward` differentiates: a clone marked
/// lcc.recomputed on the same input, weights, activation and chunks,
/// before it, at which every operand of `backward` is available.
FeedForwardOp recomputedForward(FeedForwardBackwardOp backward) {
  for (Operation *user : backward.getInput().getUsers()) {
    auto forward = dyn_cast<FeedForwardOp>(user);
    if (!forward || !forward->hasAttr(kRecomputedAttrName) ||
        forward->getBlock() != backward->getBlock() ||
        !forward->isBeforeInBlock(backward) ||
        forward.getActivation() != backward.getActivation() ||
        forward.getChunks() != backward.getChunks() ||
        forward.getUpWeight() != backward.getUpWeight() ||
        forward.getUpBias() != backward.getUpBias() ||
        forward.getDownWeight() != backward.getDownWeight() ||
        !llvm::all_of(backward->getOperands(), [&](Value operand) {
          return availableAt(operand, forward);
        }))
      continue;
    // The last block's clone recomputes what the forward computed on the
    // same stored output: lowered, CSE gives both one result, and fused,
    // the down-projection would run again.
    bool computedByForward = false;
    backward->getParentOp()->walk([&](FeedForwardOp other) {
      computedByForward |=
          !other->hasAttr(kRecomputedAttrName) &&
          sameComputation(other.getResult(), forward.getResult());
    });
    if (computedByForward)
      return nullptr;
    return forward;
  }
  return nullptr;
}

} // namespace

void lcc::training::fuseRecomputedFeedForwards(func::FuncOp func) {
  SmallVector<FeedForwardBackwardOp> backwards;
  func.walk([&](FeedForwardBackwardOp op) {
    if (!op.getDownBias() && op->hasAttr(kBackwardOfRecomputedAttrName))
      backwards.push_back(op);
  });
  for (FeedForwardBackwardOp backward : backwards) {
    FeedForwardOp forward = recomputedForward(backward);
    if (!forward)
      continue;
    OpBuilder b(forward);
    SmallVector<Type> types(backward->getResultTypes());
    types.push_back(forward.getType());
    auto fused = FeedForwardBackwardOp::create(
        b, backward.getLoc(), types, backward.getActivationAttr(),
        backward.getInput(), backward.getUpWeight(), backward.getUpBias(),
        backward.getDownWeight(), backward.getResultGrad(),
        forward.getDownBias(), backward.getChunksAttr());
    fused->setDiscardableAttrs(backward->getDiscardableAttrDictionary());
    forward.getResult().replaceAllUsesWith(fused.getOutput());
    backward.replaceAllUsesWith(fused->getResults().drop_back());
    backward.erase();
    forward.erase();
  }
}
