//===- DispatchBuffers.cpp - dispatches on tensors to buffers -------------===//

#include "compiler/DispatchBuffers.h"

#include "compiler/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/Passes.h"

#include <atomic>

namespace lcc {
#define GEN_PASS_DEF_EXTRACTDISPATCHES
#define GEN_PASS_DEF_USEBUFFERSIGNATURES
#define GEN_PASS_DEF_COPIESTOLINALG
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;

namespace {

LogicalResult useBufferSignature(func::FuncOp dispatch) {
  Block &entry = dispatch.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  unsigned numOutputs = ret.getNumOperands();
  unsigned numArgs = entry.getNumArguments();
  if (numOutputs > numArgs)
    return dispatch.emitOpError("expected one output argument per result");
  OpBuilder b(dispatch.getContext());
  b.setInsertionPointToStart(&entry);
  for (BlockArgument arg : entry.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape())
      return dispatch.emitOpError("expected statically shaped tensor "
                                  "arguments, got ")
             << arg.getType();
    arg.setType(MemRefType::get(type.getShape(), type.getElementType()));
    bool isOutput = arg.getArgNumber() >= numArgs - numOutputs;
    auto tensor = bufferization::ToTensorOp::create(
        b, arg.getLoc(), type, arg, /*restrict=*/true, /*writable=*/isOutput);
    arg.replaceAllUsesExcept(tensor, tensor);
  }
  b.setInsertionPoint(ret);
  for (auto [i, result] : llvm::enumerate(ret.getOperands())) {
    BlockArgument output = entry.getArgument(numArgs - numOutputs + i);
    auto materialize = bufferization::MaterializeInDestinationOp::create(
        b, ret.getLoc(), result, output);
    materialize.setRestrict(true);
    materialize.setWritable(true);
  }
  func::ReturnOp::create(b, ret.getLoc());
  ret.erase();
  dispatch.setFunctionType(
      FunctionType::get(dispatch.getContext(), entry.getArgumentTypes(), {}));
  return success();
}

} // namespace

LogicalResult
lcc::kernelSignatures(ModuleOp kernels,
                      SmallVectorImpl<KernelSignature> &signatures) {
  for (auto dispatch : kernels.getOps<func::FuncOp>()) {
    if (!dispatch->hasAttr("lcc.dispatch"))
      continue;
    KernelSignature signature{
        dispatch.getName().str(), {}, dispatch.getNumResults()};
    for (Type type : dispatch.getArgumentTypes()) {
      auto shaped = dyn_cast<ShapedType>(type);
      if (!shaped || !shaped.hasStaticShape())
        return dispatch.emitOpError("expected statically shaped arguments, "
                                    "got ")
               << type;
      signature.bindingShapes.emplace_back(shaped.getShape());
    }
    signatures.push_back(std::move(signature));
  }
  return success();
}

namespace {

struct ExtractDispatchesPass
    : lcc::impl::ExtractDispatchesBase<ExtractDispatchesPass> {
  void runOnOperation() override {
    for (auto func :
         llvm::make_early_inc_range(getOperation().getOps<func::FuncOp>()))
      if (!func->hasAttr("lcc.dispatch"))
        func.erase();
  }
};

struct UseBufferSignaturesPass
    : lcc::impl::UseBufferSignaturesBase<UseBufferSignaturesPass> {
  void runOnOperation() override {
    for (auto dispatch : getOperation().getOps<func::FuncOp>()) {
      if (!dispatch->hasAttr("lcc.dispatch")) {
        dispatch.emitOpError("is not a dispatch function");
        return signalPassFailure();
      }
      if (failed(useBufferSignature(dispatch)))
        return signalPassFailure();
    }
  }
};

struct CopiesToLinalgPass : lcc::impl::CopiesToLinalgBase<CopiesToLinalgPass> {
  void runOnOperation() override { copiesToLinalg(getOperation()); }
};

} // namespace

void lcc::addDispatchBufferizationPasses(OpPassManager &pm) {
  pm.addPass(createExtractDispatches());
  pm.addPass(createUseBufferSignatures());
  pm.addPass(createCanonicalizerPass());
  // A tile computed into a fresh tensor and inserted into the output is
  // computed in the output's buffer instead of a block buffer and a copy.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createFoldFillCopies());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
}

Value lcc::viewedBuffer(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (auto cast = dyn_cast<memref::MemorySpaceCastOp>(def))
      memref = cast.getSource();
    else if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      memref = view.getViewSource();
    else
      break;
  }
  return memref;
}

void lcc::copiesToLinalg(Operation *root) {
  root->walk([](memref::CopyOp copy) {
    OpBuilder b(copy);
    linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    copy.erase();
  });
}

namespace {
std::atomic<bool> verifyEachPass{false};
} // namespace

void lcc::setVerifyEachPass(bool verify) { verifyEachPass = verify; }

LogicalResult
lcc::runDumpedPipeline(Operation *op, StringRef stage, const StageDumper &dump,
                       llvm::function_ref<void(PassManager &)> build) {
  PassManager pm(op->getContext(), op->getName().getStringRef());
  build(pm);
  pm.enableVerifier(verifyEachPass);
  // MLIR's own debugging flags, where the tool registered them (lcc:
  // --mlir-timing, --mlir-print-ir-after-all, ...).
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  if (failed(pm.run(op)))
    return failure();
  // A pass that breaks the IR is lcc's bug: said here, not in a later
  // stage's crash.
  if (!verifyEachPass) {
    // The verifier's first complaint, folded into the one error line.
    std::optional<Location> where;
    std::string why;
    LogicalResult verified = success();
    {
      ScopedDiagnosticHandler capture(op->getContext(), [&](Diagnostic &d) {
        if (!where) {
          where = d.getLocation();
          why = d.str();
        }
        return success();
      });
      verified = verify(op);
    }
    if (failed(verified))
      return emitError(where.value_or(op->getLoc()))
             << "internal compiler error: the IR after the '" << stage
             << "' stage does not verify: " << why
             << " (--verify-each stops at the pass that broke it, "
                "--mlir-print-ir-after-failure shows its IR)";
  }
  if (dump)
    dump(stage, printedWithLocations(op));
  return success();
}

std::string lcc::printedWithLocations(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // Locations as aliases at the end (#loc3 = loc("model.mlir":12:8)): each
  // op of a dump leads back to the model op it came from.
  op->print(os, OpPrintingFlags().enableDebugInfo(/*enable=*/true,
                                                  /*prettyForm=*/false));
  return text;
}
