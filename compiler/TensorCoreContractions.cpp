//===- TensorCoreContractions.cpp - bf16 products on tensor cores ---------===//
//
// A paired bf16 product C[m][n] += sum over kp, j of A[m][kp][j] B[kp][n][j]
// (j < 2: k = 2 kp + j, each pair one 32-bit register of mma's fragments)
// becomes, per warp, a loop over its 16 x 8 tiles of C: the tile's C
// fragment loaded, then for each 16 values of k one mma.sync m16n8k16 with
// A's and B's fragments (groupID g = lane / 4, t = lane % 4):
//
//   A register r < 4: row g + 8 (r % 2), pair t + 4 (r / 2) of the k step
//   B register r < 2: pair t + 4 r of the k step, column g
//   C/D value i < 4:  row g + 8 (i / 2), column 2 t + i % 2
//
// and the fragment stored back. The sum runs in the tensor core's order
// (bf16 products, f32 accumulation), not the CPU's.
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

/// The loops of a paired product: which of `op`'s loops is m, n, kp and j,
/// and which input is A and which B.
struct PairedProduct {
  unsigned m, n, kp, j;
  OpOperand *a, *b;
  int64_t rows, columns, pairs;
};

/// `op` as a paired bf16 product, if it is one.
std::optional<PairedProduct> matchPairedProduct(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 4)
    return std::nullopt;
  OpOperand *c = op.getDpsInitOperand(0);
  auto elementOf = [](OpOperand *operand) {
    return getElementTypeOrSelf(operand->get().getType());
  };
  if (!elementOf(c).isF32())
    return std::nullopt;
  // The body: out + extf(a) * extf(b).
  Block *body = op.getBlock();
  auto ops = body->without_terminator();
  if (std::distance(ops.begin(), ops.end()) != 4)
    return std::nullopt;
  auto add = dyn_cast<arith::AddFOp>(body->getTerminator()->getOperand(0)
                                         .getDefiningOp());
  if (!add)
    return std::nullopt;
  Value out = op.getRegionOutputArgs()[0];
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul || (add.getLhs() != out && add.getRhs() != out))
    return std::nullopt;
  auto extA = mul.getLhs().getDefiningOp<arith::ExtFOp>();
  auto extB = mul.getRhs().getDefiningOp<arith::ExtFOp>();
  if (!extA || !extB)
    return std::nullopt;
  auto argA = dyn_cast<BlockArgument>(extA.getIn());
  auto argB = dyn_cast<BlockArgument>(extB.getIn());
  if (!argA || !argB || argA == argB || argA.getOwner() != body ||
      argB.getOwner() != body)
    return std::nullopt;
  PairedProduct p;
  p.a = op.getMatchingOpOperand(argA);
  p.b = op.getMatchingOpOperand(argB);
  if (!elementOf(p.a).isBF16() || !elementOf(p.b).isBF16())
    return std::nullopt;
  // C: (m, n); A: (m, kp, j); B: (kp, n, j).
  auto dims = [&](OpOperand *operand) {
    SmallVector<unsigned> positions;
    for (AffineExpr result : op.getMatchingIndexingMap(operand).getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(result);
      if (!dim)
        return SmallVector<unsigned>();
      positions.push_back(dim.getPosition());
    }
    return positions;
  };
  SmallVector<unsigned> cDims = dims(c), aDims = dims(p.a), bDims = dims(p.b);
  if (cDims.size() != 2 || aDims.size() != 3 || bDims.size() != 3 ||
      aDims[0] != cDims[0] || bDims[1] != cDims[1] || aDims[1] != bDims[0] ||
      aDims[2] != bDims[2])
    return std::nullopt;
  p.m = cDims[0];
  p.n = cDims[1];
  p.kp = aDims[1];
  p.j = aDims[2];
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (iterators[p.m] != utils::IteratorType::parallel ||
      iterators[p.n] != utils::IteratorType::parallel ||
      iterators[p.kp] != utils::IteratorType::reduction ||
      iterators[p.j] != utils::IteratorType::reduction || ranges[p.j] != 2)
    return std::nullopt;
  p.rows = ranges[p.m];
  p.columns = ranges[p.n];
  p.pairs = ranges[p.kp];
  if (ShapedType::isDynamic(p.rows) || ShapedType::isDynamic(p.columns) ||
      ShapedType::isDynamic(p.pairs) || p.rows % 16 != 0 ||
      p.columns % 8 != 0 || p.pairs % 8 != 0)
    return std::nullopt;
  return p;
}

/// Builds one warp's tiles of a paired product.
class MmaBuilder {
public:
  MmaBuilder(RewriterBase &rewriter, linalg::LinalgOp op,
             const PairedProduct &product)
      : b(rewriter), loc(op.getLoc()), op(op), p(product) {}

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) {
    return arith::MulIOp::create(b, loc, x, index(y));
  }

  /// The two bf16 of `operand` at (first, second, 0..1) as one register,
  /// the first in its low half.
  Value pair(OpOperand *operand, Value first, Value second) {
    Value halves[2];
    for (int64_t j = 0; j < 2; ++j) {
      Value value = memref::LoadOp::create(b, loc, operand->get(),
                                           ValueRange{first, second, index(j)});
      Value bits = arith::BitcastOp::create(b, loc, b.getI16Type(), value);
      halves[j] = arith::ExtUIOp::create(b, loc, b.getI32Type(), bits);
    }
    Value high = arith::ShLIOp::create(
        b, loc, halves[1],
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), 16));
    return arith::OrIOp::create(b, loc, halves[0], high);
  }

  /// Where C/D value i of this lane is, in the tile at (row0, column0).
  std::pair<Value, Value> cPlace(Value row0, Value column0, int64_t i) {
    return {add(row0, add(group, index(8 * (i / 2)))),
            add(column0, add(mul(inGroup, 2), index(i % 2)))};
  }

  Operation *build(Value threadId, int64_t blockSize) {
    Value lane = arith::RemUIOp::create(b, loc, threadId, index(kWarpSize));
    Value warp = arith::DivUIOp::create(b, loc, threadId, index(kWarpSize));
    group = arith::DivUIOp::create(b, loc, lane, index(4));
    inGroup = arith::RemUIOp::create(b, loc, lane, index(4));
    int64_t tilesAcross = p.columns / 8;
    int64_t tiles = (p.rows / 16) * tilesAcross;
    OpOperand *c = op.getDpsInitOperand(0);
    auto tileLoop = scf::ForOp::create(b, loc, warp, index(tiles),
                                       index(blockSize / kWarpSize));
    b.setInsertionPointToStart(tileLoop.getBody());
    Value tile = tileLoop.getInductionVar();
    Value row0 = mul(arith::DivUIOp::create(b, loc, tile, index(tilesAcross)),
                     16);
    Value column0 =
        mul(arith::RemUIOp::create(b, loc, tile, index(tilesAcross)), 8);
    SmallVector<Value> accumulators;
    for (int64_t i = 0; i < 4; ++i) {
      auto [row, column] = cPlace(row0, column0, i);
      accumulators.push_back(memref::LoadOp::create(b, loc, c->get(),
                                                    ValueRange{row, column}));
    }
    auto kLoop = scf::ForOp::create(b, loc, index(0), index(p.pairs), index(8),
                                    accumulators);
    b.setInsertionPointToStart(kLoop.getBody());
    Value pair0 = kLoop.getInductionVar();
    SmallVector<Value> operands;
    for (int64_t r = 0; r < 4; ++r)
      operands.push_back(pair(p.a, add(row0, add(group, index(8 * (r % 2)))),
                              add(pair0, add(inGroup, index(4 * (r / 2))))));
    for (int64_t r = 0; r < 2; ++r)
      operands.push_back(pair(p.b, add(pair0, add(inGroup, index(4 * r))),
                              add(column0, group)));
    llvm::append_range(operands, kLoop.getRegionIterArgs());
    Type f32 = b.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), {f32, f32, f32, f32});
    auto mma = LLVM::CallIntrinsicOp::create(
        b, loc, resultType,
        b.getStringAttr("llvm.nvvm.mma.m16n8k16.row.col.bf16"), operands);
    SmallVector<Value> sums;
    for (int64_t i = 0; i < 4; ++i)
      sums.push_back(
          LLVM::ExtractValueOp::create(b, loc, mma.getResult(0), i));
    scf::YieldOp::create(b, loc, sums);
    b.setInsertionPointAfter(kLoop);
    for (int64_t i = 0; i < 4; ++i) {
      auto [row, column] = cPlace(row0, column0, i);
      memref::StoreOp::create(b, loc, kLoop.getResult(i), c->get(),
                              ValueRange{row, column});
    }
    b.setInsertionPointAfter(tileLoop);
    return tileLoop;
  }

private:
  RewriterBase &b;
  Location loc;
  linalg::LinalgOp op;
  PairedProduct p;
  Value group, inGroup;
};

} // namespace

bool lcc::isTensorCoreProduct(linalg::LinalgOp op) {
  return matchPairedProduct(op).has_value();
}

Operation *lcc::lowerPairedProductToMma(RewriterBase &rewriter,
                                        linalg::LinalgOp op, Value threadId,
                                        int64_t blockSize) {
  if (blockSize % kWarpSize != 0 || !op.hasPureBufferSemantics())
    return nullptr;
  std::optional<PairedProduct> product = matchPairedProduct(op);
  if (!product)
    return nullptr;
  // A and B are indexed (m, kp, j) and (kp, n, j) as memrefs of rank 3.
  if (cast<MemRefType>(product->a->get().getType()).getRank() != 3 ||
      cast<MemRefType>(product->b->get().getType()).getRank() != 3)
    return nullptr;
  rewriter.setInsertionPoint(op);
  Operation *loop = MmaBuilder(rewriter, op, *product).build(threadId,
                                                              blockSize);
  rewriter.eraseOp(op);
  return loop;
}
