//===- LowerMergePartials.cpp - partial attention results merged ----------===//
//
// attn.merge_partials and its backward (AttnOps.td, AttnTrainingOps.td):
// ring attention's merge of two partial results by their logsumexps, as
// elementwise maps over the rows and a row reduction for the backward's
// logsumexp gradients; attn.gate_select, its choice of a share's halves.
// Everything in f32; a row that saw no key keeps -inf and zeros, never NaN
// (expShifted).
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// `onOpen` where `gate` ([1]) holds a nonzero value and `onClosed` (of
/// the same shape; -inf when null) where it holds 0, elementwise.
Value selectByGate(TensorBuilder &t, Value gate, Value onOpen, Value onClosed) {
  RankedTensorType type = tensorType(onOpen);
  unsigned rank = type.getRank();
  SmallVector<Value> inputs = {gate, onOpen};
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, t.builder().getAffineConstantExpr(0)),
      t.identityMap(rank)};
  if (onClosed) {
    inputs.push_back(onClosed);
    maps.push_back(t.identityMap(rank));
  }
  return t.map(type.getShape(), type.getElementType(), inputs, maps,
               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                 Type elt = a[1].getType();
                 Value closed =
                     arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                           a[0], floatConstant(b, l, elt, 0.0));
                 Value otherwise =
                     onClosed ? a[2]
                              : floatConstant(b, l, elt, kNegativeInfinity);
                 return arith::SelectOp::create(b, l, closed, otherwise, a[1]);
               });
}

/// The second partial's logsumexp as the merge counts it: -inf where the
/// gate, when given, holds 0.
Value gatedLogSumExp(TensorBuilder &t, Value logSumExp, Value gate) {
  return gate ? selectByGate(t, gate, logSumExp, Value()) : logSumExp;
}

/// log(exp(l1) + exp(l2)), -inf where both are.
Value mergedLogSumExp(TensorBuilder &t, Value first, Value second) {
  return t.mapSameShape(
      {first, second}, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value m = larger(b, l, a[0], a[1]);
        Value sum =
            add(b, l, expShifted(b, l, a[0], m), expShifted(b, l, a[1], m));
        return add(b, l, m, math::LogOp::create(b, l, sum));
      });
}

/// w * x over [B, H, S, D] for w = exp(l - L) per row ([B, H, S]), plus
/// `plus` (same shape as x) when given.
Value weightedRows(TensorBuilder &t, Value x, Value logSumExp, Value merged,
                   Value plus = Value()) {
  RankedTensorType type = tensorType(x);
  SmallVector<Value> inputs = {x, logSumExp, merged};
  SmallVector<AffineMap> maps = {t.identityMap(4), t.dropLastMap(4),
                                 t.dropLastMap(4)};
  if (plus) {
    inputs.push_back(plus);
    maps.push_back(t.identityMap(4));
  }
  return t.map(type.getShape(), type.getElementType(), inputs, maps,
               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                 Value weighted = mul(b, l, expShifted(b, l, a[1], a[2]), a[0]);
                 return plus ? add(b, l, weighted, a[3]) : weighted;
               });
}

struct LowerMergePartials : OpRewritePattern<MergePartialsOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MergePartialsOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder t(rewriter, op.getLoc());
    Value second = gatedLogSumExp(t, op.getSecondLogsumexp(), op.getGate());
    Value merged = mergedLogSumExp(t, op.getFirstLogsumexp(), second);
    Value firstPart =
        weightedRows(t, op.getFirst(), op.getFirstLogsumexp(), merged);
    Value result = weightedRows(t, op.getSecond(), second, merged, firstPart);
    rewriter.replaceOp(op, {result, merged});
    return success();
  }
};

/// dL_k = w_k (dL + do · (o_k - o)) for one partial.
Value partialLogSumExpGrad(TensorBuilder &t, Value outGrad, Value partial,
                           Value merged, Value logSumExp, Value mergedLogSumExp,
                           Value logSumExpGrad) {
  Value alongRows =
      t.reduceLastDim({outGrad, partial, merged}, 0.0,
                      [](OpBuilder &b, Location l, ValueRange a) -> Value {
                        Value difference =
                            arith::SubFOp::create(b, l, a[1], a[2]);
                        return multiplyAccumulate(b, l, a[0], difference, a[3]);
                      });
  return t.mapSameShape({alongRows, logSumExp, mergedLogSumExp, logSumExpGrad},
                        [](OpBuilder &b, Location l, ValueRange a) -> Value {
                          return mul(b, l, expShifted(b, l, a[1], a[2]),
                                     add(b, l, a[3], a[0]));
                        });
}

struct LowerMergePartialsBackward : OpRewritePattern<MergePartialsBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MergePartialsBackwardOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder t(rewriter, op.getLoc());
    Value second = gatedLogSumExp(t, op.getSecondLogsumexp(), op.getGate());
    Value merged = op.getLogsumexp();
    rewriter.replaceOp(
        op,
        {weightedRows(t, op.getResultGrad(), op.getFirstLogsumexp(), merged),
         partialLogSumExpGrad(t, op.getResultGrad(), op.getFirst(),
                              op.getResult(), op.getFirstLogsumexp(), merged,
                              op.getLogsumexpGrad()),
         weightedRows(t, op.getResultGrad(), second, merged),
         partialLogSumExpGrad(t, op.getResultGrad(), op.getSecond(),
                              op.getResult(), second, merged,
                              op.getLogsumexpGrad())});
    return success();
  }
};

struct LowerGateSelect : OpRewritePattern<GateSelectOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GateSelectOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder t(rewriter, op.getLoc());
    rewriter.replaceOp(
        op, selectByGate(t, op.getGate(), op.getOnOpen(), op.getOnClosed()));
    return success();
  }
};

} // namespace

void lcc::populateMergePartialsLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerMergePartials, LowerMergePartialsBackward, LowerGateSelect>(
      patterns.getContext());
}
