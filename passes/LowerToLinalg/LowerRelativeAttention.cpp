//===- LowerRelativeAttention.cpp - Transformer-XL attention, flash form --===//
//
// attn.relative_attention (docs/design.md §3) as FlashAttention over the memory
// and the segment: the content term is dense attention of q + u, causal
// with the queries M = k_seq - q_seq keys late; the position term is added
// to each block of scores. A query tile [qs, qs + Tq) meets a key tile
// [ks, ks + Tk) at the distances M + qs - ks - (Tk - 1) ... M + qs - ks +
// Tq - 1, a band of Tq + Tk - 1 encodings: one contraction of that band
// with the tile's (q + w) · scale, whose diagonals are the block's terms
// (Transformer-XL's _rel_shift, done per tile and exactly). No [q_seq,
// k_seq] tensor is built. The steps shared with the backward are in
// RelativeSteps.h.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/RelativeSteps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// [batch, heads, seq, dim] as [batch, heads, dim, seq].
Value transposedRows(TensorBuilder &t, Value x) {
  RankedTensorType type = tensorType(x);
  ArrayRef<int64_t> s = type.getShape();
  return t.map({s[0], s[1], s[3], s[2]}, type.getElementType(), {x},
               {t.map(4, {0, 1, 3, 2})},
               [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

/// The position term of every block: the band of encodings times the query
/// tile's (q + w) · scale, transposed once up front (`positionQueriesT`,
/// [batch, heads, head_dim, padded q_seq]) so that the product is a plain
/// contraction, added to the block's dots ([key tile, query tile]) along
/// its diagonals.
BlockScoreTerm positionTerm(const RelativeAttentionPlan &plan,
                            Value positionQueriesT) {
  return [=](TensorBuilder &t, Value dots, const TilePosition &tile) -> Value {
    OpBuilder &b = t.builder();
    Location loc = t.location();
    Value band = plan.band(b, loc, tile);
    RankedTensorType bandType = tensorType(band);
    Type elt = bandType.getElementType();
    int64_t headDim = bandType.getDimSize(1);
    int64_t queryTile = plan.bands.queryTile;
    Value queries =
        sliceOf(b, loc, RankedTensorType::get({headDim, queryTile}, elt),
                positionQueriesT,
                {tile.batch, tile.head, b.getIndexAttr(0), tile.queryStart},
                {b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(headDim),
                 b.getIndexAttr(queryTile)});
    Value bandProducts = t.matmul(
        band, queries, t.filled({bandType.getDimSize(0), queryTile}, elt, 0.0));
    return addPositionTerm(t, dots, bandProducts,
                           ScoreBlockLayout::scaledKeysByQueries);
  };
}

struct LowerRelativeAttention : OpRewritePattern<RelativeAttentionOp> {
  LowerRelativeAttention(MLIRContext *context, AttentionTiling tiling)
      : OpRewritePattern(context), tiling(tiling) {}

  LogicalResult matchAndRewrite(RelativeAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    Location loc = op.getLoc();
    TensorBuilder tb(rewriter, loc);
    RelativeAttentionPlan plan = planRelativeAttention(
        tb,
        {op.getQuery(), op.getKey(), op.getValue(), op.getPos(), op.getU(),
         op.getW(), op.getScale(), op.getClampLen(), op.getSameLength()},
        tiling);
    FlashAttention flash = plan.flash;
    flash.addToScores =
        positionTerm(plan, transposedRows(tb, plan.positionQueries));
    if (op.getLogsumexp()) {
      auto [result, logSumExp] = flash.buildWithLogSumExp(rewriter, loc);
      rewriter.replaceOp(op, {result, logSumExp});
    } else {
      rewriter.replaceOp(op, flash.build(rewriter, loc));
    }
    return success();
  }

  AttentionTiling tiling;
};

} // namespace

void lcc::populateRelativeAttentionLoweringPatterns(RewritePatternSet &patterns,
                                                    AttentionTiling tiling) {
  patterns.add<LowerRelativeAttention>(patterns.getContext(), tiling);
}
