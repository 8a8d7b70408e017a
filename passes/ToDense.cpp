//===- ToDense.cpp - every attention form back to dense attention ---------===//
//
// --attention=dense: LSH and routed attention become the dense attention
// they approximate, sparse attention the masked dense attention it equals.
// The exact reference of a model written with a long-context form, and the
// "dense" attention form, are registered here.
//
//===----------------------------------------------------------------------===//

#include "passes/AttentionForms.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/Passes.h"
#include "passes/SparsePatterns.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

namespace lcc {
#define GEN_PASS_DEF_TODENSE
#include "passes/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

void replaceByDense(IRRewriter &rewriter, Operation *op, AttentionOp dense,
                    StringRef what) {
  op->emitRemark() << "'" << op->getName() << "' rewritten to " << what;
  rewriter.replaceOp(op, dense.getResult());
}

struct ToDensePass : lcc::impl::ToDenseBase<ToDensePass> {
  using ToDenseBase::ToDenseBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<LSHAttentionOp, SparseAttentionOp, RoutedAttentionOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      Type type = op->getResult(0).getType();
      if (auto lsh = dyn_cast<LSHAttentionOp>(op)) {
        auto dense = AttentionOp::create(
            rewriter, op->getLoc(), type, lsh.getQueryKey(), lsh.getQueryKey(),
            lsh.getValue(), lsh.getCausal(), lsh.getScaleAttr(),
            /*shared_qk=*/true, /*modifiersCount=*/2);
        replaceByDense(rewriter, op, dense,
                       "the shared-QK dense attention it approximates");
      } else if (auto sparse = dyn_cast<SparseAttentionOp>(op)) {
        replaceByDense(rewriter, op, createMaskedAttention(rewriter, sparse),
                       "dense attention with its pattern as mask region "
                       "(the same result)");
      } else if (auto routed = dyn_cast<RoutedAttentionOp>(op)) {
        auto dense = AttentionOp::create(
            rewriter, op->getLoc(), type, routed.getQuery(), routed.getKey(),
            routed.getValue(), routed.getCausal(), routed.getScaleAttr(),
            /*shared_qk=*/false, /*modifiersCount=*/2);
        replaceByDense(rewriter, op, dense,
                       "the dense attention it approximates");
      }
    }
  }
};

} // namespace

void lcc::registerDenseAttentionForm() {
  AttentionFormDefinition form;
  form.takesFormOptions = false;
  form.name = "dense";
  form.summary = "exact dense (flash) attention: LSH and routed attention "
                 "become the attention they approximate, sparse the masked "
                 "attention it equals";
  form.addRewritePasses = [](OpPassManager &pm, const AttentionFormOptions &,
                             llvm::raw_ostream &) {
    pm.addPass(createToDense());
    return success();
  };
  form.populateLoweringPatterns = populateDenseAttentionLoweringPatterns;
  registerAttentionFormOrDie(std::move(form));
}
