//===- FlattenBlocks.cpp - a loss function as ops the rules know ----------===//
//
// The gradient rules (GradientRules.cpp) see one flat list of ops: a block
// op is the composition of what its regions hold, so it is inlined first.
// A multi-head block becomes its projections, a head split, its attention,
// a head merge and its output projection, each with a rule of its own.
// Attention saves its per-row logsumexp for the flash backward. Reversible
// blocks may stay, their regions flattened, for the rule that recomputes
// them (GradientRules.cpp).
//
//===----------------------------------------------------------------------===//

#include "passes/SparsePatterns.h"
#include "passes/Training/TrainStep.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

/// Clones `region`'s body at the builder's insertion point with its
/// arguments bound to `arguments`, and returns what it yields.
SmallVector<Value> inlineBody(OpBuilder &b, Region &region,
                              ValueRange arguments) {
  IRMapping mapping;
  mapping.map(region.getArguments(), arguments);
  for (Operation &op : region.front().without_terminator())
    b.clone(op, mapping);
  SmallVector<Value> yielded;
  for (Value v : region.front().getTerminator()->getOperands())
    yielded.push_back(mapping.lookupOrDefault(v));
  return yielded;
}

RankedTensorType tensorTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// x [batch, seq, d_model] · weight [d_model, heads * dim] split into
/// [batch, heads, seq, dim].
Value projectToHeads(OpBuilder &b, Location loc, Value x, Value weight,
                     int64_t heads) {
  RankedTensorType xType = tensorTypeOf(x), wType = tensorTypeOf(weight);
  int64_t batch = xType.getDimSize(0), seq = xType.getDimSize(1);
  int64_t cols = wType.getDimSize(1);
  Type elt = xType.getElementType();
  Value projected =
      LinearOp::create(b, loc, RankedTensorType::get({batch, seq, cols}, elt),
                       x, weight, Value());
  return SplitHeadsOp::create(
      b, loc, RankedTensorType::get({batch, heads, seq, cols / heads}, elt),
      projected, heads);
}

void flattenMultiHeadAttention(OpBuilder &b, MultiHeadAttentionOp op) {
  Location loc = op.getLoc();
  int64_t heads = op.getHeads();
  Value x = op.getInput();
  SmallVector<Value> arguments = {
      projectToHeads(b, loc, x, op.getQueryWeight(), heads)};
  if (Value keyWeight = op.getKeyWeight())
    arguments.push_back(projectToHeads(b, loc, x, keyWeight, heads));
  arguments.push_back(projectToHeads(b, loc, x, op.getValueWeight(), heads));
  Value attention = inlineBody(b, op.getBody(), arguments)[0];
  RankedTensorType aType = tensorTypeOf(attention);
  Value merged = MergeHeadsOp::create(
      b, loc,
      RankedTensorType::get({aType.getDimSize(0), aType.getDimSize(2),
                             aType.getDimSize(1) * aType.getDimSize(3)},
                            aType.getElementType()),
      attention);
  Value result = LinearOp::create(b, loc, op.getResult().getType(), merged,
                                  op.getOutputWeight(), Value());
  op.getResult().replaceAllUsesWith(result);
}

void flattenReversible(OpBuilder &b, ReversibleOp op) {
  Location loc = op.getLoc();
  Value f = inlineBody(b, op.getF(), op.getX2())[0];
  Value y1 = arith::AddFOp::create(b, loc, op.getX1(), f);
  Value g = inlineBody(b, op.getG(), y1)[0];
  Value y2 = arith::AddFOp::create(b, loc, op.getX2(), g);
  op.getY1().replaceAllUsesWith(y1);
  op.getY2().replaceAllUsesWith(y2);
}

void flattenResidual(OpBuilder &b, ResidualOp op) {
  Value body = inlineBody(b, op.getBody(), op.getInput())[0];
  op.getResult().replaceAllUsesWith(
      arith::AddFOp::create(b, op.getLoc(), op.getInput(), body));
}

/// `op` (an attention with an optional second result) with a logsumexp
/// result, its regions moved over.
void saveLogSumExp(OpBuilder &b, Operation *op, Value query) {
  RankedTensorType q = tensorTypeOf(query);
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(op->getOperands());
  state.addAttributes(op->getAttrs());
  state.addTypes({op->getResult(0).getType(),
                  RankedTensorType::get(
                      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2)},
                      q.getElementType())});
  for (unsigned i = 0; i < op->getNumRegions(); ++i)
    state.addRegion()->takeBody(op->getRegion(i));
  Operation *saved = b.create(state);
  op->getResult(0).replaceAllUsesWith(saved->getResult(0));
}

/// Expands the first block op of `block`; false when none is left. With
/// `keepReversible`, reversible blocks stay (their regions are flattened
/// on their own).
bool flattenOne(Block &block, bool keepReversible) {
  for (Operation &op : block) {
    OpBuilder b(&op);
    if (auto mha = dyn_cast<MultiHeadAttentionOp>(op)) {
      flattenMultiHeadAttention(b, mha);
    } else if (auto rev = dyn_cast<ReversibleOp>(op)) {
      if (keepReversible)
        continue;
      flattenReversible(b, rev);
    } else if (auto res = dyn_cast<ResidualOp>(op)) {
      flattenResidual(b, res);
    } else if (auto compress = dyn_cast<CompressOp>(op)) {
      // Differentiated as the projection it is.
      compress.getResult().replaceAllUsesWith(compress.buildAsLinear(b));
    } else if (auto sparse = dyn_cast<SparseAttentionOp>(op)) {
      AttentionOp masked = createMaskedAttention(b, sparse);
      sparse.getResult().replaceAllUsesWith(masked.getResult());
    } else if (auto attention = dyn_cast<AttentionOp>(op);
               attention && !attention.getLogsumexp()) {
      saveLogSumExp(b, attention, attention.getQuery());
    } else if (auto relative = dyn_cast<RelativeAttentionOp>(op);
               relative && !relative.getLogsumexp()) {
      saveLogSumExp(b, relative, relative.getQuery());
    } else if (auto span = dyn_cast<AdaptiveSpanAttentionOp>(op);
               span && !span.getLogNormalizer()) {
      saveLogSumExp(b, span, span.getQuery());
    } else {
      continue;
    }
    op.erase();
    return true;
  }
  return false;
}

} // namespace

void lcc::training::flattenForDifferentiation(func::FuncOp func,
                                              bool keepReversible) {
  Block &body = func.getBody().front();
  while (flattenOne(body, keepReversible)) {
  }
  if (!keepReversible)
    return;
  for (ReversibleOp rev : body.getOps<ReversibleOp>())
    for (Region *region : {&rev.getF(), &rev.getG()})
      while (flattenOne(region->front(), /*keepReversible=*/false)) {
      }
}
