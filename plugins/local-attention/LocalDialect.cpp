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

LogicalResult AttentionOp::verify() {
  auto q = cast<RankedTensorType>(getQuery().getType());
  auto k = cast<RankedTensorType>(getKey().getType());
  auto v = cast<RankedTensorType>(getValue().getType());
  auto r = cast<RankedTensorType>(getResult().getType());
  for (RankedTensorType type : {q, k, v, r})
    if (type.getRank() != 4 || !type.getElementType().isF32())
      return emitOpError("expected [batch, heads, seq, dim] tensors of f32");
  if (q.getShape() != k.getShape())
    return emitOpError("expected query and key of one shape, got ")
           << q << " and " << k;
  if (v.getShape().drop_back() != k.getShape().drop_back())
    return emitOpError("expected value [batch, heads, seq, v_dim] beside key ")
           << k << ", got " << v;
  if (r.getShape().drop_back() != q.getShape().drop_back() ||
      r.getDimSize(3) != v.getDimSize(3))
    return emitOpError("expected result [batch, heads, seq, v_dim], got ") << r;
  if (getWindow() < 1)
    return emitOpError("expected window >= 1, got ") << getWindow();
  if (getLookBackward() < 0 || getLookForward() < 0)
    return emitOpError("expected look_backward and look_forward >= 0");
  return success();
}
