//===- FuseElementwise.cpp - elementwise fusion without recomputation -----===//
//
// Upstream elementwise fusion with a control function: a producer is fused
// only into a consumer whose loops are all parallel, where each producer
// element is computed exactly once, and a producer that stays for other
// users is fused only if it is cheap: fusing it then computes it twice.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace lcc {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// Ops per element a producer that stays anyway may cost to be recomputed
/// in a consumer rather than read back: a scale or a cast, not a mask or a
/// score modifier (flash attention's scores feed both the row maximum and
/// the exponentials).
constexpr size_t kRecomputedOpsPerElement = 4;

bool isWorthFusing(OpOperand *fused) {
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  if (!consumer || consumer.getNumLoops() != consumer.getNumParallelLoops())
    return false;
  auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
  if (!producer || fused->get().hasOneUse())
    return true;
  // The body's ops less its yield.
  return producer.getBody()->getOperations().size() - 1 <=
         kRecomputedOpsPerElement;
}

struct FuseElementwisePass
    : lcc::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, isWorthFusing);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
