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

void printPlan(llvm::raw_ostream &os, const HostProgram &program) {
  os << "host plan of @" << program.name << ": " << program.buffers.size()
     << " buffers, " << program.commands.size() << " commands, arena "
     << program.arenaSize << " bytes\n";
  for (auto [i, buffer] : llvm::enumerate(program.buffers)) {
    os << "  buffer " << i << ": " << kindName(buffer.kind);
    if (buffer.kind != BufferKind::Transient)
      os << " " << buffer.index;
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
    os << "dispatch " << command.name << " [" << command.workgroupCount[0]
       << ", " << command.workgroupCount[1] << ", "
       << command.workgroupCount[2] << "]";
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
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func->hasAttr("lcc.dispatch") || func.isExternal())
        continue;
      FailureOr<HostProgram> program = planHostProgram(func, parameters);
      if (failed(program))
        return signalPassFailure();
      printPlan(llvm::outs(), *program);
    }
  }
};

} // namespace
