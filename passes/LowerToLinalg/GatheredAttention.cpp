//===- GatheredAttention.cpp - one query over keys gathered by position ---===//

#include "passes/LowerToLinalg/GatheredAttention.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::lowering;

GatheredAttention lcc::lowering::attendGathered(TensorBuilder &tb, Value query,
                                                Value tokens, Value keys,
                                                Value values, double scale,
                                                Value self) {
  using utils::IteratorType;
  OpBuilder &b = tb.builder();
  RankedTensorType tokenType = tensorType(tokens);
  int64_t rows = tokenType.getDimSize(0), groups = tokenType.getDimSize(1),
          width = tokenType.getDimSize(2);
  int64_t valueDim = tensorType(values).getDimSize(2);
  Type f32 = b.getF32Type();
  // Row `token` of `source` at the loop's row, column `column` (an empty
  // place reads row 0, whose score is then replaced).
  auto cached = [&](OpBuilder &nb, Location l, Value source, Value token,
                    Value column) -> Value {
    Value at = castToIndex(
        nb, l, arith::MaxSIOp::create(nb, l, token, i32Constant(nb, l, 0)));
    return tensor::ExtractOp::create(
        nb, l, source,
        ValueRange{linalg::IndexOp::create(nb, l, 0), at, column});
  };
  // Loops (row, group, i, e): q · k of each token, the dimension innermost.
  Value dots = tb.generic(
      tb.filled({rows, groups, width}, f32, 0.0), {query, tokens},
      {tb.map(4, {0, 3}), tb.map(4, {0, 1, 2}), tb.map(4, {0, 1, 2})},
      {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
       IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value k = cached(nb, l, keys, a[1], linalg::IndexOp::create(nb, l, 3));
        return add(nb, l, a[2], mul(nb, l, a[0], k));
      });
  SmallVector<Value> inputs = {dots, tokens};
  SmallVector<AffineMap> maps = {tb.identityMap(3), tb.identityMap(3)};
  if (self) {
    inputs.push_back(self);
    maps.push_back(AffineMap::get(3, 0, b.getContext()));
  }
  Value scores = tb.map(
      {rows, groups, width}, f32, inputs, maps,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value score = mul(nb, l, a[0], floatConstant(nb, l, f32, scale));
        if (self)
          score = arith::SelectOp::create(
              nb, l,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, a[1],
                                    a[2]),
              floatConstant(nb, l, f32, kSelfAttentionScore), score);
        Value empty = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                            a[1], i32Constant(nb, l, 0));
        return arith::SelectOp::create(
            nb, l, empty, floatConstant(nb, l, f32, kNegativeInfinity), score);
      });
  RowExponentials softmax = rowExponentials(tb, scores);
  Value weighted = tb.generic(
      tb.filled({rows, groups, valueDim}, f32, 0.0), {softmax.exps, tokens},
      {tb.map(4, {0, 1, 2}), tb.map(4, {0, 1, 2}), tb.map(4, {0, 1, 3})},
      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction,
       IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value v =
            cached(nb, l, values, a[1], linalg::IndexOp::create(nb, l, 3));
        return add(nb, l, a[2], mul(nb, l, a[0], v));
      });
  GatheredAttention result;
  result.outputs =
      tb.map({rows, groups, valueDim}, f32, {weighted, softmax.sums},
             {tb.identityMap(3), tb.dropLastMap(3)},
             [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
               Value zero = floatConstant(nb, l, f32, 0.0);
               Value none = arith::CmpFOp::create(
                   nb, l, arith::CmpFPredicate::OEQ, a[1], zero);
               return arith::SelectOp::create(
                   nb, l, none, zero, arith::DivFOp::create(nb, l, a[0], a[1]));
             });
  // log(sum) + max: -inf where nothing is seen.
  result.logSumExp = tb.mapSameShape(
      {softmax.maxima, softmax.sums},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return add(nb, l, a[0], math::LogOp::create(nb, l, a[1]));
      });
  return result;
}

Value lcc::lowering::attendGatheredByHead(TensorBuilder &tb, Value query,
                                          Value tokens, Value keys,
                                          Value values, double scale) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  RankedTensorType queryType = tensorType(query),
                   valueType = tensorType(values);
  Value rows = tensor::CollapseShapeOp::create(
      b, loc, query, ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}});
  GatheredAttention attended =
      attendGathered(tb, rows, tokens, attentionRows(b, loc, keys),
                     attentionRows(b, loc, values), scale);
  return fromAttentionRows(
      b, loc, attended.outputs,
      RankedTensorType::get({queryType.getDimSize(0), queryType.getDimSize(1),
                             1, valueType.getDimSize(3)},
                            valueType.getElementType()));
}
