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

SmallVector<Value> lcc::lowering::sumOverQueryTiles(
    OpBuilder &builder, Location loc, const FlashAttention &flash,
    int64_t batch, int64_t heads, int64_t keyTiles, int64_t queryTiles,
    ArrayRef<int64_t> widths, Type elementType, const TilePairStep &block) {
  TensorBuilder tb(builder, loc);
  int64_t keyTile = flash.keyTile, queryTile = flash.queryTile;
  SmallVector<Value> shared;
  for (int64_t width : widths)
    shared.push_back(
        tb.empty({batch, heads, keyTiles * keyTile, width}, elementType));
  auto forall = scf::ForallOp::create(
      builder, loc,
      ArrayRef<OpFoldResult>{builder.getIndexAttr(batch),
                             builder.getIndexAttr(heads),
                             builder.getIndexAttr(keyTiles)},
      shared, std::nullopt);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(forall.getBody());
  TensorBuilder body(builder, loc);
  TilePosition where;
  where.batch = forall.getInductionVars()[0];
  where.head = forall.getInductionVars()[1];
  where.keyStart = arith::MulIOp::create(
      builder, loc, forall.getInductionVars()[2], body.index(keyTile));
  SmallVector<Value> init;
  for (int64_t width : widths)
    init.push_back(body.filled({keyTile, width}, elementType, 0.0));
  auto loop = scf::ForOp::create(
      builder, loc, flash.firstQueryTile(builder, loc, where.keyStart),
      body.index(queryTiles), body.index(1), init,
      [&](OpBuilder &nb, Location nl, Value queryTileIndex, ValueRange state) {
        TilePosition tile = where;
        tile.queryStart = arith::MulIOp::create(
            nb, nl, queryTileIndex, indexConstant(nb, nl, queryTile));
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
        {where.batch, where.head, where.keyStart, builder.getIndexAttr(0)},
        {builder.getIndexAttr(1), builder.getIndexAttr(1),
         builder.getIndexAttr(keyTile), builder.getIndexAttr(width)});
  return SmallVector<Value>(forall.getResults());
}

SmallVector<Value> lcc::lowering::sumOverKeyTiles(
    OpBuilder &builder, Location loc, const FlashAttention &flash,
    int64_t batch, int64_t heads, int64_t keyTiles, int64_t queryTiles,
    ArrayRef<int64_t> widths, Type elementType, const TilePairStep &block) {
  TensorBuilder tb(builder, loc);
  int64_t keyTile = flash.keyTile, queryTile = flash.queryTile;
  SmallVector<Value> shared;
  for (int64_t width : widths)
    shared.push_back(
        tb.empty({batch, heads, queryTiles * queryTile, width}, elementType));
  auto forall = scf::ForallOp::create(
      builder, loc,
      ArrayRef<OpFoldResult>{builder.getIndexAttr(batch),
                             builder.getIndexAttr(heads),
                             builder.getIndexAttr(queryTiles)},
      shared, std::nullopt);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(forall.getBody());
  TensorBuilder body(builder, loc);
  TilePosition where;
  where.batch = forall.getInductionVars()[0];
  where.head = forall.getInductionVars()[1];
  where.queryStart = arith::MulIOp::create(
      builder, loc, forall.getInductionVars()[2], body.index(queryTile));
  SmallVector<Value> init;
  for (int64_t width : widths)
    init.push_back(body.filled({queryTile, width}, elementType, 0.0));
  auto loop = scf::ForOp::create(
      builder, loc, body.index(0),
      flash.keyTileEnd(body, where.queryStart, keyTiles), body.index(1), init,
      [&](OpBuilder &nb, Location nl, Value keyTileIndex, ValueRange state) {
        TilePosition tile = where;
        tile.keyStart = arith::MulIOp::create(nb, nl, keyTileIndex,
                                              indexConstant(nb, nl, keyTile));
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
        {where.batch, where.head, where.queryStart, builder.getIndexAttr(0)},
        {builder.getIndexAttr(1), builder.getIndexAttr(1),
         builder.getIndexAttr(queryTile), builder.getIndexAttr(width)});
  return SmallVector<Value>(forall.getResults());
}
