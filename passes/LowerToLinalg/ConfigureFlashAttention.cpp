//===- ConfigureFlashAttention.cpp - an attention op as FlashAttention ----===//
//
// The FlashAttention of an attention op's operands, attributes and regions
// (AttentionSpec), which the lowerings of dense attention, its backward and
// the forms built on flash tiles (sparse attention's parts) share.
// Shared-QK attention attends to the unit-normalised queries, and a token's
// score with itself is Reformer's -1e5. A mask region becomes the
// visibility predicate and, through the block table computed at compile
// time (MaskTiles.h), the tile skipping; a score region becomes the score
// modifier. Both are inlined into the kernels. With `positions` (a ring
// attention's block), the regions and causality see each query and key
// where it sits in the whole sequence, and the block table is computed for
// every rank when the positions are a constant per rank.
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
  /// One table, or one per rank (`tables[r]` rank r's), of one shape.
  TableLookup(OpBuilder &builder, Location loc, ArrayRef<MaskTileTable> tables,
              const MaskTiling &tiling)
      : perBatchHead(tables.front().perBatchHead), perRank(tables.size() > 1),
        tiling(tiling) {
    const MaskTileTable &first = tables.front();
    SmallVector<int64_t> shape = {first.queryTiles, first.keyTiles};
    if (perBatchHead)
      shape.insert(shape.begin(), tiling.batch * tiling.heads);
    if (perRank)
      shape.insert(shape.begin(), static_cast<int64_t>(tables.size()));
    auto type = RankedTensorType::get(shape, builder.getI8Type());
    SmallVector<int8_t> values;
    for (const MaskTileTable &table : tables)
      values.append(table.visible.begin(), table.visible.end());
    table = arith::ConstantOp::create(
        builder, loc, type,
        DenseElementsAttr::get(type, ArrayRef<int8_t>(values)));
    // Each rank reads its own.
    if (perRank) {
      shape.front() = 1;
      table = RankSliceOp::create(
          builder, loc, RankedTensorType::get(shape, builder.getI8Type()),
          table);
    }
  }

  /// Whether the tile's class is `cls`, or (with `negate`) is not.
  TileVisibilityPredicate is(TileClass cls, bool negate = false) const {
    TableLookup self = *this;
    return [self, cls, negate](OpBuilder &b, Location l,
                               const TilePosition &at) -> Value {
      auto index = [&](int64_t v) { return indexConstant(b, l, v); };
      SmallVector<Value> indices;
      if (self.perRank)
        indices.push_back(index(0));
      if (self.perBatchHead)
        indices.push_back(arith::AddIOp::create(
            b, l,
            arith::MulIOp::create(b, l, at.batch, index(self.tiling.heads)),
            at.head));
      indices.push_back(arith::DivUIOp::create(b, l, at.queryStart,
                                               index(self.tiling.queryTile)));
      indices.push_back(arith::DivUIOp::create(b, l, at.keyStart,
                                               index(self.tiling.keyTile)));
      Value entry = tensor::ExtractOp::create(b, l, self.table, indices);
      return arith::CmpIOp::create(
          b, l, negate ? arith::CmpIPredicate::ne : arith::CmpIPredicate::eq,
          entry, arith::ConstantIntOp::create(b, l, b.getI8Type(), cls));
    };
  }

private:
  Value table;
  bool perBatchHead, perRank;
  MaskTiling tiling;
};

/// The positions `positions` (1-D i64) holds on each rank, when known at
/// compile time: a constant, the same on every rank, or a rank's row of one
/// (attn.rank_slice, reshaped), as ring attention writes them. Empty when
/// not known.
std::vector<std::vector<int64_t>> positionsOnEachRank(Value positions) {
  Value source = positions;
  if (auto collapse = source.getDefiningOp<tensor::CollapseShapeOp>())
    source = collapse.getSrc();
  auto slice = source.getDefiningOp<RankSliceOp>();
  if (slice)
    source = slice.getValue();
  DenseIntElementsAttr values;
  if (!matchPattern(source, m_Constant(&values)))
    return {};
  auto type = cast<RankedTensorType>(source.getType());
  int64_t ranks = slice ? type.getDimSize(0) : 1;
  int64_t length = type.getNumElements() / ranks;
  std::vector<std::vector<int64_t>> rows(ranks);
  int64_t k = 0;
  for (const APInt &v : values.getValues<APInt>())
    rows[k++ / length].push_back(v.getSExtValue());
  return rows;
}

/// Makes `flash` honour the op's mask per score: inlined as the
/// visibility (useTileTable adds the tile skipping).
void useMaskRegion(const AttentionSpec &op, FlashAttention &flash) {
  Region *mask = op.mask;
  flash.visible = [mask](OpBuilder &b, Location, const ScorePosition &at) {
    return inlineScalarRegion(b, *mask, {at.batch, at.head, at.query, at.key});
  };
}

/// The block tables of `op`'s mask and causality at `tiling`, one per rank
/// where the positions differ by rank, or the reason there are none.
FailureOr<std::vector<MaskTileTable>>
tablesOnEachRank(const AttentionSpec &op, MaskTiling tiling, std::string &why) {
  std::vector<std::vector<int64_t>> queries = {{}}, keys = {{}};
  if (op.queryPositions) {
    queries = positionsOnEachRank(op.queryPositions);
    keys = positionsOnEachRank(op.keyPositions);
    if (queries.empty() || keys.empty()) {
      why = "its positions are not known when compiling";
      return failure();
    }
  }
  size_t ranks = std::max(queries.size(), keys.size());
  std::vector<MaskTileTable> tables;
  for (size_t rank = 0; rank < ranks; ++rank) {
    tiling.queryPositions = queries[queries.size() == 1 ? 0 : rank];
    tiling.keyPositions = keys[keys.size() == 1 ? 0 : rank];
    FailureOr<MaskTileTable> table = computeMaskTileTable(op.mask, tiling, why);
    if (failed(table))
      return failure();
    tables.push_back(std::move(*table));
  }
  return tables;
}

/// Makes `flash` skip the key tiles the mask (and, at positions, causality)
/// hides from a whole query tile, and leave unmasked those it shows whole,
/// from the block table computed here (or, with a remark saying why, every
/// tile visited and masked).
void useTileTable(OpBuilder &builder, const AttentionSpec &op,
                  FlashAttention &flash) {
  MaskTiling tiling = MaskTiling::of(op.query, op.key, flash.queryTile,
                                     flash.keyTile, op.causal);
  std::string why;
  FailureOr<std::vector<MaskTileTable>> tables =
      tablesOnEachRank(op, tiling, why);
  if (failed(tables)) {
    if (op.remarks)
      op.op->emitRemark() << "every key tile is visited: " << why;
    return;
  }
  // Tile skipping is measured, not assumed: say how much of the work is
  // left (on the rank that does the most).
  const MaskTileTable &most = *llvm::min_element(
      *tables, [](const MaskTileTable &a, const MaskTileTable &b) {
        return a.hiddenTiles < b.hiddenTiles;
      });
  int64_t entries = static_cast<int64_t>(most.visible.size());
  int64_t visited = entries - most.hiddenTiles;
  if (op.remarks)
    op.op->emitRemark() << (op.mask ? "mask" : "causality") << " visits "
                        << visited << " of " << entries
                        << " (query, key) tile pairs ("
                        << llvm::formatv("{0:F1}", 100.0 * visited / entries)
                        << "%), " << most.fullTiles << " of them unmasked"
                        << (tables->size() > 1 ? " on the busiest rank" : "");
  int64_t undecided = 0, hidden = 0, full = 0;
  for (const MaskTileTable &table : *tables) {
    undecided += table.undecidedTiles;
    hidden += table.hiddenTiles;
    full += table.fullTiles;
  }
  if (undecided && op.remarks)
    op.op->emitRemark()
        << undecided
        << " tile pairs are visited without being known to hold "
           "a visible key: deciding them would take too long";
  if (hidden == 0 && full == 0)
    return;
  TableLookup lookup(builder, op.op->getLoc(), *tables, tiling);
  if (hidden)
    flash.tileVisible = lookup.is(kHiddenTile, /*negate=*/true);
  if (full)
    flash.tileFull = lookup.is(kFullTile);
}

/// Makes `flash` compare the positions of its queries and keys for
/// causality, with the mask, per score (flash's own causality compares
/// indices).
void useCausalPositions(FlashAttention &flash) {
  VisibilityPredicate masked = flash.visible;
  flash.causal = false;
  flash.visible = [masked](OpBuilder &b, Location loc,
                           const ScorePosition &at) -> Value {
    Value past = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                       at.key, at.query);
    if (!masked)
      return past;
    return arith::AndIOp::create(b, loc, past, masked(b, loc, at));
  };
}

/// Makes the predicate and the score modifier of `flash` see each score
/// where `op`'s positions put it.
void placeInSequence(const AttentionSpec &op, FlashAttention &flash) {
  AttentionSpec spec = op;
  if (VisibilityPredicate visible = flash.visible)
    flash.visible = [visible, spec](OpBuilder &b, Location loc,
                                    const ScorePosition &at) {
      return visible(b, loc, positionInSequence(b, loc, spec, at));
    };
  if (ScoreModifier modify = flash.modifyScore)
    flash.modifyScore = [modify, spec](OpBuilder &b, Location loc, Value s,
                                       const ScorePosition &at) {
      return modify(b, loc, s, positionInSequence(b, loc, spec, at));
    };
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
  Type elt = tensorType(op.query).getElementType();
  flash.queryTile =
      flashTile(tiling.queryTile, tensorType(op.query).getDimSize(2), elt);
  flash.keyTile =
      flashTile(tiling.keyTile, tensorType(op.key).getDimSize(2), elt);
  // One rule for a query whose every score is -inf, whether its mask hides
  // every key or its score region (or its inputs) scored them all -inf:
  // zeros, its logsumexp -inf (the backward's probabilities are then 0).
  flash.emptyRowsGetZeros = true;
  if (op.score)
    useScoreRegion(op, flash);
  if (op.mask)
    useMaskRegion(op, flash);
  if (op.queryPositions) {
    assert(!op.queryPosition && !op.sharedQK &&
           "positions place a sequence's blocks (the verifier)");
    if (op.causal)
      useCausalPositions(flash);
    placeInSequence(op, flash);
  }
  if (!op.queryPosition && (op.mask || (op.queryPositions && op.causal)))
    useTileTable(builder, op, flash);
  return flash;
}

ScorePosition lcc::positionInSequence(OpBuilder &b, Location loc,
                                      const AttentionSpec &spec,
                                      const ScorePosition &at) {
  if (!spec.queryPositions)
    return at;
  // Padded queries and keys (past the sequences' ends) read the last
  // position: their scores are masked or never used.
  auto lookUp = [&](Value positions, Value index) -> Value {
    int64_t last = tensorType(positions).getDimSize(0) - 1;
    Value inside =
        arith::MinUIOp::create(b, loc, index, indexConstant(b, loc, last));
    return castToIndex(b, loc,
                       tensor::ExtractOp::create(b, loc, positions, inside));
  };
  return {at.batch, at.head, lookUp(spec.queryPositions, at.query),
          lookUp(spec.keyPositions, at.key)};
}

Value lcc::buildFlashAttention(OpBuilder &builder, AttentionOp op,
                               AttentionTiling tiling) {
  return configureFlashAttention(
             builder, AttentionSpec::of(op, /*remarks=*/true), tiling)
      .build(builder, op.getLoc());
}
