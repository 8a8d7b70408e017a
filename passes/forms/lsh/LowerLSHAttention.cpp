//===- LowerLSHAttention.cpp - Reformer LSH attention to linalg -----------===//
//
// Reformer LSH attention (docs/design.md §3) over `[batch*heads, seq, dim]`
// views, in four steps, each its own dispatches:
//   1. hash: per (row, round, tile of tokens) project onto the rotations
//      and take argmax([xR; -xR]); padded tokens get the extra bucket
//      n_buckets, so they sort last;
//   2. sort: per (row, round) a stable counting sort by bucket gives the
//      sorted positions and their inverse;
//   3. attend chunks: per (row, round, chunk) gather the chunk's queries
//      and the keys and values of it and the previous chunk (the rounds'
//      sorted orders run end to end: a round's first chunk looks back at
//      the previous round's last, round 0's at the last round's),
//      mask (self -1e5, causal, padding) and keep each row's logsumexp,
//      the scores laid out keys by queries as the flash kernels lay them;
//   4. undo the sort and combine: each token's output of every round,
//      weighted by the round's logsumexp.
//
//===----------------------------------------------------------------------===//

#include "passes/forms/lsh/LSHSteps.h"
#include "passes/forms/lsh/LSHForm.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/SplitMix64.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// The N(0, 1) rotations of LSH hashing, [head_dim, n_hashes, n_buckets/2],
/// drawn at compile time from `seed` (splitmix64, Box-Muller): a compiled
/// model hashes the same way on every call and every device.
DenseElementsAttr lshRotations(RankedTensorType type, uint64_t seed) {
  SplitMix64 random{seed};
  auto uniform = [&]() { return ((random.next() >> 11) + 0.5) * 0x1.0p-53; };
  std::vector<float> values(type.getNumElements());
  for (float &v : values)
    v = static_cast<float>(std::sqrt(-2.0 * std::log(uniform())) *
                           std::cos(2.0 * M_PI * uniform()));
  return DenseElementsAttr::get(type, ArrayRef<float>(values));
}

/// argmax over [xR; -xR] of each row of `projected` ([tile, half]): index
/// j for +xR_j, half + j for -xR_j; of equal maxima the first in the order
/// +xR_0, -xR_0, +xR_1, ... wins. Two vectorizable reductions instead of
/// one loop that carries a value and an index: the largest |xR_j|, then the
/// smallest key 2j (+xR_j attains it) or 2j + 1 (-xR_j does).
Value argmaxOfRotated(TensorBuilder &t, Value projected, int64_t tile,
                      int64_t half) {
  using utils::IteratorType;
  OpBuilder &builder = t.builder();
  Type i32 = builder.getI32Type();
  Value magnitude =
      t.reduceLastDim({projected}, kNegativeInfinity,
                      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                        Value absolute = arith::MaximumFOp::create(
                            b, l, a[0], arith::NegFOp::create(b, l, a[0]));
                        return arith::MaximumFOp::create(b, l, absolute, a[1]);
                      });
  constexpr int32_t kNoKey = std::numeric_limits<int32_t>::max();
  Value firstKey = t.generic(
      filledI32(builder, t.location(), {tile}, kNoKey), {projected, magnitude},
      {t.identityMap(2), t.dropLastMap(2), t.dropLastMap(2)},
      {IteratorType::parallel, IteratorType::reduction},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value j = castToI32(b, l, linalg::IndexOp::create(b, l, 1));
        Value even = arith::AddIOp::create(b, l, j, j);
        Value odd = arith::AddIOp::create(b, l, even, i32Constant(b, l, 1));
        Value up =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, a[0], a[1]);
        Value down =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                  arith::NegFOp::create(b, l, a[0]), a[1]);
        Value key = arith::SelectOp::create(
            b, l, up, even,
            arith::SelectOp::create(b, l, down, odd,
                                    i32Constant(b, l, kNoKey)));
        return arith::MinSIOp::create(b, l, key, a[2]);
      });
  return t.map(
      {tile}, i32, {firstKey}, {t.identityMap(1)},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        // No key (a NaN row) falls in bucket 0, as the strict comparison
        // of a running argmax would leave it.
        Value none = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[0],
                                           i32Constant(b, l, kNoKey));
        Value j = arith::ShRSIOp::create(b, l, a[0], i32Constant(b, l, 1));
        Value negated = arith::AndIOp::create(b, l, a[0], i32Constant(b, l, 1));
        Value bucketIndex = arith::AddIOp::create(
            b, l, j,
            arith::MulIOp::create(b, l, negated, i32Constant(b, l, half)));
        return arith::SelectOp::create(b, l, none, i32Constant(b, l, 0),
                                       bucketIndex);
      });
}

/// The bucket b1 + n1 * b2 of each row of `projected` ([tile, (n1 + n2) /
/// 2]): b1 the argmax over [xR1; -xR1] of its first n1 / 2 columns, b2 over
/// [xR2; -xR2] of the other n2 / 2 (trax's factorized `n_buckets`).
Value factorizedArgmax(TensorBuilder &t, Value projected, int64_t tile,
                       std::pair<int64_t, int64_t> factors) {
  OpBuilder &b = t.builder();
  Location loc = t.location();
  int64_t n1 = factors.first, n2 = factors.second;
  auto columns = [&](int64_t first, int64_t count) {
    return sliceOf(b, loc, RankedTensorType::get({tile, count}, b.getF32Type()),
                   projected, {b.getIndexAttr(0), b.getIndexAttr(first)},
                   {b.getIndexAttr(tile), b.getIndexAttr(count)});
  };
  Value low = argmaxOfRotated(t, columns(0, n1 / 2), tile, n1 / 2);
  Value high = argmaxOfRotated(t, columns(n1 / 2, n2 / 2), tile, n2 / 2);
  return t.mapSameShape(
      {low, high}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::AddIOp::create(
            nb, l, a[0],
            arith::MulIOp::create(nb, l, a[1], i32Constant(nb, l, n1)));
      });
}

} // namespace

Value lowering::lshRotationsOf(OpBuilder &b, Location loc, const LSHShape &s,
                               uint64_t seed) {
  auto type =
      RankedTensorType::get({s.dim, s.rounds, s.half}, b.getF32Type());
  return arith::ConstantOp::create(b, loc, type, lshRotations(type, seed));
}

/// Step 1, a bucket-sized tile of tokens at a time.
Value lowering::hashTokens(OpBuilder &b, Location loc, const LSHShape &s,
                           Value qk, Value rotations) {
  TensorBuilder tb(b, loc);
  Type elt = tensorType(qk).getElementType(), f32 = b.getF32Type(),
       i32 = b.getI32Type();
  int64_t tile = s.bucket;
  auto unit = b.getIndexAttr(1);
  Value bucketsOf = tb.empty({s.rows, s.rounds, s.padded}, i32);
  auto hash = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(s.rows), b.getIndexAttr(s.rounds),
                             b.getIndexAttr(s.padded / tile)},
      ValueRange{bucketsOf}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(hash.getBody());
  TensorBuilder t(b, loc);
  Value row = hash.getInductionVars()[0], round = hash.getInductionVars()[1];
  Value start = arith::MulIOp::create(b, loc, hash.getInductionVars()[2],
                                      indexConstant(b, loc, tile));
  // Half tokens are hashed widened: the rotations and projections are f32,
  // so a token falls in the bucket f32 gives its rounded value.
  Value tokens = withElementType(
      t,
      sliceOf(b, loc, RankedTensorType::get({tile, s.dim}, elt), qk,
              {row, start, b.getIndexAttr(0)},
              {unit, b.getIndexAttr(tile), b.getIndexAttr(s.dim)}),
      f32);
  Value rotation =
      sliceOf(b, loc, RankedTensorType::get({s.dim, s.half}, f32), rotations,
              {b.getIndexAttr(0), round, b.getIndexAttr(0)},
              {b.getIndexAttr(s.dim), unit, b.getIndexAttr(s.half)});
  Value projected =
      t.matmul(tokens, rotation, t.filled({tile, s.half}, f32, 0.0));
  Value argmax = s.factors ? factorizedArgmax(t, projected, tile, *s.factors)
                           : argmaxOfRotated(t, projected, tile, s.half);
  Value tileBuckets = t.map(
      {tile}, i32, {argmax}, {t.identityMap(1)},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value pos = arith::AddIOp::create(nb, l, start,
                                          linalg::IndexOp::create(nb, l, 0));
        Value isPad = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge,
                                            pos, indexConstant(nb, l, s.seq));
        return arith::SelectOp::create(
            nb, l, isPad,
            arith::ConstantOp::create(nb, l, nb.getI32IntegerAttr(s.buckets)),
            a[0]);
      });
  b.setInsertionPointToStart(hash.getTerminator().getBody());
  insertIntoShared(b, loc, tileBuckets, hash.getRegionIterArgs()[0],
                   {row, round, start}, {unit, unit, b.getIndexAttr(tile)});
  return hash.getResult(0);
}

SmallVector<Value>
lowering::inRowGroups(OpBuilder &b, Location loc, ValueRange operands,
                      int64_t chunks,
                      function_ref<SmallVector<Value>(ValueRange)> attend) {
  if (chunks <= 1)
    return attend(operands);
  SmallVector<ReassociationIndices> rowsOf = {{0, 1}, {2}, {3}};
  RankedTensorType first = tensorType(operands.front());
  int64_t rows = first.getDimSize(0) * first.getDimSize(1);
  int64_t seq = first.getDimSize(2);
  SmallVector<Value> flat;
  for (Value x : operands)
    flat.push_back(tensor::CollapseShapeOp::create(b, loc, x, rowsOf));
  auto rowType = [&](Value x, int64_t count, bool grouped) {
    RankedTensorType type = tensorType(x);
    int64_t width = type.getDimSize(type.getRank() - 1);
    SmallVector<int64_t> shape = {count, seq, width};
    if (grouped)
      shape.insert(shape.begin(), 1);
    return RankedTensorType::get(shape, type.getElementType());
  };
  auto at = [&](int64_t row, int64_t count, int64_t width) {
    return std::make_pair(
        SmallVector<OpFoldResult>{b.getIndexAttr(row), b.getIndexAttr(0),
                                  b.getIndexAttr(0)},
        SmallVector<OpFoldResult>{b.getIndexAttr(count), b.getIndexAttr(seq),
                                  b.getIndexAttr(width)});
  };
  int64_t group = llvm::divideCeil(rows, chunks);
  SmallVector<Value> outs;
  SmallVector<RankedTensorType> outTypes;
  for (int64_t row = 0; row < rows; row += group) {
    int64_t count = std::min(group, rows - row);
    SmallVector<Value> slices;
    for (auto [x, original] : llvm::zip_equal(flat, operands)) {
      auto [offsets, sizes] = at(row, count, tensorType(x).getDimSize(2));
      Value slice =
          sliceOf(b, loc, rowType(original, count, false), x, offsets, sizes);
      slices.push_back(tensor::ExpandShapeOp::create(
          b, loc, rowType(original, count, true), slice, rowsOf));
    }
    SmallVector<Value> results = attend(slices);
    if (outs.empty())
      for (Value r : results) {
        RankedTensorType type = tensorType(r);
        outTypes.push_back(RankedTensorType::get(
            {first.getDimSize(0), first.getDimSize(1), seq, type.getDimSize(3)},
            type.getElementType()));
        outs.push_back(tensor::EmptyOp::create(
            b, loc, ArrayRef<int64_t>{rows, seq, type.getDimSize(3)},
            type.getElementType()));
      }
    for (auto [out, r] : llvm::zip_equal(outs, results)) {
      Value flatResult =
          tensor::CollapseShapeOp::create(b, loc, r, rowsOf).getResult();
      auto [offsets, sizes] = at(row, count, tensorType(r).getDimSize(3));
      SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
      out = tensor::InsertSliceOp::create(b, loc, flatResult, out, offsets,
                                          sizes, strides);
    }
  }
  SmallVector<Value> results;
  for (auto [out, type] : llvm::zip_equal(outs, outTypes))
    results.push_back(tensor::ExpandShapeOp::create(b, loc, type, out, rowsOf));
  return results;
}

LSHShape LSHShape::of(Value queryKey, Value value, int64_t nHashes,
                      int64_t bucketSize, bool causal,
                      std::optional<APFloat> scale, bool factorizedHash,
                      std::optional<int64_t> nBuckets) {
  RankedTensorType qkType = tensorType(queryKey);
  LSHShape s;
  s.rows = qkType.getDimSize(0) * qkType.getDimSize(1);
  s.seq = qkType.getDimSize(2);
  s.dim = qkType.getDimSize(3);
  s.valueDim = tensorType(value).getDimSize(3);
  s.rounds = nHashes;
  s.bucket = bucketSize;
  s.chunks = attn::lshChunkCount(s.seq, s.bucket, nBuckets.has_value());
  s.padded = s.chunks * s.bucket;
  s.buckets = attn::lshBucketCount(s.seq, s.bucket, nBuckets);
  s.half = s.buckets / 2;
  if (factorizedHash) {
    // The verifier has checked that the buckets factor.
    s.factors = attn::lshHashFactors(s.buckets);
    s.half = (s.factors->first + s.factors->second) / 2;
  }
  s.causal = causal;
  s.scale = attentionScale(scale, queryKey);
  return s;
}

LSHSorting lowering::hashAndSort(OpBuilder &b, Location loc, const LSHShape &s,
                                 Value queryKey, Value value, uint64_t seed) {
  TensorBuilder tb(b, loc);
  Type f32 = b.getF32Type();
  SmallVector<ReassociationIndices> merge = {{0, 1}, {2}, {3}};
  LSHSorting sorting;
  sorting.queryKey = tensor::CollapseShapeOp::create(
      b, loc, padSeq(tb, queryKey, s.padded), merge);
  sorting.value = tensor::CollapseShapeOp::create(
      b, loc, padSeq(tb, value, s.padded), merge);
  // Keys are the unit-normalised queries: 1/||q|| per token.
  sorting.invNorm =
      tb.map({s.rows, s.padded}, f32, {rowSumOfSquares(tb, sorting.queryKey)},
             {tb.identityMap(2)}, [](OpBuilder &b, Location l, ValueRange a) {
               return inverseNorm(b, l, a[0]);
             });
  sorting.buckets = hashTokens(b, loc, s, sorting.queryKey,
                               lshRotationsOf(b, loc, s, seed));
  sorting.sorted = sortRowsByKey(b, loc, sorting.buckets, s.buckets + 1);
  return sorting;
}

Chunk lowering::chunkAt(OpBuilder &b, Location loc, const LSHShape &s,
                        Value row, Value round, Value index) {
  Chunk chunk;
  chunk.row = row;
  chunk.round = round;
  chunk.start =
      arith::MulIOp::create(b, loc, index, indexConstant(b, loc, s.bucket));
  // The chunk before it among the rounds' chunks laid end to end.
  Value global = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, round, indexConstant(b, loc, s.chunks)),
      index);
  int64_t total = s.rounds * s.chunks;
  Value before = arith::RemUIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, global, indexConstant(b, loc, total - 1)),
      indexConstant(b, loc, total));
  chunk.previousRound =
      arith::DivUIOp::create(b, loc, before, indexConstant(b, loc, s.chunks));
  chunk.previous = arith::MulIOp::create(
      b, loc,
      arith::RemUIOp::create(b, loc, before, indexConstant(b, loc, s.chunks)),
      indexConstant(b, loc, s.bucket));
  return chunk;
}

/// Rows `positions` ([count] i32) of `source` ([rows, padded, width]) in
/// row `row`, each times its `invNorm` ([rows, padded]) when given (the
/// keys of shared-QK attention are the unit-normalised queries) and times
/// `scale` (the queries of k·(q·scale)ᵀ).
Value lowering::gatherRows(TensorBuilder &t, Value source, Value row,
                           Value positions, int64_t count, Value invNorm,
                           double scale) {
  RankedTensorType type = tensorType(source);
  Type elt = type.getElementType();
  return t.map(
      {count, type.getDimSize(2)}, elt, {positions}, {t.map(2, {0})},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value p = castToIndex(b, l, a[0]);
        Value d = linalg::IndexOp::create(b, l, 1);
        Value x = widenedToF32(
            b, l,
            tensor::ExtractOp::create(b, l, source, ValueRange{row, p, d}));
        if (invNorm)
          x = mul(b, l, x,
                  tensor::ExtractOp::create(b, l, invNorm, ValueRange{row, p}));
        if (scale != 1.0)
          x = mul(b, l, x, floatConstant(b, l, b.getF32Type(), scale));
        return roundedTo(b, l, x, elt);
      });
}

/// The scaled scores of a chunk from its dot products `dots`: [bucket,
/// 2 * bucket] of q·kᵀ, or [2 * bucket, bucket] of k·(q·scale)ᵀ, already
/// scaled. A token's score with itself is -1e5; padded keys, and later
/// keys if causal, are -inf.
Value lowering::chunkScores(TensorBuilder &t, const LSHShape &s, Value dots,
                            Value queryPos, Value keyPos,
                            ScoreBlockLayout layout) {
  Type f32 = tensorType(dots).getElementType();
  bool keysByQueries = layout == ScoreBlockLayout::scaledKeysByQueries;
  assert((keysByQueries || layout == ScoreBlockLayout::queriesByKeys) &&
         "chunk scores come from q·kᵀ or from k·(q·scale)ᵀ");
  unsigned queryDim = keysByQueries ? 1 : 0, keyDim = 1 - queryDim;
  SmallVector<int64_t> shape = {s.bucket, 2 * s.bucket};
  if (keysByQueries)
    std::swap(shape[0], shape[1]);
  return t.map(
      shape, f32, {dots, queryPos, keyPos},
      {t.identityMap(2), t.map(2, {queryDim}), t.map(2, {keyDim})},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        auto constant = [&](double v) -> Value {
          return floatConstant(b, l, f32, v);
        };
        Value score = keysByQueries ? a[0] : mul(b, l, a[0], constant(s.scale));
        Value self =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1], a[2]);
        score = arith::SelectOp::create(b, l, self,
                                        constant(kSelfAttentionScore), score);
        Value hidden = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::sge, a[2],
            arith::ConstantOp::create(b, l, b.getI32IntegerAttr(s.seq)));
        if (s.causal)
          hidden = arith::OrIOp::create(
              b, l, hidden,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, a[2],
                                    a[1]));
        return arith::SelectOp::create(b, l, hidden,
                                       constant(kNegativeInfinity), score);
      });
}

namespace {

/// softmax(scores) · values of one chunk, from its scores [2 * bucket,
/// bucket] (keys by queries), written into `outputsInto` ([bucket, v_dim]),
/// and each query's logsumexp, into `logSumExpInto` ([bucket]): a chunk's
/// results go straight to their rows of the round's results.
std::pair<Value, Value> softmaxTimesValues(TensorBuilder &t, const LSHShape &s,
                                           Value scores, Value values,
                                           Value outputsInto,
                                           Value logSumExpInto) {
  OpBuilder &b = t.builder();
  Location loc = t.location();
  Type f32 = tensorType(scores).getElementType();
  Value maxima = columnMax(t, scores);
  auto [probs, sums] =
      columnExponentials(t, scores, maxima, t.filled({s.bucket}, f32, 0.0));
  Value zeros = linalg::FillOp::create(
                    b, loc, ValueRange{floatConstant(b, loc, f32, 0.0)},
                    ValueRange{outputsInto})
                    .getResult(0);
  Value weighted =
      BlockProducts::of(t, values).transposedA(probs, values, zeros);
  auto parallel = [](unsigned rank) {
    return SmallVector<utils::IteratorType>(rank,
                                            utils::IteratorType::parallel);
  };
  Value outputs =
      t.generic(weighted, {sums}, {t.dropLastMap(2), t.identityMap(2)},
                parallel(2), [](OpBuilder &nb, Location l, ValueRange a) {
                  return arith::DivFOp::create(nb, l, a[1], a[0]).getResult();
                });
  Value logSumExp =
      t.generic(logSumExpInto, {maxima, sums},
                {t.identityMap(1), t.identityMap(1), t.identityMap(1)},
                parallel(1), [](OpBuilder &nb, Location l, ValueRange a) {
                  return add(nb, l, a[0], math::LogOp::create(nb, l, a[1]));
                });
  return {outputs, logSumExp};
}

/// How many consecutive chunks one workgroup attends: the largest power of
/// two up to 8 that divides the chunks of a round. A chunk's keys are its own
/// tokens and the previous chunk's, so a group gathers each token once where
/// chunks one at a time gather every token twice; 8 chunks' rows (about
/// 0.5 MiB at head_dim 64) stay in the L2 cache.
int64_t chunksPerGroup(int64_t chunks) {
  int64_t group = 8;
  while (chunks % group != 0)
    group /= 2;
  return group;
}

/// `count` rows from `start` of a [rows, width] or [rows] tensor.
Value rowsOf(OpBuilder &b, Location loc, Value x, Value start, int64_t count) {
  RankedTensorType type = tensorType(x);
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = count;
  SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes;
  for (int64_t size : shape)
    sizes.push_back(b.getIndexAttr(size));
  offsets[0] = start;
  return sliceOf(b, loc, RankedTensorType::get(shape, type.getElementType()), x,
                 offsets, sizes);
}

/// `tile` ([count, ...]) written into `into` from row `start`.
Value withRowsAt(OpBuilder &b, Location loc, Value tile, Value into,
                 Value start) {
  RankedTensorType type = tensorType(tile);
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t size : type.getShape())
    sizes.push_back(b.getIndexAttr(size));
  offsets[0] = start;
  return tensor::InsertSliceOp::create(b, loc, tile, into, offsets, sizes,
                                       strides);
}

/// The sorted positions a group of chunks reads, [(group + 1) * bucket]
/// i32: the chunk before the group's first (the previous round's last,
/// for chunk 0), then the group's own. Chunk j of the group takes its keys from
/// rows [j, j + 2) buckets of it (the chunk before it, then itself) and its
/// queries from rows [j + 1, j + 2).
Value groupPositions(TensorBuilder &t, const LSHShape &s, const Chunk &first,
                     int64_t group, Value sortedPositions) {
  int64_t bucket = s.bucket;
  return t.map(
      {(group + 1) * bucket}, t.builder().getI32Type(), {}, {},
      [&](OpBuilder &b, Location l, ValueRange) -> Value {
        Value i = linalg::IndexOp::create(b, l, 0);
        Value before = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i,
                                             indexConstant(b, l, bucket));
        Value at = arith::SelectOp::create(
            b, l, before, arith::AddIOp::create(b, l, first.previous, i),
            arith::AddIOp::create(
                b, l, first.start,
                arith::SubIOp::create(b, l, i, indexConstant(b, l, bucket))));
        Value round = arith::SelectOp::create(b, l, before, first.previousRound,
                                              first.round);
        return tensor::ExtractOp::create(b, l, sortedPositions,
                                         ValueRange{first.row, round, at})
            .getResult();
      });
}

/// One chunk's attention from its group's gathered rows: [bucket, v_dim]
/// outputs and [bucket] logsumexps, written into those rows of the group's
/// `outputs` and `logSumExps`. `at` is the chunk's first row in the group's
/// keys and values (its queries' first row is `at` too: the queries skip
/// the chunk before the group).
std::pair<Value, Value> attendChunkOfGroup(TensorBuilder &t, const LSHShape &s,
                                           Value positions, Value queries,
                                           Value keys, Value values, Value at,
                                           Value outputs, Value logSumExps) {
  OpBuilder &b = t.builder();
  Location loc = t.location();
  Type f32 = b.getF32Type();
  int64_t bucket = s.bucket;
  Value queryAt = arith::AddIOp::create(b, loc, at, t.index(bucket));
  Value queryPos = rowsOf(b, loc, positions, queryAt, bucket);
  Value keyPos = rowsOf(b, loc, positions, at, 2 * bucket);
  // k·(q·scale)ᵀ: the queries' one transposition, of bucket x dim, is the
  // product's.
  Value dots = BlockProducts::of(t, keys).transposedB(
      rowsOf(b, loc, keys, at, 2 * bucket), rowsOf(b, loc, queries, at, bucket),
      t.filled({2 * bucket, bucket}, f32, 0.0));
  Value scores = chunkScores(t, s, dots, queryPos, keyPos,
                             ScoreBlockLayout::scaledKeysByQueries);
  return softmaxTimesValues(t, s, scores,
                            rowsOf(b, loc, values, at, 2 * bucket),
                            rowsOf(b, loc, outputs, at, bucket),
                            rowsOf(b, loc, logSumExps, at, bucket));
}

} // namespace

std::pair<Value, Value> lowering::chunkPositions(TensorBuilder &t,
                                                 const LSHShape &s,
                                                 const Chunk &chunk,
                                                 Value sortedPositions) {
  Value keyPos = groupPositions(t, s, chunk, /*group=*/1, sortedPositions);
  Value queryPos =
      rowsOf(t.builder(), t.location(), keyPos, t.index(s.bucket), s.bucket);
  return {queryPos, keyPos};
}

/// Step 3: attention within chunks of the sorted order, with look-back,
/// each chunk in the layout of the flash kernels (scores keys by queries),
/// a group of consecutive chunks per workgroup.
RoundResults lowering::attendChunks(OpBuilder &b, Location loc,
                                    const LSHShape &s,
                                    const LSHSorting &sorting) {
  Value qk = sorting.queryKey, value = sorting.value, invNorm = sorting.invNorm,
        sortedPositions = sorting.sorted.positions;
  TensorBuilder tb(b, loc);
  // Each round's outputs and logsumexps are f32 on half operands too.
  Type f32 = b.getF32Type();
  auto unit = b.getIndexAttr(1);
  int64_t group = chunksPerGroup(s.chunks);
  int64_t groupRows = group * s.bucket;
  auto attend = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(s.rows), b.getIndexAttr(s.rounds),
                             b.getIndexAttr(s.chunks / group)},
      ValueRange{tb.empty({s.rows, s.rounds, s.padded, s.valueDim}, f32),
                 tb.empty({s.rows, s.rounds, s.padded}, f32)},
      std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(attend.getBody());
  TensorBuilder t(b, loc);
  Value row = attend.getInductionVars()[0];
  Chunk first =
      chunkAt(b, loc, s, row, attend.getInductionVars()[1],
              arith::MulIOp::create(b, loc, attend.getInductionVars()[2],
                                    t.index(group)));
  Value positions = groupPositions(t, s, first, group, sortedPositions);
  // The queries times the scale: the B of k·(q·scale)ᵀ.
  Value queries = gatherRows(
      t, qk, row, rowsOf(b, loc, positions, t.index(s.bucket), groupRows),
      groupRows, /*invNorm=*/{}, s.scale);
  Value keys = gatherRows(t, qk, row, positions, groupRows + s.bucket, invNorm);
  Value values = gatherRows(t, value, row, positions, groupRows + s.bucket);
  // The chunks write straight into the group's rows of the shared results.
  Value outputTile = sliceOf(
      b, loc, RankedTensorType::get({groupRows, s.valueDim}, f32),
      attend.getRegionIterArgs()[0],
      {first.row, first.round, first.start, b.getIndexAttr(0)},
      {unit, unit, b.getIndexAttr(groupRows), b.getIndexAttr(s.valueDim)});
  Value logSumExpTile = sliceOf(b, loc, RankedTensorType::get({groupRows}, f32),
                                attend.getRegionIterArgs()[1],
                                {first.row, first.round, first.start},
                                {unit, unit, b.getIndexAttr(groupRows)});
  auto chunks = scf::ForOp::create(
      b, loc, t.index(0), t.index(groupRows), t.index(s.bucket),
      ValueRange{outputTile, logSumExpTile},
      [&](OpBuilder &nb, Location nloc, Value at, ValueRange tiles) {
        TensorBuilder u(nb, nloc);
        auto [outputs, logSumExp] = attendChunkOfGroup(
            u, s, positions, queries, keys, values, at, tiles[0], tiles[1]);
        scf::YieldOp::create(
            nb, nloc,
            ValueRange{withRowsAt(nb, nloc, outputs, tiles[0], at),
                       withRowsAt(nb, nloc, logSumExp, tiles[1], at)});
      });
  b.setInsertionPointToStart(attend.getTerminator().getBody());
  insertIntoShared(
      b, loc, chunks.getResult(0), attend.getRegionIterArgs()[0],
      {first.row, first.round, first.start, b.getIndexAttr(0)},
      {unit, unit, b.getIndexAttr(groupRows), b.getIndexAttr(s.valueDim)});
  insertIntoShared(b, loc, chunks.getResult(1), attend.getRegionIterArgs()[1],
                   {first.row, first.round, first.start},
                   {unit, unit, b.getIndexAttr(groupRows)});
  return {attend.getResult(0), attend.getResult(1)};
}

Value lowering::sortedPlaces(TensorBuilder &tb, const LSHShape &s,
                             Value inverse, int64_t positions) {
  return tb.map({s.rows, positions, s.rounds}, tb.builder().getI32Type(), {},
                {}, [&](OpBuilder &b, Location l, ValueRange) -> Value {
                  return tensor::ExtractOp::create(
                      b, l, inverse,
                      ValueRange{linalg::IndexOp::create(b, l, 0),
                                 linalg::IndexOp::create(b, l, 2),
                                 linalg::IndexOp::create(b, l, 1)});
                });
}

namespace {

/// Step 4: undo the sort and combine the rounds by their logsumexp: each
/// token's output is the sum over rounds of its round's output times that
/// round's share, exp(lse - max lse) / sum exp(lse - max lse). Returns
/// [rows, seq, v_dim].
Value undoSortAndCombine(TensorBuilder &tb, const LSHShape &s, Value inverse,
                         const RoundResults &rounds) {
  using utils::IteratorType;
  Type f32 = tensorType(rounds.outputs).getElementType();
  // Per (row, position, round): where the round's sort put the token, and
  // the logsumexp of its row there.
  Value sortedAt = sortedPlaces(tb, s, inverse, s.seq);
  Value lse =
      tb.map({s.rows, s.seq, s.rounds}, f32, {sortedAt}, {tb.identityMap(3)},
             [&](OpBuilder &b, Location l, ValueRange a) -> Value {
               return tensor::ExtractOp::create(
                   b, l, rounds.logSumExp,
                   ValueRange{linalg::IndexOp::create(b, l, 0),
                              linalg::IndexOp::create(b, l, 2),
                              castToIndex(b, l, a[0])});
             });
  Value top = rowMax(tb, lse);
  Value weights = tb.map({s.rows, s.seq, s.rounds}, f32, {lse, top},
                         {tb.identityMap(3), tb.dropLastMap(3)},
                         [](OpBuilder &b, Location l, ValueRange a) {
                           return expShifted(b, l, a[0], a[1]);
                         });
  Value total = rowSum(tb, weights);
  Value shares =
      tb.map({s.rows, s.seq, s.rounds}, f32, {weights, total},
             {tb.identityMap(3), tb.dropLastMap(3)},
             [](OpBuilder &b, Location l, ValueRange a) {
               return arith::DivFOp::create(b, l, a[0], a[1]).getResult();
             });
  // Loops (row, position, round, v_dim), the rounds a dimension (the code
  // does not grow with n_hashes): the innermost adds a contiguous output
  // row of one round to the token's, and vectorizes.
  return tb.generic(
      tb.filled({s.rows, s.seq, s.valueDim}, f32, 0.0), {sortedAt, shares},
      {tb.map(4, {0, 1, 2}), tb.map(4, {0, 1, 2}), tb.map(4, {0, 1, 3})},
      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction,
       IteratorType::parallel},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value o = tensor::ExtractOp::create(
            b, l, rounds.outputs,
            ValueRange{linalg::IndexOp::create(b, l, 0),
                       linalg::IndexOp::create(b, l, 2),
                       castToIndex(b, l, a[0]),
                       linalg::IndexOp::create(b, l, 3)});
        return add(b, l, a[2], mul(b, l, o, a[1]));
      });
}

struct LowerLSHAttention : OpRewritePattern<LSHAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The attention of one group of rows: every operand [1, rows, seq, *].
  static Value rowAttention(OpBuilder &b, Location loc, LSHAttentionOp op,
                            Value queryKey, Value value) {
    TensorBuilder tb(b, loc);
    LSHShape s = LSHShape::of(queryKey, value, op.getNHashes(),
                              op.getBucketSize(), op.getCausal(), op.getScale(),
                              op.getFactorizedHash(), op.getNBuckets());
    LSHSorting sorting = hashAndSort(b, loc, s, queryKey, value,
                                     static_cast<uint64_t>(op.getSeed()));
    RoundResults rounds = attendChunks(b, loc, s, sorting);
    // Combined in f32, rounded once to the operands' type.
    Value combined = withElementType(
        tb, undoSortAndCombine(tb, s, sorting.sorted.inverse, rounds),
        tensorType(value).getElementType());
    SmallVector<ReassociationIndices> merge = {{0, 1}, {2}, {3}};
    return tensor::ExpandShapeOp::create(b, loc, value.getType(), combined,
                                         merge);
  }

  LogicalResult matchAndRewrite(LSHAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    Location loc = op.getLoc();
    SmallVector<Value> result = inRowGroups(
        rewriter, loc, {op.getQueryKey(), op.getValue()}, op.getChunks(),
        [&](ValueRange rows) -> SmallVector<Value> {
          return {rowAttention(rewriter, loc, op, rows[0], rows[1])};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void lcc::populateLSHAttentionLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerLSHAttention>(patterns.getContext());
}
