//===- CpuTarget.cpp - dispatches to an x86-64 shared object --------------===//
//
// Dispatch functions arrive on tensors with their outputs as the last
// arguments. They are given buffer signatures (each argument a memref the
// runtime binds), bufferized, lowered to loops and to the LLVM dialect,
// translated, wrapped in entry points of the HostSharedObject ABI, optimised,
// compiled with LLVM's TargetMachine and linked into a shared object.
//
//===----------------------------------------------------------------------===//

#include "compiler/CpuTarget.h"

#include "compiler/DispatchBuffers.h"
#include "compiler/DispatchCache.h"
#include "compiler/KernelObjects.h"
#include "compiler/Passes.h"
#include "compiler/SharedObjectLinker.h"

// The conversions one by one: mlir/Conversion/Passes.h declares every
// conversion upstream has and costs this file half its compile time.
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace lcc {
#define GEN_PASS_DEF_BLOCKIDSTOARGUMENTS
#define GEN_PASS_DEF_EXPANDBFLOAT16
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;

namespace {

/// Replaces gpu.block_id x/y/z by three trailing index arguments: on the CPU
/// the workgroup id is a parameter of the kernel.
void blockIdsToArguments(func::FuncOp dispatch) {
  Block &entry = dispatch.getBody().front();
  Location loc = dispatch.getLoc();
  IndexType index = IndexType::get(dispatch.getContext());
  Value ids[3] = {entry.addArgument(index, loc), entry.addArgument(index, loc),
                  entry.addArgument(index, loc)};
  dispatch.walk([&](gpu::BlockIdOp op) {
    op.replaceAllUsesWith(ids[static_cast<unsigned>(op.getDimension())]);
    op.erase();
  });
  dispatch.setFunctionType(
      FunctionType::get(dispatch.getContext(), entry.getArgumentTypes(), {}));
}

struct BlockIdsToArgumentsPass
    : lcc::impl::BlockIdsToArgumentsBase<BlockIdsToArgumentsPass> {
  void runOnOperation() override {
    for (auto dispatch : getOperation().getOps<func::FuncOp>())
      if (dispatch->hasAttr("lcc.dispatch"))
        blockIdsToArguments(dispatch);
  }
};

struct ExpandBFloat16Pass : lcc::impl::ExpandBFloat16Base<ExpandBFloat16Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError("cannot expand the bf16 conversions");
      signalPassFailure();
    }
  }
};

} // namespace

void lcc::buildCpuBufferizePipeline(OpPassManager &pm) {
  addDispatchBufferizationPasses(pm);
  pm.addNestedPass<func::FuncOp>(createPromoteTemporariesToStack());
  bufferization::buildBufferDeallocationPipeline(pm);
}

CpuVectorRegisters lcc::cpuVectorRegisters(StringRef cpu) {
  llvm::StringMap<bool> features;
  if (cpu == "native") {
    features = llvm::sys::getHostCPUFeatures();
  } else {
    llvm::InitializeNativeTarget();
    std::string error;
    llvm::Triple triple(llvm::sys::getProcessTriple());
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(triple, error);
    std::unique_ptr<llvm::MCSubtargetInfo> info(
        target ? target->createMCSubtargetInfo(triple, cpu, "") : nullptr);
    if (info)
      for (StringRef name :
           {"avx512f", "avx", "avx512bf16", "amx-tile", "amx-bf16"})
        features[name] = info->checkFeatures(("+" + name).str());
  }
  if (features.lookup("avx512f")) {
    bool bf16Dot = features.lookup("avx512bf16");
    return {512, 32, bf16Dot,
            bf16Dot && features.lookup("amx-tile") &&
                features.lookup("amx-bf16")};
  }
  if (features.lookup("avx"))
    return {256, 16};
  return {128, 16};
}

void lcc::buildCpuToLLVMPipeline(OpPassManager &pm,
                                 CpuVectorRegisters registers) {
  pm.addPass(createBlockIdsToArguments());
  pm.addPass(createCopiesToLinalg());
  pm.addPass(createApproximateMath());
  VectorizeContractionsOptions vectorize;
  vectorize.vectorBits = registers.bits;
  vectorize.vectorRegisters = registers.count;
  vectorize.bf16Dot = registers.bf16Dot;
  vectorize.amxTiles = registers.amxTiles;
  pm.addNestedPass<func::FuncOp>(createVectorizeContractions(vectorize));
  pm.addNestedPass<func::FuncOp>(createSplitRowReductions());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createExpandBFloat16());
  // Unrolled: the default goes through a stack buffer per transfer, and
  // an alloca inside loops grows the stack on every iteration.
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = true; // the bf16 dot products
  vectorToLLVM.amx = registers.amxTiles;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  // aligned_alloc returns the aligned pointer itself; malloc plus pointer
  // arithmetic would hide from LLVM that a temporary aliases nothing, and
  // every reduction would reload and store its accumulator per step.
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

LogicalResult
lcc::lowerDispatchesToLLVM(ModuleOp kernels, const CpuTargetOptions &options,
                           SmallVectorImpl<KernelSignature> &signatures) {
  if (failed(kernelSignatures(kernels, signatures)))
    return failure();
  if (failed(runDumpedPipeline(kernels, "bufferized", options.dump,
                               buildCpuBufferizePipeline)))
    return failure();
  CpuVectorRegisters registers = cpuVectorRegisters(options.cpu);
  return runDumpedPipeline(
      kernels, "llvm-dialect", options.dump,
      [&](OpPassManager &pm) { buildCpuToLLVMPipeline(pm, registers); });
}

namespace {

/// Renames each kernel `name` to `name.kernel` (internal) and adds the
/// exported entry point `name(void *const *bindings, i64, i64, i64)`, which
/// expands each binding into the memref descriptor the kernel takes
/// (allocated and aligned pointer, offset 0, static sizes, row-major
/// strides), then the three workgroup ids. An output's two pointers are
/// noalias (KernelSignature).
LogicalResult addEntryPoints(llvm::Module &module, ModuleOp kernels,
                             ArrayRef<lcc::KernelSignature> signatures,
                             ArrayRef<EntryPointKernel> entryPoints) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  auto *entryType = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                            {ptr, i64, i64, i64}, false);
  // In the dispatches' order; those whose kernels came from the cache are
  // declared, for the glue to export.
  llvm::StringMap<const lcc::KernelSignature *> signatureOf;
  for (const lcc::KernelSignature &signature : signatures)
    signatureOf[signature.name] = &signature;
  for (const EntryPointKernel &entryPoint : entryPoints) {
    if (!entryPoint.symbol.empty()) {
      llvm::Function::Create(entryType, llvm::GlobalValue::ExternalLinkage,
                             entryPoint.entryPoint, module);
      continue;
    }
    const lcc::KernelSignature *found =
        signatureOf.lookup(entryPoint.entryPoint);
    if (!found)
      return kernels.emitError()
             << "dispatch '" << entryPoint.entryPoint << "' has no signature";
    const lcc::KernelSignature &signature = *found;
    llvm::Function *kernel = module.getFunction(signature.name);
    if (!kernel)
      return kernels.emitError() << "dispatch '" << signature.name
                                 << "' was lost in translation to LLVM IR";
    kernel->setName(signature.name + ".kernel");
    kernel->setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::Function *entry = llvm::Function::Create(
        entryType, llvm::GlobalValue::ExternalLinkage, signature.name, module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
    SmallVector<llvm::Value *> args;
    size_t firstOutput = signature.bindingShapes.size() - signature.outputCount;
    for (auto [i, shape] : llvm::enumerate(signature.bindingShapes)) {
      llvm::Value *slot =
          b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i);
      llvm::Value *base = b.CreateLoad(ptr, slot);
      // What an output's pointers write, nothing else reaches: LLVM may then
      // keep the inputs' loads out of the way of its stores (hoist them,
      // vectorize a loop that gathers).
      if (i >= firstOutput && args.size() + 1 < kernel->arg_size()) {
        kernel->addParamAttr(args.size(), llvm::Attribute::NoAlias);
        kernel->addParamAttr(args.size() + 1, llvm::Attribute::NoAlias);
      }
      args.append({base, base, b.getInt64(0)});
      for (int64_t size : shape)
        args.push_back(b.getInt64(size));
      int64_t stride = 1;
      SmallVector<llvm::Value *> strides(shape.size());
      for (int64_t d = shape.size() - 1; d >= 0; --d) {
        strides[d] = b.getInt64(stride);
        stride *= shape[d];
      }
      args.append(strides.begin(), strides.end());
    }
    for (unsigned i = 1; i <= 3; ++i)
      args.push_back(entry->getArg(i));
    if (args.size() != kernel->arg_size())
      return kernels.emitError()
             << "dispatch '" << signature.name << "' takes "
             << kernel->arg_size() << " arguments, its bindings give "
             << args.size();
    b.CreateCall(kernel, args);
    b.CreateRetVoid();
  }
  return success();
}

bool isMatrixTileIntrinsic(StringRef name) {
  return name.starts_with("llvm.x86.tile") || name.starts_with("llvm.x86.tdp");
}

/// Exports kMatrixTilesSymbol when any kernel runs AMX tile instructions
/// (`cachedTiles`: a kernel from the cache does): Linux hands a process the
/// tile state only when asked, and the runtime asks before it runs such
/// code.
void markMatrixTileUse(llvm::Module &module, bool cachedTiles) {
  bool usesTiles = llvm::any_of(module.functions(), [](llvm::Function &f) {
    return f.isIntrinsic() && isMatrixTileIntrinsic(f.getName());
  });
  if (!usesTiles && !cachedTiles)
    return;
  llvm::Type *i8 = llvm::Type::getInt8Ty(module.getContext());
  new llvm::GlobalVariable(module, i8, /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantInt::get(i8, 1), kMatrixTilesSymbol);
}

/// Routes every aligned_alloc and free of the kernels through two
/// function pointers that the exported kTemporaryAllocatorSymbol sets. A
/// kernel allocates what did not fit on its stack once per workgroup and
/// frees it on exit; from glibc, blocks over its thresholds are mapped
/// fresh or trimmed off the heap's top when freed, and every workgroup
/// faults them back in (LSH at 4K: 8,000 page faults per call, half its
/// time). The runtime's allocator keeps them for the thread's next
/// workgroup. The wrappers keep what LLVM knows of aligned_alloc (a fresh
/// pointer aliasing nothing, aligned as asked), without which every
/// reduction into a temporary reloads and stores its accumulator per step.
///
/// `cachedTemporaries`: a kernel from the cache allocates them, so the
/// glue defines the state and setter even where no kernel lowered here does.
void routeTemporariesThroughRuntime(llvm::Module &module,
                                    bool cachedTemporaries) {
  llvm::Function *alignedAlloc = module.getFunction("aligned_alloc");
  llvm::Function *release = module.getFunction("free");
  bool allocatesHere = (alignedAlloc && !alignedAlloc->use_empty()) ||
                       (release && !release->use_empty());
  if (!allocatesHere && !cachedTemporaries)
    return;
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *voidType = llvm::Type::getVoidTy(ctx);
  auto *allocType = llvm::FunctionType::get(ptr, {i64, i64}, false);
  auto *releaseType = llvm::FunctionType::get(voidType, {ptr}, false);
  auto *libcAlloc = cast<llvm::Constant>(
      module.getOrInsertFunction("aligned_alloc", allocType).getCallee());
  auto *libcRelease = cast<llvm::Constant>(
      module.getOrInsertFunction("free", releaseType).getCallee());
  auto pointerTo = [&](StringRef name, llvm::Constant *initial) {
    return new llvm::GlobalVariable(module, ptr, /*isConstant=*/false,
                                    llvm::GlobalValue::InternalLinkage, initial,
                                    name);
  };
  llvm::GlobalVariable *allocSlot =
      pointerTo("lcc.temporary.allocate.ptr", libcAlloc);
  llvm::GlobalVariable *releaseSlot =
      pointerTo("lcc.temporary.release.ptr", libcRelease);

  auto define = [&](llvm::FunctionType *type, StringRef name,
                    llvm::GlobalValue::LinkageTypes linkage) {
    llvm::Function *f = llvm::Function::Create(type, linkage, name, module);
    return std::make_pair(
        f, llvm::BasicBlock::Create(ctx, "entry", f, /*InsertBefore=*/nullptr));
  };
  // The setter the runtime calls once, before any kernel runs.
  auto [setter, setterEntry] =
      define(llvm::FunctionType::get(voidType, {ptr, ptr}, false),
             kTemporaryAllocatorSymbol, llvm::GlobalValue::ExternalLinkage);
  llvm::IRBuilder<> b(setterEntry);
  b.CreateStore(setter->getArg(0), allocSlot);
  b.CreateStore(setter->getArg(1), releaseSlot);
  b.CreateRetVoid();
  if (!allocatesHere)
    return;

  auto [allocate, allocEntry] = define(allocType, "lcc.temporary.allocate",
                                       llvm::GlobalValue::InternalLinkage);
  b.SetInsertPoint(allocEntry);
  b.CreateRet(b.CreateCall(allocType, b.CreateLoad(ptr, allocSlot),
                           {allocate->getArg(0), allocate->getArg(1)}));
  auto [releaseTemporary, releaseEntry] = define(
      releaseType, "lcc.temporary.release", llvm::GlobalValue::InternalLinkage);
  b.SetInsertPoint(releaseEntry);
  b.CreateCall(releaseType, b.CreateLoad(ptr, releaseSlot),
               {releaseTemporary->getArg(0)});
  b.CreateRetVoid();

  // What LLVM knows of aligned_alloc and free, said of the wrappers (a
  // family of their own: a temporary is freed by release, never by free).
  allocate->addFnAttr(llvm::Attribute::NoInline);
  allocate->addRetAttr(llvm::Attribute::NoAlias);
  allocate->addParamAttr(0, llvm::Attribute::AllocAlign);
  allocate->addFnAttr(llvm::Attribute::getWithAllocSizeArgs(ctx, 1, {}));
  allocate->addFnAttr(llvm::Attribute::getWithAllocKind(
      ctx, llvm::AllocFnKind::Alloc | llvm::AllocFnKind::Uninitialized |
               llvm::AllocFnKind::Aligned));
  allocate->addFnAttr("alloc-family", "lcc.temporary");
  releaseTemporary->addFnAttr(llvm::Attribute::NoInline);
  releaseTemporary->addParamAttr(0, llvm::Attribute::AllocatedPointer);
  releaseTemporary->addFnAttr(
      llvm::Attribute::getWithAllocKind(ctx, llvm::AllocFnKind::Free));
  releaseTemporary->addFnAttr("alloc-family", "lcc.temporary");

  auto redirect = [](llvm::Function *from, llvm::Function *to) {
    if (!from)
      return;
    SmallVector<llvm::CallInst *> calls;
    for (llvm::User *user : from->users())
      if (auto *call = dyn_cast<llvm::CallInst>(user);
          call && call->getCalledFunction() == from)
        calls.push_back(call);
    for (llvm::CallInst *call : calls)
      call->setCalledFunction(to);
  };
  redirect(alignedAlloc, allocate);
  redirect(release, releaseTemporary);
}

} // namespace

namespace {

/// The host target `cpu` names ("native": this machine's CPU and features).
struct HostTarget {
  const llvm::Target *target = nullptr;
  std::string triple, cpu, features;

  /// Everything the code generation depends on besides the IR: part of
  /// the kernels' cache keys.
  std::string description() const {
    return triple + "|" + cpu + "|" + features + "|O3|pic|aggressive";
  }

  std::unique_ptr<llvm::TargetMachine> createMachine() const {
    return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
        llvm::Triple(triple), cpu, features, llvm::TargetOptions(),
        llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  }
};

LogicalResult lookupHostTarget(ModuleOp kernels, StringRef cpuOption,
                               HostTarget &host) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  host.triple = llvm::sys::getProcessTriple();
  std::string error;
  host.target =
      llvm::TargetRegistry::lookupTarget(llvm::Triple(host.triple), error);
  if (!host.target)
    return kernels.emitError()
           << "no LLVM target for " << host.triple << ": " << error;
  host.cpu = cpuOption == "native" ? llvm::sys::getHostCPUName().str()
                                   : cpuOption.str();
  if (cpuOption == "native") {
    llvm::SubtargetFeatures subtarget;
    for (auto &feature : llvm::sys::getHostCPUFeatures())
      subtarget.AddFeature(feature.first(), feature.second);
    host.features = subtarget.getString();
  }
  return success();
}

/// Translates `kernels` to LLVM IR with the runtime's entry points, for
/// `machine`'s data layout and triple.
std::unique_ptr<llvm::Module>
translateKernels(ModuleOp kernels, ArrayRef<KernelSignature> signatures,
                 ArrayRef<EntryPointKernel> entryPoints,
                 const CpuTargetOptions &options, llvm::TargetMachine &machine,
                 llvm::LLVMContext &llvmContext) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  kernels.getContext()->appendDialectRegistry(registry);
  // A private helper (bufferization's dealloc_helper) is each kernel's own
  // copy: external, it would be state the glue defines, which a kernel
  // taken from the cache could not count on.
  kernels.walk([](LLVM::LLVMFuncOp function) {
    if (!function.isExternal() && function.isPrivate())
      function.setLinkage(LLVM::Linkage::Internal);
  });
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(kernels, llvmContext, "lcc_kernels");
  if (!module) {
    kernels.emitError("failed to translate the kernels to LLVM IR");
    return nullptr;
  }
  if (failed(addEntryPoints(*module, kernels, signatures, entryPoints)))
    return nullptr;
  // What the kernels from the cache need of the glue.
  bool cachedTiles = false, cachedTemporaries = false;
  llvm::StringSet<> cachedEntryPoints;
  for (const EntryPointKernel &entryPoint : entryPoints) {
    if (entryPoint.symbol.empty())
      continue;
    cachedEntryPoints.insert(entryPoint.entryPoint);
    for (StringRef declaration : entryPoint.declarations) {
      cachedTiles |= isMatrixTileIntrinsic(declaration);
      cachedTemporaries |= declaration.starts_with("lcc.temporary.");
    }
  }
  markMatrixTileUse(*module, cachedTiles);
  routeTemporariesThroughRuntime(*module, cachedTemporaries);
  module->setDataLayout(machine.createDataLayout());
  module->setTargetTriple(machine.getTargetTriple());
  // LLVM tunes Intel's AVX-512 cores to prefer 256-bit vectors (the
  // frequency cost of 512-bit ones on Skylake): the loop vectorizer would
  // then run the softmax's exp, maxima and sums at half the width of the
  // contractions' registers, where they are a quarter of attention's time.
  if (cpuVectorRegisters(options.cpu).bits == 512)
    for (llvm::Function &function : *module)
      if (!function.isDeclaration() ||
          cachedEntryPoints.contains(function.getName()))
        function.addFnAttr("prefer-vector-width", "512");
  return module;
}

llvm::Error optimizeKernels(llvm::Module &module,
                            llvm::TargetMachine &machine) {
  auto optimize =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0, &machine);
  if (llvm::Error err = optimize(&module))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "LLVM optimisation failed: " +
                                       llvm::toString(std::move(err)));
  return llvm::Error::success();
}

/// Translates lowered `kernels` to LLVM IR with an entry point for each
/// of `entryPoints` (those with a symbol came from the cache and are only
/// declared) and, with `wantSharedObject`, compiles each kernel to an object
/// (KernelObjects.h) and links them into `image.sharedObject`; without it
/// (or with options.dump), optimises them as one module into
/// `image.llvmIR`.
LogicalResult emitCpuKernels(ModuleOp kernels,
                             ArrayRef<KernelSignature> signatures,
                             MutableArrayRef<EntryPointKernel> entryPoints,
                             const CpuTargetOptions &options,
                             const HostTarget &host, bool wantSharedObject,
                             CpuKernelImage &image) {
  std::unique_ptr<llvm::TargetMachine> machine = host.createMachine();
  if (!machine)
    return kernels.emitError()
           << "cannot create a target machine for cpu '" << host.cpu << "'";
  // Every feature the code may use, for the loader to check against the
  // CPU it runs on (an AVX-512 or AMX artifact on a CPU without would
  // fault on its first such instruction).
  const llvm::MCSubtargetInfo *subtarget = machine->getMCSubtargetInfo();
  for (const llvm::SubtargetFeatureKV &feature :
       subtarget->getAllProcessorFeatures())
    if (subtarget->getFeatureBits().test(feature.Value))
      image.cpuFeatures.push_back(feature.Key);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> module = translateKernels(
      kernels, signatures, entryPoints, options, *machine, llvmContext);
  if (!module)
    return failure();

  // The IR text is all kernels as one module, optimised as each kernel's
  // own module is for the shared object.
  if (!wantSharedObject || options.dump) {
    std::unique_ptr<llvm::Module> whole =
        wantSharedObject ? llvm::CloneModule(*module) : std::move(module);
    if (llvm::Error err = optimizeKernels(*whole, *machine))
      return kernels.emitError() << llvm::toString(std::move(err));
    llvm::raw_string_ostream os(image.llvmIR);
    whole->print(os, nullptr);
    if (options.dump)
      options.dump("kernels.ll", image.llvmIR);
  }
  if (!wantSharedObject)
    return success();

  KernelObjectTarget target;
  target.createMachine = [&host] { return host.createMachine(); };
  target.optimize = optimizeKernels;
  target.description = host.description();
  KernelCache noCache;
  if (llvm::Error err = compileKernelObjects(
          *module, entryPoints, target, options.cache ? *options.cache : noCache,
          kernels.getContext(), image.sharedObject, image.counts))
    return kernels.emitError() << llvm::toString(std::move(err));
  return success();
}

} // namespace

LogicalResult lcc::compileCpuKernels(ModuleOp kernels,
                                     const CpuTargetOptions &options,
                                     bool wantSharedObject,
                                     CpuKernelImage &image) {
  HostTarget host;
  if (failed(lookupHostTarget(kernels, options.cpu, host)))
    return failure();
  // Each dispatch in the module's order, keyed by its code; the kernels the
  // cache holds are taken out before anything is lowered. A dump lowers
  // every kernel, to show them all.
  KernelCache *cache = wantSharedObject && !options.dump && options.cache &&
                               options.cache->enabled()
                           ? options.cache
                           : nullptr;
  std::vector<EntryPointKernel> entryPoints;
  std::vector<std::string> keys;
  for (auto dispatch :
       llvm::make_early_inc_range(kernels.getOps<func::FuncOp>())) {
    EntryPointKernel entryPoint;
    entryPoint.entryPoint = dispatch.getName().str();
    std::string key =
        cache ? dispatchKernelKey(dispatch, host.description()) : std::string();
    if (!key.empty())
      if (std::optional<EntryPointKernel> found =
              lookupDispatchKernel(*cache, key)) {
        found->entryPoint = std::move(entryPoint.entryPoint);
        entryPoint = std::move(*found);
        dispatch.erase();
      }
    entryPoints.push_back(std::move(entryPoint));
    keys.push_back(std::move(key));
  }
  SmallVector<KernelSignature> signatures;
  if (failed(lowerDispatchesToLLVM(kernels, options, signatures)))
    return failure();
  std::vector<bool> lowered;
  for (const EntryPointKernel &entryPoint : entryPoints)
    lowered.push_back(entryPoint.symbol.empty());
  if (failed(emitCpuKernels(kernels, signatures, entryPoints, options, host,
                            wantSharedObject, image)))
    return failure();
  // Only kernels whose needs of the glue a later compile can meet again
  // (the temporary allocator's state) are kept by their dispatch.
  auto glueCanServe = [](const EntryPointKernel &kernel) {
    return llvm::all_of(kernel.fromGlue, [](StringRef name) {
      return name.starts_with("lcc.temporary.");
    });
  };
  if (cache)
    for (auto [entryPoint, key, wasLowered] :
         llvm::zip_equal(entryPoints, keys, lowered))
      if (wasLowered && !key.empty() && glueCanServe(entryPoint))
        storeDispatchKernel(*cache, key, entryPoint);
  return success();
}
