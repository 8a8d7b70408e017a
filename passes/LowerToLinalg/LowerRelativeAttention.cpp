//===- LowerRelativeAttention.cpp - Transformer-XL attention, flash form --===//
//
// attn.relative_attention (DESIGN.md §3) as FlashAttention over the memory
// and the segment: the content term is dense attention of q + u, causal
// with the queries M = k_seq - q_seq keys late; the position term is added
// to each block of scores. A query tile [qs, qs + Tq) meets a key tile
// [ks, ks + Tk) at the distances M + qs - ks - (Tk - 1) ... M + qs - ks +
// Tq - 1, a band of Tq + Tk - 1 encodings: one contraction of that band
// with the tile's (q + w) · scale, whose diagonals are the block's terms
// (Transformer-XL's _rel_shift, done per tile and exactly). No [q_seq,
// k_seq] tensor is built.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/FlashAttention.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// Where the distances of every tile pair fall: the band of a pair starts
/// at row `bandStart(qs, ks)` of a table of the encodings of distances
/// firstDistance, firstDistance + 1, ..., whose row r is that of distance
/// r + firstDistance (clamped into the encodings there are).
struct DistanceBands {
  int64_t memory; // M: keys before the first query
  int64_t queryTile, keyTile;
  int64_t paddedKeySeq;  // key tiles * key tile
  int64_t firstDistance; // of the first row of the table (may be < 0)
  int64_t rows;          // of the table

  DistanceBands(int64_t memory, int64_t queryTile, int64_t keyTile,
                int64_t paddedQuerySeq, int64_t paddedKeySeq)
      : memory(memory), queryTile(queryTile), keyTile(keyTile),
        paddedKeySeq(paddedKeySeq),
        // The last key tile's last key against the first query...
        firstDistance(memory - paddedKeySeq + 1),
        // ...to the first key against the last (padded) query.
        rows(paddedQuerySeq + paddedKeySeq - 1) {}

  int64_t bandRows() const { return queryTile + keyTile - 1; }

  /// The first row of the band of the tile pair (qs, ks): distance M + qs -
  /// ks - (Tk - 1), never below row 0 since ks <= paddedKeySeq - Tk.
  Value bandStart(OpBuilder &b, Location loc, const TilePosition &tile) const {
    Value offset =
        arith::SubIOp::create(b, loc, tile.queryStart, tile.keyStart);
    return arith::AddIOp::create(b, loc, offset,
                                 indexConstant(b, loc, paddedKeySeq - keyTile));
  }
};

/// The encodings of every distance a tile pair may meet, [heads, rows,
/// head_dim]: row r is pos[h, clamp(r + firstDistance, 0, lastDistance)].
/// Negative distances are keys after the query (masked); those past the
/// last key only padded queries see.
Value distanceTable(TensorBuilder &t, Value pos, const DistanceBands &bands,
                    int64_t lastDistance) {
  RankedTensorType type = tensorType(pos);
  int64_t heads = type.getDimSize(0), headDim = type.getDimSize(2);
  return t.map({heads, bands.rows, headDim}, type.getElementType(), {}, {},
               [&](OpBuilder &b, Location loc, ValueRange) -> Value {
                 Value h = linalg::IndexOp::create(b, loc, 0);
                 Value r = linalg::IndexOp::create(b, loc, 1);
                 Value d = linalg::IndexOp::create(b, loc, 2);
                 Value distance = arith::AddIOp::create(
                     b, loc, r, indexConstant(b, loc, bands.firstDistance));
                 distance = arith::MaxSIOp::create(b, loc, distance,
                                                   indexConstant(b, loc, 0));
                 distance = arith::MinSIOp::create(
                     b, loc, distance, indexConstant(b, loc, lastDistance));
                 return tensor::ExtractOp::create(b, loc, pos,
                                                  ValueRange{h, distance, d});
               });
}

/// q + bias[h] over [batch, heads, seq, head_dim], times `scale` when given.
Value withHeadBias(TensorBuilder &t, Value q, Value bias,
                   std::optional<double> scale) {
  RankedTensorType type = tensorType(q);
  return t.map(type.getShape(), type.getElementType(), {q, bias},
               {t.identityMap(4), t.map(4, {1, 3})},
               [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
                 Value sum = add(b, loc, a[0], a[1]);
                 if (!scale)
                   return sum;
                 return mul(b, loc, sum,
                            floatConstant(b, loc, sum.getType(), *scale));
               });
}

/// [batch, heads, seq, dim] as [batch, heads, dim, seq].
Value transposedRows(TensorBuilder &t, Value x) {
  RankedTensorType type = tensorType(x);
  ArrayRef<int64_t> s = type.getShape();
  return t.map({s[0], s[1], s[3], s[2]}, type.getElementType(), {x},
               {t.map(4, {0, 1, 3, 2})},
               [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

/// The position term of every block: the band of encodings times the query
/// tile's (q + w) · scale ([band rows, query tile]), added to the block's
/// dots along its diagonals: dots[k, q] + band[q - k + Tk - 1, q].
BlockScoreTerm positionTerm(Value table, Value scaledPositionQueriesT,
                            const DistanceBands &bands) {
  return [=](TensorBuilder &t, Value dots, const TilePosition &tile) -> Value {
    OpBuilder &b = t.builder();
    Location loc = t.location();
    RankedTensorType tableType = tensorType(table);
    Type elt = tableType.getElementType();
    int64_t headDim = tableType.getDimSize(2);
    int64_t bandRows = bands.bandRows(), queryTile = bands.queryTile;
    Value band = sliceOf(
        b, loc, RankedTensorType::get({bandRows, headDim}, elt), table,
        {tile.head, bands.bandStart(b, loc, tile), b.getIndexAttr(0)},
        {b.getIndexAttr(1), b.getIndexAttr(bandRows), b.getIndexAttr(headDim)});
    Value queries =
        sliceOf(b, loc, RankedTensorType::get({headDim, queryTile}, elt),
                scaledPositionQueriesT,
                {tile.batch, tile.head, b.getIndexAttr(0), tile.queryStart},
                {b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(headDim),
                 b.getIndexAttr(queryTile)});
    Value bandDots =
        t.matmul(band, queries, t.filled({bandRows, queryTile}, elt, 0.0));
    AffineExpr k = b.getAffineDimExpr(0), q = b.getAffineDimExpr(1);
    AffineMap diagonal =
        AffineMap::get(2, 0, {q - k + (bands.keyTile - 1), q}, b.getContext());
    return t.map({bands.keyTile, queryTile}, elt, {dots, bandDots},
                 {t.identityMap(2), diagonal},
                 [](OpBuilder &b, Location loc, ValueRange a) {
                   return add(b, loc, a[0], a[1]);
                 });
  };
}

/// `same_length`: key j is visible to query i only at a distance M + i - j
/// below `window`, i.e. when j + window > M + i.
void limitDistance(FlashAttention &flash, int64_t memory, int64_t window,
                   int64_t keySeq) {
  int64_t lag = memory - window; // j > i + lag
  flash.visible = [lag](OpBuilder &b, Location loc, const ScorePosition &at) {
    Value earliest =
        arith::AddIOp::create(b, loc, at.query, indexConstant(b, loc, lag));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, at.key,
                                 earliest)
        .getResult();
  };
  int64_t queryTile = flash.queryTile, keyTile = flash.keyTile;
  // A key tile holds a visible key iff its last key is past the first
  // query's window.
  flash.tileVisible = [=](OpBuilder &b, Location loc, const TilePosition &at) {
    Value lastKey = arith::AddIOp::create(b, loc, at.keyStart,
                                          indexConstant(b, loc, keyTile - 1));
    Value earliest = arith::AddIOp::create(b, loc, at.queryStart,
                                           indexConstant(b, loc, lag));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, lastKey,
                                 earliest)
        .getResult();
  };
  // Every key of the tile is visible to every query of the query tile: in
  // the last query's window, not after the first query, not padding.
  flash.tileFull = [=](OpBuilder &b, Location loc, const TilePosition &at) {
    auto index = [&](int64_t v) { return indexConstant(b, loc, v); };
    Value lastKey =
        arith::AddIOp::create(b, loc, at.keyStart, index(keyTile - 1));
    Value inWindow = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sgt, at.keyStart,
        arith::AddIOp::create(b, loc, at.queryStart,
                              index(queryTile - 1 + lag)));
    Value past = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sle, lastKey,
        arith::AddIOp::create(b, loc, at.queryStart, index(memory)));
    Value unpadded = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           lastKey, index(keySeq));
    return arith::AndIOp::create(b, loc, inWindow,
                                 arith::AndIOp::create(b, loc, past, unpadded))
        .getResult();
  };
  // A padded query's window may hold padded keys only.
  flash.emptyRowsGetZeros = true;
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
    Value query = op.getQuery();
    int64_t querySeq = tensorType(query).getDimSize(2);
    int64_t keySeq = tensorType(op.getKey()).getDimSize(2);
    int64_t memory = keySeq - querySeq;

    FlashAttention flash;
    flash.query = withHeadBias(tb, query, op.getU(), std::nullopt);
    flash.key = op.getKey();
    flash.value = op.getValue();
    flash.scale = attentionScale(op.getScale(), query);
    flash.causal = true;
    flash.causalOffset = memory;
    flash.queryTile = std::min(tiling.queryTile, querySeq);
    flash.keyTile = std::min(tiling.keyTile, keySeq);

    int64_t paddedQuerySeq =
        llvm::divideCeil(querySeq, flash.queryTile) * flash.queryTile;
    int64_t paddedKeySeq =
        llvm::divideCeil(keySeq, flash.keyTile) * flash.keyTile;
    DistanceBands bands(memory, flash.queryTile, flash.keyTile, paddedQuerySeq,
                        paddedKeySeq);
    int64_t lastDistance = keySeq - 1;
    if (std::optional<int64_t> clampLen = op.getClampLen())
      lastDistance = std::min(lastDistance, *clampLen);
    Value table = distanceTable(tb, op.getPos(), bands, lastDistance);
    Value positionQueries =
        transposedRows(tb, withHeadBias(tb, padSeq(tb, query, paddedQuerySeq),
                                        op.getW(), flash.scale));
    flash.addToScores = positionTerm(table, positionQueries, bands);
    if (std::optional<int64_t> window = op.getSameLength())
      limitDistance(flash, memory, *window, keySeq);
    rewriter.replaceOp(op, flash.build(rewriter, loc));
    return success();
  }

  AttentionTiling tiling;
};

} // namespace

void lcc::populateRelativeAttentionLoweringPatterns(RewritePatternSet &patterns,
                                                    AttentionTiling tiling) {
  patterns.add<LowerRelativeAttention>(patterns.getContext(), tiling);
}
