//===- DenseToSparse.cpp - dense attention to Sparse Transformer ----------===//
//
// Rewrites attn.attention into attn.sparse_attention. The rewrite changes
// the result (a masked attention), so it only runs when asked, and it
// reports each op it rewrites or keeps.
//
//===----------------------------------------------------------------------===//

#include "passes/AttentionForms.h"
#include "passes/forms/sparse/SparseForm.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace lcc {
#define GEN_PASS_DEF_DENSETOSPARSE
#include "passes/forms/sparse/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

/// Rewrites one attention, or says why it keeps it dense. Fails (with an
/// error) only for options that cannot describe a valid sparse attention.
LogicalResult rewrite(IRRewriter &rewriter, AttentionOp op,
                      const SparseAttentionOptions &options) {
  auto qType = cast<RankedTensorType>(op.getQuery().getType());
  auto kType = cast<RankedTensorType>(op.getKey().getType());
  if (op.hasMaskOrScore()) {
    op.emitRemark("'attn.attention' kept dense: it has its own mask or score "
                  "region, which the Sparse Transformer patterns would "
                  "replace");
    return success();
  }
  if (op.getSharedQk()) {
    op.emitRemark(
        "'attn.attention' kept dense: shared-QK (Reformer) attention has no "
        "Sparse Transformer form; its long-context form is LSH");
    return success();
  }
  int64_t seq = qType.getDimSize(2);
  if (ShapedType::isDynamic(seq) || seq != kType.getDimSize(2)) {
    op.emitRemark("'attn.attention' kept dense: the sparse patterns relate "
                  "positions of one "
                  "sequence, and queries and keys differ in length");
    return success();
  }
  int64_t stride = options.stride ? options.stride : nearestPowerOfTwoSqrt(seq);
  if (stride > seq)
    return op.emitError() << "'attn.attention' cannot take sparse stride "
                          << stride << ": it exceeds the sequence length "
                          << seq;
  bool fixed = options.pattern == SparsePattern::Fixed;
  int64_t summary =
      options.summary ? options.summary : std::max<int64_t>(1, stride / 4);
  if (fixed && summary > stride)
    return op.emitError() << "'attn.attention' cannot take sparse summary "
                          << summary << ": it exceeds the stride " << stride;

  rewriter.setInsertionPoint(op);
  auto sparse = SparseAttentionOp::create(
      rewriter, op.getLoc(), op.getResult().getType(), options.pattern,
      op.getQuery(), op.getKey(), op.getValue(), options.block, stride,
      fixed ? rewriter.getI64IntegerAttr(summary) : IntegerAttr(),
      op.getCausal(), op.getScaleAttr());
  InFlightDiagnostic remark = op.emitRemark()
                              << "'attn.attention' rewritten to sparse "
                                 "attention ("
                              << stringifySparsePattern(options.pattern)
                              << ", stride " << stride;
  if (fixed)
    remark << ", summary " << summary;
  remark << ", block " << options.block << ")";
  rewriter.replaceOp(op, sparse.getResult());
  return success();
}

struct DenseToSparsePass : lcc::impl::DenseToSparseBase<DenseToSparsePass> {
  using DenseToSparseBase::DenseToSparseBase;

  void runOnOperation() override {
    std::optional<SparsePattern> parsed = symbolizeSparsePattern(pattern);
    if (!parsed) {
      getOperation().emitError()
          << "attn-dense-to-sparse: unknown pattern '" << pattern
          << "'; expected 'strided' or 'fixed'";
      return signalPassFailure();
    }
    if (failed(checkOptionRanges(getOperation(), "attn-dense-to-sparse",
                                 {{knobs::kSparseBlock, block},
                                  {knobs::kSparseStride, stride},
                                  {knobs::kSparseSummary, summary}})))
      return signalPassFailure();
    SparseAttentionOptions options{*parsed, block, stride, summary};
    IRRewriter rewriter(&getContext());
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    for (AttentionOp op : ops)
      if (failed(rewrite(rewriter, op, options)))
        return signalPassFailure();
  }
};

} // namespace

void lcc::registerSparseAttentionForm() {
  AttentionFormDefinition form;
  form.takesFormOptions = false;
  form.name = "sparse";
  form.flags = {knobs::kSparsePattern, knobs::kSparseBlock,
                knobs::kSparseStride, knobs::kSparseSummary};
  form.summary =
      "Sparse Transformer fixed or strided attention (--sparse-*); never "
      "chosen by auto: its pattern changes what a model sees";
  form.addRewritePasses = [](OpPassManager &pm,
                             const AttentionFormOptions &options,
                             llvm::raw_ostream &) {
    DenseToSparseOptions pass;
    pass.pattern = options.get(knobs::kSparsePattern).str();
    pass.block = options.get(knobs::kSparseBlock);
    pass.stride = options.get(knobs::kSparseStride);
    pass.summary = options.get(knobs::kSparseSummary);
    pm.addPass(createDenseToSparse(pass));
    return success();
  };
  form.populateLoweringPatterns = [](RewritePatternSet &patterns,
                                     AttentionTiling) {
    populateSparseAttentionLoweringPatterns(patterns);
  };
  form.opName = SparseAttentionOp::getOperationName();
  form.fillDecodeCaches = fillSparseDecodeCaches;
  form.buildDecodeStep = buildSparseDecodeStep;
  registerAttentionFormOrDie(std::move(form));
  registerSparseFormPasses();
}
