//===- CudaTarget.cpp - dispatches to PTX and a cubin ---------------------===//
//
// The dispatches are bufferized like the CPU's, then each becomes a
// gpu.func kernel of one gpu.module: its loops are spread over the threads
// of a block (lcc-distribute-to-threads), its temporaries move to shared
// memory (lcc-promote-workgroup-buffers), and upstream's gpu-to-nvvm lowering
// makes it NVVM. The module is translated to LLVM IR and compiled by LLVM's
// NVPTX backend to PTX; ptxas, when found, assembles the cubin.
//
//===----------------------------------------------------------------------===//

#include "compiler/CudaTarget.h"

#include "compiler/CudaEmulatorTarget.h"
#include "compiler/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace lcc {
#define GEN_PASS_DEF_OUTLINEGPUMODULE
#define GEN_PASS_DEF_EXPANDMATH
#define GEN_PASS_DEF_CONVERTTONVVM
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;

namespace {

/// rsqrt(x) = 1 / sqrt(x): NVVM would otherwise call libdevice, which an
/// artifact cannot link.
struct ExpandRsqrt : OpRewritePattern<math::RsqrtOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::RsqrtOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value one = arith::ConstantOp::create(
        rewriter, loc, rewriter.getFloatAttr(op.getType(), 1.0));
    Value root = math::SqrtOp::create(rewriter, loc, op.getOperand());
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, one, root);
    return success();
  }
};

/// sin and cos of an f32 `x` as sin/cos of r in [-pi/4, pi/4] with
/// x = k pi/2 + r: pi/2 in three parts (Cody and Waite), each product taken
/// off with one rounding (fma), so r keeps its precision for the angles of
/// positional encodings (thousands of radians), which the polynomial's own
/// one-step reduction loses (the CUDA emulator measured 2e-4 at 3000).
void reduceSinCos(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  Type type = x.getType();
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  };
  Value k = math::RoundEvenOp::create(
      b, loc, arith::MulFOp::create(b, loc, x, constant(0.63661977236758134)));
  Value minusK = arith::NegFOp::create(b, loc, k);
  Value r = x;
  for (double part : {1.57079637050628662109375, -4.37113900018624283e-8,
                      -1.71512451000596e-15})
    // llvm.intr.fma, not math.fma, which the math expansions below would
    // split into a multiply and an add, two roundings.
    r = LLVM::FMAOp::create(b, loc, minusK, constant(part), r);
  Value sin = math::SinOp::create(b, loc, r);
  Value cos = math::CosOp::create(b, loc, r);
  // The quadrant, k mod 4 (k is exact below 2^24, far beyond any angle
  // that keeps a meaningful fraction in f32).
  Value quadrant = arith::AndIOp::create(
      b, loc, arith::FPToSIOp::create(b, loc, b.getI32Type(), k),
      arith::ConstantIntOp::create(b, loc, 3, 32));
  auto isQuadrant = [&](int64_t q) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, quadrant,
                                 arith::ConstantIntOp::create(b, loc, q, 32));
  };
  Value negSin = arith::NegFOp::create(b, loc, sin);
  Value negCos = arith::NegFOp::create(b, loc, cos);
  // sin(x) by quadrant: sin, cos, -sin, -cos; cos(x): cos, -sin, -cos, sin.
  Value values[4] = {sin, cos, negSin, negCos};
  int first = isa<math::CosOp>(op) ? 1 : 0;
  Value result = values[(first + 3) % 4];
  for (int q = 2; q >= 0; --q)
    result = arith::SelectOp::create(b, loc, isQuadrant(q),
                                     values[(first + q) % 4], result);
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
}

/// Replaces every transcendental math op by arithmetic (polynomial
/// approximations) or by an op NVPTX has an instruction for, so that the
/// kernels need no libdevice.
LogicalResult expandMath(Operation *root) {
  SmallVector<Operation *> sinCos;
  root->walk([&](Operation *op) {
    if (isa<math::SinOp, math::CosOp>(op) && op->getResult(0).getType().isF32())
      sinCos.push_back(op);
  });
  for (Operation *op : sinCos)
    reduceSinCos(op);
  RewritePatternSet patterns(root->getContext());
  patterns.add<ExpandRsqrt>(root->getContext());
  populateMathPolynomialApproximationPatterns(patterns,
                                              [](StringRef) { return true; });
  math::populateExpansionPatterns(patterns);
  return applyPatternsGreedily(root, std::move(patterns));
}

/// Moves each dispatch function of `kernels` into a gpu.func kernel of a
/// new gpu.module, with the memref.globals they use.
gpu::GPUModuleOp outlineIntoGpuModule(ModuleOp kernels) {
  MLIRContext *ctx = kernels.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(kernels.getBody());
  auto gpuModule = gpu::GPUModuleOp::create(b, kernels.getLoc(), "lcc_kernels");
  b.setInsertionPointToStart(gpuModule.getBody());
  for (auto global :
       llvm::make_early_inc_range(kernels.getOps<memref::GlobalOp>()))
    global->moveBefore(gpuModule.getBody(), gpuModule.getBody()->begin());
  for (auto dispatch :
       llvm::make_early_inc_range(kernels.getOps<func::FuncOp>())) {
    b.setInsertionPointToEnd(gpuModule.getBody());
    auto kernel = gpu::GPUFuncOp::create(
        b, dispatch.getLoc(), dispatch.getName(), dispatch.getFunctionType());
    kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    kernel->setAttr("lcc.workgroup_count",
                    dispatch->getAttr("lcc.workgroup_count"));
    kernel.getBody().getBlocks().clear();
    kernel.getBody().takeBody(dispatch.getBody());
    kernel.walk([&](func::ReturnOp ret) {
      OpBuilder rb(ret);
      gpu::ReturnOp::create(rb, ret.getLoc(), ret.getOperands());
      ret.erase();
    });
    dispatch.erase();
  }
  return gpuModule;
}

/// gpu-to-nvvm without its libdevice: upstream's pass makes the LLVM math
/// intrinsics (floor, sqrt, exp2, ...) illegal so that they become calls of
/// libdevice, which only a CUDA installation has. NVPTX has instructions
/// for the ones expandMath leaves, so they stay intrinsics.
LogicalResult convertToNVVM(gpu::GPUModuleOp gpuModule) {
  MLIRContext *ctx = gpuModule.getContext();
  LowerToLLVMOptions llvmOptions(ctx);
  llvmOptions.overrideIndexBitwidth(64);
  llvmOptions.useBarePtrCallConv = true;
  LLVMTypeConverter converter(ctx, llvmOptions);
  configureGpuToNVVMTypeConverter(converter);
  RewritePatternSet patterns(ctx);
  arith::populateArithToLLVMConversionPatterns(converter, patterns);
  cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
  populateFuncToLLVMConversionPatterns(converter, patterns);
  populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
  populateMathToLLVMConversionPatterns(converter, patterns);
  index::populateIndexToLLVMConversionPatterns(converter, patterns);
  populateGpuToNVVMConversionPatterns(converter, patterns);
  // The 32-bit loads of bf16 pairs that feed mma.sync (vector<2xbf16>).
  populateVectorToLLVMConversionPatterns(converter, patterns);
  LLVMConversionTarget target(*ctx);
  target.addLegalDialect<NVVM::NVVMDialect>();
  target.addIllegalDialect<gpu::GPUDialect>();
  target.addLegalOp<gpu::GPUModuleOp>();
  target.addIllegalOp<func::FuncOp>();
  return applyPartialConversion(gpuModule, target, std::move(patterns));
}

struct OutlineGpuModulePass
    : lcc::impl::OutlineGpuModuleBase<OutlineGpuModulePass> {
  void runOnOperation() override { outlineIntoGpuModule(getOperation()); }
};

struct ExpandMathPass : lcc::impl::ExpandMathBase<ExpandMathPass> {
  void runOnOperation() override {
    if (failed(expandMath(getOperation()))) {
      getOperation().emitError("cannot expand the math functions");
      signalPassFailure();
    }
  }
};

struct ConvertToNVVMPass : lcc::impl::ConvertToNVVMBase<ConvertToNVVMPass> {
  void runOnOperation() override {
    if (failed(convertToNVVM(getOperation())))
      signalPassFailure();
  }
};

/// Runs `program` with `args`, its output (stdout and stderr) in `log`;
/// fails with its diagnostics in `log`.
LogicalResult runTool(StringRef program, ArrayRef<StringRef> args,
                      std::string &log) {
  SmallString<128> logPath;
  if (llvm::sys::fs::createTemporaryFile("lcc-ptxas", "log", logPath))
    return log = "cannot create a temporary file", failure();
  llvm::FileRemover removeLog(logPath);
  std::optional<StringRef> redirects[] = {std::nullopt, logPath.str(),
                                          logPath.str()};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(program, args, std::nullopt, redirects, 0,
                                     0, &message);
  auto output = llvm::MemoryBuffer::getFile(logPath);
  log = output ? (*output)->getBuffer().trim().str() : message;
  if (rc == 0)
    return success();
  if (log.empty())
    log = message.empty() ? "exit status " + std::to_string(rc) : message;
  return failure();
}

} // namespace

void lcc::buildCudaBufferizePipeline(OpPassManager &pm) {
  addDispatchBufferizationPasses(pm);
  pm.addPass(createCopiesToLinalg());
  pm.addPass(createOutlineGpuModule());
}

void lcc::buildCudaThreadsPipeline(OpPassManager &pm, int64_t blockSize,
                                   StringRef arch, bool tf32) {
  const CudaArch *found = findCudaArch(arch);
  assert(found && "the arch was checked before the pipeline was built");
  bool tensorCores = found->bf16TensorCores;
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  // CSE first: bufferization leaves a tile's result copied onto an equal
  // view of itself, which the canonicalizer erases once the views are one.
  gpu.addPass(createCSEPass());
  gpu.addPass(createCanonicalizerPass());
  gpu.addPass(createStageOperandTiles());
  DistributeToThreadsOptions distribute;
  distribute.blockSize = blockSize;
  distribute.tensorCores = tensorCores;
  distribute.tf32 = tensorCores && tf32;
  gpu.addPass(createDistributeToThreads(distribute));
  PromoteWorkgroupBuffersOptions promote;
  promote.maxBytes = found->sharedBytesPerBlock;
  gpu.addPass(createPromoteWorkgroupBuffers(promote));
  HintBlocksPerSmOptions hint;
  hint.arch = found->name.str();
  hint.blockSize = blockSize;
  gpu.addPass(createHintBlocksPerSm(hint));
  gpu.addPass(createCanonicalizerPass());
  gpu.addPass(createCSEPass());
}

void lcc::buildCudaLoopsPipeline(OpPassManager &pm) {
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  gpu.addPass(createBlockLoopSums());
  gpu.addPass(createExpandMath());
  gpu.addPass(createLowerAffinePass());
  gpu.addPass(createSCFToControlFlowPass());
  gpu.addPass(memref::createExpandStridedMetadataPass());
  gpu.addPass(createLowerAffinePass());
  gpu.addPass(arith::createArithExpandOpsPass());
  // Before gpu-to-nvvm, whose patterns would make them libdevice calls.
  gpu.addPass(createConvertMathToLLVMPass());
}

void lcc::buildCudaToNVVMPipeline(OpPassManager &pm) {
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  gpu.addPass(createConvertToNVVM());
  gpu.addPass(createReconcileUnrealizedCastsPass());
}

std::optional<std::string> lcc::findPtxas(StringRef cudaPath,
                                          std::string &searched) {
  SmallVector<std::string> tried;
  if (!cudaPath.empty()) {
    SmallString<128> path(cudaPath);
    llvm::sys::path::append(path, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(path))
      return std::string(path);
    tried.push_back(std::string(path));
  }
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  tried.push_back("PATH");
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return std::string("/usr/local/cuda/bin/ptxas");
  tried.push_back("/usr/local/cuda/bin/ptxas");
  searched = llvm::join(tried, ", ");
  return std::nullopt;
}

LogicalResult lcc::compileDispatchesForCuda(ModuleOp kernels,
                                            const CudaTargetOptions &options,
                                            CudaImage &image) {
  const CudaArch *arch = findCudaArch(options.arch);
  if (!arch)
    return kernels.emitError()
           << "unsupported CUDA architecture '" << options.arch
           << "'; expected one of " << supportedCudaArchs();
  image.arch = options.arch;
  image.blockSize = options.blockSize;
  image.tf32 = arch->bf16TensorCores && options.tf32;
  MLIRContext *ctx = kernels.getContext();
  ctx->loadDialect<gpu::GPUDialect, LLVM::LLVMDialect, NVVM::NVVMDialect>();

  if (failed(runDumpedPipeline(kernels, "gpu-bufferized", options.dump,
                               buildCudaBufferizePipeline)))
    return failure();
  if (failed(runDumpedPipeline(
          kernels, "gpu-threads", options.dump, [&](PassManager &pm) {
            buildCudaThreadsPipeline(pm, options.blockSize, arch->name,
                                     options.tf32);
          })))
    return failure();
  auto gpuModules = kernels.getOps<gpu::GPUModuleOp>();
  if (!llvm::hasSingleElement(gpuModules))
    return kernels.emitError("expected the kernels in one gpu.module"),
           failure();
  gpu::GPUModuleOp gpuModule = *gpuModules.begin();
  for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
    auto bytes =
        kernel->getAttrOfType<IntegerAttr>("lcc.workgroup_memory_bytes");
    image.kernels.push_back({kernel.getName().str(), kernel.getNumArguments(),
                             bytes ? bytes.getInt() : 0, std::nullopt,
                             countBlockSharedWork(kernel, options.blockSize)});
  }
  if (failed(runDumpedPipeline(kernels, "gpu-loops", options.dump,
                               buildCudaLoopsPipeline)))
    return failure();
  if (failed(runDumpedPipeline(kernels, "nvvm", options.dump,
                               buildCudaToNVVMPipeline)))
    return failure();

  // The kernels, alone in a builtin module, are what LLVM IR is made from.
  OwningOpRef<ModuleOp> device = ModuleOp::create(kernels.getLoc());
  for (Operation &op :
       llvm::make_early_inc_range(gpuModule.getBody()->getOperations()))
    if (!op.hasTrait<OpTrait::IsTerminator>())
      op.moveBefore(device->getBody(), device->getBody()->end());
  // Debug locations name each access's model source position in the
  // emulator's findings; the PTX is made without them.
  {
    PassManager pm(ctx);
    pm.addPass(LLVM::createDIScopeForLLVMFuncOpPass());
    if (failed(pm.run(*device)))
      return kernels.emitError("cannot add debug scopes to the GPU kernels");
  }
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  ctx->appendDialectRegistry(registry);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(*device, llvmContext, "lcc_kernels");
  if (!module)
    return kernels.emitError("failed to translate the GPU kernels to LLVM IR");

  // gpu.dynamic_shared_memory becomes an internal [0 x i8] in shared
  // memory, which NVPTX prints as a one-byte static variable. Dynamic shared
  // memory is CUDA's `extern __shared__ char s[]`: an external declaration.
  for (llvm::GlobalVariable &global : module->globals())
    if (global.getAddressSpace() == 3 && global.getValueType()->isArrayTy() &&
        global.getValueType()->getArrayNumElements() == 0) {
      global.setInitializer(nullptr);
      global.setLinkage(llvm::GlobalValue::ExternalLinkage);
    }

  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return kernels.emitError() << "this LLVM has no NVPTX backend: " << error;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, options.arch, arch->ptxFeature, llvm::TargetOptions(),
      std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return kernels.emitError()
           << "cannot create an NVPTX target machine for " << options.arch;
  module->setDataLayout(machine->createDataLayout());
  module->setTargetTriple(triple);
  auto optimize =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0, machine.get());
  if (llvm::Error err = optimize(module.get()))
    return kernels.emitError() << "LLVM optimisation of the GPU kernels "
                                  "failed: "
                               << llvm::toString(std::move(err));
  // The emulator runs exactly this IR, which the NVPTX backend compiles.
  std::unique_ptr<llvm::Module> emulated;
  if (options.emulator)
    emulated = llvm::CloneModule(*module);
  llvm::StripDebugInfo(*module);
  if (options.dump) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, nullptr);
    options.dump("gpu-kernels.ll", text);
  }
  if (emulated)
    if (llvm::Error err =
            compileKernelsForEmulator(*emulated, options.dump, image.emulator))
      return kernels.emitError()
             << "cannot compile the GPU kernels for the CUDA emulator: "
             << llvm::toString(std::move(err));
  {
    llvm::raw_string_ostream os(image.ptx);
    llvm::buffer_ostream ptxStream(os);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, ptxStream, nullptr,
                                     llvm::CodeGenFileType::AssemblyFile))
      return kernels.emitError("the NVPTX backend cannot emit PTX");
    codegen.run(*module);
  }
  if (options.dump)
    options.dump("kernels.ptx", image.ptx);

  std::optional<std::string> ptxas =
      findPtxas(options.cudaPath, image.ptxasSearch);
  if (!ptxas)
    return success();
  SmallString<128> ptxPath, cubinPath;
  int ptxFd;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "lcc-kernels", "ptx", ptxFd, ptxPath))
    return kernels.emitError()
           << "cannot create a temporary file: " << ec.message();
  llvm::FileRemover removePtx(ptxPath);
  {
    llvm::raw_fd_ostream os(ptxFd, /*shouldClose=*/true);
    os << image.ptx;
  }
  if (std::error_code ec = llvm::sys::fs::getPotentiallyUniqueTempFileName(
          "lcc-kernels", "cubin", cubinPath))
    return kernels.emitError()
           << "cannot name a temporary file: " << ec.message();
  llvm::FileRemover removeCubin(cubinPath);
  std::string archFlag = "-arch=" + options.arch;
  // -v: each kernel's registers and spills, for the kernel report.
  if (failed(runTool(*ptxas,
                     {*ptxas, archFlag, "-O3", "-v", "-o", cubinPath, ptxPath},
                     error)))
    return kernels.emitError() << *ptxas << " rejected the PTX for "
                               << options.arch << ": " << error;
  llvm::StringMap<KernelResources> resources = parsePtxasResources(error);
  for (CudaKernel &kernel : image.kernels) {
    auto found = resources.find(kernel.name);
    if (found != resources.end())
      kernel.resources = found->second;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> cubin =
      llvm::MemoryBuffer::getFile(cubinPath);
  if (!cubin)
    return kernels.emitError() << "cannot read the cubin ptxas wrote: "
                               << cubin.getError().message();
  image.cubin = (*cubin)->getBuffer().str();
  return success();
}
