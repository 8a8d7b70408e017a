//===- LocalDialect.cpp - the local dialect and its verifier --------------===//

#include "LocalDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace local;

#include "LocalOpsDialect.cpp.inc"

void LocalDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "LocalOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "LocalOps.cpp.inc"

namespace {

/// The checks local.attention and its backward share: shapes and windows.
LogicalResult verifyLocalAttention(Operation *op, Value query, Value key,
                                   Value value, Value result, int64_t window,
                                   int64_t lookBackward, int64_t lookForward) {
  auto q = cast<RankedTensorType>(query.getType());
  auto k = cast<RankedTensorType>(key.getType());
  auto v = cast<RankedTensorType>(value.getType());
  auto r = cast<RankedTensorType>(result.getType());
  for (RankedTensorType type : {q, k, v, r})
    if (type.getRank() != 4 || !type.getElementType().isF32())
      return op->emitOpError(
          "expected [batch, heads, seq, dim] tensors of f32");
  if (q.getShape() != k.getShape())
    return op->emitOpError("expected query and key of one shape, got ")
           << q << " and " << k;
  if (v.getShape().drop_back() != k.getShape().drop_back())
    return op->emitOpError(
               "expected value [batch, heads, seq, v_dim] beside key ")
           << k << ", got " << v;
  if (r.getShape().drop_back() != q.getShape().drop_back() ||
      r.getDimSize(3) != v.getDimSize(3))
    return op->emitOpError("expected result [batch, heads, seq, v_dim], got ")
           << r;
  if (window < 1)
    return op->emitOpError("expected window >= 1, got ") << window;
  if (lookBackward < 0 || lookForward < 0)
    return op->emitOpError("expected look_backward and look_forward >= 0");
  return success();
}

/// `logsumexp` is [batch, heads, seq] f32 beside `query`.
LogicalResult verifyLogSumExp(Operation *op, Value query, Value logsumexp) {
  auto q = cast<RankedTensorType>(query.getType());
  auto l = cast<RankedTensorType>(logsumexp.getType());
  if (l.getShape() != q.getShape().drop_back() || !l.getElementType().isF32())
    return op->emitOpError(
               "expected logsumexp [batch, heads, seq] of f32, got ")
           << l;
  return success();
}

} // namespace

LogicalResult AttentionOp::verify() {
  if (failed(verifyLocalAttention(*this, getQuery(), getKey(), getValue(),
                                  getResult(), getWindow(), getLookBackward(),
                                  getLookForward())))
    return failure();
  if (Value logsumexp = getLogsumexp())
    return verifyLogSumExp(*this, getQuery(), logsumexp);
  return success();
}

LogicalResult AttentionBackwardOp::verify() {
  if (failed(verifyLocalAttention(*this, getQuery(), getKey(), getValue(),
                                  getResult(), getWindow(), getLookBackward(),
                                  getLookForward())) ||
      failed(verifyLogSumExp(*this, getQuery(), getLogsumexp())))
    return failure();
  if (getResultGrad().getType() != getResult().getType())
    return emitOpError("expected result_grad of the result's type ")
           << getResult().getType() << ", got " << getResultGrad().getType();
  if (getQueryGrad().getType() != getQuery().getType() ||
      getKeyGrad().getType() != getKey().getType() ||
      getValueGrad().getType() != getValue().getType())
    return emitOpError("expected the gradients of the query, key and value "
                       "types");
  return success();
}
