//===- DenseToLocal.h - attn.attention to local.attention -------*- C++ -*-===//
//
// The rewrite of the "local" form: a pass whose options are the form's
// options, so `lcc --attention=local --attention-options="window=256"` and
// `lcc-opt --local-dense-to-local="window=256"` mean the same.
//
//===----------------------------------------------------------------------===//

#ifndef LOCAL_ATTENTION_DENSETOLOCAL_H
#define LOCAL_ATTENTION_DENSETOLOCAL_H

#include "LocalDialect.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace local {

struct DenseToLocalPass
    : mlir::PassWrapper<DenseToLocalPass, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DenseToLocalPass)

  DenseToLocalPass() = default;
  DenseToLocalPass(const DenseToLocalPass &other) : PassWrapper(other) {
    copyOptionValuesFrom(&other);
  }

  llvm::StringRef getArgument() const override {
    return "local-dense-to-local";
  }
  llvm::StringRef getDescription() const override {
    return "rewrite dense attention into windowed local attention";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<LocalDialect>();
  }
  void runOnOperation() override;

  Option<int64_t> window{*this, "window",
                         llvm::cl::desc("Positions per window"),
                         llvm::cl::init(128)};
  Option<int64_t> lookBackward{
      *this, "look-backward",
      llvm::cl::desc("Windows before its own a query sees"), llvm::cl::init(1)};
  Option<int64_t> lookForward{
      *this, "look-forward",
      llvm::cl::desc("Windows after its own a query sees (none if causal)"),
      llvm::cl::init(0)};
};

/// Why `op` cannot become local attention, or "" if it can.
std::string whyNotLocal(lcc::attn::AttentionOp op);

/// Replaces `op` (for which whyNotLocal is "") by local.attention.
AttentionOp rewriteToLocal(mlir::RewriterBase &rewriter,
                           lcc::attn::AttentionOp op,
                           const DenseToLocalPass &options);

} // namespace local

#endif // LOCAL_ATTENTION_DENSETOLOCAL_H
