//===- AttentionMapProbe.cpp - keys of LSH and routed attention -----------===//

#include "compiler/AttentionMapProbe.h"

#include "compiler/AttentionMap.h"
#include "dialects/Attn/IR/AttnOps.h"
#include "passes/AttentionForms.h"
#include "passes/Training/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace lcc;

namespace {

/// The function whose inputs --input gives: the first public one with a
/// body, as lcc-run's default is the module's first function.
func::FuncOp modelFunctionOf(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal() && func.isPublic())
      return func;
  return {};
}

/// Makes `probe` return `values`, built right after a model op and before
/// `next`: what came after them is erased, and with it whatever only that
/// used (the op itself among them).
void returnProbeValues(func::FuncOp probe, Operation *next, ValueRange values) {
  Block &body = probe.getBody().front();
  Operation *terminator = body.getTerminator();
  bool nothingAfter = next == terminator;
  OpBuilder b(terminator);
  auto returned = func::ReturnOp::create(b, terminator->getLoc(), values);
  terminator->erase();
  SmallVector<Operation *> after;
  if (!nothingAfter)
    for (Operation *op = next; op != returned; op = op->getNextNode())
      after.push_back(op);
  // Last first: each is used only by ops after it.
  for (Operation *op : llvm::reverse(after))
    op->erase();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  SmallVector<Type> types(values.getTypes());
  probe.setType(
      FunctionType::get(probe.getContext(), probe.getArgumentTypes(), types));
  probe.removeResAttrsAttr();
}

} // namespace

FailureOr<AttentionMapProbes> lcc::buildAttentionMapProbes(ModuleOp attnStage) {
  func::FuncOp model = modelFunctionOf(attnStage);
  if (!model)
    return attnStage.emitError("--input: the model has no public function "
                               "to run"),
           failure();
  // What the forms' lowering steps build (attn-lower-to-linalg's
  // dependent dialects), loaded as that pass would load them.
  MLIRContext *context = attnStage.getContext();
  context->loadDialect<arith::ArithDialect, linalg::LinalgDialect,
                       math::MathDialect, scf::SCFDialect,
                       tensor::TensorDialect>();
  AttentionMapProbes probes;
  probes.modelFunction = model.getName().str();
  probes.module = ModuleOp::create(attnStage.getLoc());
  probes.module->getOperation()->setAttrs(attnStage->getAttrDictionary());
  // Each op once, however many copies the model's blocks hold of it.
  std::vector<std::pair<std::string, Operation *>> drawn;
  llvm::StringSet<> seen;
  model.walk([&](Operation *op) {
    if (lookupKeySelectionForm(op) && seen.insert(attentionMapKey(op)).second)
      drawn.push_back({attentionMapKey(op), op});
  });
  for (auto &[key, op] : drawn) {
    // The model with its blocks (residual, multi-head, reversible)
    // flattened, as the train step sees it, so that the op's operands are
    // values of the function.
    auto probe = cast<func::FuncOp>(model->clone());
    probe.setName(("attention_map_probe_" + Twine(probes.probes.size())).str());
    probes.module->push_back(probe);
    training::flattenForDifferentiation(probe, /*keepReversible=*/false);
    Operation *copy = nullptr;
    for (Operation &candidate : probe.getBody().front())
      if (attentionMapKey(&candidate) == key) {
        copy = &candidate;
        break;
      }
    std::string whyNot = "it sits in a region the model's blocks do not "
                         "flatten";
    FailureOr<KeySelectionProbe> built = failure();
    Operation *next = copy ? copy->getNextNode() : nullptr;
    if (copy) {
      OpBuilder b(copy);
      b.setInsertionPointAfter(copy);
      built =
          lookupKeySelectionForm(copy)->buildKeySelectionProbe(b, copy, whyNot);
    }
    if (failed(built)) {
      op->emitRemark() << "no attention map for the input: " << whyNot;
      probe.erase();
      continue;
    }
    returnProbeValues(probe, next, built->values);
    probes.probes.push_back({key, probe.getName().str(), built->read});
  }
  return probes;
}
