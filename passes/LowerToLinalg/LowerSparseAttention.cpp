//===- LowerSparseAttention.cpp - block-sparse flash attention ------------===//
//
// Sparse Transformer attention (DESIGN.md §3) is FlashAttention with the
// pattern as its visibility, tiles of `block` queries and keys, and every
// key tile that the pattern hides from a whole query tile skipped.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/FlashAttention.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

using P = arith::CmpIPredicate;

Value cmp(OpBuilder &b, Location loc, P p, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, p, x, y);
}
Value orOf(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::OrIOp::create(b, loc, x, y);
}
Value andOf(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AndIOp::create(b, loc, x, y);
}

/// The fixed pattern with stride l and summary c: j in A(i) iff
/// floor(j/l) == floor(i/l) or (j mod l) >= l - c.
void useFixedPattern(FlashAttention &flash, int64_t stride, int64_t summary,
                     int64_t tile) {
  flash.visible = [=](OpBuilder &b, Location loc, const ScorePosition &at) {
    Value l = indexConstant(b, loc, stride);
    Value sameWindow =
        cmp(b, loc, P::eq, arith::DivSIOp::create(b, loc, at.query, l),
            arith::DivSIOp::create(b, loc, at.key, l));
    Value isSummary =
        cmp(b, loc, P::sge, arith::RemSIOp::create(b, loc, at.key, l),
            indexConstant(b, loc, stride - summary));
    return orOf(b, loc, sameWindow, isSummary);
  };
  // Tiles [qs, qs+B) and [ks, ks+B): their windows overlap, or the key tile
  // holds a summary position (it wraps past a window end, or its last
  // position is one).
  flash.tileVisible = [=](OpBuilder &b, Location loc,
                          const TilePosition &at) -> Value {
    // A tile at least a window long always holds a summary position.
    if (tile >= stride)
      return arith::ConstantIntOp::create(b, loc, 1, 1).getResult();
    Value qs = at.queryStart, ks = at.keyStart;
    Value l = indexConstant(b, loc, stride),
          last = indexConstant(b, loc, tile - 1);
    Value qEnd = arith::AddIOp::create(b, loc, qs, last);
    Value kEnd = arith::AddIOp::create(b, loc, ks, last);
    auto window = [&](Value x) -> Value {
      return arith::DivSIOp::create(b, loc, x, l);
    };
    Value overlap = andOf(b, loc, cmp(b, loc, P::sle, window(qs), window(kEnd)),
                          cmp(b, loc, P::sle, window(ks), window(qEnd)));
    Value wraps = cmp(b, loc, P::sge,
                      arith::AddIOp::create(
                          b, loc, arith::RemSIOp::create(b, loc, ks, l), last),
                      l);
    Value endsInSummary =
        cmp(b, loc, P::sge, arith::RemSIOp::create(b, loc, kEnd, l),
            indexConstant(b, loc, stride - summary));
    return orOf(b, loc, overlap, orOf(b, loc, wraps, endsInSummary));
  };
}

/// The strided pattern with stride l: j in A(i) iff |i - j| < l or
/// (i - j) mod l == 0.
void useStridedPattern(FlashAttention &flash, int64_t stride, int64_t tile) {
  flash.visible = [=](OpBuilder &b, Location loc, const ScorePosition &at) {
    Value d = arith::SubIOp::create(b, loc, at.query, at.key);
    Value local =
        andOf(b, loc, cmp(b, loc, P::slt, d, indexConstant(b, loc, stride)),
              cmp(b, loc, P::sgt, d, indexConstant(b, loc, -stride)));
    Value onStride =
        cmp(b, loc, P::eq,
            arith::RemSIOp::create(b, loc, d, indexConstant(b, loc, stride)),
            indexConstant(b, loc, 0));
    return orOf(b, loc, local, onStride);
  };
  // The differences i - j of two tiles fill [lo, hi] = [qs - ks - (B-1),
  // qs - ks + (B-1)]: visible if that meets (-l, l) or holds a multiple of
  // l.
  flash.tileVisible = [=](OpBuilder &b, Location loc,
                          const TilePosition &at) -> Value {
    Value l = indexConstant(b, loc, stride);
    Value d = arith::SubIOp::create(b, loc, at.queryStart, at.keyStart);
    Value lo =
        arith::SubIOp::create(b, loc, d, indexConstant(b, loc, tile - 1));
    Value hi =
        arith::AddIOp::create(b, loc, d, indexConstant(b, loc, tile - 1));
    Value local =
        andOf(b, loc, cmp(b, loc, P::slt, lo, l),
              cmp(b, loc, P::sgt, hi, indexConstant(b, loc, -stride)));
    Value multiple = arith::MulIOp::create(
        b, loc, arith::FloorDivSIOp::create(b, loc, hi, l), l);
    Value onStride = cmp(b, loc, P::sge, multiple, lo);
    return orOf(b, loc, local, onStride);
  };
}

struct LowerSparseAttention : OpRewritePattern<SparseAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SparseAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    int64_t seq = tensorType(op.getQuery()).getDimSize(2);
    int64_t tile = std::min<int64_t>(op.getBlock(), seq);
    FlashAttention flash;
    flash.query = op.getQuery();
    flash.key = op.getKey();
    flash.value = op.getValue();
    flash.scale = attentionScale(op.getScale(), op.getQuery());
    flash.causal = op.getCausal();
    flash.queryTile = flash.keyTile = tile;
    if (op.getPattern() == SparsePattern::Fixed)
      useFixedPattern(flash, op.getStride(), *op.getSummary(), tile);
    else
      useStridedPattern(flash, op.getStride(), tile);
    rewriter.replaceOp(op, flash.build(rewriter, op.getLoc()));
    return success();
  }
};

} // namespace

void lcc::populateSparseAttentionLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerSparseAttention>(patterns.getContext());
}
