//===- FuseElementwise.cpp - elementwise fusion without recomputation -----===//
//
// Upstream elementwise fusion with a control function: a producer is fused
// only into a consumer whose loops are all parallel and which reads it
// without broadcasting, where each producer element is computed exactly
// once, and a producer that stays for other
// users is fused only if it is cheap (fusing it then computes it twice)
// and if its inputs, which the consumer then reads, are not kept alive for
// it past the producer's own last use: a reversible block's recomputation
// in the backward, x2 = y2 - G(y1), must not read the forward's x2 and
// G(y1) through y2 = x2 + G(y1), or every layer's activations would live
// until the backward.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace lcc {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// Ops per element an op may cost to be computed twice rather than read
/// back: a scale or a cast, not a mask or a score modifier (flash
/// attention's scores feed both the row maximum and the exponentials).
constexpr size_t kCheapOpsPerElement = 4;

/// Whether `value` is read at or after `point` (an op of `block`).
bool isReadFrom(Value value, Operation *point, Block *block) {
  return llvm::any_of(value.getUsers(), [&](Operation *user) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    return inBlock && (inBlock == point || point->isBeforeInBlock(inBlock));
  });
}

/// Whether fusing `producer`, which stays for its other users, into the
/// consumer `fused` belongs to would make the consumer keep one of the
/// producer's inputs alive longer. Only the ops of a function's body own
/// buffers of the memory plan; inside a loop nest (a kernel's tiles) that
/// is no cost. The producer's own later users do not bound it: they may be
/// fused in turn, the producer then dying and its inputs living on (a chain
/// of residual sums read from every layer's output).
bool extendsInputsLife(linalg::GenericOp producer, OpOperand *fused) {
  Block *block = producer->getBlock();
  if (!isa<func::FuncOp>(producer->getParentOp()))
    return false;
  Operation *consumer = block->findAncestorOpInBlock(*fused->getOwner());
  if (!consumer)
    return true;
  for (Value input : producer.getDpsInputs()) {
    // Function arguments (inputs, parameters) live throughout.
    if (auto arg = dyn_cast<BlockArgument>(input);
        arg && arg.getOwner() == block)
      continue;
    if (!isReadFrom(input, consumer, block))
      return true;
  }
  return false;
}

bool isWorthFusing(OpOperand *fused) {
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  if (!consumer || consumer.getNumLoops() != consumer.getNumParallelLoops())
    return false;
  // A broadcast read (a row maximum into every score of its row) would
  // compute each producer element once per copy.
  if (!consumer.getMatchingIndexingMap(fused).isPermutation())
    return false;
  auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
  if (!producer || fused->get().hasOneUse())
    return true;
  return lcc::isCheapPerElement(producer) &&
         !extendsInputsLife(producer, fused);
}

} // namespace

bool lcc::isCheapPerElement(Operation *op) {
  // Each body's ops less its yield.
  return llvm::all_of(op->getRegions(), [](Region &body) {
    return body.empty() ||
           body.front().getOperations().size() - 1 <= kCheapOpsPerElement;
  });
}

namespace {

struct FuseElementwisePass
    : lcc::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, isWorthFusing);
    // The canonicalizer after it simplifies the regions, folds and unifies
    // constants: here, on a deep model's one long function, every round's
    // walk of it cost a fifth of the pass, and folding every op of every
    // body about a fifth of what was left (the artifacts are the same
    // bytes).
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    config.enableFolding(false).enableConstantCSE(false);
    config.setStrictness(GreedyRewriteStrictness::AnyOp);
    FrozenRewritePatternSet frozen(std::move(patterns));
    // As the greedy driver on the whole module (rounds in its post-order
    // until one changes nothing) but for the ops inside linalg bodies,
    // which no pattern here rewrites: they are most of a deep model's ops,
    // and each round visited every one of them.
    for (int64_t round = 0;; ++round) {
      if (round == config.getMaxIterations()) {
        getOperation()->emitError("elementwise fusion did not converge in ")
            << round << " rounds";
        return signalPassFailure();
      }
      SmallVector<Operation *> ops;
      getOperation()->walk([&](Operation *op) {
        if (op != getOperation() && !op->getParentOfType<linalg::LinalgOp>())
          ops.push_back(op);
      });
      bool changed = false;
      if (failed(applyOpPatternsGreedily(ops, frozen, config, &changed)))
        return signalPassFailure();
      if (!changed)
        return;
    }
  }
};

} // namespace
