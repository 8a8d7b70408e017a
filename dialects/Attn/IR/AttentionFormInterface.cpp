//===- AttentionFormInterface.cpp - the attn forms' dense equivalents -----===//
//
// LSH and routed attention stand for the dense attention they approximate,
// sparse attention for the masked dense attention it equals; LSH attention
// alone attends its rows in groups (Reformer's attention chunking). Dense,
// relative and adaptive-span attention take the interface's defaults.
//
//===----------------------------------------------------------------------===//

#include "dialects/Attn/IR/AttnOps.h"
#include "dialects/Attn/IR/SparsePatterns.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

Value LSHAttentionOp::buildDenseAttention(OpBuilder &b,
                                          std::string &description) {
  description = "the shared-QK dense attention it approximates";
  return AttentionOp::create(b, getLoc(), getResult().getType(), getQueryKey(),
                             getQueryKey(), getValue(), ValueRange(),
                             getCausal(), getScaleAttr(), /*shared_qk=*/true,
                             /*modifiersCount=*/2)
      .getResult();
}

SequenceSplit AttentionOp::getSequenceSplit() {
  // Ring steps attend blocks of keys at other ranks' positions (their
  // regions read them there: `positions`). Shared-QK keys (the normalised
  // queries, the self score on the diagonal) would need more than the
  // block, positions the model gives already place it; those, and a
  // logsumexp something else reads, go over the heads.
  bool f32 =
      cast<RankedTensorType>(getQuery().getType()).getElementType().isF32();
  if (getSharedQk() || getLogsumexp() || !getPositions().empty() || !f32)
    return SequenceSplit::HeadsOverRanks;
  return SequenceSplit::KeysAroundRing;
}

int64_t LSHAttentionOp::getChunkableRows() {
  auto type = cast<RankedTensorType>(getQueryKey().getType());
  return type.getDimSize(0) * type.getDimSize(1);
}

int64_t LSHAttentionOp::getRowChunks() { return getChunks(); }

void LSHAttentionOp::setRowChunks(int64_t chunks) { setChunks(chunks); }

Value SparseAttentionOp::buildDenseAttention(OpBuilder &b,
                                             std::string &description) {
  description = "dense attention with its pattern as mask region (the same "
                "result)";
  return createMaskedAttention(b, *this).getResult();
}

Value RoutedAttentionOp::buildDenseAttention(OpBuilder &b,
                                             std::string &description) {
  description = "the dense attention it approximates";
  return AttentionOp::create(b, getLoc(), getResult().getType(), getQuery(),
                             getKey(), getValue(), ValueRange(), getCausal(),
                             getScaleAttr(),
                             /*shared_qk=*/false, /*modifiersCount=*/2)
      .getResult();
}

/// Relative and adaptive-span attention count distances from where their
/// queries are placed (query_offset): around the ring, each chunk pair is
/// the form at its chunks' distance. In f32 (the ring's merge), when
/// nothing else reads the row statistic and no offset places them yet.
static SequenceSplit splitOfPlacedForm(Value query, Value rowStatistic,
                                       Value queryOffset) {
  bool f32 = cast<RankedTensorType>(query.getType()).getElementType().isF32();
  if (!f32 || rowStatistic || queryOffset)
    return SequenceSplit::HeadsOverRanks;
  return SequenceSplit::KeysAroundRing;
}

SequenceSplit RelativeAttentionOp::getSequenceSplit() {
  return splitOfPlacedForm(getQuery(), getLogsumexp(), getQueryOffset());
}
bool RelativeAttentionOp::attendsAtQueryOffset() { return true; }
bool RelativeAttentionOp::isCausal() { return true; } // Transformer-XL's.
SequenceSplit AdaptiveSpanAttentionOp::getSequenceSplit() {
  return splitOfPlacedForm(getQuery(), getLogNormalizer(), getQueryOffset());
}
bool AdaptiveSpanAttentionOp::attendsAtQueryOffset() { return true; }

void AdaptiveSpanAttentionOp::getPerHeadOperands(
    SmallVectorImpl<unsigned> &operands) {
  operands.push_back(getZMutable().getOperandNumber()); // z: [heads]
}

void RelativeAttentionOp::getPerHeadOperands(
    SmallVectorImpl<unsigned> &operands) {
  // pos: [heads, k_seq, head_dim]; u, w: [heads, head_dim].
  for (OpOperand *operand : {&getPosMutable(), &getUMutable(), &getWMutable()})
    operands.push_back(operand->getOperandNumber());
}

void RoutedAttentionOp::getPerHeadOperands(
    SmallVectorImpl<unsigned> &operands) {
  // centroids: [heads, clusters, head_dim]
  if (getCentroids())
    operands.push_back(getCentroidsMutable()[0].getOperandNumber());
}
