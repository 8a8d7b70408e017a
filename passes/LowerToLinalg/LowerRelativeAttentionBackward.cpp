//===- LowerRelativeAttentionBackward.cpp - Transformer-XL's flash backward
//===//
//
// attn.relative_attention_backward as FlashAttention-2's backward over the
// blocks the forward visited (RelativeSteps.h). With a = q + u, b = (q +
// w) · scale and the band of encodings P a tile pair meets, each block's
// scores s = a·kᵀ·scale + b·P[t] are recomputed, its probabilities p =
// exp(s - L) and score gradients ds = p (do·vᵀ - delta), delta_i = do_i ·
// o_i. Then
//
//   dk = dsᵀ a · scale, dv = pᵀ do                  (per key tile)
//   da = ds k · scale,  dq_pos = Gᵀ P · scale        (per query tile)
//   dP[band] += G b
//
// where G [band rows, query tile] holds ds along the block's diagonals,
// the transpose of how the forward read the position term. dq = da +
// dq_pos; du and dw are da and dq_pos summed over queries and batch. The
// band gradients of one (batch, head) overlap from tile pair to tile
// pair, so that kernel runs its query tiles in sequence and is parallel
// over batch and heads only: race-free without atomics.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/FlashAttentionBackward.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/RelativeSteps.h"
#include "passes/LowerToLinalg/ScalarOps.h"
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

/// One recomputed block of a tile pair: its operands and its gradients.
struct RelativeBlock {
  Value query;         // a = q + u, [query tile, head_dim]
  Value key, value;    // [key tile, head_dim], [key tile, v_dim]
  Value outGrad;       // [query tile, v_dim]
  Value positionQuery; // b = (q + w) · scale, [query tile, head_dim]
  Value band;          // [band rows, head_dim]
  Value probabilities; // p, [query tile, key tile]
  Value scoreGrads;    // ds, [query tile, key tile]
};

struct RelativeAttentionBackward {
  RelativeAttentionBackward(RelativeAttentionPlan plan, Value out,
                            Value logSumExp, Value outGrad)
      : plan(std::move(plan)), out(out), logSumExp(logSumExp),
        outGrad(outGrad) {}

  RelativeAttentionPlan plan;
  Value out, logSumExp, outGrad;

  struct Gradients {
    Value query, key, value, pos, u, w;
  };
  Gradients build(OpBuilder &builder, Location loc);

private:
  // The operands padded to whole tiles.
  PaddedBackwardOperands padded;

  RelativeBlock blockAt(OpBuilder &b, Location loc,
                        const TilePosition &tile) const;
  std::pair<Value, Value> keyAndValueGradients(OpBuilder &builder,
                                               Location loc) const;
  /// dq [batch, heads, padded q_seq, head_dim], da and dq_pos summed over
  /// queries ([batch, heads, head_dim] each) and the table's gradient
  /// [batch, heads, rows, head_dim].
  std::array<Value, 4> queryAndPositionGradients(OpBuilder &builder,
                                                 Location loc) const;
  Value positionGradient(TensorBuilder &tb, Value tableGrad) const;
};

RelativeBlock
RelativeAttentionBackward::blockAt(OpBuilder &b, Location loc,
                                   const TilePosition &tile) const {
  TensorBuilder t(b, loc);
  const FlashAttention &flash = plan.flash;
  int64_t queryTile = flash.queryTile, keyTile = flash.keyTile;
  BackwardBlock operands = padded.blockAt(b, loc, tile);
  RelativeBlock blk;
  blk.query = operands.query;
  blk.key = operands.key;
  blk.value = operands.value;
  blk.outGrad = operands.outGrad;
  // The tile's queries are placed among the keys; their rows are these.
  Value queryStart = flash.queryIndex(b, loc, tile.queryStart);
  blk.positionQuery = tileOf(b, loc, plan.positionQueries, tile.batch,
                             tile.head, queryStart, queryTile);
  blk.band = plan.band(b, loc, tile);

  // Scores, probabilities and their gradients are f32 on every operand
  // type; half operands meet in pairs (BlockProducts).
  Type elt = b.getF32Type();
  BlockProducts products = BlockProducts::of(t, blk.query);
  auto constant = [&](OpBuilder &ob, Location ol, double v) {
    return floatConstant(ob, ol, elt, v);
  };
  double scale = flash.scale;
  Value dots = t.mapSameShape(
      {products.transposedB(blk.query, blk.key,
                            t.filled({queryTile, keyTile}, elt, 0.0))},
      [&](OpBuilder &ob, Location ol, ValueRange a) {
        return mul(ob, ol, a[0], constant(ob, ol, scale));
      });
  Value bandProducts = products.transposedB(
      blk.band, blk.positionQuery,
      t.filled({plan.bands.bandRows(), queryTile}, elt, 0.0));
  Value scores = flash.maskedScores(
      t,
      addPositionTerm(t, dots, bandProducts,
                      ScoreBlockLayout::scaledQueriesByKeys),
      tile, plan.keySeq, /*mask=*/true, ScoreBlockLayout::scaledQueriesByKeys);
  // A query that sees no key (padding, same_length's empty windows) has no
  // probabilities.
  blk.probabilities = recomputedProbabilities(t, scores, operands.rowStatistic);
  Value dP = products.transposedB(blk.outGrad, blk.value,
                                  t.filled({queryTile, keyTile}, elt, 0.0));
  blk.scoreGrads = t.map(
      {queryTile, keyTile}, elt, {blk.probabilities, dP, operands.delta},
      {t.identityMap(2), t.identityMap(2), t.dropLastMap(2)},
      [&](OpBuilder &ob, Location ol, ValueRange a) {
        return mul(ob, ol, a[0], arith::SubFOp::create(ob, ol, a[1], a[2]));
      });
  return blk;
}

/// ds along the block's diagonals: G[r, q] = ds[q, q - r + Tk - 1], 0
/// where that key is outside the tile. The position term of (q, k) was
/// read from row q - k + Tk - 1 of the band.
Value diagonals(TensorBuilder &t, Value scoreGrads, int64_t bandRows) {
  RankedTensorType type = tensorType(scoreGrads);
  int64_t queryTile = type.getDimSize(0), keyTile = type.getDimSize(1);
  Type elt = type.getElementType();
  return t.map(
      {bandRows, queryTile}, elt, {}, {},
      [&](OpBuilder &b, Location loc, ValueRange) -> Value {
        Value r = linalg::IndexOp::create(b, loc, 0);
        Value q = linalg::IndexOp::create(b, loc, 1);
        Value k = arith::SubIOp::create(
            b, loc,
            arith::AddIOp::create(b, loc, q,
                                  indexConstant(b, loc, keyTile - 1)),
            r);
        auto [inside, clamped] = indexWithin(b, loc, k, keyTile);
        Value ds = tensor::ExtractOp::create(b, loc, scoreGrads,
                                             ValueRange{q, clamped});
        return arith::SelectOp::create(b, loc, inside, ds,
                                       floatConstant(b, loc, elt, 0.0));
      });
}

/// x · scale.
Value scaled(TensorBuilder &t, Value x, double scale) {
  return t.mapSameShape({x}, [&](OpBuilder &b, Location loc, ValueRange a) {
    return mul(b, loc, a[0], floatConstant(b, loc, a[0].getType(), scale));
  });
}

std::pair<Value, Value>
RelativeAttentionBackward::keyAndValueGradients(OpBuilder &builder,
                                                Location loc) const {
  const FlashAttention &flash = plan.flash;
  // Summed in f32 on every operand type.
  SmallVector<Value> grads = sumOverQueryTiles(
      builder, loc, flash, padded.batch, padded.heads, padded.keyTiles,
      padded.queryTiles, {padded.headDim, padded.valueDim},
      builder.getF32Type(),
      [&](OpBuilder &ub, Location ul, const TilePosition &tile,
          ValueRange state) -> SmallVector<Value> {
        TensorBuilder t(ub, ul);
        RelativeBlock blk = blockAt(ub, ul, tile);
        BlockProducts products = BlockProducts::of(t, blk.query);
        return {products.transposedA(blk.scoreGrads, blk.query, state[0]),
                products.transposedA(blk.probabilities, blk.outGrad, state[1])};
      });
  TensorBuilder tb(builder, loc);
  return {scaled(tb, grads[0], flash.scale), grads[1]};
}

std::array<Value, 4>
RelativeAttentionBackward::queryAndPositionGradients(OpBuilder &builder,
                                                     Location loc) const {
  const FlashAttention &flash = plan.flash;
  TensorBuilder tb(builder, loc);
  // Summed in f32 on every operand type.
  Type elt = builder.getF32Type();
  int64_t batch = padded.batch, heads = padded.heads;
  int64_t queryTile = flash.queryTile, keyTile = flash.keyTile;
  int64_t paddedQueries = padded.queryTiles * queryTile,
          headDim = padded.headDim, keyTiles = padded.keyTiles;
  int64_t rows = plan.bands.rows, bandRows = plan.bands.bandRows();

  auto forall = scf::ForallOp::create(
      builder, loc,
      ArrayRef<OpFoldResult>{builder.getIndexAttr(batch),
                             builder.getIndexAttr(heads)},
      ValueRange{tb.empty({batch, heads, paddedQueries, headDim}, elt),
                 tb.empty({batch, heads, headDim}, elt),
                 tb.empty({batch, heads, headDim}, elt),
                 tb.empty({batch, heads, rows, headDim}, elt)},
      std::nullopt);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(forall.getBody());
  TensorBuilder body(builder, loc);
  TilePosition where;
  where.batch = forall.getInductionVars()[0];
  where.head = forall.getInductionVars()[1];
  SmallVector<Value> perHead = {body.empty({paddedQueries, headDim}, elt),
                                body.filled({headDim}, elt, 0.0),
                                body.filled({headDim}, elt, 0.0),
                                body.filled({rows, headDim}, elt, 0.0)};
  auto queryLoop = scf::ForOp::create(
      builder, loc, body.index(0), body.index(paddedQueries / queryTile),
      body.index(1), perHead,
      [&](OpBuilder &ob, Location ol, Value queryTileIndex,
          ValueRange headState) {
        TensorBuilder outer(ob, ol);
        Value queryStart = arith::MulIOp::create(ob, ol, queryTileIndex,
                                                 outer.index(queryTile));
        TilePosition at = where;
        at.queryStart = flash.placedAmongKeys(ob, ol, queryStart);
        Value end = flash.keyTileEnd(outer, at.queryStart, keyTiles);
        SmallVector<Value> tileInit = {
            outer.filled({queryTile, headDim}, elt, 0.0),
            outer.filled({queryTile, headDim}, elt, 0.0), headState[3]};
        auto keyLoop = scf::ForOp::create(
            ob, ol, outer.index(0), end, outer.index(1), tileInit,
            [&](OpBuilder &nb, Location nl, Value keyTileIndex,
                ValueRange state) {
              TilePosition tile = at;
              tile.keyStart = arith::MulIOp::create(
                  nb, nl, keyTileIndex, indexConstant(nb, nl, keyTile));
              scf::YieldOp::create(
                  nb, nl,
                  flash.ifTileVisible(
                      nb, nl, tile, state,
                      [&](OpBuilder &ub, Location ul) -> SmallVector<Value> {
                        TensorBuilder t(ub, ul);
                        RelativeBlock blk = blockAt(ub, ul, tile);
                        BlockProducts products =
                            BlockProducts::of(t, blk.query);
                        Value g = diagonals(t, blk.scoreGrads, bandRows);
                        Value start = plan.bands.bandStart(ub, ul, tile);
                        SmallVector<OpFoldResult> offsets = {
                            start, ub.getIndexAttr(0)};
                        SmallVector<OpFoldResult> sizes = {
                            ub.getIndexAttr(bandRows),
                            ub.getIndexAttr(headDim)};
                        Value bandGrad = sliceOf(
                            ub, ul,
                            RankedTensorType::get({bandRows, headDim}, elt),
                            state[2], offsets, sizes);
                        bandGrad =
                            products.plain(g, blk.positionQuery, bandGrad);
                        SmallVector<OpFoldResult> strides(2,
                                                          ub.getIndexAttr(1));
                        return {
                            products.plain(blk.scoreGrads, blk.key, state[0]),
                            products.transposedA(g, blk.band, state[1]),
                            tensor::InsertSliceOp::create(ub, ul, bandGrad,
                                                          state[2], offsets,
                                                          sizes, strides)};
                      }));
            });
        Value contentGrad = scaled(outer, keyLoop.getResult(0), flash.scale);
        Value positionGrad = scaled(outer, keyLoop.getResult(1), flash.scale);
        SmallVector<OpFoldResult> strides(2, ob.getIndexAttr(1));
        Value queryGrads = tensor::InsertSliceOp::create(
            ob, ol, addTensors(outer, contentGrad, positionGrad), headState[0],
            ArrayRef<OpFoldResult>{queryStart, ob.getIndexAttr(0)},
            ArrayRef<OpFoldResult>{ob.getIndexAttr(queryTile),
                                   ob.getIndexAttr(headDim)},
            strides);
        scf::YieldOp::create(
            ob, ol,
            ValueRange{queryGrads,
                       addTensors(outer, headState[1],
                                  sumOverDim(outer, contentGrad, 0)),
                       addTensors(outer, headState[2],
                                  sumOverDim(outer, positionGrad, 0)),
                       keyLoop.getResult(2)});
      });
  builder.setInsertionPointToStart(forall.getTerminator().getBody());
  auto unit = builder.getIndexAttr(1);
  auto zero = builder.getIndexAttr(0);
  insertIntoShared(builder, loc, queryLoop.getResult(0),
                   forall.getRegionIterArgs()[0],
                   {where.batch, where.head, zero, zero},
                   {unit, unit, builder.getIndexAttr(paddedQueries),
                    builder.getIndexAttr(headDim)});
  for (unsigned i : {1u, 2u})
    insertIntoShared(builder, loc, queryLoop.getResult(i),
                     forall.getRegionIterArgs()[i],
                     {where.batch, where.head, zero},
                     {unit, unit, builder.getIndexAttr(headDim)});
  insertIntoShared(
      builder, loc, queryLoop.getResult(3), forall.getRegionIterArgs()[3],
      {where.batch, where.head, zero, zero},
      {unit, unit, builder.getIndexAttr(rows), builder.getIndexAttr(headDim)});
  return {forall.getResult(0), forall.getResult(1), forall.getResult(2),
          forall.getResult(3)};
}

/// The table's gradient folded back onto the distances: row r is distance
/// r + firstDistance + D (D the query offset, or 0); rows past
/// lastDistance were its clamped copies, rows before distance 0 hold
/// masked (zero) gradients, distances no row holds get none.
Value RelativeAttentionBackward::positionGradient(TensorBuilder &tb,
                                                  Value tableGrad) const {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  Value perHead = sumOverDim(tb, tableGrad, 0); // [heads, rows, head_dim]
  RankedTensorType type = tensorType(perHead);
  Type elt = type.getElementType();
  int64_t heads = type.getDimSize(0), rows = type.getDimSize(1),
          headDim = type.getDimSize(2);
  int64_t lastDistance = plan.lastDistance;
  // Row r's distance less r: firstDistance + D.
  Value rowToDistance = arith::AddIOp::create(
      b, loc, plan.bands.distanceShift(b, loc),
      indexConstant(b, loc, plan.bands.firstDistance));
  auto zero = [&](OpBuilder &ob, Location ol) {
    return floatConstant(ob, ol, elt, 0.0);
  };
  // The rows at or past the last distance, summed.
  Value tail = sumOverDim(
      tb,
      tb.mapSameShape(
          {perHead},
          [&](OpBuilder &ob, Location ol, ValueRange a) -> Value {
            Value distance = arith::AddIOp::create(
                ob, ol, linalg::IndexOp::create(ob, ol, 1), rowToDistance);
            Value clamped = arith::CmpIOp::create(
                ob, ol, arith::CmpIPredicate::sge, distance,
                indexConstant(ob, ol, lastDistance));
            return arith::SelectOp::create(ob, ol, clamped, a[0], zero(ob, ol));
          }),
      1);
  return tb.map(
      {heads, plan.encodings, headDim}, elt, {tail}, {tb.map(3, {0, 2})},
      [&](OpBuilder &ob, Location ol, ValueRange a) -> Value {
        Value h = linalg::IndexOp::create(ob, ol, 0);
        Value t = linalg::IndexOp::create(ob, ol, 1);
        Value d = linalg::IndexOp::create(ob, ol, 2);
        // Below the last distance: its own row, where the table has one.
        auto [inTable, clampedRow] = indexWithin(
            ob, ol, arith::SubIOp::create(ob, ol, t, rowToDistance), rows);
        Value own = tensor::ExtractOp::create(ob, ol, perHead,
                                              ValueRange{h, clampedRow, d});
        own = arith::SelectOp::create(ob, ol, inTable, own, zero(ob, ol));
        Value below =
            arith::CmpIOp::create(ob, ol, arith::CmpIPredicate::slt, t,
                                  indexConstant(ob, ol, lastDistance));
        Value atLast =
            arith::CmpIOp::create(ob, ol, arith::CmpIPredicate::eq, t,
                                  indexConstant(ob, ol, lastDistance));
        return arith::SelectOp::create(
            ob, ol, below, own,
            arith::SelectOp::create(ob, ol, atLast, a[0], zero(ob, ol)));
      });
}

RelativeAttentionBackward::Gradients
RelativeAttentionBackward::build(OpBuilder &builder, Location loc) {
  TensorBuilder tb(builder, loc);
  const FlashAttention &flash = plan.flash;
  // A padded query sees nothing (its logsumexp -inf): its probabilities are
  // 0, whatever score the position term gives it.
  padded = PaddedBackwardOperands::build(tb, flash, out, outGrad, logSumExp);

  auto [keyGrad, valueGrad] = keyAndValueGradients(builder, loc);
  auto [queryGrad, contentBiasGrad, positionBiasGrad, tableGrad] =
      queryAndPositionGradients(builder, loc);

  // Summed in f32, each is rounded once to its operand's type.
  Type operandType = tensorType(flash.query).getElementType();
  auto finished = [&](Value grad) {
    return withElementType(tb, grad, operandType);
  };
  return {finished(padded.unpadded(builder, loc, queryGrad, /*ofKeys=*/false)),
          finished(padded.unpadded(builder, loc, keyGrad, /*ofKeys=*/true)),
          finished(padded.unpadded(builder, loc, valueGrad, /*ofKeys=*/true)),
          finished(positionGradient(tb, tableGrad)),
          finished(sumOverDim(tb, contentBiasGrad, 0)),
          finished(sumOverDim(tb, positionBiasGrad, 0))};
}

struct LowerRelativeAttentionBackward
    : OpRewritePattern<RelativeAttentionBackwardOp> {
  LowerRelativeAttentionBackward(MLIRContext *context, AttentionTiling tiling)
      : OpRewritePattern(context), tiling(tiling) {}

  LogicalResult matchAndRewrite(RelativeAttentionBackwardOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    Location loc = op.getLoc();
    TensorBuilder tb(rewriter, loc);
    auto plan = [&] {
      return planRelativeAttention(
          tb,
          {op.getQuery(), op.getKey(), op.getValue(), op.getPos(), op.getU(),
           op.getW(), op.getQueryOffset(), op.getScale(), op.getClampLen(),
           op.getSameLength()},
          tiling);
    };
    // The table of encodings and the biased queries are the forward's,
    // recomputed: shared by CSE they would live from the forward to here
    // (one table a chunk pair around the ring). In a reversible block the
    // forward is the block's recomputed clone, which they may share.
    RelativeAttentionBackward backward(
        op->hasAttr(kBackwardOfRecomputedAttrName)
            ? plan()
            : buildRecomputed(rewriter, plan),
        op.getResult(), op.getLogsumexp(), op.getResultGrad());
    RelativeAttentionBackward::Gradients grads = backward.build(rewriter, loc);
    rewriter.replaceOp(
        op, {grads.query, grads.key, grads.value, grads.pos, grads.u, grads.w});
    return success();
  }

  AttentionTiling tiling;
};

} // namespace

void lcc::populateRelativeAttentionBackwardLoweringPatterns(
    RewritePatternSet &patterns, AttentionTiling tiling) {
  patterns.add<LowerRelativeAttentionBackward>(patterns.getContext(), tiling);
}
