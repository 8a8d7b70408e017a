//===- GenerateDecodeStep.cpp - prefill and a cached decode step ----------===//
//
// Generation without recomputing the sequence (docs/generation.md): a
// causal model function, its blocks flattened as for the train step,
// becomes
//   1. prefill: the function itself, each attention also writing its keys
//      and values to caches that are state of the module;
//   2. decode_step: the function at one position: every op that works
//      position by position runs on the new token alone, learned positions
//      are read at the step's position, and each attention is its form's
//      cached step (AttentionFormDefinition::buildDecodeStep), writing the
//      position's rows of its caches and attending over the rows up to it.
// The caches may hold more positions than the function runs (--max-cache)
// when nothing in it reads positions by number.
// The caches are `attn.param "decode.cache.N.<role>" {state}`
// (passes/DecodeStep.h; ModuleFormat.h reserves the prefix: the runtime
// keeps them out of checkpoints).
//
//===----------------------------------------------------------------------===//

#include "passes/AttentionForms.h"
#include "passes/LowerToLinalg/RegionArithmetic.h"
#include "passes/Passes.h"
#include "passes/Training/TrainStep.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

namespace lcc {
#define GEN_PASS_DEF_GENERATEDECODESTEP
#include "passes/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// The sequence axis of an activation: [B, L] and [B, L, X] on axis 1,
/// attention's [B, H, L, d] on axis 2.
std::optional<unsigned> sequenceAxis(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return std::nullopt;
  if (tensor.getRank() == 2 || tensor.getRank() == 3)
    return 1;
  if (tensor.getRank() == 4)
    return 2;
  return std::nullopt;
}

/// `type` with `length` positions on its sequence axis.
Type withPositions(Type type, int64_t length) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[*sequenceAxis(type)] = length;
  return RankedTensorType::get(shape, tensor.getElementType());
}

/// Whether `op` computes each position from that position alone, so that
/// it runs on one: the model ops that do (by op, as the dialect defines
/// them) and elementwise ops. Anything else (a slice, a concat, a user's
/// linalg op) might read other positions and is refused rather than run on
/// one position wrongly.
bool worksPositionByPosition(Operation *op) {
  if (isa<EmbeddingOp, LayerNormOp, LinearOp, FeedForwardOp, SplitHeadsOp,
          MergeHeadsOp, StopGradientOp>(op))
    return true;
  if (op->getNumRegions() != 0)
    return false;
  return op->hasTrait<OpTrait::Elementwise>();
}

struct GenerateDecodeStepPass
    : lcc::impl::GenerateDecodeStepBase<GenerateDecodeStepPass> {
  using GenerateDecodeStepBase::GenerateDecodeStepBase;

  void runOnOperation() override;

private:
  /// The model function checked: tokens [B, L] i32 in, logits first out.
  LogicalResult checkModel(func::FuncOp model);
  /// The model flattened, as `name`, after `model`.
  func::FuncOp flattenedCopy(func::FuncOp model, StringRef name);
  LogicalResult buildPrefill(func::FuncOp model);
  LogicalResult buildDecodeStep(func::FuncOp model);
  /// The decode step's copy of `op`, which works position by position, at
  /// one position; a [1, L, X] operand of no position (learned positions)
  /// read at the step's position.
  LogicalResult decodeOneOp(OpBuilder &b, Operation &op, IRMapping &mapping,
                            llvm::DenseSet<Value> &sequence, Value position);

  /// The positions the model runs (L), those the caches hold (--max-cache,
  /// at least L) and the caches' rows (that in whole key tiles).
  int64_t length = 0, positions = 0, cacheRows = 0;
};

LogicalResult GenerateDecodeStepPass::checkModel(func::FuncOp model) {
  FunctionType type = model.getFunctionType();
  // Memories: f32 inputs after the tokens, each result i input i's type.
  bool carriesMemories =
      type.getNumInputs() > 1 && type.getNumResults() >= type.getNumInputs();
  for (unsigned i = 1; carriesMemories && i < type.getNumInputs(); ++i) {
    auto input = dyn_cast<RankedTensorType>(type.getInput(i));
    carriesMemories = input && input.getElementType().isF32() &&
                      input == type.getResult(i);
  }
  if (carriesMemories)
    return model.emitError()
           << "--decode: '" << function
           << "' takes inputs after its tokens (memories, as Transformer-XL "
              "carries): a model whose forward carries its memories "
              "generates without --decode, segment by segment (lcc-generate "
              "runs its forward with the memories carried)";
  auto tokens = type.getNumInputs() == 1
                    ? dyn_cast<RankedTensorType>(type.getInput(0))
                    : RankedTensorType();
  if (!tokens || tokens.getRank() != 2 ||
      !tokens.getElementType().isInteger(32))
    return model.emitError()
           << "--decode: '" << function
           << "' must take token ids [batch, seq] i32 as its one input, as a "
              "causal language model's forward does";
  length = tokens.getDimSize(1);
  auto logits = type.getNumResults() >= 1
                    ? dyn_cast<RankedTensorType>(type.getResult(0))
                    : RankedTensorType();
  if (!logits || logits.getRank() != 3 ||
      logits.getDimSize(0) != tokens.getDimSize(0) ||
      logits.getDimSize(1) != length)
    return model.emitError()
           << "--decode: '" << function
           << "' must return logits [batch, seq, vocab] first, for the "
              "tokens it takes";
  positions = maxCache != 0 ? int64_t(maxCache) : length;
  if (positions < length)
    return model.emitError()
           << "--decode: --max-cache=" << positions << " is less than the "
           << length << " positions '" << function
           << "' runs: prefill fills the caches with its whole sequence; "
              "compile the model at seq "
           << positions << " or give --max-cache of at least " << length;
  // Whole key tiles, so that a step never pads the caches to read them.
  int64_t keyTile = AttentionTiling().keyTile;
  cacheRows =
      positions <= keyTile ? positions : llvm::alignTo(positions, keyTile);
  return success();
}

func::FuncOp GenerateDecodeStepPass::flattenedCopy(func::FuncOp model,
                                                   StringRef name) {
  auto copy = cast<func::FuncOp>(model->clone());
  copy.setName(name);
  SymbolTable(getOperation()).insert(copy);
  training::flattenForDifferentiation(copy, /*keepReversible=*/false,
                                      /*keepAttentionForms=*/true);
  // The regions are inlined into the decode step's kernels: their
  // arithmetic defined for every input first, as attn-lower-to-linalg
  // defines the forward's (RegionArithmetic.h).
  copy.walk([](AttentionOp op) {
    for (Region &region : op->getRegions())
      defineRegionArithmetic(region);
  });
  return copy;
}

/// The form that caches `op`, or an error on it naming why none does.
static const AttentionFormDefinition *decodeFormOf(Operation *op) {
  if (const AttentionFormDefinition *form = lookupDecodeForm(op))
    return form;
  std::string cached;
  for (const AttentionFormDefinition *form : registeredAttentionForms())
    if (form->buildDecodeStep)
      cached += (cached.empty() ? "" : ", ") + form->opName;
  op->emitError() << "--decode: '" << op->getName()
                  << "' has no cached form yet (cached: " << cached << ")";
  return nullptr;
}

LogicalResult GenerateDecodeStepPass::buildPrefill(func::FuncOp model) {
  func::FuncOp prefill = flattenedCopy(model, "prefill");
  unsigned index = 0;
  WalkResult walked = prefill.walk([&](AttentionFormInterface op) {
    const AttentionFormDefinition *form = decodeFormOf(op);
    if (!form)
      return WalkResult::interrupt();
    OpBuilder b(op);
    b.setInsertionPointAfter(op);
    std::string whyNot;
    if (failed(form->fillDecodeCaches(
            b, op, AttentionCaches(index++, cacheRows), whyNot))) {
      op->emitError() << "--decode: this attention has no cached form: "
                      << whyNot;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  if (index == 0)
    return model.emitError() << "--decode: '" << function
                             << "' has no attention: nothing to cache";
  return success();
}

LogicalResult GenerateDecodeStepPass::decodeOneOp(
    OpBuilder &b, Operation &op, IRMapping &mapping,
    llvm::DenseSet<Value> &sequence, Value position) {
  if (!llvm::any_of(op.getOperands(),
                    [&](Value v) { return sequence.contains(v); })) {
    b.clone(op, mapping); // weights and what they compute alone
    return success();
  }
  if (!worksPositionByPosition(&op))
    return op.emitError() << "--decode: '" << op.getName()
                          << "' may mix positions: a decode step runs the "
                             "ops that work position by position (attn's "
                             "model ops, elementwise ops)";
  for (Value operand : op.getOperands()) {
    if (sequence.contains(operand))
      continue;
    // A weight ([in, out]: rank 2) is the same at every position.
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    std::optional<unsigned> axis = sequenceAxis(operand.getType());
    if (!type || type.getRank() < 3 || type.getDimSize(*axis) != length)
      continue;
    // Learned positions, [1, L, X]: the step's row of them.
    if (type.getRank() != 3 || type.getDimSize(0) != 1)
      return op.emitError() << "--decode: '" << op.getName()
                            << "' reads a tensor of every position that is "
                               "not learned positions [1, seq, width]";
    if (positions > length)
      return op.emitError()
             << "--decode: '" << op.getName() << "' reads learned positions "
             << "of " << length
             << " positions: a cache of --max-cache=" << positions
             << " has none to read beyond them";
    Value table = tensor::CollapseShapeOp::create(
        b, op.getLoc(), mapping.lookup(operand),
        ArrayRef<ReassociationIndices>{{0, 1}, {2}});
    mapping.map(operand,
                EmbeddingOp::create(b, op.getLoc(), withPositions(type, 1),
                                    position, table)
                    .getResult());
  }
  Operation *copy = b.clone(op, mapping);
  for (Value result : copy->getResults()) {
    std::optional<unsigned> axis = sequenceAxis(result.getType());
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (axis && type.getDimSize(*axis) == length)
      result.setType(withPositions(type, 1));
  }
  if (failed(verify(copy)))
    return op.emitError() << "--decode: '" << op.getName()
                          << "' does not work position by position";
  for (Value result : op.getResults())
    sequence.insert(result);
  return success();
}

LogicalResult GenerateDecodeStepPass::buildDecodeStep(func::FuncOp model) {
  func::FuncOp flat = flattenedCopy(model, "decode_step.flat");
  auto tokens = cast<RankedTensorType>(flat.getArgumentTypes()[0]);
  int64_t batch = tokens.getDimSize(0);
  OpBuilder b(getOperation().getContext());
  b.setInsertionPoint(flat);
  Type i32 = b.getI32Type();
  auto step = func::FuncOp::create(
      b, model.getLoc(), "decode_step",
      b.getFunctionType({RankedTensorType::get({batch, 1}, i32),
                         RankedTensorType::get({1, 1}, i32)},
                        {}));
  step.setArgAttrs(0, b.getDictionaryAttr(b.getNamedAttr(
                          "lcc.name", b.getStringAttr("token"))));
  // The runtime refuses a position the caches do not hold.
  step.setArgAttrs(
      1, b.getDictionaryAttr(
             {b.getNamedAttr("lcc.name", b.getStringAttr("position")),
              b.getNamedAttr("attn.valid_range",
                             b.getDenseI64ArrayAttr({0, positions - 1}))}));
  Block *body = step.addEntryBlock();
  b.setInsertionPointToStart(body);
  Value position = body->getArgument(1);
  Value start = tensor::CollapseShapeOp::create(
      b, model.getLoc(), position, ArrayRef<ReassociationIndices>{});
  IRMapping mapping;
  mapping.map(flat.getArgument(0), body->getArgument(0));
  llvm::DenseSet<Value> sequence = {flat.getArgument(0)};
  unsigned index = 0;
  for (Operation &op : flat.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<Value> results;
      for (Value v : ret.getOperands())
        results.push_back(mapping.lookup(v));
      func::ReturnOp::create(b, ret.getLoc(), results);
      step.setType(b.getFunctionType(step.getArgumentTypes(),
                                     ValueRange(results).getTypes()));
      break;
    }
    if (!isa<AttentionFormInterface>(op)) {
      if (failed(decodeOneOp(b, op, mapping, sequence, position)))
        return failure();
      continue;
    }
    const AttentionFormDefinition *form = decodeFormOf(&op);
    if (!form)
      return failure();
    SmallVector<Value> operands;
    for (Value operand : op.getOperands())
      operands.push_back(mapping.lookup(operand));
    std::string whyNot;
    FailureOr<Value> result = form->buildDecodeStep(
        b, &op, operands, start, AttentionCaches(index++, cacheRows), whyNot);
    if (failed(result))
      return op.emitError()
             << "--decode: this attention has no cached form: " << whyNot;
    mapping.map(op.getResult(0), *result);
    sequence.insert(op.getResult(0));
  }
  flat.erase();
  return success();
}

void GenerateDecodeStepPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto model = module.lookupSymbol<func::FuncOp>(function);
  if (!model || model.isExternal()) {
    module.emitError() << "--decode: the model has no function '" << function
                       << "'";
    return signalPassFailure();
  }
  for (StringRef taken : {"prefill", "decode_step"})
    if (module.lookupSymbol(taken)) {
      module.emitError() << "--decode: the model already has a function '"
                         << taken << "'";
      return signalPassFailure();
    }
  if (failed(checkModel(model)) || failed(buildPrefill(model)) ||
      failed(buildDecodeStep(model)))
    return signalPassFailure();
}

} // namespace
