//===- StagePipelines.cpp - lcc's module stages as pass pipelines ---------===//

#include "compiler/StagePipelines.h"

#include "compiler/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace lcc;

void lcc::buildAttentionFormsPipeline(OpPassManager &pm,
                                      const AttentionFormOptions &options) {
  switch (options.attention) {
  case AttentionForm::Keep:
    return;
  case AttentionForm::Auto: {
    SelectFormOptions pass;
    pass.memoryBudget = options.memoryBudget;
    pass.nHashes = options.lshHashes;
    pass.bucketSize = options.lshBucketSize;
    pass.seed = options.seed;
    pm.addPass(createSelectForm(pass));
    return;
  }
  case AttentionForm::Routed: {
    DenseToRoutedOptions pass;
    pass.clusters = options.routedClusters;
    pass.window = options.routedWindow;
    pass.seed = options.seed;
    pm.addPass(createDenseToRouted(pass));
    return;
  }
  case AttentionForm::LSH: {
    DenseToLSHOptions pass;
    pass.nHashes = options.lshHashes;
    pass.bucketSize = options.lshBucketSize;
    pass.seed = options.seed;
    pm.addPass(createDenseToLSH(pass));
    return;
  }
  case AttentionForm::Sparse: {
    const SparseAttentionOptions &o = options.sparse;
    DenseToSparseOptions pass;
    pass.pattern = attn::stringifySparsePattern(o.pattern).str();
    pass.block = o.block;
    pass.stride = o.stride;
    pass.summary = o.summary;
    pm.addPass(createDenseToSparse(pass));
    return;
  }
  }
}

void lcc::buildLowerToLinalgPipeline(OpPassManager &pm) {
  pm.addPass(createLowerToLinalg());
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addPass(createFuseElementwise());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void lcc::buildLowerToDispatchesPipeline(OpPassManager &pm) {
  pm.addPass(createTileToWorkgroups());
  pm.addPass(createOutlineDispatches());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

namespace {

/// lcc's --attention flags as the options of lcc-attention-forms, with
/// lcc's names and defaults.
struct AttentionFormsPipelineOptions
    : PassPipelineOptions<AttentionFormsPipelineOptions> {
  Option<AttentionForm> attention{
      *this, "attention", llvm::cl::desc("The form attention ops take"),
      llvm::cl::init(AttentionForm::Keep),
      llvm::cl::values(
          clEnumValN(AttentionForm::Keep, "keep", "as written"),
          clEnumValN(AttentionForm::Sparse, "sparse", "Sparse Transformer"),
          clEnumValN(AttentionForm::LSH, "lsh", "Reformer LSH"),
          clEnumValN(AttentionForm::Routed, "routed", "Routing Transformer"),
          clEnumValN(AttentionForm::Auto, "auto", "chosen per op"))};
  Option<int64_t> lshHashes{*this, "lsh-hashes",
                            llvm::cl::desc("Hash rounds of LSH attention"),
                            llvm::cl::init(4)};
  Option<int64_t> lshBucketSize{
      *this, "lsh-bucket-size",
      llvm::cl::desc("Tokens per bucket of LSH attention"), llvm::cl::init(64)};
  Option<int64_t> seed{*this, "seed",
                       llvm::cl::desc("Seed of the LSH rotations and the "
                                      "routed k-means initialisation"),
                       llvm::cl::init(0)};
  Option<int64_t> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("With attention=auto: bytes one attention may use (0: "
                     "no limit)"),
      llvm::cl::init(0)};
  Option<int64_t> routedClusters{
      *this, "routed-clusters",
      llvm::cl::desc("Clusters of routed attention (0: default)"),
      llvm::cl::init(0)};
  Option<int64_t> routedWindow{
      *this, "routed-window",
      llvm::cl::desc("Keys per cluster of routed attention (0: default)"),
      llvm::cl::init(0)};
  Option<attn::SparsePattern> sparsePattern{
      *this, "sparse-pattern", llvm::cl::desc("Sparse pattern"),
      llvm::cl::init(attn::SparsePattern::Strided),
      llvm::cl::values(clEnumValN(attn::SparsePattern::Strided, "strided",
                                  "local and strided"),
                       clEnumValN(attn::SparsePattern::Fixed, "fixed",
                                  "windows and summaries"))};
  Option<int64_t> sparseBlock{*this, "sparse-block",
                              llvm::cl::desc("Block size of sparse attention"),
                              llvm::cl::init(64)};
  Option<int64_t> sparseStride{
      *this, "sparse-stride",
      llvm::cl::desc("Stride of sparse attention (0: default)"),
      llvm::cl::init(0)};
  Option<int64_t> sparseSummary{
      *this, "sparse-summary",
      llvm::cl::desc("Summary width of the fixed pattern (0: default)"),
      llvm::cl::init(0)};

  AttentionFormOptions get() const {
    AttentionFormOptions o;
    o.attention = attention;
    o.lshHashes = lshHashes;
    o.lshBucketSize = lshBucketSize;
    o.seed = seed;
    o.memoryBudget = memoryBudget;
    o.routedClusters = routedClusters;
    o.routedWindow = routedWindow;
    o.sparse = {sparsePattern, sparseBlock, sparseStride, sparseSummary};
    return o;
  }
};

std::string textual(llvm::function_ref<void(OpPassManager &)> build) {
  OpPassManager pm(ModuleOp::getOperationName());
  build(pm);
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  return text;
}

} // namespace

void lcc::registerLccPipelines() {
  PassPipelineRegistration<AttentionFormsPipelineOptions>(
      "lcc-attention-forms",
      "lcc's attention-forms stage: --attention and its flags, as lcc runs "
      "them",
      [](OpPassManager &pm, const AttentionFormsPipelineOptions &options) {
        buildAttentionFormsPipeline(pm, options.get());
      });
  PassPipelineRegistration<>(
      "lcc-lower-to-linalg",
      "lcc's linalg stage: attn ops to linalg on tensors, elementwise chains "
      "fused, as lcc runs it",
      buildLowerToLinalgPipeline);
  PassPipelineRegistration<>(
      "lcc-lower-to-dispatches",
      "lcc's dispatch stage: workgroup tiling and dispatch functions, as lcc "
      "runs it",
      buildLowerToDispatchesPipeline);
}

std::string lcc::printStagePipelines(const AttentionFormOptions &options) {
  std::string forms = textual(
      [&](OpPassManager &pm) { buildAttentionFormsPipeline(pm, options); });
  return "attention-forms: " + forms +
         "\nlinalg: " + textual(buildLowerToLinalgPipeline) +
         "\ndispatches: " + textual(buildLowerToDispatchesPipeline) + "\n";
}
