//===- StagePipelines.h - lcc's module stages as pass pipelines -*- C++ -*-===//
//
// The passes lcc runs on the whole module, stage by stage, built in one
// place: lcc's driver (Pipeline.cpp) runs them, lcc-opt registers them by
// name with the same options, and `lcc --print-pipeline` prints them.
//
//   lcc-attention-forms       --attention and its flags (none for keep)
//   lcc-lower-to-linalg       attn ops to linalg on tensors, fused
//   lcc-lower-to-dispatches   workgroup tiling, dispatch functions
//   lcc-lower-to-kernels      one target's kernels: target=cpu (to the LLVM
//                             dialect) or target=cuda (to NVVM)
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_STAGEPIPELINES_H
#define LCC_COMPILER_STAGEPIPELINES_H

#include "passes/AttentionForms.h"

#include "mlir/Pass/PassManager.h"

#include <string>

namespace lcc {

/// The attention-forms stage: nothing for "keep", attn-select-form for
/// "auto", the registered form's rewrite otherwise; failure (and `errors`
/// says why) for an unknown form or options the form rejects.
mlir::LogicalResult
buildAttentionFormsPipeline(mlir::OpPassManager &pm,
                            const AttentionFormOptions &options,
                            llvm::raw_ostream &errors);
/// The flash attention's tiles for a CPU without AVX-512 alone (lcc's and
/// lcc-lower-to-linalg's default there): 96 is a multiple of AVX2's 6 x 16
/// register blocks (VectorizeContractions), so both contractions divide into
/// whole blocks.
constexpr AttentionTiling kCpuAttentionTiling = {96, 96};
/// lcc's default on a CPU with AVX-512: 128 is a multiple of the score
/// block's 8 x 32 register blocks (pᵀ·v's 6 x 64 leave a last block of 2
/// rows) and divides the power-of-two sequences without padding; measured
/// 10-20% faster than 96 x 96 at 4K there (docs/benchmarks.md).
constexpr AttentionTiling kAvx512AttentionTiling = {128, 128};
/// The tiles for LLVM CPU `cpu` alone ("native": this machine):
/// kAvx512AttentionTiling when it has AVX-512, else kCpuAttentionTiling.
AttentionTiling cpuAttentionTiling(llvm::StringRef cpu);

/// The linalg stage, its flash attention in tiles of `tiling`.
void buildLowerToLinalgPipeline(mlir::OpPassManager &pm,
                                AttentionTiling tiling = {});
void buildLowerToDispatchesPipeline(mlir::OpPassManager &pm);
/// Every kernel stage of `target` ("cpu" or "cuda") in one pipeline, from
/// the dispatches stage's module (host functions are dropped first).
/// `cpu` names the LLVM CPU whose vector registers size the CPU kernels'
/// register blocks ("native": this machine).
mlir::LogicalResult buildLowerToKernelsPipeline(mlir::OpPassManager &pm,
                                                llvm::StringRef target,
                                                int64_t cudaBlockSize,
                                                llvm::raw_ostream &errors,
                                                llvm::StringRef cpu = "native",
                                                llvm::StringRef cudaArch = "sm_90",
                                                bool cudaTF32 = false);

/// Registers the four pipelines above by name (for lcc-opt).
void registerLccPipelines();

/// The textual pipeline of every module stage for `options`, the flash
/// attention in tiles of `tiling` and the CPU kernels for `cpu`, one
/// "stage: pipeline" line each (`lcc --print-pipeline`), or failure as
/// buildAttentionFormsPipeline.
mlir::FailureOr<std::string>
printStagePipelines(const AttentionFormOptions &options, AttentionTiling tiling,
                    llvm::StringRef cpu, llvm::StringRef cudaArch,
                    bool cudaTF32, llvm::raw_ostream &errors);

} // namespace lcc

#endif // LCC_COMPILER_STAGEPIPELINES_H
