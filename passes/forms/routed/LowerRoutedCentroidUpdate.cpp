//===- LowerRoutedCentroidUpdate.cpp - the centroids' moving average ------===//
//
// attn.routed_centroid_update: the Routing Transformer trains its centroids
// by an exponential moving average of one k-means step, not by gradients.
// The step is the routing's own (RoutedKMeans.cpp) over the whole batch,
// per head, every rank's in a job of several (an attn.all_reduce of the
// members' sums and counts); the average is `decay · centroid + (1 -
// decay) · target`.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/forms/routed/RoutedForm.h"
#include "passes/forms/routed/RoutedSteps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

struct LowerRoutedCentroidUpdate : OpRewritePattern<RoutedCentroidUpdateOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RoutedCentroidUpdateOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    Location loc = op.getLoc();
    TensorBuilder tb(rewriter, loc);
    RankedTensorType qType = tensorType(op.getQuery()),
                     cType = tensorType(op.getCentroids());
    RoutedShape s{};
    s.batch = qType.getDimSize(0);
    s.heads = qType.getDimSize(1);
    s.rows = s.batch * s.heads;
    s.querySeq = qType.getDimSize(2);
    s.keySeq = tensorType(op.getKey()).getDimSize(2);
    s.dim = qType.getDimSize(3);
    s.clusters = cType.getDimSize(1);
    Value centroids = op.getCentroids();
    Value target = kMeansStepOverBatch(
        rewriter, loc, normalizeRows(tb, centroids), centroids,
        normalizeRows(tb, op.getQuery()), normalizeRows(tb, op.getKey()), s);
    double decay = op.getDecay().convertToDouble();
    Type f32 = cType.getElementType();
    rewriter.replaceOp(
        op, tb.mapSameShape({centroids, target}, [&](OpBuilder &b, Location l,
                                                     ValueRange a) {
          Value kept = mul(b, l, a[0], floatConstant(b, l, f32, decay));
          Value moved = mul(b, l, a[1], floatConstant(b, l, f32, 1.0 - decay));
          return add(b, l, kept, moved);
        }));
    return success();
  }
};

} // namespace

void lcc::populateRoutedCentroidUpdateLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerRoutedCentroidUpdate>(patterns.getContext());
}
