//===- StageOperandTiles.cpp - contraction inputs into block buffers ------===//
//
// A contraction reads each input element many times (q·k reads a key row
// once per query). Read from global memory by threads that each own one
// output, those reads are strided and repeated; copied once into a buffer
// of the block (shared memory after lcc-promote-workgroup-buffers), with
// neighbouring threads copying neighbouring elements, they are coalesced
// once and then served from shared memory.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace lcc {
#define GEN_PASS_DEF_STAGEOPERANDTILES
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// The kernel argument `value` is a view of, or null.
BlockArgument rootArgument(Value value, gpu::GPUFuncOp kernel) {
  while (Operation *def = value.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return nullptr;
    value = view.getViewSource();
  }
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != &kernel.getBody().front())
    return nullptr;
  return arg;
}

/// The kernel arguments some op of `kernel` may write.
llvm::SmallPtrSet<Value, 4> writtenArguments(gpu::GPUFuncOp kernel) {
  llvm::SmallPtrSet<Value, 4> written;
  kernel.walk([&](Operation *op) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      // Unknown effects: any argument it touches may be written.
      for (Value operand : op->getOperands())
        if (BlockArgument arg = rootArgument(operand, kernel))
          written.insert(arg);
      return;
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      if (!isa<MemoryEffects::Write>(effect.getEffect()))
        continue;
      if (Value target = effect.getValue()) {
        if (BlockArgument arg = rootArgument(target, kernel))
          written.insert(arg);
        continue;
      }
      for (Value operand : op->getOperands())
        if (BlockArgument arg = rootArgument(operand, kernel))
          written.insert(arg);
    }
  });
  return written;
}

void stage(gpu::GPUFuncOp kernel, int64_t maxBytes) {
  llvm::SmallPtrSet<Value, 4> written = writtenArguments(kernel);
  DenseMap<Value, Value> staged;
  IRRewriter rewriter(kernel.getContext());
  kernel.walk([&](linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() == 0)
      return;
    for (OpOperand *input : op.getDpsInputOperands()) {
      Value value = input->get();
      auto type = dyn_cast<MemRefType>(value.getType());
      BlockArgument root = rootArgument(value, kernel);
      if (!type || !type.hasStaticShape() || type.getRank() == 0 || !root ||
          written.contains(root) || !type.getElementType().isIntOrFloat())
        continue;
      int64_t bytes = type.getNumElements() *
                      llvm::divideCeil(type.getElementTypeBitWidth(), 8);
      if (bytes > maxBytes)
        continue;
      Value &tile = staged[value];
      if (!tile) {
        // Copied where the view is made: once per loop iteration that makes
        // it, not once per use. Rows are padded by one element so that the
        // threads reading one column hit different shared-memory banks.
        rewriter.setInsertionPointAfterValue(value);
        Location loc = op.getLoc();
        SmallVector<int64_t> padded(type.getShape());
        if (padded.size() >= 2)
          padded.back() += 1;
        Value buffer = memref::AllocOp::create(
            rewriter, loc, MemRefType::get(padded, type.getElementType()));
        tile = buffer;
        if (padded.size() >= 2) {
          SmallVector<OpFoldResult> offsets(type.getRank(),
                                            rewriter.getIndexAttr(0));
          SmallVector<OpFoldResult> sizes,
              strides(type.getRank(), rewriter.getIndexAttr(1));
          for (int64_t size : type.getShape())
            sizes.push_back(rewriter.getIndexAttr(size));
          tile = memref::SubViewOp::create(rewriter, loc, buffer, offsets,
                                           sizes, strides);
        }
        linalg::CopyOp::create(rewriter, loc, value, tile);
      }
      rewriter.modifyOpInPlace(op, [&] { input->set(tile); });
    }
  });
}

struct StageOperandTiles : lcc::impl::StageOperandTilesBase<StageOperandTiles> {
  using StageOperandTilesBase::StageOperandTilesBase;

  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>())
      stage(kernel, maxBytes);
  }
};

} // namespace
