//===- ExpandRingAttention.cpp - ring attention in exchanges and blocks ---===//
//
// attn-expand-ring-attention (the first pass of lowering to linalg): each
// attn.ring_attention and attn.ring_attention_backward that context
// parallelism and the train step left is written out as the exchanges
// (attn.ring_shift, attn.rank_slice), the attention on blocks and the
// merges that compute it (KeysAroundRing.h).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/Attn/IR/AttnOps.h"
#include "passes/Parallel/KeysAroundRing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace lcc {
#define GEN_PASS_DEF_EXPANDRINGATTENTION
#include "passes/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

struct ExpandRingAttentionPass
    : lcc::impl::ExpandRingAttentionBase<ExpandRingAttentionPass> {
  void runOnOperation() override {
    SmallVector<Operation *> rings;
    getOperation().walk([&](Operation *op) {
      if (isa<RingAttentionOp, RingAttentionBackwardOp>(op))
        rings.push_back(op);
    });
    for (Operation *op : rings) {
      OpBuilder b(op);
      if (auto ring = dyn_cast<RingAttentionOp>(op)) {
        auto [result, logSumExp] = parallel::expandRingAttention(b, ring);
        ring.getResult().replaceAllUsesWith(result);
        if (Value lse = ring.getLogsumexp())
          lse.replaceAllUsesWith(logSumExp);
      } else {
        auto backward = cast<RingAttentionBackwardOp>(op);
        SmallVector<Value> grads =
            parallel::expandRingAttentionBackward(b, backward);
        for (auto [old, grad] : llvm::zip_equal(backward.getResults(), grads))
          old.replaceAllUsesWith(grad);
      }
      op->erase();
    }
  }
};

} // namespace
