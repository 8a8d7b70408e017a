//===- PairedContractions.cpp - bf16 dot-product register blocks ----------===//

#include "compiler/PairedContractions.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;
using namespace lcc;

namespace {

/// f32 accumulators per dot product; each takes 16 pairs of bf16.
constexpr int64_t kLanes = 16;

/// The static strides of a buffer, or none.
std::optional<SmallVector<int64_t>> stridesOf(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || !type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  return strides;
}

bool isBufferOf(Value buffer, unsigned rank, bool bf16) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  return type && type.getRank() == rank &&
         (bf16 ? type.getElementType().isBF16()
               : type.getElementType().isF32());
}

/// Whether the body is acc + ext(a) * ext(b) (either order of each).
bool isMultiplyAccumulateOfWidened(Block &body) {
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  auto widens = [&](Value v, unsigned argument) {
    auto ext = v.getDefiningOp<arith::ExtFOp>();
    return ext && ext.getIn() == body.getArgument(argument);
  };
  return (widens(mul.getLhs(), 0) && widens(mul.getRhs(), 1)) ||
         (widens(mul.getLhs(), 1) && widens(mul.getRhs(), 0));
}

/// A [rows, pairs, 2] buffer as [rows, 2 x pairs]: each row's pairs as one
/// row (B's rows of pairs for the dot products, both operands' rows for
/// the tiles).
Value pairsAsRows(OpBuilder &b, Location loc, Value pairs) {
  return memref::CollapseShapeOp::create(
      b, loc, pairs, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
}

/// Rows [begin, end) of C in blocks of `rows` x `columns` accumulators.
void emitBlocks(OpBuilder &b, Location loc, Value a, Value bRows, Value c,
                const PairedContractionShape &shape, int64_t begin, int64_t end,
                int64_t rows, int64_t columns, bool zeroC) {
  OpBuilder::InsertionGuard guard(b);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Type f32 = b.getF32Type(), bf16 = b.getBF16Type(), i32 = b.getI32Type();
  auto accType = VectorType::get({kLanes}, f32);
  auto pairsType = VectorType::get({2 * kLanes}, bf16);
  auto rowLoop =
      scf::ForOp::create(b, loc, index(begin), index(end), index(rows));
  b.setInsertionPointToStart(rowLoop.getBody());
  auto columnLoop = scf::ForOp::create(b, loc, index(0), index(shape.columns),
                                       index(columns));
  b.setInsertionPointToStart(columnLoop.getBody());
  Value firstRow = rowLoop.getInductionVar();
  Value firstColumn = columnLoop.getInductionVar();
  int64_t vectors = columns / kLanes;
  SmallVector<Value> rowAt, columnAt, pairColumnAt;
  for (int64_t r = 0; r < rows; ++r)
    rowAt.push_back(arith::AddIOp::create(b, loc, firstRow, index(r)));
  for (int64_t v = 0; v < vectors; ++v) {
    columnAt.push_back(
        arith::AddIOp::create(b, loc, firstColumn, index(v * kLanes)));
    pairColumnAt.push_back(
        arith::MulIOp::create(b, loc, columnAt.back(), index(2)));
  }
  SmallVector<Value> accumulators;
  Value zeros;
  if (zeroC)
    zeros = arith::ConstantOp::create(b, loc, b.getZeroAttr(accType));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < vectors; ++v)
      accumulators.push_back(
          zeroC ? zeros
                : vector::LoadOp::create(b, loc, accType, c,
                                         ValueRange{rowAt[r], columnAt[v]})
                      .getResult());
  auto pairLoop = scf::ForOp::create(
      b, loc, index(0), index(shape.pairs), index(1), accumulators,
      [&](OpBuilder &nb, Location nloc, Value pair, ValueRange state) {
        SmallVector<Value> bPairs;
        for (int64_t v = 0; v < vectors; ++v)
          bPairs.push_back(vector::LoadOp::create(
              nb, nloc, pairsType, bRows, ValueRange{pair, pairColumnAt[v]}));
        SmallVector<Value> next(state);
        Value zero = arith::ConstantIndexOp::create(nb, nloc, 0);
        for (int64_t r = 0; r < rows; ++r) {
          SmallVector<Value> at = {rowAt[r], pair, zero};
          // The pair of A as one 32-bit lane, broadcast to all 16.
          Value aPair = vector::LoadOp::create(
              nb, nloc, VectorType::get({2}, bf16), a, at);
          Value bits = vector::BitCastOp::create(
              nb, nloc, VectorType::get({1}, i32), aPair);
          Value lane =
              vector::ExtractOp::create(nb, nloc, bits, ArrayRef<int64_t>{0});
          Value splat = vector::BroadcastOp::create(
              nb, nloc, VectorType::get({kLanes}, i32), lane);
          Value aPairs = vector::BitCastOp::create(nb, nloc, pairsType, splat);
          for (int64_t v = 0; v < vectors; ++v) {
            Value &acc = next[r * vectors + v];
            acc =
                x86vector::DotBF16Op::create(nb, nloc, acc, aPairs, bPairs[v]);
          }
        }
        scf::YieldOp::create(nb, nloc, next);
      });
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < vectors; ++v)
      vector::StoreOp::create(b, loc, pairLoop.getResult(r * vectors + v), c,
                              ValueRange{rowAt[r], columnAt[v]});
}

} // namespace

std::optional<PairedContractionShape>
lcc::matchPairedContraction(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() != 4 ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return std::nullopt;
  using utils::IteratorType;
  if (op.getIteratorTypesArray() !=
      SmallVector<IteratorType>{IteratorType::parallel, IteratorType::parallel,
                                IteratorType::reduction,
                                IteratorType::reduction})
    return std::nullopt;
  Value a = op.getDpsInputOperand(0)->get(),
        b = op.getDpsInputOperand(1)->get(), c = op.getDpsInitOperand(0)->get();
  if (!isBufferOf(a, 3, true) || !isBufferOf(b, 3, true) ||
      !isBufferOf(c, 2, false))
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  auto dims = [&](ArrayRef<unsigned> positions) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d : positions)
      exprs.push_back(getAffineDimExpr(d, ctx));
    return AffineMap::get(4, 0, exprs, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0] != dims({0, 2, 3}) || maps[1] != dims({2, 1, 3}) ||
      maps[2] != dims({0, 1}))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) || ranges[3] != 2 ||
      !isMultiplyAccumulateOfWidened(op.getRegion().front()))
    return std::nullopt;
  // A pair of A and the row of B's pairs are single loads; C's rows too.
  auto aStrides = stridesOf(a), bStrides = stridesOf(b),
       cStrides = stridesOf(c);
  if (!aStrides || !bStrides || !cStrides || (*aStrides)[2] != 1 ||
      (*bStrides)[2] != 1 || (*bStrides)[1] != 2 || (*cStrides)[1] != 1)
    return std::nullopt;
  return PairedContractionShape{ranges[0], ranges[1], ranges[2]};
}

void lcc::lowerPairedContractionToDots(RewriterBase &rewriter,
                                       linalg::GenericOp op,
                                       const PairedContractionShape &shape,
                                       int64_t tileRows, int64_t tileColumns,
                                       int64_t restRows, bool zeroC) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value a = op.getDpsInputOperand(0)->get();
  Value c = op.getDpsInitOperand(0)->get();
  // B's pairs of a row of k as one row of 2 x columns.
  Value bRows = pairsAsRows(rewriter, loc, op.getDpsInputOperand(1)->get());
  int64_t mainRows = shape.rows - restRows;
  emitBlocks(rewriter, loc, a, bRows, c, shape, 0, mainRows, tileRows,
             tileColumns, zeroC);
  if (restRows)
    emitBlocks(rewriter, loc, a, bRows, c, shape, mainRows, shape.rows,
               restRows, tileColumns, zeroC);
  rewriter.eraseOp(op);
}

namespace {

/// An AMX tile: 16 rows of 64 bytes, 16 f32 of C or 32 bf16 of A and B
/// (16 pairs).
constexpr int64_t kTileRows = 16;
constexpr int64_t kTileColumns = 16;
constexpr int64_t kTilePairs = 16;
/// Steps of 16 pairs one block of C takes unrolled.
constexpr int64_t kMaxTileSteps = 16;

/// C[rows, columns] += A[rows, steps x 32] * B[steps x 16 pairs, columns]
/// for one block of `blockRows` x `blockColumns` tiles at (`row`, `column`).
void emitTileBlock(OpBuilder &b, Location loc, Value aRows, Value bRows,
                   Value c, Value row, Value column, int64_t blockRows,
                   int64_t blockColumns, int64_t steps, bool zeroC) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto plus = [&](Value v, int64_t offset) -> Value {
    return offset ? arith::AddIOp::create(b, loc, v, index(offset)).getResult()
                  : v;
  };
  Type f32 = b.getF32Type(), bf16 = b.getBF16Type();
  auto accType = amx::TileType::get({kTileRows, kTileColumns}, f32);
  auto operandType = amx::TileType::get({kTileRows, 2 * kTilePairs}, bf16);
  SmallVector<Value> rowAt, columnAt, pairColumnAt;
  for (int64_t r = 0; r < blockRows; ++r)
    rowAt.push_back(plus(row, r * kTileRows));
  for (int64_t n = 0; n < blockColumns; ++n) {
    columnAt.push_back(plus(column, n * kTileColumns));
    pairColumnAt.push_back(
        arith::MulIOp::create(b, loc, columnAt.back(), index(2)));
  }
  SmallVector<Value> acc;
  for (int64_t r = 0; r < blockRows; ++r)
    for (int64_t n = 0; n < blockColumns; ++n)
      acc.push_back(
          zeroC ? amx::TileZeroOp::create(b, loc, accType).getResult()
                : amx::TileLoadOp::create(b, loc, accType, c,
                                          ValueRange{rowAt[r], columnAt[n]})
                      .getResult());
  for (int64_t step = 0; step < steps; ++step) {
    Value k = index(step * 2 * kTilePairs);
    Value pair = index(step * kTilePairs);
    SmallVector<Value> aTiles, bTiles;
    for (int64_t r = 0; r < blockRows; ++r)
      aTiles.push_back(amx::TileLoadOp::create(b, loc, operandType, aRows,
                                               ValueRange{rowAt[r], k}));
    for (int64_t n = 0; n < blockColumns; ++n)
      bTiles.push_back(amx::TileLoadOp::create(
          b, loc, operandType, bRows, ValueRange{pair, pairColumnAt[n]}));
    for (int64_t r = 0; r < blockRows; ++r)
      for (int64_t n = 0; n < blockColumns; ++n) {
        Value &tile = acc[r * blockColumns + n];
        tile = amx::TileMulFOp::create(b, loc, accType, aTiles[r], bTiles[n],
                                       tile);
      }
  }
  for (int64_t r = 0; r < blockRows; ++r)
    for (int64_t n = 0; n < blockColumns; ++n)
      amx::TileStoreOp::create(b, loc, c, ValueRange{rowAt[r], columnAt[n]},
                               acc[r * blockColumns + n]);
}

} // namespace

bool lcc::fitsMatrixTiles(linalg::GenericOp op,
                          const PairedContractionShape &shape) {
  if (shape.rows % kTileRows != 0 || shape.columns % kTileColumns != 0 ||
      shape.pairs % kTilePairs != 0 || shape.pairs / kTilePairs > kMaxTileSteps)
    return false;
  // A's pairs are one row of k when a pair follows the one before.
  std::optional<SmallVector<int64_t>> aStrides =
      stridesOf(op.getDpsInputOperand(0)->get());
  return aStrides && (*aStrides)[1] == 2;
}

void lcc::lowerPairedContractionToTiles(RewriterBase &rewriter,
                                        linalg::GenericOp op,
                                        const PairedContractionShape &shape,
                                        bool zeroC) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value aRows = pairsAsRows(rewriter, loc, op.getDpsInputOperand(0)->get());
  Value bRows = pairsAsRows(rewriter, loc, op.getDpsInputOperand(1)->get());
  Value c = op.getDpsInitOperand(0)->get();
  // Two tiles each way when they divide C: each tile of A then serves two
  // products, each of B two.
  int64_t blockRows = shape.rows % (2 * kTileRows) == 0 ? 2 : 1;
  int64_t blockColumns = shape.columns % (2 * kTileColumns) == 0 ? 2 : 1;
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  auto rowLoop = scf::ForOp::create(rewriter, loc, index(0), index(shape.rows),
                                    index(blockRows * kTileRows));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(rowLoop.getBody());
  auto columnLoop =
      scf::ForOp::create(rewriter, loc, index(0), index(shape.columns),
                         index(blockColumns * kTileColumns));
  rewriter.setInsertionPointToStart(columnLoop.getBody());
  emitTileBlock(rewriter, loc, aRows, bRows, c, rowLoop.getInductionVar(),
                columnLoop.getInductionVar(), blockRows, blockColumns,
                shape.pairs / kTilePairs, zeroC);
  rewriter.eraseOp(op);
}
