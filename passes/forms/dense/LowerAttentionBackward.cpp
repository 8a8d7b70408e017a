//===- LowerAttentionBackward.cpp - the flash backward --------------------===//
//
// attn.attention_backward as FlashAttention-2's backward (Dao, 2023). The
// forward saved each query's logsumexp L, so a block's probabilities are
// recomputed as exp(s - L) and never stored:
//
//   delta_i = do_i · o_i
//   p_ij = exp(s_ij - L_i),  ds_ij = p_ij (do_i · v_j - delta_i) s'_ij
//   dv_j = sum_i p_ij do_i,  dk_j = sum_i ds_ij q_i scale,
//   dq_i = sum_j ds_ij k_j scale,
//
// with s' the derivative of the score modifier (the score region,
// differentiated here; 0 for shared-QK's constant self score). Two kernels,
// each parallel and free of atomics: one per key tile sums over query
// tiles (dk, dv), one per query tile sums over key tiles (dq). Both visit
// exactly the tiles the forward visits: causally later tiles and tiles the
// mask's block table hides are skipped.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/FlashAttentionBackward.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/forms/dense/DenseForm.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// d(score region)/ds at `s`, by forward-mode differentiation of the
/// region's scalar ops: each value maps to its derivative, absent for
/// values that do not depend on s (constants, positions).
FailureOr<Value> differentiateScoreRegion(OpBuilder &b, Location loc,
                                          Region &region, Value s,
                                          const ScorePosition &at) {
  IRMapping values;
  DenseMap<Value, Value> derivative;
  Block &block = region.front();
  values.map(block.getArguments(),
             ValueRange{s, at.batch, at.head, at.query, at.key});
  Type elt = s.getType();
  derivative[block.getArgument(0)] = floatConstant(b, loc, elt, 1.0);
  auto d = [&](Value v) { return derivative.lookup(v); };
  auto orZero = [&](Value v) {
    Value dv = d(v);
    return dv ? dv : floatConstant(b, loc, elt, 0.0);
  };
  for (Operation &op : block.without_terminator()) {
    Operation *clone = b.clone(op, values);
    if (llvm::none_of(op.getOperands(), [&](Value v) { return d(v); }))
      continue;
    auto x = [&](unsigned i) {
      return values.lookupOrDefault(op.getOperand(i));
    };
    Value y = clone->getNumResults() ? clone->getResult(0) : Value();
    Value dy;
    if (isa<arith::AddFOp>(op)) {
      dy = add(b, loc, orZero(op.getOperand(0)), orZero(op.getOperand(1)));
    } else if (isa<arith::SubFOp>(op)) {
      dy = arith::SubFOp::create(b, loc, orZero(op.getOperand(0)),
                                 orZero(op.getOperand(1)));
    } else if (isa<arith::NegFOp>(op)) {
      dy = arith::NegFOp::create(b, loc, orZero(op.getOperand(0)));
    } else if (isa<arith::MulFOp>(op)) {
      dy = add(b, loc, mul(b, loc, orZero(op.getOperand(0)), x(1)),
               mul(b, loc, x(0), orZero(op.getOperand(1))));
    } else if (isa<arith::DivFOp>(op)) {
      // (da - y db) / b.
      dy = arith::DivFOp::create(
          b, loc,
          arith::SubFOp::create(b, loc, orZero(op.getOperand(0)),
                                mul(b, loc, y, orZero(op.getOperand(1)))),
          x(1));
    } else if (isa<math::TanhOp>(op)) {
      Value one = floatConstant(b, loc, elt, 1.0);
      dy = mul(b, loc, arith::SubFOp::create(b, loc, one, mul(b, loc, y, y)),
               orZero(op.getOperand(0)));
    } else if (isa<math::ExpOp>(op)) {
      dy = mul(b, loc, y, orZero(op.getOperand(0)));
    } else if (isa<arith::SelectOp>(op)) {
      dy = arith::SelectOp::create(b, loc, x(0), orZero(op.getOperand(1)),
                                   orZero(op.getOperand(2)));
    } else if (isa<arith::MaximumFOp, arith::MinimumFOp>(op)) {
      auto predicate = isa<arith::MaximumFOp>(op) ? arith::CmpFPredicate::OGE
                                                  : arith::CmpFPredicate::OLE;
      Value first = arith::CmpFOp::create(b, loc, predicate, x(0), x(1));
      dy = arith::SelectOp::create(b, loc, first, orZero(op.getOperand(0)),
                                   orZero(op.getOperand(1)));
    } else if (isa<arith::CmpFOp>(op)) {
      continue; // A predicate: no derivative of its own.
    } else {
      return op.emitOpError()
             << "in a score region has no derivative: the attention backward "
                "differentiates addf, subf, negf, mulf, divf, maximumf, "
                "minimumf, select, tanh and exp of the score";
    }
    derivative[op.getResult(0)] = dy;
  }
  Value yielded = block.getTerminator()->getOperand(0);
  return orZero(yielded);
}

} // namespace

LogicalResult lcc::checkScoreRegionDifferentiable(Region &region) {
  llvm::DenseSet<Value> dependent = {region.front().getArgument(0)};
  for (Operation &op : region.front().without_terminator()) {
    if (llvm::none_of(op.getOperands(),
                      [&](Value v) { return dependent.contains(v); }))
      continue;
    if (!isa<arith::AddFOp, arith::SubFOp, arith::NegFOp, arith::MulFOp,
             arith::DivFOp, math::TanhOp, math::ExpOp, arith::SelectOp,
             arith::MaximumFOp, arith::MinimumFOp, arith::CmpFOp>(op))
      return op.emitOpError()
             << "in a score region has no derivative: the attention backward "
                "differentiates addf, subf, negf, mulf, divf, maximumf, "
                "minimumf, select, tanh and exp of the score";
    for (Value r : op.getResults())
      dependent.insert(r);
  }
  return success();
}

namespace {

/// d(final score)/d(scaled dot product) of the attention `spec` describes:
/// its score region's derivative, 0 at shared-QK's constant self score;
/// null when the scores are the scaled dot products themselves.
ScoreDerivative scoreDerivativeOf(const AttentionSpec &spec) {
  if (!spec.score && !spec.sharedQK)
    return nullptr;
  return [&spec](OpBuilder &b, Location loc, Value raw,
                 const ScorePosition &at) -> FailureOr<Value> {
    Value derivative;
    if (spec.score) {
      FailureOr<Value> d = differentiateScoreRegion(
          b, loc, *spec.score, raw, positionInSequence(b, loc, spec, at));
      if (failed(d))
        return failure();
      derivative = *d;
    }
    if (spec.sharedQK) {
      // The self score is the constant -1e5.
      Value self = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         at.query, at.key);
      Type elt = raw.getType();
      derivative = arith::SelectOp::create(
          b, loc, self, floatConstant(b, loc, elt, 0.0),
          derivative ? derivative : floatConstant(b, loc, elt, 1.0));
    }
    return derivative;
  };
}

struct LowerAttentionBackward : OpRewritePattern<AttentionBackwardOp> {
  LowerAttentionBackward(MLIRContext *context, AttentionTiling tiling)
      : OpRewritePattern(context), tiling(tiling) {}

  LogicalResult matchAndRewrite(AttentionBackwardOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    // The pass checked the score region before any pattern ran: an error
    // here would be repeated by every retry of the driver.
    AttentionSpec spec = AttentionSpec::of(op, /*remarks=*/false);
    FlashAttentionBackward backward{
        configureFlashAttention(rewriter, spec, tiling),
        op.getResult(),
        op.getLogsumexp(),
        op.getResultGrad(),
        scoreDerivativeOf(spec),
        op.getLogsumexpGrad()};
    FailureOr<std::array<Value, 3>> grads =
        backward.build(rewriter, op.getLoc());
    if (failed(grads))
      return failure();
    auto [queryGrad, keyGrad, valueGrad] = *grads;
    if (!op.getSharedQk()) {
      rewriter.replaceOp(op, {queryGrad, keyGrad, valueGrad});
      return success();
    }
    // Shared QK: the keys were the normalised queries. On half operands
    // the flash backward's query and key gradients come rounded to the half
    // type; the key gradient goes through the normalisation in f32, the two
    // parts are summed in f32 and the sum is rounded.
    TensorBuilder tb(rewriter, op.getLoc());
    Type elt = tensorType(op.getQuery()).getElementType();
    Value throughKeys = normalizeRowsBackward(tb, op.getQuery(), keyGrad);
    Value queryGradF32 = withElementType(tb, queryGrad, rewriter.getF32Type());
    rewriter.replaceOp(
        op,
        {withElementType(tb, addTensors(tb, queryGradF32, throughKeys), elt),
         valueGrad});
    return success();
  }

  AttentionTiling tiling;
};

} // namespace

void lcc::populateAttentionBackwardLoweringPatterns(RewritePatternSet &patterns,
                                                    AttentionTiling tiling) {
  patterns.add<LowerAttentionBackward>(patterns.getContext(), tiling);
}
