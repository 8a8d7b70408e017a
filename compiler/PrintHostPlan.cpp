//===- PrintHostPlan.cpp - the host planner's output, for tests -----------===//
//
// The host plan (which buffer each tensor gets, where the arena places it,
// which bytes each command reads and writes) is what makes a compiled model
// right or silently wrong, so it gets lit tests of its own, as triton-opt's
// test passes give its analyses.
//
//===----------------------------------------------------------------------===//

#include "compiler/HostProgram.h"
#include "compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace lcc {
#define GEN_PASS_DEF_PRINTHOSTPLAN
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;

namespace {

const char *kindName(BufferKind kind) {
  switch (kind) {
  case BufferKind::Input:
    return "input";
  case BufferKind::Output:
    return "output";
  case BufferKind::Parameter:
    return "parameter";
  case BufferKind::Transient:
    return "transient";
  }
  return "?";
}

void printRange(llvm::raw_ostream &os, const BufferRange &range) {
  os << "b" << range.buffer << "[" << range.offset << ", "
     << range.offset + range.length << ")";
}

/// The name of what a buffer that is not transient holds: an input's,
/// result's or parameter's ('layers.0.attn.wq').
std::string bufferName(const PlannedBuffer &buffer, const HostProgram &program,
                       const ParameterTable &parameters) {
  ArrayRef<TensorSignature> signatures =
      buffer.kind == BufferKind::Input    ? ArrayRef(program.inputs)
      : buffer.kind == BufferKind::Output ? ArrayRef(program.outputs)
                                          : ArrayRef<TensorSignature>();
  if (buffer.kind == BufferKind::Parameter &&
      buffer.index < parameters.parameters.size())
    return parameters.parameters[buffer.index].signature.name;
  if (buffer.index < signatures.size())
    return signatures[buffer.index].name;
  return "";
}

void printPlan(llvm::raw_ostream &os, const HostProgram &program,
               const ParameterTable &parameters) {
  os << "host plan of @" << program.name << ": " << program.buffers.size()
     << " buffers, " << program.commands.size() << " commands, arena "
     << program.arenaSize << " bytes\n";
  for (auto [i, buffer] : llvm::enumerate(program.buffers)) {
    os << "  buffer " << i << ": " << kindName(buffer.kind);
    if (buffer.kind != BufferKind::Transient) {
      os << " " << buffer.index;
      std::string name = bufferName(buffer, program, parameters);
      if (!name.empty())
        os << " '" << name << "'";
    }
    os << ", " << buffer.size << " bytes";
    if (buffer.kind == BufferKind::Transient)
      os << " at arena offset " << buffer.arenaOffset << ", live "
         << buffer.firstCommand << ".." << buffer.lastCommand;
    os << "\n";
  }
  for (auto [i, command] : llvm::enumerate(program.commands)) {
    os << "  command " << i << ": ";
    if (command.kind == PlannedCommand::Kind::Copy) {
      os << "copy " << command.name << " ";
      printRange(os, command.source);
      os << " to ";
      printRange(os, command.target);
      os << "\n";
      continue;
    }
    if (command.kind == PlannedCommand::Kind::AllReduce) {
      os << "all_reduce "
         << (command.reduction == PlannedCommand::Reduction::Mean ? "mean"
                                                                  : "sum")
         << " " << command.name;
      for (auto [b, binding] : llvm::enumerate(command.bindings)) {
        os << (b == 0 ? " in place " : ", ");
        printRange(os, binding);
      }
      os << "\n";
      continue;
    }
    if (command.kind == PlannedCommand::Kind::Exchange) {
      switch (command.exchange) {
      case PlannedCommand::Exchange::AllToAll:
        os << "all_to_all " << command.name << " of " << command.blocks
           << " blocks";
        break;
      case PlannedCommand::Exchange::Ring:
        os << "ring_shift " << command.name << " by " << command.ringOffset;
        break;
      case PlannedCommand::Exchange::RankSlice:
        os << "rank_slice " << command.name << " of " << command.blocks
           << " blocks";
        break;
      case PlannedCommand::Exchange::RankPad:
        os << "rank_pad " << command.name << " to " << command.blocks
           << " blocks";
        break;
      }
      os << " from ";
      printRange(os, command.bindings[0]);
      os << " to ";
      printRange(os, command.bindings[1]);
      os << "\n";
      continue;
    }
    os << "dispatch " << command.name << " [" << command.workgroupCount[0]
       << ", " << command.workgroupCount[1] << ", " << command.workgroupCount[2]
       << "]";
    size_t inputs = command.bindings.size() - command.outputCount;
    for (auto [b, binding] : llvm::enumerate(command.bindings)) {
      os << (b == 0 && inputs > 0 ? " reads "
             : b == inputs        ? " writes "
                                  : ", ");
      printRange(os, binding);
    }
    os << "\n";
  }
}

struct PrintHostPlanPass : lcc::impl::PrintHostPlanBase<PrintHostPlanPass> {
  void runOnOperation() override {
    ParameterTable parameters;
    bool planned = false;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func->hasAttr("lcc.dispatch") || func.isExternal())
        continue;
      FailureOr<HostProgram> program = planHostProgram(func, parameters);
      if (failed(program))
        return signalPassFailure();
      printPlan(llvm::outs(), *program, parameters);
      planned = true;
    }
    // The kernel stages hold dispatches alone: no function calls them.
    if (!planned) {
      getOperation().emitError(
          "no host function to plan: --lcc-print-host-plan reads the "
          "dispatches stage (the NN-dispatches.mlir of lcc --dump-ir, or "
          "lcc-opt --lcc-lower-to-dispatches), whose functions call their "
          "dispatches");
      signalPassFailure();
    }
  }
};

} // namespace
