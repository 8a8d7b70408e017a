//===- RoutedKMeans.cpp - k-means centroids of routed attention -----------===//
//
// The Routing Transformer's clustering, compiled: per row of
// [batch*heads], three iterations of spherical k-means over the unit
// queries and keys. Each iteration assigns every token to its nearest
// centroid (a contraction and an argmax), sums the members sequentially,
// and moves each centroid to its members' normalised mean.
//
//===----------------------------------------------------------------------===//

#include "dialects/Attn/IR/AttnOps.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/forms/routed/RoutedSteps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::lowering;

namespace {

/// Adds each token of `tokens` ([seq, dim], one row) to the sum of its
/// nearest centroid and counts it: the new (sums [clusters, dim], counts
/// [clusters]).
std::pair<Value, Value> accumulateMembers(TensorBuilder &t, Value tokens,
                                          Value centroids, Value sums,
                                          Value counts, int64_t seq,
                                          int64_t clusters, int64_t dim) {
  OpBuilder &nb = t.builder();
  Location nl = t.location();
  Type f32 = tensorType(tokens).getElementType();
  Value scores = t.matmulTransposedB(tokens, centroids,
                                     t.filled({seq, clusters}, f32, 0.0));
  Value nearest = argmaxLastDim(nb, nl, t, scores);
  auto pass = scf::ForOp::create(
      nb, nl, indexConstant(nb, nl, 0), indexConstant(nb, nl, seq),
      indexConstant(nb, nl, 1), ValueRange{sums, counts},
      [&](OpBuilder &b, Location l, Value j, ValueRange acc) {
        Value c = arith::IndexCastOp::create(
            b, l, b.getIndexType(),
            tensor::ExtractOp::create(b, l, nearest, j));
        auto accumulate = scf::ForOp::create(
            b, l, indexConstant(b, l, 0), indexConstant(b, l, dim),
            indexConstant(b, l, 1), ValueRange{acc[0]},
            [&](OpBuilder &db, Location dl, Value d, ValueRange s) {
              Value x =
                  tensor::ExtractOp::create(db, dl, tokens, ValueRange{j, d});
              Value old =
                  tensor::ExtractOp::create(db, dl, s[0], ValueRange{c, d});
              scf::YieldOp::create(
                  db, dl,
                  tensor::InsertOp::create(db, dl, add(db, dl, old, x), s[0],
                                           ValueRange{c, d})
                      .getResult());
            });
        Value n = tensor::ExtractOp::create(b, l, acc[1], c);
        Value inc = add(b, l, n, floatConstant(b, l, f32, 1.0));
        scf::YieldOp::create(
            b, l,
            ValueRange{
                accumulate.getResult(0),
                tensor::InsertOp::create(b, l, inc, acc[1], c).getResult()});
      });
  return {pass.getResult(0), pass.getResult(1)};
}

/// Each centroid moved to its members' normalised mean.
Value movedCentroids(TensorBuilder &t, Value sums, Value counts,
                     Value centroids, int64_t clusters, int64_t dim) {
  Type f32 = tensorType(sums).getElementType();
  Value norms = rowSumOfSquares(t, sums);
  return t.map(
      {clusters, dim}, f32, {sums, norms, counts, centroids},
      {t.identityMap(2), t.dropLastMap(2), t.dropLastMap(2), t.identityMap(2)},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value zero = floatConstant(b, l, f32, 0.0);
        // No members, or members that cancel (or are not finite): the
        // centroid stays where it was.
        Value empty =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, a[2], zero);
        Value cancelled =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::ULE, a[1],
                                  floatConstant(b, l, f32, 1e-24));
        Value keep = arith::OrIOp::create(b, l, empty, cancelled);
        Value mean = mul(b, l, a[0], inverseNorm(b, l, a[1]));
        return arith::SelectOp::create(b, l, keep, a[3], mean);
      });
}

} // namespace

Value lcc::lowering::kMeans(OpBuilder &b, Location loc, Value initial,
                            Value qUnit, Value kUnit, const RoutedShape &s) {
  TensorBuilder tb(b, loc);
  Type f32 = tensorType(initial).getElementType();
  int64_t clusters = s.clusters, dim = s.dim;
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(s.rows)},
      ValueRange{tb.empty({s.rows, clusters, dim}, f32)}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value r = forall.getInductionVars()[0];
  auto one = b.getIndexAttr(1);
  SmallVector<OpFoldResult> offsets = {r, b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {one, b.getIndexAttr(clusters),
                                     b.getIndexAttr(dim)};
  Value start = sliceOf(b, loc, RankedTensorType::get({clusters, dim}, f32),
                        initial, offsets, sizes);
  auto iterations = scf::ForOp::create(
      b, loc, indexConstant(b, loc, 0), indexConstant(b, loc, 3),
      indexConstant(b, loc, 1), ValueRange{start},
      [&](OpBuilder &nb, Location nl, Value, ValueRange it) {
        TensorBuilder t(nb, nl);
        Value centroids = it[0];
        Value sums = t.filled({clusters, dim}, f32, 0.0);
        Value counts = t.filled({clusters}, f32, 0.0);
        for (auto [tokenSet, seq] : {std::make_pair(qUnit, s.querySeq),
                                     std::make_pair(kUnit, s.keySeq)}) {
          Value row = sliceOf(
              nb, nl, RankedTensorType::get({seq, dim}, f32), tokenSet,
              {r, nb.getIndexAttr(0), nb.getIndexAttr(0)},
              {nb.getIndexAttr(1), nb.getIndexAttr(seq), nb.getIndexAttr(dim)});
          std::tie(sums, counts) = accumulateMembers(
              t, row, centroids, sums, counts, seq, clusters, dim);
        }
        scf::YieldOp::create(
            nb, nl, movedCentroids(t, sums, counts, centroids, clusters, dim));
      });
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  insertIntoShared(b, loc, iterations.getResult(0),
                   forall.getRegionIterArgs()[0], offsets, sizes);
  b.setInsertionPointAfter(forall);
  return forall.getResult(0);
}

namespace {

/// Per head, the sums of the unit queries and keys that join each of the
/// unit `centroids` ([heads, clusters, dim]) and their counts ([heads,
/// clusters]), over the whole batch.
std::pair<Value, Value> membersOverBatch(OpBuilder &b, Location loc,
                                         Value centroids, Value qUnit,
                                         Value kUnit, const RoutedShape &s) {
  TensorBuilder tb(b, loc);
  Type f32 = tensorType(centroids).getElementType();
  int64_t clusters = s.clusters, dim = s.dim;
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(s.heads)},
      ValueRange{tb.empty({s.heads, clusters, dim}, f32),
                 tb.empty({s.heads, clusters}, f32)},
      std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  TensorBuilder t(b, loc);
  Value h = forall.getInductionVars()[0];
  auto one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  SmallVector<OpFoldResult> offsets = {h, zero, zero};
  SmallVector<OpFoldResult> sizes = {one, b.getIndexAttr(clusters),
                                     b.getIndexAttr(dim)};
  Value unitCentroids =
      sliceOf(b, loc, RankedTensorType::get({clusters, dim}, f32), centroids,
              offsets, sizes);
  auto members = scf::ForOp::create(
      b, loc, indexConstant(b, loc, 0), indexConstant(b, loc, s.batch),
      indexConstant(b, loc, 1),
      ValueRange{t.filled({clusters, dim}, f32, 0.0),
                 t.filled({clusters}, f32, 0.0)},
      [&](OpBuilder &nb, Location nl, Value batch, ValueRange acc) {
        TensorBuilder u(nb, nl);
        Value sums = acc[0], counts = acc[1];
        for (auto [tokenSet, seq] : {std::make_pair(qUnit, s.querySeq),
                                     std::make_pair(kUnit, s.keySeq)}) {
          Value row =
              sliceOf(nb, nl, RankedTensorType::get({seq, dim}, f32), tokenSet,
                      {batch, h, zero, zero},
                      {one, one, nb.getIndexAttr(seq), nb.getIndexAttr(dim)});
          std::tie(sums, counts) = accumulateMembers(
              u, row, unitCentroids, sums, counts, seq, clusters, dim);
        }
        scf::YieldOp::create(nb, nl, ValueRange{sums, counts});
      });
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  insertIntoShared(b, loc, members.getResult(0), forall.getRegionIterArgs()[0],
                   offsets, sizes);
  insertIntoShared(b, loc, members.getResult(1), forall.getRegionIterArgs()[1],
                   {h, zero}, {one, b.getIndexAttr(clusters)});
  return {forall.getResult(0), forall.getResult(1)};
}

} // namespace

Value lcc::lowering::kMeansStepOverBatch(OpBuilder &b, Location loc,
                                         Value centroids, Value stay,
                                         Value qUnit, Value kUnit,
                                         const RoutedShape &s) {
  auto [sums, counts] = membersOverBatch(b, loc, centroids, qUnit, kUnit, s);
  // The whole batch is every rank's share of it (data parallelism): the
  // members' sums and counts add up over the ranks before the means.
  auto job = attn::AllReduceOp::create(b, loc, attn::ReductionKind::Sum,
                                       ValueRange{sums, counts});
  sums = job.getResult(0);
  counts = job.getResult(1);
  TensorBuilder tb(b, loc);
  Type f32 = tensorType(centroids).getElementType();
  int64_t clusters = s.clusters, dim = s.dim;
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(s.heads)},
      ValueRange{tb.empty({s.heads, clusters, dim}, f32)}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  TensorBuilder t(b, loc);
  Value h = forall.getInductionVars()[0];
  auto one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  SmallVector<OpFoldResult> offsets = {h, zero, zero};
  SmallVector<OpFoldResult> sizes = {one, b.getIndexAttr(clusters),
                                     b.getIndexAttr(dim)};
  auto headSlice = [&](Value x) {
    return sliceOf(b, loc, RankedTensorType::get({clusters, dim}, f32), x,
                   offsets, sizes);
  };
  Value headCounts =
      sliceOf(b, loc, RankedTensorType::get({clusters}, f32), counts, {h, zero},
              {one, b.getIndexAttr(clusters)});
  Value moved = movedCentroids(t, headSlice(sums), headCounts, headSlice(stay),
                               clusters, dim);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  insertIntoShared(b, loc, moved, forall.getRegionIterArgs()[0], offsets,
                   sizes);
  return forall.getResult(0);
}
