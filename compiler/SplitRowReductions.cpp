//===- SplitRowReductions.cpp - row reductions in lanes on the CPU -------===//
//
// A row's sum is one chain of dependent float additions, which LLVM keeps
// in order: a layer norm's statistics and LSH's row norms ran at one
// addition per four cycles. Summed in a fixed number of lanes, the chain
// is a vector loop; the lanes are then added in order.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace lcc {
#define GEN_PASS_DEF_SPLITROWREDUCTIONS
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// Most bytes of partial results kept on a kernel's stack.
constexpr int64_t kMaxLaneBytes = 64 * 1024;

/// A reduction the pass splits: the op, its combiner and row count.
struct RowReduction {
  linalg::GenericOp op;
  /// The body's combining op: output = combiner(output, value).
  Operation *combiner;
  int64_t length;
};

/// The combiner's identity: what a lane starts from.
std::optional<TypedAttr> identityOf(Operation *combiner, FloatType type) {
  const llvm::fltSemantics &semantics = type.getFloatSemantics();
  if (isa<arith::AddFOp>(combiner))
    return FloatAttr::get(type, llvm::APFloat::getZero(semantics));
  if (isa<arith::MaximumFOp>(combiner))
    return FloatAttr::get(type, llvm::APFloat::getInf(semantics, true));
  if (isa<arith::MinimumFOp>(combiner))
    return FloatAttr::get(type, llvm::APFloat::getInf(semantics, false));
  return std::nullopt;
}

/// A shape with its last dimension N as [N / lanes, lanes].
SmallVector<int64_t> laneView(ArrayRef<int64_t> shape, int64_t lanes) {
  SmallVector<int64_t> view(shape.drop_back());
  view.append({shape.back() / lanes, lanes});
  return view;
}

/// The reassociation of laneView: the last dimension into the last two.
SmallVector<ReassociationIndices> lanesReassociation(MemRefType type) {
  SmallVector<ReassociationIndices> groups;
  int64_t rank = type.getRank();
  for (int64_t d = 0; d + 1 < rank; ++d)
    groups.push_back({d});
  groups.push_back({rank - 1, rank});
  return groups;
}

/// `op` as a row reduction that `lanes` lanes can take, if it is one.
std::optional<RowReduction> matchRowReduction(linalg::GenericOp op,
                                              int64_t lanes) {
  unsigned loops = op.getNumLoops();
  // A kernel's own reductions; those inside its loops (a flash attention
  // tile's row maxima and sums) measured 5-10% slower split.
  if (!isa<func::FuncOp>(op->getParentOp()) || !op.hasPureBufferSemantics() ||
      op.getNumDpsInits() != 1 || loops < 2 || op.getNumReductionLoops() != 1 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction ||
      op.hasIndexSemantics())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t length = ranges.back();
  if (llvm::any_of(ranges, ShapedType::isDynamic) || length < 2 * lanes ||
      length % lanes != 0)
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  auto output = cast<MemRefType>(init->get().getType());
  auto element = dyn_cast<FloatType>(output.getElementType());
  if (!element || !output.hasStaticShape() ||
      output.getNumElements() * lanes * element.getWidth() / 8 > kMaxLaneBytes)
    return std::nullopt;
  // The output is indexed by parallel loops only, each at most once.
  AffineMap outputMap = op.getMatchingIndexingMap(init);
  if (!outputMap.isProjectedPermutation() ||
      outputMap.isFunctionOfDim(loops - 1))
    return std::nullopt;
  // Inputs read a row's elements along their last, contiguous dimension
  // (viewed as [N / lanes, lanes]) or not at all (row-wise operands).
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(loops - 1))
      continue;
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || map.getNumResults() == 0 ||
        map.getResults().back() !=
            getAffineDimExpr(loops - 1, op.getContext()) ||
        llvm::any_of(
            map.getResults().drop_back(),
            [&](AffineExpr e) { return e.isFunctionOfDim(loops - 1); }) ||
        failed(memref::ExpandShapeOp::computeExpandedType(
            type, laneView(type.getShape(), lanes), lanesReassociation(type))))
      return std::nullopt;
  }
  // The body yields combiner(output, value), the output read nowhere else.
  Block &body = op.getRegion().front();
  BlockArgument accumulator = body.getArgument(op.getNumDpsInputs());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *combiner = yield.getOperand(0).getDefiningOp();
  if (!combiner || combiner->getBlock() != &body || !accumulator.hasOneUse() ||
      accumulator.getUses().begin()->getOwner() != combiner ||
      !identityOf(combiner, element) || combiner->getNumOperands() != 2 ||
      !combiner->getResult(0).hasOneUse())
    return std::nullopt;
  return RowReduction{op, combiner, length};
}

/// The lanes loop as vector operations: one step of r of one row at a
/// time, its lanes one vector. Left to LLVM, the short lane loop was
/// unrolled first and the row loop vectorized instead, by gathers.
void vectorizeLanes(RewriterBase &rewriter, linalg::GenericOp lanesOp) {
  unsigned loops = lanesOp.getNumLoops();
  SmallVector<OpFoldResult> sizes(loops - 1, rewriter.getIndexAttr(1));
  sizes.push_back(rewriter.getIndexAttr(0));
  scf::SCFTilingOptions tiling;
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  tiling.setTileSizes(sizes);
  rewriter.setInsertionPoint(lanesOp);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(lanesOp.getOperation()), tiling);
  if (failed(tiled))
    return;
  rewriter.eraseOp(lanesOp);
  for (Operation *step : tiled->tiledOps) {
    rewriter.setInsertionPoint(step);
    if (succeeded(linalg::vectorize(rewriter, step)))
      rewriter.eraseOp(step);
  }
}

/// The row reduction `r` as partial results in `lanes` lanes, then their
/// combination into its output.
void splitIntoLanes(RewriterBase &rewriter, const RowReduction &r,
                    int64_t lanes) {
  linalg::GenericOp op = r.op;
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  unsigned loops = op.getNumLoops();
  OpOperand *init = op.getDpsInitOperand(0);
  auto output = cast<MemRefType>(init->get().getType());
  auto element = cast<FloatType>(output.getElementType());

  // Lanes: the output's shape and `lanes`, on the stack at the function's
  // entry (an alloca in a loop would grow the stack every iteration).
  SmallVector<int64_t> laneShape(output.getShape());
  laneShape.push_back(lanes);
  Value partial;
  {
    OpBuilder::InsertionGuard guard(rewriter);
    auto func = op->getParentOfType<func::FuncOp>();
    rewriter.setInsertionPointToStart(&func.getBody().front());
    partial = memref::AllocaOp::create(rewriter, loc,
                                       MemRefType::get(laneShape, element),
                                       rewriter.getI64IntegerAttr(64));
  }
  rewriter.setInsertionPoint(op);
  Value identity = arith::ConstantOp::create(rewriter, loc,
                                             *identityOf(r.combiner, element));
  linalg::FillOp::create(rewriter, loc, identity, partial);

  // Loops: the parallel ones, then r (the reduction, N / lanes steps), then
  // l (parallel, the lanes): a row's element r * lanes + l goes to lane l,
  // read through a [N / lanes, lanes] view of the row.
  AffineExpr lane = getAffineDimExpr(loops, context);
  auto withLane = [&](AffineMap map, unsigned dims, AffineExpr laneDim) {
    SmallVector<AffineExpr> results(map.getResults());
    results.push_back(laneDim);
    return AffineMap::get(dims, 0, results, context);
  };
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(loops - 1)) {
      inputs.push_back(input->get());
      maps.push_back(AffineMap::get(loops + 1, 0, map.getResults(), context));
      continue;
    }
    auto type = cast<MemRefType>(input->get().getType());
    SmallVector<int64_t> view = laneView(type.getShape(), lanes);
    FailureOr<MemRefType> viewType = memref::ExpandShapeOp::computeExpandedType(
        type, view, lanesReassociation(type));
    inputs.push_back(memref::ExpandShapeOp::create(
        rewriter, loc, *viewType, input->get(), lanesReassociation(type)));
    maps.push_back(withLane(map, loops + 1, lane));
  }
  AffineMap outputMap = op.getMatchingIndexingMap(init);
  maps.push_back(withLane(outputMap, loops + 1, lane));
  SmallVector<utils::IteratorType> iterators(op.getIteratorTypesArray());
  iterators.push_back(utils::IteratorType::parallel);
  auto lanesOp = linalg::GenericOp::create(
      rewriter, loc, TypeRange{}, inputs, ValueRange{partial}, maps, iterators);
  // The body moves into the lanes' op, which vectorizing replaces.
  OperationName combinerName = r.combiner->getName();
  rewriter.inlineRegionBefore(op.getRegion(), lanesOp.getRegion(),
                              lanesOp.getRegion().begin());
  vectorizeLanes(rewriter, lanesOp);
  rewriter.setInsertionPoint(op);

  // The lanes into the output, in order: loops are the parallel ones and l.
  SmallVector<AffineMap> combineMaps = {
      withLane(outputMap, loops, getAffineDimExpr(loops - 1, context)),
      outputMap};
  SmallVector<utils::IteratorType> combineIterators(op.getIteratorTypesArray());
  linalg::GenericOp::create(rewriter, loc, TypeRange{}, ValueRange{partial},
                            ValueRange{init->get()}, combineMaps,
                            combineIterators,
                            [&](OpBuilder &b, Location l, ValueRange args) {
                              OperationState state(l, combinerName);
                              state.addOperands({args[1], args[0]});
                              state.addTypes(element);
                              Value combined = b.create(state)->getResult(0);
                              linalg::YieldOp::create(b, l, combined);
                            });
  rewriter.eraseOp(op);
}

struct SplitRowReductionsPass
    : lcc::impl::SplitRowReductionsBase<SplitRowReductionsPass> {
  using SplitRowReductionsBase::SplitRowReductionsBase;

  void runOnOperation() override {
    if (lanes < 2) {
      getOperation().emitError()
          << "lcc-split-row-reductions: expected lanes >= 2, got "
          << static_cast<int64_t>(lanes);
      return signalPassFailure();
    }
    SmallVector<RowReduction> work;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<RowReduction> r = matchRowReduction(op, lanes))
        work.push_back(*r);
    });
    if (work.empty())
      return;
    IRRewriter rewriter(&getContext());
    for (const RowReduction &r : work)
      splitIntoLanes(rewriter, r, lanes);
    // A vectorized step's reduction over its one step of r is an
    // elementwise combination.
    RewritePatternSet patterns(&getContext());
    vector::MultiDimReductionOp::getCanonicalizationPatterns(patterns,
                                                             &getContext());
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerParallel);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
