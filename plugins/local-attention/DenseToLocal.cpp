//===- DenseToLocal.cpp - attn.attention to local.attention ---------------===//
//
// Local attention hides every key outside a query's windows, so it changes
// what a model computes: the pass runs only when asked and says what it did
// with each op, as lcc's own form rewrites do.
//
//===----------------------------------------------------------------------===//

#include "DenseToLocal.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace local;

std::string local::whyNotLocal(lcc::attn::AttentionOp op) {
  if (op.hasMaskOrScore())
    return "local attention cannot honour its mask or score region";
  if (op.getSharedQk())
    return "shared-QK (Reformer) attention has no local form";
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  auto k = cast<RankedTensorType>(op.getKey().getType());
  if (!q.hasStaticShape() || !k.hasStaticShape())
    return "dynamic shapes";
  if (q.getDimSize(2) != k.getDimSize(2))
    return "windows relate positions of one sequence, and queries and keys "
           "differ in length";
  return "";
}

AttentionOp local::rewriteToLocal(RewriterBase &rewriter,
                                  lcc::attn::AttentionOp op,
                                  const DenseToLocalPass &options) {
  rewriter.setInsertionPoint(op);
  auto local = AttentionOp::create(
      rewriter, op.getLoc(), op.getResult().getType(), op.getQuery(),
      op.getKey(), op.getValue(), options.window, options.lookBackward,
      op.getCausal() ? 0 : options.lookForward, op.getCausal(),
      op.getScaleAttr());
  rewriter.replaceOp(op, local.getResult());
  return local;
}

void DenseToLocalPass::runOnOperation() {
  if (window < 1 || lookBackward < 0 || lookForward < 0) {
    getOperation().emitError(
        "local-dense-to-local: expected window >= 1 and look-backward, "
        "look-forward >= 0");
    return signalPassFailure();
  }
  IRRewriter rewriter(&getContext());
  SmallVector<lcc::attn::AttentionOp> ops;
  getOperation().walk([&](lcc::attn::AttentionOp op) { ops.push_back(op); });
  for (lcc::attn::AttentionOp op : ops) {
    std::string why = whyNotLocal(op);
    if (!why.empty()) {
      op.emitRemark("'attn.attention' kept dense: " + why);
      continue;
    }
    op.emitRemark(
        llvm::formatv("'attn.attention' rewritten to local "
                      "attention (window {0}, {1} back, {2} ahead)",
                      static_cast<int64_t>(window),
                      static_cast<int64_t>(lookBackward),
                      op.getCausal() ? 0 : static_cast<int64_t>(lookForward))
            .str());
    rewriteToLocal(rewriter, op, *this);
  }
}
