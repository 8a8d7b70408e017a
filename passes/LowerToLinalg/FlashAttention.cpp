//===- FlashAttention.cpp - the tiled online-softmax builder --------------===//

#include "passes/LowerToLinalg/FlashAttention.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::lowering;

bool lcc::isPairedHalf(Type elt) { return isa<BFloat16Type, Float16Type>(elt); }

int64_t lcc::flashTile(int64_t tile, int64_t seq, Type elt) {
  int64_t clamped = std::min(tile, seq);
  return isPairedHalf(elt) ? llvm::alignTo(clamped, 2) : clamped;
}

Value lcc::pairedOperand(TensorBuilder &t, Value x, Type half,
                         bool kAlongColumns, bool asB) {
  RankedTensorType type = tensorType(x);
  int64_t rows = type.getDimSize(0), columns = type.getDimSize(1);
  int64_t pairs = (kAlongColumns ? columns : rows) / 2;
  int64_t other = kAlongColumns ? rows : columns;
  // The summed dimension split in two: [rows, columns / 2, 2] or
  // [rows / 2, 2, columns].
  Value split =
      kAlongColumns
          ? tensor::ExpandShapeOp::create(
                t.builder(), t.location(),
                RankedTensorType::get({rows, pairs, 2}, type.getElementType()),
                x, ArrayRef<ReassociationIndices>{{0}, {1, 2}})
          : tensor::ExpandShapeOp::create(
                t.builder(), t.location(),
                RankedTensorType::get({pairs, 2, columns},
                                      type.getElementType()),
                x, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  bool round = type.getElementType() != half;
  if (kAlongColumns && !asB && !round)
    return split;
  // The operand's loops are (other, pair, j) for A, (pair, other, j) for B.
  SmallVector<unsigned> splitDims =
      kAlongColumns ? (asB ? SmallVector<unsigned>{1, 0, 2}
                           : SmallVector<unsigned>{0, 1, 2})
                    : (asB ? SmallVector<unsigned>{0, 2, 1}
                           : SmallVector<unsigned>{1, 2, 0});
  SmallVector<int64_t> shape = asB ? SmallVector<int64_t>{pairs, other, 2}
                                   : SmallVector<int64_t>{other, pairs, 2};
  return t.map(shape, half, {split}, {t.map(3, splitDims)},
               [half](OpBuilder &b, Location loc, ValueRange a) {
                 return roundedTo(b, loc, a[0], half);
               });
}

Value BlockProducts::plain(Value a, Value b, Value init) const {
  return half ? paired(a, true, b, false, init) : t.matmul(a, b, init);
}

Value BlockProducts::transposedB(Value a, Value b, Value init) const {
  return half ? paired(a, true, b, true, init)
              : t.matmulTransposedB(a, b, init);
}

Value BlockProducts::transposedA(Value a, Value b, Value init) const {
  return half ? paired(a, false, b, false, init)
              : t.matmulTransposedA(a, b, init);
}

Value BlockProducts::paired(Value a, bool aKAlongColumns, Value b,
                            bool bKAlongColumns, Value init) const {
  return t.pairedMatmul(
      pairedOperand(t, a, half, aKAlongColumns, /*asB=*/false),
      pairedOperand(t, b, half, bKAlongColumns, /*asB=*/true), init);
}

BlockProducts BlockProducts::of(TensorBuilder &t, Value operand) {
  Type elt = tensorType(operand).getElementType();
  return {t, isPairedHalf(elt) ? elt : Type()};
}

namespace {

/// [rows, columns] viewed as [rows, columns / 2, 2]: each row's adjacent
/// pairs, as a paired contraction reads its A.
Value inPairs(TensorBuilder &t, Value x) {
  return pairedOperand(t, x, tensorType(x).getElementType(),
                       /*kAlongColumns=*/true, /*asB=*/false);
}

/// The rows of `x` ([rows, columns] f32) in pairs, rounded to `half`:
/// [rows / 2, columns, 2] with out[p, c, j] = x[2p + j, c].
Value pairRows(TensorBuilder &t, Value x, Type half) {
  return pairedOperand(t, x, half, /*kAlongColumns=*/false, /*asB=*/true);
}

/// `value` [batch, heads, seq, dim] transposed once for every query tile:
/// [batch, heads, dim, seq], whose key tiles are the A of the paired
/// (p·v)ᵀ = vᵀ·pᵀ, rows of keys as a matrix unit loads them.
Value valuesTransposed(TensorBuilder &t, Value value) {
  RankedTensorType type = tensorType(value);
  SmallVector<int64_t> shape(type.getShape());
  return t.map({shape[0], shape[1], shape[3], shape[2]}, type.getElementType(),
               {value}, {t.map(4, {0, 1, 3, 2})},
               [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

} // namespace

/// q kᵀ · scale for one block, modified, then (if `mask`) masked: padded
/// keys, later keys (if causal) and keys not `visible` get -inf.
Value FlashAttention::maskedScores(TensorBuilder &t, Value dots,
                                   const TilePosition &tile, int64_t keySeq,
                                   bool mask, ScoreBlockLayout layout) const {
  Type elt = tensorType(dots).getElementType();
  bool keysByQueries = layout == ScoreBlockLayout::scaledKeysByQueries;
  bool scaled = layout != ScoreBlockLayout::queriesByKeys;
  if (scaled && !mask && !modifyScore)
    return dots;
  unsigned queryDim = keysByQueries ? 1 : 0, keyDim = 1 - queryDim;
  // In place: the masked scores take the dots' buffer rather than a second
  // block of scores (16 KiB of a GPU block's shared memory at 64 x 64).
  unsigned rank = tensorType(dots).getRank();
  return t.generic(
      dots, {}, {t.identityMap(rank)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        auto constant = [&](double v) -> Value {
          return floatConstant(b, loc, elt, v);
        };
        ScorePosition position{
            tile.batch, tile.head,
            arith::AddIOp::create(b, loc, tile.queryStart,
                                  linalg::IndexOp::create(b, loc, queryDim)),
            arith::AddIOp::create(b, loc, tile.keyStart,
                                  linalg::IndexOp::create(b, loc, keyDim))};
        Value score = scaled ? a[0] : mul(b, loc, a[0], constant(scale));
        if (modifyScore)
          score = modifyScore(b, loc, score, position);
        if (!mask)
          return score;
        Value masked = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sge, position.key,
            arith::ConstantIndexOp::create(b, loc, keySeq));
        if (causal) {
          Value future = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sgt, position.key,
              arith::AddIOp::create(
                  b, loc, position.query,
                  arith::ConstantIndexOp::create(b, loc, causalOffset)));
          masked = arith::OrIOp::create(b, loc, masked, future);
        }
        if (visible) {
          Value shown = visible(b, loc, position);
          Value hidden =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, shown,
                                    arith::ConstantIntOp::create(b, loc, 0, 1));
          masked = arith::OrIOp::create(b, loc, masked, hidden);
        }
        return arith::SelectOp::create(b, loc, masked,
                                       constant(kNegativeInfinity), score);
      });
}

SmallVector<Value> FlashAttention::ifTileVisible(
    OpBuilder &b, Location loc, const TilePosition &tile, ValueRange state,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, Location)> body) const {
  if (!tileVisible)
    return body(b, loc);
  auto skip = scf::IfOp::create(
      b, loc, tileVisible(b, loc, tile),
      [&](OpBuilder &ub, Location uloc) {
        scf::YieldOp::create(ub, uloc, body(ub, uloc));
      },
      [&](OpBuilder &ub, Location uloc) {
        scf::YieldOp::create(ub, uloc, state);
      });
  return skip.getResults();
}

/// One step of the online softmax: folds a key tile into the running
/// (row max, row sum, accumulator) `state`. The scores are built keys by
/// queries, from queries already scaled and transposed ([head_dim, query
/// tile]): both products are then plain register-tiled contractions (no
/// transposed operand), and the softmax's maxima and sums run down the
/// columns, each step a contiguous vector pass over a row of queries.
SmallVector<Value> FlashAttention::updateOnline(
    TensorBuilder &t, Value scaledQueriesT, Value keyBlock, Value valueBlock,
    const TilePosition &tile, int64_t keySeq, ValueRange state, bool mask,
    Value wholeTileVisible) const {
  // Half-precision operands meet in pairs of their reduced dimension, the
  // softmax's state stays f32.
  bool paired = isPairedHalf(tensorType(keyBlock).getElementType());
  Type elt = t.builder().getF32Type();
  Value zeroDots = t.filled({keyTile, queryTile}, elt, 0.0);
  Value dots =
      paired ? t.pairedMatmul(inPairs(t, keyBlock), scaledQueriesT, zeroDots)
             : t.matmul(keyBlock, scaledQueriesT, zeroDots);
  // The dots are f32 in either mode.
  if (addToScores)
    dots = addToScores(t, dots, tile);
  constexpr auto layout = ScoreBlockLayout::scaledKeysByQueries;
  Value scores;
  if (mask && wholeTileVisible) {
    // Only the scores branch: the rest of the step, and its buffers, is
    // one body that the loop's buffers can be hoisted out of.
    auto choose = [&](bool masked) {
      return [&, masked](OpBuilder &b, Location loc) {
        TensorBuilder branch(b, loc);
        scf::YieldOp::create(
            b, loc, maskedScores(branch, dots, tile, keySeq, masked, layout));
      };
    };
    scores = scf::IfOp::create(t.builder(), t.location(), wholeTileVisible,
                               choose(false), choose(true))
                 .getResult(0);
  } else {
    scores = maskedScores(t, dots, tile, keySeq, mask, layout);
  }
  // The state is updated in place (each step's buffers are the loop's),
  // so a step allocates and copies nothing.
  Value runningMax = state[0], rowSumSoFar = state[1], acc = state[2];
  Value blockMax = columnMax(t, scores);
  // exp(old max - new max) rescales what was accumulated so far; taken
  // before the running maximum is raised.
  Value correction = t.mapSameShape(
      {runningMax, blockMax}, [](OpBuilder &b, Location loc, ValueRange a) {
        return expShifted(b, loc, a[0], larger(b, loc, a[1], a[0]));
      });
  auto inPlace = [&](Value init, Value operand, AffineMap operandMap,
                     ScalarBody body) {
    unsigned rank = tensorType(init).getRank();
    return t.generic(
        init, {operand}, {operandMap, t.identityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        body);
  };
  auto times = [](OpBuilder &b, Location loc, ValueRange a) {
    return mul(b, loc, a[1], a[0]);
  };
  Value newMax = inPlace(runningMax, blockMax, t.identityMap(1),
                         [](OpBuilder &b, Location loc, ValueRange a) {
                           return larger(b, loc, a[0], a[1]);
                         });
  // sum' = sum * correction + the block's column sums.
  Value scaledSum = inPlace(rowSumSoFar, correction, t.identityMap(1), times);
  auto [probs, newSum] =
      weighProbabilities
          ? weighedExponentials(t, scores, newMax, scaledSum, tile)
          : columnExponentials(t, scores, newMax, scaledSum);
  if (!paired) {
    Value rescaled = inPlace(acc, correction, t.dropLastMap(2), times);
    return {newMax, newSum, t.matmulTransposedA(probs, valueBlock, rescaled)};
  }
  // Paired, the accumulator is (p·v)ᵀ [dim, query tile] += vᵀ·pᵀ: both
  // products then read A by rows of k and B in pairs of k, the operands
  // of a matrix unit's tile product.
  Value rescaled = inPlace(acc, correction, t.lastDimMap(2), times);
  Type half = tensorType(keyBlock).getElementType();
  return {newMax, newSum,
          t.pairedMatmul(inPairs(t, valueBlock), pairRows(t, probs, half),
                         rescaled)};
}

/// The weighted form of columnExponentials (adaptive span): the sum runs
/// over e (m + floor), the values take e m.
std::pair<Value, Value>
FlashAttention::weighedExponentials(TensorBuilder &t, Value scores,
                                    Value maxima, Value sums,
                                    const TilePosition &tile) const {
  Type elt = t.builder().getF32Type();
  Value exps = t.map({keyTile, queryTile}, elt, {scores, maxima},
                     {t.identityMap(2), t.lastDimMap(2)},
                     [](OpBuilder &b, Location loc, ValueRange a) {
                       return expShifted(b, loc, a[0], a[1]);
                     });
  Value weights = weighProbabilities(t, tile);
  Value summed = t.mapSameShape(
      {exps, weights}, [&](OpBuilder &b, Location loc, ValueRange a) {
        return mul(b, loc, a[0],
                   add(b, loc, a[1], floatConstant(b, loc, elt, weightFloor)));
      });
  Value probs = t.mapSameShape({exps, weights},
                               [](OpBuilder &b, Location loc, ValueRange a) {
                                 return mul(b, loc, a[0], a[1]);
                               });
  return {probs, columnSum(t, summed, sums)};
}

/// Whether every key of `tile` is visible to every query of its query
/// tile under padding and causality alone (an i1): its scores need no mask.
Value FlashAttention::unpaddedAndPast(OpBuilder &b, Location loc,
                                      const TilePosition &tile,
                                      int64_t keySeq) const {
  Value keyEnd = arith::AddIOp::create(
      b, loc, tile.keyStart, arith::ConstantIndexOp::create(b, loc, keyTile));
  Value full =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, keyEnd,
                            arith::ConstantIndexOp::create(b, loc, keySeq));
  if (!causal)
    return full;
  // The last key may not be later than the first query.
  Value lastKey = arith::SubIOp::create(
      b, loc, keyEnd, arith::ConstantIndexOp::create(b, loc, 1));
  Value firstQueryAt = arith::AddIOp::create(
      b, loc, tile.queryStart,
      arith::ConstantIndexOp::create(b, loc, causalOffset));
  Value past = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, lastKey,
                                     firstQueryAt);
  return arith::AndIOp::create(b, loc, full, past);
}

/// The key tiles a query tile starting at `queryStart` visits: all of
/// them, or under causality those up to the one holding its last query
/// (later tiles are skipped, not masked).
Value FlashAttention::keyTileEnd(TensorBuilder &t, Value queryStart,
                                 int64_t keyTiles) const {
  Value end = t.index(keyTiles);
  if (!causal)
    return end;
  OpBuilder &b = t.builder();
  Location loc = t.location();
  Value lastVisible = arith::CeilDivSIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, queryStart,
                            t.index(queryTile + causalOffset)),
      t.index(keyTile));
  return arith::MinSIOp::create(b, loc, lastVisible, end);
}

Value FlashAttention::firstQueryTile(OpBuilder &b, Location loc,
                                     Value keyStart) const {
  if (!causal)
    return indexConstant(b, loc, 0);
  Value firstQuery = arith::MaxSIOp::create(
      b, loc,
      queryIndex(b, loc,
                 arith::SubIOp::create(b, loc, keyStart,
                                       indexConstant(b, loc, causalOffset))),
      indexConstant(b, loc, 0));
  return arith::DivUIOp::create(b, loc, firstQuery,
                                indexConstant(b, loc, queryTile));
}

/// The run-time query position of `flash` (set) as an index.
static Value queryPositionIndex(OpBuilder &b, Location loc,
                                const FlashAttention &flash) {
  assert(flash.causalOffset == 0 && "a run-time query position replaces it");
  return castToIndex(b, loc,
                     tensor::ExtractOp::create(b, loc, flash.queryPosition));
}

Value FlashAttention::placedAmongKeys(OpBuilder &b, Location loc,
                                      Value queryStart) const {
  if (!queryPosition)
    return queryStart;
  return arith::AddIOp::create(b, loc, queryStart,
                               queryPositionIndex(b, loc, *this));
}

Value FlashAttention::queryIndex(OpBuilder &b, Location loc,
                                 Value placedStart) const {
  if (!queryPosition)
    return placedStart;
  return arith::SubIOp::create(b, loc, placedStart,
                               queryPositionIndex(b, loc, *this));
}

/// The loop over key tiles for one query tile: the final (row max, row
/// sum, accumulator).
SmallVector<Value>
FlashAttention::attendKeyTiles(OpBuilder &builder, Location loc,
                               Value paddedKey, Value paddedValue,
                               Value scaledQueriesT, const TilePosition &where,
                               int64_t keySeq, int64_t keyTiles) const {
  TensorBuilder tb(builder, loc);
  Type elt = builder.getF32Type();
  bool paired = isPairedHalf(tensorType(paddedKey).getElementType());
  // Paired, the values come transposed: [batch, heads, dim, seq].
  int64_t valueDim = tensorType(paddedValue).getDimSize(paired ? 2 : 3);
  Value end = keyTileEnd(tb, where.queryStart, keyTiles);
  SmallVector<int64_t> accShape =
      paired ? SmallVector<int64_t>{valueDim, queryTile}
             : SmallVector<int64_t>{queryTile, valueDim};
  SmallVector<Value> state0 = {tb.filled({queryTile}, elt, kNegativeInfinity),
                               tb.filled({queryTile}, elt, 0.0),
                               tb.filled(accShape, elt, 0.0)};
  auto keyLoop = scf::ForOp::create(
      builder, loc, tb.index(0), end, tb.index(1), state0,
      [&](OpBuilder &nb, Location nloc, Value keyTileIndex, ValueRange state) {
        TilePosition tile = where;
        tile.keyStart = arith::MulIOp::create(
            nb, nloc, keyTileIndex,
            arith::ConstantIndexOp::create(nb, nloc, keyTile));
        auto update = [&](OpBuilder &ub, Location uloc, bool mask,
                          Value wholeTileVisible) {
          TensorBuilder t(ub, uloc);
          Value keyBlock = tileOf(ub, uloc, paddedKey, tile.batch, tile.head,
                                  tile.keyStart, keyTile);
          Value valueBlock =
              paired ? transposedValueTile(ub, uloc, paddedValue, tile)
                     : tileOf(ub, uloc, paddedValue, tile.batch, tile.head,
                              tile.keyStart, keyTile);
          return updateOnline(t, scaledQueriesT, keyBlock, valueBlock, tile,
                              keySeq, state, mask, wholeTileVisible);
        };
        // A visited tile: masked, or (when known to be wholly visible) not.
        // Without a mask of the form's own, only padding and causality
        // hide keys: with neither, no tile is masked.
        bool maskFree = !visible && !tileFull;
        if (maskFree && !causal && keySeq % keyTile == 0) {
          scf::YieldOp::create(nb, nloc, update(nb, nloc, false, Value()));
          return;
        }
        auto visit = [&](OpBuilder &ub, Location uloc) -> SmallVector<Value> {
          if (!tileFull && !maskFree)
            return update(ub, uloc, true, Value());
          Value full = maskFree ? unpaddedAndPast(ub, uloc, tile, keySeq)
                                : tileFull(ub, uloc, tile);
          return update(ub, uloc, true, full);
        };
        if (!tileVisible) {
          scf::YieldOp::create(nb, nloc, visit(nb, nloc));
          return;
        }
        // Block sparsity: a tile the mask hides entirely is never read.
        Value visibleTile = tileVisible(nb, nloc, tile);
        auto skip = scf::IfOp::create(
            nb, nloc, visibleTile,
            [&](OpBuilder &ub, Location uloc) {
              scf::YieldOp::create(ub, uloc, visit(ub, uloc));
            },
            [&](OpBuilder &ub, Location uloc) {
              scf::YieldOp::create(ub, uloc, state);
            });
        scf::YieldOp::create(nb, nloc, skip.getResults());
      });
  return keyLoop.getResults();
}

/// A query tile ([query tile, head_dim], half precision) scaled, in pairs
/// of head_dim: [head_dim / 2, query tile, 2], the B of the paired k·qᵀ.
/// The scale is applied in f32, then rounded.
Value FlashAttention::scaledQueriesInPairs(TensorBuilder &t,
                                           Value queryBlock) const {
  RankedTensorType type = tensorType(queryBlock);
  Type half = type.getElementType();
  int64_t headDim = type.getDimSize(1);
  Value pairs = inPairs(t, queryBlock);
  return t.map(
      {headDim / 2, queryTile, 2}, half, {pairs}, {t.map(3, {1, 0, 2})},
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Type f32 = b.getF32Type();
        Value wide = arith::ExtFOp::create(b, loc, f32, a[0]);
        Value scaled = mul(b, loc, wide, floatConstant(b, loc, f32, scale));
        return arith::TruncFOp::create(b, loc, half, scaled);
      });
}

/// The key tile of values already transposed ([batch, heads, dim, seq]):
/// [dim, key tile].
Value FlashAttention::transposedValueTile(OpBuilder &b, Location loc,
                                          Value transposedValue,
                                          const TilePosition &tile) const {
  RankedTensorType type = tensorType(transposedValue);
  int64_t dim = type.getDimSize(2);
  return sliceOf(b, loc,
                 RankedTensorType::get({dim, keyTile}, type.getElementType()),
                 transposedValue,
                 {tile.batch, tile.head, b.getIndexAttr(0), tile.keyStart},
                 {b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(dim),
                  b.getIndexAttr(keyTile)});
}

Value FlashAttention::build(OpBuilder &builder, Location loc) const {
  return buildTiles(builder, loc, /*logSumExp=*/false).first;
}

std::pair<Value, Value> FlashAttention::buildWithLogSumExp(OpBuilder &builder,
                                                           Location loc) const {
  return buildTiles(builder, loc, /*logSumExp=*/true);
}

std::pair<Value, Value> FlashAttention::buildTiles(OpBuilder &builder,
                                                   Location loc,
                                                   bool logSumExp) const {
  TensorBuilder tb(builder, loc);
  RankedTensorType qType = tensorType(query), kType = tensorType(key),
                   vType = tensorType(value);
  Type elt = qType.getElementType();
  int64_t batch = qType.getDimSize(0), heads = qType.getDimSize(1);
  int64_t querySeq = qType.getDimSize(2);
  int64_t keySeq = kType.getDimSize(2), valueDim = vType.getDimSize(3);
  int64_t queryTiles = llvm::divideCeil(querySeq, queryTile);
  int64_t keyTiles = llvm::divideCeil(keySeq, keyTile);
  int64_t paddedSeq = queryTiles * queryTile;

  Value paddedQuery = padSeq(tb, query, paddedSeq);
  Value paddedKey = padSeq(tb, key, keyTiles * keyTile);
  Value paddedValue = padSeq(tb, value, keyTiles * keyTile);
  bool paired = isPairedHalf(elt);
  if (paired)
    paddedValue = valuesTransposed(tb, paddedValue);
  Type f32 = builder.getF32Type();

  SmallVector<Value> outs = {
      tb.empty({batch, heads, paddedSeq, valueDim}, elt)};
  if (logSumExp)
    outs.push_back(tb.empty({batch, heads, paddedSeq}, f32));
  auto forall = scf::ForallOp::create(
      builder, loc,
      ArrayRef<OpFoldResult>{builder.getIndexAttr(batch),
                             builder.getIndexAttr(heads),
                             builder.getIndexAttr(queryTiles)},
      outs, /*mapping=*/std::nullopt);

  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(forall.getBody());
  TensorBuilder body(builder, loc);
  TilePosition where;
  where.batch = forall.getInductionVars()[0];
  where.head = forall.getInductionVars()[1];
  where.queryStart = arith::MulIOp::create(
      builder, loc, forall.getInductionVars()[2], body.index(queryTile));
  Value queryBlock = tileOf(builder, loc, paddedQuery, where.batch, where.head,
                            where.queryStart, queryTile);
  // Once per query tile, so that no key tile is ever transposed.
  int64_t headDim = qType.getDimSize(3);
  Value scaledQueriesT =
      paired ? scaledQueriesInPairs(body, queryBlock)
             : body.map({headDim, queryTile}, elt, {queryBlock},
                        {body.map(2, {1, 0})},
                        [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
                          return mul(b, loc, a[0],
                                     floatConstant(b, loc, elt, scale));
                        });
  // Where the tile's queries sit among the keys.
  TilePosition scored = where;
  scored.queryStart = placedAmongKeys(builder, loc, where.queryStart);
  SmallVector<Value> final =
      attendKeyTiles(builder, loc, paddedKey, paddedValue, scaledQueriesT,
                     scored, keySeq, keyTiles);
  Value normalized = body.map(
      {queryTile, valueDim}, elt, {final[2], final[1]},
      {paired ? body.map(2, {1, 0}) : body.identityMap(2), body.dropLastMap(2)},
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Value share = arith::DivFOp::create(b, loc, a[0], a[1]);
        if (emptyRowsGetZeros) {
          // No visible key: the sum is 0 and so is the output.
          Value zero = floatConstant(b, loc, f32, 0.0);
          Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             a[1], zero);
          share = arith::SelectOp::create(b, loc, none, zero, share);
        }
        return roundedTo(b, loc, share, elt);
      });
  // log(sum) + max: -inf + -inf = -inf for a query that sees nothing.
  Value rowLogSumExp;
  if (logSumExp)
    rowLogSumExp = body.mapSameShape(
        {final[0], final[1]}, [](OpBuilder &b, Location loc, ValueRange a) {
          return add(b, loc, math::LogOp::create(b, loc, a[1]), a[0]);
        });

  builder.setInsertionPointToStart(forall.getTerminator().getBody());
  insertIntoShared(
      builder, loc, normalized, forall.getRegionIterArgs()[0],
      {where.batch, where.head, where.queryStart, builder.getIndexAttr(0)},
      {builder.getIndexAttr(1), builder.getIndexAttr(1),
       builder.getIndexAttr(queryTile), builder.getIndexAttr(valueDim)});
  if (logSumExp)
    insertIntoShared(builder, loc, rowLogSumExp, forall.getRegionIterArgs()[1],
                     {where.batch, where.head, where.queryStart},
                     {builder.getIndexAttr(1), builder.getIndexAttr(1),
                      builder.getIndexAttr(queryTile)});

  builder.setInsertionPointAfter(forall);
  Value result = forall.getResult(0);
  Value lse = logSumExp ? forall.getResult(1) : Value();
  if (paddedSeq == querySeq)
    return {result, lse};
  SmallVector<OpFoldResult> zeros(4, builder.getIndexAttr(0));
  result =
      sliceOf(builder, loc,
              RankedTensorType::get({batch, heads, querySeq, valueDim}, elt),
              result, zeros,
              {builder.getIndexAttr(batch), builder.getIndexAttr(heads),
               builder.getIndexAttr(querySeq), builder.getIndexAttr(valueDim)});
  if (lse)
    lse = sliceOf(builder, loc,
                  RankedTensorType::get({batch, heads, querySeq}, f32), lse,
                  ArrayRef<OpFoldResult>(zeros).take_front(3),
                  {builder.getIndexAttr(batch), builder.getIndexAttr(heads),
                   builder.getIndexAttr(querySeq)});
  return {result, lse};
}
