//===- ToDense.cpp - every attention form back to dense attention ---------===//
//
// --attention=dense: every attention form that stands for a dense attention
// (AttentionFormInterface::buildDenseAttention) becomes it: LSH and routed
// attention the dense attention they approximate, sparse attention (or a
// plugin's form) the masked dense attention it equals. The exact reference
// of a model written with a long-context form, and the "dense" attention
// form, are registered here.
//
//===----------------------------------------------------------------------===//

#include "passes/AttentionForms.h"
#include "passes/forms/dense/DenseForm.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

namespace lcc {
#define GEN_PASS_DEF_TODENSE
#include "passes/forms/dense/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

struct ToDensePass : lcc::impl::ToDenseBase<ToDensePass> {
  using ToDenseBase::ToDenseBase;

  void runOnOperation() override {
    SmallVector<AttentionFormInterface> forms;
    getOperation().walk(
        [&](AttentionFormInterface form) { forms.push_back(form); });
    IRRewriter rewriter(&getContext());
    for (AttentionFormInterface form : forms) {
      rewriter.setInsertionPoint(form);
      std::string description;
      Value dense = form.buildDenseAttention(rewriter, description);
      if (!dense)
        continue; // Dense already, or no dense attention stands for it.
      form->emitRemark() << "'" << form->getName() << "' rewritten to "
                         << description;
      rewriter.replaceOp(form, dense);
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
  form.populateLoweringPatterns = [](RewritePatternSet &patterns,
                                     AttentionTiling tiling) {
    populateDenseAttentionLoweringPatterns(patterns, tiling);
    populateAttentionBackwardLoweringPatterns(patterns, tiling);
  };
  // The backward differentiates score regions; say once which cannot be.
  form.checkLowering = [](Operation *root) {
    WalkResult undifferentiable = root->walk([](AttentionBackwardOp op) {
      Region *score = op.getScoreRegion();
      return score && failed(checkScoreRegionDifferentiable(*score))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    return failure(undifferentiable.wasInterrupted());
  };
  form.opName = AttentionOp::getOperationName();
  form.fillDecodeCaches = fillDenseDecodeCaches;
  form.buildDecodeStep = buildDenseDecodeStep;
  registerAttentionFormOrDie(std::move(form));
  registerDenseFormPasses();
}
