//===- HalfPrecisionAttention.cpp - attention of f32 models in half -------===//
//
// Mixed precision as autocast does it for FlashAttention: the attention
// cores of an f32 model take their operands rounded to bf16 or f16 and
// return their results widened to f32; everything around them stays f32.
// Run after the train step is made, the forward and its backward are
// rewritten alike, so their gradients are those of the half computation.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/LowerToLinalg/Lowerings.h"

#include "dialects/Attn/IR/AttnInterfaces.h"
#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "llvm/ADT/SetVector.h"

namespace lcc {
#define GEN_PASS_DEF_HALFPRECISIONATTENTION
#include "passes/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

/// What the half lowering computes.
constexpr const char *kHalfForms =
    "dense, masked, sparse, adaptive-span, relative, LSH and routed "
    "attention";

bool isF32Tensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType().isF32();
}

/// Why `op` keeps computing in f32, or empty when the half lowering
/// computes it.
StringRef staysF32(Operation *op) {
  return computesInHalfPrecision(op) ? "" : "its form computes in f32 only";
}

/// The operands `op` computes on: query, key and value (LSH's query_key
/// and value; relative attention's encodings and biases and routed
/// attention's centroids too), and for a backward its result and the
/// result's gradient (never a logsumexp or adaptive span's z).
SmallVector<OpOperand *> halfOperands(Operation *op) {
  auto backwardOperands = [](auto backward) -> SmallVector<OpOperand *> {
    return {&backward.getQueryMutable(), &backward.getKeyMutable(),
            &backward.getValueMutable(), &backward.getResultMutable(),
            &backward.getResultGradMutable()};
  };
  if (auto backward = dyn_cast<AttentionBackwardOp>(op))
    return backwardOperands(backward);
  if (auto backward = dyn_cast<AdaptiveSpanAttentionBackwardOp>(op))
    return backwardOperands(backward);
  if (auto backward = dyn_cast<RelativeAttentionBackwardOp>(op)) {
    SmallVector<OpOperand *> operands = backwardOperands(backward);
    operands.append({&backward.getPosMutable(), &backward.getUMutable(),
                     &backward.getWMutable()});
    return operands;
  }
  if (auto lsh = dyn_cast<LSHAttentionOp>(op))
    return {&lsh.getQueryKeyMutable(), &lsh.getValueMutable()};
  if (auto backward = dyn_cast<LSHAttentionBackwardOp>(op))
    return {&backward.getQueryKeyMutable(), &backward.getValueMutable(),
            &backward.getResultMutable(), &backward.getResultGradMutable()};
  auto routedOperands = [](auto routed) -> SmallVector<OpOperand *> {
    SmallVector<OpOperand *> operands = {&routed.getQueryMutable(),
                                         &routed.getKeyMutable(),
                                         &routed.getValueMutable()};
    if (routed.getCentroids())
      operands.push_back(&routed.getCentroidsMutable()[0]);
    return operands;
  };
  if (auto routed = dyn_cast<RoutedAttentionOp>(op))
    return routedOperands(routed);
  if (auto backward = dyn_cast<RoutedAttentionBackwardOp>(op)) {
    SmallVector<OpOperand *> operands = routedOperands(backward);
    operands.push_back(&backward.getResultGradMutable());
    return operands;
  }
  if (auto relative = dyn_cast<RelativeAttentionOp>(op))
    return {&relative.getQueryMutable(), &relative.getKeyMutable(),
            &relative.getValueMutable(), &relative.getPosMutable(),
            &relative.getUMutable(),     &relative.getWMutable()};
  // Forward ops: query, key and value are their first three operands.
  return {&op->getOpOperand(0), &op->getOpOperand(1), &op->getOpOperand(2)};
}

/// The results computed in the half type: the output or the gradients of
/// the operands it computes on (never a logsumexp or z's gradient).
SmallVector<OpResult> halfResults(Operation *op) {
  if (isa<AttentionBackwardOp, RelativeAttentionBackwardOp,
          LSHAttentionBackwardOp, RoutedAttentionBackwardOp>(op))
    return SmallVector<OpResult>(op->getResults());
  if (isa<AdaptiveSpanAttentionBackwardOp>(op))
    return SmallVector<OpResult>(op->getResults().take_front(3));
  return {op->getResult(0)};
}

/// Rounds `op`'s operands to `half`, computes it in `half` and widens its
/// results back for their users.
void computeInHalf(Operation *op, FloatType half) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto halfOf = [&](Type type) {
    return cast<RankedTensorType>(type).clone(half);
  };
  // One rounding per value: shared-QK attention's key must stay its query.
  DenseMap<Value, Value> rounded;
  for (OpOperand *operand : halfOperands(op)) {
    Value value = operand->get();
    Value &half = rounded[value];
    if (!half)
      half = arith::TruncFOp::create(b, loc, halfOf(value.getType()), value);
    operand->set(half);
  }
  b.setInsertionPointAfter(op);
  for (OpResult result : halfResults(op)) {
    Type wide = result.getType();
    result.setType(halfOf(wide));
    auto widened = arith::ExtFOp::create(b, loc, wide, result);
    result.replaceAllUsesExcept(widened, widened);
  }
}

struct HalfPrecisionAttentionPass
    : lcc::impl::HalfPrecisionAttentionBase<HalfPrecisionAttentionPass> {
  using HalfPrecisionAttentionBase::HalfPrecisionAttentionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    FloatType half;
    if (precision == "bf16")
      half = BFloat16Type::get(context);
    else if (precision == "f16")
      half = Float16Type::get(context);
    if (!half) {
      module.emitError() << getArgument() << ": unknown precision '"
                         << precision << "'; expected bf16 or f16";
      return signalPassFailure();
    }
    // Attention the half lowering computes, and the rest (forward forms and
    // attention ops on f32 it cannot take), found before anything changes.
    SmallVector<Operation *> rewritten, kept;
    module.walk([&](Operation *op) {
      bool attention = isa<AttentionFormInterface, AttentionBackwardOp,
                           AdaptiveSpanAttentionBackwardOp,
                           RelativeAttentionBackwardOp, LSHAttentionBackwardOp,
                           RoutedAttentionBackwardOp, RingAttentionOp>(op);
      if (!attention || !llvm::any_of(op->getOperands(), isF32Tensor))
        return;
      (staysF32(op).empty() ? rewritten : kept).push_back(op);
    });
    if (rewritten.empty()) {
      // Asked for half precision, the model would compute none: say why.
      if (kept.empty())
        module.emitError() << "attention-precision=" << precision
                           << ": the model has no f32 attention to compute "
                              "in "
                           << precision;
      else
        kept.front()->emitOpError()
            << "cannot compute in " << precision << ": "
            << staysF32(kept.front())
            << ", and no other attention of the model can (attention-precision="
            << precision << " computes " << kHalfForms << "); compile in f32";
      return signalPassFailure();
    }
    if (!kept.empty()) {
      // A model op appears in the loss, the train step and its backward:
      // counted once per source position.
      llvm::SetVector<Location> places;
      for (Operation *op : kept)
        places.insert(op->getLoc());
      Operation *first = kept.front();
      InFlightDiagnostic warning = first->emitWarning();
      warning << "'" << first->getName() << "' op stays f32 under "
              << "attention-precision=" << precision << " (" << precision
              << " computes " << kHalfForms << "; " << staysF32(first) << ")";
      if (size_t more = places.size() - 1)
        warning << "; so does the attention at " << more << " more "
                << (more == 1 ? "place" : "places") << " of the model";
    }
    for (Operation *op : rewritten)
      computeInHalf(op, half);
  }
};

} // namespace
