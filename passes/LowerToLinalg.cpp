//===- LowerToLinalg.cpp - attn ops to linalg on tensors ------------------===//
//
// Lowers every attn op to linalg/tensor/arith/math/scf on tensors. Dense
// attention takes the tiled online-softmax (flash) form so that no
// seq x seq tensor is ever built. The math of each op is stated in its
// description in AttnOps.td; this file only chooses how to compute it.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/TensorBuilder.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace lcc {
#define GEN_PASS_DEF_LOWERTOLINALG
#include "passes/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();
/// Reformer's score of a token with itself under shared-QK attention.
constexpr double kSelfAttentionScore = -1e5;

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value add(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddFOp::create(b, loc, x, y);
}
Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}

/// x + y for two tensors of one type.
Value addTensors(TensorBuilder &tb, Value x, Value y) {
  return tb.mapSameShape({x, y}, [](OpBuilder &b, Location loc, ValueRange a) {
    return add(b, loc, a[0], a[1]);
  });
}

/// An index read from data, clamped into [0, size): a bad token or label
/// id can never address memory outside its table.
Value clampedIndex(OpBuilder &b, Location loc, Value id, int64_t size) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
  index = arith::MaxSIOp::create(b, loc, index,
                                 arith::ConstantIndexOp::create(b, loc, 0));
  return arith::MinSIOp::create(
      b, loc, index, arith::ConstantIndexOp::create(b, loc, size - 1));
}

Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value i32Constant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}

Value castToIndex(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

Value castToI32(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
}

/// An i32 tensor of `value` (zeros for bucket counts, cluster histograms).
Value filledI32(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                int32_t value) {
  Value init = tensor::EmptyOp::create(b, loc, shape, b.getI32Type());
  return linalg::FillOp::create(b, loc, ValueRange{i32Constant(b, loc, value)},
                                ValueRange{init})
      .getResult(0);
}
Value zerosI32(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  return filledI32(b, loc, shape, 0);
}

/// The maximum of each row (last dimension) of `x`.
Value rowMax(TensorBuilder &tb, Value x) {
  return tb.reduceLastDim(
      {x}, kNegativeInfinity,
      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
        return arith::MaximumFOp::create(b, loc, a[0], a[1]);
      });
}

/// Replaces `op` (with a single-block region `region`) by the region's
/// body, its arguments bound to `arguments`, and returns what it yielded.
SmallVector<Value> inlineRegion(PatternRewriter &rewriter, Operation *op,
                                Region &region, ValueRange arguments) {
  Block &block = region.front();
  auto yield = cast<YieldOp>(block.getTerminator());
  SmallVector<Value> results(yield.getValues());
  rewriter.inlineBlockBefore(&block, op, arguments);
  rewriter.eraseOp(yield);
  return results;
}

/// input (..., in) · weight (in, out) + bias (out).
Value linear(TensorBuilder &tb, Value input, Value weight, Value bias) {
  RankedTensorType inputType = tensorType(input);
  int64_t out = tensorType(weight).getDimSize(1);
  SmallVector<int64_t> shape(inputType.getShape());
  shape.back() = out;
  Type elt = inputType.getElementType();
  Value init;
  if (bias) {
    // Start the accumulation from the bias: one pass less over the output.
    init = tb.map(shape, elt, {bias}, {tb.lastDimMap(shape.size())},
                  [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  } else {
    init = tb.filled(shape, elt, 0.0);
  }
  return tb.matmul(input, weight, init);
}

//===----------------------------------------------------------------------===//
// Model-level ops
//===----------------------------------------------------------------------===//

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

struct LowerLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    Value x = op.getInput();
    RankedTensorType type = tensorType(x);
    unsigned rank = type.getRank();
    Type elt = type.getElementType();
    double features = static_cast<double>(type.getShape().back());
    Value invFeatures = tb.scalar(elt, 1.0 / features);
    Value epsilon = tb.scalar(elt, op.getEpsilon().convertToDouble());

    Value sum = tb.reduceLastDim({x}, 0.0,
                                 [](OpBuilder &b, Location loc, ValueRange a) {
                                   return add(b, loc, a[1], a[0]);
                                 });
    Value mean =
        tb.mapSameShape({sum}, [&](OpBuilder &b, Location loc, ValueRange a) {
          return mul(b, loc, a[0], invFeatures);
        });
    // Biased variance from centred values: stable for large means.
    Value squares = tb.reduceLastDim(
        {x}, {mean}, 0.0, [](OpBuilder &b, Location loc, ValueRange a) {
          Value centred = arith::SubFOp::create(b, loc, a[0], a[1]);
          return add(b, loc, a[2], mul(b, loc, centred, centred));
        });
    Value result = tb.map(
        type.getShape(), elt, {x, mean, squares, op.getGamma(), op.getBeta()},
        {tb.identityMap(rank), tb.dropLastMap(rank), tb.dropLastMap(rank),
         tb.lastDimMap(rank), tb.lastDimMap(rank)},
        [&](OpBuilder &b, Location loc, ValueRange a) {
          Value variance = mul(b, loc, a[2], invFeatures);
          Value invStd =
              math::RsqrtOp::create(b, loc, add(b, loc, variance, epsilon));
          Value centred = arith::SubFOp::create(b, loc, a[0], a[1]);
          return add(b, loc, mul(b, loc, mul(b, loc, centred, invStd), a[3]),
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
                       linear(tb, op.getInput(), op.getWeight(), op.getBias()));
    return success();
  }
};

/// act(x) for the feed-forward activations.
Value activation(OpBuilder &b, Location loc, Activation kind, Value x) {
  Type type = x.getType();
  switch (kind) {
  case Activation::Relu: {
    Value zero =
        arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, 0.0));
    return arith::MaximumFOp::create(b, loc, x, zero);
  }
  case Activation::Gelu: {
    // Exact GELU: 0.5 x (1 + erf(x / sqrt(2))).
    auto constant = [&](double v) -> Value {
      return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, v));
    };
    Value erf =
        math::ErfOp::create(b, loc, mul(b, loc, x, constant(M_SQRT1_2)));
    return mul(b, loc, mul(b, loc, constant(0.5), x),
               add(b, loc, constant(1.0), erf));
  }
  }
  llvm_unreachable("unknown activation");
}

struct LowerFeedForward : OpRewritePattern<FeedForwardOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The whole feed-forward layer on `input` ([batch, rows, d_model]).
  static Value feedForward(TensorBuilder &tb, FeedForwardOp op, Value input) {
    Value hidden = linear(tb, input, op.getUpWeight(), op.getUpBias());
    Activation kind = op.getActivation();
    hidden = tb.mapSameShape({hidden},
                             [&](OpBuilder &b, Location loc, ValueRange a) {
                               return activation(b, loc, kind, a[0]);
                             });
    return linear(tb, hidden, op.getDownWeight(), op.getDownBias());
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
    // Mean over every position into a 0-d tensor.
    int64_t positions = 1;
    for (int64_t d : rowShape)
      positions *= d;
    Value invPositions = tb.scalar(elt, 1.0 / static_cast<double>(positions));
    Value total =
        tb.generic(tb.filled({}, elt, 0.0), {perPosition},
                   {tb.identityMap(rowRank),
                    AffineMap::get(rowRank, 0, rewriter.getContext())},
                   SmallVector<utils::IteratorType>(
                       rowRank, utils::IteratorType::reduction),
                   [](OpBuilder &b, Location loc, ValueRange a) {
                     return add(b, loc, a[1], a[0]);
                   });
    Value mean =
        tb.mapSameShape({total}, [&](OpBuilder &b, Location loc, ValueRange a) {
          return mul(b, loc, a[0], invPositions);
        });
    rewriter.replaceOp(op, mean);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Dense attention: the flash form
//===----------------------------------------------------------------------===//

/// 1 / max(||x||, 1e-12) from ||x||^2: the norm is floored as
/// torch.nn.functional.normalize floors it, so a zero row normalises to zero
/// instead of NaN (a padded position, a zero query).
Value inverseNorm(OpBuilder &b, Location loc, Value sumSquares) {
  Type type = sumSquares.getType();
  Value floor = arith::ConstantOp::create(b, loc, type,
                                          b.getFloatAttr(type, 1e-24));
  return math::RsqrtOp::create(
      b, loc, arith::MaximumFOp::create(b, loc, sumSquares, floor));
}

/// Rows of `x` divided by their L2 norm (the keys of shared-QK attention).
Value normalizeRows(TensorBuilder &tb, Value x) {
  Value sumSquares =
      tb.reduceLastDim({x}, 0.0, [](OpBuilder &b, Location loc, ValueRange a) {
        return add(b, loc, a[1], mul(b, loc, a[0], a[0]));
      });
  RankedTensorType type = tensorType(x);
  unsigned rank = type.getRank();
  return tb.map(type.getShape(), type.getElementType(), {x, sumSquares},
                {tb.identityMap(rank), tb.dropLastMap(rank)},
                [](OpBuilder &b, Location loc, ValueRange a) {
                  return mul(b, loc, a[0], inverseNorm(b, loc, a[1]));
                });
}

/// Pads dimension 2 (seq) of `x` with zeros up to `paddedSeq`.
Value padSeq(TensorBuilder &tb, Value x, int64_t paddedSeq) {
  RankedTensorType type = tensorType(x);
  if (type.getDimSize(2) == paddedSeq)
    return x;
  SmallVector<int64_t> shape(type.getShape());
  shape[2] = paddedSeq;
  Value zero = tb.scalar(type.getElementType(), 0.0);
  return tensor::createPadHighOp(
      RankedTensorType::get(shape, type.getElementType()), x, zero,
      /*nofold=*/false, tb.location(), tb.builder());
}

/// The [tile, dim] slice at (b, h, offset) of a [batch, heads, seq, dim]
/// tensor.
Value tileOf(OpBuilder &b, Location loc, Value x, Value batch, Value head,
             Value offset, int64_t tile) {
  RankedTensorType type = tensorType(x);
  int64_t dim = type.getDimSize(3);
  SmallVector<OpFoldResult> offsets = {batch, head, offset, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(tile), b.getIndexAttr(dim)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({tile, dim}, type.getElementType()), x,
      offsets, sizes, strides);
}

/// exp(x - m), and 0 where m is -inf (a row that has seen no visible key
/// yet, where x - m would be NaN).
Value expShifted(OpBuilder &b, Location loc, Value x, Value m) {
  Type type = m.getType();
  Value negInf = arith::ConstantOp::create(
      b, loc, type, b.getFloatAttr(type, kNegativeInfinity));
  Value zero =
      arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, 0.0));
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf);
  Value e = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, m));
  return arith::SelectOp::create(b, loc, empty, zero, e);
}

/// Predicate on (query position, key position) index values, built inside a
/// linalg.generic body.
using PositionPredicate =
    std::function<Value(OpBuilder &, Location, Value query, Value key)>;

/// One attention in the tiled online-softmax (flash) form. Dense, shared-QK
/// and sparse attention differ only in which keys a query sees (`hidden`)
/// and which key tiles a query tile may skip (`tileVisible`).
struct FlashAttention {
  Value query, key, value; // key already unit-normalised for shared QK
  double scale;
  bool causal = false, sharedQK = false;
  int64_t queryTile, keyTile;
  /// Extra mask: true where the key is hidden from the query.
  PositionPredicate hidden;
  /// Whether the key tile at the given offset can hold a key visible from
  /// the query tile at the given offset; tiles where it is false are
  /// skipped. Null: every tile is visited.
  PositionPredicate tileVisible;

  Value build(PatternRewriter &rewriter, Location loc) const;

private:
  Value maskedScores(TensorBuilder &t, Value dots, Value queryOffset,
                     Value keyOffset, int64_t keySeq) const;
  SmallVector<Value> updateOnline(TensorBuilder &t, Value queryBlock,
                                  Value keyBlock, Value valueBlock,
                                  Value queryOffset, Value keyOffset,
                                  int64_t keySeq, ValueRange state) const;
};

/// q kᵀ · scale for one block, with the masks: padded keys, later keys (if
/// causal) and `hidden` ones get -inf; under shared QK a token's score with
/// itself becomes -1e5.
Value FlashAttention::maskedScores(TensorBuilder &t, Value dots,
                                   Value queryOffset, Value keyOffset,
                                   int64_t keySeq) const {
  Type elt = tensorType(dots).getElementType();
  return t.mapSameShape(
      {dots}, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        auto constant = [&](double v) -> Value {
          return arith::ConstantOp::create(b, loc, elt, b.getFloatAttr(elt, v));
        };
        Value queryPos = arith::AddIOp::create(
            b, loc, queryOffset, linalg::IndexOp::create(b, loc, 0));
        Value keyPos = arith::AddIOp::create(
            b, loc, keyOffset, linalg::IndexOp::create(b, loc, 1));
        Value score = mul(b, loc, a[0], constant(scale));
        if (sharedQK) {
          Value self = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             queryPos, keyPos);
          score = arith::SelectOp::create(b, loc, self,
                                          constant(kSelfAttentionScore), score);
        }
        Value masked = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sge, keyPos,
            arith::ConstantIndexOp::create(b, loc, keySeq));
        if (causal) {
          Value future = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sgt, keyPos, queryPos);
          masked = arith::OrIOp::create(b, loc, masked, future);
        }
        if (hidden)
          masked = arith::OrIOp::create(b, loc, masked,
                                        hidden(b, loc, queryPos, keyPos));
        return arith::SelectOp::create(b, loc, masked,
                                       constant(kNegativeInfinity), score);
      });
}

/// One step of the online softmax: folds a key tile into the running
/// (row max, row sum, accumulator) `state`.
SmallVector<Value>
FlashAttention::updateOnline(TensorBuilder &t, Value queryBlock, Value keyBlock,
                             Value valueBlock, Value queryOffset,
                             Value keyOffset, int64_t keySeq,
                             ValueRange state) const {
  Type elt = tensorType(queryBlock).getElementType();
  int64_t valueDim = tensorType(valueBlock).getDimSize(1);
  Value dots = t.matmulTransposedB(queryBlock, keyBlock,
                                   t.filled({queryTile, keyTile}, elt, 0.0));
  Value scores = maskedScores(t, dots, queryOffset, keyOffset, keySeq);
  Value runningMax = state[0], rowSum = state[1], acc = state[2];
  Value blockMax = rowMax(t, scores);
  Value newMax =
      t.mapSameShape({runningMax, blockMax},
                     [](OpBuilder &b, Location loc, ValueRange a) -> Value {
                       return arith::MaximumFOp::create(b, loc, a[0], a[1]);
                     });
  Value probs = t.map({queryTile, keyTile}, elt, {scores, newMax},
                      {t.identityMap(2), t.dropLastMap(2)},
                      [](OpBuilder &b, Location loc, ValueRange a) {
                        return expShifted(b, loc, a[0], a[1]);
                      });
  // exp(old max - new max) rescales what was accumulated so far.
  Value correction = t.mapSameShape(
      {runningMax, newMax}, [](OpBuilder &b, Location loc, ValueRange a) {
        return expShifted(b, loc, a[0], a[1]);
      });
  Value blockSum = t.reduceLastDim(
      {probs}, 0.0, [](OpBuilder &b, Location loc, ValueRange a) {
        return add(b, loc, a[1], a[0]);
      });
  // sum' = sum * correction + rowsum(probs).
  Value newSum =
      t.mapSameShape({rowSum, correction, blockSum},
                     [](OpBuilder &b, Location loc, ValueRange a) {
                       return add(b, loc, mul(b, loc, a[0], a[1]), a[2]);
                     });
  Value rescaled = t.map({queryTile, valueDim}, elt, {acc, correction},
                         {t.identityMap(2), t.dropLastMap(2)},
                         [](OpBuilder &b, Location loc, ValueRange a) {
                           return mul(b, loc, a[0], a[1]);
                         });
  return {newMax, newSum, t.matmul(probs, valueBlock, rescaled)};
}

Value FlashAttention::build(PatternRewriter &rewriter, Location loc) const {
  TensorBuilder tb(rewriter, loc);
  RankedTensorType qType = tensorType(query), kType = tensorType(key),
                   vType = tensorType(value);
  Type elt = qType.getElementType();
  int64_t batch = qType.getDimSize(0), heads = qType.getDimSize(1);
  int64_t querySeq = qType.getDimSize(2);
  int64_t keySeq = kType.getDimSize(2), valueDim = vType.getDimSize(3);
  int64_t queryTiles = llvm::divideCeil(querySeq, queryTile);
  int64_t keyTiles = llvm::divideCeil(keySeq, keyTile);

  Value paddedQuery = padSeq(tb, query, queryTiles * queryTile);
  Value paddedKey = padSeq(tb, key, keyTiles * keyTile);
  Value paddedValue = padSeq(tb, value, keyTiles * keyTile);

  Value out = tb.empty({batch, heads, queryTiles * queryTile, valueDim}, elt);
  auto forall = scf::ForallOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(batch),
                             rewriter.getIndexAttr(heads),
                             rewriter.getIndexAttr(queryTiles)},
      ValueRange{out}, /*mapping=*/std::nullopt);

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(forall.getBody());
  TensorBuilder body(rewriter, loc);
  Value b = forall.getInductionVars()[0], h = forall.getInductionVars()[1];
  Value queryOffset = arith::MulIOp::create(
      rewriter, loc, forall.getInductionVars()[2], body.index(queryTile));
  Value queryBlock =
      tileOf(rewriter, loc, paddedQuery, b, h, queryOffset, queryTile);

  // A causal query tile sees key tiles up to the one holding its last
  // query: later tiles are skipped, not masked.
  Value keyTileEnd = body.index(keyTiles);
  if (causal) {
    Value lastVisible = arith::CeilDivSIOp::create(
        rewriter, loc,
        arith::AddIOp::create(rewriter, loc, queryOffset,
                              body.index(queryTile)),
        body.index(keyTile));
    keyTileEnd = arith::MinSIOp::create(rewriter, loc, lastVisible, keyTileEnd);
  }

  SmallVector<Value> state0 = {body.filled({queryTile}, elt, kNegativeInfinity),
                               body.filled({queryTile}, elt, 0.0),
                               body.filled({queryTile, valueDim}, elt, 0.0)};
  auto keyLoop = scf::ForOp::create(
      rewriter, loc, body.index(0), keyTileEnd, body.index(1), state0,
      [&](OpBuilder &nb, Location nloc, Value keyTileIndex, ValueRange state) {
        Value keyOffset = arith::MulIOp::create(
            nb, nloc, keyTileIndex,
            arith::ConstantIndexOp::create(nb, nloc, keyTile));
        auto update = [&](OpBuilder &ub, Location uloc) {
          TensorBuilder t(ub, uloc);
          Value keyBlock =
              tileOf(ub, uloc, paddedKey, b, h, keyOffset, keyTile);
          Value valueBlock =
              tileOf(ub, uloc, paddedValue, b, h, keyOffset, keyTile);
          return updateOnline(t, queryBlock, keyBlock, valueBlock, queryOffset,
                              keyOffset, keySeq, state);
        };
        if (!tileVisible) {
          scf::YieldOp::create(nb, nloc, update(nb, nloc));
          return;
        }
        // Block sparsity: a tile the pattern hides entirely is never read.
        Value visible = tileVisible(nb, nloc, queryOffset, keyOffset);
        auto skip = scf::IfOp::create(
            nb, nloc, visible,
            [&](OpBuilder &ub, Location uloc) {
              scf::YieldOp::create(ub, uloc, update(ub, uloc));
            },
            [&](OpBuilder &ub, Location uloc) {
              scf::YieldOp::create(ub, uloc, state);
            });
        scf::YieldOp::create(nb, nloc, skip.getResults());
      });

  Value rowSum = keyLoop.getResult(1), acc = keyLoop.getResult(2);
  Value normalized =
      body.map({queryTile, valueDim}, elt, {acc, rowSum},
               {body.identityMap(2), body.dropLastMap(2)},
               [](OpBuilder &b, Location loc, ValueRange a) -> Value {
                 return arith::DivFOp::create(b, loc, a[0], a[1]);
               });

  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  SmallVector<OpFoldResult> offsets = {b, h, queryOffset,
                                       rewriter.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {
      rewriter.getIndexAttr(1), rewriter.getIndexAttr(1),
      rewriter.getIndexAttr(queryTile), rewriter.getIndexAttr(valueDim)};
  SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
  tensor::ParallelInsertSliceOp::create(rewriter, loc, normalized,
                                        forall.getRegionIterArgs()[0], offsets,
                                        sizes, strides);

  rewriter.setInsertionPointAfter(forall);
  Value result = forall.getResult(0);
  if (queryTiles * queryTile == querySeq)
    return result;
  SmallVector<OpFoldResult> zeros(4, rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> shape = {
      rewriter.getIndexAttr(batch), rewriter.getIndexAttr(heads),
      rewriter.getIndexAttr(querySeq), rewriter.getIndexAttr(valueDim)};
  return tensor::ExtractSliceOp::create(rewriter, loc, result, zeros, shape,
                                        strides);
}

double attentionScale(std::optional<APFloat> scale, Value query) {
  return scale ? scale->convertToDouble()
               : 1.0 / std::sqrt(double(tensorType(query).getDimSize(3)));
}

bool hasStaticShapes(Operation *op) {
  return llvm::all_of(op->getOperandTypes(), [](Type t) {
    return cast<RankedTensorType>(t).hasStaticShape();
  });
}

struct LowerAttention : OpRewritePattern<AttentionOp> {
  LowerAttention(MLIRContext *context, AttentionTiling tiling)
      : OpRewritePattern(context), tiling(tiling) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    TensorBuilder tb(rewriter, op.getLoc());
    FlashAttention flash;
    flash.query = op.getQuery();
    flash.key =
        op.getSharedQk() ? normalizeRows(tb, op.getQuery()) : op.getKey();
    flash.value = op.getValue();
    flash.scale = attentionScale(op.getScale(), op.getQuery());
    flash.causal = op.getCausal();
    flash.sharedQK = op.getSharedQk();
    flash.queryTile =
        std::min(tiling.queryTile, tensorType(op.getQuery()).getDimSize(2));
    flash.keyTile =
        std::min(tiling.keyTile, tensorType(op.getKey()).getDimSize(2));
    rewriter.replaceOp(op, flash.build(rewriter, op.getLoc()));
    return success();
  }

  AttentionTiling tiling;
};

/// Sparse Transformer attention (DESIGN.md §3) in the flash form with the
/// pattern as mask, tiles of `block` queries and keys, and every key tile
/// that the pattern hides from a whole query tile skipped.
struct LowerSparseAttention : OpRewritePattern<SparseAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SparseAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    int64_t seq = tensorType(op.getQuery()).getDimSize(2);
    int64_t stride = op.getStride();
    int64_t tile = std::min<int64_t>(op.getBlock(), seq);
    bool fixed = op.getPattern() == SparsePattern::Fixed;
    int64_t summary = fixed ? *op.getSummary() : 0;

    FlashAttention flash;
    flash.query = op.getQuery();
    flash.key = op.getKey();
    flash.value = op.getValue();
    flash.scale = attentionScale(op.getScale(), op.getQuery());
    flash.causal = op.getCausal();
    flash.queryTile = flash.keyTile = tile;
    auto index = [](OpBuilder &b, Location loc, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    using P = arith::CmpIPredicate;
    auto cmp = [](OpBuilder &b, Location loc, P p, Value x, Value y) -> Value {
      return arith::CmpIOp::create(b, loc, p, x, y);
    };
    auto orOf = [](OpBuilder &b, Location loc, Value x, Value y) -> Value {
      return arith::OrIOp::create(b, loc, x, y);
    };
    auto andOf = [](OpBuilder &b, Location loc, Value x, Value y) -> Value {
      return arith::AndIOp::create(b, loc, x, y);
    };
    if (fixed) {
      // j in A(i) iff floor(j/l) == floor(i/l) or (j mod l) >= l - c.
      flash.hidden = [=](OpBuilder &b, Location loc, Value i, Value j) {
        Value l = index(b, loc, stride);
        Value sameWindow =
            cmp(b, loc, P::eq, arith::DivSIOp::create(b, loc, i, l),
                arith::DivSIOp::create(b, loc, j, l));
        Value isSummary =
            cmp(b, loc, P::sge, arith::RemSIOp::create(b, loc, j, l),
                index(b, loc, stride - summary));
        Value allowed = orOf(b, loc, sameWindow, isSummary);
        return cmp(b, loc, P::eq, allowed,
                   arith::ConstantIntOp::create(b, loc, 0, 1));
      };
      // Tiles [qs, qs+B) and [ks, ks+B): their windows overlap, or the key
      // tile holds a summary position (it wraps past a window end, or its
      // last position is one).
      flash.tileVisible = [=](OpBuilder &b, Location loc, Value qs,
                              Value ks) -> Value {
        // A tile at least a window long always holds a summary position.
        if (tile >= stride)
          return arith::ConstantIntOp::create(b, loc, 1, 1).getResult();
        Value l = index(b, loc, stride), last = index(b, loc, tile - 1);
        Value qEnd = arith::AddIOp::create(b, loc, qs, last);
        Value kEnd = arith::AddIOp::create(b, loc, ks, last);
        auto window = [&](Value x) -> Value {
          return arith::DivSIOp::create(b, loc, x, l);
        };
        Value overlap =
            andOf(b, loc, cmp(b, loc, P::sle, window(qs), window(kEnd)),
                  cmp(b, loc, P::sle, window(ks), window(qEnd)));
        Value wraps =
            cmp(b, loc, P::sge,
                arith::AddIOp::create(
                    b, loc, arith::RemSIOp::create(b, loc, ks, l), last),
                l);
        Value endsInSummary =
            cmp(b, loc, P::sge, arith::RemSIOp::create(b, loc, kEnd, l),
                index(b, loc, stride - summary));
        return orOf(b, loc, overlap, orOf(b, loc, wraps, endsInSummary));
      };
    } else {
      // j in A(i) iff |i - j| < l or (i - j) mod l == 0.
      flash.hidden = [=](OpBuilder &b, Location loc, Value i, Value j) {
        Value d = arith::SubIOp::create(b, loc, i, j);
        Value local =
            andOf(b, loc, cmp(b, loc, P::slt, d, index(b, loc, stride)),
                  cmp(b, loc, P::sgt, d, index(b, loc, -stride)));
        Value onStride =
            cmp(b, loc, P::eq,
                arith::RemSIOp::create(b, loc, d, index(b, loc, stride)),
                index(b, loc, 0));
        Value allowed = orOf(b, loc, local, onStride);
        return cmp(b, loc, P::eq, allowed,
                   arith::ConstantIntOp::create(b, loc, 0, 1));
      };
      // The differences i - j of two tiles fill [lo, hi] = [qs - ks - (B-1),
      // qs - ks + (B-1)]: visible if that meets (-l, l) or holds a multiple
      // of l.
      flash.tileVisible = [=](OpBuilder &b, Location loc, Value qs,
                              Value ks) -> Value {
        Value l = index(b, loc, stride);
        Value d = arith::SubIOp::create(b, loc, qs, ks);
        Value lo = arith::SubIOp::create(b, loc, d, index(b, loc, tile - 1));
        Value hi = arith::AddIOp::create(b, loc, d, index(b, loc, tile - 1));
        Value local = andOf(b, loc, cmp(b, loc, P::slt, lo, l),
                            cmp(b, loc, P::sgt, hi, index(b, loc, -stride)));
        Value multiple = arith::MulIOp::create(
            b, loc, arith::FloorDivSIOp::create(b, loc, hi, l), l);
        Value onStride = cmp(b, loc, P::sge, multiple, lo);
        return orOf(b, loc, local, onStride);
      };
    }
    rewriter.replaceOp(op, flash.build(rewriter, op.getLoc()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// LSH attention (Reformer)
//===----------------------------------------------------------------------===//

/// The N(0, 1) rotations of LSH hashing, [head_dim, n_hashes, n_buckets/2],
/// drawn at compile time from `seed` (splitmix64, Box-Muller): a compiled
/// model hashes the same way on every call and every device.
/// splitmix64: the compile-time random stream of LSH rotations and of the
/// routed k-means initialisation, reproducible from a seed.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

DenseElementsAttr lshRotations(RankedTensorType type, uint64_t seed) {
  SplitMix64 random{seed};
  auto uniform = [&]() { return ((random.next() >> 11) + 0.5) * 0x1.0p-53; };
  std::vector<float> values(type.getNumElements());
  for (float &v : values)
    v = static_cast<float>(std::sqrt(-2.0 * std::log(uniform())) *
                           std::cos(2.0 * M_PI * uniform()));
  return DenseElementsAttr::get(type, ArrayRef<float>(values));
}

/// A stable counting sort of one row of keys in [0, numKeys), as
/// sequential loops: the positions in key order, their inverse, and where
/// each key's run starts (numKeys + 1 values, the last one n).
struct CountingSort {
  Value positions, inverse, starts;
};

CountingSort countingSort(OpBuilder &b, Location loc, Value keys, int64_t n,
                          int64_t numKeys) {
  Type i32 = b.getI32Type();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value c0 = index(0), c1 = index(1);
  Value one = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(1));
  // Histogram, one slot longer so the exclusive scan ends with n.
  auto histogram = scf::ForOp::create(
      b, loc, c0, index(n), c1, ValueRange{zerosI32(b, loc, {numKeys + 1})},
      [&](OpBuilder &nb, Location l, Value i, ValueRange it) {
        Value k = castToIndex(nb, l, tensor::ExtractOp::create(nb, l, keys, i));
        Value count = tensor::ExtractOp::create(nb, l, it[0], k);
        Value inc = arith::AddIOp::create(nb, l, count, one);
        scf::YieldOp::create(
            nb, l, tensor::InsertOp::create(nb, l, inc, it[0], k).getResult());
      });
  Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
  auto scan = scf::ForOp::create(
      b, loc, c0, index(numKeys + 1), c1,
      ValueRange{zero, zerosI32(b, loc, {numKeys + 1})},
      [&](OpBuilder &nb, Location l, Value k, ValueRange it) {
        Value count =
            tensor::ExtractOp::create(nb, l, histogram.getResult(0), k);
        Value starts = tensor::InsertOp::create(nb, l, it[0], it[1], k);
        scf::YieldOp::create(
            nb, l,
            ValueRange{arith::AddIOp::create(nb, l, it[0], count), starts});
      });
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{n}, i32);
  auto place = scf::ForOp::create(
      b, loc, c0, index(n), c1, ValueRange{scan.getResult(1), empty, empty},
      [&](OpBuilder &nb, Location l, Value i, ValueRange it) {
        Value k = castToIndex(nb, l, tensor::ExtractOp::create(nb, l, keys, i));
        Value p = tensor::ExtractOp::create(nb, l, it[0], k);
        Value next = tensor::InsertOp::create(
            nb, l, arith::AddIOp::create(nb, l, p, one), it[0], k);
        Value position = arith::IndexCastOp::create(nb, l, nb.getI32Type(), i);
        Value sorted = tensor::InsertOp::create(nb, l, position, it[1],
                                                castToIndex(nb, l, p));
        Value inverse = tensor::InsertOp::create(nb, l, p, it[2], i);
        scf::YieldOp::create(nb, l, ValueRange{next, sorted, inverse});
      });
  return {place.getResult(1), place.getResult(2), scan.getResult(1)};
}

/// Reformer LSH attention (DESIGN.md §3) over `[batch*heads, seq, dim]`
/// views, in four dispatches' worth of IR:
///   1. hash: per (row, round, tile of tokens) project onto the rotations
///      and take argmax([xR; -xR]); padded tokens get the extra bucket
///      n_buckets, so they sort last;
///   2. sort: per (row, round) a stable counting sort by bucket gives the
///      sorted positions and their inverse;
///   3. attend: per (row, round, chunk) gather the chunk's queries and the
///      keys and values of it and the previous chunk (wrapping), mask
///      (self -1e5, causal, padding) and keep each row's logsumexp;
///   4. combine: undo the sort through the inverse and weight the rounds by
///      their logsumexp.
struct LowerLSHAttention : OpRewritePattern<LSHAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LSHAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    Location loc = op.getLoc();
    TensorBuilder tb(rewriter, loc);
    RankedTensorType qkType = tensorType(op.getQueryKey());
    int64_t batch = qkType.getDimSize(0), heads = qkType.getDimSize(1);
    int64_t seq = qkType.getDimSize(2), dim = qkType.getDimSize(3);
    int64_t valueDim = tensorType(op.getValue()).getDimSize(3);
    int64_t rounds = op.getNHashes(), bucket = op.getBucketSize();
    int64_t padded = llvm::divideCeil(seq, 2 * bucket) * 2 * bucket;
    int64_t buckets = padded / bucket, half = buckets / 2;
    int64_t rows = batch * heads;
    bool causal = op.getCausal();
    double scale = attentionScale(op.getScale(), op.getQueryKey());
    Type f32 = qkType.getElementType();
    Type i32 = rewriter.getI32Type();
    using utils::IteratorType;

    SmallVector<ReassociationIndices> merge = {{0, 1}, {2}, {3}};
    Value qk = tensor::CollapseShapeOp::create(
        rewriter, loc, padSeq(tb, op.getQueryKey(), padded), merge);
    Value value = tensor::CollapseShapeOp::create(
        rewriter, loc, padSeq(tb, op.getValue(), padded), merge);
    // Keys are the unit-normalised queries: 1/||q|| per token.
    Value invNorm = tb.map(
        {rows, padded}, f32,
        {tb.reduceLastDim({qk}, 0.0,
                          [](OpBuilder &b, Location l, ValueRange a) {
                            return add(b, l, a[1], mul(b, l, a[0], a[0]));
                          })},
        {tb.identityMap(2)}, [](OpBuilder &b, Location l, ValueRange a) {
          return inverseNorm(b, l, a[0]);
        });
    auto rotationType = RankedTensorType::get({dim, rounds, half}, f32);
    Value rotations = arith::ConstantOp::create(
        rewriter, loc, rotationType,
        lshRotations(rotationType, static_cast<uint64_t>(op.getSeed())));

    auto unit = [&](OpBuilder &b) { return b.getIndexAttr(1); };

    // 1. Buckets [rows, rounds, padded].
    int64_t tile = bucket;
    Value bucketsOf = tb.empty({rows, rounds, padded}, i32);
    auto hash = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(rows),
                               rewriter.getIndexAttr(rounds),
                               rewriter.getIndexAttr(padded / tile)},
        ValueRange{bucketsOf}, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(hash.getBody());
      TensorBuilder t(rewriter, loc);
      Value row = hash.getInductionVars()[0],
            round = hash.getInductionVars()[1];
      Value start =
          arith::MulIOp::create(rewriter, loc, hash.getInductionVars()[2],
                                indexConstant(rewriter, loc, tile));
      Value tokens = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get({tile, dim}, f32), qk,
          ArrayRef<OpFoldResult>{row, start, rewriter.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{unit(rewriter), rewriter.getIndexAttr(tile),
                                 rewriter.getIndexAttr(dim)},
          ArrayRef<OpFoldResult>{unit(rewriter), unit(rewriter),
                                 unit(rewriter)});
      Value rotation = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get({dim, half}, f32), rotations,
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0), round,
                                 rewriter.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(dim), unit(rewriter),
                                 rewriter.getIndexAttr(half)},
          ArrayRef<OpFoldResult>{unit(rewriter), unit(rewriter),
                                 unit(rewriter)});
      Value projected =
          t.matmul(tokens, rotation, t.filled({tile, half}, f32, 0.0));
      // argmax over [xR; -xR]: index j for +xR_j, half + j for -xR_j; of
      // equal maxima the first in the order +xR_0, -xR_0, +xR_1, ... wins.
      // Two vectorizable reductions instead of one loop that carries a value
      // and an index: the largest |xR_j|, then the smallest key 2j (+xR_j
      // attains it) or 2j + 1 (-xR_j does).
      Value magnitude = t.reduceLastDim(
          {projected}, kNegativeInfinity,
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value absolute = arith::MaximumFOp::create(
                b, l, a[0], arith::NegFOp::create(b, l, a[0]));
            return arith::MaximumFOp::create(b, l, absolute, a[1]);
          });
      constexpr int32_t kNoKey = std::numeric_limits<int32_t>::max();
      Value firstKey = t.generic(
          filledI32(rewriter, loc, {tile}, kNoKey), {projected, magnitude},
          {t.identityMap(2), t.dropLastMap(2), t.dropLastMap(2)},
          {IteratorType::parallel, IteratorType::reduction},
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value j = castToI32(b, l, linalg::IndexOp::create(b, l, 1));
            Value even = arith::AddIOp::create(b, l, j, j);
            Value odd = arith::AddIOp::create(b, l, even, i32Constant(b, l, 1));
            Value up = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                             a[0], a[1]);
            Value down =
                arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                      arith::NegFOp::create(b, l, a[0]), a[1]);
            Value key = arith::SelectOp::create(
                b, l, up, even,
                arith::SelectOp::create(b, l, down, odd,
                                        i32Constant(b, l, kNoKey)));
            return arith::MinSIOp::create(b, l, key, a[2]);
          });
      Value argmax = t.map(
          {tile}, i32, {firstKey}, {t.identityMap(1)},
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            // No key (a NaN row) falls in bucket 0, as the strict comparison
            // of a running argmax would leave it.
            Value none = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                               a[0], i32Constant(b, l, kNoKey));
            Value j = arith::ShRSIOp::create(b, l, a[0], i32Constant(b, l, 1));
            Value negated =
                arith::AndIOp::create(b, l, a[0], i32Constant(b, l, 1));
            Value bucketIndex = arith::AddIOp::create(
                b, l, j,
                arith::MulIOp::create(b, l, negated, i32Constant(b, l, half)));
            return arith::SelectOp::create(b, l, none, i32Constant(b, l, 0),
                                           bucketIndex);
          });
      Value tileBuckets = t.map(
          {tile}, i32, {argmax}, {t.identityMap(1)},
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value pos = arith::AddIOp::create(b, l, start,
                                              linalg::IndexOp::create(b, l, 0));
            Value isPad = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                                pos, indexConstant(b, l, seq));
            return arith::SelectOp::create(
                b, l, isPad,
                arith::ConstantOp::create(b, l, b.getI32IntegerAttr(buckets)),
                a[0]);
          });
      rewriter.setInsertionPointToStart(hash.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(
          rewriter, loc, tileBuckets, hash.getRegionIterArgs()[0],
          ArrayRef<OpFoldResult>{row, round, start},
          ArrayRef<OpFoldResult>{unit(rewriter), unit(rewriter),
                                 rewriter.getIndexAttr(tile)},
          ArrayRef<OpFoldResult>{unit(rewriter), unit(rewriter),
                                 unit(rewriter)});
    }

    // 2. Stable counting sort by bucket: sorted positions and the inverse.
    auto sort = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(rows),
                               rewriter.getIndexAttr(rounds)},
        ValueRange{tb.empty({rows, rounds, padded}, i32),
                   tb.empty({rows, rounds, padded}, i32)},
        std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(sort.getBody());
      Value row = sort.getInductionVars()[0],
            round = sort.getInductionVars()[1];
      auto rowType = RankedTensorType::get({padded}, i32);
      SmallVector<OpFoldResult> rowOffsets = {row, round,
                                              rewriter.getIndexAttr(0)};
      SmallVector<OpFoldResult> rowSizes = {unit(rewriter), unit(rewriter),
                                            rewriter.getIndexAttr(padded)};
      SmallVector<OpFoldResult> ones(3, unit(rewriter));
      Value keys = tensor::ExtractSliceOp::create(rewriter, loc, rowType,
                                                  hash.getResult(0), rowOffsets,
                                                  rowSizes, ones);
      CountingSort sorted =
          countingSort(rewriter, loc, keys, padded, buckets + 1);
      rewriter.setInsertionPointToStart(sort.getTerminator().getBody());
      for (unsigned i = 0; i < 2; ++i)
        tensor::ParallelInsertSliceOp::create(
            rewriter, loc, i == 0 ? sorted.positions : sorted.inverse,
            sort.getRegionIterArgs()[i], rowOffsets, rowSizes, ones);
    }
    Value sortedPositions = sort.getResult(0), inverse = sort.getResult(1);

    // 3. Attention within chunks of the sorted order, with look-back.
    auto attend = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(rows),
                               rewriter.getIndexAttr(rounds),
                               rewriter.getIndexAttr(buckets)},
        ValueRange{tb.empty({rows, rounds, padded, valueDim}, f32),
                   tb.empty({rows, rounds, padded}, f32)},
        std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(attend.getBody());
      TensorBuilder t(rewriter, loc);
      Value row = attend.getInductionVars()[0];
      Value round = attend.getInductionVars()[1];
      Value chunk = attend.getInductionVars()[2];
      Value start = arith::MulIOp::create(rewriter, loc, chunk,
                                          indexConstant(rewriter, loc, bucket));
      Value previous = arith::MulIOp::create(
          rewriter, loc,
          arith::RemSIOp::create(
              rewriter, loc,
              arith::AddIOp::create(rewriter, loc, chunk,
                                    indexConstant(rewriter, loc, buckets - 1)),
              indexConstant(rewriter, loc, buckets)),
          indexConstant(rewriter, loc, bucket));
      // Original positions of the chunk's queries and of its keys (the
      // chunk itself, then the previous chunk).
      Value queryPos = t.map(
          {bucket}, i32, {}, {}, [&](OpBuilder &b, Location l, ValueRange) {
            Value i = arith::AddIOp::create(b, l, start,
                                            linalg::IndexOp::create(b, l, 0));
            return tensor::ExtractOp::create(b, l, sortedPositions,
                                             ValueRange{row, round, i})
                .getResult();
          });
      Value keyPos = t.map(
          {2 * bucket}, i32, {}, {}, [&](OpBuilder &b, Location l, ValueRange) {
            Value i = linalg::IndexOp::create(b, l, 0);
            Value own = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                              i, indexConstant(b, l, bucket));
            Value at = arith::SelectOp::create(
                b, l, own, arith::AddIOp::create(b, l, start, i),
                arith::AddIOp::create(
                    b, l, previous,
                    arith::SubIOp::create(b, l, i,
                                          indexConstant(b, l, bucket))));
            return tensor::ExtractOp::create(b, l, sortedPositions,
                                             ValueRange{row, round, at})
                .getResult();
          });
      auto gather = [&](Value source, Value positions, int64_t count,
                        int64_t width, bool normalize) {
        return t.map({count, width}, f32, {positions}, {t.map(2, {0})},
                     [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                       Value p = castToIndex(b, l, a[0]);
                       Value d = linalg::IndexOp::create(b, l, 1);
                       Value x = tensor::ExtractOp::create(
                           b, l, source, ValueRange{row, p, d});
                       if (!normalize)
                         return x;
                       return mul(b, l, x,
                                  tensor::ExtractOp::create(
                                      b, l, invNorm, ValueRange{row, p}));
                     });
      };
      Value queries = gather(qk, queryPos, bucket, dim, false);
      Value keys = gather(qk, keyPos, 2 * bucket, dim, true);
      Value values = gather(value, keyPos, 2 * bucket, valueDim, false);
      Value dots = t.matmulTransposedB(
          queries, keys, t.filled({bucket, 2 * bucket}, f32, 0.0));
      Value scores = t.map(
          {bucket, 2 * bucket}, f32, {dots, queryPos, keyPos},
          {t.identityMap(2), t.map(2, {0}), t.map(2, {1})},
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            auto constant = [&](double v) -> Value {
              return arith::ConstantOp::create(b, l, f32,
                                               b.getFloatAttr(f32, v));
            };
            Value score = mul(b, l, a[0], constant(scale));
            Value self = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                               a[1], a[2]);
            score = arith::SelectOp::create(
                b, l, self, constant(kSelfAttentionScore), score);
            Value hidden = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::sge, a[2],
                arith::ConstantOp::create(b, l, b.getI32IntegerAttr(seq)));
            if (causal)
              hidden = arith::OrIOp::create(
                  b, l, hidden,
                  arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, a[2],
                                        a[1]));
            return arith::SelectOp::create(b, l, hidden,
                                           constant(kNegativeInfinity), score);
          });
      Value maxima = rowMax(t, scores);
      Value probs = t.map({bucket, 2 * bucket}, f32, {scores, maxima},
                          {t.identityMap(2), t.dropLastMap(2)},
                          [](OpBuilder &b, Location l, ValueRange a) {
                            return expShifted(b, l, a[0], a[1]);
                          });
      Value sums = t.reduceLastDim({probs}, 0.0,
                                   [](OpBuilder &b, Location l, ValueRange a) {
                                     return add(b, l, a[1], a[0]);
                                   });
      Value weighted =
          t.matmul(probs, values, t.filled({bucket, valueDim}, f32, 0.0));
      Value outputs =
          t.map({bucket, valueDim}, f32, {weighted, sums},
                {t.identityMap(2), t.dropLastMap(2)},
                [](OpBuilder &b, Location l, ValueRange a) {
                  return arith::DivFOp::create(b, l, a[0], a[1]).getResult();
                });
      Value logSumExp = t.mapSameShape(
          {maxima, sums}, [](OpBuilder &b, Location l, ValueRange a) {
            return add(b, l, a[0], math::LogOp::create(b, l, a[1]));
          });
      rewriter.setInsertionPointToStart(attend.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(
          rewriter, loc, outputs, attend.getRegionIterArgs()[0],
          ArrayRef<OpFoldResult>{row, round, start, rewriter.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{unit(rewriter), unit(rewriter),
                                 rewriter.getIndexAttr(bucket),
                                 rewriter.getIndexAttr(valueDim)},
          SmallVector<OpFoldResult>(4, unit(rewriter)));
      tensor::ParallelInsertSliceOp::create(
          rewriter, loc, logSumExp, attend.getRegionIterArgs()[1],
          ArrayRef<OpFoldResult>{row, round, start},
          ArrayRef<OpFoldResult>{unit(rewriter), unit(rewriter),
                                 rewriter.getIndexAttr(bucket)},
          SmallVector<OpFoldResult>(3, unit(rewriter)));
    }
    Value roundOutputs = attend.getResult(0), roundLse = attend.getResult(1);

    // 4. Undo the sort and combine the rounds by their logsumexp, as
    //    reductions over a rounds dimension: the code does not grow with
    //    n_hashes. Per (row, position, round): where the round's sort put
    //    the token, and the logsumexp of its row there.
    Value sortedAt = tb.map(
        {rows, seq, rounds}, i32, {}, {},
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          return tensor::ExtractOp::create(
              b, l, inverse,
              ValueRange{linalg::IndexOp::create(b, l, 0),
                         linalg::IndexOp::create(b, l, 2),
                         linalg::IndexOp::create(b, l, 1)});
        });
    Value lse = tb.map(
        {rows, seq, rounds}, f32, {sortedAt}, {tb.identityMap(3)},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return tensor::ExtractOp::create(
              b, l, roundLse,
              ValueRange{linalg::IndexOp::create(b, l, 0),
                         linalg::IndexOp::create(b, l, 2),
                         castToIndex(b, l, a[0])});
        });
    Value top = rowMax(tb, lse);
    Value weights = tb.map({rows, seq, rounds}, f32, {lse, top},
                           {tb.identityMap(3), tb.dropLastMap(3)},
                           [](OpBuilder &b, Location l, ValueRange a) {
                             return expShifted(b, l, a[0], a[1]);
                           });
    Value total = tb.reduceLastDim(
        {weights}, 0.0, [](OpBuilder &b, Location l, ValueRange a) {
          return add(b, l, a[1], a[0]);
        });
    Value weightedSum = tb.generic(
        tb.filled({rows, seq, valueDim}, f32, 0.0), {sortedAt, weights},
        {tb.map(4, {0, 1, 3}), tb.map(4, {0, 1, 3}), tb.map(4, {0, 1, 2})},
        {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
         IteratorType::reduction},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value o = tensor::ExtractOp::create(
              b, l, roundOutputs,
              ValueRange{linalg::IndexOp::create(b, l, 0),
                         linalg::IndexOp::create(b, l, 3),
                         castToIndex(b, l, a[0]),
                         linalg::IndexOp::create(b, l, 2)});
          return add(b, l, a[2], mul(b, l, o, a[1]));
        });
    Value combined = tb.map({rows, seq, valueDim}, f32, {weightedSum, total},
                            {tb.identityMap(3), tb.dropLastMap(3)},
                            [](OpBuilder &b, Location l, ValueRange a) {
                              return arith::DivFOp::create(b, l, a[0], a[1])
                                  .getResult();
                            });
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, op.getResult().getType(), combined,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Routed attention (Routing Transformer)
//===----------------------------------------------------------------------===//

/// `count` distinct positions in [0, n) drawn from `seed` (the initial
/// k-means centroids), by a partial Fisher-Yates shuffle.
SmallVector<int32_t> seededPositions(int64_t n, int64_t count, uint64_t seed) {
  SplitMix64 random{seed ^ 0x5eedULL};
  SmallVector<int32_t> all(n);
  for (int64_t i = 0; i < n; ++i)
    all[i] = i;
  for (int64_t i = 0; i < count; ++i)
    std::swap(all[i], all[i + random.next() % (n - i)]);
  all.resize(count);
  return all;
}

/// Routing Transformer attention (DESIGN.md §3) over `[batch*heads, seq,
/// dim]` views:
///   1. centroids: the operand (unit-normalised), or 3 k-means iterations
///      over the unit-normalised queries and keys from seeded keys;
///   2. each query joins its nearest centroid (largest cosine);
///   3. each cluster takes the `window` keys nearest its centroid: the
///      window-th largest cosine is found by bisection, then keys are
///      collected in position order (ties by position);
///   4. queries are sorted by cluster (counting sort); each tile of sorted
///      queries attends, cluster by cluster, to its clusters' keys with the
///      dense scores; an inverse gather restores the order.
/// A query whose cluster holds no visible key (causal) gets zeros.
struct LowerRoutedAttention : OpRewritePattern<RoutedAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RoutedAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    Location loc = op.getLoc();
    TensorBuilder tb(rewriter, loc);
    RankedTensorType qType = tensorType(op.getQuery());
    int64_t batch = qType.getDimSize(0), heads = qType.getDimSize(1);
    int64_t querySeq = qType.getDimSize(2), dim = qType.getDimSize(3);
    int64_t keySeq = tensorType(op.getKey()).getDimSize(2);
    int64_t valueDim = tensorType(op.getValue()).getDimSize(3);
    int64_t clusters = op.getClusters(), window = op.getWindow();
    int64_t rows = batch * heads;
    bool causal = op.getCausal();
    double scale = attentionScale(op.getScale(), op.getQuery());
    Type f32 = qType.getElementType(), f64 = rewriter.getF64Type();
    Type i32 = rewriter.getI32Type();
    using utils::IteratorType;

    auto unit = [&]() { return rewriter.getIndexAttr(1); };
    SmallVector<ReassociationIndices> merge = {{0, 1}, {2}, {3}};
    auto rowsOf = [&](Value x) -> Value {
      return tensor::CollapseShapeOp::create(rewriter, loc, x, merge);
    };
    Value q = rowsOf(op.getQuery()), k = rowsOf(op.getKey()),
          v = rowsOf(op.getValue());
    Value qUnit = rowsOf(normalizeRows(tb, op.getQuery()));
    Value kUnit = rowsOf(normalizeRows(tb, op.getKey()));

    // 1. Centroids [rows, clusters, dim], unit-normalised.
    Value centroids;
    if (Value given = op.getCentroids()) {
      Value perRow = tb.map(
          {batch, heads, clusters, dim}, f32, {given}, {tb.map(4, {1, 2, 3})},
          [](OpBuilder &, Location, ValueRange a) { return a[0]; });
      centroids = rowsOf(normalizeRows(tb, perRow));
    } else {
      SmallVector<int32_t> picks = seededPositions(
          keySeq, clusters, static_cast<uint64_t>(op.getSeed()));
      Value pickConst = arith::ConstantOp::create(
          rewriter, loc,
          DenseIntElementsAttr::get(RankedTensorType::get({clusters}, i32),
                                    ArrayRef<int32_t>(picks)));
      Value initial = tb.map(
          {rows, clusters, dim}, f32, {}, {},
          [&](OpBuilder &b, Location l, ValueRange) -> Value {
            Value r = linalg::IndexOp::create(b, l, 0);
            Value c = linalg::IndexOp::create(b, l, 1);
            Value d = linalg::IndexOp::create(b, l, 2);
            Value p = castToIndex(
                b, l, tensor::ExtractOp::create(b, l, pickConst, c));
            return tensor::ExtractOp::create(b, l, kUnit, ValueRange{r, p, d});
          });
      centroids = kMeans(rewriter, loc, initial, qUnit, kUnit, rows, clusters,
                         dim, querySeq, keySeq);
    }

    // 2. The cluster of each query: largest cosine.
    Value queryScores = tb.generic(
        tb.filled({rows, querySeq, clusters}, f32, 0.0), {qUnit, centroids},
        {tb.map(4, {0, 1, 3}), tb.map(4, {0, 2, 3}), tb.map(4, {0, 1, 2})},
        {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
         IteratorType::reduction},
        [](OpBuilder &b, Location l, ValueRange a) {
          return multiplyAccumulate(b, l, a[0], a[1], a[2]);
        });
    Value queryCluster = argmaxLastDim(rewriter, loc, tb, queryScores);

    // 3. The window of keys of each cluster.
    Value keyScores = tb.generic(
        tb.filled({rows, clusters, keySeq}, f32, 0.0), {centroids, kUnit},
        {tb.map(4, {0, 1, 3}), tb.map(4, {0, 2, 3}), tb.map(4, {0, 1, 2})},
        {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
         IteratorType::reduction},
        [](OpBuilder &b, Location l, ValueRange a) {
          return multiplyAccumulate(b, l, a[0], a[1], a[2]);
        });
    auto select = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(rows),
                               rewriter.getIndexAttr(clusters)},
        ValueRange{tb.empty({rows, clusters, window}, i32)}, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(select.getBody());
      Value r = select.getInductionVars()[0], c = select.getInductionVars()[1];
      Value scores = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get({keySeq}, f32), keyScores,
          ArrayRef<OpFoldResult>{r, c, rewriter.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{unit(), unit(), rewriter.getIndexAttr(keySeq)},
          ArrayRef<OpFoldResult>{unit(), unit(), unit()});
      Value selected =
          selectWindow(rewriter, loc, scores, keySeq, window, f64, i32);
      rewriter.setInsertionPointToStart(select.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(
          rewriter, loc, selected, select.getRegionIterArgs()[0],
          ArrayRef<OpFoldResult>{r, c, rewriter.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{unit(), unit(), rewriter.getIndexAttr(window)},
          ArrayRef<OpFoldResult>{unit(), unit(), unit()});
    }
    Value windows = select.getResult(0);

    // 4. Queries sorted by cluster.
    auto sort = scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(rows)},
        ValueRange{tb.empty({rows, querySeq}, i32),
                   tb.empty({rows, querySeq}, i32)},
        std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(sort.getBody());
      Value r = sort.getInductionVars()[0];
      SmallVector<OpFoldResult> offsets = {r, rewriter.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes = {unit(),
                                         rewriter.getIndexAttr(querySeq)};
      SmallVector<OpFoldResult> ones = {unit(), unit()};
      Value keys = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get({querySeq}, i32), queryCluster,
          offsets, sizes, ones);
      CountingSort sorted =
          countingSort(rewriter, loc, keys, querySeq, clusters);
      rewriter.setInsertionPointToStart(sort.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(rewriter, loc, sorted.positions,
                                            sort.getRegionIterArgs()[0],
                                            offsets, sizes, ones);
      tensor::ParallelInsertSliceOp::create(rewriter, loc, sorted.inverse,
                                            sort.getRegionIterArgs()[1],
                                            offsets, sizes, ones);
    }
    Value sortedQueries = sort.getResult(0), inverse = sort.getResult(1);

    int64_t tile = std::min<int64_t>(64, querySeq);
    int64_t tiles = llvm::divideCeil(querySeq, tile);
    auto attend = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(rows),
                               rewriter.getIndexAttr(tiles)},
        ValueRange{tb.empty({rows, tiles * tile, valueDim}, f32)},
        std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(attend.getBody());
      TensorBuilder t(rewriter, loc);
      Value r = attend.getInductionVars()[0];
      Value start =
          arith::MulIOp::create(rewriter, loc, attend.getInductionVars()[1],
                                indexConstant(rewriter, loc, tile));
      // Original position (-1 past the end) and cluster (`clusters` past
      // the end) of each sorted query of the tile.
      Value queryPos =
          t.map({tile}, i32, {}, {}, [&](OpBuilder &b, Location l, ValueRange) {
            Value i = arith::AddIOp::create(b, l, start,
                                            linalg::IndexOp::create(b, l, 0));
            Value inside =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i,
                                      indexConstant(b, l, querySeq));
            Value clamped = arith::MinSIOp::create(
                b, l, i, indexConstant(b, l, querySeq - 1));
            Value p = tensor::ExtractOp::create(b, l, sortedQueries,
                                                ValueRange{r, clamped});
            return arith::SelectOp::create(b, l, inside, p,
                                           i32Constant(b, l, -1))
                .getResult();
          });
      Value queryClusterOf = t.map(
          {tile}, i32, {queryPos}, {t.identityMap(1)},
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value valid = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                                a[0], i32Constant(b, l, 0));
            Value p = castToIndex(
                b, l, arith::MaxSIOp::create(b, l, a[0], i32Constant(b, l, 0)));
            Value cl =
                tensor::ExtractOp::create(b, l, queryCluster, ValueRange{r, p});
            return arith::SelectOp::create(b, l, valid, cl,
                                           i32Constant(b, l, clusters));
          });
      Value queries = t.map(
          {tile, dim}, f32, {queryPos}, {t.map(2, {0})},
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value p = castToIndex(
                b, l, arith::MaxSIOp::create(b, l, a[0], i32Constant(b, l, 0)));
            return tensor::ExtractOp::create(
                b, l, q, ValueRange{r, p, linalg::IndexOp::create(b, l, 1)});
          });
      Value first = castToIndex(
          rewriter, loc,
          tensor::ExtractOp::create(rewriter, loc, queryClusterOf,
                                    indexConstant(rewriter, loc, 0)));
      Value last = arith::MinSIOp::create(
          rewriter, loc,
          castToIndex(rewriter, loc,
                      tensor::ExtractOp::create(
                          rewriter, loc, queryClusterOf,
                          indexConstant(rewriter, loc, tile - 1))),
          indexConstant(rewriter, loc, clusters - 1));
      Value end = arith::AddIOp::create(rewriter, loc, last,
                                        indexConstant(rewriter, loc, 1));
      auto perCluster = scf::ForOp::create(
          rewriter, loc, first, end, indexConstant(rewriter, loc, 1),
          ValueRange{t.filled({tile, valueDim}, f32, 0.0)},
          [&](OpBuilder &nb, Location nl, Value c, ValueRange acc) {
            TensorBuilder u(nb, nl);
            Value keyPos = u.map(
                {window}, i32, {}, {},
                [&](OpBuilder &b, Location l, ValueRange) {
                  return tensor::ExtractOp::create(
                             b, l, windows,
                             ValueRange{r, c, linalg::IndexOp::create(b, l, 0)})
                      .getResult();
                });
            auto gather = [&](Value source, int64_t width) {
              return u.map(
                  {window, width}, f32, {keyPos}, {u.map(2, {0})},
                  [&](OpBuilder &b, Location l, ValueRange a) {
                    return tensor::ExtractOp::create(
                               b, l, source,
                               ValueRange{r, castToIndex(b, l, a[0]),
                                          linalg::IndexOp::create(b, l, 1)})
                        .getResult();
                  });
            };
            Value keys = gather(k, dim), values = gather(v, valueDim);
            Value dots = u.matmulTransposedB(
                queries, keys, u.filled({tile, window}, f32, 0.0));
            Value cluster = castToI32(nb, nl, c);
            Value scores = u.map(
                {tile, window}, f32, {dots, queryClusterOf, queryPos, keyPos},
                {u.identityMap(2), u.map(2, {0}), u.map(2, {0}), u.map(2, {1})},
                [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                  auto constant = [&](double x) -> Value {
                    return arith::ConstantOp::create(b, l, f32,
                                                     b.getFloatAttr(f32, x));
                  };
                  Value hidden = arith::CmpIOp::create(
                      b, l, arith::CmpIPredicate::ne, a[1], cluster);
                  if (causal)
                    hidden = arith::OrIOp::create(
                        b, l, hidden,
                        arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt,
                                              a[3], a[2]));
                  return arith::SelectOp::create(
                      b, l, hidden, constant(kNegativeInfinity),
                      mul(b, l, a[0], constant(scale)));
                });
            Value maxima = rowMax(u, scores);
            Value probs = u.map({tile, window}, f32, {scores, maxima},
                                {u.identityMap(2), u.dropLastMap(2)},
                                [](OpBuilder &b, Location l, ValueRange a) {
                                  return expShifted(b, l, a[0], a[1]);
                                });
            Value sums = u.reduceLastDim(
                {probs}, 0.0, [](OpBuilder &b, Location l, ValueRange a) {
                  return add(b, l, a[1], a[0]);
                });
            Value weighted =
                u.matmul(probs, values, u.filled({tile, valueDim}, f32, 0.0));
            // Rows of other clusters (or with nothing visible) add zero.
            Value next =
                u.map({tile, valueDim}, f32, {acc[0], weighted, sums},
                      {u.identityMap(2), u.identityMap(2), u.dropLastMap(2)},
                      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                        Value zero = arith::ConstantOp::create(
                            b, l, f32, b.getFloatAttr(f32, 0.0));
                        Value empty = arith::CmpFOp::create(
                            b, l, arith::CmpFPredicate::OEQ, a[2], zero);
                        Value share = arith::SelectOp::create(
                            b, l, empty, zero,
                            arith::DivFOp::create(b, l, a[1], a[2]));
                        return add(b, l, a[0], share);
                      });
            scf::YieldOp::create(nb, nl, next);
          });
      rewriter.setInsertionPointToStart(attend.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(
          rewriter, loc, perCluster.getResult(0), attend.getRegionIterArgs()[0],
          ArrayRef<OpFoldResult>{r, start, rewriter.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{unit(), rewriter.getIndexAttr(tile),
                                 rewriter.getIndexAttr(valueDim)},
          ArrayRef<OpFoldResult>{unit(), unit(), unit()});
    }
    Value sortedOut = attend.getResult(0);
    Value out = tb.map(
        {rows, querySeq, valueDim}, f32, {}, {},
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          Value r = linalg::IndexOp::create(b, l, 0);
          Value i = linalg::IndexOp::create(b, l, 1);
          Value e = linalg::IndexOp::create(b, l, 2);
          Value at = castToIndex(
              b, l, tensor::ExtractOp::create(b, l, inverse, ValueRange{r, i}));
          return tensor::ExtractOp::create(b, l, sortedOut,
                                           ValueRange{r, at, e});
        });
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, op.getResult().getType(), out, merge);
    return success();
  }

  /// Index of the largest element of each last-dimension row, as i32.
  static Value argmaxLastDim(OpBuilder &b, Location loc, TensorBuilder &tb,
                             Value x) {
    auto type = tensorType(x);
    unsigned rank = type.getRank();
    SmallVector<int64_t> shape(type.getShape().drop_back());
    Type i32 = b.getI32Type();
    Value indexInit = tensor::EmptyOp::create(b, loc, shape, i32);
    Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
    indexInit =
        linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{indexInit})
            .getResult(0);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.back() = utils::IteratorType::reduction;
    auto op = linalg::GenericOp::create(
        b, loc,
        TypeRange{RankedTensorType::get(shape, type.getElementType()),
                  RankedTensorType::get(shape, i32)},
        ValueRange{x},
        ValueRange{tb.filled(shape, type.getElementType(), kNegativeInfinity),
                   indexInit},
        ArrayRef<AffineMap>{tb.identityMap(rank), tb.dropLastMap(rank),
                            tb.dropLastMap(rank)},
        iterators, [&](OpBuilder &nb, Location l, ValueRange a) {
          Value j = arith::IndexCastOp::create(
              nb, l, nb.getI32Type(), linalg::IndexOp::create(nb, l, rank - 1));
          Value better = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT,
                                               a[0], a[1]);
          linalg::YieldOp::create(
              nb, l,
              ValueRange{arith::SelectOp::create(nb, l, better, a[0], a[1]),
                         arith::SelectOp::create(nb, l, better, j, a[2])});
        });
    return op.getResult(1);
  }

  /// The positions (ascending) of the `window` largest of `scores` ([n]),
  /// ties broken by position: bisection finds the window-th largest value,
  /// then one pass collects.
  static Value selectWindow(OpBuilder &b, Location loc, Value scores, int64_t n,
                            int64_t window, Type f64, Type i32) {
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto f64c = [&](double v) -> Value {
      return arith::ConstantOp::create(b, loc, f64, b.getFloatAttr(f64, v));
    };
    // Scores are cosines in [-1, 1]; whatever the input (zeros, NaN, Inf),
    // each is read as a value in [-2, 1.5], NaN as -2, so that the
    // bisection's invariant holds from the start and the window is always
    // filled with `window` distinct valid positions.
    auto scoreAt = [&](OpBuilder &nb, Location l, Value j) -> Value {
      Value s = arith::ExtFOp::create(
          nb, l, f64, tensor::ExtractOp::create(nb, l, scores, j).getResult());
      auto constant = [&](double v) -> Value {
        return arith::ConstantOp::create(nb, l, f64, nb.getFloatAttr(f64, v));
      };
      Value isNan =
          arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO, s, s);
      Value clamped = arith::MinimumFOp::create(
          nb, l, arith::MaximumFOp::create(nb, l, s, constant(-2.0)),
          constant(1.5));
      return arith::SelectOp::create(nb, l, isNan, constant(-2.0), clamped);
    };
    Value c0 = index(0), c1 = index(1), cn = index(n);
    // count(score >= lo) >= window > count(score >= hi) throughout.
    auto bisect = scf::ForOp::create(
        b, loc, c0, index(60), c1, ValueRange{f64c(-2.0), f64c(2.0)},
        [&](OpBuilder &nb, Location l, Value, ValueRange it) {
          Value mid = arith::MulFOp::create(
              nb, l, arith::AddFOp::create(nb, l, it[0], it[1]),
              arith::ConstantOp::create(nb, l, f64, nb.getFloatAttr(f64, 0.5)));
          auto count = scf::ForOp::create(
              nb, l, c0, cn, c1, ValueRange{i32Constant(nb, l, 0)},
              [&](OpBuilder &cb, Location cl, Value j, ValueRange acc) {
                Value ge = arith::CmpFOp::create(
                    cb, cl, arith::CmpFPredicate::OGE, scoreAt(cb, cl, j), mid);
                Value inc = arith::ExtUIOp::create(cb, cl, cb.getI32Type(), ge);
                scf::YieldOp::create(
                    cb, cl,
                    ValueRange{arith::AddIOp::create(cb, cl, acc[0], inc)});
              });
          Value enough = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge,
                                               count.getResult(0),
                                               i32Constant(nb, l, window));
          scf::YieldOp::create(
              nb, l,
              ValueRange{arith::SelectOp::create(nb, l, enough, mid, it[0]),
                         arith::SelectOp::create(nb, l, enough, it[1], mid)});
        });
    Value lo = bisect.getResult(0);
    // The window-th largest value: the smallest score >= lo.
    auto least = scf::ForOp::create(
        b, loc, c0, cn, c1, ValueRange{f64c(3.0)},
        [&](OpBuilder &nb, Location l, Value j, ValueRange it) {
          Value s = scoreAt(nb, l, j);
          Value candidate =
              arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGE, s, lo);
          Value smaller =
              arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT, s, it[0]);
          Value take = arith::AndIOp::create(nb, l, candidate, smaller);
          scf::YieldOp::create(
              nb, l,
              ValueRange{arith::SelectOp::create(nb, l, take, s, it[0])});
        });
    Value threshold = least.getResult(0);
    auto greater = scf::ForOp::create(
        b, loc, c0, cn, c1, ValueRange{i32Constant(b, loc, 0)},
        [&](OpBuilder &nb, Location l, Value j, ValueRange acc) {
          Value gt = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT,
                                           scoreAt(nb, l, j), threshold);
          scf::YieldOp::create(
              nb, l,
              ValueRange{arith::AddIOp::create(
                  nb, l, acc[0],
                  arith::ExtUIOp::create(nb, l, nb.getI32Type(), gt))});
        });
    Value ties = arith::SubIOp::create(b, loc, i32Constant(b, loc, window),
                                       greater.getResult(0));
    Value empty = linalg::FillOp::create(
                      b, loc, ValueRange{i32Constant(b, loc, 0)},
                      ValueRange{tensor::EmptyOp::create(
                          b, loc, ArrayRef<int64_t>{window}, i32)})
                      .getResult(0);
    auto collect = scf::ForOp::create(
        b, loc, c0, cn, c1,
        ValueRange{empty, i32Constant(b, loc, 0), i32Constant(b, loc, 0)},
        [&](OpBuilder &nb, Location l, Value j, ValueRange it) {
          Value s = scoreAt(nb, l, j);
          Value gt = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, s,
                                           threshold);
          Value eq = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, s,
                                           threshold);
          Value tieRoom = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::slt, it[2], ties);
          Value tie = arith::AndIOp::create(nb, l, eq, tieRoom);
          // Never more than `window`, even where scores closer together
          // than the bisection resolves make more of them exceed it.
          Value room = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                             it[1],
                                             i32Constant(nb, l, window));
          Value take = arith::AndIOp::create(
              nb, l, arith::OrIOp::create(nb, l, gt, tie), room);
          auto write = scf::IfOp::create(
              nb, l, take,
              [&](OpBuilder &wb, Location wl) {
                Value position =
                    arith::IndexCastOp::create(wb, wl, wb.getI32Type(), j);
                Value at = arith::IndexCastOp::create(wb, wl, wb.getIndexType(),
                                                      it[1]);
                scf::YieldOp::create(
                    wb, wl,
                    tensor::InsertOp::create(wb, wl, position, it[0], at)
                        .getResult());
              },
              [&](OpBuilder &wb, Location wl) {
                scf::YieldOp::create(wb, wl, it[0]);
              });
          Value count = arith::AddIOp::create(
              nb, l, it[1],
              arith::ExtUIOp::create(nb, l, nb.getI32Type(), take));
          Value tiesTaken = arith::AddIOp::create(
              nb, l, it[2],
              arith::ExtUIOp::create(nb, l, nb.getI32Type(), tie));
          scf::YieldOp::create(
              nb, l, ValueRange{write.getResult(0), count, tiesTaken});
        });
    return collect.getResult(0);
  }

  /// Three k-means iterations per row over the unit queries and keys,
  /// from `initial` [rows, clusters, dim]: each token joins its nearest
  /// centroid; a centroid becomes its members' normalised mean (an empty
  /// cluster keeps its centroid).
  static Value kMeans(PatternRewriter &rewriter, Location loc, Value initial,
                      Value qUnit, Value kUnit, int64_t rows, int64_t clusters,
                      int64_t dim, int64_t querySeq, int64_t keySeq) {
    TensorBuilder tb(rewriter, loc);
    Type f32 = tensorType(initial).getElementType();
    auto forall = scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(rows)},
        ValueRange{tb.empty({rows, clusters, dim}, f32)}, std::nullopt);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    Value r = forall.getInductionVars()[0];
    auto one = rewriter.getIndexAttr(1);
    SmallVector<OpFoldResult> offsets = {r, rewriter.getIndexAttr(0),
                                         rewriter.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {one, rewriter.getIndexAttr(clusters),
                                       rewriter.getIndexAttr(dim)};
    SmallVector<OpFoldResult> ones = {one, one, one};
    auto rowType = RankedTensorType::get({clusters, dim}, f32);
    Value start = tensor::ExtractSliceOp::create(rewriter, loc, rowType,
                                                 initial, offsets, sizes, ones);
    auto index = [](OpBuilder &b, Location l, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, l, v);
    };
    auto iterations = scf::ForOp::create(
        rewriter, loc, index(rewriter, loc, 0), index(rewriter, loc, 3),
        index(rewriter, loc, 1), ValueRange{start},
        [&](OpBuilder &nb, Location nl, Value, ValueRange it) {
          TensorBuilder t(nb, nl);
          Value centroids = it[0];
          Value sums = t.filled({clusters, dim}, f32, 0.0);
          Value counts = t.filled({clusters}, f32, 0.0);
          for (auto [tokenSet, tokenCount] : {std::make_pair(qUnit, querySeq),
                                              std::make_pair(kUnit, keySeq)}) {
            Value tokens = tokenSet;
            int64_t seq = tokenCount;
            // Nearest centroid of every token at once (a contraction and
            // an argmax), then a sequential pass that sums the members.
            Value row = tensor::ExtractSliceOp::create(
                nb, nl, RankedTensorType::get({seq, dim}, f32), tokens,
                ArrayRef<OpFoldResult>{r, nb.getIndexAttr(0),
                                       nb.getIndexAttr(0)},
                ArrayRef<OpFoldResult>{nb.getIndexAttr(1), nb.getIndexAttr(seq),
                                       nb.getIndexAttr(dim)},
                ArrayRef<OpFoldResult>{nb.getIndexAttr(1), nb.getIndexAttr(1),
                                       nb.getIndexAttr(1)});
            Value scores = t.matmulTransposedB(
                row, centroids, t.filled({seq, clusters}, f32, 0.0));
            Value nearest = argmaxLastDim(nb, nl, t, scores);
            auto pass = scf::ForOp::create(
                nb, nl, index(nb, nl, 0), index(nb, nl, seq), index(nb, nl, 1),
                ValueRange{sums, counts},
                [&](OpBuilder &b, Location l, Value j, ValueRange acc) {
                  Value c = arith::IndexCastOp::create(
                      b, l, b.getIndexType(),
                      tensor::ExtractOp::create(b, l, nearest, j));
                  auto accumulate = scf::ForOp::create(
                      b, l, index(b, l, 0), index(b, l, dim), index(b, l, 1),
                      ValueRange{acc[0]},
                      [&](OpBuilder &db, Location dl, Value d, ValueRange s) {
                        Value x = tensor::ExtractOp::create(db, dl, row,
                                                            ValueRange{j, d});
                        Value old = tensor::ExtractOp::create(db, dl, s[0],
                                                              ValueRange{c, d});
                        scf::YieldOp::create(db, dl,
                                             tensor::InsertOp::create(
                                                 db, dl, add(db, dl, old, x),
                                                 s[0], ValueRange{c, d})
                                                 .getResult());
                      });
                  Value n = tensor::ExtractOp::create(b, l, acc[1], c);
                  Value inc = add(b, l, n,
                                  arith::ConstantOp::create(
                                      b, l, f32, b.getFloatAttr(f32, 1.0)));
                  scf::YieldOp::create(
                      b, l,
                      ValueRange{accumulate.getResult(0),
                                 tensor::InsertOp::create(b, l, inc, acc[1], c)
                                     .getResult()});
                });
            sums = pass.getResult(0);
            counts = pass.getResult(1);
          }
          Value norms = t.reduceLastDim(
              {sums}, 0.0, [](OpBuilder &b, Location l, ValueRange a) {
                return add(b, l, a[1], mul(b, l, a[0], a[0]));
              });
          Value next =
              t.map({clusters, dim}, f32, {sums, norms, counts, centroids},
                    {t.identityMap(2), t.dropLastMap(2), t.dropLastMap(2),
                     t.identityMap(2)},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Value zero = arith::ConstantOp::create(
                          b, l, f32, b.getFloatAttr(f32, 0.0));
                      // No members, or members that cancel (or are not
                      // finite): the centroid stays where it was.
                      Value empty = arith::CmpFOp::create(
                          b, l, arith::CmpFPredicate::OEQ, a[2], zero);
                      Value cancelled = arith::CmpFOp::create(
                          b, l, arith::CmpFPredicate::ULE, a[1],
                          arith::ConstantOp::create(
                              b, l, f32, b.getFloatAttr(f32, 1e-24)));
                      Value keep =
                          arith::OrIOp::create(b, l, empty, cancelled);
                      Value mean = mul(b, l, a[0], inverseNorm(b, l, a[1]));
                      return arith::SelectOp::create(b, l, keep, a[3], mean);
                    });
          scf::YieldOp::create(nb, nl, next);
        });
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, iterations.getResult(0), forall.getRegionIterArgs()[0],
        offsets, sizes, ones);
    rewriter.setInsertionPointAfter(forall);
    return forall.getResult(0);
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// How a fresh weights file fills a parameter, from the ops that use it:
/// layer-norm gains start at one, biases and shifts at zero, everything else
/// N(0, 1/fan_in) with fan_in the first dimension of a matrix.
NamedAttrList parameterInit(ParamOp param) {
  MLIRContext *context = param.getContext();
  StringRef init = "normal";
  for (OpOperand &use : param.getResult().getUses()) {
    Operation *user = use.getOwner();
    unsigned index = use.getOperandNumber();
    if (auto norm = dyn_cast<LayerNormOp>(user))
      init = &use == &norm.getGammaMutable() ? "ones" : "zeros";
    else if (isa<LinearOp>(user) && index == 2)
      init = "zeros";
    else if (auto ff = dyn_cast<FeedForwardOp>(user);
             ff && (&use == &ff.getUpBiasMutable() ||
                    &use == &ff.getDownBiasMutable()))
      init = "zeros";
  }
  auto type = cast<RankedTensorType>(param.getType());
  double scale = type.getRank() >= 2
                     ? 1.0 / std::sqrt(static_cast<double>(type.getDimSize(0)))
                     : 0.02;
  NamedAttrList attrs;
  attrs.append("attn.param", param.getNameAttr());
  attrs.append("attn.param_init", StringAttr::get(context, init));
  attrs.append("attn.param_scale",
               FloatAttr::get(Float32Type::get(context), scale));
  return attrs;
}

/// Marks function arguments used as token ids or labels with the range of
/// the table they index (`attn.valid_range`), so the runtime rejects an
/// out-of-range id instead of the kernels clamping it silently.
void recordIndexRanges(func::FuncOp func) {
  auto mark = [&](Value ids, int64_t size) {
    auto arg = dyn_cast<BlockArgument>(ids);
    if (!arg || arg.getOwner()->getParentOp() != func.getOperation())
      return;
    func.setArgAttr(arg.getArgNumber(), "attn.valid_range",
                    DenseI64ArrayAttr::get(func.getContext(), {0, size - 1}));
  };
  func.walk([&](EmbeddingOp op) {
    mark(op.getTokens(), tensorType(op.getTable()).getDimSize(0));
  });
  func.walk([&](SoftmaxCrossEntropyOp op) {
    mark(op.getLabels(), tensorType(op.getLogits()).getShape().back());
  });
}

/// Turns each attn.param into a function argument tagged with its name; all
/// params of one name in a function share one argument.
LogicalResult paramsToArguments(func::FuncOp func) {
  llvm::StringMap<BlockArgument> arguments;
  SmallVector<ParamOp> params;
  func.walk([&](ParamOp op) { params.push_back(op); });
  for (ParamOp param : params) {
    auto [it, inserted] = arguments.try_emplace(param.getName());
    if (inserted) {
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(
              index, param.getType(),
              parameterInit(param).getDictionary(func.getContext()),
              param.getLoc())))
        return param.emitOpError("could not become a function argument");
      it->second = func.getArgument(index);
    } else if (it->second.getType() != param.getType()) {
      return param.emitOpError()
             << "parameter '" << param.getName() << "' has type "
             << param.getType() << " here but " << it->second.getType()
             << " elsewhere";
    }
    param.getResult().replaceAllUsesWith(it->second);
    param.erase();
  }
  return success();
}

struct LowerToLinalgPass : lcc::impl::LowerToLinalgBase<LowerToLinalgPass> {
  using LowerToLinalgBase::LowerToLinalgBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (queryTile < 1 || keyTile < 1) {
      module.emitError() << "attn-lower-to-linalg: expected tile sizes >= 1, "
                            "got query-tile="
                         << static_cast<int64_t>(queryTile)
                         << ", key-tile=" << static_cast<int64_t>(keyTile);
      return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>()) {
      recordIndexRanges(func);
      if (failed(paramsToArguments(func)))
        return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateLowerToLinalgPatterns(patterns, {queryTile, keyTile});
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
    // What is left has no lowering: say which op, rather than emit
    // half-lowered IR.
    WalkResult remaining = module.walk([](Operation *op) {
      if (!isa<AttnDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitOpError("has no lowering to linalg yet");
      return WalkResult::interrupt();
    });
    if (remaining.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void lcc::populateLowerToLinalgPatterns(RewritePatternSet &patterns,
                                        AttentionTiling tiling) {
  MLIRContext *context = patterns.getContext();
  patterns.add<LowerEmbedding, LowerLayerNorm, LowerLinear, LowerFeedForward,
               LowerResidual, LowerReversible, LowerMultiHeadAttention,
               LowerSoftmaxCrossEntropy>(context);
  patterns.add<LowerAttention>(context, tiling);
  patterns.add<LowerSparseAttention, LowerLSHAttention, LowerRoutedAttention>(
      context);
}
