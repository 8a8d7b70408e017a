//===- Pipeline.cpp - attn model to artifact ------------------------------===//

#include "compiler/Pipeline.h"

#include "compiler/ArtifactWriter.h"
#include "compiler/HostProgram.h"
#include "compiler/ModelChecks.h"
#include "compiler/Passes.h"
#include "compiler/SourceNames.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FormatVariadic.h"

#include <chrono>

using namespace mlir;
using namespace lcc;

namespace {

std::string printed(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

/// The kernel report of the dispatches in `kernels`, compiled to `image`.
std::string kernelReportOf(ModuleOp kernels, const CudaImage &image,
                           bool json) {
  llvm::StringMap<const CudaKernel *> compiled;
  for (const CudaKernel &kernel : image.kernels)
    compiled[kernel.name] = &kernel;
  SmallVector<KernelReportEntry> entries;
  for (auto dispatch : kernels.getOps<func::FuncOp>()) {
    KernelReportEntry entry;
    entry.kernel = dispatch.getName().str();
    if (auto location = dispatch->getAttrOfType<StringAttr>("lcc.location"))
      entry.location = location.str();
    if (auto count =
            dispatch->getAttrOfType<DenseI64ArrayAttr>("lcc.workgroup_count"))
      for (unsigned d = 0; d < 3 && d < count.size(); ++d)
        entry.grid[d] = static_cast<uint32_t>(count[d]);
    entry.threads = image.blockSize;
    entry.work =
        countDispatchWork(dispatch, hasBF16TensorCores(image.arch), image.tf32);
    if (const CudaKernel *kernel = compiled.lookup(entry.kernel)) {
      entry.sharedMemoryBytes = kernel->sharedMemoryBytes;
      entry.resources = kernel->resources;
      double blocks = double(entry.grid[0]) * entry.grid[1] * entry.grid[2];
      entry.work.mmas = blocks * kernel->blockWork.mmas;
      entry.work.sharedAccesses = blocks * kernel->blockWork.sharedAccesses;
      entry.work.exact = entry.work.exact && kernel->blockWork.exact;
    }
    for (Type type : dispatch.getArgumentTypes())
      if (auto tensor = dyn_cast<RankedTensorType>(type))
        entry.bytes += double(byteSize(tensor));
    entries.push_back(std::move(entry));
  }
  return formatKernelReport(entries, image.arch, json);
}

} // namespace

AttentionTiling lcc::attentionTilingFor(const CompileOptions &options) {
  AttentionTiling tiling;
  if (!options.targetCuda)
    tiling = cpuAttentionTiling(options.cpu);
  return tiling.withGiven(options.queryTile, options.keyTile);
}

FailureOr<std::string> lcc::compile(ModuleOp module,
                                    const CompileOptions &options) {
  // Each part's time since the last report, for --verbose.
  auto last = std::chrono::steady_clock::now();
  auto done = [&](StringRef part) {
    auto now = std::chrono::steady_clock::now();
    if (options.progress)
      options.progress(part, std::chrono::duration<double>(now - last).count());
    last = now;
  };
  if (options.checkModel && failed(checkModelIsCompilable(module)))
    return failure();
  PassManager inliner(module.getContext());
  inliner.addPass(createInlineModelCalls());
  if (failed(inliner.run(module)))
    return failure();
  attachSourceNames(module);
  if (options.dump)
    options.dump("attn", printedWithLocations(module));
  if (options.attention != "keep") {
    // Built once to learn whether the form and its options exist, so that
    // a bad one is an error rather than a half-built pipeline run.
    std::string error;
    llvm::raw_string_ostream errors(error);
    OpPassManager check(ModuleOp::getOperationName());
    if (failed(buildAttentionFormsPipeline(check, options, errors)))
      return module.emitError(error), failure();
    if (failed(runDumpedPipeline(
            module, "attention-forms", options.dump, [&](PassManager &pm) {
              (void)buildAttentionFormsPipeline(pm, options, llvm::nulls());
            })))
      return failure();
    done("attention forms");
  }
  if (options.contextParallel > 1) {
    if (failed(runDumpedPipeline(
            module, "context-parallel", options.dump, [&](PassManager &pm) {
              pm.addPass(createContextParallel(
                  {options.contextParallel, options.contextParallelOverHeads}));
            })))
      return failure();
    done("context parallelism");
  }
  if (options.reversible) {
    if (failed(runDumpedPipeline(
            module, "reversible", options.dump,
            [](PassManager &pm) { pm.addPass(createInsertReversible()); })))
      return failure();
    done("reversible blocks");
  }
  if (options.ffChunks > 0 || options.attentionChunks > 0) {
    if (failed(runDumpedPipeline(
            module, "ff-chunks", options.dump, [&](PassManager &pm) {
              pm.addPass(createChunkFeedForward(
                  {options.ffChunks, options.attentionChunks}));
            })))
      return failure();
    done("feed-forward chunks");
  }
  if (options.train) {
    if (failed(runDumpedPipeline(
            module, "train-step", options.dump, [&](PassManager &pm) {
              pm.addPass(createGenerateTrainStep(*options.train));
            })))
      return failure();
    done("train step");
  }
  if (options.decode) {
    if (failed(runDumpedPipeline(
            module, "decode-step", options.dump, [&](PassManager &pm) {
              pm.addPass(createGenerateDecodeStep(*options.decode));
            })))
      return failure();
    done("decode step");
  }
  if (!options.attentionPrecision.empty()) {
    if (failed(runDumpedPipeline(
            module, "attention-precision", options.dump, [&](PassManager &pm) {
              pm.addPass(
                  createHalfPrecisionAttention({options.attentionPrecision}));
            })))
      return failure();
    done("attention precision");
  }
  if (options.stopAfter == Stage::Attn ||
      options.stopAfter == Stage::AttentionMap)
    return printed(module);

  if (failed(runDumpedPipeline(
          module, "linalg", options.dump, [&](PassManager &pm) {
            buildLowerToLinalgPipeline(pm, attentionTilingFor(options));
          })))
    return failure();
  done("lowering to linalg");
  if (options.stopAfter == Stage::Linalg)
    return printed(module);

  if (failed(runDumpedPipeline(
          module, "dispatches", options.dump,
          [](PassManager &pm) { buildLowerToDispatchesPipeline(pm); })))
    return failure();

  done("dispatches");
  // The host programs, planned on the tensors the dispatches exchange.
  ParameterTable parameters;
  std::vector<HostProgram> programs;
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(module.getLoc());
  SmallVector<EntryPointImage> entryPoints;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func->hasAttr("lcc.dispatch")) {
      EntryPointImage entry;
      entry.name = func.getName().str();
      entry.bindingCount = func.getNumArguments();
      auto count =
          func->getAttrOfType<DenseI64ArrayAttr>("lcc.workgroup_count");
      if (!count || count.size() != 3 ||
          llvm::any_of(count.asArrayRef(), [](int64_t c) {
            return c < 1 || c > std::numeric_limits<uint32_t>::max();
          }))
        return func.emitOpError("expected an 'lcc.workgroup_count' of three "
                                "values in [1, 2^32)"),
               failure();
      for (unsigned d = 0; d < 3; ++d)
        entry.workgroupCount[d] = static_cast<uint32_t>(count[d]);
      for (Type type : func.getArgumentTypes())
        entry.bindingBytes.push_back(byteSize(cast<RankedTensorType>(type)));
      entryPoints.push_back(std::move(entry));
      kernels->push_back(func.clone());
      continue;
    }
    if (func.isExternal())
      continue;
    FailureOr<HostProgram> program = planHostProgram(func, parameters);
    if (failed(program))
      return failure();
    programs.push_back(std::move(*program));
  }
  if (programs.empty())
    return module.emitError("the module has no function to compile"), failure();
  done("host programs");
  if (options.stopAfter == Stage::Llvm && !options.targetCpu)
    return module.emitError("--emit=llvm writes the CPU kernels: add cpu to "
                            "--target"),
           failure();
  bool kernelReport = options.stopAfter == Stage::KernelReport ||
                      options.stopAfter == Stage::KernelReportJson;
  if ((options.stopAfter == Stage::Ptx || kernelReport) && !options.targetCuda)
    return module.emitError()
               << (kernelReport ? "--emit=kernel-report describes"
                                : "--emit=ptx writes")
               << " the CUDA kernels: add cuda to --target",
           failure();

  SmallVector<ExecutableImage> executables;
  if (options.targetCpu) {
    OwningOpRef<ModuleOp> cpuKernels = kernels->clone();
    bool wantSharedObject = options.stopAfter != Stage::Llvm;
    KernelCache cache(wantSharedObject ? options.kernelCache
                                       : KernelCacheOptions{false, ""});
    CpuTargetOptions cpu{options.cpu, options.dump, &cache};
    CpuKernelImage image;
    LogicalResult emitted =
        compileCpuKernels(*cpuKernels, cpu, wantSharedObject, image);
    for (const std::string &warning : cache.takeWarnings())
      emitWarning(UnknownLoc::get(module.getContext()), warning);
    if (failed(emitted))
      return failure();
    if (!wantSharedObject)
      return image.llvmIR;
    done(llvm::formatv("cpu kernels ({0} distinct: {1} from the cache, {2} "
                       "compiled; the glue {3})",
                       image.counts.kernels, image.counts.fromCache,
                       image.counts.compiled,
                       image.counts.glueFromCache ? "from the cache"
                                                  : "compiled")
             .str());
    ExecutableImage executable;
    executable.target = "x86_64";
    executable.entryPoints = entryPoints;
    executable.data = std::move(image.sharedObject);
    executable.cpuFeatures = std::move(image.cpuFeatures);
    executables.push_back(std::move(executable));
  }
  if (options.targetCuda) {
    CudaTargetOptions cuda{
        options.cudaArch,      options.cudaPath,
        options.cudaBlockSize, options.stopAfter == Stage::Artifact,
        options.dump,          options.cudaTF32};
    CudaImage image;
    OwningOpRef<ModuleOp> cudaKernels = kernels->clone();
    if (failed(compileDispatchesForCuda(*cudaKernels, cuda, image)))
      return failure();
    done("cuda kernels");
    if (options.stopAfter == Stage::Ptx)
      return image.ptx;
    if (kernelReport)
      return kernelReportOf(*kernels, image,
                            options.stopAfter == Stage::KernelReportJson);
    if (image.cubin.empty())
      module.emitWarning() << "no ptxas found (searched " << image.ptxasSearch
                           << "): the artifact holds PTX only, which the "
                              "driver compiles when the module is loaded";
    llvm::StringMap<const CudaKernel *> kernelsByName;
    for (const CudaKernel &kernel : image.kernels)
      kernelsByName[kernel.name] = &kernel;
    ExecutableImage ptx;
    ptx.format = ExecutableImage::Format::Ptx;
    ptx.target = image.arch;
    ptx.data = image.ptx;
    for (const EntryPointImage &entry : entryPoints) {
      const CudaKernel *kernel = kernelsByName.lookup(entry.name);
      if (!kernel)
        return module.emitError()
                   << "dispatch '" << entry.name << "' has no GPU kernel",
               failure();
      EntryPointImage gpuEntry = entry;
      gpuEntry.blockSize = {static_cast<uint32_t>(image.blockSize), 1, 1};
      gpuEntry.sharedMemoryBytes =
          static_cast<uint32_t>(kernel->sharedMemoryBytes);
      ptx.entryPoints.push_back(gpuEntry);
    }
    if (!image.cubin.empty()) {
      ExecutableImage cubin = ptx;
      cubin.format = ExecutableImage::Format::Cubin;
      cubin.data = image.cubin;
      executables.push_back(std::move(cubin));
    }
    ExecutableImage emulator = ptx;
    emulator.format = ExecutableImage::Format::CudaEmulator;
    emulator.data = std::move(image.emulator);
    executables.push_back(std::move(ptx));
    executables.push_back(std::move(emulator));
  }

  std::string error;
  FailureOr<std::string> artifact =
      writeArtifact(programs, parameters, executables, error,
                    uint32_t(options.contextParallel));
  if (failed(artifact))
    return module.emitError(error), failure();
  done("artifact");
  return artifact;
}