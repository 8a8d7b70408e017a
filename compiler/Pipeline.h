//===- Pipeline.h - attn model to artifact ----------------------*- C++ -*-===//
//
// The stages of lcc, in order: attn (verified input) -> linalg (tensors,
// elementwise chains fused) -> dispatches (host program + dispatch
// functions) -> bufferized kernels -> LLVM dialect -> LLVM IR -> shared
// object -> artifact. `lcc --emit` stops after one of them; `--dump-ir`
// writes every one.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_PIPELINE_H
#define LCC_COMPILER_PIPELINE_H

#include "compiler/CpuTarget.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace lcc {

enum class Stage { Attn, Linalg, Llvm, Artifact };

/// Which form attention ops take (`lcc --attention`).
enum class AttentionForm { Keep, Sparse, LSH, Routed, Auto };

struct CompileOptions {
  Stage stopAfter = Stage::Artifact;
  AttentionForm attention = AttentionForm::Keep;
  /// The sparse attention to build for AttentionForm::Sparse.
  SparseAttentionOptions sparse = {attn::SparsePattern::Strided, 64, 0, 0};
  /// The LSH attention to build for AttentionForm::LSH.
  int64_t lshHashes = 4, lshBucketSize = 64, seed = 0;
  /// The routed attention to build for AttentionForm::Routed (0: default).
  int64_t routedClusters = 0, routedWindow = 0;
  /// Bytes an attention may use under AttentionForm::Auto (0: no limit).
  int64_t memoryBudget = 0;
  /// LLVM CPU of the host code ("native": this machine).
  std::string cpu = "native";
  /// Receives every stage's text when set.
  StageDumper dump;
};

/// Compiles `module` in place up to `options.stopAfter` and returns that
/// stage's output: IR text for attn/linalg/llvm, the .lcm bytes for
/// artifact. Errors are emitted as diagnostics.
mlir::FailureOr<std::string> compile(mlir::ModuleOp module,
                                     const CompileOptions &options);

} // namespace lcc

#endif // LCC_COMPILER_PIPELINE_H
