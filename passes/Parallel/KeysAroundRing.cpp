//===- KeysAroundRing.cpp - ring attention over a job's ranks -------------===//
//
// Rank r holds the queries, keys and values of its share of the positions:
// chunks r and 2P - 1 - r of 2P (HeadsOverRanks.h, zigzag). Step 0 attends
// its own keys; each later step s passes the keys and values one rank on
// (attn.ring_shift, so that rank r then holds rank r - s's) and attends
// them without a mask; the partial results are merged by their logsumexps
// in f32 (attn.merge_partials).
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
// Mask and score regions (and causality with them) see positions in the
// whole sequence: each step's attention gets where its queries and the
// block's keys sit (attn.attention's `positions`, a constant per rank cut
// to this rank's), and compares them per score. The chunk pairs a rank's
// keys hide from its queries are then key tiles its block table (one per
// rank, computed when compiling) says are never read, so each step is one
// attention whatever the mask.
//
// Relative (Transformer-XL) and adaptive-span attention count distances
// between a query and a key, and a share's two chunks are not adjacent:
// each step attends pairs of a query chunk and a key chunk, each as the
// form with its queries placed at the two chunks' distance (the form's
// query_offset, a constant per rank cut to this rank's), merged into the
// query chunk's partial result. A share's early chunk (r) comes before
// every rank's late chunk (2P - 1 - r' >= P), so a causal form never
// attends early queries to late keys: three pairs a step, else four. The
// pairs causality or a span hides on a rank visit no tile (the form's
// run-time tile skipping), so the zigzag shares keep every rank's work the
// same.
//
// The backward (as ring-flash-attention does it) keeps only the forward's
// operands, result and logsumexp: it passes the keys and values around
// again, the other way (shifts by -1, steps P - 1 down to 1: no shift the
// forward made, so none of the forward's blocks is kept for it), and runs
// each block's flash backward with the whole sequence's result and
// logsumexp, whose probabilities exp(s - L) and delta (do · o) are those
// of attention over every key; each block's key and value gradients go
// straight back to the rank that holds the block.
//
//===----------------------------------------------------------------------===//

#include "passes/Parallel/KeysAroundRing.h"

#include "dialects/Attn/IR/AttnInterfaces.h"
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

/// A share's two chunks (axis 2) of a [batch, heads, share, ...] tensor.
struct Halves {
  Value early, late;
};

/// The steps of one ring attention's expansion at `b`.
struct Ring {
  OpBuilder &b;
  Location loc;
  FloatAttr scale;
  int64_t ranks;
  /// The ring op's mask and score regions, copied into each step's
  /// attention (none: no regions).
  MutableArrayRef<Region> modifiers = {};
  /// The form each step attends with when it is not attn.attention: its
  /// op's name, attributes and operands after query, key and value.
  StringAttr form = {};
  DictionaryAttr formAttributes = {};
  ValueRange formOperands = {};
  /// Whether the form is causal.
  bool causal = false;

  /// Where each position of rank `rank`'s share sits in the sequence
  /// (`share` positions: its two chunks, in order).
  static SmallVector<int64_t> sharePositions(int64_t rank, int64_t ranks,
                                             int64_t share) {
    SmallVector<int64_t> positions;
    int64_t chunk = share / 2;
    for (int64_t half : {0, 1})
      for (int64_t i = 0; i < chunk; ++i)
        positions.push_back(parallel::chunkOfShare(rank, half, ranks) * chunk +
                            i);
    return positions;
  }
  /// The rank whose keys and values rank `rank` holds `step` steps into
  /// the ring.
  int64_t holderAt(int64_t rank, int64_t step) const {
    return (rank - step + ranks) % ranks;
  }
  /// This rank's row of a constant of one row of `rowShape` per rank
  /// (`values`, rank 0's first), cut by attn.rank_slice: [1, rowShape...].
  template <typename T>
  Value thisRanksRow(ArrayRef<T> values, ArrayRef<int64_t> rowShape,
                     Type elementType) {
    SmallVector<int64_t> shape = {ranks};
    llvm::append_range(shape, rowShape);
    auto table = RankedTensorType::get(shape, elementType);
    Value perRank = arith::ConstantOp::create(
        b, loc, table, DenseElementsAttr::get(table, values));
    shape[0] = 1;
    return RankSliceOp::create(
        b, loc, RankedTensorType::get(shape, elementType), perRank);
  }

  /// The positions of the keys rank r holds `step` steps into the ring
  /// (rank r - step's), of `share` positions: a constant of one row per
  /// rank, cut to this rank's.
  Value blockPositions(int64_t step, int64_t share) {
    SmallVector<int64_t> rows;
    for (int64_t rank = 0; rank < ranks; ++rank)
      llvm::append_range(rows,
                         sharePositions(holderAt(rank, step), ranks, share));
    Value mine = thisRanksRow<int64_t>(rows, {share}, b.getI64Type());
    return tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({share}, b.getI64Type()), mine,
        ArrayRef<ReassociationIndices>{{0, 1}});
  }
  /// The query positions and step `step`'s key positions, when the steps
  /// place their scores (regions); else none.
  SmallVector<Value> placed(Value queries, int64_t step) {
    if (modifiers.empty())
      return {};
    int64_t share = typeOfTensor(queries).getDimSize(2);
    if (!queryPositions)
      queryPositions = blockPositions(0, share);
    return {queryPositions, blockPositions(step, share)};
  }
  /// The queries' positions, made by the first step that places them.
  Value queryPositions = {};

  Halves halves(Value v) {
    return {parallel::chunkOf(b, loc, v, 2, 0, 2),
            parallel::chunkOf(b, loc, v, 2, 1, 2)};
  }
  Value joined(Value early, Value late) {
    return tensor::ConcatOp::create(b, loc, 2, ValueRange{early, late});
  }
  Value shifted(Value v, int64_t offset) {
    return RingShiftOp::create(b, loc, v, offset);
  }
  Value sum(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }

  /// `queries` attending `keys` and `values`, with the logsumexp the merge
  /// weighs the result by.
  /// With `positions` (placed()), the scores sit there, and the ring's
  /// regions read them.
  Partial attend(Value queries, Value keys, Value values, bool causal,
                 ValueRange positions = {}) {
    RankedTensorType q = typeOfTensor(queries), v = typeOfTensor(values);
    auto result = RankedTensorType::get(
        {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
        q.getElementType());
    auto rows = RankedTensorType::get(
        {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2)},
        q.getElementType());
    auto step = AttentionOp::create(b, loc, TypeRange{result, rows}, queries,
                                    keys, values, positions,
                                    b.getBoolAttr(causal), scale, UnitAttr(),
                                    positions.empty() ? 0 : modifiers.size());
    if (!positions.empty())
      copyModifiers(modifiers, step);
    return {step.getResult(), step.getLogsumexp()};
  }

  /// The flash backward of `queries` attending `keys` and `values`, from
  /// the whole sequence's `result`, `logSumExp` and `resultGrad` at these
  /// queries: the query, key and value gradients of this block.
  std::array<Value, 3> attendBackward(Value queries, Value keys, Value values,
                                      Value result, Value logSumExp,
                                      Value resultGrad, bool causal,
                                      ValueRange positions = {}) {
    auto backward = AttentionBackwardOp::create(
        b, loc, TypeRange{queries.getType(), keys.getType(), values.getType()},
        queries, keys, values, result, logSumExp, resultGrad, Value(),
        positions, b.getBoolAttr(causal), scale, UnitAttr(),
        positions.empty() ? 0 : modifiers.size());
    if (!positions.empty())
      copyModifiers(modifiers, backward);
    return {backward.getQueryGrad(), backward.getKeyGrad(),
            backward.getValueGrad()};
  }

  /// `into` with `block` merged in, counted only where `gate` (when given)
  /// holds 1.
  Partial merged(Partial into, Partial block, Value gate = Value()) {
    auto merge = MergePartialsOp::create(
        b, loc, TypeRange{into.result.getType(), into.logSumExp.getType()},
        into.result, into.logSumExp, block.result, block.logSumExp, gate);
    return {merge.getResult(), merge.getLogsumexp()};
  }

  /// [1] holding 1 on the ranks where the keys of ring step `step` come
  /// from a rank before this one (step <= r), else 0; with `later`, the
  /// other way round. A constant of one value per rank, cut to this
  /// rank's.
  Value blockComesFirst(int64_t step, bool later = false) {
    SmallVector<float> values;
    for (int64_t rank = 0; rank < ranks; ++rank)
      values.push_back((step <= rank) != later ? 1.0f : 0.0f);
    return thisRanksRow<float>(values, {}, b.getF32Type());
  }
  /// How far chunk `queryHalf` of this rank's share sits after chunk
  /// `keyHalf` of the block `step` steps around (rank r - step's), in
  /// positions, chunks `chunk` long: a constant of one value per rank (a
  /// 0-d i32), cut to this rank's.
  Value chunkDistance(int64_t step, int64_t queryHalf, int64_t keyHalf,
                      int64_t chunk) {
    SmallVector<int32_t> perRank;
    for (int64_t rank = 0; rank < ranks; ++rank)
      perRank.push_back(static_cast<int32_t>(
          (parallel::chunkOfShare(rank, queryHalf, ranks) -
           parallel::chunkOfShare(holderAt(rank, step), keyHalf, ranks)) *
          chunk));
    Type i32 = b.getI32Type();
    Value mine = thisRanksRow<int32_t>(perRank, {}, i32);
    return tensor::CollapseShapeOp::create(b, loc,
                                           RankedTensorType::get({}, i32), mine,
                                           ArrayRef<ReassociationIndices>{});
  }

  /// `queries` attending `keys` and `values` with the ring's form, the
  /// queries placed `queryOffset` positions after the first key; with the
  /// logsumexp (the form's second result) the merge weighs it by.
  Partial attendWithForm(Value queries, Value keys, Value values,
                         Value queryOffset) {
    RankedTensorType q = typeOfTensor(queries), v = typeOfTensor(values);
    OperationState state(loc, form.getValue());
    state.addOperands({queries, keys, values});
    state.addOperands(formOperands);
    state.addOperands(queryOffset);
    state.addTypes({RankedTensorType::get({q.getDimSize(0), q.getDimSize(1),
                                           q.getDimSize(2), v.getDimSize(3)},
                                          q.getElementType()),
                    RankedTensorType::get(
                        {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2)},
                        q.getElementType())});
    state.addAttributes(formAttributes.getValue());
    Operation *step = b.create(state);
    return {step->getResult(0), step->getResult(1)};
  }

  /// The form's backward of such a step, from the whole sequence's
  /// `result`, `logSumExp` and `resultGrad` at these queries: the query,
  /// key and value gradients, then the form operands'.
  SmallVector<Value> attendWithFormBackward(Value queries, Value keys,
                                            Value values, Value result,
                                            Value logSumExp, Value resultGrad,
                                            Value queryOffset) {
    OperationState state(loc, (form.getValue() + "_backward").str());
    state.addOperands({queries, keys, values});
    state.addOperands(formOperands);
    state.addOperands({result, logSumExp, resultGrad, queryOffset});
    state.addTypes({queries.getType(), keys.getType(), values.getType()});
    state.addTypes(formOperands.getTypes());
    state.addAttributes(formAttributes.getValue());
    return SmallVector<Value>(b.create(state)->getResults());
  }

  Value choose(Value gate, Value whenFirst, Value otherwise) {
    return GateSelectOp::create(b, loc, gate, whenFirst, otherwise);
  }
  /// `v` where `gate` holds 1, zeros elsewhere.
  Value onlyWhen(Value gate, Value v) {
    return choose(gate, v, splatLike(b, loc, v, 0.0));
  }
};

/// Visits the rank's own block (step 0) and each block the ring brings it:
/// forward, step s holds rank r - s's keys and values (shifts by 1); with
/// `backward`, they come the other way (shifts by -1: rank r + 1's, the
/// forward's step P - 1, first). The next block's shift is issued before
/// the current block is visited, so that its transfer runs behind the
/// block's attention (the runtime waits for it where the block is read).
void forEachBlock(Ring &ring, Value keys, Value values, bool backward,
                  function_ref<void(int64_t, Value, Value)> visit) {
  for (int64_t t = 0; t < ring.ranks; ++t) {
    Value nextKeys, nextValues;
    if (t + 1 < ring.ranks) {
      nextKeys = ring.shifted(keys, backward ? -1 : 1);
      nextValues = ring.shifted(values, backward ? -1 : 1);
    }
    visit(backward && t > 0 ? ring.ranks - t : t, keys, values);
    keys = nextKeys;
    values = nextValues;
  }
}

/// Every block attended whole, every step counted: no order among keys.
/// With regions (`placed`), each block at its positions, the regions and
/// causality reading them (the file's comment).
Partial wholeBlocksRing(Ring &ring, Value queries, Value keys, Value values,
                        bool causal) {
  Partial result;
  forEachBlock(ring, keys, values, /*backward=*/false,
               [&](int64_t step, Value k, Value v) {
                 Partial block = ring.attend(queries, k, v, causal,
                                             ring.placed(queries, step));
                 result = step == 0 ? block : ring.merged(result, block);
               });
  return result;
}

/// Causal, on zigzag shares (the file's comment).
Partial causalRing(Ring &ring, Value queries, Value keys, Value values) {
  Halves q = ring.halves(queries);
  Partial early, late;
  forEachBlock(
      ring, keys, values, /*backward=*/false,
      [&](int64_t step, Value keys, Value values) {
        if (step == 0) {
          Partial own = ring.attend(queries, keys, values, true);
          Halves results = ring.halves(own.result),
                 rows = ring.halves(own.logSumExp);
          early = {results.early, rows.early};
          late = {results.late, rows.late};
          return;
        }
        Halves k = ring.halves(keys), v = ring.halves(values);
        // This rank's late chunk sees the block's early chunk on every rank.
        late = ring.merged(late, ring.attend(q.late, k.early, v.early, false));
        // The block's rank comes first: early sees early; else late sees late.
        Value first = ring.blockComesFirst(step);
        Partial pair = ring.attend(ring.choose(first, q.early, q.late),
                                   ring.choose(first, k.early, k.late),
                                   ring.choose(first, v.early, v.late), false);
        early = ring.merged(early, pair, first);
        late = ring.merged(late, pair, ring.blockComesFirst(step, true));
      });
  return {ring.joined(early.result, late.result),
          ring.joined(early.logSumExp, late.logSumExp)};
}

/// With a form: every step's chunk pairs (three when causal, else four),
/// each the form at its chunks' distance (the file's comment).
Partial formChunkPairsRing(Ring &ring, Value queries, Value keys,
                           Value values) {
  Halves q = ring.halves(queries);
  int64_t chunk = typeOfTensor(queries).getDimSize(2) / 2;
  std::array<Partial, 2> perChunk;
  forEachBlock(ring, keys, values, /*backward=*/false,
               [&](int64_t step, Value keys, Value values) {
                 Halves k = ring.halves(keys), v = ring.halves(values);
                 for (int64_t qh : {0, 1})
                   for (int64_t kh : {0, 1}) {
                     if (ring.causal && qh < kh)
                       continue; // Early queries, late keys: never seen.
                     Partial pair = ring.attendWithForm(
                         qh ? q.late : q.early, kh ? k.late : k.early,
                         kh ? v.late : v.early,
                         ring.chunkDistance(step, qh, kh, chunk));
                     Partial &into = perChunk[qh];
                     into = into.result ? ring.merged(into, pair) : pair;
                   }
               });
  return {ring.joined(perChunk[0].result, perChunk[1].result),
          ring.joined(perChunk[0].logSumExp, perChunk[1].logSumExp)};
}

/// The gradients of the rank's keys and values: its own block's, and each
/// later block's added to those of the rank that holds it (`step` ranks
/// back).
struct KeyValueGrads {
  Value key, value;
  void add(Ring &ring, int64_t step, Value dk, Value dv) {
    if (step == 0) {
      key = dk;
      value = dv;
      return;
    }
    key = ring.sum(key, ring.shifted(dk, -step));
    value = ring.sum(value, ring.shifted(dv, -step));
  }
};

/// Every block whole (at its positions with regions), each block's
/// backward from the whole sequence's result and logsumexp.
std::array<Value, 3> wholeBlocksRingBackward(Ring &ring,
                                             RingAttentionBackwardOp op) {
  Value queries = op.getQuery(), dq;
  KeyValueGrads home;
  forEachBlock(ring, op.getKey(), op.getValue(), /*backward=*/true,
               [&](int64_t step, Value keys, Value values) {
                 // Causal only with regions: causality reads the positions.
                 auto [blockDq, blockDk, blockDv] = ring.attendBackward(
                     queries, keys, values, op.getResult(), op.getLogsumexp(),
                     op.getResultGrad(), op.getCausal(),
                     ring.placed(queries, step));
                 dq = step == 0 ? blockDq : ring.sum(dq, blockDq);
                 home.add(ring, step, blockDk, blockDv);
               });
  return {dq, home.key, home.value};
}

/// With a form: each chunk pair's backward from the whole sequence's
/// result and logsumexp; the form operands' gradients summed over them.
SmallVector<Value> formChunkPairsRingBackward(Ring &ring,
                                              RingAttentionBackwardOp op) {
  Halves q = ring.halves(op.getQuery()), o = ring.halves(op.getResult()),
         lse = ring.halves(op.getLogsumexp()),
         dO = ring.halves(op.getResultGrad());
  auto half = [](const Halves &h, int64_t which) {
    return which ? h.late : h.early;
  };
  int64_t chunk = typeOfTensor(op.getQuery()).getDimSize(2) / 2;
  std::array<Value, 2> dQ;
  SmallVector<Value> formGrads;
  KeyValueGrads home;
  auto accumulate = [&](Value &into, Value grad) {
    into = into ? ring.sum(into, grad) : grad;
  };
  forEachBlock(ring, op.getKey(), op.getValue(), /*backward=*/true,
               [&](int64_t step, Value keys, Value values) {
                 Halves k = ring.halves(keys), v = ring.halves(values);
                 std::array<Value, 2> dK, dV;
                 for (int64_t qh : {0, 1})
                   for (int64_t kh : {0, 1}) {
                     if (ring.causal && qh < kh)
                       continue; // As the forward.
                     SmallVector<Value> grads = ring.attendWithFormBackward(
                         half(q, qh), half(k, kh), half(v, kh), half(o, qh),
                         half(lse, qh), half(dO, qh),
                         ring.chunkDistance(step, qh, kh, chunk));
                     accumulate(dQ[qh], grads[0]);
                     accumulate(dK[kh], grads[1]);
                     accumulate(dV[kh], grads[2]);
                     formGrads.resize(grads.size() - 3);
                     for (auto [into, grad] : llvm::zip_equal(
                              formGrads, ArrayRef(grads).drop_front(3)))
                       accumulate(into, grad);
                   }
                 home.add(ring, step, ring.joined(dK[0], dK[1]),
                          ring.joined(dV[0], dV[1]));
               });
  SmallVector<Value> all = {ring.joined(dQ[0], dQ[1]), home.key, home.value};
  llvm::append_range(all, formGrads);
  return all;
}

std::array<Value, 3> causalRingBackward(Ring &ring,
                                        RingAttentionBackwardOp op) {
  Halves q = ring.halves(op.getQuery()), o = ring.halves(op.getResult()),
         lse = ring.halves(op.getLogsumexp()),
         dO = ring.halves(op.getResultGrad()), dQ;
  KeyValueGrads home;
  forEachBlock(
      ring, op.getKey(), op.getValue(), /*backward=*/true,
      [&](int64_t step, Value keys, Value values) {
        if (step == 0) {
          auto [dq, dk, dv] = ring.attendBackward(
              op.getQuery(), keys, values, op.getResult(), op.getLogsumexp(),
              op.getResultGrad(), /*causal=*/true);
          dQ = ring.halves(dq);
          home.add(ring, 0, dk, dv);
          return;
        }
        Halves k = ring.halves(keys), v = ring.halves(values);
        auto [lateDq, earlyDk, earlyDv] = ring.attendBackward(
            q.late, k.early, v.early, o.late, lse.late, dO.late, false);
        Value first = ring.blockComesFirst(step);
        Value later = ring.blockComesFirst(step, true);
        // The same choice as the forward's, written the other way round:
        // common-subexpression elimination would otherwise keep the forward's
        // chosen queries alive until here.
        auto pick = [&](Halves h) {
          return ring.choose(later, h.late, h.early);
        };
        auto [pairDq, pairDk, pairDv] = ring.attendBackward(
            pick(q), pick(k), pick(v), pick(o), pick(lse), pick(dO), false);
        dQ.early = ring.sum(dQ.early, ring.onlyWhen(first, pairDq));
        dQ.late =
            ring.sum(ring.sum(dQ.late, lateDq), ring.onlyWhen(later, pairDq));
        // The block's gradients: its early chunk's from both pairs when its
        // rank comes first, its late chunk's from the pair otherwise.
        Value blockDk =
            ring.joined(ring.sum(earlyDk, ring.onlyWhen(first, pairDk)),
                        ring.onlyWhen(later, pairDk));
        Value blockDv =
            ring.joined(ring.sum(earlyDv, ring.onlyWhen(first, pairDv)),
                        ring.onlyWhen(later, pairDv));
        home.add(ring, step, blockDk, blockDv);
      });
  return {ring.joined(dQ.early, dQ.late), home.key, home.value};
}

} // namespace

Value parallel::splitKeysAroundRing(AttentionOp attention, int64_t ranks) {
  OpBuilder b(attention);
  auto ring = RingAttentionOp::create(
      b, attention.getLoc(),
      TypeRange{shareOf(typeOfTensor(attention.getResult()), 2, ranks)},
      attention.getQuery(), attention.getKey(), attention.getValue(),
      ValueRange(), attention.getCausalAttr(), attention.getScaleAttr(),
      b.getI64IntegerAttr(ranks), StringAttr(), DictionaryAttr(),
      attention.getModifiers().size());
  for (auto [from, into] :
       llvm::zip(attention.getModifiers(), ring->getRegions()))
    into.takeBody(from);
  attention.getResult().replaceAllUsesWith(ring.getResult());
  attention.erase();
  return ring.getResult();
}

Value parallel::splitFormAroundRing(AttentionFormInterface form,
                                    int64_t ranks) {
  Operation *op = form.getOperation();
  OpBuilder b(op);
  auto attributes =
      dyn_cast_or_null<DictionaryAttr>(op->getPropertiesAsAttribute());
  auto ring = RingAttentionOp::create(
      b, op->getLoc(),
      TypeRange{shareOf(typeOfTensor(op->getResult(0)), 2, ranks)},
      op->getOperand(0), op->getOperand(1), op->getOperand(2),
      op->getOperands().drop_front(3), b.getBoolAttr(form.isCausal()),
      FloatAttr(), b.getI64IntegerAttr(ranks),
      b.getStringAttr(op->getName().getStringRef()),
      attributes ? attributes : b.getDictionaryAttr({}),
      /*modifiersCount=*/0);
  op->getResult(0).replaceAllUsesWith(ring.getResult());
  op->erase();
  return ring.getResult();
}

/// The ring of `op` (forward or backward): its attributes, regions and
/// form.
template <typename RingOp> static Ring ringOf(OpBuilder &b, RingOp op) {
  Ring ring{b, op.getLoc(), op.getScaleAttr(),
            static_cast<int64_t>(op.getRanks()), op.getModifiers()};
  ring.form = op.getFormAttr();
  ring.formAttributes = op.getFormAttributesAttr();
  ring.formOperands = op.getFormOperands();
  ring.causal = op.getCausal();
  return ring;
}

std::pair<Value, Value> parallel::expandRingAttention(OpBuilder &b,
                                                      RingAttentionOp op) {
  Ring ring = ringOf(b, op);
  if (ring.form) {
    Partial result =
        formChunkPairsRing(ring, op.getQuery(), op.getKey(), op.getValue());
    return {result.result, result.logSumExp};
  }
  // Causal attention without regions takes the chunk pairs its positions
  // allow; with regions, causality reads the positions.
  Partial result =
      op.getCausal() && ring.modifiers.empty()
          ? causalRing(ring, op.getQuery(), op.getKey(), op.getValue())
          : wholeBlocksRing(ring, op.getQuery(), op.getKey(), op.getValue(),
                            op.getCausal());
  return {result.result, result.logSumExp};
}

SmallVector<Value>
parallel::expandRingAttentionBackward(OpBuilder &b,
                                      RingAttentionBackwardOp op) {
  Ring ring = ringOf(b, op);
  if (ring.form)
    return formChunkPairsRingBackward(ring, op);
  std::array<Value, 3> grads = op.getCausal() && ring.modifiers.empty()
                                   ? causalRingBackward(ring, op)
                                   : wholeBlocksRingBackward(ring, op);
  return SmallVector<Value>(grads.begin(), grads.end());
}
