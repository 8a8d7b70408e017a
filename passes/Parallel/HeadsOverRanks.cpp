//===- HeadsOverRanks.cpp - a sequence's shares and the ranks' heads ------===//

#include "passes/Parallel/HeadsOverRanks.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

RankedTensorType parallel::shareOf(RankedTensorType type, int64_t dim,
                                   int64_t ranks) {
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] /= ranks;
  return RankedTensorType::get(shape, type.getElementType());
}

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// `v` with its dimensions in the order `permutation` gives.
Value transposed(OpBuilder &b, Location loc, Value v,
                 ArrayRef<int64_t> permutation) {
  RankedTensorType type = typeOf(v);
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(type.getDimSize(dim));
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, v, init, permutation)
      .getResult()[0];
}

/// `v` with dimension `dim` split into [`outer`, rest].
Value splitDim(OpBuilder &b, Location loc, Value v, int64_t dim,
               int64_t outer) {
  RankedTensorType type = typeOf(v);
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t at = int64_t(shape.size());
    if (d == dim) {
      shape.append({outer, type.getDimSize(d) / outer});
      groups.push_back({at, at + 1});
    } else {
      shape.push_back(type.getDimSize(d));
      groups.push_back({at});
    }
  }
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), v, groups);
}

/// `v` with dimensions `dim` and `dim + 1` merged.
Value mergeDims(OpBuilder &b, Location loc, Value v, int64_t dim) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < typeOf(v).getRank(); ++d) {
    if (d == dim + 1)
      continue;
    groups.push_back(d == dim ? ReassociationIndices{d, d + 1}
                              : ReassociationIndices{d});
  }
  return tensor::CollapseShapeOp::create(b, loc, v, groups);
}

} // namespace

Value parallel::chunkOf(OpBuilder &b, Location loc, Value v, int64_t dim,
                        int64_t chunk, int64_t count) {
  RankedTensorType type = typeOf(v);
  int64_t size = type.getDimSize(dim) / count;
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes,
      strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(b.getIndexAttr(d == dim ? size : type.getDimSize(d)));
  offsets[dim] = b.getIndexAttr(chunk * size);
  return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
}

namespace {

/// `v`'s 2P chunks along `dim` laid out in the order `chunkAt(i)` gives.
Value reorderChunks(OpBuilder &b, Location loc, Value v, int64_t dim,
                    int64_t ranks, function_ref<int64_t(int64_t)> chunkAt) {
  SmallVector<Value> chunks;
  for (int64_t i = 0; i < 2 * ranks; ++i)
    chunks.push_back(parallel::chunkOf(b, loc, v, dim, chunkAt(i), 2 * ranks));
  return tensor::ConcatOp::create(b, loc, dim, chunks);
}

/// [B, H, S, d] (S = seq / P, this rank's positions, every head) to
/// [B, H / P, seq, d] (every position, this rank's heads).
Value toRankHeads(OpBuilder &b, Location loc, Value share, int64_t ranks) {
  Value grouped = splitDim(b, loc, share, 1, ranks); // [B, P, H/P, S, d]
  Value blocks = transposed(b, loc, grouped, {1, 0, 2, 3, 4}); // [P, B, ...]
  // Block j, rank j's heads at this rank's positions, goes to rank j; block
  // j received holds this rank's heads at rank j's positions.
  Value received = AllToAllOp::create(b, loc, blocks);
  Value ordered =
      transposed(b, loc, received, {1, 2, 0, 3, 4}); // [B, H/P, P, S, d]
  // The ranks' shares in rank order are the sequence in zigzag order.
  return parallel::inPositionOrder(b, loc, mergeDims(b, loc, ordered, 2), 2,
                                   ranks);
}

/// The inverse of toRankHeads: [B, H / P, seq, d] to [B, H, S, d].
Value toRankPositions(OpBuilder &b, Location loc, Value heads, int64_t ranks) {
  heads = parallel::inShareOrder(b, loc, heads, 2, ranks);
  Value byRank = splitDim(b, loc, heads, 2, ranks); // [B, H/P, P, S, d]
  Value blocks =
      transposed(b, loc, byRank, {2, 0, 1, 3, 4}); // [P, B, H/P, S, d]
  Value received = AllToAllOp::create(b, loc, blocks);
  Value ordered =
      transposed(b, loc, received, {1, 0, 2, 3, 4}); // [B, P, H/P, S, d]
  return mergeDims(b, loc, ordered, 1);
}

} // namespace

Value parallel::takeRankShare(OpBuilder &b, Location loc, Value whole,
                              int64_t dim, int64_t ranks) {
  Value blocks = splitDim(b, loc, whole, dim, ranks);
  if (dim != 0) {
    SmallVector<int64_t> permutation = {dim};
    for (int64_t d = 0; d < typeOf(blocks).getRank(); ++d)
      if (d != dim)
        permutation.push_back(d);
    blocks = transposed(b, loc, blocks, permutation);
  }
  SmallVector<int64_t> shape(typeOf(blocks).getShape());
  shape[0] = 1;
  Value mine = RankSliceOp::create(
      b, loc, RankedTensorType::get(shape, typeOf(whole).getElementType()),
      blocks);
  // The leading 1 merged into the next dimension.
  return mergeDims(b, loc, mine, 0);
}

int64_t parallel::chunkOfShare(int64_t rank, int64_t half, int64_t ranks) {
  return half == 0 ? rank : 2 * ranks - 1 - rank;
}

Value parallel::inShareOrder(OpBuilder &b, Location loc, Value positions,
                             int64_t dim, int64_t ranks) {
  // Place i holds half i % 2 of rank i / 2's share.
  return reorderChunks(b, loc, positions, dim, ranks, [&](int64_t i) {
    return chunkOfShare(i / 2, i % 2, ranks);
  });
}

Value parallel::inPositionOrder(OpBuilder &b, Location loc, Value shares,
                                int64_t dim, int64_t ranks) {
  return reorderChunks(b, loc, shares, dim, ranks, [&](int64_t chunk) {
    return chunk < ranks ? 2 * chunk : 2 * (2 * ranks - 1 - chunk) + 1;
  });
}

Value parallel::takeRankPositions(OpBuilder &b, Location loc, Value whole,
                                  int64_t dim, int64_t ranks) {
  return takeRankShare(b, loc, inShareOrder(b, loc, whole, dim, ranks), dim,
                       ranks);
}

LogicalResult parallel::splitHeadsOverRanks(AttentionFormInterface form,
                                            int64_t ranks,
                                            function_ref<bool(Value)> isShare,
                                            SmallVectorImpl<Value> &shares) {
  Operation *op = form.getOperation();
  RankedTensorType query = typeOf(op->getOperand(0));
  int64_t heads = query.getDimSize(1);
  if (heads % ranks != 0)
    return op->emitError() << "context parallelism over " << ranks
                           << " ranks gives each rank heads / " << ranks
                           << " of this attention's " << heads
                           << " heads: give a multiple of " << ranks;
  SmallVector<unsigned> perHead;
  form.getPerHeadOperands(perHead);
  OpBuilder b(op);
  Location loc = op->getLoc();
  // An operand read twice (shared-QK attention's queries and keys) is
  // exchanged once: the op may require the same value.
  llvm::DenseMap<Value, Value> exchanged;
  for (OpOperand &operand : op->getOpOperands()) {
    Value v = operand.get();
    if (isShare(v)) {
      Value &heads = exchanged[v];
      if (!heads)
        heads = toRankHeads(b, loc, v, ranks);
      operand.set(heads);
    } else if (llvm::is_contained(perHead, operand.getOperandNumber())) {
      if (typeOf(v).getDimSize(0) != heads)
        return op->emitError() << "operand #" << operand.getOperandNumber()
                               << " holds " << typeOf(v).getDimSize(0)
                               << " slices, not one per head (" << heads << ")";
      operand.set(takeRankShare(b, loc, v, 0, ranks));
    }
  }
  // Groups of rows, as many rows a group as before (at least one group):
  // the rank has 1 / P of the heads.
  if (form.getChunkableRows() > 0)
    form.setRowChunks(std::max<int64_t>(1, form.getRowChunks() / ranks));
  b.setInsertionPointAfter(op);
  for (OpResult result : op->getResults()) {
    RankedTensorType type = typeOf(result);
    if (type.getRank() != 4 || type.getDimSize(1) != heads)
      return op->emitError()
             << "result #" << result.getResultNumber() << " (" << type
             << ") is not one row per head and position: context "
                "parallelism cannot give it back to the ranks' positions";
    SmallVector<OpOperand *> readers = llvm::map_to_vector(
        result.getUses(), [](OpOperand &use) { return &use; });
    result.setType(shareOf(type, 1, ranks));
    Value back = toRankPositions(b, loc, result, ranks);
    for (OpOperand *reader : readers)
      reader->set(back);
    shares.push_back(back);
  }
  return success();
}
