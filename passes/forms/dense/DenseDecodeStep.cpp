//===- DenseDecodeStep.cpp - dense attention's cached decode step ---------===//
//
// For `lcc --decode` (docs/generation.md): causal attn.attention caches
// its keys and values, [batch, heads, positions, d]; shared-QK attention
// caches its unit queries as keys. A step writes its token's rows and
// attends from its position over the rows up to it: flash attention whose
// one query sits at the run-time position (FlashAttention::queryPosition),
// its causality, mask and score regions and shared-QK self score seeing it
// there, no key tile after it read.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/forms/dense/DenseForm.h"

#include "dialects/Attn/IR/AttnOps.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// Why `op` has no cached form; "" when it has one.
std::string denseUncachedBecause(AttentionOp op) {
  if (!op.getCausal())
    return kNotCausalForDecode;
  if (op.getQuery().getType() != op.getKey().getType())
    return "its keys are not its queries' positions";
  if (op.getLogsumexp() && !op.getLogsumexp().use_empty())
    return "its logsumexp is read; a decode step computes none";
  if (!op.getPositions().empty())
    return "it places its queries and keys by positions; a decode step's are "
           "the caches'";
  return "";
}

/// The rows the key cache holds of keys `k`: shared-QK attention's keys
/// are its unit queries.
Value denseCachedKeys(OpBuilder &b, AttentionOp op, Value k) {
  if (!op.getSharedQk())
    return k;
  TensorBuilder tb(b, op.getLoc());
  return normalizeRows(tb, k);
}

} // namespace

LogicalResult lcc::fillDenseDecodeCaches(OpBuilder &b, Operation *op,
                                         const AttentionCaches &caches,
                                         std::string &whyNot) {
  auto attention = cast<AttentionOp>(op);
  whyNot = denseUncachedBecause(attention);
  if (!whyNot.empty())
    return failure();
  caches.fill(b, op->getLoc(), "key",
              denseCachedKeys(b, attention, attention.getKey()));
  caches.fill(b, op->getLoc(), "value", attention.getValue());
  return success();
}

FailureOr<Value> lcc::buildDenseDecodeStep(OpBuilder &b, Operation *op,
                                           ValueRange operands, Value position,
                                           const AttentionCaches &caches,
                                           std::string &whyNot) {
  auto attention = cast<AttentionOp>(op);
  Location loc = op->getLoc();
  AttentionSpec spec = AttentionSpec::of(attention, /*remarks=*/false);
  spec.query = operands[0];
  spec.key = caches.writeRows(
      b, loc, "key", denseCachedKeys(b, attention, operands[1]), position);
  spec.value = caches.writeRows(b, loc, "value", operands[2], position);
  spec.queryPosition = position;
  return configureFlashAttention(b, spec, AttentionTiling()).build(b, loc);
}
