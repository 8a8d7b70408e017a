//===- KeysAroundRing.cpp - ring attention over a job's ranks -------------===//
//
// Rank r holds queries, keys and values of positions r * S to (r + 1) * S
// (S = seq / P). Step 0 attends its own block (causal on the diagonal
// when the attention is); each later step s passes the keys and values one
// rank on (attn.ring_shift, so rank r then holds rank r - s's block) and
// attends them without a mask, and the partial results are merged by their
// logsumexps in f32. A causal attention sees rank r - s's block only when
// that block comes before this rank's (s <= r): the merge's gate, a
// constant of one value per rank cut to this rank's (attn.rank_slice),
// drops the step elsewhere. The train step differentiates through all of
// it: the shifts pass key and value gradients back around the ring, and
// the merge's gradient reaches each step's logsumexp.
//
//===----------------------------------------------------------------------===//

#include "passes/Parallel/KeysAroundRing.h"

#include "dialects/Attn/IR/AttnOps.h"
#include "passes/Parallel/HeadsOverRanks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

/// One ring step's partial result and logsumexp.
struct Partial {
  Value result, logSumExp;
};

/// This rank's queries attending `keys` and `values`, with the logsumexp
/// the merge weighs the result by.
Partial attendBlock(OpBuilder &b, AttentionOp attention, Value keys,
                    Value values, bool causal, RankedTensorType resultType) {
  RankedTensorType query =
      cast<RankedTensorType>(attention.getQuery().getType());
  auto rows = RankedTensorType::get(
      {query.getDimSize(0), query.getDimSize(1), query.getDimSize(2)},
      query.getElementType());
  auto step = AttentionOp::create(
      b, attention.getLoc(), TypeRange{resultType, rows}, attention.getQuery(),
      keys, values, b.getBoolAttr(causal), attention.getScaleAttr(), UnitAttr(),
      /*modifierCount=*/0);
  return {step.getResult(), step.getLogsumexp()};
}

/// [1] holding 1 on the ranks that see ring step `step` of a causal
/// attention (r >= step) and 0 on the others: a constant of one value per
/// rank, cut to this rank's.
Value causalGate(OpBuilder &b, Location loc, int64_t step, int64_t ranks) {
  SmallVector<float> open;
  for (int64_t rank = 0; rank < ranks; ++rank)
    open.push_back(rank >= step ? 1.0f : 0.0f);
  auto table = RankedTensorType::get({ranks}, b.getF32Type());
  Value perRank = arith::ConstantOp::create(
      b, loc, table, DenseElementsAttr::get(table, ArrayRef<float>(open)));
  return RankSliceOp::create(b, loc, RankedTensorType::get({1}, b.getF32Type()),
                             perRank);
}

} // namespace

LogicalResult parallel::splitKeysAroundRing(AttentionOp attention,
                                            int64_t ranks, Value &share) {
  OpBuilder b(attention);
  Location loc = attention.getLoc();
  RankedTensorType resultType = shareOf(
      cast<RankedTensorType>(attention.getResult().getType()), 2, ranks);
  bool causal = attention.getCausal();
  Partial merged = attendBlock(b, attention, attention.getKey(),
                               attention.getValue(), causal, resultType);
  Value keys = attention.getKey(), values = attention.getValue();
  for (int64_t step = 1; step < ranks; ++step) {
    keys = RingShiftOp::create(b, loc, keys, 1);
    values = RingShiftOp::create(b, loc, values, 1);
    Partial block =
        attendBlock(b, attention, keys, values, /*causal=*/false, resultType);
    Value gate = causal ? causalGate(b, loc, step, ranks) : Value();
    auto merge = MergePartialsOp::create(
        b, loc, TypeRange{resultType, merged.logSumExp.getType()},
        merged.result, merged.logSumExp, block.result, block.logSumExp, gate);
    merged = {merge.getResult(), merge.getLogsumexp()};
  }
  attention.getResult().replaceAllUsesWith(merged.result);
  attention.erase();
  share = merged.result;
  return success();
}
