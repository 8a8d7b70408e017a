//===- DistributeToThreads.cpp - a workgroup's work over its threads ------===//
//
// After bufferization a kernel body is a sequence of linalg ops on buffers,
// inside uniform control flow. Each linalg op becomes loops whose parallel
// part is shared by the block's threads; other writes run on one thread;
// barriers order them as the sequential body did. A linalg op's parallel
// loops are moved outside its reductions first (a row maximum written
// [reduction, parallel] ran on thread 0 alone; a product [parallel,
// reduction, parallel] on as many threads as rows): each output element
// still sums in the same order, so the results do not change. A reduction
// with fewer rows than half the threads shares each row among lanes of a
// warp (a reduction to one value, a loss, among the whole block): each
// lane folds a strided part, the lanes combine theirs by butterfly
// shuffles (across warps, through shared memory and thread 0). The sum's
// order differs from one thread's; a maximum's result does not.
//
//===----------------------------------------------------------------------===//

#include "compiler/CudaArch.h"
#include "compiler/Passes.h"
#include "compiler/ReductionAccumulators.h"
#include "compiler/TensorCoreContractions.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace lcc {
#define GEN_PASS_DEF_DISTRIBUTETOTHREADS
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// Whether `op` or an op nested in it may write memory. Ops that do not
/// describe their effects count as writing.
bool mayWrite(Operation *op) {
  bool writes = false;
  op->walk([&](Operation *nested) {
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(nested)) {
      writes |= effects.hasEffect<MemoryEffects::Write>() ||
                effects.hasEffect<MemoryEffects::Free>();
      return;
    }
    if (!nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
        !isa<gpu::BarrierOp>(nested))
      writes = true;
  });
  return writes;
}

/// The op that folds each element into the accumulator of a reduction
/// whose loops come after all its parallel ones, `out = combine(f(inputs),
/// out)`, when it may combine partial results in any order (an f32 sum,
/// maximum or minimum); else null.
Operation *reductionCombiner(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0 || op.getNumDpsInits() != 1 ||
      llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic) ||
      !isa<MemRefType>(op.getDpsInits()[0].getType()))
    return nullptr;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (!std::is_partitioned(iterators.begin(), iterators.end(), [](auto type) {
        return type == utils::IteratorType::parallel;
      }))
    return nullptr;
  Block *body = op.getBlock();
  BlockArgument out = op.getRegionOutputArgs()[0];
  if (!out.getType().isF32() || !out.hasOneUse() ||
      !body->getOps<linalg::IndexOp>().empty())
    return nullptr;
  Operation *combiner = *out.getUsers().begin();
  if (!isa<arith::AddFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp>(combiner) ||
      body->getTerminator()->getOperand(0) != combiner->getResult(0))
    return nullptr;
  return combiner;
}

int64_t product(ArrayRef<int64_t> sizes) {
  int64_t result = 1;
  for (int64_t size : sizes)
    result *= size;
  return result;
}

/// The value `combiner` leaves unchanged.
FloatAttr identityOf(Operation *combiner, Type type) {
  auto floatType = cast<FloatType>(type);
  if (isa<arith::AddFOp>(combiner))
    return FloatAttr::get(type, 0.0);
  bool maximum = isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner);
  return FloatAttr::get(
      type, APFloat::getInf(floatType.getFloatSemantics(), maximum));
}

bool containsLinalg(Operation *op) {
  return op->walk([](linalg::LinalgOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

class Distributor {
public:
  Distributor(gpu::GPUFuncOp kernel, int64_t blockSize, bool tensorCores,
              bool tf32)
      : kernel(kernel), rewriter(kernel.getContext()), blockSize(blockSize),
        tensorCores(tensorCores), tf32(tf32) {}

  LogicalResult run() {
    Block &entry = kernel.getBody().front();
    rewriter.setInsertionPointToStart(&entry);
    Location loc = kernel.getLoc();
    threadId = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
    threads = arith::ConstantIndexOp::create(rewriter, loc, blockSize);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    isFirstThread = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, threadId, zero);
    return distribute(entry);
  }

private:
  /// Keeps the ops before and after `op` apart: no thread starts `op`
  /// before all have finished what came before.
  void barrierBefore(Operation *op) {
    if (Operation *previous = op->getPrevNode();
        previous && isa<gpu::BarrierOp>(previous))
      return;
    rewriter.setInsertionPoint(op);
    gpu::BarrierOp::create(rewriter, op->getLoc());
  }
  void barrierAfter(Operation *op) {
    if (Operation *next = op->getNextNode(); next && isa<gpu::BarrierOp>(next))
      return;
    rewriter.setInsertionPointAfter(op);
    gpu::BarrierOp::create(rewriter, op->getLoc());
  }

  LogicalResult distribute(Block &block) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        if (failed(distributeLinalg(linalgOp)))
          return failure();
        continue;
      }
      if (op.getNumRegions() > 0 && containsLinalg(&op)) {
        for (Region &region : op.getRegions())
          for (Block &nested : region)
            if (failed(distribute(nested)))
              return failure();
        continue;
      }
      if (op.hasTrait<OpTrait::IsTerminator>() || !mayWrite(&op))
        continue;
      if (failed(runOnFirstThread(&op)))
        return failure();
    }
    return success();
  }

  /// Runs `op` on thread 0. Its results reach the other threads through
  /// one-element buffers (shared memory once promoted).
  LogicalResult runOnFirstThread(Operation *op) {
    Location loc = op->getLoc();
    SmallVector<Value> slots;
    rewriter.setInsertionPoint(op);
    for (Type type : op->getResultTypes()) {
      Type stored = type.isIndex() ? rewriter.getI64Type() : type;
      if (!stored.isIntOrFloat())
        return op->emitOpError("writes memory and returns a ")
               << type << ", which one thread of a GPU block cannot share "
               << "with the others";
      slots.push_back(
          memref::AllocOp::create(rewriter, loc, MemRefType::get({1}, stored)));
    }
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    barrierBefore(op);
    rewriter.setInsertionPoint(op);
    auto guard = scf::IfOp::create(rewriter, loc, isFirstThread,
                                   /*withElseRegion=*/false);
    rewriter.moveOpBefore(op, guard.thenBlock()->getTerminator());
    barrierAfter(guard);
    if (slots.empty())
      return success();
    rewriter.setInsertionPointAfter(op);
    for (auto [result, slot] : llvm::zip(op->getResults(), slots)) {
      Value value = result;
      if (result.getType().isIndex())
        value = arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                           value);
      memref::StoreOp::create(rewriter, loc, value, slot, zero);
    }
    rewriter.setInsertionPointAfter(guard->getNextNode());
    for (auto [result, slot] : llvm::zip(op->getResults(), slots)) {
      Value shared = memref::LoadOp::create(rewriter, loc, slot, zero);
      if (result.getType().isIndex())
        shared = arith::IndexCastOp::create(rewriter, loc,
                                            rewriter.getIndexType(), shared);
      result.replaceUsesWithIf(shared, [&](OpOperand &use) {
        return !guard->isAncestor(use.getOwner());
      });
    }
    return success();
  }

  /// `op` with its parallel loops outermost, in their order, then its
  /// reductions in theirs; `op` itself when they are already.
  FailureOr<linalg::LinalgOp> parallelLoopsFirst(linalg::LinalgOp op) {
    SmallVector<unsigned> order;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (unsigned i = 0; i < iterators.size(); ++i)
      if (iterators[i] == utils::IteratorType::parallel)
        order.push_back(i);
    unsigned parallel = order.size();
    for (unsigned i = 0; i < iterators.size(); ++i)
      if (iterators[i] != utils::IteratorType::parallel)
        order.push_back(i);
    if (llvm::all_of(llvm::seq<unsigned>(0, parallel),
                     [&](unsigned i) { return order[i] == i; }))
      return op;
    rewriter.setInsertionPoint(op);
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return op.emitOpError("cannot be rewritten as linalg.generic to put "
                              "its parallel loops first");
      generic = *generalized;
    }
    FailureOr<linalg::GenericOp> interchanged =
        linalg::interchangeGenericOp(rewriter, generic, order);
    if (failed(interchanged))
      return generic.emitOpError("cannot put its parallel loops first");
    return cast<linalg::LinalgOp>(interchanged->getOperation());
  }

  LogicalResult distributeLinalg(linalg::LinalgOp original) {
    if (!original.hasPureBufferSemantics())
      return original.emitOpError("is not bufferized");
    if (tensorCores) {
      barrierBefore(original);
      if (Operation *loop = lcc::lowerProductToMma(rewriter, original, threadId,
                                                   blockSize, tf32)) {
        barrierAfter(loop);
        return success();
      }
    }
    FailureOr<linalg::LinalgOp> reordered = parallelLoopsFirst(original);
    if (failed(reordered))
      return failure();
    linalg::LinalgOp op = *reordered;
    Location loc = op.getLoc();
    barrierBefore(op);
    // Leading parallel loops are shared by the threads; the rest (reductions
    // and what they enclose) run inside one thread.
    unsigned shared = 0;
    for (utils::IteratorType type : op.getIteratorTypesArray()) {
      if (type != utils::IteratorType::parallel)
        break;
      ++shared;
    }
    Operation *opHandle = op.getOperation();
    if (succeeded(distributeReduction(op, shared)))
      return success();
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::LinalgLoops> loops =
        linalg::linalgOpToLoops(rewriter, op);
    if (failed(loops))
      return opHandle->emitOpError("cannot be lowered to loops");
    Operation *first = loops->empty() ? nullptr : loops->front();
    rewriter.eraseOp(opHandle);
    if (shared == 0 || !first) {
      // A full reduction (or a single element): one thread does it.
      if (first)
        return runOnFirstThread(first);
      return success();
    }
    // Each thread's reduction sums in registers, not in its output element.
    if (loops->size() > shared)
      lcc::carryAccumulatorsInRegisters(rewriter,
                                        cast<scf::ForOp>((*loops)[shared]));
    SmallVector<scf::ForOp> band;
    for (unsigned i = 0; i < shared; ++i)
      band.push_back(cast<scf::ForOp>((*loops)[i]));
    if (band.size() > 1 && failed(coalesceLoops(rewriter, band)))
      return emitError(loc, "cannot coalesce the parallel loops of a linalg "
                            "op into one");
    // coalesceLoops keeps the outermost loop and makes it iterate over the
    // whole band.
    scf::ForOp loop = band.front();
    affine::mapLoopToProcessorIds(loop, {threadId}, {threads});
    barrierAfter(loop);
    return success();
  }

  /// `combiner` applied to `lhs` and `rhs`, with its attributes.
  Value combine(Operation *combiner, Value lhs, Value rhs) {
    OperationState state(combiner->getLoc(), combiner->getName(), {lhs, rhs},
                         {lhs.getType()}, combiner->getAttrs());
    return rewriter.create(state)->getResult(0);
  }

  Value index(Location loc, int64_t value) {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  }

  /// Shares the reduction `op` (`shared` parallel loops, then its
  /// reductions) over the block's lanes when it is one reductionCombiner
  /// can split and there are fewer rows than half the threads: a reduction
  /// to one value over the whole block, rows over groups of lanes. Failure
  /// leaves `op` to the loops that give each thread whole rows.
  LogicalResult distributeReduction(linalg::LinalgOp op, unsigned shared) {
    Operation *combiner = reductionCombiner(op);
    if (!combiner || blockSize % lcc::kCudaWarpSize != 0)
      return failure();
    int64_t rows =
        product(ArrayRef(op.getStaticLoopRanges()).take_front(shared));
    rewriter.setInsertionPoint(op);
    if (shared == 0) {
      reduceOverBlock(op, combiner);
      return success();
    }
    // Lanes of a row read neighbouring elements only where the innermost
    // reduction loop walks each input's innermost dimension; elsewhere (a
    // [keys, queries] tile reduced over keys) a thread per row is what
    // reads neighbouring words, and shared memory serves it without bank
    // conflicts.
    AffineExpr innermost =
        getAffineDimExpr(op.getNumLoops() - 1, op.getContext());
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      if (isa<MemRefType>(input->get().getType()) && map.getNumResults() > 0 &&
          map.getResults().back() != innermost)
        return failure();
    }
    int64_t lanes = 1;
    while (lanes < lcc::kCudaWarpSize && 2 * lanes * rows <= blockSize)
      lanes *= 2;
    if (lanes == 1)
      return failure();
    reduceRowsOverLanes(op, combiner, shared, rows, lanes);
    return success();
  }

  /// One thread's part of the reduction `op`: the elements of its reduction
  /// loops whose linear position is start, start + step, ... below `end`,
  /// folded into `combiner`'s identity, with the parallel loops at `row`.
  Value foldPart(linalg::LinalgOp op, Operation *combiner, ValueRange row,
                 Value start, Value end, Value step) {
    Location loc = op.getLoc();
    Value identity = arith::ConstantOp::create(
        rewriter, loc, identityOf(combiner, rewriter.getF32Type()));
    Value yielded = op.getBlock()->getTerminator()->getOperand(0);
    SmallVector<int64_t> reduced = llvm::to_vector(
        ArrayRef(op.getStaticLoopRanges()).drop_front(row.size()));
    auto loop = scf::ForOp::create(
        rewriter, loc, start, end, step, ValueRange{identity},
        [&](OpBuilder &b, Location loc, Value linear, ValueRange partial) {
          SmallVector<Value> at(row.begin(), row.end());
          if (reduced.size() == 1)
            at.push_back(linear);
          else
            llvm::append_range(at, affine::AffineDelinearizeIndexOp::create(
                                       b, loc, linear, reduced)
                                       .getResults());
          IRMapping values;
          for (OpOperand *input : op.getDpsInputOperands()) {
            Value element = input->get();
            if (isa<MemRefType>(element.getType()))
              element = memref::LoadOp::create(
                  b, loc, element,
                  *affine::expandAffineMap(
                      b, loc, op.getMatchingIndexingMap(input), at));
            values.map(op.getMatchingBlockArgument(input), element);
          }
          values.map(op.getRegionOutputArgs()[0], partial[0]);
          for (Operation &bodyOp : op.getBlock()->without_terminator())
            b.clone(bodyOp, values);
          scf::YieldOp::create(b, loc, values.lookup(yielded));
        });
    return loop.getResult(0);
  }

  /// `partial` combined over each group of `lanes` consecutive lanes by
  /// butterfly shuffles (every lane of the warp takes part: a full mask).
  Value combineOverLanes(Operation *combiner, Value partial, int64_t lanes) {
    for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
      auto other = gpu::ShuffleOp::create(
          rewriter, partial.getLoc(), partial, int32_t(offset),
          int32_t(lcc::kCudaWarpSize), gpu::ShuffleMode::XOR);
      partial = combine(combiner, partial, other.getShuffleResult());
    }
    return partial;
  }

  /// `combiner` folds `partial` into the output element of `op` for the
  /// parallel loops at `row`.
  void accumulateInto(linalg::LinalgOp op, Operation *combiner, ValueRange row,
                      Value partial) {
    Location loc = op.getLoc();
    OpOperand *init = op.getDpsInitOperand(0);
    SmallVector<Value> at(row.begin(), row.end());
    at.resize(op.getNumLoops(), index(loc, 0));
    SmallVector<Value> element = *affine::expandAffineMap(
        rewriter, loc, op.getMatchingIndexingMap(init), at);
    Value old = memref::LoadOp::create(rewriter, loc, init->get(), element);
    memref::StoreOp::create(rewriter, loc, combine(combiner, old, partial),
                            init->get(), element);
  }

  /// Replaces the reduction to one value `op` by its block-wide form:
  /// thread t folds elements t, t + blockSize, ...; each warp's lanes
  /// combine their parts by butterfly shuffles; lane 0 of each warp leaves
  /// its part in a buffer (shared memory once promoted) and thread 0 folds
  /// them into the output.
  void reduceOverBlock(linalg::LinalgOp op, Operation *combiner) {
    Location loc = op.getLoc();
    Value partial =
        foldPart(op, combiner, {}, threadId,
                 index(loc, product(op.getStaticLoopRanges())), threads);
    partial = combineOverLanes(combiner, partial, lcc::kCudaWarpSize);
    int64_t warps = blockSize / lcc::kCudaWarpSize;
    Value parts = memref::AllocOp::create(
        rewriter, loc, MemRefType::get({warps}, rewriter.getF32Type()));
    Value lane = arith::RemUIOp::create(rewriter, loc, threadId,
                                        index(loc, lcc::kCudaWarpSize));
    Value warp = arith::DivUIOp::create(rewriter, loc, threadId,
                                        index(loc, lcc::kCudaWarpSize));
    Value leads = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        lane, index(loc, 0));
    auto leader = scf::IfOp::create(rewriter, loc, leads, false);
    rewriter.setInsertionPoint(leader.thenBlock()->getTerminator());
    memref::StoreOp::create(rewriter, loc, partial, parts, warp);
    rewriter.setInsertionPointAfter(leader);
    gpu::BarrierOp::create(rewriter, loc);
    auto first = scf::IfOp::create(rewriter, loc, isFirstThread, false);
    rewriter.setInsertionPoint(first.thenBlock()->getTerminator());
    Value total =
        memref::LoadOp::create(rewriter, loc, parts, ValueRange{index(loc, 0)});
    for (int64_t w = 1; w < warps; ++w)
      total = combine(combiner, total,
                      memref::LoadOp::create(rewriter, loc, parts,
                                             ValueRange{index(loc, w)}));
    accumulateInto(op, combiner, {}, total);
    barrierAfter(first);
    rewriter.eraseOp(op);
  }

  /// Replaces the row reduction `op` (`rows` rows of its `shared` parallel
  /// loops, fewer than half the threads) by one where `lanes` consecutive
  /// lanes share each row: lane l of a row folds its elements l, l + lanes,
  /// ..., the row's lanes combine their parts by butterfly shuffles, and
  /// its first lane folds the result into the output. Threads beyond the
  /// rows fold nothing but take part in the shuffles.
  void reduceRowsOverLanes(linalg::LinalgOp op, Operation *combiner,
                           unsigned shared, int64_t rows, int64_t lanes) {
    Location loc = op.getLoc();
    Value row =
        arith::DivUIOp::create(rewriter, loc, threadId, index(loc, lanes));
    Value lane =
        arith::RemUIOp::create(rewriter, loc, threadId, index(loc, lanes));
    Value active = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, row, index(loc, rows));
    int64_t reduced = product(op.getStaticLoopRanges()) / rows;
    Value end = arith::SelectOp::create(rewriter, loc, active,
                                        index(loc, reduced), index(loc, 0));
    // Rows beyond the last (idle threads) read no element: any valid row.
    Value someRow =
        arith::MinUIOp::create(rewriter, loc, row, index(loc, rows - 1));
    SmallVector<Value> at = {someRow};
    if (shared > 1) {
      auto rowIndices = affine::AffineDelinearizeIndexOp::create(
          rewriter, loc, someRow,
          ArrayRef(op.getStaticLoopRanges()).take_front(shared));
      at.assign(rowIndices.getResults().begin(), rowIndices.getResults().end());
    }
    Value partial = foldPart(op, combiner, at, lane, end, index(loc, lanes));
    partial = combineOverLanes(combiner, partial, lanes);
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        lane, index(loc, 0));
    Value writes = arith::AndIOp::create(rewriter, loc, active, first);
    auto writer = scf::IfOp::create(rewriter, loc, writes, false);
    rewriter.setInsertionPoint(writer.thenBlock()->getTerminator());
    accumulateInto(op, combiner, at, partial);
    barrierAfter(writer);
    rewriter.eraseOp(op);
  }

  gpu::GPUFuncOp kernel;
  IRRewriter rewriter;
  int64_t blockSize;
  bool tensorCores, tf32;
  Value threadId, threads, isFirstThread;
};

struct DistributeToThreads
    : lcc::impl::DistributeToThreadsBase<DistributeToThreads> {
  using DistributeToThreadsBase::DistributeToThreadsBase;

  void runOnOperation() override {
    if (failed(lcc::checkOptionRanges(getOperation(),
                                      "lcc-distribute-to-threads",
                                      {{lcc::knobs::kCudaBlockSize,
                                        blockSize}})))
      return signalPassFailure();
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>()) {
      if (failed(Distributor(kernel, blockSize, tensorCores, tf32).run()))
        return signalPassFailure();
      int32_t size = static_cast<int32_t>(blockSize);
      kernel.setKnownBlockSizeAttr(
          DenseI32ArrayAttr::get(kernel.getContext(), {size, 1, 1}));
    }
  }
};

} // namespace
