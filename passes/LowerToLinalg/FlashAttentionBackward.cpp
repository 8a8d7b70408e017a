//===- FlashAttentionBackward.cpp - the flash backward's shared steps -----===//

#include "passes/LowerToLinalg/FlashAttentionBackward.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::lowering;

Value lcc::lowering::recomputedProbabilities(TensorBuilder &t, Value scores,
                                             Value logSumExp) {
  RankedTensorType type = tensorType(scores);
  Type elt = type.getElementType();
  return t.map(type.getShape(), elt, {scores, logSumExp},
               {t.identityMap(2), t.dropLastMap(2)},
               [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
                 Value none = arith::CmpFOp::create(
                     b, loc, arith::CmpFPredicate::OEQ, a[1],
                     floatConstant(b, loc, elt, kNegativeInfinity));
                 return arith::SelectOp::create(b, loc, none,
                                                floatConstant(b, loc, elt, 0.0),
                                                expShifted(b, loc, a[0], a[1]));
               });
}

namespace {

/// One kernel of the backward: for each (batch, head, outer tile), zeros of
/// [outer tile, widths[i]] folded by `block` over the inner tiles the
/// forward visits with it. Outer tiles are key tiles (inner: query tiles)
/// when `overKeyTiles`, else query tiles (inner: key tiles).
SmallVector<Value> foldTilePairs(OpBuilder &builder, Location loc,
                                 const FlashAttention &flash, int64_t batch,
                                 int64_t heads, int64_t keyTiles,
                                 int64_t queryTiles, bool overKeyTiles,
                                 ArrayRef<int64_t> widths, Type elementType,
                                 const TilePairStep &block) {
  TensorBuilder tb(builder, loc);
  int64_t outerTile = overKeyTiles ? flash.keyTile : flash.queryTile;
  int64_t innerTile = overKeyTiles ? flash.queryTile : flash.keyTile;
  int64_t outerTiles = overKeyTiles ? keyTiles : queryTiles;
  SmallVector<Value> shared;
  for (int64_t width : widths)
    shared.push_back(
        tb.empty({batch, heads, outerTiles * outerTile, width}, elementType));
  auto forall = scf::ForallOp::create(
      builder, loc,
      ArrayRef<OpFoldResult>{builder.getIndexAttr(batch),
                             builder.getIndexAttr(heads),
                             builder.getIndexAttr(outerTiles)},
      shared, std::nullopt);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(forall.getBody());
  TensorBuilder body(builder, loc);
  TilePosition where;
  where.batch = forall.getInductionVars()[0];
  where.head = forall.getInductionVars()[1];
  Value outerStart = arith::MulIOp::create(
      builder, loc, forall.getInductionVars()[2], body.index(outerTile));
  (overKeyTiles ? where.keyStart : where.queryStart) = outerStart;
  // Causally, a key tile is seen from some query tile on, and a query tile
  // sees key tiles up to some end.
  Value first = overKeyTiles ? flash.firstQueryTile(builder, loc, outerStart)
                             : body.index(0);
  Value end = overKeyTiles ? body.index(queryTiles)
                           : flash.keyTileEnd(body, outerStart, keyTiles);
  SmallVector<Value> init;
  for (int64_t width : widths)
    init.push_back(body.filled({outerTile, width}, elementType, 0.0));
  auto loop = scf::ForOp::create(
      builder, loc, first, end, body.index(1), init,
      [&](OpBuilder &nb, Location nl, Value innerIndex, ValueRange state) {
        TilePosition tile = where;
        (overKeyTiles ? tile.queryStart : tile.keyStart) =
            arith::MulIOp::create(nb, nl, innerIndex,
                                  indexConstant(nb, nl, innerTile));
        scf::YieldOp::create(
            nb, nl,
            flash.ifTileVisible(nb, nl, tile, state,
                                [&](OpBuilder &ub, Location ul) {
                                  return block(ub, ul, tile, state);
                                }));
      });
  builder.setInsertionPointToStart(forall.getTerminator().getBody());
  for (auto [i, width] : llvm::enumerate(widths))
    insertIntoShared(
        builder, loc, loop.getResult(i), forall.getRegionIterArgs()[i],
        {where.batch, where.head, outerStart, builder.getIndexAttr(0)},
        {builder.getIndexAttr(1), builder.getIndexAttr(1),
         builder.getIndexAttr(outerTile), builder.getIndexAttr(width)});
  return SmallVector<Value>(forall.getResults());
}

} // namespace

SmallVector<Value> lcc::lowering::sumOverQueryTiles(
    OpBuilder &builder, Location loc, const FlashAttention &flash,
    int64_t batch, int64_t heads, int64_t keyTiles, int64_t queryTiles,
    ArrayRef<int64_t> widths, Type elementType, const TilePairStep &block) {
  return foldTilePairs(builder, loc, flash, batch, heads, keyTiles, queryTiles,
                       /*overKeyTiles=*/true, widths, elementType, block);
}

SmallVector<Value> lcc::lowering::sumOverKeyTiles(
    OpBuilder &builder, Location loc, const FlashAttention &flash,
    int64_t batch, int64_t heads, int64_t keyTiles, int64_t queryTiles,
    ArrayRef<int64_t> widths, Type elementType, const TilePairStep &block) {
  return foldTilePairs(builder, loc, flash, batch, heads, keyTiles, queryTiles,
                       /*overKeyTiles=*/false, widths, elementType, block);
}
