//===- LowerRoutedAttention.cpp - Routing Transformer attention -----------===//
//
// Routing Transformer attention (docs/design.md §3) over `[batch*heads, seq,
// dim]` views, in the steps of the paper:
//   1-4. route: centroids, each query's cluster, each cluster's window of
//      keys, the queries sorted by cluster (RoutedRouting.cpp);
//   5. attend: each tile of sorted queries attends, cluster by cluster, to
//      its clusters' keys with the dense scores;
//   6. undo the sort: an inverse gather restores the order.
// A query whose cluster holds no visible key (causal) gets zeros.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/FlashAttention.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/forms/routed/RoutedForm.h"
#include "passes/forms/routed/RoutedSteps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// What the queries of `tile` in cluster `c` take from that cluster's
/// window of keys, added to `acc` ([tile, v_dim]); the other rows add zero.
Value attendCluster(TensorBuilder &u, const RoutedShape &s,
                    const SortedQueryTile &tile, Value r, Value c, Value acc,
                    const Routing &routing, Value k, Value v) {
  Type f32 = u.builder().getF32Type();
  ClusterWindow window = gatherClusterWindow(u, s, r, c, routing, k, v);
  Value scores = clusterScores(u, s, tile, c, window);
  RowExponentials e = rowExponentials(u, scores);
  Value probs = e.exps, sums = e.sums;
  Value weighted = BlockProducts::of(u, window.values)
                       .plain(probs, window.values,
                              u.filled({s.tile, s.valueDim}, f32, 0.0));
  // Rows of other clusters (or with nothing visible) add zero.
  return u.map(
      {s.tile, s.valueDim}, f32, {acc, weighted, sums},
      {u.identityMap(2), u.identityMap(2), u.dropLastMap(2)},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value zero = floatConstant(b, l, f32, 0.0);
        Value empty =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, a[2], zero);
        Value share = arith::SelectOp::create(
            b, l, empty, zero, arith::DivFOp::create(b, l, a[1], a[2]));
        return add(b, l, a[0], share);
      });
}

/// Step 5: the output of every sorted query, [rows, tiles * tile, v_dim].
/// A tile of sorted queries spans a run of clusters; it visits each.
Value attendClusters(OpBuilder &b, Location loc, const RoutedShape &s, Value q,
                     Value k, Value v, const Routing &routing) {
  TensorBuilder tb(b, loc);
  // The outputs are summed in f32 on half operands too.
  Type f32 = b.getF32Type();
  int64_t tiles = llvm::divideCeil(s.querySeq, s.tile);
  auto unit = b.getIndexAttr(1);
  auto attend = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(s.rows), b.getIndexAttr(tiles)},
      ValueRange{tb.empty({s.rows, tiles * s.tile, s.valueDim}, f32)},
      std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(attend.getBody());
  TensorBuilder t(b, loc);
  Value r = attend.getInductionVars()[0];
  Value start = arith::MulIOp::create(b, loc, attend.getInductionVars()[1],
                                      indexConstant(b, loc, s.tile));
  SortedQueryTile tile = sortedQueryTile(t, s, r, start, q, routing);
  auto [first, end] = tileClusters(b, loc, s, tile);
  auto perCluster = scf::ForOp::create(
      b, loc, first, end, indexConstant(b, loc, 1),
      ValueRange{t.filled({s.tile, s.valueDim}, f32, 0.0)},
      [&](OpBuilder &nb, Location nl, Value c, ValueRange acc) {
        TensorBuilder u(nb, nl);
        scf::YieldOp::create(
            nb, nl, attendCluster(u, s, tile, r, c, acc[0], routing, k, v));
      });
  b.setInsertionPointToStart(attend.getTerminator().getBody());
  insertIntoShared(b, loc, perCluster.getResult(0),
                   attend.getRegionIterArgs()[0], {r, start, b.getIndexAttr(0)},
                   {unit, b.getIndexAttr(s.tile), b.getIndexAttr(s.valueDim)});
  return attend.getResult(0);
}

struct LowerRoutedAttention : OpRewritePattern<RoutedAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RoutedAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    Location loc = op.getLoc();
    RoutedShape s = routedShapeOf(op);
    Routing routing = routeTokens(rewriter, loc, s, op.getQuery(), op.getKey(),
                                  op.getCentroids(), op.getSeed(),
                                  /*withClusterStarts=*/false);
    Value sortedOut = attendClusters(
        rewriter, loc, s, attentionRows(rewriter, loc, op.getQuery()),
        attentionRows(rewriter, loc, op.getKey()),
        attentionRows(rewriter, loc, op.getValue()), routing);
    // Step 6: back to the original order, rounded once to the result's
    // type.
    TensorBuilder tb(rewriter, loc);
    Value out = withElementType(tb,
                                unsortRows(rewriter, loc, sortedOut,
                                           routing.sortedPlace,
                                           {s.rows, s.querySeq, s.valueDim}),
                                tensorType(op.getResult()).getElementType());
    rewriter.replaceOp(
        op, fromAttentionRows(rewriter, loc, out, op.getResult().getType()));
    return success();
  }
};

} // namespace

void lcc::populateRoutedAttentionLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerRoutedAttention>(patterns.getContext());
}
