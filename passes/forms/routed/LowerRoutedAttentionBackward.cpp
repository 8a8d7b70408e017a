//===- LowerRoutedAttentionBackward.cpp - gradients of routed attention ---===//
//
// attn.routed_attention_backward over `[batch*heads, seq, dim]` views. The
// routing is recomputed exactly as the forward did it (RoutedRouting.cpp)
// and is not differentiated; each query's softmax over its cluster's
// window of keys is. Probabilities are recomputed from the scores (a
// window is attended whole, so no logsumexp need be saved), and the work
// is split into race-free kernels, as FlashAttention-2's backward is:
//   1. query gradients: each tile of sorted queries visits its clusters,
//      as the forward does, and owns its rows of dq;
//   2. window gradients: each (row, cluster) walks its own queries, tile by
//      tile, and owns the gradients of its window's keys and values;
//   3. key and value gradients: a key in several windows sums what each
//      window gives it (a gather over the clusters, not a scatter);
//   4. dq back in the original order.
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

/// What a tile of sorted queries needs to differentiate its attention to
/// one cluster's window.
struct ClusterTileGradient {
  Value probs;     // [tile, window]: zero where hidden
  Value scoreGrad; // [tile, window]: d loss / d (q·k), scale included
};

/// Softmax of each row of `scores` ([tile, window]); a row with nothing
/// visible is zero.
Value probabilities(TensorBuilder &u, const RoutedShape &s, Value scores) {
  Type f32 = tensorType(scores).getElementType();
  RowExponentials e = rowExponentials(u, scores);
  return u.map(
      {s.tile, s.window}, f32, {e.exps, e.sums},
      {u.identityMap(2), u.dropLastMap(2)},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value zero = floatConstant(b, l, f32, 0.0);
        Value empty =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, a[1], zero);
        return arith::SelectOp::create(b, l, empty, zero,
                                       arith::DivFOp::create(b, l, a[0], a[1]));
      });
}

/// The softmax backward of one tile against one window: with dp = do vᵀ,
/// ds = p (dp - rowsum(p dp)), times the score scale.
ClusterTileGradient differentiateCluster(TensorBuilder &u, const RoutedShape &s,
                                         const SortedQueryTile &tile, Value c,
                                         const ClusterWindow &window,
                                         Value outGrad) {
  // f32 on half operands too, whose products take half pairs.
  Type f32 = u.builder().getF32Type();
  ClusterTileGradient g;
  g.probs = probabilities(u, s, clusterScores(u, s, tile, c, window));
  Value probGrad = BlockProducts::of(u, outGrad)
                       .transposedB(outGrad, window.values,
                                    u.filled({s.tile, s.window}, f32, 0.0));
  Value weighted = u.mapSameShape({g.probs, probGrad},
                                  [](OpBuilder &b, Location l, ValueRange a) {
                                    return mul(b, l, a[0], a[1]);
                                  });
  Value rowTotals = rowSum(u, weighted);
  double scale = s.scale;
  g.scoreGrad = u.map({s.tile, s.window}, f32, {g.probs, probGrad, rowTotals},
                      {u.identityMap(2), u.identityMap(2), u.dropLastMap(2)},
                      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                        Value ds = mul(b, l, a[0],
                                       arith::SubFOp::create(b, l, a[1], a[2]));
                        return mul(b, l, ds, floatConstant(b, l, f32, scale));
                      });
  return g;
}

/// Step 1: dq of every sorted query, [rows, tiles * tile, dim].
Value sortedQueryGradients(OpBuilder &b, Location loc, const RoutedShape &s,
                           Value q, Value k, Value v, Value outGrad,
                           const Routing &routing) {
  TensorBuilder tb(b, loc);
  Type f32 = b.getF32Type();
  int64_t tiles = llvm::divideCeil(s.querySeq, s.tile);
  auto unit = b.getIndexAttr(1);
  auto kernel = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(s.rows), b.getIndexAttr(tiles)},
      ValueRange{tb.empty({s.rows, tiles * s.tile, s.dim}, f32)}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(kernel.getBody());
  TensorBuilder t(b, loc);
  Value r = kernel.getInductionVars()[0];
  Value start = arith::MulIOp::create(b, loc, kernel.getInductionVars()[1],
                                      indexConstant(b, loc, s.tile));
  SortedQueryTile tile = sortedQueryTile(t, s, r, start, q, routing);
  Value tileOutGrad = gatherTileRows(t, s, tile, r, outGrad, s.valueDim);
  auto [first, end] = tileClusters(b, loc, s, tile);
  auto perCluster = scf::ForOp::create(
      b, loc, first, end, indexConstant(b, loc, 1),
      ValueRange{t.filled({s.tile, s.dim}, f32, 0.0)},
      [&](OpBuilder &nb, Location nl, Value c, ValueRange acc) {
        TensorBuilder u(nb, nl);
        ClusterWindow window = gatherClusterWindow(u, s, r, c, routing, k, v);
        ClusterTileGradient g =
            differentiateCluster(u, s, tile, c, window, tileOutGrad);
        scf::YieldOp::create(nb, nl,
                             BlockProducts::of(u, window.keys)
                                 .plain(g.scoreGrad, window.keys, acc[0]));
      });
  b.setInsertionPointToStart(kernel.getTerminator().getBody());
  insertIntoShared(b, loc, perCluster.getResult(0),
                   kernel.getRegionIterArgs()[0], {r, start, b.getIndexAttr(0)},
                   {unit, b.getIndexAttr(s.tile), b.getIndexAttr(s.dim)});
  return kernel.getResult(0);
}

/// Step 2's results: per (row, cluster), the gradients of its window's keys
/// ([rows, clusters, window, dim]) and values ([..., v_dim]), and where each
/// key sits in the window ([rows, clusters, k_seq] i32, -1 when outside).
struct WindowGradients {
  Value keys, values, slots;
};

/// The window slot of every key of one cluster, [k_seq] i32.
Value windowSlots(TensorBuilder &t, const RoutedShape &s,
                  const ClusterWindow &window) {
  OpBuilder &b = t.builder();
  Location loc = t.location();
  Value none = t.map({s.keySeq}, b.getI32Type(), {}, {},
                     [](OpBuilder &nb, Location l, ValueRange) {
                       return i32Constant(nb, l, -1);
                     });
  auto fill = scf::ForOp::create(
      b, loc, indexConstant(b, loc, 0), indexConstant(b, loc, s.window),
      indexConstant(b, loc, 1), ValueRange{none},
      [&](OpBuilder &nb, Location l, Value w, ValueRange it) {
        Value key = castToIndex(
            nb, l, tensor::ExtractOp::create(nb, l, window.positions, w));
        scf::YieldOp::create(
            nb, l,
            tensor::InsertOp::create(nb, l, castToI32(nb, l, w), it[0], key)
                .getResult());
      });
  return fill.getResult(0);
}

/// Step 2: each (row, cluster) walks its queries ([start, end) of the sorted
/// order, found by the counting sort) tile by tile.
WindowGradients windowGradients(OpBuilder &b, Location loc,
                                const RoutedShape &s, Value q, Value k, Value v,
                                Value outGrad, const Routing &routing) {
  TensorBuilder tb(b, loc);
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto unit = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  auto kernel = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(s.rows),
                             b.getIndexAttr(s.clusters)},
      ValueRange{tb.empty({s.rows, s.clusters, s.window, s.dim}, f32),
                 tb.empty({s.rows, s.clusters, s.window, s.valueDim}, f32),
                 tb.empty({s.rows, s.clusters, s.keySeq}, i32)},
      std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(kernel.getBody());
  TensorBuilder t(b, loc);
  Value r = kernel.getInductionVars()[0], c = kernel.getInductionVars()[1];
  auto startOf = [&](Value cluster) {
    return castToIndex(b, loc,
                       tensor::ExtractOp::create(b, loc, routing.clusterStarts,
                                                 ValueRange{r, cluster}));
  };
  Value begin = startOf(c);
  Value end =
      startOf(arith::AddIOp::create(b, loc, c, indexConstant(b, loc, 1)));
  ClusterWindow window = gatherClusterWindow(t, s, r, c, routing, k, v);
  auto walk = scf::ForOp::create(
      b, loc, begin, end, indexConstant(b, loc, s.tile),
      ValueRange{t.filled({s.window, s.dim}, f32, 0.0),
                 t.filled({s.window, s.valueDim}, f32, 0.0)},
      [&](OpBuilder &nb, Location nl, Value start, ValueRange acc) {
        TensorBuilder u(nb, nl);
        // Places past `end` hold other clusters' queries: the scores hide
        // them.
        SortedQueryTile tile = sortedQueryTile(u, s, r, start, q, routing);
        Value tileOutGrad = gatherTileRows(u, s, tile, r, outGrad, s.valueDim);
        ClusterTileGradient g =
            differentiateCluster(u, s, tile, c, window, tileOutGrad);
        BlockProducts products = BlockProducts::of(u, tile.queries);
        Value keyGrad = products.transposedA(g.scoreGrad, tile.queries, acc[0]);
        Value valueGrad = products.transposedA(g.probs, tileOutGrad, acc[1]);
        scf::YieldOp::create(nb, nl, ValueRange{keyGrad, valueGrad});
      });
  Value slots = windowSlots(t, s, window);
  b.setInsertionPointToStart(kernel.getTerminator().getBody());
  auto args = kernel.getRegionIterArgs();
  insertIntoShared(
      b, loc, walk.getResult(0), args[0], {r, c, zero, zero},
      {unit, unit, b.getIndexAttr(s.window), b.getIndexAttr(s.dim)});
  insertIntoShared(
      b, loc, walk.getResult(1), args[1], {r, c, zero, zero},
      {unit, unit, b.getIndexAttr(s.window), b.getIndexAttr(s.valueDim)});
  insertIntoShared(b, loc, slots, args[2], {r, c, zero},
                   {unit, unit, b.getIndexAttr(s.keySeq)});
  return {kernel.getResult(0), kernel.getResult(1), kernel.getResult(2)};
}

/// Step 3: dk (or dv) of every key, [rows, k_seq, width]: the sum over the
/// clusters whose window holds it.
Value gatherWindowGradients(TensorBuilder &tb, const RoutedShape &s,
                            Value windowGrad, Value slots, int64_t width) {
  using utils::IteratorType;
  Type f32 = tensorType(windowGrad).getElementType();
  return tb.generic(tb.filled({s.rows, s.keySeq, width}, f32, 0.0), {slots},
                    {tb.map(4, {0, 3, 1}), tb.map(4, {0, 1, 2})},
                    {IteratorType::parallel, IteratorType::parallel,
                     IteratorType::parallel, IteratorType::reduction},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      auto [inWindow, slot] = markedPosition(b, l, a[0]);
                      Value g = tensor::ExtractOp::create(
                          b, l, windowGrad,
                          ValueRange{linalg::IndexOp::create(b, l, 0),
                                     linalg::IndexOp::create(b, l, 3), slot,
                                     linalg::IndexOp::create(b, l, 2)});
                      return arith::SelectOp::create(b, l, inWindow,
                                                     add(b, l, a[1], g), a[1]);
                    });
}

struct LowerRoutedAttentionBackward
    : OpRewritePattern<RoutedAttentionBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RoutedAttentionBackwardOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    Location loc = op.getLoc();
    TensorBuilder tb(rewriter, loc);
    RoutedShape s = routedShapeOf(op);
    Routing routing = routeTokens(rewriter, loc, s, op.getQuery(), op.getKey(),
                                  op.getCentroids(), op.getSeed(),
                                  /*withClusterStarts=*/true);
    Value q = attentionRows(rewriter, loc, op.getQuery()),
          k = attentionRows(rewriter, loc, op.getKey()),
          v = attentionRows(rewriter, loc, op.getValue()),
          outGrad = attentionRows(rewriter, loc, op.getResultGrad());
    Value sortedQueryGrad =
        sortedQueryGradients(rewriter, loc, s, q, k, v, outGrad, routing);
    WindowGradients windows =
        windowGradients(rewriter, loc, s, q, k, v, outGrad, routing);
    Value keyGrad =
        gatherWindowGradients(tb, s, windows.keys, windows.slots, s.dim);
    Value valueGrad =
        gatherWindowGradients(tb, s, windows.values, windows.slots, s.valueDim);
    Value queryGrad =
        unsortRows(rewriter, loc, sortedQueryGrad, routing.sortedPlace,
                   {s.rows, s.querySeq, s.dim});
    // Summed in f32, rounded once to the operands' types.
    auto like = [&](Value grad, Value operand) {
      RankedTensorType type = tensorType(operand);
      return fromAttentionRows(rewriter, loc,
                               withElementType(tb, grad, type.getElementType()),
                               type);
    };
    rewriter.replaceOp(op, {like(queryGrad, op.getQuery()),
                            like(keyGrad, op.getKey()),
                            like(valueGrad, op.getValue())});
    return success();
  }
};

} // namespace

LogicalResult lcc::checkRoutedAttentionLowering(Operation *root) {
  auto windowOdd = [](Operation *op, int64_t window) {
    return failed(checkPairedSize(
        op, "routed attention multiplies a cluster's window of keys", "window",
        window));
  };
  WalkResult walk = root->walk([&](Operation *op) {
    if (auto routed = dyn_cast<RoutedAttentionOp>(op);
        routed && !halfPrecisionOf(op).empty() &&
        windowOdd(op, routed.getWindow()))
      return WalkResult::interrupt();
    auto backward = dyn_cast<RoutedAttentionBackwardOp>(op);
    if (!backward || halfPrecisionOf(op).empty() || !hasStaticShapes(op))
      return WalkResult::advance();
    RoutedShape s = routedShapeOf(backward);
    bool odd =
        windowOdd(op, s.window) ||
        failed(checkPairedSize(op,
                               "routed attention's backward multiplies a "
                               "tile of queries",
                               "the query seq", s.tile)) ||
        failed(checkPairedSize(
            op, "attention's backward multiplies the values' head_dim",
            "head_dim", s.valueDim));
    return odd ? WalkResult::interrupt() : WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

void lcc::populateRoutedAttentionBackwardLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerRoutedAttentionBackward>(patterns.getContext());
}
