//===- LowerModelOps.cpp - model-level attn ops to linalg -----------------===//
//
// Embedding, layer norm, linear, feed-forward (chunked along positions when
// asked), residual and reversible blocks, multi-head attention (the
// projections around whichever attention form its body holds) and softmax
// cross-entropy. The math of each op is stated in AttnOps.td; this file
// chooses how to compute it.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/Activations.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

struct LowerEmbedding : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    RankedTensorType resultType = tensorType(op.getResult());
    Value table = op.getTable();
    int64_t vocab = tensorType(table).getDimSize(0);
    Value result = tb.map(resultType.getShape(), resultType.getElementType(),
                          {op.getTokens()}, {tb.map(3, {0, 1})},
                          [&](OpBuilder &b, Location loc, ValueRange a) {
                            Value id = clampedIndex(b, loc, a[0], vocab);
                            Value feature = linalg::IndexOp::create(b, loc, 2);
                            return tensor::ExtractOp::create(
                                       b, loc, table, ValueRange{id, feature})
                                .getResult();
                          });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The frequencies 10000^(-2i/d), i < d/2, computed in double and rounded
/// to f32 at compile time (the op's definition), as a constant; each
/// encoding is then one f32 product and a sine or cosine.
struct LowerSinusoidalEncoding : OpRewritePattern<SinusoidalEncodingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SinusoidalEncodingOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    TensorBuilder tb(rewriter, loc);
    RankedTensorType type = tensorType(op.getResult());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "expected a static shape");
    int64_t half = type.getDimSize(1) / 2;
    SmallVector<float> frequencies;
    for (int64_t i = 0; i < half; ++i)
      frequencies.push_back(
          float(std::pow(10000.0, -2.0 * double(i) / double(2 * half))));
    auto tableType = RankedTensorType::get({half}, rewriter.getF32Type());
    Value table = arith::ConstantOp::create(
        rewriter, loc, tableType,
        DenseElementsAttr::get(tableType, ArrayRef<float>(frequencies)));
    Value result = tb.map(
        type.getShape(), type.getElementType(), {}, {},
        [&](OpBuilder &b, Location loc, ValueRange) -> Value {
          Value position = linalg::IndexOp::create(b, loc, 0);
          Value column = linalg::IndexOp::create(b, loc, 1);
          Value halfIndex = indexConstant(b, loc, half);
          Value isCosine = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sge, column, halfIndex);
          Value frequencyIndex = arith::SelectOp::create(
              b, loc, isCosine,
              arith::SubIOp::create(b, loc, column, halfIndex), column);
          Value frequency =
              tensor::ExtractOp::create(b, loc, table, frequencyIndex);
          Value t = arith::SIToFPOp::create(
              b, loc, b.getF32Type(),
              arith::IndexCastOp::create(b, loc, b.getI64Type(), position));
          Value angle = arith::MulFOp::create(b, loc, t, frequency);
          return arith::SelectOp::create(b, loc, isCosine,
                                         math::CosOp::create(b, loc, angle),
                                         math::SinOp::create(b, loc, angle));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LowerLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    Value x = op.getInput();
    RankedTensorType type = tensorType(x);
    unsigned rank = type.getRank();
    Type elt = type.getElementType();
    auto [mean, invStd] =
        rowMeanAndInverseStd(tb, x, op.getEpsilon().convertToDouble());
    Value result = tb.map(
        type.getShape(), elt, {x, mean, invStd, op.getGamma(), op.getBeta()},
        {tb.identityMap(rank), tb.dropLastMap(rank), tb.dropLastMap(rank),
         tb.lastDimMap(rank), tb.lastDimMap(rank)},
        [&](OpBuilder &b, Location loc, ValueRange a) {
          Value centred = arith::SubFOp::create(b, loc, a[0], a[1]);
          return add(b, loc, mul(b, loc, mul(b, loc, centred, a[2]), a[3]),
                     a[4]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LowerLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    rewriter.replaceOp(op,
                       affine(tb, op.getInput(), op.getWeight(), op.getBias()));
    return success();
  }
};

/// attn.compress is a projection of each group of `rate` rows.
struct LowerCompress : OpRewritePattern<CompressOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CompressOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    rewriter.replaceOp(op, op.buildAsLinear(rewriter));
    return success();
  }
};

/// attn.stop_gradient matters to differentiation only.
struct LowerStopGradient : OpRewritePattern<StopGradientOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StopGradientOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

struct LowerFeedForward : OpRewritePattern<FeedForwardOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The whole feed-forward layer on `input` ([batch, rows, d_model]).
  static Value feedForward(TensorBuilder &tb, FeedForwardOp op, Value input) {
    Value hidden = affine(tb, input, op.getUpWeight(), op.getUpBias());
    Activation kind = op.getActivation();
    hidden = tb.mapSameShape({hidden},
                             [&](OpBuilder &b, Location loc, ValueRange a) {
                               return applyActivation(b, loc, kind, a[0]);
                             });
    return affine(tb, hidden, op.getDownWeight(), op.getDownBias());
  }

  /// Computes rows [offset, offset + rows) of `input` ([positions,
  /// d_model]) into the same rows of `out`.
  static Value feedForwardSlice(TensorBuilder &tb, FeedForwardOp op,
                                Value input, Value out, int64_t offset,
                                int64_t rows) {
    OpBuilder &b = tb.builder();
    int64_t dModel = tensorType(input).getDimSize(1);
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(offset),
                                         b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(rows),
                                       b.getIndexAttr(dModel)};
    SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
    Value slice = tensor::ExtractSliceOp::create(b, tb.location(), input,
                                                 offsets, sizes, strides);
    Value result = feedForward(tb, op, slice);
    return tensor::InsertSliceOp::create(b, tb.location(), result, out, offsets,
                                         sizes, strides);
  }

  LogicalResult matchAndRewrite(FeedForwardOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    int64_t chunks = op.getChunks();
    if (chunks <= 1) {
      rewriter.replaceOp(op, feedForward(tb, op, op.getInput()));
      return success();
    }
    // The layer is position-wise: chunk the batch * seq positions, so every
    // chunk is a contiguous block of rows. Chunk i covers rows
    // [i * rows, (i + 1) * rows) and a shorter tail covers what is left,
    // each slice with a static shape. The chunks are written out one after
    // another rather than as a loop: each becomes its own dispatches, and
    // the memory planner gives every chunk's hidden activations the same
    // bytes.
    RankedTensorType type = tensorType(op.getInput());
    int64_t positions = type.getDimSize(0) * type.getDimSize(1);
    int64_t dModel = type.getDimSize(2);
    SmallVector<ReassociationIndices> rowsOf = {{0, 1}, {2}};
    Value input = tensor::CollapseShapeOp::create(rewriter, op.getLoc(),
                                                  op.getInput(), rowsOf);
    int64_t rows = llvm::divideCeil(positions, chunks);
    Value out = tb.empty({positions, dModel}, type.getElementType());
    for (int64_t row = 0; row < positions; row += rows)
      out = feedForwardSlice(tb, op, input, out, row,
                             std::min(rows, positions - row));
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, type, out, rowsOf);
    return success();
  }
};

struct LowerResidual : OpRewritePattern<ResidualOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ResidualOp op,
                                PatternRewriter &rewriter) const override {
    Value input = op.getInput();
    Value body = inlineRegion(rewriter, op, op.getBody(), input)[0];
    TensorBuilder tb(rewriter, op.getLoc());
    rewriter.replaceOp(op, addTensors(tb, input, body));
    return success();
  }
};

struct LowerReversible : OpRewritePattern<ReversibleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReversibleOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    Value x1 = op.getX1(), x2 = op.getX2();
    Value f = inlineRegion(rewriter, op, op.getF(), x2)[0];
    Value y1 = addTensors(tb, x1, f);
    Value g = inlineRegion(rewriter, op, op.getG(), y1)[0];
    Value y2 = addTensors(tb, x2, g);
    rewriter.replaceOp(op, {y1, y2});
    return success();
  }
};

struct LowerMultiHeadAttention : OpRewritePattern<MultiHeadAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  /// x [batch, seq, d_model] · weight viewed as [d_model, heads, head_dim]
  /// gives the heads directly as [batch, heads, seq, head_dim].
  static Value projectToHeads(TensorBuilder &tb, Value x, Value weight,
                              int64_t heads) {
    OpBuilder &b = tb.builder();
    RankedTensorType xType = tensorType(x), wType = tensorType(weight);
    int64_t headDim = wType.getDimSize(1) / heads;
    Type elt = xType.getElementType();
    Value headWeight = tensor::ExpandShapeOp::create(
        b, tb.location(),
        RankedTensorType::get({wType.getDimSize(0), heads, headDim}, elt),
        weight, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
    // Loops (b, h, s, k, e): x(b, s, k) · w(k, h, e) -> out(b, h, s, e);
    // e innermost walks the weight and the output contiguously.
    Value init = tb.filled(
        {xType.getDimSize(0), heads, xType.getDimSize(1), headDim}, elt, 0.0);
    using utils::IteratorType;
    return tb.generic(
        init, {x, headWeight},
        {tb.map(5, {0, 2, 3}), tb.map(5, {3, 1, 4}), tb.map(5, {0, 1, 2, 4})},
        {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
         IteratorType::reduction, IteratorType::parallel},
        [](OpBuilder &b, Location loc, ValueRange a) {
          return multiplyAccumulate(b, loc, a[0], a[1], a[2]);
        });
  }

  /// heads [batch, heads, seq, v_dim] · weight viewed as [heads, v_dim, out]
  /// gives [batch, seq, out]: the head merge is part of the contraction.
  static Value projectFromHeads(TensorBuilder &tb, Value headsValue,
                                Value weight) {
    OpBuilder &b = tb.builder();
    RankedTensorType hType = tensorType(headsValue), wType = tensorType(weight);
    int64_t heads = hType.getDimSize(1), vDim = hType.getDimSize(3);
    int64_t out = wType.getDimSize(1);
    Type elt = hType.getElementType();
    Value headWeight = tensor::ExpandShapeOp::create(
        b, tb.location(), RankedTensorType::get({heads, vDim, out}, elt),
        weight, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
    // Loops (b, s, h, e, n): heads(b, h, s, e) · w(h, e, n) -> out(b, s, n);
    // n innermost walks the weight and the output contiguously.
    Value init =
        tb.filled({hType.getDimSize(0), hType.getDimSize(2), out}, elt, 0.0);
    using utils::IteratorType;
    return tb.generic(
        init, {headsValue, headWeight},
        {tb.map(5, {0, 2, 1, 3}), tb.map(5, {2, 3, 4}), tb.map(5, {0, 1, 4})},
        {IteratorType::parallel, IteratorType::parallel,
         IteratorType::reduction, IteratorType::reduction,
         IteratorType::parallel},
        [](OpBuilder &b, Location loc, ValueRange a) {
          return multiplyAccumulate(b, loc, a[0], a[1], a[2]);
        });
  }

  LogicalResult matchAndRewrite(MultiHeadAttentionOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    int64_t heads = op.getHeads();
    Value x = op.getInput();
    SmallVector<Value> arguments = {
        projectToHeads(tb, x, op.getQueryWeight(), heads)};
    if (Value keyWeight = op.getKeyWeight())
      arguments.push_back(projectToHeads(tb, x, keyWeight, heads));
    arguments.push_back(projectToHeads(tb, x, op.getValueWeight(), heads));
    Value attention = inlineRegion(rewriter, op, op.getBody(), arguments)[0];
    rewriter.replaceOp(op,
                       projectFromHeads(tb, attention, op.getOutputWeight()));
    return success();
  }
};

struct LowerSoftmaxCrossEntropy : OpRewritePattern<SoftmaxCrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxCrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    Value logits = op.getLogits(), labels = op.getLabels();
    RankedTensorType type = tensorType(logits);
    unsigned rank = type.getRank();
    Type elt = type.getElementType();
    int64_t vocab = type.getShape().back();

    Value maxima = rowMax(tb, logits);
    Value sumExp = tb.reduceLastDim(
        {logits}, {maxima}, 0.0, [](OpBuilder &b, Location loc, ValueRange a) {
          Value shifted = arith::SubFOp::create(b, loc, a[0], a[1]);
          return add(b, loc, a[2], math::ExpOp::create(b, loc, shifted));
        });
    // Per position: logsumexp - logits[label] (label clamped into range).
    SmallVector<int64_t> rowShape(type.getShape().drop_back());
    unsigned rowRank = rank - 1;
    Value perPosition = tb.map(
        rowShape, elt, {maxima, sumExp, labels},
        {tb.identityMap(rowRank), tb.identityMap(rowRank),
         tb.identityMap(rowRank)},
        [&](OpBuilder &b, Location loc, ValueRange a) {
          SmallVector<Value> indices;
          for (unsigned d = 0; d < rowRank; ++d)
            indices.push_back(linalg::IndexOp::create(b, loc, d));
          indices.push_back(clampedIndex(b, loc, a[2], vocab));
          Value picked = tensor::ExtractOp::create(b, loc, logits, indices);
          Value logSumExp =
              add(b, loc, math::LogOp::create(b, loc, a[1]), a[0]);
          return arith::SubFOp::create(b, loc, logSumExp, picked).getResult();
        });
    // The mean over every position, or the weighted mean, as a 0-d tensor.
    Value weights = op.getWeights();
    if (weights)
      perPosition = tb.mapSameShape(
          {perPosition, weights}, [](OpBuilder &b, Location loc, ValueRange a) {
            return mul(b, loc, a[0], a[1]);
          });
    Value total = totalSum(tb, perPosition);
    Value mean;
    if (weights) {
      mean = tb.mapSameShape(
          {total, totalSum(tb, weights)},
          [](OpBuilder &b, Location loc, ValueRange a) {
            return arith::DivFOp::create(b, loc, a[0], a[1]).getResult();
          });
    } else {
      int64_t positions = 1;
      for (int64_t d : rowShape)
        positions *= d;
      Value invPositions = tb.scalar(elt, 1.0 / static_cast<double>(positions));
      mean = tb.mapSameShape({total},
                             [&](OpBuilder &b, Location loc, ValueRange a) {
                               return mul(b, loc, a[0], invPositions);
                             });
    }
    rewriter.replaceOp(op, mean);
    return success();
  }
};

} // namespace

void lcc::populateModelOpLoweringPatterns(RewritePatternSet &patterns) {
  patterns
      .add<LowerEmbedding, LowerSinusoidalEncoding, LowerLayerNorm, LowerLinear,
           LowerCompress, LowerStopGradient, LowerFeedForward, LowerResidual,
           LowerReversible, LowerMultiHeadAttention, LowerSoftmaxCrossEntropy>(
          patterns.getContext());
}
