//===- LowerSparseAttention.cpp - sparse attention as masked attention ----===//
//
// Sparse Transformer attention (docs/design.md §3) is dense attention masked by
// its pattern, so it lowers as exactly that: the pattern becomes a mask
// region (SparsePatterns.h) and the masked attention takes the flash form
// with tiles of `block` queries and keys. The mask's block table, computed
// at compile time, skips every key tile the pattern hides from a whole query
// tile and leaves unmasked the tiles it shows whole.
//
// A small stride puts a visible key in every tile (fixed: each window's
// summary columns; strided: every l-th key), so the table skips nothing.
// Then (fixed: a stride of at most twice the block; strided: any), over a
// sequence of whole windows, the pattern is split into
// its two parts, each attention over keys that fill whole tiles, combined
// by their logsumexps as flash attention combines key tiles:
//   fixed:   each window's own keys (a block-diagonal mask), and the
//            summary columns gathered into a key set of their own;
//   strided: the band |i - j| < l, and each residue mod l's queries and
//            keys gathered as a head of their own (there the columns are
//            the whole head).
//
//===----------------------------------------------------------------------===//

#include "dialects/Attn/IR/SparsePatterns.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorBuilder.h"
#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/forms/sparse/SparseForm.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// One part of a split pattern: attention of `query` over `key` and
/// `value` masked by the region `fillMask` builds, with its logsumexp.
std::pair<Value, Value>
attendPart(PatternRewriter &rewriter, SparseAttentionOp op, Value query,
           Value key, Value value, bool causal, int64_t block,
           llvm::function_ref<void(Region &)> fillMask) {
  RankedTensorType q = tensorType(query), v = tensorType(value);
  Location loc = op.getLoc();
  auto resultType = RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
      q.getElementType());
  // f32 whatever the operands: the softmax's state is f32.
  auto logSumExpType =
      RankedTensorType::get({q.getDimSize(0), q.getDimSize(1), q.getDimSize(2)},
                            rewriter.getF32Type());
  auto part =
      AttentionOp::create(rewriter, loc, resultType, logSumExpType, query, key,
                          value, ValueRange(), causal, op.getScaleAttr(),
                          /*shared_qk=*/false, /*modifiersCount=*/2);
  fillMask(part.getModifiers()[0]);
  auto result = configureFlashAttention(rewriter, AttentionSpec::of(part, true),
                                        {block, block})
                    .buildWithLogSumExp(rewriter, loc);
  rewriter.eraseOp(part);
  return result;
}

/// The attention over the union of two parts' disjoint key sets, from
/// each part's result and logsumexp: (o1 e^l1 + o2 e^l2) / (e^l1 + e^l2),
/// shifted by the larger logsumexp, in f32 (bf16 results widened, the sum
/// rounded). A part that shows a query nothing has l = -inf and weighs
/// nothing.
Value combineParts(TensorBuilder &t, std::pair<Value, Value> first,
                   std::pair<Value, Value> second) {
  RankedTensorType type = tensorType(first.first);
  Type elt = type.getElementType();
  return t.map(
      type.getShape(), elt,
      {first.first, second.first, first.second, second.second},
      {t.identityMap(4), t.identityMap(4), t.dropLastMap(4), t.dropLastMap(4)},
      [elt](OpBuilder &b, Location loc, ValueRange a) -> Value {
        auto wide = [&](Value x) { return widenedToF32(b, loc, x); };
        Value top = larger(b, loc, a[2], a[3]);
        Value w1 = expShifted(b, loc, a[2], top);
        Value w2 = expShifted(b, loc, a[3], top);
        Value sum = add(b, loc, mul(b, loc, wide(a[0]), w1),
                        mul(b, loc, wide(a[1]), w2));
        Value share = arith::DivFOp::create(b, loc, sum, add(b, loc, w1, w2));
        return roundedTo(b, loc, share, elt);
      });
}

/// Dimension `dim` of `x` split into [size / inner, inner].
Value splitDim(TensorBuilder &t, Value x, unsigned dim, int64_t inner) {
  RankedTensorType type = tensorType(x);
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> groups;
  for (auto [d, size] : llvm::enumerate(type.getShape())) {
    int64_t first = shape.size();
    if (d == dim) {
      shape.append({size / inner, inner});
      groups.push_back({first, first + 1});
    } else {
      shape.push_back(size);
      groups.push_back({first});
    }
  }
  return tensor::ExpandShapeOp::create(
      t.builder(), t.location(),
      RankedTensorType::get(shape, type.getElementType()), x, groups);
}

/// `x` ([batch, heads, seq] or [batch, heads, seq, dim]) with its positions
/// split into windows of `stride`: [batch, heads, seq / stride, stride, ..].
Value inWindows(TensorBuilder &t, Value x, int64_t stride) {
  return splitDim(t, x, 2, stride);
}

/// Dimensions 2 and 3 of `x` (rank 4 or 5) swapped, in a fresh tensor.
Value swapDims23(TensorBuilder &t, Value x) {
  RankedTensorType type = tensorType(x);
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[2], shape[3]);
  SmallVector<unsigned> dims = {0, 1, 3, 2};
  if (shape.size() == 5)
    dims.push_back(4);
  return t.map(shape, type.getElementType(), {x}, {t.map(shape.size(), dims)},
               [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

/// Collapses dimensions `first` and `first + 1` of `x`.
Value mergeDims(TensorBuilder &t, Value x, unsigned first) {
  unsigned rank = tensorType(x).getRank();
  SmallVector<ReassociationIndices> groups;
  for (unsigned d = 0; d < rank; ++d) {
    if (d == first + 1)
      continue;
    groups.push_back(d == first ? ReassociationIndices{d, d + 1}
                                : ReassociationIndices{d});
  }
  return tensor::CollapseShapeOp::create(t.builder(), t.location(), x, groups);
}

/// [batch, heads, seq, ..] as [batch, heads * stride, seq / stride, ..]:
/// position t * stride + r of head h is row t of head h * stride + r.
Value byResidue(TensorBuilder &t, Value x, int64_t stride) {
  return mergeDims(t, swapDims23(t, inWindows(t, x, stride)), 1);
}

/// The inverse of byResidue for `heads` heads.
Value fromResidues(TensorBuilder &t, Value x, int64_t heads) {
  int64_t stride = tensorType(x).getDimSize(1) / heads;
  return mergeDims(t, swapDims23(t, splitDim(t, x, 1, stride)), 2);
}

/// The last `summary` positions of each window of `stride` of `x`
/// ([batch, heads, seq, dim]), gathered: [batch, heads, seq / stride *
/// summary, dim].
Value summaryColumns(TensorBuilder &t, Value x, int64_t stride,
                     int64_t summary) {
  Value windows = inWindows(t, x, stride);
  RankedTensorType type = tensorType(windows);
  SmallVector<int64_t> shape(type.getShape());
  shape[3] = summary;
  OpBuilder &b = t.builder();
  SmallVector<OpFoldResult> offsets(5, b.getIndexAttr(0)), sizes;
  offsets[3] = b.getIndexAttr(stride - summary);
  for (int64_t size : shape)
    sizes.push_back(b.getIndexAttr(size));
  Value columns = sliceOf(b, t.location(),
                          RankedTensorType::get(shape, type.getElementType()),
                          windows, offsets, sizes);
  // A copy, so that the gathered rows are contiguous.
  columns = t.mapSameShape(
      {columns}, [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  return mergeDims(t, columns, 2);
}

/// Whether `op` is split into its two parts, and if not, why not (empty
/// when the split would gain nothing: the pattern leaves whole tiles
/// empty on its own).
bool splitsIntoParts(SparseAttentionOp op, std::string &why) {
  RankedTensorType q = tensorType(op.getQuery());
  int64_t seq = q.getDimSize(2), stride = op.getStride();
  int64_t block = op.getBlock();
  // Fixed, above twice the block, whole tiles of every window hide and the
  // block table skips them: the mask visits about what the parts would
  // (4K, stride 256: 132 ms masked, 126 in parts). Strided's columns cross
  // every tile of as many residues as the tile has queries: the parts
  // stay ahead (167 against 82 ms there).
  if (op.getPattern() == SparsePattern::Fixed && stride > block * 2)
    return false;
  if (seq % stride != 0 || seq / stride < 2) {
    why = "the sequence (" + std::to_string(seq) +
          ") is not two or more whole windows of the stride (" +
          std::to_string(stride) + ")";
    return false;
  }
  // bf16 and f16 multiply keys in pairs: each part's key tile must be even.
  if (isPairedHalf(q.getElementType())) {
    int64_t partKeys = op.getPattern() == SparsePattern::Fixed
                           ? seq / stride * op.getSummary().value_or(0)
                           : seq / stride;
    int64_t partTile = std::min(block, partKeys);
    if (partKeys > 0 && partTile % 2 != 0) {
      why = std::string(q.getElementType().isF16() ? "f16" : "bf16") +
            " multiplies keys in pairs, and the gathered part's key "
            "tile (" +
            std::to_string(partTile) + ") is odd";
      return false;
    }
  }
  return true;
}

struct LowerSparseAttention : OpRewritePattern<SparseAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SparseAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    int64_t block = op.getBlock();
    std::string why;
    if (splitsIntoParts(op, why)) {
      rewriter.replaceOp(op, op.getPattern() == SparsePattern::Fixed
                                 ? lowerFixedInParts(rewriter, op)
                                 : lowerStridedInParts(rewriter, op));
      return success();
    }
    if (!why.empty())
      op.emitRemark() << "the pattern is attended as one mask, which shows "
                         "a key in every tile: "
                      << why;
    AttentionOp masked = createMaskedAttention(rewriter, op);
    Value result = buildFlashAttention(rewriter, masked, {block, block});
    rewriter.eraseOp(masked);
    rewriter.replaceOp(op, result);
    return success();
  }

  /// Each window's own keys, and the summary columns outside it.
  Value lowerFixedInParts(PatternRewriter &rewriter,
                          SparseAttentionOp op) const {
    TensorBuilder t(rewriter, op.getLoc());
    int64_t stride = op.getStride(), summary = op.getSummary().value_or(0);
    int64_t block = op.getBlock();
    bool causal = op.getCausal();
    auto window =
        attendPart(rewriter, op, op.getQuery(), op.getKey(), op.getValue(),
                   causal, block, [&](Region &mask) {
                     buildFixedWindowMask(rewriter, op.getLoc(), mask, stride);
                   });
    if (summary == 0)
      return window.first;
    op.emitRemark() << "summary columns gathered: " << summary << " of every "
                    << stride << " keys, attended beside each window's own";
    auto columns =
        attendPart(rewriter, op, op.getQuery(),
                   summaryColumns(t, op.getKey(), stride, summary),
                   summaryColumns(t, op.getValue(), stride, summary),
                   /*causal=*/false, block, [&](Region &mask) {
                     buildFixedSummaryMask(rewriter, op.getLoc(), mask, stride,
                                           summary, causal);
                   });
    return combineParts(t, window, columns);
  }

  /// The band, and each residue's column of keys as a head of its own.
  Value lowerStridedInParts(PatternRewriter &rewriter,
                            SparseAttentionOp op) const {
    TensorBuilder t(rewriter, op.getLoc());
    int64_t stride = op.getStride(), block = op.getBlock();
    int64_t heads = tensorType(op.getQuery()).getDimSize(1);
    bool causal = op.getCausal();
    auto band =
        attendPart(rewriter, op, op.getQuery(), op.getKey(), op.getValue(),
                   causal, block, [&](Region &mask) {
                     buildStridedBandMask(rewriter, op.getLoc(), mask, stride);
                   });
    op.emitRemark() << "columns gathered: each residue mod " << stride
                    << " attended as a head of its own beside the band";
    // Within a residue, key row u <= query row t iff j <= i.
    auto columns = attendPart(
        rewriter, op, byResidue(t, op.getQuery(), stride),
        byResidue(t, op.getKey(), stride), byResidue(t, op.getValue(), stride),
        causal, block, [&](Region &mask) {
          buildStridedColumnMask(rewriter, op.getLoc(), mask);
        });
    columns = {fromResidues(t, columns.first, heads),
               fromResidues(t, columns.second, heads)};
    return combineParts(t, band, columns);
  }
};

} // namespace

void lcc::populateSparseAttentionLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerSparseAttention>(patterns.getContext());
}
