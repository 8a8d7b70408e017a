//===- VectorizeContractions.cpp - register-tiled CPU contractions -------===//
//
// Lowered to plain loops, C[m, n] += A[m, k] * B[k, n] loads and stores C
// once per multiply-add: the loop runs at the speed of the L1 cache, not of
// the FMA units. Tiled into blocks of C that stay in vector registers while
// k advances, each step is one vector load of B, a few broadcasts of A and
// a block of FMAs.
//
//===----------------------------------------------------------------------===//

#include "compiler/PairedContractions.h"
#include "compiler/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
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
#include "mlir/Dialect/X86Vector/Transforms.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
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

/// What the register blocks are chosen from: the target's vector registers
/// and the pass's explicit sizes (0: by the rule).
struct RegisterTileRule {
  int64_t lanes, registers, tileM, tileN;
};

/// The register block of C one contraction is tiled into; when its rows do
/// not divide C's, the last `rest` rows are one block of their own.
struct RegisterTile {
  int64_t m, n, rest = 0;
};

/// How one step of k reads the m elements of A it broadcasts: down a
/// column of A, one row apart each (q·kᵀ's keys), or adjacent, along a row
/// of Aᵀ (pᵀ·v's probabilities).
enum class StepOfA { strided, contiguous };

/// The register block for a C of `rows` x `columns` on a machine of
/// `registers` vector registers of `lanes` f32 each. A block of r rows and
/// v vectors per row keeps r * v accumulators live, plus v vectors of B and
/// one broadcast element of A per step; one register is left spare, so at
/// most fit(v) = (registers - v - 2) / v rows.
///
///  - A read along a row (contiguous): the widest v of 4, 2 or 1 vectors
///    that divides the columns and still fits 6 rows, then fit(v) rows.
///  - A read down a column (strided): two vectors per row when the columns
///    allow it (else one), then fit(v) rows but no more accumulators than
///    16: each row is another line of A per step.
///
/// The rows left over (64 = 10 x 6 + 4) are a last, shorter block. AVX2
/// (16 x 8 lanes) gives 6 x 16 blocks either way; AVX-512 (32 x 16) 6 x 64
/// for pᵀ·v and 8 x 32 for q·kᵀ, each measured faster in attention than
/// the 14 x 32 that fills the registers (docs/benchmarks.md). An explicit
/// `tileM`/`tileN` (non-zero, dividing C) overrides the rule.
std::optional<RegisterTile> registerTileFor(int64_t rows, int64_t columns,
                                            int64_t lanes, int64_t registers,
                                            int64_t tileM, int64_t tileN,
                                            StepOfA step) {
  auto fit = [&](int64_t vectors) {
    return std::max<int64_t>((registers - vectors - 2) / vectors, 1);
  };
  int64_t n = tileN;
  if (n == 0 && step == StepOfA::contiguous) {
    for (int64_t vectors : {4, 2, 1})
      if (columns % (vectors * lanes) == 0 &&
          (fit(vectors) >= 6 || vectors == 1)) {
        n = vectors * lanes;
        break;
      }
  } else if (n == 0) {
    n = columns % (2 * lanes) == 0 ? 2 * lanes
        : columns % lanes == 0     ? lanes
                                   : 0;
  }
  if (n == 0 || columns % n != 0)
    return std::nullopt;
  int64_t vectorsPerRow = llvm::divideCeil(n, lanes);
  if (tileM > 0)
    return rows % tileM == 0 ? std::optional(RegisterTile{tileM, n})
                             : std::nullopt;
  int64_t most = fit(vectorsPerRow);
  if (step == StepOfA::strided)
    most = std::min(most, std::max<int64_t>(16 / vectorsPerRow, 1));
  int64_t m = std::min(most, rows);
  return RegisterTile{m, n, rows % m};
}

/// The loops of `op` and its register block when it is a buffer
/// contraction of three static loops whose `m` and `n` the block divides.
std::optional<std::pair<ContractionLoops, RegisterTile>>
tileableContraction(linalg::LinalgOp op, const RegisterTileRule &rule) {
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
  if (!m || !n)
    return std::nullopt;
  // A read as (k, m) (pᵀ·v) gives a step's elements of A side by side.
  AffineMap a = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  StepOfA step = a.getNumResults() == 2 && a.getResult(1) == m
                     ? StepOfA::contiguous
                     : StepOfA::strided;
  std::optional<RegisterTile> tile =
      registerTileFor(ranges[m.getPosition()], ranges[n.getPosition()],
                      rule.lanes, rule.registers, rule.tileM, rule.tileN, step);
  if (!tile)
    return std::nullopt;
  return std::make_pair(ContractionLoops{m.getPosition(), n.getPosition(),
                                         3 - m.getPosition() - n.getPosition()},
                        *tile);
}

/// The loops of `op` in the form the register tiles need: every input that
/// reads `n` reads it as its last (contiguous) dimension.
std::optional<std::pair<ContractionLoops, RegisterTile>>
matchContraction(linalg::LinalgOp op, const RegisterTileRule &rule) {
  auto loops = tileableContraction(op, rule);
  if (!loops)
    return std::nullopt;
  AffineExpr n = getAffineDimExpr(loops->first.n, op.getContext());
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    for (unsigned r = 0; r + 1 < map.getNumResults(); ++r)
      if (map.getResult(r) == n)
        return std::nullopt;
  }
  return loops;
}

/// Most bytes of a transposed B kept on the stack: a 64 x 64 block of LSH's
/// chunk is 16 KiB, a 128 x 128 one 64 KiB.
constexpr int64_t kMaxStackTransposeBytes = 64 * 1024;

/// Eight rows of 8 f32 transposed in registers: `rows[i]` becomes column i,
/// by AVX's in-lane unpacks and shuffles and its 128-bit permutes (24
/// shuffles of two vectors, one instruction each, as vector.shuffle).
/// MLIR's own AVX2 lowering of an 8 x 8 transpose blends by inline
/// assembly, which LLVM's object emission does not parse.
void transposeRowsOf8(ImplicitLocOpBuilder &b, MutableArrayRef<Value> rows) {
  using namespace x86vector::avx2::intrin;
  // Pairs of rows interleaved: t[2i] holds columns 0, 1 | 4, 5 of rows 2i
  // and 2i + 1, t[2i + 1] columns 2, 3 | 6, 7.
  SmallVector<Value, 8> t(8), u(8);
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = mm256UnpackLoPs(b, rows[2 * i], rows[2 * i + 1]);
    t[2 * i + 1] = mm256UnpackHiPs(b, rows[2 * i], rows[2 * i + 1]);
  }
  // u[4g + c] holds columns c | c + 4 of rows 4g to 4g + 3.
  for (int g = 0; g < 2; ++g) {
    u[4 * g] = mm256ShufflePs(b, t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = mm256ShufflePs(b, t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = mm256ShufflePs(b, t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = mm256ShufflePs(b, t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    rows[c] = mm256Permute2f128Ps(b, u[c], u[4 + c], 0x20);
    rows[4 + c] = mm256Permute2f128Ps(b, u[c], u[4 + c], 0x31);
  }
}

/// The 8 x 8 block of `source` at (row, column) written transposed into
/// `target` at (column, row): eight row reads, the register transpose,
/// eight row writes.
void copyBlockOf8Transposed(ImplicitLocOpBuilder &b, Value source, Value target,
                            Value row, Value column, Value padding) {
  auto rowType = VectorType::get({8}, padding.getType());
  auto plus = [&](Value index, int64_t i) -> Value {
    return i == 0 ? index
                  : arith::AddIOp::create(b, index,
                                          arith::ConstantIndexOp::create(b, i));
  };
  SmallVector<Value, 8> rows;
  for (int64_t i = 0; i < 8; ++i)
    rows.push_back(vector::TransferReadOp::create(
        b, rowType, source, ValueRange{plus(row, i), column}, padding,
        ArrayRef<bool>{true}));
  transposeRowsOf8(b, rows);
  for (int64_t i = 0; i < 8; ++i)
    vector::TransferWriteOp::create(b, rows[i], target,
                                    ValueRange{plus(column, i), row},
                                    ArrayRef<bool>{true});
}

/// `source` ([rows, columns] f32) transposed into a temporary at the
/// rewriter's insertion point. When small, the temporary is one stack
/// buffer made at the function's entry (an alloca inside a loop would grow
/// the stack on every iteration; kernels' loops run one iteration at a
/// time, so one buffer serves them all); else a heap buffer the caller
/// frees. On AVX-512 (16 lanes) and AVX (8 lanes), when the lanes divide
/// both sizes, blocks of lanes x lanes are read as vectors, transposed in
/// registers (shuffles) and written as vectors: a scalar transpose is one
/// gather or scalar store per element, which in LSH's 64-token chunks cost
/// 7% of the attention on AVX-512, and on AVX2 (one insert per element, a
/// new cache line each) 60% of a chunked feed-forward's input gradient.
/// Other targets transpose element by element.
Value transposedCopy(RewriterBase &rewriter, Location loc, Value source,
                     Operation *user, int64_t lanes) {
  auto type = cast<MemRefType>(source.getType());
  int64_t rows = type.getDimSize(0), columns = type.getDimSize(1);
  auto transposedType = MemRefType::get({columns, rows}, type.getElementType());
  IntegerAttr alignment = rewriter.getI64IntegerAttr(64);
  Value temporary;
  if (rows * columns * 4 <= kMaxStackTransposeBytes) {
    OpBuilder::InsertionGuard guard(rewriter);
    auto func = user->getParentOfType<func::FuncOp>();
    rewriter.setInsertionPointToStart(&func.getBody().front());
    temporary =
        memref::AllocaOp::create(rewriter, loc, transposedType, alignment);
  } else {
    temporary =
        memref::AllocOp::create(rewriter, loc, transposedType, alignment);
  }
  if ((lanes != 16 && lanes != 8) || rows % lanes != 0 ||
      columns % lanes != 0) {
    linalg::TransposeOp::create(rewriter, loc, source, temporary,
                                ArrayRef<int64_t>{1, 0});
    return temporary;
  }
  auto block = VectorType::get({lanes, lanes}, type.getElementType());
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value step = arith::ConstantIndexOp::create(rewriter, loc, lanes);
  Value padding = arith::ConstantOp::create(
      rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
  SmallVector<bool> inBounds(2, true);
  scf::ForOp::create(
      rewriter, loc, zero, arith::ConstantIndexOp::create(rewriter, loc, rows),
      step, ValueRange{}, [&](OpBuilder &b, Location l, Value row, ValueRange) {
        scf::ForOp::create(
            b, l, zero, arith::ConstantIndexOp::create(b, l, columns), step,
            ValueRange{},
            [&](OpBuilder &nb, Location nl, Value column, ValueRange) {
              if (lanes == 8) {
                ImplicitLocOpBuilder ib(nl, nb);
                copyBlockOf8Transposed(ib, source, temporary, row, column,
                                       padding);
                scf::YieldOp::create(nb, nl);
                return;
              }
              Value read = vector::TransferReadOp::create(
                  nb, nl, block, source, ValueRange{row, column}, padding,
                  inBounds);
              Value flipped = vector::TransposeOp::create(
                  nb, nl, read, ArrayRef<int64_t>{1, 0});
              vector::TransferWriteOp::create(nb, nl, flipped, temporary,
                                              ValueRange{column, row},
                                              inBounds);
              scf::YieldOp::create(nb, nl);
            });
        scf::YieldOp::create(b, l);
      });
  return temporary;
}

/// The 16 x 16 register transposes of transposedCopy as MLIR's shuffle
/// network. Run before the blocks' own lowering, which takes any transpose
/// apart element by element.
LogicalResult lowerBlockTransposes(func::FuncOp func) {
  RewritePatternSet patterns(func.getContext());
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::Shuffle16x16);
  SmallVector<Operation *> transposes;
  func.walk([&](vector::TransposeOp op) { transposes.push_back(op); });
  if (transposes.empty())
    return success();
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  return applyOpPatternsGreedily(transposes, std::move(patterns), config);
}

/// A contraction whose loops besides one m, one n and one k all run once
/// (the batch of one of a [1, rows, d] x [d, e] projection, the lm_head) as
/// the three-loop contraction the register blocks take, on rank-reduced
/// views of its operands. Left with four loops, the projections of a train
/// step fell to the loop lowering at half the blocked speed. (Upstream
/// linalg's unit-dimension folding left these alone: a workgroup's slice
/// of a binding is a strided memref.)
void dropUnitLoops(RewriterBase &rewriter, linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() <= 3 ||
      !linalg::isaContractionOpInterface(op))
    return;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto nonUnit = [&](ArrayRef<unsigned> loops) {
    return llvm::count_if(loops, [&](unsigned d) { return ranges[d] != 1; });
  };
  if (failed(dims) || nonUnit(dims->m) != 1 || nonUnit(dims->n) != 1 ||
      nonUnit(dims->k) != 1 || nonUnit(dims->batch) != 0 ||
      llvm::any_of(ranges, ShapedType::isDynamic))
    return;
  // Each kept loop's new position (unit loops have none).
  MLIRContext *context = op.getContext();
  SmallVector<unsigned> position(ranges.size());
  unsigned kept = 0;
  for (auto [d, range] : llvm::enumerate(ranges))
    if (range != 1)
      position[d] = kept++;
  rewriter.setInsertionPoint(op);
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = cast<MemRefType>(operand.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<AffineExpr> results;
    SmallVector<int64_t> shape;
    for (auto [r, result] : llvm::enumerate(map.getResults())) {
      auto dim = cast<AffineDimExpr>(result);
      if (ranges[dim.getPosition()] == 1)
        continue;
      results.push_back(getAffineDimExpr(position[dim.getPosition()], context));
      shape.push_back(type.getDimSize(r));
    }
    maps.push_back(AffineMap::get(kept, 0, results, context));
    if (shape.size() == static_cast<size_t>(type.getRank())) {
      operands.push_back(operand.get());
      continue;
    }
    SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes,
        strides(type.getRank(), rewriter.getIndexAttr(1));
    for (int64_t size : type.getShape())
      sizes.push_back(rewriter.getIndexAttr(size));
    auto reduced = memref::SubViewOp::inferRankReducedResultType(
        shape, type, offsets, sizes, strides);
    operands.push_back(memref::SubViewOp::create(
        rewriter, op.getLoc(), cast<MemRefType>(reduced), operand.get(),
        offsets, sizes, strides));
  }
  SmallVector<utils::IteratorType> iterators;
  for (auto [d, iterator] : llvm::enumerate(op.getIteratorTypesArray()))
    if (ranges[d] != 1)
      iterators.push_back(iterator);
  unsigned inputs = op.getNumDpsInputs();
  auto reducedOp = linalg::GenericOp::create(
      rewriter, op.getLoc(), TypeRange{},
      ValueRange(operands).take_front(inputs),
      ValueRange(operands).drop_front(inputs), maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), reducedOp.getRegion(),
                              reducedOp.getRegion().begin());
  rewriter.eraseOp(op);
}

/// A generic op that is C[m, n] += A[m, k] * B[k, n] (or A[k, m], as in
/// pᵀ·v, or B[n, k], as in q·kᵀ) on f32 buffers becomes linalg.matmul: the
/// vectorizer turns a named matmul into vector.contract and FMAs, a generic one
/// into broadcasts and a multi-reduction that LLVM cannot untangle. B read as
/// (n, k) has no row to load as a vector; it is transposed into a temporary
/// first (n x k copies for m x n x k multiply-adds).
void toNamedMatmul(RewriterBase &rewriter, linalg::GenericOp op,
                   const RegisterTileRule &rule) {
  auto tileable = tileableContraction(op, rule);
  if (!tileable)
    return;
  const ContractionLoops *loops = &tileable->first;
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
  bool transposedA = a.getResult(0) == k && a.getResult(1) == m;
  if (!transposedA && (a.getResult(0) != m || a.getResult(1) != k))
    return;
  bool transposedB = b.getResult(0) == n && b.getResult(1) == k;
  if (!transposedB && (b.getResult(0) != k || b.getResult(1) != n))
    return;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value lhs = op.getDpsInputOperand(0)->get();
  Value rhs = op.getDpsInputOperand(1)->get();
  Value temporary;
  if (transposedB) {
    temporary = transposedCopy(rewriter, loc, rhs, op, rule.lanes);
    rhs = temporary;
  }
  auto matmul =
      linalg::MatmulOp::create(rewriter, loc, ValueRange{lhs, rhs},
                               ValueRange{op.getDpsInitOperand(0)->get()});
  // Aᵀ needs no copy: a step of k reads a row of it, the r elements of A
  // that the step broadcasts, contiguously.
  if (transposedA) {
    AffineExpr mm, nn, kk;
    bindDims(ctx, mm, nn, kk);
    matmul.setIndexingMapsAttr(
        rewriter.getAffineMapArrayAttr({AffineMap::get(3, 0, {kk, mm}, ctx),
                                        AffineMap::get(3, 0, {kk, nn}, ctx),
                                        AffineMap::get(3, 0, {mm, nn}, ctx)}));
  }
  if (temporary && temporary.getDefiningOp<memref::AllocOp>())
    memref::DeallocOp::create(rewriter, loc, temporary);
  rewriter.eraseOp(op);
}

/// The fill of zeros that `op`'s C was just given, if any: the fill it
/// follows (past side-effect-free ops such as subviews) writes exactly C
/// with 0.0. The contraction writes every element of C, so its register
/// blocks can start from zero instead of loading C, and the fill (a memset
/// as large as C, per block of scores) can go.
linalg::FillOp zeroFillOfC(linalg::LinalgOp op) {
  Value c = op.getDpsInitOperand(0)->get();
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev))
      return fill.getOutputs()[0] == c &&
                     matchPattern(fill.getInputs()[0], m_AnyZeroFloat())
                 ? fill
                 : nullptr;
    if (!isMemoryEffectFree(prev))
      return nullptr;
  }
  return nullptr;
}

/// A paired bf16 contraction as AMX tile products when `matrixTiles` and
/// its shape fits them, else as blocks of AVX-512 dot products, sized by
/// the f32 rule (each dot product fills one f32 vector); one whose columns
/// are not a multiple of a vector is left to the loops.
void toBF16Products(RewriterBase &rewriter, linalg::GenericOp op,
                    const RegisterTileRule &rule, bool matrixTiles) {
  std::optional<lcc::PairedContractionShape> shape =
      lcc::matchPairedContraction(op);
  if (!shape)
    return;
  if (matrixTiles && lcc::fitsMatrixTiles(op, *shape)) {
    linalg::FillOp zeroFill = zeroFillOfC(op);
    lcc::lowerPairedContractionToTiles(rewriter, op, *shape,
                                       /*zeroC=*/bool(zeroFill));
    if (zeroFill)
      rewriter.eraseOp(zeroFill);
    return;
  }
  std::optional<RegisterTile> tile =
      registerTileFor(shape->rows, shape->columns, rule.lanes, rule.registers,
                      0, 0, StepOfA::strided);
  if (!tile || tile->n % rule.lanes != 0)
    return;
  linalg::FillOp zeroFill = zeroFillOfC(op);
  lcc::lowerPairedContractionToDots(rewriter, op, *shape, tile->m, tile->n,
                                    tile->rest, /*zeroC=*/bool(zeroFill));
  if (zeroFill)
    rewriter.eraseOp(zeroFill);
}

/// Keeps C's block in registers across `loop` (the k loop): read before it,
/// written after it; with `zeroC` (C was filled with zeros) the read is
/// zeros. Whether it could.
bool hoistTileOfC(RewriterBase &rewriter, scf::ForOp loop, Value tileOfC,
                  bool zeroC) {
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
    return false;
  rewriter.moveOpBefore(read, loop);
  Value initial = read.getResult();
  if (zeroC) {
    // A fresh constant, used only where the read was: the loop's uses of
    // it become the new iteration argument below.
    rewriter.setInsertionPoint(read);
    initial = arith::ConstantOp::create(
        rewriter, read.getLoc(), rewriter.getZeroAttr(read.getVectorType()));
    rewriter.replaceOp(read, initial);
  }
  Value written = write.getVector();
  auto hoisted = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
      rewriter, ValueRange{initial},
      /*replaceInitOperandUsesInLoop=*/true,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
        return SmallVector<Value>{written};
      }));
  rewriter.moveOpAfter(write, hoisted);
  rewriter.modifyOpInPlace(write, [&] {
    write.getValueToStoreMutable().assign(hoisted.getResults().back());
  });
  return true;
}

/// Splits `op` along `m` into its first `rows` rows and the rest (views of
/// A and C), and returns the two.
std::pair<linalg::LinalgOp, linalg::LinalgOp>
splitRows(RewriterBase &rewriter, linalg::LinalgOp op,
          const ContractionLoops &loops, int64_t rows) {
  int64_t total = op.getStaticLoopRanges()[loops.m];
  AffineExpr m = getAffineDimExpr(loops.m, op.getContext());
  rewriter.setInsertionPoint(op);
  auto part = [&](int64_t begin, int64_t size) {
    SmallVector<Value> operands;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = cast<MemRefType>(operand.get().getType());
      AffineMap map = op.getMatchingIndexingMap(&operand);
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (unsigned r = 0; r < map.getNumResults(); ++r) {
        bool isRows = map.getResult(r) == m;
        offsets.push_back(rewriter.getIndexAttr(isRows ? begin : 0));
        sizes.push_back(
            rewriter.getIndexAttr(isRows ? size : type.getDimSize(r)));
        strides.push_back(rewriter.getIndexAttr(1));
      }
      operands.push_back(memref::SubViewOp::create(
          rewriter, op.getLoc(), operand.get(), offsets, sizes, strides));
    }
    Operation *clone = rewriter.clone(*op);
    clone->setOperands(operands);
    return cast<linalg::LinalgOp>(clone);
  };
  auto result = std::make_pair(part(0, rows), part(rows, total - rows));
  rewriter.eraseOp(op);
  return result;
}

/// A contraction to tile: its loops, its register block and the zero fill
/// of its C, if any.
struct BlockedContraction {
  linalg::LinalgOp op;
  ContractionLoops loops;
  RegisterTile tile;
  linalg::FillOp zeroFill;
};

/// The contractions of `func` the rule blocks, with the rows a block does
/// not divide split off as contractions of their own.
SmallVector<BlockedContraction>
blockedContractions(RewriterBase &rewriter, func::FuncOp func,
                    const RegisterTileRule &rule) {
  SmallVector<BlockedContraction> work;
  func.walk([&](linalg::LinalgOp op) {
    if (auto loops = matchContraction(op, rule))
      work.push_back({op, loops->first, loops->second, zeroFillOfC(op)});
  });
  for (size_t i = 0, e = work.size(); i < e; ++i) {
    BlockedContraction c = work[i];
    if (c.tile.rest == 0)
      continue;
    int64_t rows = c.op.getStaticLoopRanges()[c.loops.m] - c.tile.rest;
    auto [main, rest] = splitRows(rewriter, c.op, c.loops, rows);
    work[i] = {main, c.loops, RegisterTile{c.tile.m, c.tile.n}, c.zeroFill};
    work.push_back(
        {rest, c.loops, RegisterTile{c.tile.rest, c.tile.n}, c.zeroFill});
  }
  return work;
}

/// Tiles each contraction into its register blocks with k innermost and
/// vectorizes each block, then keeps every block of C in registers across
/// its k loop. A zero fill of C goes only when every block of that C
/// starts from zeros.
LogicalResult tileIntoRegisterBlocks(RewriterBase &rewriter,
                                     ArrayRef<BlockedContraction> work) {
  struct ReductionLoop {
    scf::ForOp loop;
    Value tileOfC;
    linalg::FillOp zeroFill;
  };
  SmallVector<ReductionLoop> reductionLoops;
  llvm::DenseMap<Operation *, bool> fillStillRead;
  for (const BlockedContraction &c : work) {
    SmallVector<int64_t> sizes(3, 0);
    sizes[c.loops.m] = c.tile.m;
    sizes[c.loops.n] = c.tile.n;
    sizes[c.loops.k] = 1;
    linalg::LinalgTilingOptions tiling;
    tiling.setTileSizes(sizes)
        .setInterchange({c.loops.m, c.loops.n, c.loops.k})
        .setLoopType(linalg::LinalgTilingLoopType::Loops);
    rewriter.setInsertionPoint(c.op);
    FailureOr<linalg::TiledLinalgOp> tiled =
        linalg::tileLinalgOp(rewriter, c.op, tiling);
    if (failed(tiled)) {
      // Left as it is, it reads its C.
      if (c.zeroFill)
        fillStillRead[c.zeroFill] = true;
      continue;
    }
    rewriter.eraseOp(c.op);
    reductionLoops.push_back(
        {cast<scf::ForOp>(tiled->loops.back()),
         cast<linalg::LinalgOp>(tiled->op).getDpsInitOperand(0)->get(),
         c.zeroFill});
    rewriter.setInsertionPoint(tiled->op);
    FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
        rewriter, tiled->op, /*inputVectorSizes=*/{},
        /*inputScalableVecDims=*/{}, /*vectorizeNDExtract=*/false,
        /*flatten1DDepthwiseConv=*/false,
        /*assumeDynamicDimsMatchVecSizes=*/false,
        /*createNamedContraction=*/true);
    if (failed(vectorized))
      return tiled->op->emitOpError("could not be vectorized");
    rewriter.replaceOp(tiled->op, vectorized->replacements);
  }
  // The block of C is read before the k loop and written after it, so it
  // stays in registers while k advances. Only the tile of C, which nothing
  // else in the loop touches, moves; upstream's hoisting gives up on
  // buffers that are function arguments.
  for (ReductionLoop &r : reductionLoops) {
    bool hoisted = hoistTileOfC(rewriter, r.loop, r.tileOfC, bool(r.zeroFill));
    if (r.zeroFill)
      fillStillRead[r.zeroFill] |= !hoisted;
  }
  for (auto [fill, stillRead] : fillStillRead)
    if (!stillRead)
      rewriter.eraseOp(fill);
  return success();
}

/// A read of A's elements for one step of k that is only taken apart into
/// scalars (each broadcast to a row of FMAs) becomes one scalar load per
/// element. LLVM folds a scalar load into its broadcast (vbroadcastss from
/// memory, a load port); from a vector load it splits the vector into
/// powers of two and broadcasts the odd pieces' elements from registers, a
/// shuffle on the FMAs' port 5 plus a register for each piece.
struct ScalarReadsOfBroadcastElements
    : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    auto base = dyn_cast<MemRefType>(read.getBase().getType());
    VectorType type = read.getVectorType();
    if (!base || read.getMask() ||
        !read.getPermutationMap().isMinorIdentity() ||
        base.getRank() != type.getRank() ||
        llvm::any_of(read.getInBoundsValues(), [](bool b) { return !b; }) ||
        read->use_empty())
      return failure();
    SmallVector<vector::ExtractOp> extracts;
    for (Operation *user : read->getUsers()) {
      auto extract = dyn_cast<vector::ExtractOp>(user);
      if (!extract || extract.getResult().getType() != type.getElementType() ||
          !extract.getDynamicPosition().empty())
        return failure();
      extracts.push_back(extract);
    }
    for (vector::ExtractOp extract : extracts) {
      rewriter.setInsertionPoint(extract);
      SmallVector<Value> indices;
      for (auto [index, offset] :
           llvm::zip_equal(read.getIndices(), extract.getStaticPosition()))
        indices.push_back(offset == 0
                              ? index
                              : arith::AddIOp::create(
                                    rewriter, extract.getLoc(), index,
                                    arith::ConstantIndexOp::create(
                                        rewriter, extract.getLoc(), offset)));
      rewriter.replaceOpWithNewOp<memref::LoadOp>(extract, read.getBase(),
                                                  indices);
    }
    rewriter.eraseOp(read);
    return success();
  }
};

/// The vectorized blocks down to FMAs (outer products), broadcasts and
/// plain vector loads.
LogicalResult lowerBlocksToFMAs(func::FuncOp func) {
  RewritePatternSet patterns(func.getContext());
  patterns.add<ScalarReadsOfBroadcastElements>(func.getContext());
  vector::populateVectorContractLoweringPatterns(
      patterns, vector::VectorContractLowering::OuterProduct);
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  vector::populateVectorMultiReductionLoweringPatterns(
      patterns, vector::VectorMultiReductionLowering::InnerParallel);
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::EltWise);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  return applyPatternsGreedily(func, std::move(patterns));
}

struct VectorizeContractions
    : lcc::impl::VectorizeContractionsBase<VectorizeContractions> {
  using VectorizeContractionsBase::VectorizeContractionsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    if (vectorBits < 128 || vectorBits % 32 != 0 || vectorRegisters < 4 ||
        tileM < 0 || tileN < 0) {
      func.emitError() << "lcc-vectorize-contractions: expected vector-bits a "
                          "multiple of 32 and >= 128, vector-registers >= 4 "
                          "and tile sizes >= 0";
      return signalPassFailure();
    }
    // A row of B of another length is no legal LLVM vector: rows of 3 x 16
    // columns made dense attention 15x slower (not looked into further).
    if (tileN > 0 && !llvm::isPowerOf2_64(tileN)) {
      func.emitError() << "lcc-vectorize-contractions: tile-n must be a "
                          "power of two (a row of B is one LLVM vector), got "
                       << static_cast<int64_t>(tileN);
      return signalPassFailure();
    }
    if (bf16Dot && vectorBits != 512) {
      func.emitError() << "lcc-vectorize-contractions: bf16-dot needs "
                          "AVX-512's vector-bits=512, got "
                       << static_cast<int64_t>(vectorBits);
      return signalPassFailure();
    }
    RegisterTileRule rule{vectorBits / 32, vectorRegisters, tileM, tileN};
    auto generics = [&] {
      SmallVector<linalg::GenericOp> ops;
      func.walk([&](linalg::GenericOp op) { ops.push_back(op); });
      return ops;
    };
    if (amxTiles && !bf16Dot) {
      func.emitError() << "lcc-vectorize-contractions: amx-tiles needs "
                          "bf16-dot (every CPU with amx_bf16 has "
                          "avx512_bf16, for the shapes tiles do not fit)";
      return signalPassFailure();
    }
    for (linalg::GenericOp op : generics())
      dropUnitLoops(rewriter, op);
    if (bf16Dot)
      for (linalg::GenericOp op : generics())
        toBF16Products(rewriter, op, rule, amxTiles);
    for (linalg::GenericOp op : generics())
      toNamedMatmul(rewriter, op, rule);
    if (failed(lowerBlockTransposes(func)))
      return signalPassFailure();
    SmallVector<BlockedContraction> work =
        blockedContractions(rewriter, func, rule);
    if (work.empty())
      return;
    if (failed(tileIntoRegisterBlocks(rewriter, work)) ||
        failed(lowerBlocksToFMAs(func)))
      return signalPassFailure();
  }
};

} // namespace
