//===- RoutedDecodeStep.cpp - routed attention's cached decode step -------===//
//
// For `lcc --decode` (docs/generation.md): causal attn.routed_attention with
// trained centroids caches every token's key, value and the cosine of its
// unit key with each unit centroid. A step at position t attends as the op
// attends the last token of the tokens 0..t: the query joins its nearest
// centroid, whose window is the `window` tokens so far with the largest
// cosine to it (ties by position; all of them while there are fewer), and
// it attends to those with the dense scores. Selecting the window reads
// the tokens' cached cosines with that one centroid.
//
// Without trained centroids the op runs k-means over the whole sequence
// from tokens picked by its length: no forward of the tokens so far
// defines a step, and none is built.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/GatheredAttention.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/forms/routed/RoutedForm.h"
#include "passes/forms/routed/RoutedSteps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// Why `op` has no cached form; "" when it has one.
std::string routedUncachedBecause(RoutedAttentionOp op) {
  if (!op.getCausal())
    return kNotCausalForDecode;
  if (!op.getCentroids())
    return "its centroids come from k-means over the whole sequence, "
           "started from tokens its length picks, so no forward of the "
           "tokens so far defines a step; give it trained centroids";
  if (op.getQuery().getType() != op.getKey().getType())
    return "its keys are not its queries' positions";
  return "";
}

/// The cosine of each unit key of `keys` ([B, H, S, d]) with each unit
/// centroid of `centroids` ([H, clusters, d]): [B, H, S, clusters], the
/// forward's routing arithmetic (RoutedSteps.h's cosines).
Value keyCosines(TensorBuilder &tb, Value keys, Value centroids) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  RankedTensorType type = tensorType(keys);
  int64_t batch = type.getDimSize(0), heads = type.getDimSize(1),
          seq = type.getDimSize(2);
  int64_t clusters = tensorType(centroids).getDimSize(1);
  Value unitKeys = attentionRows(b, loc, normalizeRows(tb, keys));
  Value scores = cosines(tb, unitKeys, givenUnitCentroids(tb, centroids, batch),
                         batch * heads, seq, clusters);
  return fromAttentionRows(b, loc, scores,
                           RankedTensorType::get({batch, heads, seq, clusters},
                                                 type.getElementType()));
}

/// Each query's cluster ([B, H] i32): the nearest unit centroid to its
/// unit query (`query` [B, H, 1, d]), the first of equals.
Value queryClusters(OpBuilder &b, Location loc, Value query, Value centroids) {
  TensorBuilder tb(b, loc);
  Value cosines = keyCosines(tb, query, centroids); // [B, H, 1, clusters]
  Value rows = tensor::CollapseShapeOp::create(
      b, loc, cosines, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}});
  return argmaxLastDim(b, loc, tb, rows);
}

/// Per (batch, head), the window of the query's cluster among tokens
/// 0..t: [B, H, window] i32, from the cached cosines ([B, H, C, clusters]).
Value clusterWindows(OpBuilder &b, Location loc, Value cosines, Value clusters,
                     Value position, int64_t window) {
  TensorBuilder tb(b, loc);
  RankedTensorType type = tensorType(cosines);
  int64_t batch = type.getDimSize(0), heads = type.getDimSize(1),
          rows = type.getDimSize(2);
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(batch), b.getIndexAttr(heads)},
      ValueRange{tb.empty({batch, heads, window}, b.getI32Type())},
      std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value bi = forall.getInductionVars()[0], hi = forall.getInductionVars()[1];
  Value cluster = castToIndex(
      b, loc, tensor::ExtractOp::create(b, loc, clusters, ValueRange{bi, hi}));
  auto unit = b.getIndexAttr(1);
  Value column =
      sliceOf(b, loc, RankedTensorType::get({rows}, type.getElementType()),
              cosines, {bi, hi, b.getIndexAttr(0), cluster},
              {unit, unit, b.getIndexAttr(rows), unit});
  Value count = arith::AddIOp::create(
      b, loc, castToIndex(b, loc, tensor::ExtractOp::create(b, loc, position)),
      indexConstant(b, loc, 1));
  Value selected = selectWindow(b, loc, column, count, window);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  insertIntoShared(b, loc, selected, forall.getRegionIterArgs()[0],
                   {bi, hi, b.getIndexAttr(0)},
                   {unit, unit, b.getIndexAttr(window)});
  return forall.getResult(0);
}

/// The query (`query` [B, H, 1, d]) attending to its window's cached keys
/// and values ([B, H, C, *]), scaled dense scores; places past the tokens
/// so far (fewer than the window) are empty, and a query that sees nothing
/// gets zeros: [B, H, 1, dv].
Value attendWindow(TensorBuilder &tb, Value query, Value keys, Value values,
                   Value windows, Value position, double scale) {
  OpBuilder &b = tb.builder();
  RankedTensorType windowType = tensorType(windows);
  int64_t rows = windowType.getDimSize(0) * windowType.getDimSize(1),
          window = windowType.getDimSize(2);
  Value flat = tensor::CollapseShapeOp::create(
      b, tb.location(), windows, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value tokens =
      tb.map({rows, 1, window}, b.getI32Type(), {flat, position},
             {tb.map(3, {0, 2}), AffineMap::get(3, 0, b.getContext())},
             [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
               Value past = arith::CmpIOp::create(
                   nb, l, arith::CmpIPredicate::sgt,
                   linalg::IndexOp::create(nb, l, 2), castToIndex(nb, l, a[1]));
               return arith::SelectOp::create(nb, l, past,
                                              i32Constant(nb, l, -1), a[0]);
             });
  return attendGatheredByHead(tb, query, tokens, keys, values, scale);
}

} // namespace

LogicalResult lcc::fillRoutedDecodeCaches(OpBuilder &b, Operation *op,
                                          const AttentionCaches &caches,
                                          std::string &whyNot) {
  auto routed = cast<RoutedAttentionOp>(op);
  whyNot = routedUncachedBecause(routed);
  if (!whyNot.empty())
    return failure();
  Location loc = op->getLoc();
  TensorBuilder tb(b, loc);
  caches.fill(b, loc, "key", routed.getKey());
  caches.fill(b, loc, "value", routed.getValue());
  caches.fill(b, loc, "cosines",
              keyCosines(tb, routed.getKey(), routed.getCentroids()));
  return success();
}

FailureOr<Value> lcc::buildRoutedDecodeStep(OpBuilder &b, Operation *op,
                                            ValueRange operands, Value position,
                                            const AttentionCaches &caches,
                                            std::string &whyNot) {
  auto routed = cast<RoutedAttentionOp>(op);
  Location loc = op->getLoc();
  TensorBuilder tb(b, loc);
  Value query = operands[0], key = operands[1], value = operands[2],
        centroids = operands[3];
  Value keys = caches.writeRows(b, loc, "key", key, position);
  Value values = caches.writeRows(b, loc, "value", value, position);
  Value cosines = caches.writeRows(b, loc, "cosines",
                                   keyCosines(tb, key, centroids), position);
  Value clusters = queryClusters(b, loc, query, centroids);
  Value windows =
      clusterWindows(b, loc, cosines, clusters, position, routed.getWindow());
  return attendWindow(tb, query, keys, values, windows, position,
                      attentionScale(routed.getScale(), routed.getQuery()));
}
