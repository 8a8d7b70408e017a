//===- ScheduleTransfers.cpp - compute between a transfer and its wait ----===//
//
// The runtime starts a transfer among ranks (an all-to-all, a ring shift, an
// all-reduce) and runs the commands after it until one reads its bytes. A
// transfer written next to its reader, as Ulysses' all-to-all of the
// queries and keys is, overlaps nothing: the reader waits at once. This
// pass moves the work that needs neither the transfer nor any other one
// from after that first reader to before it, up to and including the next
// transfer, which so starts before the wait too.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace lcc {
#define GEN_PASS_DEF_SCHEDULETRANSFERS
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

bool isTransfer(Operation *op) { return op->hasTrait<lcc::attn::Transfer>(); }

/// Whether an operand of `op` is a result of an op in `ops`.
bool readsAny(Operation *op, const llvm::SmallPtrSetImpl<Operation *> &ops) {
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    Operation *def = operand.getDefiningOp();
    return def && ops.contains(def);
  });
}

/// Whether `op` reads the bytes of a transfer, so would wait for it.
bool readsTransfer(Operation *op) {
  return llvm::any_of(op->getOperands(), [](Value operand) {
    Operation *def = operand.getDefiningOp();
    return def && isTransfer(def);
  });
}

/// Host ops that may run earlier than written: dispatch calls (tensors in,
/// tensors out), reshapes, slices, tensor.empty, and transfers themselves.
bool mayRunEarlier(Operation *op) {
  return op->getNumRegions() == 0 &&
         (isa<func::CallOp>(op) || isMemoryEffectFree(op));
}

/// Moves the work after `transfer`'s first reader that may run before it
/// there: up to and including the next transfer, every op that reads
/// neither this transfer's bytes nor another's (a wait is never moved
/// earlier) nor what stays.
void scheduleAround(Operation *transfer) {
  llvm::SmallPtrSet<Operation *, 32> stays = {transfer};
  Operation *firstReader = nullptr;
  for (Operation *op = transfer->getNextNode(); op; op = op->getNextNode()) {
    if (op->hasTrait<OpTrait::IsTerminator>())
      return;
    if (readsAny(op, stays)) {
      firstReader = op;
      break;
    }
  }
  if (!firstReader)
    return;
  SmallVector<Operation *> earlier;
  for (Operation *op = firstReader; op; op = op->getNextNode()) {
    if (op->hasTrait<OpTrait::IsTerminator>())
      break;
    bool moves = op != firstReader && !readsAny(op, stays) &&
                 !readsTransfer(op) && mayRunEarlier(op);
    if (moves)
      earlier.push_back(op);
    else
      stays.insert(op);
    if (isTransfer(op) && op != transfer)
      break;
  }
  for (Operation *op : earlier)
    op->moveBefore(firstReader);
}

struct ScheduleTransfersPass
    : lcc::impl::ScheduleTransfersBase<ScheduleTransfersPass> {
  void runOnOperation() override {
    for (auto host : getOperation().getOps<func::FuncOp>()) {
      if (host.isExternal() || host->hasAttr("lcc.dispatch"))
        continue;
      SmallVector<Operation *> transfers;
      host.walk([&](Operation *op) {
        if (isTransfer(op))
          transfers.push_back(op);
      });
      for (Operation *transfer : transfers)
        scheduleAround(transfer);
    }
  }
};

} // namespace
