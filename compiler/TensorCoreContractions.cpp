//===- TensorCoreContractions.cpp - products on tensor cores --------------===//
//
// Two kinds of product become warp-level mma.sync on a GPU block:
//
// - a paired bf16 or f16 product C[m][n] += sum over kp, j of A[m][kp][j]
//   B[kp][n][j] (j < 2: k = 2 kp + j, each pair one 32-bit register of the
//   fragments), with mma.sync m16n8k16 bf16 or f16 (f32 accumulators);
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
#include "compiler/CudaArch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace {

/// A product mma.sync computes: which of the op's loops are m, n and k (the
/// pairs' kp for bf16, whose fourth loop j is the pair's element), and the
/// sizes. Its other loops, if any, are parallel of extent 1 (a batch of
/// one), at index 0.
struct MmaProduct {
  bool tf32 = false;
  /// The pairs' type: bf16 or f16 (none in tf32).
  Type half;
  unsigned m = 0, n = 0, j = 0;
  /// The loops k runs over, outer to inner (an f32 product may reduce over
  /// several, as the output projection does over heads and head_dim): k
  /// unit u is their index u in row-major order.
  SmallVector<unsigned, 2> k;
  SmallVector<int64_t, 2> kSizes;
  OpOperand *a = nullptr, *b = nullptr;
  int64_t rows = 0, columns = 0, kUnits = 0;
};

Type elementOf(OpOperand *operand) {
  return getElementTypeOrSelf(operand->get().getType());
}

/// Whether loop `d` of `op` is parallel of static extent 1.
bool isUnitLoop(linalg::LinalgOp op, unsigned d) {
  return op.getIteratorTypesArray()[d] == utils::IteratorType::parallel &&
         op.getStaticLoopRanges()[d] == 1;
}

/// The loops of `op` other than unit loops.
unsigned countProductLoops(linalg::LinalgOp op) {
  unsigned loops = 0;
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    loops += !isUnitLoop(op, d);
  return loops;
}

/// The loop of each result of `operand`'s indexing map but those of unit
/// loops, or empty when a result is not a plain loop dimension.
SmallVector<unsigned> dimsOf(linalg::LinalgOp op, OpOperand *operand) {
  SmallVector<unsigned> positions;
  for (AffineExpr result : op.getMatchingIndexingMap(operand).getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(result);
    if (!dim)
      return {};
    if (!isUnitLoop(op, dim.getPosition()))
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

/// Whether `p`'s loops m and n of `op` are parallel and its k loops
/// reductions, of static sizes that are whole tiles (16 rows, 8 columns;
/// the innermost k loop a multiple of 8 units, so that a k step of 8 stays
/// in one index of the outer ones); sets p's sizes.
bool isWholeTiles(linalg::LinalgOp op, MmaProduct &p) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (p.k.empty() || iterators[p.m] != utils::IteratorType::parallel ||
      iterators[p.n] != utils::IteratorType::parallel)
    return false;
  p.rows = ranges[p.m];
  p.columns = ranges[p.n];
  p.kUnits = 1;
  p.kSizes.clear();
  for (unsigned d : p.k) {
    if (iterators[d] != utils::IteratorType::reduction ||
        ShapedType::isDynamic(ranges[d]))
      return false;
    p.kSizes.push_back(ranges[d]);
    p.kUnits *= ranges[d];
  }
  return !ShapedType::isDynamic(p.rows) && !ShapedType::isDynamic(p.columns) &&
         p.rows % 16 == 0 && p.columns % 8 == 0 && p.kSizes.back() % 8 == 0;
}

/// isWholeTiles of `p` or of its transpose, Cᵀ = Bᵀ Aᵀ (a product of 8
/// rows by a multiple of 16 columns, as a workgroup of 8 tokens of a
/// projection is); `p` becomes the one that is.
bool isWholeTilesEitherWay(linalg::LinalgOp op, MmaProduct &p) {
  if (isWholeTiles(op, p))
    return true;
  std::swap(p.m, p.n);
  std::swap(p.a, p.b);
  return isWholeTiles(op, p);
}

/// `op` as a paired bf16 or f16 product of whole m16n8k16 tiles.
std::optional<MmaProduct> matchPairedProduct(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      countProductLoops(op) != 4 || !elementOf(op.getDpsInitOperand(0)).isF32())
    return std::nullopt;
  auto args = productOperands(op, /*extended=*/true);
  if (!args)
    return std::nullopt;
  MmaProduct p;
  p.a = op.getMatchingOpOperand(args->first);
  p.b = op.getMatchingOpOperand(args->second);
  p.half = elementOf(p.a);
  if (!isa<BFloat16Type, Float16Type>(p.half) || elementOf(p.b) != p.half)
    return std::nullopt;
  // C: (m, n); A: (m, kp, j); B: (kp, n, j).
  SmallVector<unsigned> c = dimsOf(op, op.getDpsInitOperand(0)),
                        a = dimsOf(op, p.a), b = dimsOf(op, p.b);
  if (c.size() != 2 || a.size() != 3 || b.size() != 3 || a[0] != c[0] ||
      b[1] != c[1] || a[1] != b[0] || a[2] != b[2])
    return std::nullopt;
  p.m = c[0];
  p.n = c[1];
  p.k = {a[1]};
  p.j = a[2];
  if (op.getIteratorTypesArray()[p.j] != utils::IteratorType::reduction ||
      op.getStaticLoopRanges()[p.j] != 2 || !isWholeTilesEitherWay(op, p))
    return std::nullopt;
  return p;
}

/// `op` as an f32 product of whole m16n8k8 tiles: C[m][n] += A B with A
/// indexed by m and the k loops and B by the k loops and n, in any order
/// but the k loops' the same in both.
std::optional<MmaProduct> matchF32Product(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !elementOf(op.getDpsInitOperand(0)).isF32())
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
  if (c.size() != 2 || a.size() < 2 || a.size() != b.size())
    return std::nullopt;
  // A holds m, B holds n; the loops they share are k's.
  if (!llvm::is_contained(a, c[0]))
    std::swap(p.a, p.b), std::swap(a, b);
  if (!llvm::is_contained(a, c[0]) || !llvm::is_contained(b, c[1]) ||
      llvm::is_contained(a, c[1]) || llvm::is_contained(b, c[0]))
    return std::nullopt;
  p.m = c[0];
  p.n = c[1];
  llvm::append_range(
      p.k, llvm::make_filter_range(a, [&](unsigned d) { return d != p.m; }));
  SmallVector<unsigned> bK(
      llvm::make_filter_range(b, [&](unsigned d) { return d != p.n; }));
  if (ArrayRef<unsigned>(p.k) != ArrayRef<unsigned>(bK) ||
      countProductLoops(op) != 2 + p.k.size() || !isWholeTilesEitherWay(op, p))
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

/// The registers of one k step's fragments: A's 4 and B's 2 (the loads
/// are in proportion, one or two a register).
constexpr int64_t kARegisters = 4, kBRegisters = 2;

/// The 16 x 8 tiles of C a warp computes together: `rows` by `columns`,
/// each k step's A fragments shared along a row and B's down a column.
struct WarpTile {
  int64_t rows = 1, columns = 1;
};

/// The warp tile that leaves the fewest warps of the block idle, then no
/// warp a turn short of the others, then loads the fewest fragments per
/// mma.sync; at most 8 tiles (32 accumulators).
WarpTile chooseWarpTile(const MmaProduct &p, int64_t warps) {
  int64_t rowTiles = p.rows / 16, columnTiles = p.columns / 8;
  WarpTile best;
  std::tuple<int64_t, bool, double> bestScore{0, false, 0};
  bool first = true;
  for (int64_t rows = 1; rows <= 4; ++rows) {
    for (int64_t columns = 1; columns <= 8; ++columns) {
      if (rowTiles % rows || columnTiles % columns || rows * columns > 8)
        continue;
      int64_t warpTiles = (rowTiles / rows) * (columnTiles / columns);
      double loads = double(rows * kARegisters + columns * kBRegisters) /
                     double(rows * columns);
      std::tuple<int64_t, bool, double> score{std::min(warpTiles, warps),
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

/// Whether `operand`'s bf16 pairs are 4-byte words at known alignment: its
/// last index is the pair's element j, of stride 1, and its offset and
/// every other stride are static and even (a block buffer or a view of
/// one; the runtime and shared memory align every buffer to 64 bytes or
/// more). A pair is then one 32-bit load, not two 16-bit loads.
bool loadsPairsAsWords(linalg::LinalgOp op, const MmaProduct &p,
                       OpOperand *operand) {
  auto type = dyn_cast<MemRefType>(operand->get().getType());
  AffineMap map = op.getMatchingIndexingMap(operand);
  if (p.tf32 || !type || map.getNumResults() == 0 ||
      map.getResults().back() != getAffineDimExpr(p.j, op.getContext()))
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || offset % 2 != 0 || strides.back() != 1)
    return false;
  for (int64_t stride : ArrayRef<int64_t>(strides).drop_back())
    if (ShapedType::isDynamic(stride) || stride % 2 != 0)
      return false;
  return true;
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

  /// `operand`'s indices where the loops `at` name take their values and
  /// every other (unit) loop is 0.
  SmallVector<Value> indicesAt(OpOperand *operand,
                               ArrayRef<std::pair<unsigned, Value>> at) {
    SmallVector<Value> indices;
    for (AffineExpr result : op.getMatchingIndexingMap(operand).getResults()) {
      unsigned d = cast<AffineDimExpr>(result).getPosition();
      auto given =
          llvm::find_if(at, [&](auto &loop) { return loop.first == d; });
      indices.push_back(given != at.end() ? given->second : index(0));
    }
    return indices;
  }

  /// The k loops' values at k unit k0 + `offset`, k0 a multiple of 8 (a
  /// step stays in one index of the outer loops).
  SmallVector<std::pair<unsigned, Value>> kLoopsAt(Value k0, Value offset) {
    if (p.k.size() == 1)
      return {{p.k[0], add(k0, offset)}};
    SmallVector<std::pair<unsigned, Value>> at;
    Value rest = k0;
    for (int64_t i = p.k.size() - 1; i >= 0; --i) {
      Value size = index(p.kSizes[i]);
      Value value = arith::RemUIOp::create(b, loc, rest, size);
      if (i == int64_t(p.k.size()) - 1)
        value = add(value, offset);
      at.push_back({p.k[i], value});
      rest = arith::DivUIOp::create(b, loc, rest, size);
    }
    return at;
  }

  /// The register of `operand` where loop `row` (m or n) is `rowValue` and
  /// k unit k0 + `offset`: a bf16 or f16 pair as a word (the first value
  /// in the low half) or an f32 rounded to tf32.
  Value unit(OpOperand *operand, unsigned row, Value rowValue, Value k0,
             Value offset) {
    SmallVector<std::pair<unsigned, Value>> at = kLoopsAt(k0, offset);
    at.push_back({row, rowValue});
    if (p.tf32) {
      Value value = memref::LoadOp::create(b, loc, operand->get(),
                                           indicesAt(operand, at));
      Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), value);
      // Round to nearest, ties away: add half of the dropped 13 bits.
      Value rounded = arith::AddIOp::create(b, loc, bits, i32(0x1000));
      return arith::AndIOp::create(b, loc, rounded, i32(int32_t(0xffffe000)));
    }
    if (loadsPairsAsWords(op, p, operand)) {
      at.push_back({p.j, index(0)});
      Value pair = vector::LoadOp::create(
          b, loc, VectorType::get({2}, p.half), operand->get(),
          indicesAt(operand, at), /*nontemporal=*/false, llvm::Align(4));
      Value word = vector::BitCastOp::create(
          b, loc, VectorType::get({1}, b.getI32Type()), pair);
      return vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
    }
    Value halves[2];
    for (int64_t j = 0; j < 2; ++j) {
      at.push_back({p.j, index(j)});
      Value value = memref::LoadOp::create(b, loc, operand->get(),
                                           indicesAt(operand, at));
      at.pop_back();
      Value bits = arith::BitcastOp::create(b, loc, b.getI16Type(), value);
      halves[j] = arith::ExtUIOp::create(b, loc, b.getI32Type(), bits);
    }
    Value high = arith::ShLIOp::create(b, loc, halves[1], i32(16));
    return arith::OrIOp::create(b, loc, halves[0], high);
  }

  /// A's register at (row, k0 + offset) and B's at (k0 + offset, column).
  Value aUnit(Value row, Value k0, Value offset) {
    return unit(p.a, p.m, row, k0, offset);
  }
  Value bUnit(Value k0, Value offset, Value column) {
    return unit(p.b, p.n, column, k0, offset);
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
      registers.push_back(aUnit(add(row0, add(group, index(8 * (r % 2)))), k0,
                                add(inGroup, index(4 * (r / 2)))));
    return registers;
  }

  /// The 2 registers of B's fragment for the 8 columns from `column0`.
  SmallVector<Value> bFragment(Value k0, Value column0) {
    SmallVector<Value> registers;
    for (int64_t r = 0; r < 2; ++r)
      registers.push_back(
          bUnit(k0, add(inGroup, index(4 * r)), add(column0, group)));
    return registers;
  }

  /// One mma.sync: D = A B + C, the 4 values of D. The bf16 and tf32
  /// intrinsics take A's and B's registers as 32-bit words, the f16 one as
  /// pairs of halves.
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bRegisters,
                         ValueRange c) {
    bool f16 = p.half && p.half.isF16();
    SmallVector<Value> operands;
    for (Value word : llvm::concat<const Value>(a, bRegisters))
      operands.push_back(f16 ? LLVM::BitcastOp::create(
                                   b, loc, VectorType::get({2}, p.half), word)
                             : word);
    llvm::append_range(operands, c);
    Type f32 = b.getF32Type();
    auto resultType =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    StringRef intrinsic = p.tf32 ? "llvm.nvvm.mma.m16n8k8.row.col.tf32"
                          : f16  ? "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
                                 : "llvm.nvvm.mma.m16n8k16.row.col.bf16";
    auto call = LLVM::CallIntrinsicOp::create(
        b, loc, resultType, b.getStringAttr(intrinsic), operands);
    SmallVector<Value> d;
    for (int64_t i = 0; i < 4; ++i)
      d.push_back(LLVM::ExtractValueOp::create(b, loc, call.getResult(0), i));
    return d;
  }

  /// Each warp takes warp tiles of tile.rows x tile.columns 16 x 8 tiles in
  /// turn; per k step it loads A's fragment of each row of tiles and B's of
  /// each column once and runs the tiles' mma.sync on them.
  Operation *build(Value threadId, int64_t blockSize) {
    int64_t warps = blockSize / lcc::kCudaWarpSize;
    WarpTile tile = chooseWarpTile(p, warps);
    Value lane =
        arith::RemUIOp::create(b, loc, threadId, index(lcc::kCudaWarpSize));
    Value warp =
        arith::DivUIOp::create(b, loc, threadId, index(lcc::kCudaWarpSize));
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
    // This lane's elements of C, tile (i, j)'s 4 values at 4 (i columns +
    // j): loaded into the accumulators here, stored back after the k loop.
    SmallVector<SmallVector<Value>> cSites;
    for (Value row : rows)
      for (Value column : columns)
        for (int64_t v = 0; v < 4; ++v) {
          auto [r, col] = cPlace(row, column, v);
          cSites.push_back(indicesAt(c, {{p.m, r}, {p.n, col}}));
        }
    SmallVector<Value> accumulators;
    for (ArrayRef<Value> site : cSites)
      accumulators.push_back(memref::LoadOp::create(b, loc, c->get(), site));
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
    for (auto [sum, site] : llvm::zip_equal(kLoop.getResults(), cSites))
      memref::StoreOp::create(b, loc, sum, c->get(), site);
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

std::optional<lcc::MmaKind> lcc::tensorCoreProductKind(linalg::LinalgOp op,
                                                       bool tf32) {
  std::optional<MmaProduct> p = matchProduct(op, tf32);
  if (!p)
    return std::nullopt;
  return p->tf32 ? MmaKind::tf32 : MmaKind::half;
}

Operation *lcc::lowerProductToMma(RewriterBase &rewriter, linalg::LinalgOp op,
                                  Value threadId, int64_t blockSize,
                                  bool tf32) {
  if (blockSize % lcc::kCudaWarpSize != 0 || !op.hasPureBufferSemantics())
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
