//===- FlattenBlocks.cpp - a loss function as ops the rules know ----------===//
//
// The gradient rules (GradientRules.cpp) see one flat list of ops: an op
// whose DifferentiableOpInterface expands it (a block op into what its
// regions hold, an attention into the one that saves its row statistics for
// the flash backward) is replaced by its expansion until none is left.
// Reversible blocks may stay, their regions flattened, for the rule that
// recomputes them (GradientRules.cpp).
//
//===----------------------------------------------------------------------===//

#include "passes/Training/TrainStep.h"

#include "dialects/Attn/IR/AttnOps.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

/// Expands the first expandable op of `block`; false when none is left.
/// With `keepReversible`, reversible blocks stay (their regions are
/// flattened on their own); with `keepForms`, attention ops.
bool flattenOne(Block &block, bool keepReversible, bool keepForms) {
  for (Operation &op : block) {
    auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable || (keepReversible && isa<ReversibleOp>(op)) ||
        (keepForms && isa<AttentionFormInterface>(op)))
      continue;
    OpBuilder b(&op);
    SmallVector<Value> expanded = differentiable.expandForDifferentiation(b);
    if (expanded.empty())
      continue;
    op.replaceAllUsesWith(expanded);
    op.erase();
    return true;
  }
  return false;
}

} // namespace

void lcc::training::flattenForDifferentiation(func::FuncOp func,
                                              bool keepReversible,
                                              bool keepAttentionForms) {
  Block &body = func.getBody().front();
  while (flattenOne(body, keepReversible, keepAttentionForms)) {
  }
  if (!keepReversible)
    return;
  for (ReversibleOp rev : body.getOps<ReversibleOp>())
    for (Region *region : {&rev.getF(), &rev.getG()})
      while (flattenOne(region->front(), /*keepReversible=*/false,
                        keepAttentionForms)) {
      }
}
