//===- StagePipelines.cpp - lcc's module stages as pass pipelines ---------===//

#include "compiler/StagePipelines.h"

#include "compiler/CpuTarget.h"
#include "compiler/CudaTarget.h"
#include "compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace lcc;

/// The first knob out of its range as a pipeline's error, naming its option
/// as lcc's flag does ("expected cuda-block-size >= 1, got 0"): the
/// pipelines' options are lcc's flags (checkOptionRanges names a pass's).
static LogicalResult checkPipelineKnobs(llvm::raw_ostream &errors,
                                        ArrayRef<KnobValue> values) {
  for (const KnobValue &value : values)
    if (std::string problem =
            checkKnob(value.knob, value.knob.flag, value.value);
        !problem.empty()) {
      errors << problem;
      return failure();
    }
  return success();
}

LogicalResult
lcc::buildAttentionFormsPipeline(OpPassManager &pm,
                                 const AttentionFormOptions &options,
                                 llvm::raw_ostream &errors) {
  const AttentionFormDefinition *form = lookupAttentionForm(options.attention);
  if (!options.formOptions.empty() &&
      (options.attention == "keep" || (form && !form->takesFormOptions))) {
    errors << "--attention=" << options.attention
           << " takes no --attention-options: those configure a plugin's "
              "form; lcc's own forms take lcc's flags (see --help)";
    return failure();
  }
  if (options.attention == "keep")
    return success();
  if (options.attention == "auto") {
    if (failed(lookupAutoForms(options.autoForms, errors)))
      return failure();
    pm.addPass(createSelectForm(options));
    return success();
  }
  if (!form) {
    errors << "unknown attention form '" << options.attention
           << "'; expected one of " << attentionFormNames();
    return failure();
  }
  return form->addRewritePasses(pm, options, errors);
}

/// The linalg stage's IR is structured (one block per region, no branches):
/// the greedy driver's region simplification, a walk of a deep model's one
/// long function after every round, finds nothing to erase or merge there.
static GreedyRewriteConfig linalgStageCanonicalization() {
  GreedyRewriteConfig config;
  config.setUseTopDownTraversal(true); // As the canonicalize pass's default.
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  return config;
}

void lcc::buildLowerToLinalgPipeline(OpPassManager &pm,
                                     AttentionTiling tiling) {
  pm.addPass(createExpandRingAttention());
  pm.addPass(createLowerToLinalg({tiling.queryTile, tiling.keyTile}));
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addPass(createFuseElementwise());
  // Function by function, so a train step's loss function and train step
  // are simplified in parallel.
  OpPassManager &functions = pm.nest<func::FuncOp>();
  functions.addPass(createCanonicalizerPass(linalgStageCanonicalization()));
  functions.addPass(createCSEPass());
  // After CSE, which merged them.
  pm.addPass(createRematerializeArgumentOps());
}

LogicalResult
lcc::buildLowerToKernelsPipeline(OpPassManager &pm, StringRef target,
                                 int64_t cudaBlockSize,
                                 llvm::raw_ostream &errors, StringRef cpu,
                                 StringRef cudaArch, bool cudaTF32) {
  if (target == "cpu") {
    buildCpuBufferizePipeline(pm);
    buildCpuToLLVMPipeline(pm, cpuVectorRegisters(cpu));
    return success();
  }
  if (target == "cuda") {
    if (failed(checkPipelineKnobs(errors,
                                  {{knobs::kCudaBlockSize, cudaBlockSize}})))
      return failure();
    buildCudaBufferizePipeline(pm);
    if (!findCudaArch(cudaArch)) {
      errors << "unsupported cuda-arch '" << cudaArch << "'; expected one of "
             << supportedCudaArchs();
      return failure();
    }
    buildCudaThreadsPipeline(pm, cudaBlockSize, cudaArch, cudaTF32);
    buildCudaLoopsPipeline(pm);
    buildCudaToNVVMPipeline(pm);
    return success();
  }
  errors << "unknown kernel target '" << target << "'; expected 'cpu' or "
         << "'cuda'";
  return failure();
}

void lcc::buildLowerToDispatchesPipeline(OpPassManager &pm) {
  pm.addPass(createTileToWorkgroups());
  pm.addPass(createOutlineDispatches());
  // A layer's copies are equal as outlined: the canonicalizer then sees
  // one of each (a tenth of a deep train step's dispatches).
  pm.addPass(createDeduplicateDispatches());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // After canonicalization too, which makes more copies equal in print.
  pm.addPass(createDeduplicateDispatches());
  pm.addPass(createScheduleTransfers());
}

AttentionTiling lcc::cpuAttentionTiling(StringRef cpu) {
  return cpuVectorRegisters(cpu).bits == 512 ? kAvx512AttentionTiling
                                             : kCpuAttentionTiling;
}

namespace {

/// lcc's --attention flags as the options of lcc-attention-forms, with
/// lcc's names and defaults; the forms' flags are those they declare.
struct AttentionFormsPipelineOptions
    : PassPipelineOptions<AttentionFormsPipelineOptions> {
  Option<std::string> attention{
      *this, "attention",
      llvm::cl::desc("The form attention ops take: keep, auto or a "
                     "registered form"),
      llvm::cl::init("keep")};
  Option<int64_t> seed{*this, knobs::kSeed.flag,
                       llvm::cl::desc(knobs::kSeed.help),
                       llvm::cl::init(knobs::kSeed.defaultValue)};
  Option<int64_t> memoryBudget{
      *this, knobs::kMemoryBudget.flag,
      llvm::cl::desc(knobs::kMemoryBudget.help),
      llvm::cl::init(knobs::kMemoryBudget.defaultValue)};
  ListOption<std::string> autoForms{
      *this, "auto-forms",
      llvm::cl::desc("With attention=auto: the forms it may choose (default: "
                     "lsh)")};
  Option<std::string> formOptions{
      *this, "attention-options",
      llvm::cl::desc("Options of a form without flags of its own (a "
                     "plugin's), in pass-option syntax"),
      llvm::cl::init("")};
  FormFlagOptions<PassOptions, Option<std::string>> formFlags{*this};

  /// The options, or failure and the first one out of range.
  FailureOr<AttentionFormOptions> get(llvm::raw_ostream &errors) const {
    if (failed(
            checkPipelineKnobs(errors, {{knobs::kSeed, seed},
                                        {knobs::kMemoryBudget, memoryBudget}})))
      return failure();
    AttentionFormOptions o;
    if (std::string problem = formFlags.setInto(o); !problem.empty()) {
      errors << problem;
      return failure();
    }
    o.attention = attention;
    o.seed = seed;
    o.memoryBudget = memoryBudget;
    if (!autoForms.empty())
      o.autoForms.assign(autoForms.begin(), autoForms.end());
    o.formOptions = formOptions;
    return o;
  }
};

/// The kernel stages of one target, with lcc's defaults.
struct KernelsPipelineOptions : PassPipelineOptions<KernelsPipelineOptions> {
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("The device whose kernels to build: cpu or cuda"),
      llvm::cl::init("cpu")};
  Option<int64_t> cudaBlockSize{
      *this, knobs::kCudaBlockSize.flag,
      llvm::cl::desc(knobs::kCudaBlockSize.help),
      llvm::cl::init(knobs::kCudaBlockSize.defaultValue)};
  Option<std::string> cpu{
      *this, "cpu",
      llvm::cl::desc("LLVM CPU whose vector registers size the CPU kernels "
                     "(lcc --cpu; 'native': this machine)"),
      llvm::cl::init("native")};
  Option<std::string> cudaArch{
      *this, "cuda-arch",
      llvm::cl::desc("GPU architecture of target=cuda (lcc --cuda-arch; "
                     "sm_80 and up use tensor cores for bf16 products)"),
      llvm::cl::init("sm_90")};
  Option<bool> cudaTF32{
      *this, "cuda-tf32",
      llvm::cl::desc("f32 products on tensor cores in tf32 (lcc --cuda-tf32)"),
      llvm::cl::init(false)};
};

/// lcc-lower-to-linalg's options: the flash attention's tiles, by default
/// what lcc takes for `cpu` alone (lcc --query-tile/--key-tile/--cpu).
struct LinalgPipelineOptions : PassPipelineOptions<LinalgPipelineOptions> {
  Option<int64_t> queryTile{
      *this, knobs::kQueryTile.flag,
      llvm::cl::desc("Queries per flash attention tile (0: lcc's for cpu)"),
      llvm::cl::init(knobs::kQueryTile.defaultValue)};
  Option<int64_t> keyTile{
      *this, knobs::kKeyTile.flag,
      llvm::cl::desc("Keys per flash attention tile (0: lcc's for cpu)"),
      llvm::cl::init(knobs::kKeyTile.defaultValue)};
  Option<std::string> cpu{
      *this, "cpu",
      llvm::cl::desc("LLVM CPU whose default tiles to take: 128 x 128 with "
                     "AVX-512, 96 x 96 without ('native': this machine)"),
      llvm::cl::init("native")};
};

std::string textual(llvm::function_ref<void(OpPassManager &)> build) {
  OpPassManager pm(ModuleOp::getOperationName());
  build(pm);
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  return text;
}

/// Registers a pipeline whose builder can refuse its options with a reason
/// (PassPipelineRegistration's builder cannot fail).
template <typename Options>
void registerCheckedPipeline(
    StringRef name, StringRef description,
    std::function<LogicalResult(OpPassManager &, const Options &,
                                llvm::raw_ostream &)>
        build) {
  std::string prefix = name.str() + ": ";
  registerPassPipeline(
      name, description,
      [build, prefix](OpPassManager &pm, StringRef text,
                      function_ref<LogicalResult(const Twine &)> onError) {
        Options options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string error;
        llvm::raw_string_ostream errors(error);
        if (failed(build(pm, options, errors)))
          return onError(prefix + error);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optionHandler) {
        optionHandler(Options());
      });
}

} // namespace

void lcc::registerLccPipelines() {
  registerCheckedPipeline<AttentionFormsPipelineOptions>(
      "lcc-attention-forms",
      "lcc's attention-forms stage: --attention and its flags, as lcc runs "
      "them",
      [](OpPassManager &pm, const AttentionFormsPipelineOptions &options,
         llvm::raw_ostream &errors) {
        FailureOr<AttentionFormOptions> forms = options.get(errors);
        if (failed(forms))
          return failure();
        // On a model as written, as lcc inlines it first.
        pm.addPass(createInlineModelCalls());
        return buildAttentionFormsPipeline(pm, *forms, errors);
      });
  registerCheckedPipeline<LinalgPipelineOptions>(
      "lcc-lower-to-linalg",
      "lcc's linalg stage: attn ops to linalg on tensors, elementwise chains "
      "fused, as lcc runs it (for the CPU: give lcc's tiles for another "
      "target)",
      [](OpPassManager &pm, const LinalgPipelineOptions &options,
         llvm::raw_ostream &errors) {
        if (failed(checkPipelineKnobs(errors,
                                      {{knobs::kQueryTile, options.queryTile},
                                       {knobs::kKeyTile, options.keyTile}})))
          return failure();
        pm.addPass(createInlineModelCalls());
        buildLowerToLinalgPipeline(
            pm, cpuAttentionTiling(options.cpu)
                    .withGiven(options.queryTile, options.keyTile));
        return success();
      });
  PassPipelineRegistration<>(
      "lcc-lower-to-dispatches",
      "lcc's dispatch stage: workgroup tiling and dispatch functions, as lcc "
      "runs it",
      buildLowerToDispatchesPipeline);
  registerCheckedPipeline<KernelsPipelineOptions>(
      "lcc-lower-to-kernels",
      "lcc's kernel stages of one target (target=cpu: to the LLVM dialect; "
      "target=cuda: to NVVM), from the dispatches stage, as lcc runs them",
      [](OpPassManager &pm, const KernelsPipelineOptions &options,
         llvm::raw_ostream &errors) {
        return buildLowerToKernelsPipeline(
            pm, options.target, options.cudaBlockSize, errors, options.cpu,
            options.cudaArch, options.cudaTF32);
      });
}

FailureOr<std::string> lcc::printStagePipelines(
    const AttentionFormOptions &options, AttentionTiling tiling, StringRef cpu,
    StringRef cudaArch, bool cudaTF32, llvm::raw_ostream &errors) {
  OpPassManager forms(ModuleOp::getOperationName());
  if (failed(buildAttentionFormsPipeline(forms, options, errors)))
    return failure();
  std::string text;
  llvm::raw_string_ostream os(text);
  forms.printAsTextualPipeline(os);
  auto kernels = [&](StringRef target) {
    return textual([&](OpPassManager &pm) {
      (void)buildLowerToKernelsPipeline(pm, target,
                                        knobs::kCudaBlockSize.defaultValue,
                                        llvm::nulls(), cpu, cudaArch, cudaTF32);
    });
  };
  return "attention-forms: " + text +
         "\nlinalg: " + textual([&](OpPassManager &pm) {
           buildLowerToLinalgPipeline(pm, tiling);
         }) +
         "\ndispatches: " + textual(buildLowerToDispatchesPipeline) +
         "\ncpu-kernels: " + kernels("cpu") +
         "\ncuda-kernels: " + kernels("cuda") + "\n";
}
