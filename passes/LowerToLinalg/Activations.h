//===- Activations.h - feed-forward activations and derivatives -*- C++ -*-===//
//
// The scalar math of each attn.feed_forward activation, for the forward
// lowering and for the backward's recomputation of it.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_ACTIVATIONS_H
#define LCC_PASSES_LOWERTOLINALG_ACTIVATIONS_H

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"

namespace lcc::lowering {

/// act(x).
mlir::Value applyActivation(mlir::OpBuilder &b, mlir::Location loc,
                            attn::Activation kind, mlir::Value x);

/// act'(x): relu's is 0 at 0 (as torch's), gelu's is Φ(x) + x φ(x).
mlir::Value activationDerivative(mlir::OpBuilder &b, mlir::Location loc,
                                 attn::Activation kind, mlir::Value x);

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_ACTIVATIONS_H
