//===- TileToWorkgroups.cpp - top-level ops into scf.forall ---------------===//
//
// Gives every computation of a function a workgroup decomposition: each
// top-level TilingInterface op becomes an scf.forall, with its single-use
// producers fused in, so that dispatch outlining only has to look for
// foralls.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/WorkgroupTileTemplates.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace lcc {
#define GEN_PASS_DEF_TILETOWORKGROUPS
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// The fewest iterations of a row or column loop a contraction's workgroup
/// takes where the loop has them (shorter loops, a projection's 4 heads,
/// are split as any other): the kernel register-tiles the product and
/// reads all of the other operand once per workgroup, so a workgroup of
/// few rows is mostly that read. (A chunk of 256 positions split 64 ways
/// gave the feed-forward's input gradient 4-row workgroups at 13 GFLOP/s.)
constexpr int64_t kMinContractionTile = 64;

/// Tile sizes (0 = not tiled) that split the outermost parallel loops of
/// `op` into about `target` tiles, using at most three loops; a
/// contraction keeps kMinContractionTile iterations of a row or column loop,
/// the next loop split instead.
SmallVector<OpFoldResult> workgroupTileSizes(OpBuilder &b, TilingInterface op,
                                             int64_t target) {
  SmallVector<Range> domain = op.getIterationDomain(b);
  SmallVector<utils::IteratorType> iterators = op.getLoopIteratorTypes();
  SmallVector<OpFoldResult> sizes(domain.size(), b.getIndexAttr(0));
  // A contraction's row and column loops (not its batch loops).
  llvm::SmallDenseSet<unsigned> productLoops;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op.getOperation());
  if (linalgOp && linalg::isaContractionOpInterface(linalgOp)) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(linalgOp);
    if (succeeded(dims)) {
      productLoops.insert(dims->m.begin(), dims->m.end());
      productLoops.insert(dims->n.begin(), dims->n.end());
    }
  }
  int64_t tiles = 1, tiledLoops = 0;
  for (auto [i, range] : llvm::enumerate(domain)) {
    if (tiles >= target || tiledLoops == 3)
      break;
    std::optional<int64_t> extent = getConstantIntValue(range.size);
    if (iterators[i] != utils::IteratorType::parallel || !extent ||
        *extent <= 1)
      continue;
    int64_t wanted = llvm::divideCeil(target, tiles);
    int64_t minTile = productLoops.contains(i) && *extent >= kMinContractionTile
                          ? kMinContractionTile
                          : 1;
    int64_t tileSize =
        std::max<int64_t>(minTile, llvm::divideCeil(*extent, wanted));
    if (tileSize >= *extent)
      continue; // one tile: the next loop is split instead
    sizes[i] = b.getIndexAttr(tileSize);
    tiles *= llvm::divideCeil(*extent, tileSize);
    ++tiledLoops;
  }
  return sizes;
}

/// Whether an indexing map of `op` reads at a constant offset from its loop
/// indices (a band read along diagonals, `q - k + c`). Tiling keeps an op's
/// maps and offsets its operands' slices by them too, which would count
/// such an offset twice: these ops stay whole.
bool readsAtOffsets(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return false;
  for (AffineMap map : linalgOp.getIndexingMapsArray()) {
    SmallVector<AffineExpr> zeros(map.getNumDims(),
                                  getAffineConstantExpr(0, op->getContext()));
    for (AffineExpr result : map.getResults()) {
      auto atOrigin = dyn_cast<AffineConstantExpr>(
          simplifyAffineExpr(result.replaceDims(zeros), 0, 0));
      if (!atOrigin || atOrigin.getValue() != 0)
        return true;
    }
  }
  return false;
}

bool isTopLevel(Operation *op, func::FuncOp func) {
  return op->getParentOp() == func.getOperation();
}

/// Rewrites top-level extract_slices into copies, which can be tiled.
void sliceToCopy(RewriterBase &rewriter, tensor::ExtractSliceOp slice) {
  rewriter.setInsertionPointAfter(slice);
  RankedTensorType type = slice.getResultType();
  Value init = tensor::EmptyOp::create(rewriter, slice.getLoc(),
                                       type.getShape(), type.getElementType());
  auto copy =
      linalg::CopyOp::create(rewriter, slice.getLoc(), slice.getResult(), init);
  rewriter.replaceAllUsesExcept(slice.getResult(), copy.getResult(0), copy);
}

/// Whether `op` may be computed tile by tile inside the workgroups of
/// `forall`, which takes its result as initial output: all-parallel (a
/// fill, a bias broadcast), one result that only `forall` uses (and
/// `root`, the op `forall` tiled, about to go), at the top level.
bool isFusableInit(Operation *op, scf::ForallOp forall, Operation *root,
                   func::FuncOp func) {
  auto tileable = dyn_cast_or_null<TilingInterface>(op);
  auto dps = dyn_cast_or_null<DestinationStyleOpInterface>(op);
  return tileable && dps && isTopLevel(op, func) && op->getNumResults() == 1 &&
         dps.getNumDpsInits() == 1 &&
         llvm::all_of(op->getResult(0).getUsers(),
                      [&](Operation *user) {
                        return user == forall.getOperation() || user == root;
                      }) &&
         !readsAtOffsets(op) &&
         llvm::all_of(tileable.getLoopIteratorTypes(), [](auto iterator) {
           return iterator == utils::IteratorType::parallel;
         });
}

/// Computes the producer of each initial output of `forall` (isFusableInit)
/// in the workgroups, on the tiles they read of it, and starts the loop from
/// what the producer started from. Upstream tile-and-fuse does not fuse
/// through an scf.forall's outputs: a product's zero fill or bias broadcast
/// was a dispatch of its own, one more pass over the output (in a train
/// step, some 200 dispatches, slower on two threads than on one).
void fuseInitProducers(RewriterBase &rewriter, scf::ForallOp forall,
                       Operation *root, func::FuncOp func,
                       llvm::SmallPtrSetImpl<Operation *> &fused,
                       SmallVectorImpl<Operation *> &members) {
  for (OpOperand &init : forall.getOutputsMutable()) {
    Operation *producer = init.get().getDefiningOp();
    if (!isFusableInit(producer, forall, root, func))
      continue;
    // The workgroup's one tile of the output (more would leave the loop
    // half rewritten should a later one fail to tile).
    BlockArgument shared = forall.getTiedBlockArgument(&init);
    SmallVector<tensor::ExtractSliceOp> tiles;
    for (Operation *user : shared.getUsers())
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user))
        tiles.push_back(slice);
    if (tiles.size() != 1 || !tiles.front().hasUnitStride())
      continue;
    tensor::ExtractSliceOp tile = tiles.front();
    rewriter.setInsertionPointAfter(tile);
    FailureOr<TilingResult> computed =
        cast<TilingInterface>(producer).generateResultTileValue(
            rewriter, 0, tile.getMixedOffsets(), tile.getMixedSizes());
    if (failed(computed) || computed->tiledOps.size() != 1)
      continue;
    // Written into the workgroup's tile of the loop's output.
    Operation *tiled = computed->tiledOps.front();
    OpOperand &tiledInit =
        cast<DestinationStyleOpInterface>(tiled).getDpsInitsMutable()[0];
    Value producerTile = tiledInit.get();
    tiledInit.set(tile.getResult());
    if (producerTile.use_empty())
      if (Operation *slice = producerTile.getDefiningOp())
        rewriter.eraseOp(slice);
    rewriter.replaceAllUsesExcept(tile.getResult(),
                                  computed->tiledValues.front(), tiled);
    init.set(cast<DestinationStyleOpInterface>(producer).getDpsInits()[0]);
    fused.insert(producer);
    members.push_back(producer);
  }
}

LogicalResult tileFunction(RewriterBase &rewriter, func::FuncOp func,
                           int64_t target, bool reuseTiles) {
  for (auto slice :
       llvm::to_vector(func.getBody().getOps<tensor::ExtractSliceOp>()))
    sliceToCopy(rewriter, slice);

  SmallVector<TilingInterface> roots;
  for (Operation &op : func.getBody().getOps())
    if (auto tileable = dyn_cast<TilingInterface>(&op))
      roots.push_back(tileable);

  llvm::SmallPtrSet<Operation *, 16> fused;
  lcc::WorkgroupTileTemplates templates;
  for (TilingInterface root : llvm::reverse(roots)) {
    if (fused.contains(root) || readsAtOffsets(root))
      continue;
    // Another layer's copy of a cluster tiled before.
    if (reuseTiles && templates.reuse(rewriter, root, fused))
      continue;
    rewriter.setInsertionPoint(root);
    SmallVector<OpFoldResult> sizes =
        workgroupTileSizes(rewriter, root, target);
    // Nothing parallel to split (a scalar, a whole reduction): one
    // workgroup, left as is, as upstream tiling would leave it.
    if (llvm::all_of(sizes, isZeroInteger))
      continue;
    scf::SCFTilingOptions tiling;
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    tiling.setTileSizes(sizes);
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    // Fusing a producer with other users would compute it twice.
    options.setFusionControlFn(
        [&](tensor::ExtractSliceOp, OpResult producer, bool)
            -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          Operation *def = producer.getOwner();
          if (!isTopLevel(def, func) || !producer.hasOneUse() ||
              def->getNumResults() != 1 || readsAtOffsets(def))
            return std::nullopt;
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        });
    FailureOr<scf::SCFTileAndFuseResult> result =
        scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
    if (failed(result))
      return root->emitOpError("could not be tiled into workgroups");
    if (result->loops.empty())
      continue; // Nothing parallel to split: one workgroup, left as is.
    for (Operation *producer : result->fusedProducers)
      fused.insert(producer);
    SmallVector<Value> replacements;
    for (Value original : root->getResults())
      replacements.push_back(result->replacements.lookup(original));
    bool onlyRoot = result->replacements.size() == root->getNumResults();
    for (auto [original, replacement] : result->replacements)
      rewriter.replaceAllUsesWith(original, replacement);
    auto forall = dyn_cast<scf::ForallOp>(result->loops.front().getOperation());
    if (!forall)
      continue;
    SmallVector<Operation *> members = {root};
    members.append(result->fusedProducers.begin(),
                   result->fusedProducers.end());
    fuseInitProducers(rewriter, forall, root, func, fused, members);
    if (onlyRoot)
      templates.keep(members, forall, replacements);
  }
  // Fused producers and tiled roots are now dead.
  for (Operation &op : llvm::make_early_inc_range(
           llvm::reverse(func.getBody().front().getOperations())))
    if (isa<TilingInterface>(op) && op.use_empty())
      rewriter.eraseOp(&op);
  return success();
}

struct TileToWorkgroupsPass
    : lcc::impl::TileToWorkgroupsBase<TileToWorkgroupsPass> {
  using TileToWorkgroupsBase::TileToWorkgroupsBase;

  void runOnOperation() override {
    if (failed(lcc::checkOptionRanges(getOperation(), "lcc-tile-to-workgroups",
                                      {{lcc::knobs::kWorkgroups, workgroups}})))
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func->hasAttr("lcc.dispatch"))
        continue;
      if (failed(tileFunction(rewriter, func, workgroups, reuseTiles)))
        return signalPassFailure();
    }
  }
};

} // namespace
