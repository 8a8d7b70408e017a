//===- LowerSparseAttention.cpp - sparse attention as masked attention ----===//
//
// Sparse Transformer attention (DESIGN.md §3) is dense attention masked by
// its pattern, so it lowers as exactly that: the pattern becomes a mask
// region (SparsePatterns.h) and the masked attention takes the flash form
// with tiles of `block` queries and keys. The mask's block table, computed
// at compile time, skips every key tile the pattern hides from a whole query
// tile and leaves unmasked the tiles it shows whole.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/SparsePatterns.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

struct LowerSparseAttention : OpRewritePattern<SparseAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SparseAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    int64_t block = op.getBlock();
    AttentionOp masked = createMaskedAttention(rewriter, op);
    Value result = buildFlashAttention(rewriter, masked, {block, block});
    rewriter.eraseOp(masked);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void lcc::populateSparseAttentionLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerSparseAttention>(patterns.getContext());
}
