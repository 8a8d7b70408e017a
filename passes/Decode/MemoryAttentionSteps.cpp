//===- MemoryAttentionSteps.cpp - cached steps over a memory --------------===//
//
// Relative and adaptive-span attention attend from the segment's queries
// to [memory; segment], query i at key position M + i. Prefill caches the
// keys and values of both (M + positions rows); a step at segment position
// p writes row M + p and runs the forward's own flash form
// (planRelativeAttention, planAdaptiveSpanAttention) with its one query at
// that run-time key position: distances, the span's mask and causality
// counted from there, no key tile after it read.
//
//===----------------------------------------------------------------------===//

#include "passes/Decode/MemoryAttentionSteps.h"
#include "passes/LowerToLinalg/AdaptiveSpanSteps.h"
#include "passes/LowerToLinalg/RelativeSteps.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// M: the keys before the first query.
int64_t memoryRowsOf(Value query, Value key) {
  return tensorType(key).getDimSize(2) - tensorType(query).getDimSize(2);
}

/// The caches of keys and values, the memory's rows first.
LogicalResult fillKeysAndValues(OpBuilder &b, Location loc, Value query,
                                Value key, Value value,
                                const AttentionCaches &caches) {
  AttentionCaches all = caches.withMemoryRows(memoryRowsOf(query, key));
  all.fill(b, loc, "key", key);
  all.fill(b, loc, "value", value);
  return success();
}

/// The step's key position, memoryRows + `position` (0-d i32 tensors).
Value keyPosition(OpBuilder &b, Location loc, Value position,
                  int64_t memoryRows) {
  TensorBuilder t(b, loc);
  return t.map({}, b.getI32Type(), {position}, {t.identityMap(0)},
               [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
                 return arith::AddIOp::create(
                     b, loc, a[0],
                     arith::ConstantIntOp::create(b, loc, memoryRows, 32));
               });
}

/// The caches with the step's rows written at its key position; that
/// position.
struct StepCaches {
  Value key, value, position;
};

StepCaches writeStepRows(OpBuilder &b, Location loc, Value queryOfOp,
                         Value keyOfOp, ValueRange operands, Value position,
                         const AttentionCaches &caches) {
  int64_t memoryRows = memoryRowsOf(queryOfOp, keyOfOp);
  AttentionCaches all = caches.withMemoryRows(memoryRows);
  Value at = keyPosition(b, loc, position, memoryRows);
  return {all.writeRows(b, loc, "key", operands[1], at),
          all.writeRows(b, loc, "value", operands[2], at), at};
}

LogicalResult fillRelative(OpBuilder &b, Operation *op,
                           const AttentionCaches &caches, std::string &whyNot) {
  auto attention = cast<RelativeAttentionOp>(op);
  if (attention.getQueryOffset()) {
    whyNot = kQueryOffsetForDecode;
    return failure();
  }
  if (attention.getLogsumexp() && !attention.getLogsumexp().use_empty()) {
    whyNot = "its logsumexp is read; a decode step computes none";
    return failure();
  }
  return fillKeysAndValues(b, op->getLoc(), attention.getQuery(),
                           attention.getKey(), attention.getValue(), caches);
}

FailureOr<Value> stepRelative(OpBuilder &b, Operation *op, ValueRange operands,
                              Value position, const AttentionCaches &caches,
                              std::string &) {
  auto attention = cast<RelativeAttentionOp>(op);
  Location loc = op->getLoc();
  StepCaches rows =
      writeStepRows(b, loc, attention.getQuery(), attention.getKey(), operands,
                    position, caches);
  TensorBuilder tb(b, loc);
  RelativeAttentionPlan plan = planRelativeAttention(
      tb,
      {operands[0], rows.key, rows.value, operands[3], operands[4], operands[5],
       /*queryOffset=*/Value(), attention.getScale(), attention.getClampLen(),
       attention.getSameLength()},
      AttentionTiling(), rows.position);
  FlashAttention flash = plan.flash;
  flash.addToScores = plan.positionTerm(tb);
  return flash.build(b, loc);
}

LogicalResult fillAdaptiveSpan(OpBuilder &b, Operation *op,
                               const AttentionCaches &caches,
                               std::string &whyNot) {
  auto attention = cast<AdaptiveSpanAttentionOp>(op);
  if (attention.getQueryOffset()) {
    whyNot = kQueryOffsetForDecode;
    return failure();
  }
  if (!attention.getCausal()) {
    whyNot = kNotCausalForDecode;
    return failure();
  }
  if (attention.getLogNormalizer() &&
      !attention.getLogNormalizer().use_empty()) {
    whyNot = "its log normalizer is read; a decode step computes none";
    return failure();
  }
  return fillKeysAndValues(b, op->getLoc(), attention.getQuery(),
                           attention.getKey(), attention.getValue(), caches);
}

FailureOr<Value> stepAdaptiveSpan(OpBuilder &b, Operation *op,
                                  ValueRange operands, Value position,
                                  const AttentionCaches &caches,
                                  std::string &) {
  auto attention = cast<AdaptiveSpanAttentionOp>(op);
  Location loc = op->getLoc();
  StepCaches rows =
      writeStepRows(b, loc, attention.getQuery(), attention.getKey(), operands,
                    position, caches);
  auto [flash, mask] = planAdaptiveSpanAttention(
      {operands[0], rows.key, rows.value, operands[3],
       /*queryOffset=*/Value(), int64_t(attention.getMaxSpan()),
       int64_t(attention.getRamp()),
       /*causal=*/true, attention.getScale()},
      AttentionTiling(), rows.position);
  return flash.build(b, loc);
}

} // namespace

std::optional<CachedAttention> lcc::lookupMemoryAttentionStep(Operation *op) {
  if (isa<RelativeAttentionOp>(op))
    return CachedAttention{fillRelative, stepRelative};
  if (isa<AdaptiveSpanAttentionOp>(op))
    return CachedAttention{fillAdaptiveSpan, stepAdaptiveSpan};
  return std::nullopt;
}
