//===- InlineModelCalls.cpp - lcc-inline-model-calls ----------------------===//
//
// A model's functions may call each other (`loss` calling `forward`); every
// stage after this one sees one body per function, since a parameter
// becomes an argument of each function that uses it and a call would no
// longer match its callee.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace lcc {
#define GEN_PASS_DEF_INLINEMODELCALLS
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

struct InlineModelCallsPass
    : lcc::impl::InlineModelCallsBase<InlineModelCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!module.walk([](func::CallOp) { return WalkResult::interrupt(); })
             .wasInterrupted())
      return;
    OpPassManager inliner(ModuleOp::getOperationName());
    // No clean-up pipeline: the callers' other ops stay as written.
    inliner.addPass(createInlinerPass({}, [](OpPassManager &) {}));
    if (failed(runPipeline(inliner, module)))
      return signalPassFailure();
    // A call the inliner could not resolve is a recursive one.
    WalkResult left = module.walk([](func::CallOp call) {
      call.emitOpError() << "calls '@" << call.getCallee()
                         << "' recursively; lcc inlines the calls between a "
                            "model's functions, so no call chain may return "
                            "to its caller";
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
