//===- DispatchBuffers.cpp - dispatches on tensors to buffers -------------===//

#include "compiler/DispatchBuffers.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

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
lcc::useBufferSignatures(ModuleOp kernels,
                         SmallVectorImpl<KernelSignature> &signatures) {
  // Ops are created below outside any pass: their dialects must be loaded.
  kernels.getContext()
      ->loadDialect<bufferization::BufferizationDialect, memref::MemRefDialect,
                    func::FuncDialect>();
  for (auto dispatch : kernels.getOps<func::FuncOp>()) {
    if (!dispatch->hasAttr("lcc.dispatch"))
      return dispatch.emitOpError("is not a dispatch function");
    if (failed(useBufferSignature(dispatch)))
      return failure();
    KernelSignature signature{dispatch.getName().str(), {}};
    for (Type type : dispatch.getArgumentTypes())
      signature.bindingShapes.emplace_back(cast<MemRefType>(type).getShape());
    signatures.push_back(std::move(signature));
  }
  return success();
}

void lcc::addDispatchBufferizationPasses(PassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
}

void lcc::copiesToLinalg(Operation *root) {
  root->walk([](memref::CopyOp copy) {
    OpBuilder b(copy);
    linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    copy.erase();
  });
}

LogicalResult
lcc::runDumpedPipeline(Operation *op, StringRef stage, const StageDumper &dump,
                       llvm::function_ref<void(PassManager &)> build) {
  PassManager pm(op->getContext(), op->getName().getStringRef());
  build(pm);
  // MLIR's own debugging flags, where the tool registered them (lcc:
  // --mlir-timing, --mlir-print-ir-after-all, ...).
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  if (failed(pm.run(op)))
    return failure();
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
