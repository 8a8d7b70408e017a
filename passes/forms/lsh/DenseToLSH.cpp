//===- DenseToLSH.cpp - shared-QK attention to Reformer LSH ---------------===//
//
// Rewrites shared-QK attn.attention into attn.lsh_attention. LSH changes
// the result (an approximation), so the rewrite runs only when asked and
// reports each op it rewrites or keeps. The "lsh" attention form (its
// rewrite, lowering and cost for --attention=auto) is registered here.
//
//===----------------------------------------------------------------------===//

#include "passes/AttentionForms.h"
#include "passes/forms/lsh/LSHForm.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/FormatVariadic.h"

namespace lcc {
#define GEN_PASS_DEF_DENSETOLSH
#include "passes/forms/lsh/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

FailureOr<bool> lcc::lshFactorizedHash(StringRef mode, int64_t seq,
                                       int64_t bucketSize,
                                       std::string &whyNot) {
  int64_t buckets = lshBucketCount(seq, bucketSize);
  bool factors = lshHashFactors(buckets).has_value();
  if (mode == "plain")
    return false;
  if (mode == "auto")
    return factors && buckets >= kFactorizedHashBuckets;
  if (mode != "factorized") {
    whyNot = checkKnob(knobs::kLSHHash, "LSH hash", mode);
    return failure();
  }
  if (!factors) {
    whyNot = llvm::formatv("factorized LSH hashing needs n_buckets (padded "
                           "seq / bucket size) a multiple of 4, got {0}",
                           buckets);
    return failure();
  }
  return true;
}

attn::LSHAttentionOp lcc::rewriteToLSH(RewriterBase &rewriter,
                                       attn::AttentionOp op, int64_t nHashes,
                                       int64_t bucketSize, int64_t seed,
                                       bool factorizedHash) {
  rewriter.setInsertionPoint(op);
  auto lsh =
      LSHAttentionOp::create(rewriter, op.getLoc(), op.getResult().getType(),
                             op.getQuery(), op.getValue(), nHashes, bucketSize,
                             op.getCausal(), seed, op.getScaleAttr(),
                             /*chunks=*/1, /*factorized_hash=*/false,
                             /*n_buckets=*/nullptr);
  if (factorizedHash)
    lsh.setFactorizedHash(true);
  rewriter.replaceOp(op, lsh.getResult());
  return lsh;
}

namespace {

struct DenseToLSHPass : lcc::impl::DenseToLSHBase<DenseToLSHPass> {
  using DenseToLSHBase::DenseToLSHBase;

  void runOnOperation() override {
    if (failed(checkOptionRanges(getOperation(), "attn-dense-to-lsh",
                                 {{knobs::kLSHHashes, nHashes},
                                  {knobs::kLSHBucketSize, bucketSize},
                                  {knobs::kSeed, seed}})))
      return signalPassFailure();
    if (std::string problem = checkKnob(knobs::kLSHHash, "hash", hash);
        !problem.empty()) {
      getOperation().emitError() << "attn-dense-to-lsh: " << problem;
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    int64_t next = seed;
    for (AttentionOp op : ops) {
      if (op.hasMaskOrScore()) {
        op.emitRemark("'attn.attention' kept dense: LSH attention cannot "
                      "honour its mask or score region");
        continue;
      }
      // LSH hashes one set of vectors as both queries and keys.
      if (!op.getSharedQk()) {
        op.emitRemark("'attn.attention' kept dense: LSH attention needs "
                      "shared queries and keys (shared_qk)");
        continue;
      }
      int64_t seq =
          cast<RankedTensorType>(op.getQuery().getType()).getDimSize(2);
      if (!ShapedType::isDynamic(seq) && bucketSize > seq) {
        // Every chunk would attend to the whole padded sequence: slower
        // than dense attention, and no approximation of it worth having.
        op.emitError() << "'attn.attention' cannot become LSH attention "
                          "with bucket size "
                       << static_cast<int64_t>(bucketSize)
                       << ": its sequence has only " << seq
                       << " tokens; give a bucket size of at most " << seq;
        return signalPassFailure();
      }
      std::string whyNot;
      FailureOr<bool> factorized =
          lshFactorizedHash(hash, seq, bucketSize, whyNot);
      if (failed(factorized)) {
        op.emitError() << "'attn.attention' cannot become LSH attention: "
                       << whyNot;
        return signalPassFailure();
      }
      int64_t opSeed = next++;
      op.emitRemark() << "'attn.attention' rewritten to LSH attention ("
                      << static_cast<int64_t>(nHashes) << " hashes, bucket "
                      << static_cast<int64_t>(bucketSize) << ", seed " << opSeed
                      << (*factorized ? ", factorized hash" : "") << ")";
      rewriteToLSH(rewriter, op, nHashes, bucketSize, opSeed, *factorized);
    }
  }
};

} // namespace

namespace {

/// LSH's FLOPs: hashing (a projection onto n_buckets / 2 rotations per
/// round) and the chunks with their look-back; bytes: the operands, the
/// per-round outputs and the bucket, sort and inverse indices.
AttentionCost lshCost(AttentionOp op, int64_t nHashes, int64_t bucketSize,
                      bool factorizedHash) {
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  auto v = cast<RankedTensorType>(op.getValue().getType());
  double b = q.getDimSize(0), h = q.getDimSize(1), d = q.getDimSize(3),
         dv = v.getDimSize(3);
  // The op rewriteToLSH builds: one bucket per chunk.
  int64_t bucketCount = lshBucketCount(q.getDimSize(2), bucketSize);
  double buckets = bucketCount, rounds = nHashes;
  double padded =
      double(lshChunkCount(q.getDimSize(2), bucketSize)) * double(bucketSize);
  double columns = buckets / 2;
  if (factorizedHash) {
    auto factors = lshHashFactors(bucketCount);
    columns = (factors->first + factors->second) / 2.0;
  }
  double flops =
      b * h * rounds * (2 * padded * d * columns + 8 * padded * bucketSize * d);
  double bytes =
      4 * b * h * (padded * d + 2 * padded * dv + rounds * padded * (dv + 4));
  return {flops, bytes};
}

FailureOr<AttentionCost> estimateLSH(AttentionOp op,
                                     const AttentionFormOptions &options,
                                     std::string &whyNot) {
  if (!op.getSharedQk()) {
    whyNot = "only shared-QK attention has an automatic long-context form "
             "(LSH)";
    return failure();
  }
  int64_t seq = cast<RankedTensorType>(op.getQuery().getType()).getDimSize(2);
  int64_t threshold = options.get(knobs::kLSHThreshold);
  if (seq < threshold) {
    whyNot = llvm::formatv("seq {0} is below the LSH threshold {1}", seq,
                           threshold);
    return failure();
  }
  int64_t bucketSize = options.get(knobs::kLSHBucketSize);
  if (bucketSize > seq) {
    whyNot = llvm::formatv("the LSH bucket size {0} is larger than seq {1}",
                           bucketSize, seq);
    return failure();
  }
  FailureOr<bool> factorized = lshFactorizedHash(
      options.get(knobs::kLSHHash), seq, bucketSize, whyNot);
  if (failed(factorized))
    return failure();
  return lshCost(op, options.get(knobs::kLSHHashes), bucketSize, *factorized);
}

} // namespace

void lcc::registerLSHAttentionForm() {
  AttentionFormDefinition form;
  form.takesFormOptions = false;
  form.name = "lsh";
  form.flags = {knobs::kLSHHashes, knobs::kLSHBucketSize, knobs::kLSHHash,
                knobs::kLSHThreshold};
  form.summary = "Reformer LSH attention of shared-QK attention (--lsh-*)";
  form.title = "LSH";
  form.addRewritePasses = [](OpPassManager &pm,
                             const AttentionFormOptions &options,
                             llvm::raw_ostream &) {
    DenseToLSHOptions pass;
    pass.nHashes = options.get(knobs::kLSHHashes);
    pass.bucketSize = options.get(knobs::kLSHBucketSize);
    pass.seed = options.seed;
    pass.hash = options.get(knobs::kLSHHash).str();
    pm.addPass(createDenseToLSH(pass));
    return success();
  };
  form.populateLoweringPatterns = [](RewritePatternSet &patterns,
                                     AttentionTiling) {
    populateLSHAttentionLoweringPatterns(patterns);
    populateLSHAttentionBackwardLoweringPatterns(patterns);
  };
  form.checkLowering = checkLSHAttentionLowering;
  form.estimateCost = estimateLSH;
  form.rewrite = [](RewriterBase &rewriter, AttentionOp op,
                    const AttentionFormOptions &options, int64_t seed) {
    int64_t seq = cast<RankedTensorType>(op.getQuery().getType()).getDimSize(2);
    int64_t nHashes = options.get(knobs::kLSHHashes);
    int64_t bucketSize = options.get(knobs::kLSHBucketSize);
    std::string whyNot;
    // estimateLSH has accepted the mode for this op.
    FailureOr<bool> hash = lshFactorizedHash(options.get(knobs::kLSHHash), seq,
                                             bucketSize, whyNot);
    bool factorized = succeeded(hash) && *hash;
    rewriteToLSH(rewriter, op, nHashes, bucketSize, seed, factorized);
    return llvm::formatv("LSH attention ({0} hashes, bucket {1}, seed {2}{3})",
                         nHashes, bucketSize, seed,
                         factorized ? ", factorized hash" : "")
        .str();
  };
  form.opName = attn::LSHAttentionOp::getOperationName();
  form.fillDecodeCaches = fillLSHDecodeCaches;
  form.buildDecodeStep = buildLSHDecodeStep;
  form.buildKeySelectionProbe = buildLSHKeySelectionProbe;
  registerAttentionFormOrDie(std::move(form));
  registerLSHFormPasses();
}
