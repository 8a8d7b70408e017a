//===- SparsePatterns.cpp - Sparse Transformer patterns as masks ----------===//

#include "dialects/Attn/IR/SparsePatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

using P = arith::CmpIPredicate;

/// The scalar arithmetic of a pattern, built at one insertion point.
struct MaskArithmetic {
  OpBuilder &b;
  Location loc;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value cmp(P p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivSIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemSIOp::create(b, loc, x, y); }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value either(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
};

/// |i - j| < l or (i - j) mod l == 0.
Value stridedPattern(MaskArithmetic &m, Value i, Value j, int64_t stride) {
  Value d = m.sub(i, j);
  Value local = m.both(m.cmp(P::slt, d, m.index(stride)),
                       m.cmp(P::sgt, d, m.index(-stride)));
  Value onStride = m.cmp(P::eq, m.rem(d, m.index(stride)), m.index(0));
  return m.either(local, onStride);
}

/// floor(i / l) == floor(j / l) or j mod l >= l - c.
Value fixedPattern(MaskArithmetic &m, Value i, Value j, int64_t stride,
                   int64_t summary) {
  Value l = m.index(stride);
  Value sameWindow = m.cmp(P::eq, m.div(i, l), m.div(j, l));
  Value isSummary = m.cmp(P::sge, m.rem(j, l), m.index(stride - summary));
  return m.either(sameWindow, isSummary);
}

/// Builds a mask region over (batch, head, i, j) whose visibility
/// `visible(m, i, j)` computes.
void buildMask(
    OpBuilder &builder, Location loc, Region &mask,
    llvm::function_ref<Value(MaskArithmetic &, Value, Value)> visible) {
  OpBuilder::InsertionGuard guard(builder);
  Type index = builder.getIndexType();
  Block *body = builder.createBlock(
      &mask, mask.end(), {index, index, index, index}, {loc, loc, loc, loc});
  MaskArithmetic m{builder, loc};
  YieldOp::create(builder, loc,
                  visible(m, body->getArgument(2), body->getArgument(3)));
}

} // namespace

void lcc::buildFixedWindowMask(OpBuilder &builder, Location loc, Region &mask,
                               int64_t stride) {
  buildMask(builder, loc, mask, [&](MaskArithmetic &m, Value i, Value j) {
    Value l = m.index(stride);
    return m.cmp(P::eq, m.div(i, l), m.div(j, l));
  });
}

void lcc::buildFixedSummaryMask(OpBuilder &builder, Location loc, Region &mask,
                                int64_t stride, int64_t summary, bool causal) {
  buildMask(builder, loc, mask, [&](MaskArithmetic &m, Value i, Value k) {
    Value c = m.index(summary), l = m.index(stride);
    Value window = m.div(k, c);
    Value j = arith::AddIOp::create(
        m.b, m.loc, arith::MulIOp::create(m.b, m.loc, window, l).getResult(),
        arith::AddIOp::create(m.b, m.loc, m.index(stride - summary),
                              m.rem(k, c)));
    Value visible = m.cmp(P::ne, m.div(i, l), window);
    if (causal)
      visible = m.both(visible, m.cmp(P::sle, j, i));
    return visible;
  });
}

void lcc::buildStridedBandMask(OpBuilder &builder, Location loc, Region &mask,
                               int64_t stride) {
  buildMask(builder, loc, mask, [&](MaskArithmetic &m, Value i, Value j) {
    Value d = m.sub(i, j);
    return m.both(m.cmp(P::slt, d, m.index(stride)),
                  m.cmp(P::sgt, d, m.index(-stride)));
  });
}

void lcc::buildStridedColumnMask(OpBuilder &builder, Location loc,
                                 Region &mask) {
  buildMask(builder, loc, mask, [&](MaskArithmetic &m, Value t, Value u) {
    return m.cmp(P::ne, t, u);
  });
}

void lcc::buildSparsePatternMask(OpBuilder &builder, Location loc, Region &mask,
                                 SparsePattern pattern, int64_t stride,
                                 int64_t summary) {
  buildMask(builder, loc, mask, [&](MaskArithmetic &m, Value i, Value j) {
    return pattern == SparsePattern::Fixed
               ? fixedPattern(m, i, j, stride, summary)
               : stridedPattern(m, i, j, stride);
  });
}

AttentionOp lcc::createMaskedAttention(OpBuilder &builder,
                                       SparseAttentionOp op) {
  auto attention =
      AttentionOp::create(builder, op.getLoc(), op.getResult().getType(),
                          op.getQuery(), op.getKey(), op.getValue(),
                          ValueRange(), op.getCausal(), op.getScaleAttr(),
                          /*shared_qk=*/false, /*modifiersCount=*/2);
  buildSparsePatternMask(builder, op.getLoc(), attention.getModifiers()[0],
                         op.getPattern(), op.getStride(),
                         op.getSummary().value_or(0));
  return attention;
}
