//===- LowerTrainingOps.cpp - the train step's ops to linalg --------------===//
//
// The backward of each model op (the math is stated in AttnTrainingOps.td),
// the head split and merge, gradient clipping and the optimizer updates.
// Weight gradients are contractions over positions (matmulTransposedA);
// the feed-forward backward recomputes its hidden activations per chunk.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/Activations.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/Summation.h"

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

/// The sum over rows of `rows` ([positions, n]): [n], in blocks of rows
/// (passes/Summation.h).
Value columnSum(TensorBuilder &tb, Value rows) {
  RankedTensorType type = tensorType(rows);
  int64_t positions = type.getDimSize(0), columns = type.getDimSize(1);
  Type elt = type.getElementType();
  using utils::IteratorType;
  auto add = [](OpBuilder &b, Location loc, ValueRange a) {
    return lowering::add(b, loc, a[1], a[0]);
  };
  int64_t block = summationBlock(positions);
  Value sums = rows;
  if (block > 1) {
    // blocks[k, j, c] = rows[k * block + j, c]; sums[k, c] its sum over j.
    Value blocks = tensor::ExpandShapeOp::create(
        tb.builder(), tb.location(),
        RankedTensorType::get({positions / block, block, columns}, elt), rows,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}});
    sums = tb.generic(tb.filled({positions / block, columns}, elt, 0.0),
                      {blocks}, {tb.identityMap(3), tb.map(3, {0, 2})},
                      {IteratorType::parallel, IteratorType::reduction,
                       IteratorType::parallel},
                      add);
  }
  return tb.generic(tb.filled({columns}, elt, 0.0), {sums},
                    {tb.map(2, {1, 0}), tb.map(2, {0})},
                    {IteratorType::parallel, IteratorType::reduction}, add);
}

/// a · bᵀ for a [m, k] and b [n, k].
Value timesTransposed(TensorBuilder &tb, Value a, Value b) {
  RankedTensorType aType = tensorType(a);
  return tb.matmulTransposedB(
      a, b,
      tb.filled({aType.getDimSize(0), tensorType(b).getDimSize(0)},
                aType.getElementType(), 0.0));
}

/// aᵀ · b for a [k, m] and b [k, n], summed over the k positions.
Value transposedTimes(TensorBuilder &tb, Value a, Value b) {
  RankedTensorType aType = tensorType(a);
  return tb.matmulTransposedA(
      a, b,
      tb.filled({aType.getDimSize(1), tensorType(b).getDimSize(1)},
                aType.getElementType(), 0.0));
}

/// The widest column tile of at most 16 that divides `width`.
int64_t columnTile(int64_t width) {
  for (int64_t tile : {16, 8, 4, 2})
    if (width % tile == 0)
      return tile;
  return 1;
}

/// Adds row p of `dy` ([positions, d_model]), columns [col, col + tile), to
/// row `row` of `acc` ([vocab, tile]).
Value addRowSlice(OpBuilder &b, Location loc, Value acc, Value dy, Value row,
                  Value p, Value col, int64_t tile) {
  auto loop = scf::ForOp::create(
      b, loc, indexConstant(b, loc, 0), indexConstant(b, loc, tile),
      indexConstant(b, loc, 1), ValueRange{acc},
      [&](OpBuilder &nb, Location l, Value e, ValueRange it) {
        Value column = arith::AddIOp::create(nb, l, col, e);
        Value g = tensor::ExtractOp::create(nb, l, dy, ValueRange{p, column});
        Value old = tensor::ExtractOp::create(nb, l, it[0], ValueRange{row, e});
        scf::YieldOp::create(nb, l,
                             tensor::InsertOp::create(nb, l, add(nb, l, old, g),
                                                      it[0], ValueRange{row, e})
                                 .getResult());
      });
  return loop.getResult(0);
}

struct LowerEmbeddingBackward : OpRewritePattern<EmbeddingBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    TensorBuilder tb(rewriter, loc);
    RankedTensorType table = tensorType(op.getTableGrad());
    int64_t vocab = table.getDimSize(0), width = table.getDimSize(1);
    Type elt = table.getElementType();
    Value tokens = tensor::CollapseShapeOp::create(
        rewriter, loc, op.getTokens(), ArrayRef<ReassociationIndices>{{0, 1}});
    Value dy = asRows(rewriter, loc, op.getResultGrad());
    int64_t positions = tensorType(tokens).getDimSize(0);
    // Each position adds its gradient row to its token's row: a scatter,
    // made race-free by giving each parallel iteration its own columns, and
    // deterministic by adding the positions in order. O(positions x d_model)
    // where gathering each row from every position was O(vocab x that).
    int64_t tile = columnTile(width);
    auto forall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(width / tile)},
        ValueRange{tb.empty(table.getShape(), elt)}, std::nullopt);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    TensorBuilder t(rewriter, loc);
    Value col =
        arith::MulIOp::create(rewriter, loc, forall.getInductionVars()[0],
                              indexConstant(rewriter, loc, tile));
    auto scatter = scf::ForOp::create(
        rewriter, loc, indexConstant(rewriter, loc, 0),
        indexConstant(rewriter, loc, positions),
        indexConstant(rewriter, loc, 1),
        ValueRange{t.filled({vocab, tile}, elt, 0.0)},
        [&](OpBuilder &b, Location l, Value p, ValueRange acc) {
          Value row = clampedIndex(
              b, l, tensor::ExtractOp::create(b, l, tokens, p), vocab);
          scf::YieldOp::create(
              b, l, addRowSlice(b, l, acc[0], dy, row, p, col, tile));
        });
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    insertIntoShared(
        rewriter, loc, scatter.getResult(0), forall.getRegionIterArgs()[0],
        {rewriter.getIndexAttr(0), col},
        {rewriter.getIndexAttr(vocab), rewriter.getIndexAttr(tile)});
    rewriter.setInsertionPointAfter(forall);
    rewriter.replaceOp(op, forall.getResult(0));
    return success();
  }
};

struct LowerLayerNormBackward : OpRewritePattern<LayerNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormBackwardOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    Location loc = op.getLoc();
    Value x = asRows(rewriter, loc, op.getInput());
    Value dy = asRows(rewriter, loc, op.getResultGrad());
    RankedTensorType type = tensorType(x);
    Type elt = type.getElementType();
    Value invFeatures =
        tb.scalar(elt, 1.0 / static_cast<double>(type.getDimSize(1)));
    // The forward's statistics, recomputed as it computed them.
    auto [mean, invStd] =
        rowMeanAndInverseStd(tb, x, op.getEpsilon().convertToDouble());
    Value normalized = tb.map(
        type.getShape(), elt, {x, mean, invStd},
        {tb.identityMap(2), tb.dropLastMap(2), tb.dropLastMap(2)},
        [](OpBuilder &b, Location l, ValueRange a) {
          return mul(b, l, arith::SubFOp::create(b, l, a[0], a[1]), a[2]);
        });
    // g = dy · gamma; dx = (g - mean(g) - x̂ mean(g x̂)) / std.
    Value g = tb.map(type.getShape(), elt, {dy, op.getGamma()},
                     {tb.identityMap(2), tb.lastDimMap(2)},
                     [](OpBuilder &b, Location l, ValueRange a) {
                       return mul(b, l, a[0], a[1]);
                     });
    Value sumG = rowSum(tb, g);
    Value sumGX = tb.reduceLastDim(
        {g, normalized}, 0.0, [](OpBuilder &b, Location l, ValueRange a) {
          return add(b, l, a[2], mul(b, l, a[0], a[1]));
        });
    Value dx =
        tb.map(type.getShape(), elt, {g, normalized, sumG, sumGX, invStd},
               {tb.identityMap(2), tb.identityMap(2), tb.dropLastMap(2),
                tb.dropLastMap(2), tb.dropLastMap(2)},
               [&](OpBuilder &b, Location l, ValueRange a) {
                 Value meanG = mul(b, l, a[2], invFeatures);
                 Value meanGX = mul(b, l, a[3], invFeatures);
                 Value centred = arith::SubFOp::create(b, l, a[0], meanG);
                 Value d = arith::SubFOp::create(b, l, centred,
                                                 mul(b, l, a[1], meanGX));
                 return mul(b, l, d, a[4]);
               });
    Value dyNormalized = tb.mapSameShape(
        {dy, normalized}, [](OpBuilder &b, Location l, ValueRange a) {
          return mul(b, l, a[0], a[1]);
        });
    rewriter.replaceOp(op,
                       {fromRows(rewriter, loc, dx, tensorType(op.getInput())),
                        columnSum(tb, dyNormalized), columnSum(tb, dy)});
    return success();
  }
};

struct LowerLinearBackward : OpRewritePattern<LinearBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearBackwardOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    Location loc = op.getLoc();
    Value x = asRows(rewriter, loc, op.getInput());
    Value dy = asRows(rewriter, loc, op.getResultGrad());
    SmallVector<Value> results = {
        fromRows(rewriter, loc, timesTransposed(tb, dy, op.getWeight()),
                 tensorType(op.getInput())),
        transposedTimes(tb, x, dy)};
    if (op.getBiasGrad())
      results.push_back(columnSum(tb, dy));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct LowerFeedForwardBackward : OpRewritePattern<FeedForwardBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  struct Gradients {
    Value input, upWeight, upBias, downWeight, downBias;
    /// The chunk's result, with_output only.
    Value output;
  };

  /// The gradients of one chunk: `x` and `dy` are its [rows, d_model].
  static Gradients chunkBackward(TensorBuilder &tb, FeedForwardBackwardOp op,
                                 Value x, Value dy) {
    Activation kind = op.getActivation();
    // Recomputed, not the forward's: only this chunk's hidden activations
    // exist at a time.
    auto [preActivation, hidden] = buildRecomputed(tb.builder(), [&] {
      Value pre = affine(tb, x, op.getUpWeight(), op.getUpBias());
      Value activated =
          tb.mapSameShape({pre}, [&](OpBuilder &b, Location l, ValueRange a) {
            return applyActivation(b, l, kind, a[0]);
          });
      return std::make_pair(pre, activated);
    });
    Value dHidden = timesTransposed(tb, dy, op.getDownWeight());
    Value dPre = tb.mapSameShape(
        {dHidden, preActivation}, [&](OpBuilder &b, Location l, ValueRange a) {
          return mul(b, l, a[0], activationDerivative(b, l, kind, a[1]));
        });
    Value output;
    if (Value downBias = op.getDownBias())
      output = affine(tb, hidden, op.getDownWeight(), downBias);
    return {timesTransposed(tb, dPre, op.getUpWeight()),
            transposedTimes(tb, x, dPre),
            columnSum(tb, dPre),
            transposedTimes(tb, hidden, dy),
            columnSum(tb, dy),
            output};
  }

  /// `rows` with `chunk` placed at rows [row, row + count).
  static Value insertRows(OpBuilder &b, Location loc, Value chunk, Value rows,
                          int64_t row, int64_t count) {
    int64_t width = tensorType(rows).getDimSize(1);
    return tensor::InsertSliceOp::create(
        b, loc, chunk, rows,
        ArrayRef<OpFoldResult>{b.getIndexAttr(row), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(count), b.getIndexAttr(width)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  }

  static Value rowSlice(OpBuilder &b, Location loc, Value rows, int64_t offset,
                        int64_t count) {
    int64_t width = tensorType(rows).getDimSize(1);
    return tensor::ExtractSliceOp::create(
        b, loc, rows,
        ArrayRef<OpFoldResult>{b.getIndexAttr(offset), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(count), b.getIndexAttr(width)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  }

  LogicalResult matchAndRewrite(FeedForwardBackwardOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    Location loc = op.getLoc();
    RankedTensorType type = tensorType(op.getInput());
    Value x = asRows(rewriter, loc, op.getInput());
    Value dy = asRows(rewriter, loc, op.getResultGrad());
    int64_t positions = tensorType(x).getDimSize(0);
    int64_t rows =
        llvm::divideCeil(positions, std::max<int64_t>(op.getChunks(), 1));
    // Chunk by chunk as the forward: each chunk's hidden activations are
    // recomputed, its input gradient placed in its rows, its weight
    // gradients added to the others'.
    Gradients total;
    Value dx = tb.empty(tensorType(x).getShape(), type.getElementType());
    Value output = op.getDownBias() ? tb.empty(tensorType(x).getShape(),
                                               type.getElementType())
                                    : Value();
    for (int64_t row = 0; row < positions; row += rows) {
      int64_t count = std::min(rows, positions - row);
      bool whole = count == positions;
      Gradients chunk = chunkBackward(
          tb, op, whole ? x : rowSlice(rewriter, loc, x, row, count),
          whole ? dy : rowSlice(rewriter, loc, dy, row, count));
      if (whole) {
        dx = chunk.input;
        output = chunk.output;
        total = chunk;
        break;
      }
      dx = insertRows(rewriter, loc, chunk.input, dx, row, count);
      if (output)
        output = insertRows(rewriter, loc, chunk.output, output, row, count);
      if (!total.upWeight) {
        total = chunk;
        continue;
      }
      total.upWeight = addTensors(tb, total.upWeight, chunk.upWeight);
      total.upBias = addTensors(tb, total.upBias, chunk.upBias);
      total.downWeight = addTensors(tb, total.downWeight, chunk.downWeight);
      total.downBias = addTensors(tb, total.downBias, chunk.downBias);
    }
    SmallVector<Value> results = {fromRows(rewriter, loc, dx, type),
                                  total.upWeight, total.upBias,
                                  total.downWeight, total.downBias};
    if (output)
      results.push_back(fromRows(rewriter, loc, output, type));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct LowerSoftmaxCrossEntropyBackward
    : OpRewritePattern<SoftmaxCrossEntropyBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxCrossEntropyBackwardOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    Value logits = op.getLogits();
    RankedTensorType type = tensorType(logits);
    unsigned rank = type.getRank();
    Type elt = type.getElementType();
    int64_t vocab = type.getShape().back();
    int64_t positions = type.getNumElements() / vocab;
    Value maxima = rowMax(tb, logits);
    Value sumExp = tb.reduceLastDim(
        {logits}, {maxima}, 0.0, [](OpBuilder &b, Location loc, ValueRange a) {
          Value shifted = arith::SubFOp::create(b, loc, a[0], a[1]);
          return add(b, loc, a[2], math::ExpOp::create(b, loc, shifted));
        });
    // Each position's share of the loss: loss_grad · w_p / sum(w).
    Value weights = op.getWeights();
    Value denominator =
        weights ? totalSum(tb, weights)
                : tb.filled({}, elt, static_cast<double>(positions));
    AffineMap scalarMap = AffineMap::get(rank, 0, rewriter.getContext());
    SmallVector<Value> inputs = {logits,         maxima,      sumExp,
                                 op.getLabels(), denominator, op.getLossGrad()};
    SmallVector<AffineMap> maps = {tb.identityMap(rank),
                                   tb.dropLastMap(rank),
                                   tb.dropLastMap(rank),
                                   tb.dropLastMap(rank),
                                   scalarMap,
                                   scalarMap};
    if (weights) {
      inputs.push_back(weights);
      maps.push_back(tb.dropLastMap(rank));
    }
    Value grad = tb.map(
        type.getShape(), elt, inputs, maps,
        [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          Value probability = arith::DivFOp::create(
              b, loc, expShifted(b, loc, a[0], a[1]), a[2]);
          Value label = clampedIndex(b, loc, a[3], vocab);
          Value column = linalg::IndexOp::create(b, loc, rank - 1);
          Value isLabel = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq, label, column);
          Value target = arith::SelectOp::create(
              b, loc, isLabel, floatConstant(b, loc, elt, 1.0),
              floatConstant(b, loc, elt, 0.0));
          Value share = arith::DivFOp::create(b, loc, a[5], a[4]);
          if (weights)
            share = mul(b, loc, share, a[6]);
          return mul(b, loc, arith::SubFOp::create(b, loc, probability, target),
                     share);
        });
    rewriter.replaceOp(op, grad);
    return success();
  }
};

struct LowerSplitHeads : OpRewritePattern<SplitHeadsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitHeadsOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    RankedTensorType in = tensorType(op.getInput()),
                     out = tensorType(op.getResult());
    int64_t heads = out.getDimSize(1), dim = out.getDimSize(3);
    Value grouped = tensor::ExpandShapeOp::create(
        rewriter, op.getLoc(),
        RankedTensorType::get({in.getDimSize(0), in.getDimSize(1), heads, dim},
                              in.getElementType()),
        op.getInput(), ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
    // (b, h, s, e) reads (b, s, h, e).
    rewriter.replaceOp(
        op, tb.map(out.getShape(), out.getElementType(), {grouped},
                   {tb.map(4, {0, 2, 1, 3})},
                   [](OpBuilder &, Location, ValueRange a) { return a[0]; }));
    return success();
  }
};

struct LowerMergeHeads : OpRewritePattern<MergeHeadsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MergeHeadsOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    RankedTensorType in = tensorType(op.getInput());
    // (b, s, h, e) reads (b, h, s, e).
    Value grouped =
        tb.map({in.getDimSize(0), in.getDimSize(2), in.getDimSize(1),
                in.getDimSize(3)},
               in.getElementType(), {op.getInput()}, {tb.map(4, {0, 2, 1, 3})},
               [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, op.getResult().getType(), grouped,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
    return success();
  }
};

struct LowerClipByGlobalNorm : OpRewritePattern<ClipByGlobalNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ClipByGlobalNormOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    Type elt = tensorType(op.getGradients()[0]).getElementType();
    Value squares;
    for (Value g : op.getGradients()) {
      Value mine = totalSum(
          tb, tb.mapSameShape({g}, [](OpBuilder &b, Location l, ValueRange a) {
            return mul(b, l, a[0], a[0]);
          }));
      squares = squares ? addTensors(tb, squares, mine) : mine;
    }
    // The gradients scaled by s have the norm |s| norm. Then min(1,
    // max_norm / (norm + 1e-6)), as torch's clip_grad_norm_; 1 when
    // max_norm <= 0 turns clipping off.
    SmallVector<Value> scalars = {squares, op.getMaxNorm()};
    if (op.getScale())
      scalars.push_back(op.getScale());
    Value factor = tb.mapSameShape(
        scalars, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value one = floatConstant(b, l, elt, 1.0);
          Value scale = a.size() > 2 ? a[2] : one;
          Value norm = mul(b, l, math::AbsFOp::create(b, l, scale),
                           math::SqrtOp::create(b, l, a[0]));
          Value ratio = arith::DivFOp::create(
              b, l, a[1], add(b, l, norm, floatConstant(b, l, elt, 1e-6)));
          Value clipped = arith::MinimumFOp::create(b, l, ratio, one);
          Value on = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT,
                                           a[1], floatConstant(b, l, elt, 0.0));
          Value clip = arith::SelectOp::create(b, l, on, clipped, one);
          return a.size() > 2 ? mul(b, l, scale, clip) : clip;
        });
    SmallVector<Value> clipped;
    for (Value g : op.getGradients()) {
      RankedTensorType type = tensorType(g);
      unsigned rank = type.getRank();
      clipped.push_back(tb.map(
          type.getShape(), elt, {g, factor},
          {tb.identityMap(rank), AffineMap::get(rank, 0, op.getContext())},
          [](OpBuilder &b, Location l, ValueRange a) {
            return mul(b, l, a[0], a[1]);
          }));
    }
    rewriter.replaceOp(op, clipped);
    return success();
  }
};

/// Indexing maps for an elementwise op of rank `rank` over `tensors` full
/// operands followed by `scalars` 0-d ones (the hyper-parameters), which
/// every element reads.
static SmallVector<AffineMap> withScalars(TensorBuilder &tb, MLIRContext *ctx,
                                          unsigned rank, unsigned tensors,
                                          unsigned scalars) {
  SmallVector<AffineMap> maps(tensors, tb.identityMap(rank));
  maps.append(scalars, AffineMap::get(rank, 0, ctx));
  return maps;
}

struct LowerSGDUpdate : OpRewritePattern<SGDUpdateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SGDUpdateOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    RankedTensorType type = tensorType(op.getParam());
    rewriter.replaceOp(
        op,
        tb.map(
            type.getShape(), type.getElementType(),
            {op.getParam(), op.getGradient(), op.getLr(), op.getWeightDecay()},
            withScalars(tb, op.getContext(), type.getRank(), 2, 2),
            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
              // p - lr (g + wd p): with wd 0 exactly p - lr g, so
              // lr = 1 moves p by -g.
              Value g = add(b, l, a[1], mul(b, l, a[3], a[0]));
              return arith::SubFOp::create(b, l, a[0], mul(b, l, a[2], g));
            }));
    return success();
  }
};

struct LowerAdamUpdate : OpRewritePattern<AdamUpdateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AdamUpdateOp op,
                                PatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    MLIRContext *ctx = op.getContext();
    RankedTensorType type = tensorType(op.getParam());
    unsigned rank = type.getRank();
    Type elt = type.getElementType();
    auto one = [&](OpBuilder &b, Location l) {
      return floatConstant(b, l, elt, 1.0);
    };
    // The moving average `beta x + (1 - beta) y` of m' and v'.
    auto average = [&](OpBuilder &b, Location l, Value beta, Value x, Value y) {
      return add(b, l, mul(b, l, beta, x),
                 mul(b, l, arith::SubFOp::create(b, l, one(b, l), beta), y));
    };
    // m' = beta1 m + (1 - beta1) g; v' = beta2 v + (1 - beta2) g².
    Value m = tb.map(type.getShape(), elt,
                     {op.getMoment1(), op.getGradient(), op.getBeta1()},
                     withScalars(tb, ctx, rank, 2, 1),
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       return average(b, l, a[2], a[0], a[1]);
                     });
    Value v = tb.map(type.getShape(), elt,
                     {op.getMoment2(), op.getGradient(), op.getBeta2()},
                     withScalars(tb, ctx, rank, 2, 1),
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       return average(b, l, a[2], a[0], mul(b, l, a[1], a[1]));
                     });
    // torch.optim.AdamW: p (1 - lr wd) - lr / (1 - beta1^t) · m' /
    // (sqrt(v') / sqrt(1 - beta2^t) + eps).
    Value p = tb.map(
        type.getShape(), elt,
        {op.getParam(), m, v, op.getStep(), op.getLr(), op.getBeta1(),
         op.getBeta2(), op.getEpsilon(), op.getWeightDecay()},
        withScalars(tb, ctx, rank, 3, 6),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value t = a[3], lr = a[4];
          auto correction = [&](Value beta) -> Value {
            Value power = math::PowFOp::create(b, l, beta, t);
            return arith::SubFOp::create(b, l, one(b, l), power);
          };
          Value decayed =
              mul(b, l, a[0],
                  arith::SubFOp::create(b, l, one(b, l), mul(b, l, lr, a[8])));
          Value stepSize = arith::DivFOp::create(b, l, lr, correction(a[5]));
          Value denominator =
              add(b, l,
                  arith::DivFOp::create(
                      b, l, math::SqrtOp::create(b, l, a[2]),
                      math::SqrtOp::create(b, l, correction(a[6]))),
                  a[7]);
          Value update = mul(b, l, stepSize,
                             arith::DivFOp::create(b, l, a[1], denominator));
          return arith::SubFOp::create(b, l, decayed, update);
        });
    rewriter.replaceOp(op, {p, m, v});
    return success();
  }
};

} // namespace

void lcc::populateTrainingOpLoweringPatterns(RewritePatternSet &patterns) {
  patterns
      .add<LowerEmbeddingBackward, LowerLayerNormBackward, LowerLinearBackward,
           LowerFeedForwardBackward, LowerSoftmaxCrossEntropyBackward,
           LowerSplitHeads, LowerMergeHeads, LowerClipByGlobalNorm,
           LowerSGDUpdate, LowerAdamUpdate>(patterns.getContext());
}
