//===- ReductionAccumulators.cpp - reduction loops' sums in registers -----===//

#include "compiler/ReductionAccumulators.h"
#include "compiler/DispatchBuffers.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

using namespace mlir;

namespace {

/// Whether an op of `loop`'s body other than `load` and `store` may touch
/// the buffer `root` (ops that do not describe their effects may).
bool touchedElsewhere(scf::ForOp loop, Value root, Operation *load,
                      Operation *store) {
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    if (op == load || op == store)
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return WalkResult::advance();
      return WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      Value target = effect.getValue();
      if (!target || lcc::viewedBuffer(target) == root)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return walk.wasInterrupted();
}

/// Whether `a` and `b` are the same index: one value, or the results of two
/// equal side-effect-free ops of the same operands (linalg's loops compute
/// each access's indices apart).
bool sameIndex(Value a, Value b) {
  if (a == b)
    return true;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  return x && y && isPure(x) && isPure(y) &&
         OperationEquivalence::isEquivalentTo(
             x, y, OperationEquivalence::IgnoreLocations);
}

/// The load and store of one accumulator of `loop`, or none.
std::optional<std::pair<memref::LoadOp, memref::StoreOp>>
findAccumulator(scf::ForOp loop) {
  for (auto store : loop.getBody()->getOps<memref::StoreOp>()) {
    // The element, not the value stored, is the same on every step.
    if (!loop.isDefinedOutsideOfLoop(store.getMemRef()) ||
        !llvm::all_of(store.getIndices(),
                      [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }))
      continue;
    for (auto load : loop.getBody()->getOps<memref::LoadOp>()) {
      if (load.getMemRef() != store.getMemRef() ||
          !llvm::equal(load.getIndices(), store.getIndices(), sameIndex) ||
          !load->isBeforeInBlock(store))
        continue;
      if (touchedElsewhere(loop, lcc::viewedBuffer(store.getMemRef()), load,
                           store))
        break;
      return std::make_pair(load, store);
    }
  }
  return std::nullopt;
}

/// Carries one accumulator of `loop` in registers; returns the new loop,
/// or none when it has no accumulator left.
std::optional<scf::ForOp> carryOne(RewriterBase &rewriter, scf::ForOp loop) {
  auto accumulator = findAccumulator(loop);
  if (!accumulator)
    return std::nullopt;
  auto [load, store] = *accumulator;
  rewriter.setInsertionPoint(loop);
  Value initial = memref::LoadOp::create(rewriter, load.getLoc(),
                                         load.getMemRef(), load.getIndices());
  Value stored = store.getValueToStore();
  FailureOr<LoopLikeOpInterface> carried =
      cast<LoopLikeOpInterface>(loop.getOperation())
          .replaceWithAdditionalYields(
              rewriter, ValueRange{initial},
              /*replaceInitOperandUsesInLoop=*/false,
              [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                return SmallVector<Value>{stored};
              });
  if (failed(carried))
    return std::nullopt;
  auto newLoop = cast<scf::ForOp>(carried->getOperation());
  Value inLoop = newLoop.getRegionIterArgs().back();
  rewriter.replaceOp(load, inLoop);
  rewriter.setInsertionPointAfter(newLoop);
  memref::StoreOp::create(rewriter, store.getLoc(), newLoop.getResults().back(),
                          store.getMemRef(), store.getIndices());
  rewriter.eraseOp(store);
  return newLoop;
}

} // namespace

void lcc::carryAccumulatorsInRegisters(RewriterBase &rewriter,
                                       scf::ForOp loop) {
  // Innermost first: an accumulator carried out of an inner loop may be
  // carried out of the next one too.
  SmallVector<scf::ForOp> nested;
  loop.getBody()->walk<WalkOrder::PostOrder>(
      [&](scf::ForOp inner) { nested.push_back(inner); });
  nested.push_back(loop);
  for (scf::ForOp each : nested) {
    // The element's indices, computed in the body, out of the loop first.
    moveLoopInvariantCode(cast<LoopLikeOpInterface>(each.getOperation()));
    while (std::optional<scf::ForOp> carried = carryOne(rewriter, each))
      each = *carried;
  }
}
