//===- SparseDecodeStep.cpp - sparse attention's cached decode step -------===//
//
// For `lcc --decode` (docs/generation.md): causal attn.sparse_attention
// keeps dense attention's key and value caches (filled as the masked
// attention it equals fills them, forms/dense/DenseDecodeStep.cpp; prefill
// keeps the sparse op, which skips the blocks its pattern hides). A step
// reads only the keys its pattern shows the query: its band (strided) or
// its block (fixed) and one key per earlier stride (strided) or each
// earlier block's summary columns (fixed), gathered by position.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/GatheredAttention.h"
#include "passes/LowerToLinalg/RegionArithmetic.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/forms/dense/DenseForm.h"
#include "passes/forms/sparse/SparseForm.h"

#include "dialects/Attn/IR/AttnOps.h"
#include "dialects/Attn/IR/SparsePatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// `build` on the masked attention `op` equals, made before `op` and
/// erased after: its mask region the pattern, its arithmetic defined as
/// the lowerings define it (RegionArithmetic.h).
template <typename Build> auto withMaskedAttention(Operation *op, Build build) {
  OpBuilder before(op);
  AttentionOp masked =
      createMaskedAttention(before, cast<SparseAttentionOp>(op));
  for (Region &region : masked->getRegions())
    defineRegionArithmetic(region);
  auto result = build(masked.getOperation());
  masked.erase();
  return result;
}

} // namespace

LogicalResult lcc::fillSparseDecodeCaches(OpBuilder &b, Operation *op,
                                          const AttentionCaches &caches,
                                          std::string &whyNot) {
  return withMaskedAttention(op, [&](Operation *masked) {
    return fillDenseDecodeCaches(b, masked, caches, whyNot);
  });
}

FailureOr<Value> lcc::buildSparseDecodeStep(OpBuilder &b, Operation *op,
                                            ValueRange operands, Value position,
                                            const AttentionCaches &caches,
                                            std::string &) {
  auto sparse = cast<SparseAttentionOp>(op);
  Location loc = op->getLoc();
  TensorBuilder tb(b, loc);
  Value query = operands[0];
  RankedTensorType queryType = tensorType(query);
  int64_t batch = queryType.getDimSize(0), heads = queryType.getDimSize(1);
  Value keys = caches.writeRows(b, loc, "key", operands[1], position);
  Value values = caches.writeRows(b, loc, "value", operands[2], position);
  int64_t stride = sparse.getStride();
  int64_t blocks = llvm::divideCeil(caches.positions(), stride);
  bool fixed = sparse.getPattern() == SparsePattern::Fixed;
  int64_t summary = fixed ? sparse.getSummary().value_or(0) : 1;
  // The keys the pattern shows query t: its band of `stride` keys (strided;
  // fixed: its own block up to t), then one key per earlier stride
  // (strided: t - k stride; fixed: each earlier block's summary columns).
  int64_t places = stride + blocks * summary;
  Value tokens = tb.map(
      {batch * heads, 1, places}, b.getI32Type(), {position},
      {AffineMap::get(3, 0, b.getContext())},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        auto index = [&](int64_t v) { return indexConstant(nb, l, v); };
        Value t = castToIndex(nb, l, a[0]);
        Value i = linalg::IndexOp::create(nb, l, 2);
        Value inBand = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                             i, index(stride));
        Value rest = arith::SubIOp::create(nb, l, i, index(stride));
        Value band, column;
        if (fixed) {
          Value block = arith::MulIOp::create(
              nb, l, arith::DivUIOp::create(nb, l, t, index(stride)),
              index(stride));
          band = arith::AddIOp::create(nb, l, block, i);
          Value earlier = arith::DivUIOp::create(nb, l, rest, index(summary));
          column = arith::AddIOp::create(
              nb, l, arith::MulIOp::create(nb, l, earlier, index(stride)),
              arith::AddIOp::create(
                  nb, l, index(stride - summary),
                  arith::RemUIOp::create(nb, l, rest, index(summary))));
          // Summary columns of the earlier blocks only: its own are in
          // its band.
          column = arith::SelectOp::create(
              nb, l,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, column,
                                    block),
              column, index(-1));
        } else {
          band = arith::SubIOp::create(nb, l, t, i);
          column = arith::SubIOp::create(
              nb, l, t,
              arith::MulIOp::create(
                  nb, l, arith::AddIOp::create(nb, l, rest, index(1)),
                  index(stride)));
        }
        Value key = arith::SelectOp::create(nb, l, inBand, band, column);
        Value seen = arith::AndIOp::create(
            nb, l,
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, key,
                                  index(0)),
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle, key, t));
        return arith::SelectOp::create(nb, l, seen, castToI32(nb, l, key),
                                       i32Constant(nb, l, -1));
      });
  return attendGatheredByHead(
      tb, query, tokens, keys, values,
      attentionScale(sparse.getScale(), sparse.getQuery()));
}
