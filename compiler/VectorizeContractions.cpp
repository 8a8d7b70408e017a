//===- VectorizeContractions.cpp - register-tiled CPU contractions -------===//
//
// Lowered to plain loops, C[m, n] += A[m, k] * B[k, n] loads and stores C
// once per multiply-add: the loop runs at the speed of the L1 cache, not of
// the FMA units. Tiled into blocks of C that stay in vector registers while
// k advances, each step is one vector load of B, a few broadcasts of A and
// a block of FMAs.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace lcc {
#define GEN_PASS_DEF_VECTORIZECONTRACTIONS
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// The loops of a contraction C[m, n] += A * B: `m` and `n` parallel, C's
/// dimensions in that order, `k` reduced.
struct ContractionLoops {
  unsigned m, n, k;
};

/// The loops of `op` when it is a buffer contraction of three static loops
/// whose `m` and `n` are multiples of the register tile.
std::optional<ContractionLoops>
tileableContraction(linalg::LinalgOp op, int64_t tileM, int64_t tileN) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() != 3 ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  AffineMap output = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (output.getNumResults() != 2)
    return std::nullopt;
  auto m = dyn_cast<AffineDimExpr>(output.getResult(0));
  auto n = dyn_cast<AffineDimExpr>(output.getResult(1));
  if (!m || !n || ranges[m.getPosition()] % tileM != 0 ||
      ranges[n.getPosition()] % tileN != 0)
    return std::nullopt;
  return ContractionLoops{m.getPosition(), n.getPosition(),
                          3 - m.getPosition() - n.getPosition()};
}

/// The loops of `op` in the form the register tiles need: every input that
/// reads `n` reads it as its last (contiguous) dimension.
std::optional<ContractionLoops> matchContraction(linalg::LinalgOp op,
                                                 int64_t tileM, int64_t tileN) {
  std::optional<ContractionLoops> loops = tileableContraction(op, tileM, tileN);
  if (!loops)
    return std::nullopt;
  AffineExpr n = getAffineDimExpr(loops->n, op.getContext());
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    for (unsigned r = 0; r + 1 < map.getNumResults(); ++r)
      if (map.getResult(r) == n)
        return std::nullopt;
  }
  return loops;
}

/// A generic op that is C[m, n] += A[m, k] * B[k, n] (or B[n, k], as in
/// q·kᵀ) on f32 buffers becomes linalg.matmul: the vectorizer turns a named
/// matmul into vector.contract and FMAs, a generic one into broadcasts and
/// a multi-reduction that LLVM cannot untangle. B read as (n, k) has no row
/// to load as a vector; it is transposed into a temporary first (n x k
/// copies for m x n x k multiply-adds).
void toNamedMatmul(RewriterBase &rewriter, linalg::GenericOp op, int64_t tileM,
                   int64_t tileN) {
  std::optional<ContractionLoops> loops = tileableContraction(op, tileM, tileN);
  if (!loops)
    return;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() || type.getRank() != 2 ||
        !type.getElementType().isF32())
      return;
  }
  MLIRContext *ctx = op.getContext();
  AffineExpr m = getAffineDimExpr(loops->m, ctx);
  AffineExpr n = getAffineDimExpr(loops->n, ctx);
  AffineExpr k = getAffineDimExpr(loops->k, ctx);
  AffineMap a = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap b = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  if (a.getResult(0) != m || a.getResult(1) != k)
    return;
  bool transposed = b.getResult(0) == n && b.getResult(1) == k;
  if (!transposed && (b.getResult(0) != k || b.getResult(1) != n))
    return;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value lhs = op.getDpsInputOperand(0)->get();
  Value rhs = op.getDpsInputOperand(1)->get();
  Value temporary;
  if (transposed) {
    auto type = cast<MemRefType>(rhs.getType());
    temporary = memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get({type.getDimSize(1), type.getDimSize(0)},
                        type.getElementType()),
        rewriter.getI64IntegerAttr(64));
    linalg::TransposeOp::create(rewriter, loc, rhs, temporary,
                                ArrayRef<int64_t>{1, 0});
    rhs = temporary;
  }
  linalg::MatmulOp::create(rewriter, loc, ValueRange{lhs, rhs},
                           ValueRange{op.getDpsInitOperand(0)->get()});
  if (temporary)
    memref::DeallocOp::create(rewriter, loc, temporary);
  rewriter.eraseOp(op);
}

void hoistTileOfC(RewriterBase &rewriter, scf::ForOp loop, Value tileOfC) {
  // The view of C's tile does not depend on k.
  moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
  vector::TransferReadOp read;
  vector::TransferWriteOp write;
  for (Operation &op : *loop.getBody()) {
    if (auto r = dyn_cast<vector::TransferReadOp>(op);
        r && r.getBase() == tileOfC)
      read = r;
    if (auto w = dyn_cast<vector::TransferWriteOp>(op);
        w && w.getBase() == tileOfC)
      write = w;
  }
  auto sameIndices = [&] {
    return llvm::all_of(llvm::zip_equal(read.getIndices(), write.getIndices()),
                        [](auto pair) {
                          return isEqualConstantIntOrValue(std::get<0>(pair),
                                                           std::get<1>(pair));
                        });
  };
  if (!read || !write || !sameIndices() ||
      llvm::any_of(read->getOperands(), [&](Value v) {
        return loop->isAncestor(v.getParentRegion()->getParentOp());
      }))
    return;
  rewriter.moveOpBefore(read, loop);
  Value written = write.getVector();
  auto hoisted = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
      rewriter, ValueRange{read.getResult()},
      /*replaceInitOperandUsesInLoop=*/true,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
        return SmallVector<Value>{written};
      }));
  rewriter.moveOpAfter(write, hoisted);
  rewriter.modifyOpInPlace(write, [&] {
    write.getValueToStoreMutable().assign(hoisted.getResults().back());
  });
}

struct VectorizeContractions
    : lcc::impl::VectorizeContractionsBase<VectorizeContractions> {
  using VectorizeContractionsBase::VectorizeContractionsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> generics;
    func.walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics)
      toNamedMatmul(rewriter, op, tileM, tileN);
    SmallVector<std::pair<linalg::LinalgOp, ContractionLoops>> work;
    func.walk([&](linalg::LinalgOp op) {
      if (auto loops = matchContraction(op, tileM, tileN))
        work.push_back({op, *loops});
    });
    SmallVector<std::pair<scf::ForOp, Value>> reductionLoops;
    for (auto [op, loops] : work) {
      SmallVector<int64_t> sizes(3, 0);
      sizes[loops.m] = tileM;
      sizes[loops.n] = tileN;
      sizes[loops.k] = 1;
      linalg::LinalgTilingOptions tiling;
      tiling.setTileSizes(sizes)
          .setInterchange({loops.m, loops.n, loops.k})
          .setLoopType(linalg::LinalgTilingLoopType::Loops);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::TiledLinalgOp> tiled =
          linalg::tileLinalgOp(rewriter, op, tiling);
      if (failed(tiled))
        continue;
      rewriter.eraseOp(op);
      reductionLoops.push_back(
          {cast<scf::ForOp>(tiled->loops.back()),
           cast<linalg::LinalgOp>(tiled->op).getDpsInitOperand(0)->get()});
      rewriter.setInsertionPoint(tiled->op);
      FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
          rewriter, tiled->op, /*inputVectorSizes=*/{},
          /*inputScalableVecDims=*/{}, /*vectorizeNDExtract=*/false,
          /*flatten1DDepthwiseConv=*/false,
          /*assumeDynamicDimsMatchVecSizes=*/false,
          /*createNamedContraction=*/true);
      if (failed(vectorized)) {
        tiled->op->emitOpError("could not be vectorized");
        return signalPassFailure();
      }
      rewriter.replaceOp(tiled->op, vectorized->replacements);
    }
    if (work.empty())
      return;
    // The block of C is read before the k loop and written after it, so it
    // stays in registers while k advances. Only the tile of C, which
    // nothing else in the loop touches, moves; upstream's hoisting gives up
    // on buffers that are function arguments.
    for (auto [loop, tileOfC] : reductionLoops)
      hoistTileOfC(rewriter, loop, tileOfC);

    RewritePatternSet patterns(&getContext());
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerParallel);
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::EltWise);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    vector::populateVectorShapeCastLoweringPatterns(patterns);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
