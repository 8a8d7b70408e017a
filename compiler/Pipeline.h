//===- Pipeline.h - attn model to artifact ----------------------*- C++ -*-===//
//
// The stages of lcc, in order: attn (verified input) -> linalg (tensors,
// elementwise chains fused) -> dispatches (host program + dispatch
// functions) -> for each target, the dispatches' code: CPU (bufferized
// kernels -> LLVM dialect -> LLVM IR -> shared object) and CUDA (bufferized
// -> GPU threads -> NVVM -> PTX -> cubin) -> artifact. `lcc --emit` stops
// after one of them; `--dump-ir` writes every one.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_PIPELINE_H
#define LCC_COMPILER_PIPELINE_H

#include "compiler/CpuTarget.h"
#include "compiler/CudaTarget.h"
#include "compiler/KernelCache.h"
#include "compiler/StagePipelines.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace lcc {

/// What lcc writes: a stage's IR, the PTX, the CUDA kernel report (a table
/// or JSON, KernelReport.h) or the artifact.
enum class Stage {
  Attn,
  Linalg,
  Llvm,
  Ptx,
  KernelReport,
  KernelReportJson,
  /// The attn stage, whose attention ops the driver draws (AttentionMap.h).
  AttentionMap,
  Artifact
};

struct CompileOptions : AttentionFormOptions {
  Stage stopAfter = Stage::Artifact;
  /// Whether the module is checked as a model first (ModelChecks.h); off
  /// only for one lcc built from a checked model (the attention map's
  /// probes, which hold lowering steps' ops).
  bool checkModel = true;
  /// The devices to build code for; the artifact holds an executable for
  /// each (the CPU's shared object; PTX and, with ptxas, a cubin).
  bool targetCpu = true, targetCuda = false;
  /// LLVM CPU of the host code ("native": this machine).
  std::string cpu = "native";
  /// The CUDA architecture, ptxas location and block size.
  std::string cudaArch = "sm_90", cudaPath;
  int64_t cudaBlockSize = knobs::kCudaBlockSize.defaultValue;
  /// lcc --cuda-tf32: f32 products on tensor cores in tf32 (sm_80 and up).
  bool cudaTF32 = false;
  /// lcc --query-tile/--key-tile: the flash attention's tiles (0: chosen
  /// for the targets, see attentionTilingFor).
  int64_t queryTile = knobs::kQueryTile.defaultValue;
  int64_t keyTile = knobs::kKeyTile.defaultValue;
  /// lcc --context-parallel=P: attn-context-parallel splits each sequence
  /// over P ranks after the attention forms (1: one process, nothing
  /// split).
  int64_t contextParallel = 1;
  /// lcc --context-parallel-over-heads: every attention split over the
  /// heads, dense attention too (not as ring attention).
  bool contextParallelOverHeads = false;
  /// lcc --reversible and --ff-chunks=N (0: not given): attn-insert-reversible
  /// and attn-chunk-ff run after the attention forms.
  bool reversible = false;
  int64_t ffChunks = knobs::kFeedForwardChunks.defaultValue;
  /// lcc --attention-chunks=N (0: not given), also by attn-chunk-ff.
  int64_t attentionChunks = knobs::kAttentionChunks.defaultValue;
  /// With a value, lcc --train: attn-generate-train-step runs after the
  /// attention forms and the two above.
  std::optional<GenerateTrainStepOptions> train;
  /// With a value, lcc --decode: attn-generate-decode-step runs after the
  /// train step.
  std::optional<GenerateDecodeStepOptions> decode;
  /// lcc --attention-precision: "bf16" or "f16" runs
  /// attn-half-precision-attention after the train and decode steps;
  /// empty: f32.
  std::string attentionPrecision;
  /// Receives every stage's text when set.
  StageDumper dump;
  /// lcc --cache-dir / --no-cache: where compiled kernels are kept
  /// between compiles (compiler/KernelCache.h).
  KernelCacheOptions kernelCache;
  /// Told when each part of the compilation is done and how long it took
  /// (lcc --verbose, or stderr a terminal).
  std::function<void(llvm::StringRef part, double seconds)> progress;
};

/// The flash attention tiles `options` compile with: as given, else for the
/// CPU alone kAvx512AttentionTiling when its CPU has AVX-512 and
/// kCpuAttentionTiling otherwise, and 64 x 64 when CUDA is a target (the
/// GPU kernels' shared-memory tiles).
AttentionTiling attentionTilingFor(const CompileOptions &options);

/// Compiles `module` in place up to `options.stopAfter` and returns that
/// stage's output: IR text for attn/linalg/llvm, PTX for ptx, the .lcm bytes
/// for artifact. Errors are emitted as diagnostics; a CUDA target without
/// ptxas gets a warning (the artifact then holds PTX only).
mlir::FailureOr<std::string> compile(mlir::ModuleOp module,
                                     const CompileOptions &options);

} // namespace lcc

#endif // LCC_COMPILER_PIPELINE_H
