//===- LowerRoutedAttention.cpp - Routing Transformer attention -----------===//
//
// Routing Transformer attention (DESIGN.md §3) over `[batch*heads, seq,
// dim]` views, in the steps of the paper:
//   1. centroids: the operand (unit-normalised), or 3 k-means iterations
//      over the unit-normalised queries and keys from seeded keys
//      (RoutedKMeans.cpp);
//   2. route queries: each query joins its nearest centroid (largest
//      cosine);
//   3. select key windows: each cluster takes the `window` keys nearest its
//      centroid (RoutedKeyWindow.cpp);
//   4. sort queries by cluster (counting sort);
//   5. attend: each tile of sorted queries attends, cluster by cluster, to
//      its clusters' keys with the dense scores;
//   6. undo the sort: an inverse gather restores the order.
// A query whose cluster holds no visible key (causal) gets zeros.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/CountingSort.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/RoutedSteps.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/SplitMix64.h"
#include "passes/LowerToLinalg/TensorOps.h"

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

/// `count` distinct positions in [0, n) drawn from `seed` (the initial
/// k-means centroids), by a partial Fisher-Yates shuffle.
SmallVector<int32_t> seededPositions(int64_t n, int64_t count, uint64_t seed) {
  SplitMix64 random{seed ^ 0x5eedULL};
  SmallVector<int32_t> all(n);
  for (int64_t i = 0; i < n; ++i)
    all[i] = i;
  for (int64_t i = 0; i < count; ++i)
    std::swap(all[i], all[i + random.next() % (n - i)]);
  all.resize(count);
  return all;
}

/// [batch, heads, seq, dim] viewed as [batch*heads, seq, dim].
Value rowsOf(OpBuilder &b, Location loc, Value x) {
  SmallVector<ReassociationIndices> merge = {{0, 1}, {2}, {3}};
  return tensor::CollapseShapeOp::create(b, loc, x, merge);
}

/// Step 1: the unit centroids of every row, [rows, clusters, dim].
Value routedCentroids(PatternRewriter &rewriter, RoutedAttentionOp op,
                      const RoutedShape &s, Value qUnit, Value kUnit) {
  Location loc = op.getLoc();
  TensorBuilder tb(rewriter, loc);
  Type f32 = tensorType(qUnit).getElementType(), i32 = rewriter.getI32Type();
  if (Value given = op.getCentroids()) {
    Value perRow =
        tb.map({s.batch, s.heads, s.clusters, s.dim}, f32, {given},
               {tb.map(4, {1, 2, 3})},
               [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    return rowsOf(rewriter, loc, normalizeRows(tb, perRow));
  }
  SmallVector<int32_t> picks = seededPositions(
      s.keySeq, s.clusters, static_cast<uint64_t>(op.getSeed()));
  Value pickConst = arith::ConstantOp::create(
      rewriter, loc,
      DenseIntElementsAttr::get(RankedTensorType::get({s.clusters}, i32),
                                ArrayRef<int32_t>(picks)));
  Value initial = tb.map(
      {s.rows, s.clusters, s.dim}, f32, {}, {},
      [&](OpBuilder &b, Location l, ValueRange) -> Value {
        Value r = linalg::IndexOp::create(b, l, 0);
        Value c = linalg::IndexOp::create(b, l, 1);
        Value d = linalg::IndexOp::create(b, l, 2);
        Value p =
            castToIndex(b, l, tensor::ExtractOp::create(b, l, pickConst, c));
        return tensor::ExtractOp::create(b, l, kUnit, ValueRange{r, p, d});
      });
  return kMeans(rewriter, loc, initial, qUnit, kUnit, s);
}

/// The cosine of every token of `tokens` ([rows, n, dim], unit) with every
/// centroid, [rows, n, clusters] (or [rows, clusters, n] with the centroids
/// first).
Value cosines(TensorBuilder &tb, Value a, Value b, int64_t rows, int64_t m,
              int64_t n) {
  using utils::IteratorType;
  Type f32 = tensorType(a).getElementType();
  return tb.generic(
      tb.filled({rows, m, n}, f32, 0.0), {a, b},
      {tb.map(4, {0, 1, 3}), tb.map(4, {0, 2, 3}), tb.map(4, {0, 1, 2})},
      {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
       IteratorType::reduction},
      [](OpBuilder &nb, Location l, ValueRange x) {
        return multiplyAccumulate(nb, l, x[0], x[1], x[2]);
      });
}

/// Step 3: the `window` keys of each cluster, [rows, clusters, window] i32
/// (positions, ascending).
Value selectKeyWindows(OpBuilder &b, Location loc, const RoutedShape &s,
                       Value centroids, Value kUnit) {
  TensorBuilder tb(b, loc);
  Type f32 = tensorType(kUnit).getElementType();
  Value keyScores = cosines(tb, centroids, kUnit, s.rows, s.clusters, s.keySeq);
  auto unit = b.getIndexAttr(1);
  auto select = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(s.rows),
                             b.getIndexAttr(s.clusters)},
      ValueRange{tb.empty({s.rows, s.clusters, s.window}, b.getI32Type())},
      std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(select.getBody());
  Value r = select.getInductionVars()[0], c = select.getInductionVars()[1];
  Value scores = sliceOf(b, loc, RankedTensorType::get({s.keySeq}, f32),
                         keyScores, {r, c, b.getIndexAttr(0)},
                         {unit, unit, b.getIndexAttr(s.keySeq)});
  Value selected = selectWindow(b, loc, scores, s.keySeq, s.window);
  b.setInsertionPointToStart(select.getTerminator().getBody());
  insertIntoShared(b, loc, selected, select.getRegionIterArgs()[0],
                   {r, c, b.getIndexAttr(0)},
                   {unit, unit, b.getIndexAttr(s.window)});
  return select.getResult(0);
}

/// The queries of one tile of the sorted order.
struct SortedQueryTile {
  Value positions; // [tile] i32: original position, -1 past the end
  Value clusters;  // [tile] i32: cluster, `clusters` past the end
  Value queries;   // [tile, dim]
};

SortedQueryTile sortedQueryTile(TensorBuilder &t, const RoutedShape &s, Value r,
                                Value start, Value q, Value sortedQueries,
                                Value queryCluster) {
  Type f32 = tensorType(q).getElementType(), i32 = t.builder().getI32Type();
  int64_t tile = s.tile, querySeq = s.querySeq;
  SortedQueryTile out;
  out.positions =
      t.map({tile}, i32, {}, {}, [&](OpBuilder &b, Location l, ValueRange) {
        Value i = arith::AddIOp::create(b, l, start,
                                        linalg::IndexOp::create(b, l, 0));
        Value inside = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i,
                                             indexConstant(b, l, querySeq));
        Value clamped =
            arith::MinSIOp::create(b, l, i, indexConstant(b, l, querySeq - 1));
        Value p = tensor::ExtractOp::create(b, l, sortedQueries,
                                            ValueRange{r, clamped});
        return arith::SelectOp::create(b, l, inside, p, i32Constant(b, l, -1))
            .getResult();
      });
  out.clusters = t.map(
      {tile}, i32, {out.positions}, {t.identityMap(1)},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value valid = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                            a[0], i32Constant(b, l, 0));
        Value p = castToIndex(
            b, l, arith::MaxSIOp::create(b, l, a[0], i32Constant(b, l, 0)));
        Value cl =
            tensor::ExtractOp::create(b, l, queryCluster, ValueRange{r, p});
        return arith::SelectOp::create(b, l, valid, cl,
                                       i32Constant(b, l, s.clusters));
      });
  out.queries = t.map(
      {tile, s.dim}, f32, {out.positions}, {t.map(2, {0})},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value p = castToIndex(
            b, l, arith::MaxSIOp::create(b, l, a[0], i32Constant(b, l, 0)));
        return tensor::ExtractOp::create(
            b, l, q, ValueRange{r, p, linalg::IndexOp::create(b, l, 1)});
      });
  return out;
}

/// What the queries of `tile` in cluster `c` take from that cluster's
/// window of keys, added to `acc` ([tile, v_dim]); the other rows add zero.
Value attendCluster(TensorBuilder &u, const RoutedShape &s,
                    const SortedQueryTile &tile, Value r, Value c, Value acc,
                    Value windows, Value k, Value v) {
  OpBuilder &nb = u.builder();
  Location nl = u.location();
  Type f32 = tensorType(k).getElementType(), i32 = nb.getI32Type();
  int64_t window = s.window, valueDim = s.valueDim;
  double scale = s.scale;
  bool causal = s.causal;
  Value queryClusterOf = tile.clusters, queryPos = tile.positions;
  Value keyPos =
      u.map({window}, i32, {}, {}, [&](OpBuilder &b, Location l, ValueRange) {
        return tensor::ExtractOp::create(
                   b, l, windows,
                   ValueRange{r, c, linalg::IndexOp::create(b, l, 0)})
            .getResult();
      });
  auto gather = [&](Value source, int64_t width) {
    return u.map({window, width}, f32, {keyPos}, {u.map(2, {0})},
                 [&](OpBuilder &b, Location l, ValueRange a) {
                   return tensor::ExtractOp::create(
                              b, l, source,
                              ValueRange{r, castToIndex(b, l, a[0]),
                                         linalg::IndexOp::create(b, l, 1)})
                       .getResult();
                 });
  };
  Value keys = gather(k, s.dim), values = gather(v, valueDim);
  Value dots = u.matmulTransposedB(tile.queries, keys,
                                   u.filled({s.tile, window}, f32, 0.0));
  Value cluster = castToI32(nb, nl, c);
  Value scores =
      u.map({s.tile, window}, f32, {dots, queryClusterOf, queryPos, keyPos},
            {u.identityMap(2), u.map(2, {0}), u.map(2, {0}), u.map(2, {1})},
            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
              auto constant = [&](double x) -> Value {
                return floatConstant(b, l, f32, x);
              };
              Value hidden = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::ne, a[1], cluster);
              if (causal)
                hidden = arith::OrIOp::create(
                    b, l, hidden,
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, a[3],
                                          a[2]));
              return arith::SelectOp::create(b, l, hidden,
                                             constant(kNegativeInfinity),
                                             mul(b, l, a[0], constant(scale)));
            });
  Value maxima = rowMax(u, scores);
  Value probs = u.map({s.tile, window}, f32, {scores, maxima},
                      {u.identityMap(2), u.dropLastMap(2)},
                      [](OpBuilder &b, Location l, ValueRange a) {
                        return expShifted(b, l, a[0], a[1]);
                      });
  Value sums = rowSum(u, probs);
  Value weighted =
      u.matmul(probs, values, u.filled({s.tile, valueDim}, f32, 0.0));
  // Rows of other clusters (or with nothing visible) add zero.
  return u.map(
      {s.tile, valueDim}, f32, {acc, weighted, sums},
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
                     Value k, Value v, Value sortedQueries, Value queryCluster,
                     Value windows) {
  TensorBuilder tb(b, loc);
  Type f32 = tensorType(q).getElementType();
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
  SortedQueryTile tile =
      sortedQueryTile(t, s, r, start, q, sortedQueries, queryCluster);
  Value first =
      castToIndex(b, loc,
                  tensor::ExtractOp::create(b, loc, tile.clusters,
                                            indexConstant(b, loc, 0)));
  Value last = arith::MinSIOp::create(
      b, loc,
      castToIndex(b, loc,
                  tensor::ExtractOp::create(b, loc, tile.clusters,
                                            indexConstant(b, loc, s.tile - 1))),
      indexConstant(b, loc, s.clusters - 1));
  Value end = arith::AddIOp::create(b, loc, last, indexConstant(b, loc, 1));
  auto perCluster = scf::ForOp::create(
      b, loc, first, end, indexConstant(b, loc, 1),
      ValueRange{t.filled({s.tile, s.valueDim}, f32, 0.0)},
      [&](OpBuilder &nb, Location nl, Value c, ValueRange acc) {
        TensorBuilder u(nb, nl);
        scf::YieldOp::create(
            nb, nl, attendCluster(u, s, tile, r, c, acc[0], windows, k, v));
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
    TensorBuilder tb(rewriter, loc);
    RankedTensorType qType = tensorType(op.getQuery());
    RoutedShape s;
    s.batch = qType.getDimSize(0);
    s.heads = qType.getDimSize(1);
    s.rows = s.batch * s.heads;
    s.querySeq = qType.getDimSize(2);
    s.dim = qType.getDimSize(3);
    s.keySeq = tensorType(op.getKey()).getDimSize(2);
    s.valueDim = tensorType(op.getValue()).getDimSize(3);
    s.clusters = op.getClusters();
    s.window = op.getWindow();
    s.tile = std::min<int64_t>(64, s.querySeq);
    s.causal = op.getCausal();
    s.scale = attentionScale(op.getScale(), op.getQuery());
    Type f32 = qType.getElementType();

    Value q = rowsOf(rewriter, loc, op.getQuery()),
          k = rowsOf(rewriter, loc, op.getKey()),
          v = rowsOf(rewriter, loc, op.getValue());
    Value qUnit = rowsOf(rewriter, loc, normalizeRows(tb, op.getQuery()));
    Value kUnit = rowsOf(rewriter, loc, normalizeRows(tb, op.getKey()));

    Value centroids = routedCentroids(rewriter, op, s, qUnit, kUnit);
    Value queryCluster = argmaxLastDim(
        rewriter, loc, tb,
        cosines(tb, qUnit, centroids, s.rows, s.querySeq, s.clusters));
    Value windows = selectKeyWindows(rewriter, loc, s, centroids, kUnit);
    SortedRows sorted = sortRowsByKey(rewriter, loc, queryCluster, s.clusters);
    Value sortedOut = attendClusters(rewriter, loc, s, q, k, v,
                                     sorted.positions, queryCluster, windows);
    // Step 6: back to the original order.
    Value out = tb.map({s.rows, s.querySeq, s.valueDim}, f32, {}, {},
                       [&](OpBuilder &b, Location l, ValueRange) -> Value {
                         Value r = linalg::IndexOp::create(b, l, 0);
                         Value i = linalg::IndexOp::create(b, l, 1);
                         Value e = linalg::IndexOp::create(b, l, 2);
                         Value at = castToIndex(
                             b, l,
                             tensor::ExtractOp::create(b, l, sorted.inverse,
                                                       ValueRange{r, i}));
                         return tensor::ExtractOp::create(b, l, sortedOut,
                                                          ValueRange{r, at, e});
                       });
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, op.getResult().getType(), out,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
    return success();
  }
};

} // namespace

void lcc::populateRoutedAttentionLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerRoutedAttention>(patterns.getContext());
}
