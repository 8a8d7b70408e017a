//===- FuseElementwise.cpp - elementwise fusion without recomputation -----===//
//
// Upstream elementwise fusion with a control function: a producer is fused
// only into a consumer whose loops are all parallel, where each producer
// element is computed exactly once.
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

struct FuseElementwisePass
    : lcc::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
          return consumer &&
                 consumer.getNumLoops() == consumer.getNumParallelLoops();
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
