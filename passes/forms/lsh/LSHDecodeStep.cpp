//===- LSHDecodeStep.cpp - LSH attention's cached decode step -------------===//
//
// For `lcc --decode` (docs/generation.md): causal attn.lsh_attention caches
// every token's unit key, value and bucket in every round, and each
// round's stable sort by (bucket, position) as lists per bucket. A step at
// position t attends as the op attends the last token of the sequence
// 0..t, with the model's n_buckets and rotations:
//   1. hash the new token and write its rows;
//   2. per (row, round): append t to its bucket's list (t is the last of
//      its bucket in the sort), find its place, so its chunk, and walk the
//      lists to the tokens of that chunk and the one before it, and of the
//      round's last chunk (the chunk before the next round's first: the
//      rounds' sorted orders run end to end);
//   3. per (row, round), attend to those two chunks' tokens (t's own score
//      -1e5, empty places of the last chunk padding), keeping the
//      logsumexp;
//   4. combine the rounds by their logsumexps.
// Step 2 costs a few chunks' walk and a pass over the buckets; the lists
// are rebuilt from the cached buckets (linear in t) when they do not hold
// tokens 0..t-1: after prefill, which cannot know where the prompt ends.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/GatheredAttention.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/forms/lsh/LSHForm.h"
#include "passes/forms/lsh/LSHSteps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// An empty place of a chunk: the padding after the last token.
constexpr int32_t kNoToken = -1;

/// The LSH shape of `op` (its buckets, rotations and chunks), at the
/// length the model runs.
LSHShape lshShapeOf(LSHAttentionOp op) {
  return LSHShape::of(op.getQueryKey(), op.getValue(), op.getNHashes(),
                      op.getBucketSize(), op.getCausal(), op.getScale(),
                      op.getFactorizedHash(), op.getNBuckets());
}

/// The bucket of each token of `qk` ([batch, heads, seq, dim]) in every
/// round, as the cache holds them: [batch, heads, seq, rounds] f32 (cached
/// state is f32; bucket numbers are exact in it).
Value cachedBuckets(OpBuilder &b, Location loc, const LSHShape &model, Value qk,
                    uint64_t seed) {
  TensorBuilder tb(b, loc);
  RankedTensorType type = tensorType(qk);
  int64_t batch = type.getDimSize(0), seq = type.getDimSize(2);
  // Hashed a whole number of tiles at a time: seq tokens in tiles of one
  // token, or of the forward's bucket size.
  LSHShape s = model;
  s.seq = seq;
  s.bucket = seq % model.bucket == 0 ? model.bucket : 1;
  s.padded = seq;
  Value buckets = hashTokens(b, loc, s, attentionRows(b, loc, qk),
                             lshRotationsOf(b, loc, model, seed));
  Value asFloat =
      tb.map({s.rows, seq, s.rounds}, b.getF32Type(), {buckets},
             {tb.map(3, {0, 2, 1})},
             [](OpBuilder &nb, Location l, ValueRange a) -> Value {
               return arith::SIToFPOp::create(nb, l, nb.getF32Type(), a[0]);
             });
  return fromAttentionRows(
      b, loc, asFloat,
      RankedTensorType::get({batch, s.rows / batch, seq, s.rounds},
                            b.getF32Type()));
}

/// Why `op` has no cached form; "" when it has one.
std::string lshUncachedBecause(LSHAttentionOp op) {
  if (!op.getCausal())
    return kNotCausalForDecode;
  return "";
}

/// The places of one (row, round) a step's query needs (step 2), [rows,
/// rounds, ...] i32 each: the tokens in the query's chunk and the one
/// before it (2 * bucket; kNoToken where there is none), in the round's
/// last chunk (bucket), and the query's chunk.
struct ChunkTokens {
  Value ownTwo, last, chunk;
};

/// One (row, round)'s sorted order of the tokens so far, kept between
/// steps as lists per bucket, f32 (as state is) holding token + 1 (0:
/// none): each token's neighbours in its bucket ([positions]), each
/// bucket's first and last token and its count ([buckets + 1]; the count's
/// last entry is how many tokens the lists hold, which prefill sets to -1
/// so that the first step rebuilds them from the cached buckets).
struct BucketLists {
  Value previous, next, first, last, count;

  SmallVector<Value> values() const {
    return {previous, next, first, last, count};
  }
  static BucketLists of(ValueRange v) { return {v[0], v[1], v[2], v[3], v[4]}; }
};

/// The index stored at `i` of an f32 tensor, and `t` with `v` stored there.
Value loadIndex(OpBuilder &b, Location l, Value t, Value i) {
  Value x = tensor::ExtractOp::create(b, l, t, i);
  return castToIndex(b, l, arith::FPToSIOp::create(b, l, b.getI32Type(), x));
}
Value storeIndex(OpBuilder &b, Location l, Value t, Value i, Value v) {
  Value x = arith::SIToFPOp::create(b, l, b.getF32Type(), castToI32(b, l, v));
  return tensor::InsertOp::create(b, l, x, t, i);
}

/// Token `j` (an index) appended to the lists of `bucket`.
BucketLists appendToken(OpBuilder &b, Location l, BucketLists lists, Value j,
                        Value bucket) {
  Value zero = indexConstant(b, l, 0), one = indexConstant(b, l, 1);
  Value token = arith::AddIOp::create(b, l, j, one);
  Value tail = loadIndex(b, l, lists.last, bucket);
  lists.previous = storeIndex(b, l, lists.previous, j, tail);
  Value next = storeIndex(b, l, lists.next, j, zero);
  Value empty =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, tail, zero);
  auto linked = scf::IfOp::create(
      b, l, empty,
      [&](OpBuilder &nb, Location nl) {
        scf::YieldOp::create(
            nb, nl,
            ValueRange{next, storeIndex(nb, nl, lists.first, bucket, token)});
      },
      [&](OpBuilder &nb, Location nl) {
        Value before = arith::SubIOp::create(nb, nl, tail, one);
        scf::YieldOp::create(
            nb, nl,
            ValueRange{storeIndex(nb, nl, next, before, token), lists.first});
      });
  lists.next = linked.getResult(0);
  lists.first = linked.getResult(1);
  lists.last = storeIndex(b, l, lists.last, bucket, token);
  lists.count = storeIndex(
      b, l, lists.count, bucket,
      arith::AddIOp::create(b, l, loadIndex(b, l, lists.count, bucket), one));
  return lists;
}

/// The nearest bucket below `from` (or above, with `upward`) that holds a
/// token: -1 (or `buckets`) when none does.
Value nearestFilledBucket(OpBuilder &b, Location l, Value count, Value from,
                          int64_t buckets, bool upward) {
  Type index = b.getIndexType();
  Value step = indexConstant(b, l, upward ? 1 : -1);
  auto loop = scf::WhileOp::create(
      b, l, TypeRange{index},
      ValueRange{arith::AddIOp::create(b, l, from, step)},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value k = args[0];
        Value inRange =
            upward ? arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, k,
                                           indexConstant(nb, nl, buckets))
                   : arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, k,
                                           indexConstant(nb, nl, 0));
        Value safe = arith::MinSIOp::create(
            nb, nl, arith::MaxSIOp::create(nb, nl, k, indexConstant(nb, nl, 0)),
            indexConstant(nb, nl, buckets - 1));
        Value empty = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                            loadIndex(nb, nl, count, safe),
                                            indexConstant(nb, nl, 0));
        scf::ConditionOp::create(
            nb, nl, arith::AndIOp::create(nb, nl, inRange, empty), k);
      },
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        scf::YieldOp::create(
            nb, nl, ValueRange{arith::AddIOp::create(nb, nl, args[0], step)});
      });
  return loop.getResult(0);
}

/// Writes the tokens at places [from, from + size) of the sorted order
/// into `into` ([size] i32), walking `steps` places down (or, `upward`,
/// up) from token + 1 `start` in `bucket` at place `place`; places at or
/// past `end` (the tokens so far) are left as they are.
Value walkPlaces(OpBuilder &b, Location l, const BucketLists &lists,
                 int64_t buckets, Value into, Value from, int64_t size,
                 Value end, Value start, Value bucket, Value place,
                 int64_t steps, bool upward) {
  Value c0 = indexConstant(b, l, 0), c1 = indexConstant(b, l, 1);
  auto walk = scf::ForOp::create(
      b, l, c0, indexConstant(b, l, steps), c1,
      ValueRange{start, bucket, place, into},
      [&](OpBuilder &nb, Location nl, Value, ValueRange it) {
        Value token = it[0], at = it[1], p = it[2];
        auto cmp = [&](arith::CmpIPredicate pred, Value x, Value y) -> Value {
          return arith::CmpIOp::create(nb, nl, pred, x, y);
        };
        Value offset = arith::SubIOp::create(nb, nl, p, from);
        Value inside = arith::AndIOp::create(
            nb, nl,
            arith::AndIOp::create(nb, nl,
                                  cmp(arith::CmpIPredicate::sge, offset, c0),
                                  cmp(arith::CmpIPredicate::slt, offset,
                                      indexConstant(nb, nl, size))),
            arith::AndIOp::create(nb, nl,
                                  cmp(arith::CmpIPredicate::slt, p, end),
                                  cmp(arith::CmpIPredicate::sgt, token, c0)));
        Value slot = arith::SelectOp::create(nb, nl, inside, offset, c0);
        Value kept = arith::SelectOp::create(
            nb, nl, inside,
            castToI32(nb, nl, arith::SubIOp::create(nb, nl, token, c1)),
            tensor::ExtractOp::create(nb, nl, it[3], slot));
        Value written = tensor::InsertOp::create(nb, nl, kept, it[3], slot);
        // The token beside this one in its bucket, or the first of the
        // nearest filled bucket.
        Value here = arith::SelectOp::create(
            nb, nl, cmp(arith::CmpIPredicate::sgt, token, c0),
            arith::SubIOp::create(nb, nl, token, c1), c0);
        Value beside =
            loadIndex(nb, nl, upward ? lists.next : lists.previous, here);
        auto moved = scf::IfOp::create(
            nb, nl,
            arith::AndIOp::create(nb, nl,
                                  cmp(arith::CmpIPredicate::sgt, token, c0),
                                  cmp(arith::CmpIPredicate::sgt, beside, c0)),
            [&](OpBuilder &ib, Location il) {
              scf::YieldOp::create(ib, il, ValueRange{beside, at});
            },
            [&](OpBuilder &ib, Location il) {
              Value other =
                  nearestFilledBucket(ib, il, lists.count, at, buckets, upward);
              Value valid = arith::AndIOp::create(
                  ib, il,
                  arith::CmpIOp::create(ib, il, arith::CmpIPredicate::sge,
                                        other, indexConstant(ib, il, 0)),
                  arith::CmpIOp::create(ib, il, arith::CmpIPredicate::slt,
                                        other, indexConstant(ib, il, buckets)));
              Value safe = arith::SelectOp::create(ib, il, valid, other,
                                                   indexConstant(ib, il, 0));
              Value first =
                  loadIndex(ib, il, upward ? lists.first : lists.last, safe);
              scf::YieldOp::create(
                  ib, il,
                  ValueRange{arith::SelectOp::create(ib, il, valid, first,
                                                     indexConstant(ib, il, 0)),
                             other});
            });
        Value nextPlace = arith::AddIOp::create(
            nb, nl, p, indexConstant(nb, nl, upward ? 1 : -1));
        scf::YieldOp::create(nb, nl,
                             ValueRange{moved.getResult(0), moved.getResult(1),
                                        nextPlace, written});
      });
  return walk.getResult(3);
}

/// The lists rebuilt from the cached buckets of tokens 0..t-1 (`bucketOf`)
/// unless they hold exactly those.
BucketLists
currentLists(OpBuilder &b, Location l, const LSHShape &s, BucketLists lists,
             Value t,
             function_ref<Value(OpBuilder &, Location, Value)> bucketOf) {
  Value held = loadIndex(b, l, lists.count, indexConstant(b, l, s.buckets));
  Value current =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, held, t);
  auto rebuilt = scf::IfOp::create(
      b, l, current,
      [&](OpBuilder &nb, Location nl) {
        scf::YieldOp::create(nb, nl, lists.values());
      },
      [&](OpBuilder &nb, Location nl) {
        TensorBuilder tb(nb, nl);
        Type f32 = nb.getF32Type();
        BucketLists empty = lists;
        empty.first = tb.filled({s.buckets + 1}, f32, 0.0);
        empty.last = tb.filled({s.buckets + 1}, f32, 0.0);
        empty.count = tb.filled({s.buckets + 1}, f32, 0.0);
        auto append = scf::ForOp::create(
            nb, nl, indexConstant(nb, nl, 0), t, indexConstant(nb, nl, 1),
            empty.values(),
            [&](OpBuilder &fb, Location fl, Value j, ValueRange it) {
              scf::YieldOp::create(fb, fl,
                                   appendToken(fb, fl, BucketLists::of(it), j,
                                               bucketOf(fb, fl, j))
                                       .values());
            });
        scf::YieldOp::create(nb, nl, append.getResults());
      });
  return BucketLists::of(rebuilt.getResults());
}

/// Step 2 for one (row, round): token t appended to the lists (rebuilt
/// first when they do not hold tokens 0..t-1), then its place, and the
/// tokens of its chunk, the chunk before and the round's last chunk read
/// off the lists by walking from t and from the last token.
ChunkTokens chunkTokensFromLists(OpBuilder &b, Location loc, const LSHShape &s,
                                 BucketLists &lists, Value buckets, Value row,
                                 Value round, Value t) {
  auto index = [&](int64_t v) { return indexConstant(b, loc, v); };
  Value c0 = index(0), c1 = index(1);
  auto bucketOf = [&](OpBuilder &nb, Location l, Value j) -> Value {
    Value x =
        tensor::ExtractOp::create(nb, l, buckets, ValueRange{row, j, round});
    return castToIndex(nb, l,
                       arith::FPToSIOp::create(nb, l, nb.getI32Type(), x));
  };
  lists = currentLists(b, loc, s, lists, t, bucketOf);
  Value own = bucketOf(b, loc, t);
  lists = appendToken(b, loc, lists, t, own);
  Value count = arith::AddIOp::create(b, loc, t, c1);
  lists.count = storeIndex(b, loc, lists.count, index(s.buckets), count);
  // t's place: the tokens of the buckets before its own, then its bucket's.
  auto before = scf::ForOp::create(
      b, loc, c0, own, c1, ValueRange{c0},
      [&](OpBuilder &nb, Location l, Value k, ValueRange it) {
        scf::YieldOp::create(
            nb, l,
            ValueRange{arith::AddIOp::create(
                nb, l, it[0], loadIndex(nb, l, lists.count, k))});
      });
  Value place = arith::SubIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, before.getResult(0),
                            loadIndex(b, loc, lists.count, own)),
      c1);
  Value bucket = index(s.bucket);
  Value chunk = arith::DivUIOp::create(b, loc, place, bucket);
  Value chunks = arith::CeilDivUIOp::create(b, loc, count, bucket);
  // Places [first, first + 2 * bucket) and [last, last + bucket).
  Value first = arith::MulIOp::create(
      b, loc, arith::SubIOp::create(b, loc, chunk, c1), bucket);
  Value last = arith::MulIOp::create(
      b, loc, arith::SubIOp::create(b, loc, chunks, c1), bucket);
  Value token = arith::AddIOp::create(b, loc, t, c1);
  // Down from t to the chunk before its own, then up from the token after
  // t (t is the last of its bucket: the first of the next filled one).
  Value ownTwo = walkPlaces(b, loc, lists, s.buckets,
                            filledI32(b, loc, {2 * s.bucket}, kNoToken), first,
                            2 * s.bucket, count, token, own, place,
                            2 * s.bucket, /*upward=*/false);
  Value above =
      nearestFilledBucket(b, loc, lists.count, own, s.buckets, /*upward=*/true);
  Value aboveValid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           above, index(s.buckets));
  Value aboveFirst = arith::SelectOp::create(
      b, loc, aboveValid,
      loadIndex(b, loc, lists.first,
                arith::SelectOp::create(b, loc, aboveValid, above, c0)),
      c0);
  ownTwo = walkPlaces(b, loc, lists, s.buckets, ownTwo, first, 2 * s.bucket,
                      count, aboveFirst, above,
                      arith::AddIOp::create(b, loc, place, c1), 2 * s.bucket,
                      /*upward=*/true);
  // Down from the last token of all.
  Value top = nearestFilledBucket(b, loc, lists.count, index(s.buckets),
                                  s.buckets, /*upward=*/false);
  Value lastToken = loadIndex(b, loc, lists.last, top);
  Value lastChunk = walkPlaces(
      b, loc, lists, s.buckets, filledI32(b, loc, {s.bucket}, kNoToken), last,
      s.bucket, count, lastToken, top, arith::SubIOp::create(b, loc, count, c1),
      s.bucket, /*upward=*/false);
  Value chunkValue = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, b.getI32Type()),
      ValueRange{castToI32(b, loc, chunk)});
  return {ownTwo, lastChunk, chunkValue};
}

/// The lists' caches, [batch, heads, rows, rounds]: positions rows for the
/// neighbours, buckets + 1 for the rest. (Not viewed as batch * heads rows:
/// the step updates them where they are, which a view would prevent.)
BucketLists readLists(OpBuilder &b, Location loc, const LSHShape &s,
                      const AttentionCaches &caches, int64_t batch) {
  Type f32 = b.getF32Type();
  int64_t heads = s.rows / batch;
  auto read = [&](StringRef role, int64_t rows) {
    return caches.read(b, loc, role, batch, heads, s.rounds, f32, rows);
  };
  return {read("bucket_previous", 0), read("bucket_next", 0),
          read("bucket_first", s.buckets + 1),
          read("bucket_last", s.buckets + 1),
          read("bucket_count", s.buckets + 1)};
}

void writeLists(OpBuilder &b, Location loc, const AttentionCaches &caches,
                const BucketLists &lists) {
  StringRef roles[] = {"bucket_previous", "bucket_next", "bucket_first",
                       "bucket_last", "bucket_count"};
  for (auto [role, value] : llvm::zip_equal(roles, lists.values()))
    caches.write(b, loc, role, value);
}

/// Step 2 for every (row, round), the lists updated.
ChunkTokens chunkTokensOfRounds(OpBuilder &b, Location loc, const LSHShape &s,
                                Value buckets, Value position,
                                BucketLists &lists) {
  TensorBuilder tb(b, loc);
  Type i32 = b.getI32Type();
  SmallVector<Value> outs = {tb.empty({s.rows, s.rounds, 2 * s.bucket}, i32),
                             tb.empty({s.rows, s.rounds, s.bucket}, i32),
                             tb.empty({s.rows, s.rounds}, i32)};
  llvm::append_range(outs, lists.values());
  int64_t heads = tensorType(lists.count).getDimSize(1);
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(s.rows / heads),
                             b.getIndexAttr(heads), b.getIndexAttr(s.rounds)},
      outs, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value batchIndex = forall.getInductionVars()[0],
        head = forall.getInductionVars()[1],
        round = forall.getInductionVars()[2];
  Value row = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, batchIndex, indexConstant(b, loc, heads)),
      head);
  auto unit = b.getIndexAttr(1);
  auto zero = b.getIndexAttr(0);
  // This (batch, head, round)'s column of each list.
  auto column = [&](unsigned i) {
    Value shared = forall.getRegionIterArgs()[3 + i];
    int64_t rows = tensorType(shared).getDimSize(2);
    return std::make_pair(sliceOf(b, loc,
                                  RankedTensorType::get({rows}, b.getF32Type()),
                                  shared, {batchIndex, head, zero, round},
                                  {unit, unit, b.getIndexAttr(rows), unit}),
                          rows);
  };
  SmallVector<Value> columns;
  SmallVector<int64_t> sizes;
  for (unsigned i = 0; i < 5; ++i) {
    auto [value, rows] = column(i);
    columns.push_back(value);
    sizes.push_back(rows);
  }
  BucketLists own = BucketLists::of(columns);
  Value t = castToIndex(b, loc, tensor::ExtractOp::create(b, loc, position));
  ChunkTokens tokens =
      chunkTokensFromLists(b, loc, s, own, buckets, row, round, t);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  insertIntoShared(b, loc, tokens.ownTwo, forall.getRegionIterArgs()[0],
                   {row, round, zero},
                   {unit, unit, b.getIndexAttr(2 * s.bucket)});
  insertIntoShared(b, loc, tokens.last, forall.getRegionIterArgs()[1],
                   {row, round, zero}, {unit, unit, b.getIndexAttr(s.bucket)});
  insertIntoShared(b, loc, tokens.chunk, forall.getRegionIterArgs()[2],
                   {row, round}, {unit, unit});
  for (auto [i, value] : llvm::enumerate(own.values()))
    insertIntoShared(b, loc, value, forall.getRegionIterArgs()[3 + i],
                     {batchIndex, head, zero, round},
                     {unit, unit, b.getIndexAttr(sizes[i]), unit});
  lists = BucketLists::of(forall.getResults().drop_front(3));
  return {forall.getResult(0), forall.getResult(1), forall.getResult(2)};
}

/// The tokens each (row, round)'s query attends to, [rows, rounds, 2 *
/// bucket] i32: the chunk before its own (in the round, or the previous
/// round's last when its chunk is the first), then its own.
Value keyTokens(TensorBuilder &tb, const LSHShape &s, const ChunkTokens &c) {
  return tb.map(
      {s.rows, s.rounds, 2 * s.bucket}, tb.builder().getI32Type(), {}, {},
      [&](OpBuilder &b, Location l, ValueRange) -> Value {
        Value row = linalg::IndexOp::create(b, l, 0);
        Value round = linalg::IndexOp::create(b, l, 1);
        Value i = linalg::IndexOp::create(b, l, 2);
        Value before = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i,
                                             indexConstant(b, l, s.bucket));
        Value firstChunk = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::eq,
            tensor::ExtractOp::create(b, l, c.chunk, ValueRange{row, round}),
            i32Constant(b, l, 0));
        Value previousRound = arith::RemUIOp::create(
            b, l,
            arith::AddIOp::create(b, l, round,
                                  indexConstant(b, l, s.rounds - 1)),
            indexConstant(b, l, s.rounds));
        Value fromOwn = tensor::ExtractOp::create(b, l, c.ownTwo,
                                                  ValueRange{row, round, i});
        Value fromLast = tensor::ExtractOp::create(
            b, l, c.last,
            ValueRange{row, previousRound,
                       arith::MinUIOp::create(
                           b, l, i, indexConstant(b, l, s.bucket - 1))});
        return arith::SelectOp::create(
            b, l, arith::AndIOp::create(b, l, before, firstChunk), fromLast,
            fromOwn);
      });
}

/// Step 4: the rounds' outputs weighted by exp(lse - max lse) / sum:
/// [rows, v_dim].
Value combineRounds(TensorBuilder &tb, const LSHShape &s, Value outputs,
                    Value logSumExp) {
  using utils::IteratorType;
  Type f32 = tb.builder().getF32Type();
  RowExponentials shares = rowExponentials(tb, logSumExp);
  Value weighted = tb.generic(
      tb.filled({s.rows, s.valueDim}, f32, 0.0), {shares.exps, outputs},
      {tb.map(3, {0, 1}), tb.map(3, {0, 1, 2}), tb.map(3, {0, 2})},
      {IteratorType::parallel, IteratorType::reduction, IteratorType::parallel},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return add(nb, l, a[2], mul(nb, l, a[0], a[1]));
      });
  return tb.map({s.rows, s.valueDim}, f32, {weighted, shares.sums},
                {tb.identityMap(2), tb.dropLastMap(2)},
                [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                  return arith::DivFOp::create(nb, l, a[0], a[1]);
                });
}

} // namespace

LogicalResult lcc::fillLSHDecodeCaches(OpBuilder &b, Operation *op,
                                       const AttentionCaches &caches,
                                       std::string &whyNot) {
  auto lsh = cast<LSHAttentionOp>(op);
  whyNot = lshUncachedBecause(lsh);
  if (!whyNot.empty())
    return failure();
  Location loc = op->getLoc();
  TensorBuilder tb(b, loc);
  caches.fill(b, loc, "key", normalizeRows(tb, lsh.getQueryKey()));
  caches.fill(b, loc, "value", lsh.getValue());
  LSHShape s = lshShapeOf(lsh);
  caches.fill(b, loc, "buckets",
              cachedBuckets(b, loc, s, lsh.getQueryKey(),
                            static_cast<uint64_t>(lsh.getSeed())));
  // The lists of the sorted order are stale: the first step rebuilds them.
  int64_t batch = tensorType(lsh.getQueryKey()).getDimSize(0);
  Type f32 = b.getF32Type();
  Value count = caches.read(b, loc, "bucket_count", batch, s.rows / batch,
                            s.rounds, f32, s.buckets + 1);
  caches.write(b, loc, "bucket_count",
               linalg::FillOp::create(
                   b, loc, ValueRange{floatConstant(b, loc, f32, -1.0)},
                   ValueRange{count})
                   .getResult(0));
  return success();
}

FailureOr<Value> lcc::buildLSHDecodeStep(OpBuilder &b, Operation *op,
                                         ValueRange operands, Value position,
                                         const AttentionCaches &caches,
                                         std::string &whyNot) {
  auto lsh = cast<LSHAttentionOp>(op);
  Location loc = op->getLoc();
  TensorBuilder tb(b, loc);
  LSHShape s = lshShapeOf(lsh);
  Value qk = operands[0], value = operands[1];
  // Step 1: the token's rows.
  Value keys = caches.writeRows(b, loc, "key", normalizeRows(tb, qk), position);
  Value values = caches.writeRows(b, loc, "value", value, position);
  Value buckets = caches.writeRows(
      b, loc, "buckets",
      cachedBuckets(b, loc, s, qk, static_cast<uint64_t>(lsh.getSeed())),
      position);
  // Steps 2-4 over [rows, ...] views.
  int64_t batch = tensorType(qk).getDimSize(0);
  BucketLists lists = readLists(b, loc, s, caches, batch);
  ChunkTokens chunks = chunkTokensOfRounds(
      b, loc, s, attentionRows(b, loc, buckets), position, lists);
  writeLists(b, loc, caches, lists);
  Value tokens = keyTokens(tb, s, chunks);
  Value query = tensor::CollapseShapeOp::create(
      b, loc, qk, ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}});
  // Step 3: each round's two chunks, t's own token -1e5 (every round sees
  // t, so no round is empty).
  GatheredAttention rounds =
      attendGathered(tb, query, tokens, attentionRows(b, loc, keys),
                     attentionRows(b, loc, values), s.scale, position);
  Value combined = combineRounds(tb, s, rounds.outputs, rounds.logSumExp);
  return tensor::ExpandShapeOp::create(
             b, loc, tensorType(value), combined,
             ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}})
      .getResult();
}
