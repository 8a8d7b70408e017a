//===- InsertReversible.cpp - residual stacks to reversible blocks --------===//
//
// Reformer's reversible layers as a rewrite: a stack of residual blocks,
// each attention block followed by its feed-forward block, becomes a stack
// of reversible blocks (RevNet), y1 = x1 + Attn(x2), y2 = x2 + FF(y1). The
// stack's input is duplicated into both streams and the streams are merged
// at its end by their mean, as reformer-pytorch does. The train step then
// recomputes each block's inputs from its outputs (GradientRules.cpp)
// instead of storing its activations. This changes the model (it is a
// different network, not a rewrite of the same one), so it runs only when
// asked (`lcc --reversible`) and remarks on every stack it rewrites or
// keeps.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace lcc {
#define GEN_PASS_DEF_INSERTREVERSIBLE
#include "passes/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

enum class BlockKind { Attention, FeedForward, Other };

/// What a residual block's body computes: attention (of any form, a
/// plugin's included: an op of AttentionFormInterface) or a feed-forward,
/// by the op that does the block's work.
BlockKind kindOf(ResidualOp residual) {
  bool attention = false, feedForward = false;
  residual.getBody().walk([&](Operation *op) {
    if (isa<AttentionFormInterface>(op))
      attention = true;
    else if (isa<FeedForwardOp>(op))
      feedForward = true;
  });
  if (attention == feedForward)
    return BlockKind::Other;
  return attention ? BlockKind::Attention : BlockKind::FeedForward;
}

/// Chains of residual blocks in `block`, each feeding only the next.
SmallVector<SmallVector<ResidualOp>> residualStacks(Block &block) {
  SmallVector<SmallVector<ResidualOp>> stacks;
  for (ResidualOp residual : block.getOps<ResidualOp>()) {
    if (!stacks.empty()) {
      ResidualOp last = stacks.back().back();
      if (residual.getInput() == last.getResult() &&
          last.getResult().hasOneUse()) {
        stacks.back().push_back(residual);
        continue;
      }
    }
    stacks.push_back({residual});
  }
  return stacks;
}

/// "residual stack of N blocks", as a remark starts.
std::string stackOf(size_t blocks) {
  return "residual stack of " + std::to_string(blocks) +
         (blocks == 1 ? " block" : " blocks");
}

/// Why `stack` cannot be made reversible, remarked on the op that stops
/// it; success when it can.
LogicalResult checkPairs(SmallVectorImpl<ResidualOp> &stack) {
  for (size_t i = 0; i < stack.size(); i += 2) {
    ResidualOp first = stack[i];
    if (kindOf(first) != BlockKind::Attention)
      return first.emitRemark()
             << stackOf(stack.size()) << " kept: block " << i
             << " is not an attention block, and a reversible block pairs "
                "an attention block (F) with the feed-forward block after it "
                "(G)";
    if (i + 1 == stack.size()) {
      // The stack ends at an attention block: its result goes elsewhere.
      InFlightDiagnostic remark = first.emitRemark();
      remark << stackOf(stack.size())
             << " kept: its last attention block is not followed by "
                "a feed-forward block that alone takes its result";
      for (Operation *user : first.getResult().getUsers())
        remark << "; '" << user->getName() << "' uses it";
      return remark;
    }
    if (kindOf(stack[i + 1]) != BlockKind::FeedForward)
      return stack[i + 1].emitRemark()
             << stackOf(stack.size()) << " kept: block " << i + 1
             << " follows an attention block but is not a feed-forward "
                "block";
  }
  return success();
}

/// Rewrites `stack` (attention, feed-forward, ... pairs) into reversible
/// blocks, each placed where its feed-forward block was (so everything its
/// regions use is defined before it).
void makeReversible(SmallVectorImpl<ResidualOp> &stack) {
  Value x = stack.front().getInput();
  Value x1 = x, x2 = x;
  for (size_t i = 0; i < stack.size(); i += 2) {
    ResidualOp attention = stack[i], feedForward = stack[i + 1];
    OpBuilder b(feedForward);
    auto block = ReversibleOp::create(b, attention.getLoc(), x1.getType(),
                                      x2.getType(), x1, x2);
    block.getF().takeBody(attention.getBody());
    block.getG().takeBody(feedForward.getBody());
    x1 = block.getY1();
    x2 = block.getY2();
  }
  ResidualOp last = stack.back();
  OpBuilder b(last);
  Location loc = last.getLoc();
  auto type = cast<RankedTensorType>(x.getType());
  Value half = arith::ConstantOp::create(
      b, loc, type,
      DenseElementsAttr::get(type, FloatAttr::get(type.getElementType(), 0.5)));
  Value sum = arith::AddFOp::create(b, loc, x1, x2);
  Value mean = arith::MulFOp::create(b, loc, sum, half);
  last.getResult().replaceAllUsesWith(mean);
  for (ResidualOp residual : llvm::reverse(stack))
    residual.erase();
}

struct InsertReversiblePass
    : lcc::impl::InsertReversibleBase<InsertReversiblePass> {
  void runOnOperation() override {
    bool anyStack = false;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &body = func.getBody().front();
      // Blocks written reversible are kept as they are.
      if (!body.getOps<ReversibleOp>().empty())
        anyStack = true;
      for (SmallVector<ResidualOp> &stack : residualStacks(body)) {
        anyStack = true; // Made reversible, or kept with a remark.
        if (failed(checkPairs(stack)))
          continue;
        stack.front().emitRemark()
            << stackOf(stack.size()) << " made reversible: " << stack.size() / 2
            << (stack.size() == 2 ? " reversible block" : " reversible blocks")
            << " (attention, feed-forward), the input in both streams, "
               "merged by their mean";
        makeReversible(stack);
      }
    }
    if (!anyStack)
      getOperation().emitWarning(
          "attn-insert-reversible: the model has no residual or reversible "
          "block: its activations are stored as before");
  }
};

} // namespace
