//===- LowerLSHAttentionBackward.cpp - the backward of LSH attention ------===//
//
// attn.lsh_attention_backward in the steps of the forward (LSHSteps.h):
//   1-3. hash and sort exactly as the forward did (the same rotations), and
//        recompute each round's chunk outputs o_r and logsumexps L_r;
//   4. through the combine out = sum_r w_r o_r, w_r = softmax_r(L_r): each
//      round's output gets w_r · dout and its logsumexp
//      w_r · dout · (o_r - out), placed in sorted order;
//   5. per chunk, the softmax attention's backward from the recomputed
//      probabilities p = softmax(s) (normalised per query, not exp(s -
//      L_r), which f32 rounds where L_r is near the self score -1e5):
//        ds = p (do vᵀ - do · o + dL) · scale (0 at the constant self score),
//        dq = ds k̂, dk̂ = dsᵀ q, dv = pᵀ do,
//      each chunk writing its queries' gradients, its own keys' and its
//      look-back keys' (the previous chunk's) into separate buffers, so that
//      no two chunks write the same bytes;
//   6. undo the sort and sum the rounds: the key gradients flow back
//      through the normalisation into the query's.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/Lowerings.h"
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
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// Step 4's results in sorted order: the gradient of each round's output,
/// [rows, rounds, padded, v_dim], and of its logsumexp, [rows, rounds,
/// padded].
struct RoundGradients {
  Value outputs, logSumExp;
};

/// Step 4: the combine's backward. `out` and `outGrad` are the forward's
/// result and its gradient as [rows, padded, v_dim].
RoundGradients combineBackward(TensorBuilder &tb, const LSHShape &s,
                               const LSHSorting &sorting, Value sortedAt,
                               const RoundResults &rounds, Value out,
                               Value outGrad) {
  Type f32 = tensorType(out).getElementType();
  // Per token, the logsumexp over rounds of the rounds' logsumexps.
  Value tokenLse =
      tb.map({s.rows, s.padded, s.rounds}, f32, {sortedAt}, {tb.identityMap(3)},
             [&](OpBuilder &b, Location l, ValueRange a) -> Value {
               return tensor::ExtractOp::create(
                   b, l, rounds.logSumExp,
                   ValueRange{linalg::IndexOp::create(b, l, 0),
                              linalg::IndexOp::create(b, l, 2),
                              castToIndex(b, l, a[0])});
             });
  Value top = rowMax(tb, tokenLse);
  Value total = tb.reduceLastDim(
      {tokenLse}, {top}, 0.0, [](OpBuilder &b, Location l, ValueRange a) {
        return add(b, l, a[2], expShifted(b, l, a[0], a[1]));
      });
  // dout · out per token.
  Value outDot = tb.reduceLastDim(
      {outGrad, out}, 0.0, [](OpBuilder &b, Location l, ValueRange a) {
        return multiplyAccumulate(b, l, a[0], a[1], a[2]);
      });
  Value positions = sorting.sorted.positions;
  // w_r of the token at each sorted place, as the forward computed it:
  // exp(L_r - max_r L_r) / sum, not exp(L_r - logsumexp_r L_r), whose
  // rounding differs when L is large (-1e5 for a token that sees only
  // itself).
  Value weight = tb.map(
      {s.rows, s.rounds, s.padded}, f32, {rounds.logSumExp, positions},
      {tb.identityMap(3), tb.identityMap(3)},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        SmallVector<Value, 2> at = {linalg::IndexOp::create(b, l, 0),
                                    castToIndex(b, l, a[1])};
        Value largest = tensor::ExtractOp::create(b, l, top, at);
        Value sum = tensor::ExtractOp::create(b, l, total, at);
        return arith::DivFOp::create(b, l, expShifted(b, l, a[0], largest), sum)
            .getResult();
      });
  Value outputGrad =
      tb.map({s.rows, s.rounds, s.padded, s.valueDim}, f32, {weight, positions},
             {tb.map(4, {0, 1, 2}), tb.map(4, {0, 1, 2})},
             [&](OpBuilder &b, Location l, ValueRange a) -> Value {
               Value g = tensor::ExtractOp::create(
                   b, l, outGrad,
                   ValueRange{linalg::IndexOp::create(b, l, 0),
                              castToIndex(b, l, a[1]),
                              linalg::IndexOp::create(b, l, 3)});
               return mul(b, l, a[0], g);
             });
  // dout · o_r of the token at each sorted place.
  Value roundDot = tb.generic(
      tb.filled({s.rows, s.rounds, s.padded}, f32, 0.0),
      {rounds.outputs, positions},
      {tb.identityMap(4), tb.map(4, {0, 1, 2}), tb.map(4, {0, 1, 2})},
      {utils::IteratorType::parallel, utils::IteratorType::parallel,
       utils::IteratorType::parallel, utils::IteratorType::reduction},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value g = tensor::ExtractOp::create(
            b, l, outGrad,
            ValueRange{linalg::IndexOp::create(b, l, 0),
                       castToIndex(b, l, a[1]),
                       linalg::IndexOp::create(b, l, 3)});
        return multiplyAccumulate(b, l, a[0], g, a[2]);
      });
  Value lseGrad = tb.map(
      {s.rows, s.rounds, s.padded}, f32, {weight, roundDot, positions},
      {tb.identityMap(3), tb.identityMap(3), tb.identityMap(3)},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value token = castToIndex(b, l, a[2]);
        Value whole = tensor::ExtractOp::create(
            b, l, outDot, ValueRange{linalg::IndexOp::create(b, l, 0), token});
        return mul(b, l, a[0], arith::SubFOp::create(b, l, a[1], whole));
      });
  return {outputGrad, lseGrad};
}

/// Step 5's results, in sorted order: [rows, rounds, padded, *] each.
struct ChunkGradients {
  Value queries, ownKeys, lookBackKeys, ownValues, lookBackValues;
};

/// The [count, width] block at `offset` of row (row, round) of a
/// [rows, rounds, padded, width] tensor.
Value sortedBlock(OpBuilder &b, Location loc, Value x, Value row, Value round,
                  Value offset, int64_t count) {
  RankedTensorType type = tensorType(x);
  int64_t width = type.getDimSize(3);
  auto unit = b.getIndexAttr(1);
  return sliceOf(b, loc,
                 RankedTensorType::get({count, width}, type.getElementType()),
                 x, {row, round, offset, b.getIndexAttr(0)},
                 {unit, unit, b.getIndexAttr(count), b.getIndexAttr(width)});
}

/// Step 5: the backward of every chunk's attention.
ChunkGradients chunksBackward(OpBuilder &b, Location loc, const LSHShape &s,
                              const LSHSorting &sorting,
                              const RoundResults &rounds,
                              const RoundGradients &grads) {
  TensorBuilder tb(b, loc);
  // Scores, probabilities and every gradient are f32 on half operands too.
  Type f32 = b.getF32Type();
  int64_t bucket = s.bucket;
  auto empty = [&](int64_t width) {
    return tb.empty({s.rows, s.rounds, s.padded, width}, f32);
  };
  auto backward = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(s.rows), b.getIndexAttr(s.rounds),
                             b.getIndexAttr(s.chunks)},
      ValueRange{empty(s.dim), empty(s.dim), empty(s.dim), empty(s.valueDim),
                 empty(s.valueDim)},
      std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(backward.getBody());
  TensorBuilder t(b, loc);
  Chunk chunk =
      chunkAt(b, loc, s, backward.getInductionVars()[0],
              backward.getInductionVars()[1], backward.getInductionVars()[2]);
  auto [queryPos, keyPos] =
      chunkPositions(t, s, chunk, sorting.sorted.positions);
  Value queries = gatherRows(t, sorting.queryKey, chunk.row, queryPos, bucket);
  Value keys = gatherRows(t, sorting.queryKey, chunk.row, keyPos, 2 * bucket,
                          sorting.invNorm);
  Value values = gatherRows(t, sorting.value, chunk.row, keyPos, 2 * bucket);
  // Half operands meet in pairs with f32 sums; p, ds and do are rounded to
  // their type for the products, as the forward rounds p.
  BlockProducts products = BlockProducts::of(t, queries);
  Value dots = products.transposedB(queries, keys,
                                    t.filled({bucket, 2 * bucket}, f32, 0.0));
  Value scores = chunkScores(t, s, dots, queryPos, keyPos);
  auto rowBlock = [&](Value x) {
    auto unit = b.getIndexAttr(1);
    return sliceOf(b, loc, RankedTensorType::get({bucket}, f32), x,
                   {chunk.row, chunk.round, chunk.start},
                   {unit, unit, b.getIndexAttr(bucket)});
  };
  Value lseGrad = rowBlock(grads.logSumExp);
  Value outputs = sortedBlock(b, loc, rounds.outputs, chunk.row, chunk.round,
                              chunk.start, bucket);
  Value outputGrad = sortedBlock(b, loc, grads.outputs, chunk.row, chunk.round,
                                 chunk.start, bucket);
  // p = exp(s - max) / sum per query, not exp(s - L_r): a query that sees
  // only itself, in its chunk and again in the previous round's, has
  // L_r = -1e5 + ln 2, which f32 holds only to 2^-8, and the value's
  // gradient would be off by as much.
  RowExponentials e = rowExponentials(t, scores);
  Value probabilities =
      t.map({bucket, 2 * bucket}, f32, {e.exps, e.sums},
            {t.identityMap(2), t.dropLastMap(2)},
            [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
              Value zero = floatConstant(nb, l, f32, 0.0);
              Value seen = arith::CmpFOp::create(
                  nb, l, arith::CmpFPredicate::OGT, a[1], zero);
              Value p = arith::DivFOp::create(nb, l, a[0], a[1]);
              return arith::SelectOp::create(nb, l, seen, p, zero);
            });
  Value delta = t.reduceLastDim(
      {outputGrad, outputs}, 0.0, [](OpBuilder &nb, Location l, ValueRange a) {
        return multiplyAccumulate(nb, l, a[0], a[1], a[2]);
      });
  Value dP = products.transposedB(outputGrad, values,
                                  t.filled({bucket, 2 * bucket}, f32, 0.0));
  Value scoreGrad = t.map(
      {bucket, 2 * bucket}, f32,
      {probabilities, dP, delta, lseGrad, queryPos, keyPos},
      {t.identityMap(2), t.identityMap(2), t.dropLastMap(2), t.dropLastMap(2),
       t.map(2, {0}), t.map(2, {1})},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value ds =
            mul(nb, l, a[0],
                add(nb, l, arith::SubFOp::create(nb, l, a[1], a[2]), a[3]));
        ds = mul(nb, l, ds, floatConstant(nb, l, f32, s.scale));
        // The self score is the constant -1e5.
        Value self =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, a[4], a[5]);
        return arith::SelectOp::create(nb, l, self,
                                       floatConstant(nb, l, f32, 0.0), ds);
      });
  Value queryGrad =
      products.plain(scoreGrad, keys, t.filled({bucket, s.dim}, f32, 0.0));
  Value keyGrad = products.transposedA(scoreGrad, queries,
                                       t.filled({2 * bucket, s.dim}, f32, 0.0));
  Value valueGrad = products.transposedA(
      probabilities, outputGrad, t.filled({2 * bucket, s.valueDim}, f32, 0.0));
  auto half = [&](Value x, bool lookBack, int64_t width) {
    return sliceOf(b, loc, RankedTensorType::get({bucket, width}, f32), x,
                   {b.getIndexAttr(lookBack ? 0 : bucket), b.getIndexAttr(0)},
                   {b.getIndexAttr(bucket), b.getIndexAttr(width)});
  };
  Value pieces[] = {
      queryGrad, half(keyGrad, false, s.dim), half(keyGrad, true, s.dim),
      half(valueGrad, false, s.valueDim), half(valueGrad, true, s.valueDim)};
  // The look-back keys' gradients go to the chunk before, which may be in
  // the previous round: still one chunk's bytes per chunk.
  Value pieceRounds[] = {chunk.round, chunk.round, chunk.previousRound,
                         chunk.round, chunk.previousRound};
  Value offsets[] = {chunk.start, chunk.start, chunk.previous, chunk.start,
                     chunk.previous};
  b.setInsertionPointToStart(backward.getTerminator().getBody());
  auto unit = b.getIndexAttr(1);
  for (unsigned i = 0; i < 5; ++i) {
    int64_t width = tensorType(pieces[i]).getDimSize(1);
    insertIntoShared(
        b, loc, pieces[i], backward.getRegionIterArgs()[i],
        {chunk.row, pieceRounds[i], offsets[i], b.getIndexAttr(0)},
        {unit, unit, b.getIndexAttr(bucket), b.getIndexAttr(width)});
  }
  return {backward.getResult(0), backward.getResult(1), backward.getResult(2),
          backward.getResult(3), backward.getResult(4)};
}

/// Step 6: for each token, the sum over rounds of `parts` (each [rows,
/// rounds, padded, width] in sorted order) at its sorted place:
/// [rows, padded, width]. Loops (row, position, round, width): the
/// innermost adds a contiguous row of one round, and vectorizes.
Value undoSortAndSum(TensorBuilder &tb, const LSHShape &s, Value sortedAt,
                     ArrayRef<Value> parts) {
  using utils::IteratorType;
  RankedTensorType type = tensorType(parts.front());
  int64_t width = type.getDimSize(3);
  return tb.generic(
      tb.filled({s.rows, s.padded, width}, type.getElementType(), 0.0),
      {sortedAt}, {tb.map(4, {0, 1, 2}), tb.map(4, {0, 1, 3})},
      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction,
       IteratorType::parallel},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value sum = a[1];
        for (Value part : parts)
          sum = add(b, l, sum,
                    tensor::ExtractOp::create(
                        b, l, part,
                        ValueRange{linalg::IndexOp::create(b, l, 0),
                                   linalg::IndexOp::create(b, l, 2),
                                   castToIndex(b, l, a[0]),
                                   linalg::IndexOp::create(b, l, 3)}));
        return sum;
      });
}

struct LowerLSHAttentionBackward : OpRewritePattern<LSHAttentionBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The gradients of one group of rows: every operand [1, rows, seq, *].
  static SmallVector<Value> rowGradients(OpBuilder &b, Location loc,
                                         LSHAttentionBackwardOp op,
                                         ValueRange operands) {
    Value queryKey = operands[0], value = operands[1];
    Value result = operands[2], resultGrad = operands[3];
    TensorBuilder tb(b, loc);
    LSHShape s = LSHShape::of(queryKey, value, op.getNHashes(),
                              op.getBucketSize(), op.getCausal(), op.getScale(),
                              op.getFactorizedHash(), op.getNBuckets());
    LSHSorting sorting = hashAndSort(b, loc, s, queryKey, value,
                                     static_cast<uint64_t>(op.getSeed()));
    // The hashing and sort are the forward's (CSE shares them); the chunks'
    // attention is recomputed rather than kept from the forward. In a
    // reversible block the forward is the block's recomputed clone, whose
    // chunk attention CSE then shares too (one layer's rounds live on
    // from the clone to here, as long as the backward's own would); not
    // with row chunks, whose every chunk's rounds would live on at once.
    auto chunkAttention = [&] { return attendChunks(b, loc, s, sorting); };
    RoundResults rounds =
        op->hasAttr(kBackwardOfRecomputedAttrName) && op.getChunks() <= 1
            ? chunkAttention()
            : buildRecomputed(b, chunkAttention);
    SmallVector<ReassociationIndices> merge = {{0, 1}, {2}, {3}};
    // The result and its gradient are read in f32.
    auto flat = [&](Value x) -> Value {
      return withElementType(tb,
                             tensor::CollapseShapeOp::create(
                                 b, loc, padSeq(tb, x, s.padded), merge),
                             b.getF32Type());
    };
    // Where each round's sort put each token: read by the combine's
    // backward and by the undoing of the sort.
    Value sortedAt = sortedPlaces(tb, s, sorting.sorted.inverse, s.padded);
    RoundGradients grads = combineBackward(tb, s, sorting, sortedAt, rounds,
                                           flat(result), flat(resultGrad));
    ChunkGradients chunks = chunksBackward(b, loc, s, sorting, rounds, grads);
    Value direct = undoSortAndSum(tb, s, sortedAt, {chunks.queries});
    Value throughKeys =
        undoSortAndSum(tb, s, sortedAt, {chunks.ownKeys, chunks.lookBackKeys});
    Value valueGrad = undoSortAndSum(tb, s, sortedAt,
                                     {chunks.ownValues, chunks.lookBackValues});
    Value queryKeyGrad = addTensors(
        tb, direct, normalizeRowsBackward(tb, sorting.queryKey, throughKeys));
    // Summed in f32, rounded once to the operands' type.
    auto unpadded = [&](Value x, Type type) -> Value {
      auto like = cast<RankedTensorType>(type);
      int64_t width = like.getDimSize(3);
      Value rows = withElementType(tb, x, like.getElementType());
      if (s.padded != s.seq)
        rows = sliceOf(
            b, loc,
            RankedTensorType::get({s.rows, s.seq, width},
                                  like.getElementType()),
            rows, {b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(0)},
            {b.getIndexAttr(s.rows), b.getIndexAttr(s.seq),
             b.getIndexAttr(width)});
      return tensor::ExpandShapeOp::create(b, loc, like, rows, merge);
    };
    return {unpadded(queryKeyGrad, queryKey.getType()),
            unpadded(valueGrad, value.getType())};
  }

  LogicalResult matchAndRewrite(LSHAttentionBackwardOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    Location loc = op.getLoc();
    SmallVector<Value> gradients = inRowGroups(
        rewriter, loc,
        {op.getQueryKey(), op.getValue(), op.getResult(), op.getResultGrad()},
        op.getChunks(),
        [&](ValueRange rows) { return rowGradients(rewriter, loc, op, rows); });
    rewriter.replaceOp(op, gradients);
    return success();
  }
};

} // namespace

LogicalResult lcc::checkLSHAttentionLowering(Operation *root) {
  WalkResult walk = root->walk([](LSHAttentionBackwardOp op) {
    if (halfPrecisionOf(op).empty())
      return WalkResult::advance();
    bool odd = failed(checkPairedSize(
                   op, "LSH attention's backward multiplies a chunk's queries",
                   "bucket_size", op.getBucketSize())) ||
               failed(checkPairedSize(
                   op, "attention's backward multiplies the values' head_dim",
                   "head_dim", tensorType(op.getValue()).getDimSize(3)));
    return odd ? WalkResult::interrupt() : WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

void lcc::populateLSHAttentionBackwardLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerLSHAttentionBackward>(patterns.getContext());
}
