//===- ConfigureFlashAttention.cpp - an attention op as FlashAttention ----===//
//
// The FlashAttention of an attention op's operands, attributes and regions
// (AttentionSpec), which the lowerings of dense attention, its backward and
// the forms built on flash tiles (sparse attention's parts) share.
// Shared-QK attention attends to the unit-normalised queries, and a token's
// score with itself is Reformer's -1e5. A mask region becomes the
// visibility predicate and, through the block table computed at compile
// time (MaskTiles.h), the tile skipping; a score region becomes the score
// modifier. Both are inlined into the kernels.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/FlashAttention.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/MaskTiles.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// Under shared QK a token may attend to itself only when nothing else is
/// visible: its score becomes -1e5.
Value selfScoreOfSharedQK(OpBuilder &b, Location loc, Value score,
                          const ScorePosition &position) {
  Value self = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     position.query, position.key);
  return arith::SelectOp::create(
      b, loc, self, floatConstant(b, loc, score.getType(), kSelfAttentionScore),
      score);
}

/// The block table of a mask as a constant of the kernel ([query tiles,
/// key tiles] of TileClass, or [batch * heads, ...] when the mask reads b
/// or h), and lookups of one tile's class.
class TableLookup {
public:
  TableLookup(OpBuilder &builder, Location loc, const MaskTileTable &table,
              const MaskTiling &tiling)
      : perBatchHead(table.perBatchHead), tiling(tiling) {
    SmallVector<int64_t> shape = {table.queryTiles, table.keyTiles};
    if (table.perBatchHead)
      shape.insert(shape.begin(), tiling.batch * tiling.heads);
    auto type = RankedTensorType::get(shape, builder.getI8Type());
    SmallVector<int8_t> values(table.visible.begin(), table.visible.end());
    constant = arith::ConstantOp::create(
        builder, loc, type,
        DenseElementsAttr::get(type, ArrayRef<int8_t>(values)));
  }

  /// Whether the tile's class is `cls`, or (with `negate`) is not.
  TileVisibilityPredicate is(TileClass cls, bool negate = false) const {
    TableLookup self = *this;
    return [self, cls, negate](OpBuilder &b, Location l,
                               const TilePosition &at) -> Value {
      auto index = [&](int64_t v) { return indexConstant(b, l, v); };
      SmallVector<Value> indices;
      if (self.perBatchHead)
        indices.push_back(arith::AddIOp::create(
            b, l,
            arith::MulIOp::create(b, l, at.batch, index(self.tiling.heads)),
            at.head));
      indices.push_back(arith::DivUIOp::create(b, l, at.queryStart,
                                               index(self.tiling.queryTile)));
      indices.push_back(arith::DivUIOp::create(b, l, at.keyStart,
                                               index(self.tiling.keyTile)));
      Value entry = tensor::ExtractOp::create(b, l, self.constant, indices);
      return arith::CmpIOp::create(
          b, l, negate ? arith::CmpIPredicate::ne : arith::CmpIPredicate::eq,
          entry, arith::ConstantIntOp::create(b, l, b.getI8Type(), cls));
    };
  }

private:
  Value constant;
  bool perBatchHead;
  MaskTiling tiling;
};

/// Makes `flash` honour the op's mask: inlined as the visibility, and its
/// block table as the tile skipping (or every tile visited, with a remark
/// saying why, when the table cannot be computed; or, at a run-time query
/// position, with none).
void useMaskRegion(OpBuilder &builder, const AttentionSpec &op,
                   FlashAttention &flash) {
  Region *mask = op.mask;
  flash.visible = [mask](OpBuilder &b, Location, const ScorePosition &at) {
    return inlineScalarRegion(b, *mask, {at.batch, at.head, at.query, at.key});
  };
  if (op.queryPosition)
    return;
  MaskTiling tiling = MaskTiling::of(op.query, op.key, flash.queryTile,
                                     flash.keyTile, op.causal);
  std::string why;
  FailureOr<MaskTileTable> table = computeMaskTileTable(*mask, tiling, why);
  if (failed(table)) {
    if (op.remarks)
      op.op->emitRemark() << "every key tile is visited: " << why;
    return;
  }
  // Tile skipping is measured, not assumed: say how much of the work is left.
  int64_t entries = static_cast<int64_t>(table->visible.size());
  int64_t visited = entries - table->hiddenTiles;
  if (op.remarks)
    op.op->emitRemark() << "mask visits " << visited << " of " << entries
                        << " (query, key) tile pairs ("
                        << llvm::formatv("{0:F1}", 100.0 * visited / entries)
                        << "%), " << table->fullTiles << " of them unmasked";
  if (table->undecidedTiles && op.remarks)
    op.op->emitRemark() << table->undecidedTiles
                        << " tile pairs are visited without being known to hold "
                           "a visible key: deciding them would take too long";
  if (table->hiddenTiles == 0 && table->fullTiles == 0)
    return;
  TableLookup lookup(builder, op.op->getLoc(), *table, tiling);
  if (table->hiddenTiles)
    flash.tileVisible = lookup.is(kHiddenTile, /*negate=*/true);
  if (table->fullTiles)
    flash.tileFull = lookup.is(kFullTile);
}

/// Makes `flash` apply the op's score region to every scaled score.
void useScoreRegion(const AttentionSpec &op, FlashAttention &flash) {
  Region *score = op.score;
  ScoreModifier previous = flash.modifyScore;
  flash.modifyScore = [score, previous](OpBuilder &b, Location loc, Value s,
                                        const ScorePosition &at) {
    Value modified =
        inlineScalarRegion(b, *score, {s, at.batch, at.head, at.query, at.key});
    return previous ? previous(b, loc, modified, at) : modified;
  };
}

} // namespace

FlashAttention lcc::configureFlashAttention(OpBuilder &builder,
                                            const AttentionSpec &op,
                                            AttentionTiling tiling) {
  TensorBuilder tb(builder, op.op->getLoc());
  FlashAttention flash;
  flash.query = op.query;
  flash.key =
      op.sharedQK && !op.queryPosition ? normalizeRows(tb, op.query) : op.key;
  flash.queryPosition = op.queryPosition;
  flash.value = op.value;
  flash.scale = attentionScale(op.scale, op.query);
  flash.causal = op.causal;
  if (op.sharedQK)
    flash.modifyScore = selfScoreOfSharedQK;
  flash.queryTile =
      std::min(tiling.queryTile, tensorType(op.query).getDimSize(2));
  flash.keyTile = std::min(tiling.keyTile, tensorType(op.key).getDimSize(2));
  // One rule for a query whose every score is -inf, whether its mask hides
  // every key or its score region (or its inputs) scored them all -inf:
  // zeros, its logsumexp -inf (the backward's probabilities are then 0).
  flash.emptyRowsGetZeros = true;
  if (op.score)
    useScoreRegion(op, flash);
  if (op.mask)
    useMaskRegion(builder, op, flash);
  return flash;
}

Value lcc::buildFlashAttention(OpBuilder &builder, AttentionOp op,
                               AttentionTiling tiling) {
  return configureFlashAttention(
             builder, AttentionSpec::of(op, /*remarks=*/true), tiling)
      .build(builder, op.getLoc());
}
