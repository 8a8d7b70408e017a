//===- PromoteWorkgroupBuffers.cpp - kernel allocations to shared memory --===//
//
// Every thread of a GPU block runs the kernel body, so a buffer the body
// allocates must be one buffer of the block, not one per thread: it lives in
// the block's dynamic shared memory. Buffers carried from one loop iteration
// to the next alternate between two slots.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace lcc {
#define GEN_PASS_DEF_PROMOTEWORKGROUPBUFFERS
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

constexpr int64_t kSlotAlignment = 16;

/// Whether `value` leaves the current iteration of `loop` through its
/// yield, directly, through views of it, or through an scf.if result.
bool isCarriedBy(Value value, scf::ForOp loop) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto yield = dyn_cast<scf::YieldOp>(user)) {
      Operation *parent = yield->getParentOp();
      if (parent == loop.getOperation())
        return true;
      if (isa<scf::IfOp>(parent) &&
          isCarriedBy(parent->getResult(use.getOperandNumber()), loop))
        return true;
      continue;
    }
    if (isa<ViewLikeOpInterface>(user) && user->getNumResults() == 1 &&
        isCarriedBy(user->getResult(0), loop))
      return true;
  }
  return false;
}

/// The loop results through which `value` (carried by `loop`) leaves it.
SmallVector<Value> loopResultsOf(Value value, scf::ForOp loop) {
  SmallVector<Value> results;
  Operation *yield = loop.getBody()->getTerminator();
  for (OpOperand &operand : yield->getOpOperands())
    if (operand.get() == value)
      results.push_back(loop.getResult(operand.getOperandNumber()));
  return results;
}

struct Slot {
  memref::AllocOp alloc;
  scf::ForOp alternateIn; // null: a single slot
  int64_t bytes;
  bool inShared = true;
  int64_t offsets[2] = {0, 0};
};

LogicalResult promote(gpu::GPUFuncOp kernel, int64_t maxBytes) {
  SmallVector<Slot> slots;
  WalkResult walk = kernel.walk([&](Operation *op) {
    if (isa<memref::AllocaOp>(op))
      return op->emitOpError("is not supported in a GPU kernel (a buffer per "
                             "thread)"),
             WalkResult::interrupt();
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc)
      return WalkResult::advance();
    MemRefType type = alloc.getType();
    if (!type.getLayout().isIdentity() || !type.getElementType().isIntOrFloat())
      return alloc.emitOpError("in kernel '")
                 << kernel.getName()
                 << "' needs a row-major buffer of numbers to live in shared "
                    "memory, got "
                 << type,
             WalkResult::interrupt();
    int64_t elements = 1;
    unsigned dynamicIndex = 0;
    for (int64_t size : type.getShape()) {
      if (!ShapedType::isDynamic(size)) {
        elements *= size;
        continue;
      }
      FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
          presburger::BoundType::UB, alloc.getDynamicSizes()[dynamicIndex++],
          /*stopCondition=*/nullptr,
          /*closedUB=*/true);
      if (failed(bound))
        return alloc.emitOpError("in kernel '")
                   << kernel.getName()
                   << "' has a size without a constant upper bound, so no "
                      "shared-memory slot can hold it",
               WalkResult::interrupt();
      elements *= *bound;
    }
    int64_t bytes =
        elements * llvm::divideCeil(type.getElementTypeBitWidth(), 8);
    Slot slot{alloc, nullptr,
              static_cast<int64_t>(llvm::alignTo(bytes, kSlotAlignment))};
    if (auto loop = alloc->getParentOfType<scf::ForOp>();
        loop && isCarriedBy(alloc.getResult(), loop)) {
      for (Value result : loopResultsOf(alloc.getResult(), loop))
        if (auto outer = loop->getParentOfType<scf::ForOp>();
            outer && isCarriedBy(result, outer))
          return alloc.emitOpError("in kernel '")
                     << kernel.getName()
                     << "' is carried through two nested loops, which "
                        "shared-memory slots do not support yet",
                 WalkResult::interrupt();
      slot.alternateIn = loop;
    }
    slots.push_back(slot);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  // Slots go to shared memory while it has room, the rest to the block's
  // part of a global scratch array.
  int64_t sharedBytes = 0, scratchBytes = 0;
  for (Slot &slot : slots) {
    int64_t copies = slot.alternateIn ? 2 : 1;
    slot.inShared = sharedBytes + copies * slot.bytes <= maxBytes;
    int64_t &end = slot.inShared ? sharedBytes : scratchBytes;
    for (int64_t copy = 0; copy < copies; ++copy) {
      slot.offsets[copy] = end;
      end += slot.bytes;
    }
  }
  Builder attrs(kernel.getContext());
  kernel->setAttr("lcc.workgroup_memory_bytes",
                  attrs.getI64IntegerAttr(sharedBytes));
  if (slots.empty())
    return success();

  MLIRContext *ctx = kernel.getContext();
  auto workgroup = gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
  OpBuilder b(ctx);
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  Location loc = kernel.getLoc();
  Value shared = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(), workgroup));
  Value scratch, scratchBase;
  if (scratchBytes > 0) {
    auto counts =
        kernel->getAttrOfType<DenseI64ArrayAttr>("lcc.workgroup_count");
    if (!counts || counts.size() != 3)
      return kernel.emitOpError("needs ")
                 << sharedBytes + scratchBytes
                 << " bytes for its tile buffers, more than the " << maxBytes
                 << " of shared memory, and has no lcc.workgroup_count to "
                    "size a global scratch by",
             failure();
    int64_t workgroups = counts[0] * counts[1] * counts[2];
    if (workgroups > (int64_t(1) << 40) / scratchBytes)
      return kernel.emitOpError("needs ")
                 << scratchBytes << " bytes of scratch per workgroup for "
                 << workgroups << " workgroups, which no GPU holds",
             failure();
    // One array per kernel, workgroup w owning bytes [w * n, (w + 1) * n).
    auto scratchType =
        MemRefType::get({workgroups * scratchBytes}, b.getI8Type());
    OpBuilder moduleBuilder(kernel);
    auto global = memref::GlobalOp::create(
        moduleBuilder, loc, (kernel.getName() + "_scratch").str(),
        moduleBuilder.getStringAttr("private"), scratchType,
        moduleBuilder.getUnitAttr(), /*constant=*/false,
        moduleBuilder.getI64IntegerAttr(kSlotAlignment));
    scratch =
        memref::GetGlobalOp::create(b, loc, scratchType, global.getName());
    Value x = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    Value y = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
    Value z = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
    auto index = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    Value linear = arith::AddIOp::create(
        b, loc, x,
        arith::MulIOp::create(
            b, loc, index(counts[0]),
            arith::AddIOp::create(
                b, loc, y,
                arith::MulIOp::create(b, loc, z, index(counts[1])))));
    scratchBase = arith::MulIOp::create(b, loc, linear, index(scratchBytes));
  }
  Operation *viewsAfter =
      scratchBase ? scratchBase.getDefiningOp() : shared.getDefiningOp();
  auto slotView = [&](Slot &slot, int64_t offset) -> Value {
    MemRefType type = slot.alloc.getType();
    Value byteOffset = arith::ConstantIndexOp::create(b, loc, offset);
    if (!slot.inShared) {
      byteOffset = arith::AddIOp::create(b, loc, scratchBase, byteOffset);
      return memref::ViewOp::create(b, loc, type, scratch, byteOffset,
                                    slot.alloc.getDynamicSizes());
    }
    auto sharedType = MemRefType::get(type.getShape(), type.getElementType(),
                                      MemRefLayoutAttrInterface(), workgroup);
    Value view = memref::ViewOp::create(b, loc, sharedType, shared, byteOffset,
                                        slot.alloc.getDynamicSizes());
    return memref::MemorySpaceCastOp::create(b, loc, type, view);
  };
  for (Slot &slot : slots) {
    // Static views are made once, at the kernel's entry, where they dominate
    // every user; a view of dynamic sizes where the sizes are known.
    if (slot.alloc.getDynamicSizes().empty())
      b.setInsertionPointAfter(viewsAfter);
    else
      b.setInsertionPoint(slot.alloc);
    Value even = slotView(slot, slot.offsets[0]);
    Value replacement = even;
    if (slot.alternateIn) {
      Value odd = slotView(slot, slot.offsets[1]);
      b.setInsertionPoint(slot.alloc);
      scf::ForOp loop = slot.alternateIn;
      Location at = slot.alloc.getLoc();
      Value step = arith::DivUIOp::create(
          b, at,
          arith::SubIOp::create(b, at, loop.getInductionVar(),
                                loop.getLowerBound()),
          loop.getStep());
      Value isOdd = arith::TruncIOp::create(
          b, at, b.getI1Type(),
          arith::IndexCastUIOp::create(b, at, b.getI64Type(), step));
      replacement = arith::SelectOp::create(b, at, isOdd, odd, even);
    }
    slot.alloc.getResult().replaceAllUsesWith(replacement);
    slot.alloc.erase();
  }
  // No buffer of the kernel is freed any more: its slots live as long as
  // the block.
  kernel.walk([](memref::DeallocOp dealloc) { dealloc.erase(); });
  return success();
}

struct PromoteWorkgroupBuffers
    : lcc::impl::PromoteWorkgroupBuffersBase<PromoteWorkgroupBuffers> {
  using PromoteWorkgroupBuffersBase::PromoteWorkgroupBuffersBase;

  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>())
      if (failed(promote(kernel, maxBytes)))
        return signalPassFailure();
  }
};

} // namespace
