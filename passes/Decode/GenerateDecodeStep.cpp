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
// when nothing in it reads positions by number. A model that carries
// memories (forward(tokens, memories...) -> (logits, next memories...),
// Transformer-XL) keeps them: prefill takes them, and its attentions cache
// the memories' keys and values before the segment's; the step returns
// its position's row of each memory that is per position (the generator
// assembles the next segment's memories from them), and only what the
// logits and those rows need (SequencePositions.h says which values run
// at one position).
// The caches are `attn.param "decode.cache.N.<role>" {state}`
// (passes/DecodeStep.h; ModuleFormat.h reserves the prefix: the runtime
// keeps them out of checkpoints).
//
//===----------------------------------------------------------------------===//

#include "passes/AttentionForms.h"
#include "passes/Decode/MemoryAttentionSteps.h"
#include "passes/Decode/SequencePositions.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/RegionArithmetic.h"
#include "passes/Passes.h"
#include "passes/Training/TrainStep.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "runtime/schema/ModuleFormat.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// What fills an attention's caches and builds its step: its form's (the
/// registry's) or, for an attention over a memory, the dialect's own.
std::optional<CachedAttention> cachedAttentionOf(Operation *op) {
  if (const AttentionFormDefinition *form = lookupDecodeForm(op))
    return CachedAttention{form->fillDecodeCaches, form->buildDecodeStep};
  if (std::optional<CachedAttention> memory = lookupMemoryAttentionStep(op))
    return memory;
  std::string cached;
  for (const AttentionFormDefinition *form : registeredAttentionForms())
    if (form->buildDecodeStep)
      cached += (cached.empty() ? "" : ", ") + form->opName;
  op->emitError() << "--decode: '" << op->getName()
                  << "' has no cached form yet (cached: " << cached
                  << ", attn.relative_attention, "
                     "attn.adaptive_span_attention)";
  return std::nullopt;
}

/// The attentions of `function` in order (the caches' numbering).
SmallVector<Operation *> attentionsOf(func::FuncOp function) {
  SmallVector<Operation *> attentions;
  function.walk([&](AttentionFormInterface op) { attentions.push_back(op); });
  return attentions;
}

/// The step's name of the row of the memory the model takes as argument
/// `index`: "<its name>.row".
std::string memoryRowName(func::FuncOp model, unsigned index) {
  auto name = model.getArgAttrOfType<StringAttr>(index, "lcc.name");
  return (name ? name.str() : "arg" + std::to_string(index)) + ".row";
}

struct GenerateDecodeStepPass
    : lcc::impl::GenerateDecodeStepBase<GenerateDecodeStepPass> {
  using GenerateDecodeStepBase::GenerateDecodeStepBase;

  void runOnOperation() override;

private:
  /// The model function checked: tokens [B, L] i32 in (and memories), logits
  /// first out.
  LogicalResult checkModel(func::FuncOp model);
  LogicalResult checkMemories(func::FuncOp model);
  /// The model flattened, as `name`, after `model`.
  func::FuncOp flattenedCopy(func::FuncOp model, StringRef name);
  /// What the step computes: the results it returns (logits, and each
  /// memory that is per position) and the ops they need.
  LogicalResult planStep(func::FuncOp flat, const SequencePositions &seq);
  LogicalResult checkStepAttention(Operation *op, const SequencePositions &seq);
  LogicalResult buildPrefill(func::FuncOp model);
  LogicalResult buildDecodeStep(func::FuncOp model, func::FuncOp flat,
                                const SequencePositions &seq);

  /// The positions the model runs (L), those the caches hold (--max-cache,
  /// at least L) and the caches' rows (that in whole key tiles).
  int64_t length = 0, positions = 0, cacheRows = 0;
  /// The memories the model carries: inputs 1..memories, result i input
  /// i's next value (Transformer-XL).
  unsigned memories = 0;
  /// The results of the model the step returns (at its position), the ops
  /// of the flat model they need and the attentions among them (by their
  /// place among the model's: the caches' numbers).
  SmallVector<unsigned> stepResults;
  llvm::DenseSet<Operation *> stepOps;
  llvm::DenseSet<unsigned> cachedAttentions;
  /// What the step reads that no token changes but weights compute
  /// (Transformer-XL's projected position encodings): computed by prefill
  /// and cached, each by the place of its op in the flat model and its
  /// result's number.
  SmallVector<std::pair<unsigned, unsigned>> stepInvariants;
};

/// The ops a step copies rather than reads from a cache: what costs no
/// computation.
bool isFree(Operation *op) {
  return isa<ParamOp, arith::ConstantOp, tensor::EmptyOp>(op);
}

/// The cache of step invariant `k`.
std::string invariantName(unsigned k) {
  return std::string(lcm::kDecodeCachePrefix) + "invariant." +
         std::to_string(k);
}

LogicalResult GenerateDecodeStepPass::checkMemories(func::FuncOp model) {
  // Memories: f32 inputs after the tokens, each result i input i's type.
  FunctionType type = model.getFunctionType();
  if (type.getNumInputs() <= 1)
    return success();
  bool carriesMemories = type.getNumResults() >= type.getNumInputs();
  for (unsigned i = 1; carriesMemories && i < type.getNumInputs(); ++i) {
    auto input = dyn_cast<RankedTensorType>(type.getInput(i));
    carriesMemories =
        input && input.getElementType().isF32() && input == type.getResult(i);
  }
  if (!carriesMemories)
    return model.emitError()
           << "--decode: '" << function
           << "' must take token ids [batch, seq] i32 and, after them, only "
              "memories it carries (input i, result i of the same type, as "
              "Transformer-XL's)";
  memories = type.getNumInputs() - 1;
  if (maxCache != 0 && int64_t(maxCache) != length)
    return model.emitError()
           << "--decode: '" << function << "' carries memories: its caches "
           << "hold one segment of " << length
           << " positions after them; leave out --max-cache or give " << length;
  return success();
}

LogicalResult GenerateDecodeStepPass::checkModel(func::FuncOp model) {
  FunctionType type = model.getFunctionType();
  auto tokens = type.getNumInputs() >= 1
                    ? dyn_cast<RankedTensorType>(type.getInput(0))
                    : RankedTensorType();
  if (!tokens || tokens.getRank() != 2 ||
      !tokens.getElementType().isInteger(32))
    return model.emitError()
           << "--decode: '" << function
           << "' must take token ids [batch, seq] i32 first, as a causal "
              "language model's forward does";
  length = tokens.getDimSize(1);
  if (failed(checkMemories(model)))
    return failure();
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

LogicalResult
GenerateDecodeStepPass::checkStepAttention(Operation *op,
                                           const SequencePositions &seq) {
  // Its keys and values ([batch, heads, seq, *] as its queries): a row per
  // position so far, after the memories' rows its queries come after.
  auto query = cast<RankedTensorType>(op->getOperand(0).getType());
  for (Value operand : op->getOperands().drop_front()) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || type.getRank() != 4 ||
        type.getShape().take_front(2) != query.getShape().take_front(2))
      continue; // its weights, centroids or encodings
    std::optional<PositionAxis> axis = seq.lookup(operand);
    if (!axis || axis->axis != 2 ||
        axis->memoryRows != type.getDimSize(2) - query.getDimSize(2))
      return op->emitError()
             << "--decode: this attention's keys or values are not one per "
                "position of the tokens so far (after memories): a decode "
                "step caches them position by position";
  }
  return success();
}

LogicalResult GenerateDecodeStepPass::planStep(func::FuncOp flat,
                                               const SequencePositions &seq) {
  auto ret = cast<func::ReturnOp>(flat.getBody().front().getTerminator());
  // The logits, and the memories that are per position (a memory computed
  // from memories alone, as the compressive memory's, is prefill's).
  for (unsigned i = 0; i <= memories; ++i) {
    Value result = ret.getOperand(i);
    if (Operation *refused = seq.refusedBefore(result))
      return refused->emitError()
             << "--decode: " << seq.whyNotAtOnePosition(refused);
    std::optional<PositionAxis> axis = seq.lookup(result);
    if (axis && axis->memoryRows == 0 && axis->axis == 1)
      stepResults.push_back(i);
    else if (i == 0 || axis)
      return flat.emitError() << "--decode: result " << i << " of '" << function
                              << "' is not one row per position of its tokens";
  }
  // The ops they need.
  SmallVector<Operation *> worklist;
  auto need = [&](Value v) {
    if (Operation *def = v.getDefiningOp(); def && stepOps.insert(def).second)
      worklist.push_back(def);
  };
  for (unsigned i : stepResults)
    need(ret.getOperand(i));
  while (!worklist.empty())
    for (Value operand : worklist.pop_back_val()->getOperands())
      need(operand);
  for (auto [index, op] : llvm::enumerate(attentionsOf(flat))) {
    if (!stepOps.contains(op))
      continue;
    if (failed(checkStepAttention(op, seq)))
      return failure();
    cachedAttentions.insert(index);
  }
  for (Operation *op : stepOps) {
    if (isa<AttentionFormInterface>(op))
      continue;
    std::string why = seq.whyNotAtOnePosition(op);
    if (!why.empty())
      return op->emitError() << "--decode: " << why;
    for (Value operand : op->getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg && arg.getArgNumber() > 0 && !isa<tensor::ConcatOp>(op))
        return op->emitError()
               << "--decode: a decode step reads the memories only through "
                  "the keys and values its attentions cache, joined before "
                  "the positions (tensor.concat)";
  }
  if (cachedAttentions.empty())
    return flat.emitError() << "--decode: '" << function
                            << "' has no attention: nothing to cache";
  // Values of weights alone that the step's per-position ops read.
  for (auto [index, op] : llvm::enumerate(flat.getBody().front())) {
    if (!stepOps.contains(&op) || isFree(&op) ||
        isa<AttentionFormInterface>(op) || seq.lookup(op.getResult(0)))
      continue;
    for (OpResult result : op.getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return stepOps.contains(user) &&
                   (isa<AttentionFormInterface>(user) ||
                    seq.lookup(user->getResult(0)));
          }))
        stepInvariants.push_back({unsigned(index), result.getResultNumber()});
  }
  return success();
}

LogicalResult GenerateDecodeStepPass::buildPrefill(func::FuncOp model) {
  func::FuncOp prefill = flattenedCopy(model, "prefill");
  SmallVector<Operation *> ops = llvm::map_to_vector(
      prefill.getBody().front(), [](Operation &op) { return &op; });
  for (auto [k, place] : llvm::enumerate(stepInvariants)) {
    Operation *op = ops[place.first];
    OpBuilder b = OpBuilder::atBlockEnd(op->getBlock());
    b.setInsertionPointAfter(op);
    AssignOp::create(b, op->getLoc(), invariantName(k),
                     op->getResult(place.second));
  }
  for (auto [index, op] : llvm::enumerate(attentionsOf(prefill))) {
    if (!cachedAttentions.contains(index))
      continue;
    std::optional<CachedAttention> cached = cachedAttentionOf(op);
    if (!cached)
      return failure();
    // The caches and the forms' steps are f32; --attention-precision,
    // which runs after this pass, is how a model decodes in half.
    if (StringRef half = halfPrecisionOf(op); !half.empty())
      return op->emitError()
             << "--decode: this attention computes in " << half
             << ", and the decode step's caches hold f32: give it f32 "
                "operands and compile with --attention-precision="
             << half << " instead";
    OpBuilder b(op);
    b.setInsertionPointAfter(op);
    std::string whyNot;
    if (failed(cached->fill(b, op, AttentionCaches(index, cacheRows), whyNot)))
      return op->emitError()
             << "--decode: this attention has no cached form: " << whyNot;
  }
  return success();
}

LogicalResult
GenerateDecodeStepPass::buildDecodeStep(func::FuncOp model, func::FuncOp flat,
                                        const SequencePositions &seq) {
  auto tokens = cast<RankedTensorType>(flat.getArgumentTypes()[0]);
  int64_t batch = tokens.getDimSize(0);
  OpBuilder b(getOperation().getContext());
  b.setInsertionPointAfter(getOperation().lookupSymbol("prefill"));
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
  SmallVector<Operation *> attentions = attentionsOf(flat);
  for (auto [place, op] : llvm::enumerate(flat.getBody().front())) {
    if (!stepOps.contains(&op))
      continue;
    if (!isa<AttentionFormInterface>(op)) {
      if (seq.lookup(op.getResult(0)))
        seq.buildAtOnePosition(b, op, mapping, position);
      else if (isFree(&op))
        b.clone(op, mapping); // weights
      // What weights compute: prefill's, read from its cache.
      for (auto [k, invariant] : llvm::enumerate(stepInvariants))
        if (invariant.first == place) {
          Value result = op.getResult(invariant.second);
          mapping.map(result, ParamOp::create(b, op.getLoc(), result.getType(),
                                              invariantName(k),
                                              /*state=*/true, FloatAttr()));
        }
      continue;
    }
    unsigned index = llvm::find(attentions, &op) - attentions.begin();
    std::optional<CachedAttention> cached = cachedAttentionOf(&op);
    if (!cached)
      return failure();
    SmallVector<Value> operands;
    for (Value operand : op.getOperands())
      operands.push_back(mapping.lookup(operand));
    std::string whyNot;
    FailureOr<Value> result = cached->step(
        b, &op, operands, start, AttentionCaches(index, cacheRows), whyNot);
    if (failed(result))
      return op.emitError()
             << "--decode: this attention has no cached form: " << whyNot;
    mapping.map(op.getResult(0), *result);
  }
  auto ret = cast<func::ReturnOp>(flat.getBody().front().getTerminator());
  SmallVector<Value> results;
  for (unsigned i : stepResults)
    results.push_back(mapping.lookup(ret.getOperand(i)));
  func::ReturnOp::create(b, ret.getLoc(), results);
  step.setType(b.getFunctionType(step.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  for (auto [j, i] : llvm::enumerate(stepResults))
    step.setResultAttr(
        j, "lcc.name",
        b.getStringAttr(i == 0 ? "logits" : memoryRowName(model, i)));
  flat.erase();
  if (failed(verify(step)))
    return step.emitError() << "--decode: the decode step is malformed (a "
                               "bug in lcc: please report it)";
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
  if (failed(checkModel(model)))
    return signalPassFailure();
  func::FuncOp flat = flattenedCopy(model, "decode_step.flat");
  SequencePositions seq(flat, length, positions);
  if (failed(planStep(flat, seq)) || failed(buildPrefill(model)) ||
      failed(buildDecodeStep(model, flat, seq)))
    return signalPassFailure();
}

} // namespace
