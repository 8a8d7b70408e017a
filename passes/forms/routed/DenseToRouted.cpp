//===- DenseToRouted.cpp - dense attention to Routing Transformer ---------===//
//
// Rewrites attn.attention into attn.routed_attention whose centroids come
// from k-means inside the compiled code. Routing changes the result, so the
// rewrite runs only when asked and reports each op it rewrites or keeps.
//
//===----------------------------------------------------------------------===//

#include "passes/AttentionForms.h"
#include "passes/forms/routed/RoutedForm.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

namespace lcc {
#define GEN_PASS_DEF_DENSETOROUTED
#include "passes/forms/routed/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

struct DenseToRoutedPass : lcc::impl::DenseToRoutedBase<DenseToRoutedPass> {
  using DenseToRoutedBase::DenseToRoutedBase;

  void runOnOperation() override {
    if (failed(checkOptionRanges(getOperation(), "attn-dense-to-routed",
                                 {{knobs::kRoutedClusters, clusters},
                                  {knobs::kRoutedWindow, window},
                                  {knobs::kSeed, seed}})))
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    int64_t next = seed;
    for (AttentionOp op : ops) {
      if (op.hasMaskOrScore()) {
        op.emitRemark("'attn.attention' kept dense: routed attention cannot "
                      "honour its mask or score region");
        continue;
      }
      if (op.getSharedQk()) {
        op.emitRemark("'attn.attention' kept dense: shared-QK (Reformer) "
                      "attention has no routed form; its long-context form "
                      "is LSH");
        continue;
      }
      auto q = cast<RankedTensorType>(op.getQuery().getType());
      auto k = cast<RankedTensorType>(op.getKey().getType());
      if (!q.hasStaticShape() || !k.hasStaticShape()) {
        op.emitRemark("'attn.attention' kept dense: dynamic shapes");
        continue;
      }
      int64_t keySeq = k.getDimSize(2);
      int64_t opClusters =
          clusters ? clusters : nearestPowerOfTwoSqrt(q.getDimSize(2));
      opClusters = std::min(opClusters, keySeq);
      int64_t opWindow =
          window ? window : std::max<int64_t>(1, keySeq / opClusters);
      if (opWindow > keySeq) {
        op.emitError() << "'attn.attention' cannot take a routed window of "
                       << opWindow << " keys: it has " << keySeq;
        return signalPassFailure();
      }
      int64_t opSeed = next++;
      op.emitRemark() << "'attn.attention' rewritten to routed attention ("
                      << opClusters << " clusters, window " << opWindow
                      << ", seed " << opSeed << ")";
      rewriter.setInsertionPoint(op);
      auto routed = RoutedAttentionOp::create(
          rewriter, op.getLoc(), op.getResult().getType(), op.getQuery(),
          op.getKey(), op.getValue(), /*centroids=*/Value(), opClusters,
          opWindow, op.getCausal(), opSeed, op.getScaleAttr());
      rewriter.replaceOp(op, routed.getResult());
    }
  }
};

} // namespace

void lcc::registerRoutedAttentionForm() {
  AttentionFormDefinition form;
  form.takesFormOptions = false;
  form.name = "routed";
  form.flags = {knobs::kRoutedClusters, knobs::kRoutedWindow};
  form.summary = "Routing Transformer k-means routed attention (--routed-*); "
                 "never chosen by auto";
  form.addRewritePasses = [](OpPassManager &pm,
                             const AttentionFormOptions &options,
                             llvm::raw_ostream &) {
    DenseToRoutedOptions pass;
    pass.clusters = options.get(knobs::kRoutedClusters);
    pass.window = options.get(knobs::kRoutedWindow);
    pass.seed = options.seed;
    pm.addPass(createDenseToRouted(pass));
    return success();
  };
  form.populateLoweringPatterns = [](RewritePatternSet &patterns,
                                     AttentionTiling) {
    populateRoutedAttentionLoweringPatterns(patterns);
    populateRoutedAttentionBackwardLoweringPatterns(patterns);
    populateRoutedCentroidUpdateLoweringPatterns(patterns);
  };
  form.checkLowering = checkRoutedAttentionLowering;
  form.opName = attn::RoutedAttentionOp::getOperationName();
  form.buildKeySelectionProbe = buildRoutedKeySelectionProbe;
  form.fillDecodeCaches = fillRoutedDecodeCaches;
  form.buildDecodeStep = buildRoutedDecodeStep;
  registerAttentionFormOrDie(std::move(form));
  registerRoutedFormPasses();
}
