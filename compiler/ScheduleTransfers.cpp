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

#include "compiler/HostProgram.h"
#include "compiler/Passes.h"
#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

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
/// `dispatches`: the names of the module's dispatch functions.
bool mayRunEarlier(Operation *op, const llvm::StringSet<> &dispatches) {
  if (op->getNumRegions() != 0)
    return false;
  if (auto call = dyn_cast<func::CallOp>(op))
    return dispatches.contains(call.getCallee());
  return isMemoryEffectFree(op);
}

/// The most bytes the host's tensors hold at once, as the planner will
/// place them: a value holds its own bytes from its op to its last reader,
/// except what names another's bytes (a reshape, an insert into an
/// assembly, which extend that one's life instead) and a tensor.empty that
/// no assembly is built in (only a shape). An estimate, to compare two
/// orders of the same ops.
uint64_t peakLiveBytes(Block &host) {
  struct Holding {
    uint64_t bytes = 0;
    unsigned from = 0, to = 0;
  };
  // Called once per transfer on a deep model's whole host program: one map,
  // from each tensor to the holding of the bytes it names.
  std::vector<Holding> holdings;
  llvm::DenseMap<Value, unsigned> holdingOf;
  unsigned at = 0;
  for (Operation &op : host) {
    for (Value result : op.getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type)
        continue;
      Value source;
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
        source = op.getOperand(0);
      else if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
        source = insert.getDest();
      if (source)
        if (auto held = holdingOf.find(source); held != holdingOf.end()) {
          unsigned holding = held->second; // inserting may move `held`
          holdingOf[result] = holding;
          continue;
        }
      bool shapeOnly = isa<tensor::EmptyOp>(op) &&
                       llvm::none_of(result.getUsers(), [&](Operation *user) {
                         auto insert = dyn_cast<tensor::InsertSliceOp>(user);
                         return insert && insert.getDest() == result;
                       });
      holdingOf[result] = holdings.size();
      holdings.push_back({shapeOnly ? 0 : lcc::byteSize(type), at, at});
    }
    for (Value operand : op.getOperands())
      if (auto held = holdingOf.find(operand); held != holdingOf.end()) {
        Holding &holding = holdings[held->second];
        holding.to = std::max(holding.to, at);
      }
    ++at;
  }
  std::vector<int64_t> change(at + 1, 0);
  for (const Holding &holding : holdings) {
    change[holding.from] += int64_t(holding.bytes);
    change[holding.to + 1] -= int64_t(holding.bytes);
  }
  int64_t live = 0, peak = 0;
  for (int64_t delta : change)
    peak = std::max(peak, live += delta);
  return uint64_t(peak);
}

/// Moves the work after `transfer`'s first reader that may run before it
/// there: up to and including the next transfer, every op that reads
/// neither this transfer's bytes nor another's (a wait is never moved
/// earlier) nor what stays. Undone if it would raise the host's peak
/// (`peak`, kept up to date): transfers overlap only work that costs no
/// memory.
void scheduleAround(Operation *transfer, uint64_t &peak,
                    const llvm::StringSet<> &dispatches) {
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
  SmallVector<Operation *> window, earlier;
  for (Operation *op = firstReader; op; op = op->getNextNode()) {
    if (op->hasTrait<OpTrait::IsTerminator>())
      break;
    window.push_back(op);
    bool moves = op != firstReader && !readsAny(op, stays) &&
                 !readsTransfer(op) && mayRunEarlier(op, dispatches);
    if (moves)
      earlier.push_back(op);
    else
      stays.insert(op);
    if (isTransfer(op) && op != transfer)
      break;
  }
  if (earlier.empty())
    return;
  Operation *afterWindow = window.back()->getNextNode();
  for (Operation *op : earlier)
    op->moveBefore(firstReader);
  uint64_t scheduledPeak = peakLiveBytes(*transfer->getBlock());
  if (scheduledPeak <= peak) {
    peak = scheduledPeak;
    return;
  }
  for (Operation *op : window)
    op->moveBefore(afterWindow);
}

struct ScheduleTransfersPass
    : lcc::impl::ScheduleTransfersBase<ScheduleTransfersPass> {
  void runOnOperation() override {
    llvm::StringSet<> dispatches;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func->hasAttr("lcc.dispatch"))
        dispatches.insert(func.getSymName());
    for (auto host : getOperation().getOps<func::FuncOp>()) {
      if (host.isExternal() || host->hasAttr("lcc.dispatch"))
        continue;
      SmallVector<Operation *> transfers;
      host.walk([&](Operation *op) {
        if (isTransfer(op))
          transfers.push_back(op);
      });
      if (transfers.empty())
        continue;
      uint64_t peak = peakLiveBytes(host.getBody().front());
      for (Operation *transfer : transfers)
        scheduleAround(transfer, peak, dispatches);
    }
  }
};

} // namespace
