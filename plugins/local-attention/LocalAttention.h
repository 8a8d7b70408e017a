//===- LocalAttention.h - the "local" attention form ------------*- C++ -*-===//

#ifndef LOCAL_ATTENTION_LOCALATTENTION_H
#define LOCAL_ATTENTION_LOCALATTENTION_H

#include "passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"

#include <string>

namespace local {

/// local.attention and local.attention_backward in lcc's flash form
/// (LowerLocalAttention.cpp).
void populateLocalAttentionLoweringPatterns(mlir::RewritePatternSet &patterns,
                                            lcc::AttentionTiling tiling);

/// Attaches lcc's AttentionFormInterface and DifferentiableOpInterface to
/// local.attention (LocalAttentionInterfaces.cpp).
void registerLocalAttentionInterfaces(mlir::DialectRegistry &registry);

/// Registers the pass and the "local" form (LocalAttentionForm.cpp); false,
/// with the reason, if lcc refuses the form.
bool registerLocalAttention(std::string &error);

} // namespace local

#endif // LOCAL_ATTENTION_LOCALATTENTION_H
