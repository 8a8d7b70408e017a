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

#include "compiler/DispatchBuffers.h"
#include "compiler/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace lcc {
#define GEN_PASS_DEF_STAGEOPERANDTILES
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// The kernel argument `value` is a view of, or null.
BlockArgument rootArgument(Value value, gpu::GPUFuncOp kernel) {
  auto arg = dyn_cast<BlockArgument>(lcc::viewedBuffer(value));
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

/// The staged buffer's shape for an input of `shape` that `op` reads
/// through `input`: padded so that the threads of a warp reading it hit
/// different shared-memory banks. A tile of pairs ([rows][pairs][2], each
/// pair one 32-bit bank word, as mma.sync reads its fragments: 8 rows g by
/// 4 pairs t a load) gets a row of 4 more pairs where its middle index is
/// reduced over (A: word 36 g + t, 32 banks), 8 more where it is not (B,
/// [k pairs][columns][2]: word 72 t + g); any other tile one more element
/// a row, so the threads reading a column spread over the banks.
SmallVector<int64_t> paddedShape(linalg::LinalgOp op, OpOperand *input,
                                 ArrayRef<int64_t> shape) {
  SmallVector<int64_t> padded(shape);
  if (padded.size() < 2)
    return padded;
  AffineMap map = op.getMatchingIndexingMap(input);
  auto middle = dyn_cast<AffineDimExpr>(map.getResult(map.getNumResults() - 2));
  if (padded.back() == 2 && padded.size() >= 3 && middle) {
    bool reduced = op.getIteratorTypesArray()[middle.getPosition()] ==
                   utils::IteratorType::reduction;
    int64_t words = padded[padded.size() - 2];
    int64_t multiple = reduced ? 8 : 16, residue = reduced ? 4 : 8;
    int64_t extra = ((residue - words) % multiple + multiple) % multiple;
    padded[padded.size() - 2] += extra;
    return padded;
  }
  padded.back() += 1;
  return padded;
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
        // it, not once per use.
        rewriter.setInsertionPointAfterValue(value);
        Location loc = op.getLoc();
        SmallVector<int64_t> padded = paddedShape(op, input, type.getShape());
        Value buffer = memref::AllocOp::create(
            rewriter, loc, MemRefType::get(padded, type.getElementType()));
        tile = buffer;
        if (padded != type.getShape()) {
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
