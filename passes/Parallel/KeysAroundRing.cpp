//===- KeysAroundRing.cpp - ring attention over a job's ranks -------------===//
//
// Rank r holds the queries, keys and values of its share of the positions:
// chunks r and 2P - 1 - r of 2P (HeadsOverRanks.h, zigzag). Step 0 attends
// its own keys; each later step s passes the keys and values one rank on
// (attn.ring_shift, so that rank r then holds rank r - s's) and attends
// them without a mask; the partial results are merged by their logsumexps
// in f32 (attn.merge_partials). The train step differentiates through all
// of it: the shifts pass key and value gradients back around the ring, and
// the merge's gradient reaches each step's logsumexp.
//
// Causal attention on the zigzag shares: the share's two chunks are in
// position order, so step 0 is causal attention on the share as it is.
// At step s the keys are rank r - s's (mod P). If that rank comes first
// (s <= r), its first chunk is before both of this rank's chunks and its
// second after both: both query chunks see the first key chunk whole. If
// it comes later, this rank's first chunk sees nothing and its second sees
// both key chunks whole. Either way the second query chunk sees the first
// key chunk, and one more chunk pair is seen whole (first with first, or
// second with second): two chunk pairs a step on every rank, half of the
// step's keys by queries. Which pair is a rank's own, so the pair is
// chosen by a gate (a constant of one value per rank cut to this rank's:
// attn.rank_slice, attn.gate_select) and merged into the query chunk the
// gate says.
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

RankedTensorType typeOfTensor(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// A partial attention result and its logsumexp.
struct Partial {
  Value result, logSumExp;
};

/// `queries` attending `keys` and `values` as `attention` does (its scale),
/// with the logsumexp the merge weighs the result by.
Partial attendBlock(OpBuilder &b, AttentionOp attention, Value queries,
                    Value keys, Value values, bool causal) {
  RankedTensorType q = typeOfTensor(queries), v = typeOfTensor(values);
  auto result = RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
      q.getElementType());
  auto rows = RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2)}, q.getElementType());
  auto step = AttentionOp::create(
      b, attention.getLoc(), TypeRange{result, rows}, queries, keys, values,
      b.getBoolAttr(causal), attention.getScaleAttr(), UnitAttr(),
      /*modifierCount=*/0);
  return {step.getResult(), step.getLogsumexp()};
}

/// `into` with `block` merged in, counted only where `gate` (when given)
/// holds 1.
Partial merged(OpBuilder &b, Location loc, Partial into, Partial block,
               Value gate = Value()) {
  auto merge = MergePartialsOp::create(
      b, loc, TypeRange{into.result.getType(), into.logSumExp.getType()},
      into.result, into.logSumExp, block.result, block.logSumExp, gate);
  return {merge.getResult(), merge.getLogsumexp()};
}

/// [1] holding `open(rank)` (1 or 0) on each rank: a constant of one value
/// per rank, cut to this rank's.
Value rankGate(OpBuilder &b, Location loc, int64_t ranks,
               function_ref<bool(int64_t)> open) {
  SmallVector<float> values;
  for (int64_t rank = 0; rank < ranks; ++rank)
    values.push_back(open(rank) ? 1.0f : 0.0f);
  auto table = RankedTensorType::get({ranks}, b.getF32Type());
  Value perRank = arith::ConstantOp::create(
      b, loc, table, DenseElementsAttr::get(table, ArrayRef<float>(values)));
  return RankSliceOp::create(b, loc, RankedTensorType::get({1}, b.getF32Type()),
                             perRank);
}

/// Half `half` of a share's positions (axis 2) of a result or logsumexp.
Partial halfOf(OpBuilder &b, Location loc, Partial whole, int64_t half) {
  return {parallel::chunkOf(b, loc, whole.result, 2, half, 2),
          parallel::chunkOf(b, loc, whole.logSumExp, 2, half, 2)};
}

/// Every block attended whole, every step counted: no order among keys.
Value ringWithoutMask(OpBuilder &b, AttentionOp attention, int64_t ranks) {
  Location loc = attention.getLoc();
  Value queries = attention.getQuery(), keys = attention.getKey(),
        values = attention.getValue();
  Partial result = attendBlock(b, attention, queries, keys, values, false);
  for (int64_t step = 1; step < ranks; ++step) {
    keys = RingShiftOp::create(b, loc, keys, 1);
    values = RingShiftOp::create(b, loc, values, 1);
    result = merged(b, loc, result,
                    attendBlock(b, attention, queries, keys, values, false));
  }
  return result.result;
}

/// Causal, on zigzag shares (the file's comment).
Value causalRing(OpBuilder &b, AttentionOp attention, int64_t ranks) {
  Location loc = attention.getLoc();
  Value queries = attention.getQuery(), keys = attention.getKey(),
        values = attention.getValue();
  Partial own = attendBlock(b, attention, queries, keys, values, true);
  Partial early = halfOf(b, loc, own, 0), late = halfOf(b, loc, own, 1);
  Value earlyQueries = parallel::chunkOf(b, loc, queries, 2, 0, 2);
  Value lateQueries = parallel::chunkOf(b, loc, queries, 2, 1, 2);
  for (int64_t step = 1; step < ranks; ++step) {
    keys = RingShiftOp::create(b, loc, keys, 1);
    values = RingShiftOp::create(b, loc, values, 1);
    Value earlyKeys = parallel::chunkOf(b, loc, keys, 2, 0, 2);
    Value lateKeys = parallel::chunkOf(b, loc, keys, 2, 1, 2);
    Value earlyValues = parallel::chunkOf(b, loc, values, 2, 0, 2);
    Value lateValues = parallel::chunkOf(b, loc, values, 2, 1, 2);
    // This rank's late chunk sees the block's early chunk on every rank.
    late = merged(
        b, loc, late,
        attendBlock(b, attention, lateQueries, earlyKeys, earlyValues, false));
    // The block's rank comes first (step <= rank): early sees early;
    // otherwise late sees late.
    Value first = rankGate(b, loc, ranks, [&](int64_t r) { return step <= r; });
    Value later = rankGate(b, loc, ranks, [&](int64_t r) { return step > r; });
    auto choose = [&](Value onFirst, Value onLater) -> Value {
      return GateSelectOp::create(b, loc, first, onFirst, onLater);
    };
    Partial pair = attendBlock(b, attention, choose(earlyQueries, lateQueries),
                               choose(earlyKeys, lateKeys),
                               choose(earlyValues, lateValues), false);
    early = merged(b, loc, early, pair, first);
    late = merged(b, loc, late, pair, later);
  }
  return tensor::ConcatOp::create(b, loc, 2,
                                  ValueRange{early.result, late.result});
}

} // namespace

LogicalResult parallel::splitKeysAroundRing(AttentionOp attention,
                                            int64_t ranks, Value &share) {
  OpBuilder b(attention);
  share = attention.getCausal() ? causalRing(b, attention, ranks)
                                : ringWithoutMask(b, attention, ranks);
  attention.getResult().replaceAllUsesWith(share);
  attention.erase();
  return success();
}
