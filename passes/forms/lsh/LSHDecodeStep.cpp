//===- LSHDecodeStep.cpp - LSH attention's cached decode step -------------===//
//
// For `lcc --decode` (docs/generation.md): causal attn.lsh_attention caches
// every token's unit key, value and bucket in every round. A step at
// position t attends as the op attends the last token of the sequence
// 0..t, with the model's n_buckets and rotations:
//   1. hash the new token and write its rows;
//   2. per (row, round), from the cached buckets of tokens 0..t: where the
//      stable sort by (bucket, position) puts t (last of its bucket), so
//      its chunk, and which tokens sit in that chunk and the one before it,
//      and in the round's last chunk (the chunk before the next round's
//      first: the rounds' sorted orders run end to end);
//   3. per (row, round), attend to those two chunks' tokens (t's own score
//      -1e5, empty places of the last chunk padding), keeping the
//      logsumexp;
//   4. combine the rounds by their logsumexps.
// Step 2 scans the tokens so far: a step's cost grows with them, like
// dense attention's, and reads the keys of two chunks per round only.
//
//===----------------------------------------------------------------------===//

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

/// [batch, heads, seq, w] as [batch * heads, seq, w], and back.
Value headsAsRows(OpBuilder &b, Location loc, Value x) {
  return tensor::CollapseShapeOp::create(
      b, loc, x, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
}
Value rowsAsHeads(OpBuilder &b, Location loc, Value x, int64_t batch) {
  RankedTensorType type = tensorType(x);
  return tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({batch, type.getDimSize(0) / batch,
                             type.getDimSize(1), type.getDimSize(2)},
                            type.getElementType()),
      x, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
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
  Value buckets = hashTokens(b, loc, s, headsAsRows(b, loc, qk),
                             lshRotationsOf(b, loc, model, seed));
  Value asFloat =
      tb.map({s.rows, seq, s.rounds}, b.getF32Type(), {buckets},
             {tb.map(3, {0, 2, 1})},
             [](OpBuilder &nb, Location l, ValueRange a) -> Value {
               return arith::SIToFPOp::create(nb, l, nb.getF32Type(), a[0]);
             });
  return rowsAsHeads(b, loc, asFloat, batch);
}

/// Why `op` has no cached form; "" when it has one.
std::string lshUncachedBecause(LSHAttentionOp op) {
  if (!op.getCausal())
    return "it is not causal (a decode step sees only earlier positions)";
  return "";
}

/// The places of one (row, round) a step's query needs (step 2), [rows,
/// rounds, ...] i32 each: the tokens in the query's chunk and the one
/// before it (2 * bucket; kNoToken where there is none), in the round's
/// last chunk (bucket), and the query's chunk.
struct ChunkTokens {
  Value ownTwo, last, chunk;
};

/// Step 2 for one (row, round): a stable counting sort of tokens 0..t by
/// their cached bucket (`buckets`, [rows, positions, rounds] f32), keeping
/// only the places of the query's chunk, the one before it and the last.
ChunkTokens sortedChunkTokens(OpBuilder &b, Location loc, const LSHShape &s,
                              Value buckets, Value row, Value round, Value t) {
  Type i32 = b.getI32Type();
  auto index = [&](int64_t v) { return indexConstant(b, loc, v); };
  Value c0 = index(0), c1 = index(1);
  Value one = i32Constant(b, loc, 1);
  Value count = arith::AddIOp::create(b, loc, t, c1);
  auto bucketOf = [&](OpBuilder &nb, Location l, Value j) -> Value {
    Value x =
        tensor::ExtractOp::create(nb, l, buckets, ValueRange{row, j, round});
    return castToIndex(nb, l,
                       arith::FPToSIOp::create(nb, l, nb.getI32Type(), x));
  };
  auto histogram = scf::ForOp::create(
      b, loc, c0, count, c1, ValueRange{zerosI32(b, loc, {s.buckets})},
      [&](OpBuilder &nb, Location l, Value j, ValueRange it) {
        Value k = bucketOf(nb, l, j);
        Value counted = arith::AddIOp::create(
            nb, l, tensor::ExtractOp::create(nb, l, it[0], k), one);
        scf::YieldOp::create(
            nb, l,
            tensor::InsertOp::create(nb, l, counted, it[0], k).getResult());
      });
  // Where each bucket's run starts, and so where t, the last of its
  // bucket, sits: its chunk.
  auto scan = scf::ForOp::create(
      b, loc, c0, index(s.buckets), c1,
      ValueRange{i32Constant(b, loc, 0), zerosI32(b, loc, {s.buckets})},
      [&](OpBuilder &nb, Location l, Value k, ValueRange it) {
        Value run = tensor::ExtractOp::create(nb, l, histogram.getResult(0), k);
        Value starts = tensor::InsertOp::create(nb, l, it[0], it[1], k);
        scf::YieldOp::create(
            nb, l,
            ValueRange{arith::AddIOp::create(nb, l, it[0], run), starts});
      });
  Value starts = scan.getResult(1);
  Value own = bucketOf(b, loc, t);
  Value place = castToIndex(
      b, loc,
      arith::SubIOp::create(
          b, loc,
          arith::AddIOp::create(
              b, loc, tensor::ExtractOp::create(b, loc, starts, own),
              tensor::ExtractOp::create(b, loc, histogram.getResult(0), own)),
          one));
  Value bucket = index(s.bucket);
  Value chunk = arith::DivUIOp::create(b, loc, place, bucket);
  Value chunks = arith::CeilDivUIOp::create(b, loc, count, bucket);
  // Places [first, first + 2 * bucket) and [last, last + bucket).
  Value first = arith::MulIOp::create(
      b, loc, arith::SubIOp::create(b, loc, chunk, c1), bucket);
  Value last = arith::MulIOp::create(
      b, loc, arith::SubIOp::create(b, loc, chunks, c1), bucket);
  // Token j into `into` at place p - from, where that is in [0, size).
  auto keep = [&](OpBuilder &nb, Location l, Value into, Value p, Value from,
                  int64_t size, Value token) -> Value {
    Value at = arith::SubIOp::create(nb, l, p, from);
    Value inside = arith::AndIOp::create(
        nb, l,
        arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, at,
                              indexConstant(nb, l, 0)),
        arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, at,
                              indexConstant(nb, l, size)));
    Value clamped =
        arith::SelectOp::create(nb, l, inside, at, indexConstant(nb, l, 0));
    Value before = tensor::ExtractOp::create(nb, l, into, clamped);
    Value kept = arith::SelectOp::create(nb, l, inside, token, before);
    return tensor::InsertOp::create(nb, l, kept, into, clamped);
  };
  auto placeTokens = scf::ForOp::create(
      b, loc, c0, count, c1,
      ValueRange{starts, filledI32(b, loc, {2 * s.bucket}, kNoToken),
                 filledI32(b, loc, {s.bucket}, kNoToken)},
      [&](OpBuilder &nb, Location l, Value j, ValueRange it) {
        Value k = bucketOf(nb, l, j);
        Value p32 = tensor::ExtractOp::create(nb, l, it[0], k);
        Value next = tensor::InsertOp::create(
            nb, l, arith::AddIOp::create(nb, l, p32, one), it[0], k);
        Value p = castToIndex(nb, l, p32);
        Value token = castToI32(nb, l, j);
        scf::YieldOp::create(
            nb, l,
            ValueRange{next, keep(nb, l, it[1], p, first, 2 * s.bucket, token),
                       keep(nb, l, it[2], p, last, s.bucket, token)});
      });
  Value chunkValue =
      tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, i32),
                                     ValueRange{castToI32(b, loc, chunk)});
  return {placeTokens.getResult(1), placeTokens.getResult(2), chunkValue};
}

/// Step 2 for every (row, round).
ChunkTokens chunkTokensOfRounds(OpBuilder &b, Location loc, const LSHShape &s,
                                Value buckets, Value position) {
  TensorBuilder tb(b, loc);
  Type i32 = b.getI32Type();
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(s.rows), b.getIndexAttr(s.rounds)},
      ValueRange{tb.empty({s.rows, s.rounds, 2 * s.bucket}, i32),
                 tb.empty({s.rows, s.rounds, s.bucket}, i32),
                 tb.empty({s.rows, s.rounds}, i32)},
      std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value row = forall.getInductionVars()[0],
        round = forall.getInductionVars()[1];
  Value t = castToIndex(b, loc, tensor::ExtractOp::create(b, loc, position));
  ChunkTokens tokens = sortedChunkTokens(b, loc, s, buckets, row, round, t);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  auto unit = b.getIndexAttr(1);
  auto zero = b.getIndexAttr(0);
  insertIntoShared(b, loc, tokens.ownTwo, forall.getRegionIterArgs()[0],
                   {row, round, zero},
                   {unit, unit, b.getIndexAttr(2 * s.bucket)});
  insertIntoShared(b, loc, tokens.last, forall.getRegionIterArgs()[1],
                   {row, round, zero}, {unit, unit, b.getIndexAttr(s.bucket)});
  insertIntoShared(b, loc, tokens.chunk, forall.getRegionIterArgs()[2],
                   {row, round}, {unit, unit});
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

/// Step 3: per (row, round) the query `qk` ([rows, dim]) against the keys
/// of `tokens` ([rows, rounds, 2 * bucket]) in the caches `keys` and
/// `values` ([rows, positions, w]): the round's output [rows, rounds,
/// v_dim] and logsumexp [rows, rounds].
std::pair<Value, Value> attendChunkTokens(TensorBuilder &tb, const LSHShape &s,
                                          Value qk, Value tokens, Value keys,
                                          Value values, Value position) {
  using utils::IteratorType;
  OpBuilder &b = tb.builder();
  Type f32 = b.getF32Type();
  int64_t width = 2 * s.bucket;
  auto cached = [&](OpBuilder &nb, Location l, Value source, Value token,
                    Value column) -> Value {
    Value at = castToIndex(
        nb, l, arith::MaxSIOp::create(nb, l, token, i32Constant(nb, l, 0)));
    return tensor::ExtractOp::create(
        nb, l, source,
        ValueRange{linalg::IndexOp::create(nb, l, 0), at, column});
  };
  // Loops (row, round, i, e): q · k of each token, the dimension innermost.
  Value dots = tb.generic(
      tb.filled({s.rows, s.rounds, width}, f32, 0.0), {qk, tokens},
      {tb.map(4, {0, 3}), tb.map(4, {0, 1, 2}), tb.map(4, {0, 1, 2})},
      {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
       IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value k = cached(nb, l, keys, a[1], linalg::IndexOp::create(nb, l, 3));
        return add(nb, l, a[2], mul(nb, l, a[0], k));
      });
  // Scaled; the query's own token -1e5, an empty place -inf.
  Value scores = tb.map(
      {s.rows, s.rounds, width}, f32, {dots, tokens, position},
      {tb.identityMap(3), tb.identityMap(3),
       AffineMap::get(3, 0, b.getContext())},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value score = mul(nb, l, a[0], floatConstant(nb, l, f32, s.scale));
        Value self =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, a[1], a[2]);
        score = arith::SelectOp::create(
            nb, l, self, floatConstant(nb, l, f32, kSelfAttentionScore), score);
        Value empty = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                            a[1], i32Constant(nb, l, 0));
        return arith::SelectOp::create(
            nb, l, empty, floatConstant(nb, l, f32, kNegativeInfinity), score);
      });
  // Every query sees its own token: no row is all -inf.
  RowExponentials softmax = rowExponentials(tb, scores);
  Value weighted = tb.generic(
      tb.filled({s.rows, s.rounds, s.valueDim}, f32, 0.0),
      {softmax.exps, tokens},
      {tb.map(4, {0, 1, 2}), tb.map(4, {0, 1, 2}), tb.map(4, {0, 1, 3})},
      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction,
       IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value v =
            cached(nb, l, values, a[1], linalg::IndexOp::create(nb, l, 3));
        return add(nb, l, a[2], mul(nb, l, a[0], v));
      });
  Value outputs =
      tb.map({s.rows, s.rounds, s.valueDim}, f32, {weighted, softmax.sums},
             {tb.identityMap(3), tb.dropLastMap(3)},
             [](OpBuilder &nb, Location l, ValueRange a) -> Value {
               return arith::DivFOp::create(nb, l, a[0], a[1]);
             });
  Value logSumExp = tb.mapSameShape(
      {softmax.maxima, softmax.sums},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return add(nb, l, a[0], math::LogOp::create(nb, l, a[1]));
      });
  return {outputs, logSumExp};
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
  caches.fill(b, loc, "buckets",
              cachedBuckets(b, loc, lshShapeOf(lsh), lsh.getQueryKey(),
                            static_cast<uint64_t>(lsh.getSeed())));
  return success();
}

FailureOr<Value> lcc::buildLSHDecodeStep(OpBuilder &b, Operation *op,
                                         ValueRange operands, Value position,
                                         const AttentionCaches &caches,
                                         std::string &whyNot) {
  auto lsh = cast<LSHAttentionOp>(op);
  whyNot = lshUncachedBecause(lsh);
  if (!whyNot.empty())
    return failure();
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
  ChunkTokens chunks =
      chunkTokensOfRounds(b, loc, s, headsAsRows(b, loc, buckets), position);
  Value tokens = keyTokens(tb, s, chunks);
  Value query = tensor::CollapseShapeOp::create(
      b, loc, qk, ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}});
  auto [outputs, logSumExp] =
      attendChunkTokens(tb, s, query, tokens, headsAsRows(b, loc, keys),
                        headsAsRows(b, loc, values), position);
  Value combined = combineRounds(tb, s, outputs, logSumExp);
  return tensor::ExpandShapeOp::create(
             b, loc, tensorType(value), combined,
             ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}})
      .getResult();
}
