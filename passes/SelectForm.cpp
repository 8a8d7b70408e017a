//===- SelectForm.cpp - the --attention=auto policy -----------------------===//
//
// Chooses dense or LSH attention per op from estimated FLOPs and bytes; the
// policy is stated in Passes.td and every choice is reported as a remark.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/FormatVariadic.h"

namespace lcc {
#define GEN_PASS_DEF_SELECTFORM
#include "passes/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

struct Estimate {
  double flops;
  double bytes;
};

Estimate denseEstimate(AttentionOp op) {
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  auto k = cast<RankedTensorType>(op.getKey().getType());
  auto v = cast<RankedTensorType>(op.getValue().getType());
  double b = q.getDimSize(0), h = q.getDimSize(1), sq = q.getDimSize(2),
         sk = k.getDimSize(2), d = q.getDimSize(3), dv = v.getDimSize(3);
  double flops = 2 * b * h * sq * sk * (d + dv) * (op.getCausal() ? 0.5 : 1);
  double bytes = 4 * b * h * (sq * d + sk * d + sk * dv + sq * dv);
  return {flops, bytes};
}

Estimate lshEstimate(AttentionOp op, int64_t nHashes, int64_t bucketSize) {
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  auto v = cast<RankedTensorType>(op.getValue().getType());
  double b = q.getDimSize(0), h = q.getDimSize(1), d = q.getDimSize(3),
         dv = v.getDimSize(3);
  double padded =
      llvm::divideCeil(q.getDimSize(2), 2 * bucketSize) * 2.0 * bucketSize;
  double buckets = padded / bucketSize, rounds = nHashes;
  double flops =
      b * h * rounds * (padded * d * buckets + 8 * padded * bucketSize * d);
  double bytes =
      4 * b * h * (padded * d + 2 * padded * dv + rounds * padded * (dv + 4));
  return {flops, bytes};
}

std::string gigas(double x) { return llvm::formatv("{0:F2}", x / 1e9).str(); }

struct SelectFormPass : lcc::impl::SelectFormBase<SelectFormPass> {
  using SelectFormBase::SelectFormBase;

  void runOnOperation() override {
    if (failed(
            checkOptionRanges(getOperation(), "attn-select-form",
                              {{"lsh-threshold", lshThreshold, 1},
                               {"n-hashes", nHashes, 1, attn::kMaxHashRounds},
                               {"bucket-size", bucketSize, 1},
                               {"memory-budget", memoryBudget, 0},
                               {"seed", seed, 0}})))
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    int64_t next = seed;
    for (AttentionOp op : ops) {
      auto q = cast<RankedTensorType>(op.getQuery().getType());
      if (!q.hasStaticShape()) {
        op.emitRemark("'attn.attention' kept dense: dynamic shapes");
        continue;
      }
      int64_t seq = q.getDimSize(2);
      Estimate dense = denseEstimate(op);
      auto keep = [&](const Twine &why) {
        op.emitRemark() << "'attn.attention' kept dense (" << gigas(dense.flops)
                        << " GFLOP, " << gigas(dense.bytes) << " GB): " << why;
      };
      if (op.hasMaskOrScore()) {
        keep("its mask or score region is honoured by dense (flash) "
             "attention only");
        continue;
      }
      if (!op.getSharedQk()) {
        keep("only shared-QK attention has an automatic long-context form "
             "(LSH)");
        continue;
      }
      if (seq < lshThreshold) {
        keep("seq " + Twine(seq) + " is below the LSH threshold " +
             Twine(static_cast<int64_t>(lshThreshold)));
        continue;
      }
      if (bucketSize > seq) {
        keep("the LSH bucket size " + Twine(static_cast<int64_t>(bucketSize)) +
             " is larger than seq " + Twine(seq));
        continue;
      }
      Estimate lsh = lshEstimate(op, nHashes, bucketSize);
      if (lsh.flops >= dense.flops) {
        keep("LSH would take " + gigas(lsh.flops) + " GFLOP");
        continue;
      }
      if (memoryBudget > 0 && lsh.bytes > memoryBudget) {
        keep("LSH would need " + gigas(lsh.bytes) +
             " GB, over the memory budget of " +
             gigas(static_cast<double>(memoryBudget)) + " GB");
        continue;
      }
      int64_t opSeed = next++;
      op.emitRemark() << "'attn.attention' rewritten to LSH attention ("
                      << static_cast<int64_t>(nHashes) << " hashes, bucket "
                      << static_cast<int64_t>(bucketSize) << ", seed " << opSeed
                      << "): " << gigas(lsh.flops) << " GFLOP and "
                      << gigas(lsh.bytes) << " GB against dense "
                      << gigas(dense.flops) << " GFLOP";
      rewriteToLSH(rewriter, op, nHashes, bucketSize, opSeed);
    }
  }
};

} // namespace
