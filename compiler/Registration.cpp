//===- Registration.cpp - dialects and passes lcc tools load --------------===//

#include "compiler/Registration.h"

#include "compiler/Passes.h"
#include "compiler/StagePipelines.h"
#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Attn/IR/AttnInterfaces.h"
#include "passes/AttentionForms.h"
#include "passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"

void lcc::registerLccDialects(mlir::DialectRegistry &registry) {
  registry.insert<attn::AttnDialect>();
  // Every upstream dialect, with the external interface models (bufferization,
  // tiling, value bounds) that live beside them: the pipeline lowers through
  // func, arith, math, tensor, linalg, scf, cf, affine, memref,
  // bufferization, vector, gpu, nvvm and llvm, and a partial list silently
  // drops interfaces those passes need.
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // The gradient rules of the upstream ops a model writes.
  attn::registerUpstreamGradientModels(registry);
  // And the dialects of every attention form, a loaded plugin's included.
  registerAttentionFormDialects(registry);
}

void lcc::registerLccPasses() {
  mlir::registerAllPasses();
  registerLCCPasses();
  registerLCCCompilerPasses();
  registerLccPipelines();
}
