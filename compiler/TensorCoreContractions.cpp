//===- TensorCoreContractions.cpp - products on tensor cores --------------===//
//
// Two kinds of product become warp-level mma.sync on a GPU block:
//
// - a paired bf16 product C[m][n] += sum over kp, j of A[m][kp][j]
//   B[kp][n][j] (j < 2: k = 2 kp + j, each pair one 32-bit register of the
//   fragments), with mma.sync m16n8k16 bf16;
// - with tf32 asked for, an f32 product C[m][n] += sum over k of A B (A
//   indexed by m and k, B by k and n, in any order), with mma.sync m16n8k8
//   tf32, each operand rounded to tf32 (10 bits of mantissa, to nearest,
//   ties away) as cvt.rna.tf32.f32 does.
//
// Each warp takes warp tiles of 16 x 8 tiles of C (2 x 4 of them for a
// 64 x 64 block of 4 warps): it loads the tiles' C fragments, and for each
// k step (16 for bf16, 8 for tf32) loads A's fragment of each row of tiles
// and B's of each column once and runs the tiles' mma.sync, with A's and
// B's registers as the PTX ISA lays the fragments out (g = lane / 4,
// t = lane % 4):
//
//   A register r < 4: row g + 8 (r % 2), k unit t + 4 (r / 2) of the step
//   B register r < 2: k unit t + 4 r of the step, column g
//   C/D value i < 4:  row g + 8 (i / 2), column 2 t + i % 2
//
// (a k unit is a pair for bf16, one value for tf32) and stores the fragment
// back. The sum runs in the tensor core's order and precision, not the
// CPU's.
//
//===----------------------------------------------------------------------===//

#include "compiler/TensorCoreContractions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace {

constexpr int64_t kWarpSize = 32;

/// A product mma.sync computes: which of the op's loops is m, n and k (the
/// pairs' kp for bf16; j, the pair's element, is the fourth loop), where A
/// and B put them, and the sizes.
struct MmaProduct {
  bool tf32 = false;
  unsigned m = 0, n = 0, k = 0;
  OpOperand *a = nullptr, *b = nullptr;
  /// Which result of A's and B's indexing maps is m, k and k, n.
  unsigned aRow = 0, aK = 1, bK = 0, bColumn = 1;
  int64_t rows = 0, columns = 0, kUnits = 0;
};

Type elementOf(OpOperand *operand) {
  return getElementTypeOrSelf(operand->get().getType());
}

/// The loop dimension of each result of `operand`'s indexing map, or empty
/// when one is not a plain dimension.
SmallVector<unsigned> dimsOf(linalg::LinalgOp op, OpOperand *operand) {
  SmallVector<unsigned> positions;
  for (AffineExpr result : op.getMatchingIndexingMap(operand).getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(result);
    if (!dim)
      return {};
    positions.push_back(dim.getPosition());
  }
  return positions;
}

/// A and B of a body `out + f(a) * f(b)` (f: extf, or nothing), in order.
std::optional<std::pair<BlockArgument, BlockArgument>>
productOperands(linalg::LinalgOp op, bool extended) {
  Block *body = op.getBlock();
  auto ops = body->without_terminator();
  if (std::distance(ops.begin(), ops.end()) != (extended ? 4 : 2))
    return std::nullopt;
  auto add = dyn_cast_or_null<arith::AddFOp>(
      body->getTerminator()->getOperand(0).getDefiningOp());
  if (!add)
    return std::nullopt;
  Value out = op.getRegionOutputArgs()[0];
  if (add.getLhs() != out && add.getRhs() != out)
    return std::nullopt;
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return std::nullopt;
  Value lhs = mul.getLhs(), rhs = mul.getRhs();
  if (extended) {
    auto extLhs = lhs.getDefiningOp<arith::ExtFOp>();
    auto extRhs = rhs.getDefiningOp<arith::ExtFOp>();
    if (!extLhs || !extRhs)
      return std::nullopt;
    lhs = extLhs.getIn();
    rhs = extRhs.getIn();
  }
  auto argA = dyn_cast<BlockArgument>(lhs);
  auto argB = dyn_cast<BlockArgument>(rhs);
  if (!argA || !argB || argA == argB || argA.getOwner() != body ||
      argB.getOwner() != body || argA == out || argB == out)
    return std::nullopt;
  return std::make_pair(argA, argB);
}

/// Whether `p`'s loops m and n of `op` are parallel and k a reduction,
/// of static sizes that are whole tiles (16 rows, 8 columns, 8 k units);
/// sets p's sizes.
bool isWholeTiles(linalg::LinalgOp op, MmaProduct &p) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (iterators[p.m] != utils::IteratorType::parallel ||
      iterators[p.n] != utils::IteratorType::parallel ||
      iterators[p.k] != utils::IteratorType::reduction)
    return false;
  p.rows = ranges[p.m];
  p.columns = ranges[p.n];
  p.kUnits = ranges[p.k];
  return !ShapedType::isDynamic(p.rows) && !ShapedType::isDynamic(p.columns) &&
         !ShapedType::isDynamic(p.kUnits) && p.rows % 16 == 0 &&
         p.columns % 8 == 0 && p.kUnits % 8 == 0;
}

/// `op` as a paired bf16 product of whole m16n8k16 tiles.
std::optional<MmaProduct> matchPairedProduct(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 4 || !elementOf(op.getDpsInitOperand(0)).isF32())
    return std::nullopt;
  auto args = productOperands(op, /*extended=*/true);
  if (!args)
    return std::nullopt;
  MmaProduct p;
  p.a = op.getMatchingOpOperand(args->first);
  p.b = op.getMatchingOpOperand(args->second);
  if (!elementOf(p.a).isBF16() || !elementOf(p.b).isBF16())
    return std::nullopt;
  // C: (m, n); A: (m, kp, j); B: (kp, n, j).
  SmallVector<unsigned> c = dimsOf(op, op.getDpsInitOperand(0)),
                        a = dimsOf(op, p.a), b = dimsOf(op, p.b);
  if (c.size() != 2 || a.size() != 3 || b.size() != 3 || a[0] != c[0] ||
      b[1] != c[1] || a[1] != b[0] || a[2] != b[2])
    return std::nullopt;
  p.m = c[0];
  p.n = c[1];
  p.k = a[1];
  unsigned j = a[2];
  if (op.getIteratorTypesArray()[j] != utils::IteratorType::reduction ||
      op.getStaticLoopRanges()[j] != 2 || !isWholeTiles(op, p))
    return std::nullopt;
  return p;
}

/// `op` as an f32 product of whole m16n8k8 tiles: C[m][n] += A B with A
/// indexed by (m, k) and B by (k, n), each in either order.
std::optional<MmaProduct> matchF32Product(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 3 || !elementOf(op.getDpsInitOperand(0)).isF32())
    return std::nullopt;
  auto args = productOperands(op, /*extended=*/false);
  if (!args)
    return std::nullopt;
  MmaProduct p;
  p.tf32 = true;
  p.a = op.getMatchingOpOperand(args->first);
  p.b = op.getMatchingOpOperand(args->second);
  if (!elementOf(p.a).isF32() || !elementOf(p.b).isF32())
    return std::nullopt;
  SmallVector<unsigned> c = dimsOf(op, op.getDpsInitOperand(0)),
                        a = dimsOf(op, p.a), b = dimsOf(op, p.b);
  if (c.size() != 2 || a.size() != 2 || b.size() != 2)
    return std::nullopt;
  // A holds m, B holds n; the dimension they share is k.
  if (!llvm::is_contained(a, c[0]))
    std::swap(p.a, p.b), std::swap(a, b);
  if (!llvm::is_contained(a, c[0]) || !llvm::is_contained(b, c[1]))
    return std::nullopt;
  p.m = c[0];
  p.n = c[1];
  p.aRow = a[0] == p.m ? 0 : 1;
  p.aK = 1 - p.aRow;
  p.k = a[p.aK];
  p.bColumn = b[0] == p.n ? 0 : 1;
  p.bK = 1 - p.bColumn;
  if (b[p.bK] != p.k || p.k == p.m || p.k == p.n || !isWholeTiles(op, p))
    return std::nullopt;
  return p;
}

std::optional<MmaProduct> matchProduct(linalg::LinalgOp op, bool tf32) {
  if (std::optional<MmaProduct> paired = matchPairedProduct(op))
    return paired;
  if (tf32)
    return matchF32Product(op);
  return std::nullopt;
}

/// The scalar loads of one k step's fragments: A's 4 registers and B's 2,
/// each a pair (two loads) in bf16, one value in tf32.
int64_t aLoads(const MmaProduct &p) { return p.tf32 ? 4 : 8; }
int64_t bLoads(const MmaProduct &p) { return p.tf32 ? 2 : 4; }

/// The 16 x 8 tiles of C a warp computes together: `rows` by `columns`,
/// each k step's A fragments shared along a row and B's down a column.
struct WarpTile {
  int64_t rows = 1, columns = 1;
};

/// The warp tile that leaves no warp of the block idle (where the product
/// has tiles enough), then no warp a turn short of the others, then loads
/// the fewest fragments per mma.sync; at most 8 tiles (32 accumulators).
WarpTile chooseWarpTile(const MmaProduct &p, int64_t warps) {
  int64_t rowTiles = p.rows / 16, columnTiles = p.columns / 8;
  WarpTile best;
  std::tuple<bool, bool, double> bestScore{false, false, 0};
  bool first = true;
  for (int64_t rows = 1; rows <= 4; ++rows) {
    for (int64_t columns = 1; columns <= 8; ++columns) {
      if (rowTiles % rows || columnTiles % columns || rows * columns > 8)
        continue;
      int64_t warpTiles = (rowTiles / rows) * (columnTiles / columns);
      double loads = double(rows * aLoads(p) + columns * bLoads(p)) /
                     double(rows * columns);
      std::tuple<bool, bool, double> score{warpTiles >= warps,
                                           warpTiles % warps == 0, -loads};
      if (first || score > bestScore) {
        best = {rows, columns};
        bestScore = score;
        first = false;
      }
    }
  }
  return best;
}

/// Builds one warp's tiles of a product.
class MmaBuilder {
public:
  MmaBuilder(RewriterBase &rewriter, linalg::LinalgOp op,
             const MmaProduct &product)
      : b(rewriter), loc(op.getLoc()), op(op), p(product) {}

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) {
    return arith::MulIOp::create(b, loc, x, index(y));
  }
  Value i32(int64_t value) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
  }

  /// The register of `operand` at (its first, second) index: a bf16 pair
  /// (the first value in the low half) or an f32 rounded to tf32.
  Value unit(OpOperand *operand, Value first, Value second) {
    if (p.tf32) {
      Value value = memref::LoadOp::create(b, loc, operand->get(),
                                           ValueRange{first, second});
      Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), value);
      // Round to nearest, ties away: add half of the dropped 13 bits.
      Value rounded = arith::AddIOp::create(b, loc, bits, i32(0x1000));
      return arith::AndIOp::create(b, loc, rounded, i32(int32_t(0xffffe000)));
    }
    Value halves[2];
    for (int64_t j = 0; j < 2; ++j) {
      Value value = memref::LoadOp::create(b, loc, operand->get(),
                                           ValueRange{first, second, index(j)});
      Value bits = arith::BitcastOp::create(b, loc, b.getI16Type(), value);
      halves[j] = arith::ExtUIOp::create(b, loc, b.getI32Type(), bits);
    }
    Value high = arith::ShLIOp::create(b, loc, halves[1], i32(16));
    return arith::OrIOp::create(b, loc, halves[0], high);
  }

  /// A's register at (row, k) and B's at (k, column), in each operand's
  /// own index order.
  Value aUnit(Value row, Value k) {
    return p.aRow == 0 ? unit(p.a, row, k) : unit(p.a, k, row);
  }
  Value bUnit(Value k, Value column) {
    return p.bK == 0 ? unit(p.b, k, column) : unit(p.b, column, k);
  }

  /// Where C/D value i of this lane is, in the tile at (row0, column0).
  std::pair<Value, Value> cPlace(Value row0, Value column0, int64_t i) {
    return {add(row0, add(group, index(8 * (i / 2)))),
            add(column0, add(mul(inGroup, 2), index(i % 2)))};
  }

  /// The 4 registers of A's fragment for the 16 rows from `row0`.
  SmallVector<Value> aFragment(Value row0, Value k0) {
    SmallVector<Value> registers;
    for (int64_t r = 0; r < 4; ++r)
      registers.push_back(aUnit(add(row0, add(group, index(8 * (r % 2)))),
                                add(k0, add(inGroup, index(4 * (r / 2))))));
    return registers;
  }

  /// The 2 registers of B's fragment for the 8 columns from `column0`.
  SmallVector<Value> bFragment(Value k0, Value column0) {
    SmallVector<Value> registers;
    for (int64_t r = 0; r < 2; ++r)
      registers.push_back(
          bUnit(add(k0, add(inGroup, index(4 * r))), add(column0, group)));
    return registers;
  }

  /// One mma.sync: D = A B + C, the 4 values of D.
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bRegisters,
                         ValueRange c) {
    SmallVector<Value> operands(a);
    llvm::append_range(operands, bRegisters);
    llvm::append_range(operands, c);
    Type f32 = b.getF32Type();
    auto resultType =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    auto call = LLVM::CallIntrinsicOp::create(
        b, loc, resultType,
        b.getStringAttr(p.tf32 ? "llvm.nvvm.mma.m16n8k8.row.col.tf32"
                               : "llvm.nvvm.mma.m16n8k16.row.col.bf16"),
        operands);
    SmallVector<Value> d;
    for (int64_t i = 0; i < 4; ++i)
      d.push_back(LLVM::ExtractValueOp::create(b, loc, call.getResult(0), i));
    return d;
  }

  /// Each warp takes warp tiles of tile.rows x tile.columns 16 x 8 tiles in
  /// turn; per k step it loads A's fragment of each row of tiles and B's of
  /// each column once and runs the tiles' mma.sync on them.
  Operation *build(Value threadId, int64_t blockSize) {
    int64_t warps = blockSize / kWarpSize;
    WarpTile tile = chooseWarpTile(p, warps);
    Value lane = arith::RemUIOp::create(b, loc, threadId, index(kWarpSize));
    Value warp = arith::DivUIOp::create(b, loc, threadId, index(kWarpSize));
    group = arith::DivUIOp::create(b, loc, lane, index(4));
    inGroup = arith::RemUIOp::create(b, loc, lane, index(4));
    int64_t across = p.columns / (8 * tile.columns);
    int64_t warpTiles = (p.rows / (16 * tile.rows)) * across;
    OpOperand *c = op.getDpsInitOperand(0);
    auto tileLoop =
        scf::ForOp::create(b, loc, warp, index(warpTiles), index(warps));
    b.setInsertionPointToStart(tileLoop.getBody());
    Value t = tileLoop.getInductionVar();
    Value row0 =
        mul(arith::DivUIOp::create(b, loc, t, index(across)), 16 * tile.rows);
    Value column0 =
        mul(arith::RemUIOp::create(b, loc, t, index(across)), 8 * tile.columns);
    SmallVector<Value> rows, columns;
    for (int64_t i = 0; i < tile.rows; ++i)
      rows.push_back(add(row0, index(16 * i)));
    for (int64_t j = 0; j < tile.columns; ++j)
      columns.push_back(add(column0, index(8 * j)));
    // The accumulators, tile (i, j)'s 4 values at 4 (i columns + j).
    SmallVector<Value> accumulators;
    for (Value row : rows)
      for (Value column : columns)
        for (int64_t v = 0; v < 4; ++v) {
          auto [r, col] = cPlace(row, column, v);
          accumulators.push_back(
              memref::LoadOp::create(b, loc, c->get(), ValueRange{r, col}));
        }
    // A step is 8 k units: 16 values of k in bf16 pairs, 8 in tf32.
    auto kLoop = scf::ForOp::create(b, loc, index(0), index(p.kUnits), index(8),
                                    accumulators);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k0 = kLoop.getInductionVar();
    SmallVector<SmallVector<Value>> a, bs;
    for (Value row : rows)
      a.push_back(aFragment(row, k0));
    for (Value column : columns)
      bs.push_back(bFragment(k0, column));
    ValueRange sums = kLoop.getRegionIterArgs();
    SmallVector<Value> results;
    for (int64_t i = 0; i < tile.rows; ++i)
      for (int64_t j = 0; j < tile.columns; ++j)
        llvm::append_range(
            results,
            mma(a[i], bs[j], sums.slice(4 * (i * tile.columns + j), 4)));
    scf::YieldOp::create(b, loc, results);
    b.setInsertionPointAfter(kLoop);
    int64_t next = 0;
    for (Value row : rows)
      for (Value column : columns)
        for (int64_t v = 0; v < 4; ++v) {
          auto [r, col] = cPlace(row, column, v);
          memref::StoreOp::create(b, loc, kLoop.getResult(next++), c->get(),
                                  ValueRange{r, col});
        }
    b.setInsertionPointAfter(tileLoop);
    return tileLoop;
  }

private:
  RewriterBase &b;
  Location loc;
  linalg::LinalgOp op;
  MmaProduct p;
  Value group, inGroup;
};

} // namespace

std::optional<lcc::MmaInstructions>
lcc::mmaInstructionsOf(linalg::LinalgOp op, bool tf32, int64_t blockSize) {
  std::optional<MmaProduct> p = matchProduct(op, tf32);
  if (!p)
    return std::nullopt;
  WarpTile tile = chooseWarpTile(*p, blockSize / kWarpSize);
  int64_t tiles = (p->rows / 16) * (p->columns / 8);
  int64_t warpTiles = tiles / (tile.rows * tile.columns);
  int64_t steps = p->kUnits / 8;
  // Per k step each row of tiles loads A's fragment and each column B's;
  // C is loaded and stored once per tile.
  int64_t perStep = tile.rows * aLoads(*p) + tile.columns * bLoads(*p);
  return MmaInstructions{p->tf32, tiles * steps,
                         warpTiles * steps * perStep + tiles * (4 + 4)};
}

Operation *lcc::lowerProductToMma(RewriterBase &rewriter, linalg::LinalgOp op,
                                  Value threadId, int64_t blockSize,
                                  bool tf32) {
  if (blockSize % kWarpSize != 0 || !op.hasPureBufferSemantics())
    return nullptr;
  std::optional<MmaProduct> product = matchProduct(op, tf32);
  if (!product)
    return nullptr;
  rewriter.setInsertionPoint(op);
  Operation *loop =
      MmaBuilder(rewriter, op, *product).build(threadId, blockSize);
  rewriter.eraseOp(op);
  return loop;
}
