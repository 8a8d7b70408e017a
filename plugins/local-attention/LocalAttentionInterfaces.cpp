//===- LocalAttentionInterfaces.cpp - what lcc's passes ask of the form ---===//
//
// local.attention answers lcc's interfaces as external models attached to
// the plugin's own op, so lcc's passes treat it as any built-in form:
// AttentionFormInterface makes it attention for --reversible, gives
// --attention=dense the masked dense attention it equals and sends it
// around the ring of ranks as that attention (--context-parallel);
// DifferentiableOpInterface expands it, for training, to the op that also
// returns its logsumexp, and builds local.attention_backward, whose
// lowering (LowerLocalAttention.cpp) is registered with the forward's.
//
//===----------------------------------------------------------------------===//

#include "LocalAttention.h"
#include "LocalDialect.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace local;

namespace {

using P = arith::CmpIPredicate;

/// Fills `mask` with floor(j / w) - floor(i / w) in [-back, ahead] over
/// (batch, head, i, j).
void buildWindowMask(OpBuilder &builder, Location loc, Region &mask, int64_t w,
                     int64_t back, int64_t ahead) {
  OpBuilder::InsertionGuard guard(builder);
  Type index = builder.getIndexType();
  Block *body = builder.createBlock(
      &mask, mask.end(), {index, index, index, index}, {loc, loc, loc, loc});
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, v);
  };
  Value width = constant(w);
  Value d = arith::SubIOp::create(
      builder, loc,
      arith::DivUIOp::create(builder, loc, body->getArgument(3), width),
      arith::DivUIOp::create(builder, loc, body->getArgument(2), width));
  Value visible = arith::AndIOp::create(
      builder, loc,
      arith::CmpIOp::create(builder, loc, P::sge, d, constant(-back)),
      arith::CmpIOp::create(builder, loc, P::sle, d, constant(ahead)));
  lcc::attn::YieldOp::create(builder, loc, visible);
}

struct LocalAttentionForm
    : lcc::attn::AttentionFormInterface::ExternalModel<LocalAttentionForm,
                                                       AttentionOp> {
  Value buildDenseAttention(Operation *op, OpBuilder &b,
                            std::string &description) const {
    auto local = cast<AttentionOp>(op);
    description = "dense attention with its windows as mask region (the "
                  "same result)";
    auto dense = lcc::attn::AttentionOp::create(
        b, local.getLoc(), local.getResult().getType(), local.getQuery(),
        local.getKey(), local.getValue(), mlir::ValueRange(), local.getCausal(),
        local.getScaleAttr(), /*shared_qk=*/false, /*modifiersCount=*/2);
    int64_t ahead = local.getCausal() ? 0 : local.getLookForward();
    buildWindowMask(b, local.getLoc(), dense.getModifiers()[0],
                    local.getWindow(), local.getLookBackward(), ahead);
    return dense.getResult();
  }

  // Around the ring as that masked attention: each rank's block table skips
  // the key tiles outside its windows, as the plugin's own kernels do.
  lcc::attn::SequenceSplit getSequenceSplit(Operation *op) const {
    auto local = cast<AttentionOp>(op);
    bool f32 = cast<RankedTensorType>(local.getQuery().getType())
                   .getElementType()
                   .isF32();
    return f32 ? lcc::attn::SequenceSplit::KeysAroundRing
               : lcc::attn::SequenceSplit::HeadsOverRanks;
  }
};

struct LocalAttentionGradient
    : lcc::attn::DifferentiableOpInterface::ExternalModel<
          LocalAttentionGradient, AttentionOp> {
  SmallVector<Value> expandForDifferentiation(Operation *op,
                                              OpBuilder &b) const {
    auto local = cast<AttentionOp>(op);
    if (local.getLogsumexp())
      return {};
    return lcc::attn::withRowStatistics(b, op, local.getQuery());
  }

  LogicalResult
  buildVectorJacobianProduct(Operation *op, OpBuilder &b,
                             ArrayRef<Value> resultGradients,
                             SmallVectorImpl<Value> &operandGradients) const {
    auto local = cast<AttentionOp>(op);
    if (!resultGradients[0])
      return success(); // Only the logsumexp is read: nothing flows back.
    auto backward = AttentionBackwardOp::create(
        b, local.getLoc(), local.getQuery().getType(), local.getKey().getType(),
        local.getValue().getType(), local.getQuery(), local.getKey(),
        local.getValue(), local.getResult(), local.getLogsumexp(),
        resultGradients[0], local.getWindowAttr(), local.getLookBackwardAttr(),
        local.getLookForwardAttr(), local.getCausalAttr(),
        local.getScaleAttr());
    llvm::copy(backward.getResults(), operandGradients.begin());
    return success();
  }
};

} // namespace

void local::registerLocalAttentionInterfaces(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, LocalDialect *) {
    AttentionOp::attachInterface<LocalAttentionForm, LocalAttentionGradient>(
        *context);
  });
}
