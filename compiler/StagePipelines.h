//===- StagePipelines.h - lcc's module stages as pass pipelines -*- C++ -*-===//
//
// The passes lcc runs on the whole module, stage by stage, built in one
// place: lcc's driver (Pipeline.cpp) runs them, lcc-opt registers them by
// name with the same options, and `lcc --print-pipeline` prints them.
//
//   lcc-attention-forms       --attention and its flags (none for keep)
//   lcc-lower-to-linalg       attn ops to linalg on tensors, fused
//   lcc-lower-to-dispatches   workgroup tiling, dispatch functions
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_STAGEPIPELINES_H
#define LCC_COMPILER_STAGEPIPELINES_H

#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <string>

namespace lcc {

/// Which form attention ops take (`lcc --attention`).
enum class AttentionForm { Keep, Sparse, LSH, Routed, Auto };

/// What the attention-forms stage builds (lcc's --attention flags).
struct AttentionFormOptions {
  AttentionForm attention = AttentionForm::Keep;
  /// The sparse attention to build for AttentionForm::Sparse.
  SparseAttentionOptions sparse = {attn::SparsePattern::Strided, 64, 0, 0};
  /// The LSH attention to build for AttentionForm::LSH (and Auto).
  int64_t lshHashes = 4, lshBucketSize = 64, seed = 0;
  /// The routed attention to build for AttentionForm::Routed (0: default).
  int64_t routedClusters = 0, routedWindow = 0;
  /// Bytes an attention may use under AttentionForm::Auto (0: no limit).
  int64_t memoryBudget = 0;
};

void buildAttentionFormsPipeline(mlir::OpPassManager &pm,
                                 const AttentionFormOptions &options);
void buildLowerToLinalgPipeline(mlir::OpPassManager &pm);
void buildLowerToDispatchesPipeline(mlir::OpPassManager &pm);

/// Registers the three pipelines above by name (for lcc-opt).
void registerLccPipelines();

/// The textual pipeline of every module stage for `options`, one
/// "stage: pipeline" line each (`lcc --print-pipeline`).
std::string printStagePipelines(const AttentionFormOptions &options);

} // namespace lcc

#endif // LCC_COMPILER_STAGEPIPELINES_H
