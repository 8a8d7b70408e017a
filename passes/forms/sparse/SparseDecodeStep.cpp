//===- SparseDecodeStep.cpp - sparse attention's cached decode step -------===//
//
// For `lcc --decode` (docs/generation.md): causal attn.sparse_attention
// decodes as the masked dense attention it equals (its pattern the mask
// region, evaluated at the step's position): the same key and value
// caches and step as dense attention (forms/dense/DenseDecodeStep.cpp).
// Prefill keeps the sparse op, which skips the blocks its pattern hides.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/RegionArithmetic.h"
#include "passes/forms/dense/DenseForm.h"
#include "passes/forms/sparse/SparseForm.h"

#include "dialects/Attn/IR/AttnOps.h"
#include "dialects/Attn/IR/SparsePatterns.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

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
                                            std::string &whyNot) {
  return withMaskedAttention(op, [&](Operation *masked) {
    return buildDenseDecodeStep(b, masked, operands, position, caches, whyNot);
  });
}
