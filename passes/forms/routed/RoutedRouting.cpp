//===- RoutedRouting.cpp - where routed attention sends each token --------===//
//
// The routing of Routing Transformer attention (docs/design.md §3), shared by
// its forward and its backward so both route identically:
//   1. centroids: the operand (unit-normalised), or 3 k-means iterations
//      over the unit queries and keys from seeded keys (RoutedKMeans.cpp);
//   2. route queries: each query joins its nearest centroid;
//   3. select key windows: each cluster takes the `window` keys nearest its
//      centroid (RoutedKeyWindow.cpp);
//   4. sort queries by cluster (counting sort).
// Also the pieces a tile of sorted queries is attended with: its queries,
// a cluster's window of keys and values, and the masked scores.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/CountingSort.h"
#include "passes/LowerToLinalg/FlashAttention.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/SplitMix64.h"
#include "passes/forms/routed/RoutedSteps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lcc;
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

/// Step 1: the unit centroids of every row, [rows, clusters, dim].
Value routedCentroids(OpBuilder &b, Location loc, const RoutedShape &s,
                      Value given, int64_t seed, Value qUnit, Value kUnit) {
  TensorBuilder tb(b, loc);
  Type f32 = tensorType(qUnit).getElementType(), i32 = b.getI32Type();
  if (given)
    return givenUnitCentroids(tb, given, s.batch);
  SmallVector<int32_t> picks =
      seededPositions(s.keySeq, s.clusters, static_cast<uint64_t>(seed));
  Value pickConst = arith::ConstantOp::create(
      b, loc,
      DenseIntElementsAttr::get(RankedTensorType::get({s.clusters}, i32),
                                ArrayRef<int32_t>(picks)));
  Value initial = tb.map(
      {s.rows, s.clusters, s.dim}, f32, {}, {},
      [&](OpBuilder &nb, Location l, ValueRange) -> Value {
        Value r = linalg::IndexOp::create(nb, l, 0);
        Value c = linalg::IndexOp::create(nb, l, 1);
        Value d = linalg::IndexOp::create(nb, l, 2);
        Value p =
            castToIndex(nb, l, tensor::ExtractOp::create(nb, l, pickConst, c));
        return tensor::ExtractOp::create(nb, l, kUnit, ValueRange{r, p, d});
      });
  return kMeans(b, loc, initial, qUnit, kUnit, s);
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

} // namespace

/// The cosine of every token of `a` ([rows, m, dim], unit) with every one
/// of `b` ([rows, n, dim], unit), [rows, m, n].
Value lcc::lowering::cosines(TensorBuilder &tb, Value a, Value b, int64_t rows,
                             int64_t m, int64_t n) {
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

Value lcc::lowering::givenUnitCentroids(TensorBuilder &tb, Value given,
                                        int64_t batch) {
  RankedTensorType type = tensorType(given);
  int64_t heads = type.getDimSize(0), clusters = type.getDimSize(1),
          dim = type.getDimSize(2);
  Value perRow =
      tb.map({batch, heads, clusters, dim}, type.getElementType(), {given},
             {tb.map(4, {1, 2, 3})},
             [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  return attentionRows(tb.builder(), tb.location(), normalizeRows(tb, perRow));
}

Routing lcc::lowering::routeTokens(OpBuilder &b, Location loc,
                                   const RoutedShape &s, Value query, Value key,
                                   Value centroids, int64_t seed,
                                   bool withClusterStarts) {
  TensorBuilder tb(b, loc);
  // Half operands are routed widened: unit vectors, cosines and k-means are
  // f32, so a token goes where f32 sends its rounded value.
  auto unitRows = [&](Value x) {
    return attentionRows(
        b, loc, normalizeRows(tb, withElementType(tb, x, b.getF32Type())));
  };
  Value qUnit = unitRows(query), kUnit = unitRows(key);
  if (centroids)
    centroids = withElementType(tb, centroids, b.getF32Type());
  Value unitCentroids =
      routedCentroids(b, loc, s, centroids, seed, qUnit, kUnit);
  Routing routing;
  routing.queryCluster = argmaxLastDim(
      b, loc, tb,
      cosines(tb, qUnit, unitCentroids, s.rows, s.querySeq, s.clusters));
  routing.windows = selectKeyWindows(b, loc, s, unitCentroids, kUnit);
  SortedRows sorted = sortRowsByKey(b, loc, routing.queryCluster, s.clusters,
                                    withClusterStarts);
  routing.sortedQueries = sorted.positions;
  routing.sortedPlace = sorted.inverse;
  routing.clusterStarts = sorted.starts;
  return routing;
}

SortedQueryTile lcc::lowering::sortedQueryTile(TensorBuilder &t,
                                               const RoutedShape &s, Value r,
                                               Value start, Value q,
                                               const Routing &routing) {
  Type i32 = t.builder().getI32Type();
  int64_t querySeq = s.querySeq;
  SortedQueryTile out;
  out.positions =
      t.map({s.tile}, i32, {}, {}, [&](OpBuilder &b, Location l, ValueRange) {
        Value i = arith::AddIOp::create(b, l, start,
                                        linalg::IndexOp::create(b, l, 0));
        Value inside = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i,
                                             indexConstant(b, l, querySeq));
        Value clamped =
            arith::MinSIOp::create(b, l, i, indexConstant(b, l, querySeq - 1));
        Value p = tensor::ExtractOp::create(b, l, routing.sortedQueries,
                                            ValueRange{r, clamped});
        return arith::SelectOp::create(b, l, inside, p, i32Constant(b, l, -1))
            .getResult();
      });
  out.clusters = t.map({s.tile}, i32, {out.positions}, {t.identityMap(1)},
                       [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                         auto [valid, p] = markedPosition(b, l, a[0]);
                         Value cl = tensor::ExtractOp::create(
                             b, l, routing.queryCluster, ValueRange{r, p});
                         return arith::SelectOp::create(
                             b, l, valid, cl, i32Constant(b, l, s.clusters));
                       });
  out.queries = gatherTileRows(t, s, out, r, q, s.dim);
  return out;
}

Value lcc::lowering::gatherTileRows(TensorBuilder &t, const RoutedShape &s,
                                    const SortedQueryTile &tile, Value r,
                                    Value x, int64_t width) {
  Type f32 = tensorType(x).getElementType();
  return t.map({s.tile, width}, f32, {tile.positions}, {t.map(2, {0})},
               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                 auto [valid, p] = markedPosition(b, l, a[0]);
                 Value row = tensor::ExtractOp::create(
                     b, l, x,
                     ValueRange{r, p, linalg::IndexOp::create(b, l, 1)});
                 return arith::SelectOp::create(b, l, valid, row,
                                                floatConstant(b, l, f32, 0.0));
               });
}

ClusterWindow lcc::lowering::gatherClusterWindow(TensorBuilder &t,
                                                 const RoutedShape &s, Value r,
                                                 Value c,
                                                 const Routing &routing,
                                                 Value k, Value v) {
  Type f32 = tensorType(k).getElementType(), i32 = t.builder().getI32Type();
  ClusterWindow w;
  w.positions =
      t.map({s.window}, i32, {}, {}, [&](OpBuilder &b, Location l, ValueRange) {
        return tensor::ExtractOp::create(
                   b, l, routing.windows,
                   ValueRange{r, c, linalg::IndexOp::create(b, l, 0)})
            .getResult();
      });
  auto gather = [&](Value source, int64_t width) {
    return t.map({s.window, width}, f32, {w.positions}, {t.map(2, {0})},
                 [&](OpBuilder &b, Location l, ValueRange a) {
                   return tensor::ExtractOp::create(
                              b, l, source,
                              ValueRange{r, castToIndex(b, l, a[0]),
                                         linalg::IndexOp::create(b, l, 1)})
                       .getResult();
                 });
  };
  w.keys = gather(k, s.dim);
  w.values = gather(v, s.valueDim);
  return w;
}

Value lcc::lowering::clusterScores(TensorBuilder &t, const RoutedShape &s,
                                   const SortedQueryTile &tile, Value c,
                                   const ClusterWindow &window) {
  OpBuilder &nb = t.builder();
  Location nl = t.location();
  // f32 on half operands too, whose products take half pairs.
  Type f32 = nb.getF32Type();
  double scale = s.scale;
  bool causal = s.causal;
  Value dots = BlockProducts::of(t, tile.queries)
                   .transposedB(tile.queries, window.keys,
                                t.filled({s.tile, s.window}, f32, 0.0));
  Value cluster = castToI32(nb, nl, c);
  return t.map({s.tile, s.window}, f32,
               {dots, tile.clusters, tile.positions, window.positions},
               {t.identityMap(2), t.map(2, {0}), t.map(2, {0}), t.map(2, {1})},
               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                 Value hidden = arith::CmpIOp::create(
                     b, l, arith::CmpIPredicate::ne, a[1], cluster);
                 if (causal)
                   hidden = arith::OrIOp::create(
                       b, l, hidden,
                       arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt,
                                             a[3], a[2]));
                 return arith::SelectOp::create(
                     b, l, hidden, floatConstant(b, l, f32, kNegativeInfinity),
                     mul(b, l, a[0], floatConstant(b, l, f32, scale)));
               });
}

Value lcc::lowering::unsortRows(OpBuilder &b, Location loc, Value sorted,
                                Value place, ArrayRef<int64_t> shape) {
  TensorBuilder tb(b, loc);
  return tb.map(
      shape, tensorType(sorted).getElementType(), {}, {},
      [&](OpBuilder &nb, Location l, ValueRange) -> Value {
        Value r = linalg::IndexOp::create(nb, l, 0);
        Value i = linalg::IndexOp::create(nb, l, 1);
        Value e = linalg::IndexOp::create(nb, l, 2);
        Value at = castToIndex(
            nb, l, tensor::ExtractOp::create(nb, l, place, ValueRange{r, i}));
        return tensor::ExtractOp::create(nb, l, sorted, ValueRange{r, at, e});
      });
}

std::pair<Value, Value>
lcc::lowering::tileClusters(OpBuilder &b, Location loc, const RoutedShape &s,
                            const SortedQueryTile &tile) {
  auto clusterAt = [&](int64_t i) {
    return castToIndex(b, loc,
                       tensor::ExtractOp::create(b, loc, tile.clusters,
                                                 indexConstant(b, loc, i)));
  };
  // Places past the end hold `clusters`: the last real cluster bounds them.
  Value last = arith::MinSIOp::create(b, loc, clusterAt(s.tile - 1),
                                      indexConstant(b, loc, s.clusters - 1));
  return {clusterAt(0),
          arith::AddIOp::create(b, loc, last, indexConstant(b, loc, 1))};
}
