//===- GenerateDecodeStep.cpp - prefill and a cached decode step ----------===//
//
// Generation without recomputing the sequence (docs/generation.md): a
// causal model function, its blocks flattened as for the train step,
// becomes
//   1. prefill: the function itself, each attention also writing its keys
//      and values to caches that are state of the module;
//   2. decode_step: the function at one position: every op that works
//      position by position runs on the new token alone, learned positions
//      are read at the step's position, and each attention writes the new
//      key and value to that row of its caches and attends over the rows up
//      to it, reading no key tile after it.
// The caches may hold more positions than the function runs (--max-cache)
// when nothing in it reads positions by number.
// The caches are `attn.param "decode.cache.N.key" {state}` (ModuleFormat.h
// reserves the prefix: the runtime keeps them out of checkpoints).
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/RegionArithmetic.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorBuilder.h"
#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/Passes.h"
#include "passes/Training/TrainStep.h"

#include "dialects/Attn/IR/AttnOps.h"
#include "runtime/schema/ModuleFormat.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

/// Why `op`, an attention of the flattened model, has no cached form; ""
/// when it has one.
std::string uncachedBecause(AttentionOp op) {
  if (!op.getCausal())
    return "it is not causal (a decode step sees only earlier positions)";
  if (op.getQuery().getType() != op.getKey().getType())
    return "its keys are not its queries' positions";
  return "";
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

/// The caches of one attention: state of the module.
struct Caches {
  std::string keyName, valueName;
  Value key, value;
};

Caches cachesOf(OpBuilder &b, Location loc, unsigned index,
                RankedTensorType keyType, RankedTensorType valueType) {
  Caches c;
  std::string prefix = lcm::kDecodeCachePrefix + std::to_string(index);
  c.keyName = prefix + ".key";
  c.valueName = prefix + ".value";
  c.key =
      ParamOp::create(b, loc, keyType, c.keyName, /*state=*/true, FloatAttr());
  c.value = ParamOp::create(b, loc, valueType, c.valueName, /*state=*/true,
                            FloatAttr());
  return c;
}

/// `cache` ([B, H, C, d]) with rows [start, start + S) replaced by `rows`
/// ([B, H, S, d]); `start` is a 0-d i32 tensor. Only those rows are
/// written: per (batch, head), the rows inserted at `start` (clamped so
/// that they fit: a position out of range writes nothing outside the
/// cache), the cache updated where it is.
Value writeRows(TensorBuilder &tb, Value cache, Value rows, Value start) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  auto cacheType = cast<RankedTensorType>(cache.getType());
  auto rowType = cast<RankedTensorType>(rows.getType());
  int64_t batch = rowType.getDimSize(0), heads = rowType.getDimSize(1),
          count = rowType.getDimSize(2), width = rowType.getDimSize(3);
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(batch), b.getIndexAttr(heads)},
      ValueRange{cache}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value bi = forall.getInductionVars()[0], hi = forall.getInductionVars()[1];
  Value at = castToIndex(b, loc, tensor::ExtractOp::create(b, loc, start));
  at = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, at, indexConstant(b, loc, 0)),
      indexConstant(b, loc, cacheType.getDimSize(2) - count));
  SmallVector<OpFoldResult> one(4, b.getIndexAttr(1));
  Value row = tensor::ExtractSliceOp::create(
      b, loc,
      RankedTensorType::get({1, 1, count, width}, rowType.getElementType()),
      rows,
      ArrayRef<OpFoldResult>{bi, hi, b.getIndexAttr(0), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                             b.getIndexAttr(count), b.getIndexAttr(width)},
      one);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  insertIntoShared(b, loc, row, forall.getRegionIterArgs()[0],
                   {bi, hi, at, b.getIndexAttr(0)},
                   {b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(count),
                    b.getIndexAttr(width)});
  return forall.getResult(0);
}

/// The rows a cache holds of `op`'s keys `k`: shared-QK attention's keys
/// are its unit queries.
Value cachedKeys(TensorBuilder &tb, AttentionOp op, Value k) {
  return op.getSharedQk() ? normalizeRows(tb, k) : k;
}

/// The attention `op` of the one query `q` ([B, H, 1, d]) at `position`
/// (0-d i32) over the caches ([B, H, C, d] and [B, H, C, dv]): [B, H, 1,
/// dv], as the forward computes it for that position. Flash attention from
/// the query's position: its causality, regions and shared-QK self score
/// see it there, and only the key tiles up to it are read, so a step costs
/// what its position asks, not the caches' capacity.
Value attendCache(OpBuilder &b, AttentionOp op, Value q, Value keys,
                  Value values, Value position) {
  AttentionSpec spec = AttentionSpec::of(op, /*remarks=*/false);
  spec.query = q;
  spec.key = keys;
  spec.value = values;
  spec.queryPosition = position;
  return configureFlashAttention(b, spec, AttentionTiling())
      .build(b, op.getLoc());
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
  training::flattenForDifferentiation(copy, /*keepReversible=*/false);
  // The regions are inlined into the decode step's kernels: their
  // arithmetic defined for every input first, as attn-lower-to-linalg
  // defines the forward's (RegionArithmetic.h).
  copy.walk([](AttentionOp op) {
    for (Region &region : op->getRegions())
      defineRegionArithmetic(region);
  });
  return copy;
}

LogicalResult GenerateDecodeStepPass::buildPrefill(func::FuncOp model) {
  func::FuncOp prefill = flattenedCopy(model, "prefill");
  // Every attention form's op other than dense attention: none is cached
  // yet.
  WalkResult uncached = prefill.walk([&](AttentionFormInterface form) {
    if (isa<AttentionOp>(form))
      return WalkResult::advance();
    form->emitError() << "--decode: '" << form->getName()
                      << "' has no cached form yet (dense causal attention "
                         "has one)";
    return WalkResult::interrupt();
  });
  if (uncached.wasInterrupted())
    return failure();
  unsigned index = 0;
  WalkResult walked = prefill.walk([&](AttentionOp op) {
    std::string why = uncachedBecause(op);
    if (!why.empty()) {
      op.emitError() << "--decode: this attention has no cached form: " << why;
      return WalkResult::interrupt();
    }
    OpBuilder b(op);
    b.setInsertionPointAfter(op);
    TensorBuilder tb(b, op.getLoc());
    auto cacheType = [&](Value rows) {
      return cast<RankedTensorType>(withPositions(rows.getType(), cacheRows));
    };
    Caches caches = cachesOf(b, op.getLoc(), index++, cacheType(op.getKey()),
                             cacheType(op.getValue()));
    Value start = arith::ConstantOp::create(
        b, op.getLoc(),
        b.getZeroAttr(RankedTensorType::get({}, b.getI32Type())));
    AssignOp::create(
        b, op.getLoc(), caches.keyName,
        writeRows(tb, caches.key, cachedKeys(tb, op, op.getKey()), start));
    AssignOp::create(b, op.getLoc(), caches.valueName,
                     writeRows(tb, caches.value, op.getValue(), start));
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
  if (isa<AttentionFormInterface>(op))
    return op.emitError() << "--decode: '" << op.getName()
                          << "' has no cached form yet (dense causal "
                             "attention has one)";
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
             << "of " << length << " positions: a cache of --max-cache="
             << positions << " has none to read beyond them";
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
    auto attention = dyn_cast<AttentionOp>(op);
    if (!attention) {
      if (failed(decodeOneOp(b, op, mapping, sequence, position)))
        return failure();
      continue;
    }
    if (attention.getLogsumexp() && !attention.getLogsumexp().use_empty())
      return attention.emitError("--decode: the attention's logsumexp is "
                                 "read; a decode step computes none");
    TensorBuilder tb(b, attention.getLoc());
    Value q = mapping.lookup(attention.getQuery());
    Value k = mapping.lookup(attention.getKey());
    Value v = mapping.lookup(attention.getValue());
    auto cacheType = [&](Value rows) {
      return cast<RankedTensorType>(withPositions(rows.getType(), cacheRows));
    };
    Caches caches =
        cachesOf(b, attention.getLoc(), index++, cacheType(k), cacheType(v));
    Value keys = writeRows(tb, caches.key, cachedKeys(tb, attention, k), start);
    Value values = writeRows(tb, caches.value, v, start);
    AssignOp::create(b, attention.getLoc(), caches.keyName, keys);
    AssignOp::create(b, attention.getLoc(), caches.valueName, values);
      mapping.map(attention.getResult(),
                attendCache(b, attention, q, keys, values, start));
    sequence.insert(attention.getResult());
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
