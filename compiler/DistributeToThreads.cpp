//===- DistributeToThreads.cpp - a workgroup's work over its threads ------===//
//
// After bufferization a kernel body is a sequence of linalg ops on buffers,
// inside uniform control flow. Each linalg op becomes loops whose parallel
// part is shared by the block's threads; other writes run on one thread;
// barriers order them as the sequential body did.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
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

bool containsLinalg(Operation *op) {
  return op->walk([](linalg::LinalgOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

class Distributor {
public:
  Distributor(gpu::GPUFuncOp kernel, int64_t blockSize)
      : kernel(kernel), rewriter(kernel.getContext()), blockSize(blockSize) {}

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

  LogicalResult distributeLinalg(linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics())
      return op.emitOpError("is not bufferized");
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

  gpu::GPUFuncOp kernel;
  IRRewriter rewriter;
  int64_t blockSize;
  Value threadId, threads, isFirstThread;
};

struct DistributeToThreads
    : lcc::impl::DistributeToThreadsBase<DistributeToThreads> {
  using DistributeToThreadsBase::DistributeToThreadsBase;

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024) {
      getOperation().emitError("block-size must be in [1, 1024], got ")
          << blockSize;
      return signalPassFailure();
    }
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>()) {
      if (failed(Distributor(kernel, blockSize).run()))
        return signalPassFailure();
      int32_t size = static_cast<int32_t>(blockSize);
      kernel.setKnownBlockSizeAttr(
          DenseI32ArrayAttr::get(kernel.getContext(), {size, 1, 1}));
    }
  }
};

} // namespace
