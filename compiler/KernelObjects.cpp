//===- KernelObjects.cpp - one object file per kernel ---------------------===//

#include "compiler/KernelObjects.h"

#include "compiler/SharedObjectLinker.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Threading.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

using namespace llvm;

namespace {

/// What a kernel's entry point is called in its own module while it is
/// keyed: the same kernel of another dispatch, layer or model then has the
/// same key.
constexpr StringRef kCanonicalEntry = "lcc_kernel";
/// Bumped when what this file makes of a key's module changes.
constexpr StringRef kObjectFormat = "lcc-kernel-object-1";
/// Bumped when what this file makes of the glue's module changes.
constexpr StringRef kGlueFormat = "lcc-glue-object-1";

using GlobalSet = SmallPtrSet<const GlobalValue *, 16>;

/// Adds the globals `user` refers to, through constant expressions too.
void collectReferences(const User &user,
                       SmallVectorImpl<const GlobalValue *> &found,
                       SmallPtrSetImpl<const Constant *> &visited) {
  for (const Value *operand : user.operands()) {
    if (const auto *global = dyn_cast<GlobalValue>(operand))
      found.push_back(global);
    else if (const auto *constant = dyn_cast<Constant>(operand))
      if (visited.insert(constant).second)
        collectReferences(*constant, found, visited);
  }
}

/// The definitions `roots` reach, the roots included.
GlobalSet reachableFrom(ArrayRef<const GlobalValue *> roots) {
  GlobalSet reached;
  SmallPtrSet<const Constant *, 32> visited;
  SmallVector<const GlobalValue *> work(roots.begin(), roots.end());
  while (!work.empty()) {
    const GlobalValue *global = work.pop_back_val();
    if (!reached.insert(global).second)
      continue;
    if (const auto *function = dyn_cast<Function>(global)) {
      for (const Instruction &inst : instructions(*function))
        collectReferences(inst, work, visited);
    } else if (const auto *variable = dyn_cast<GlobalVariable>(global)) {
      if (variable->hasInitializer())
        collectReferences(*variable->getInitializer(), work, visited);
    }
  }
  return reached;
}

void eraseUnusedDeclarations(Module &module) {
  for (Function &function : make_early_inc_range(module)) {
    function.removeDeadConstantUsers();
    if (function.isDeclaration() && function.use_empty())
      function.eraseFromParent();
  }
  for (GlobalVariable &variable : make_early_inc_range(module.globals())) {
    variable.removeDeadConstantUsers();
    if (variable.isDeclaration() && variable.use_empty())
      variable.eraseFromParent();
  }
}

/// Moves `globals`' functions and variables to the ends of `module`'s
/// lists, in that order.
void moveToEndInOrder(Module &module, ArrayRef<GlobalValue *> globals) {
  for (GlobalValue *global : globals) {
    if (auto *function = dyn_cast<Function>(global)) {
      module.getFunctionList().remove(function);
      module.getFunctionList().push_back(function);
    } else if (auto *variable = dyn_cast<GlobalVariable>(global)) {
      module.removeGlobalVariable(variable);
      module.insertGlobalVariable(variable);
    }
  }
}

/// Orders `module`'s functions and variables as `entry` first reaches them
/// (breadth first, in instruction order): the order, and with it the local
/// names canonicalizeNames gives, then follow the kernel alone, not which
/// other dispatch of the whole module made a constant or declared a
/// function first. A kernel taken from the cache by its dispatch
/// (DispatchCache.h) is then the one this module would make of it.
void orderFromEntry(Module &module, Function &entry) {
  SmallVector<GlobalValue *> order = {&entry};
  SmallPtrSet<const GlobalValue *, 32> seen = {&entry};
  SmallPtrSet<const Constant *, 32> visited;
  for (size_t i = 0; i < order.size(); ++i) {
    SmallVector<const GlobalValue *> found;
    if (auto *function = dyn_cast<Function>(order[i])) {
      for (const Instruction &inst : instructions(*function))
        collectReferences(inst, found, visited);
    } else if (auto *variable = dyn_cast<GlobalVariable>(order[i])) {
      if (variable->hasInitializer())
        collectReferences(*variable->getInitializer(), found, visited);
    }
    for (const GlobalValue *global : found)
      if (seen.insert(global).second)
        order.push_back(const_cast<GlobalValue *>(global));
  }
  moveToEndInOrder(module, order);
}

/// Names that say nothing of the dispatch or model a kernel came from.
void canonicalizeNames(Module &module, Function &entry) {
  module.setModuleIdentifier(kCanonicalEntry);
  module.setSourceFileName(kCanonicalEntry);
  entry.setName(kCanonicalEntry);
  unsigned next = 0;
  for (GlobalValue &global : module.global_values())
    if (&global != &entry && global.hasLocalLinkage())
      global.setName("lcc.local." + Twine(next++));
}

std::string kernelSymbol(StringRef key) {
  return (kCanonicalEntry + "_" + key).str();
}

/// One distinct kernel: its module's bitcode (canonical names), its key
/// and, once made or found, its object.
struct Kernel {
  /// The first entry point that runs it, for errors.
  std::string name;
  SmallVector<char, 0> bitcode;
  /// What its object exports: lcc_kernel_<hash of its IR and target>.
  std::string symbol;
  /// Its cache key: the symbol and the code generator's build.
  std::string key;
  std::string object;
  std::string error;
  /// What its module declares, and what of that the glue defines
  /// (EntryPointKernel).
  std::vector<std::string> declarations;
  std::vector<std::string> fromGlue;
};

/// Definitions every object shares and only the glue defines: mutable
/// globals (state), and the external definitions that are not entry
/// points (exports of the whole module).
bool isShared(const GlobalValue &global, const StringSet<> &entries) {
  if (global.isDeclaration())
    return false;
  if (const auto *variable = dyn_cast<GlobalVariable>(&global))
    if (!variable->isConstant())
      return true;
  return !global.hasLocalLinkage() && !entries.contains(global.getName());
}

Kernel extractKernel(const Module &module, const Function &entry,
                     const StringSet<> &entries, StringRef description) {
  GlobalSet reached = reachableFrom(ArrayRef<const GlobalValue *>{&entry});
  ValueToValueMapTy map;
  std::unique_ptr<Module> part =
      CloneModule(module, map, [&](const GlobalValue *global) {
        return reached.contains(global) && !isShared(*global, entries);
      });
  eraseUnusedDeclarations(*part);
  orderFromEntry(*part, *cast<Function>(map[&entry]));
  canonicalizeNames(*part, *cast<Function>(map[&entry]));
  Kernel kernel;
  kernel.name = entry.getName().str();
  for (const GlobalValue &global : part->global_values()) {
    if (!global.isDeclaration())
      continue;
    kernel.declarations.push_back(global.getName().str());
    if (const GlobalValue *whole = module.getNamedValue(global.getName());
        whole && !whole->isDeclaration())
      kernel.fromGlue.push_back(global.getName().str());
  }
  llvm::sort(kernel.declarations);
  llvm::sort(kernel.fromGlue);
  raw_svector_ostream os(kernel.bitcode);
  WriteBitcodeToFile(*part, os);
  kernel.symbol = kernelSymbol(lcc::kernelCacheKey(
      {kObjectFormat, description,
       StringRef(kernel.bitcode.data(), kernel.bitcode.size())}));
  // The symbol says what the kernel is, and an artifact is the same bytes
  // from any build; the cache key also says who compiled it.
  kernel.key = lcc::kernelObjectKey(kernel.symbol);
  return kernel;
}

/// Optimises and code-generates `kernel` in a context of its own.
Error compileKernel(Kernel &kernel, const lcc::KernelObjectTarget &target) {
  LLVMContext context;
  Expected<std::unique_ptr<Module>> module = parseBitcodeFile(
      MemoryBufferRef(StringRef(kernel.bitcode.data(), kernel.bitcode.size()),
                      kCanonicalEntry),
      context);
  if (!module)
    return module.takeError();
  Function *entry = (*module)->getFunction(kCanonicalEntry);
  if (!entry)
    return createStringError(inconvertibleErrorCode(),
                             "a kernel's module lost its entry point");
  entry->setName(kernel.symbol);
  entry->setVisibility(GlobalValue::HiddenVisibility);
  std::unique_ptr<TargetMachine> machine = target.createMachine();
  if (!machine)
    return createStringError(inconvertibleErrorCode(),
                             "cannot create a target machine");
  if (Error error = target.optimize(**module, *machine))
    return error;
  return lcc::emitObject(**module, *machine, kernel.object);
}

/// Orders `module`'s functions and variables by name: the glue is then the
/// same bytes whichever kernels came from the cache by their dispatch (the
/// module then lacks their code, and declarations it would have made on
/// the way come later or not at all).
void orderByName(Module &module) {
  SmallVector<GlobalValue *> globals;
  for (Function &function : module)
    globals.push_back(&function);
  for (GlobalVariable &variable : module.globals())
    globals.push_back(&variable);
  llvm::stable_sort(globals, [](const GlobalValue *a, const GlobalValue *b) {
    return a->getName() < b->getName();
  });
  moveToEndInOrder(module, globals);
}

/// The glue: every entry point a tail call into its kernel, and the shared
/// definitions with what they reach.
std::unique_ptr<Module> glueModule(const Module &module,
                                   const StringMap<std::string> &symbolOfEntry,
                                   const StringSet<> &entries) {
  SmallVector<const GlobalValue *> roots, entryPoints;
  for (const GlobalValue &global : module.global_values()) {
    if (entries.contains(global.getName()))
      entryPoints.push_back(&global);
    else if (isShared(global, entries))
      roots.push_back(&global);
  }
  GlobalSet kernels = reachableFrom(entryPoints);
  for (const GlobalValue &global : module.global_values())
    if (!global.isDeclaration() && !kernels.contains(&global))
      roots.push_back(&global);
  GlobalSet glued = reachableFrom(roots);
  ValueToValueMapTy map;
  std::unique_ptr<Module> glue =
      CloneModule(module, map, [&](const GlobalValue *global) {
        return glued.contains(global) && !entries.contains(global->getName());
      });
  for (Function &entry : glue->functions()) {
    auto found = symbolOfEntry.find(entry.getName());
    if (found == symbolOfEntry.end())
      continue;
    StringRef symbol = found->second;
    FunctionType *type = entry.getFunctionType();
    // Entry points whose kernels are the same call one.
    Function *kernel = glue->getFunction(symbol);
    if (!kernel) {
      kernel =
          Function::Create(type, GlobalValue::ExternalLinkage, symbol, *glue);
      kernel->setVisibility(GlobalValue::HiddenVisibility);
    }
    IRBuilder<> b(BasicBlock::Create(glue->getContext(), "entry", &entry));
    SmallVector<Value *> args;
    for (Argument &arg : entry.args())
      args.push_back(&arg);
    CallInst *call = b.CreateCall(kernel, args);
    call->setTailCall();
    if (type->getReturnType()->isVoidTy())
      b.CreateRetVoid();
    else
      b.CreateRet(call);
  }
  eraseUnusedDeclarations(*glue);
  orderByName(*glue);
  return glue;
}

/// Each kernel's object: from `cache`, else optimised and code-generated
/// (on `threads`, in parallel) and then stored in it.
Error findOrCompile(MutableArrayRef<Kernel> kernels,
                    const lcc::KernelObjectTarget &target,
                    lcc::KernelCache &cache, mlir::MLIRContext *threads,
                    lcc::KernelObjectCounts &counts) {
  SmallVector<unsigned> missing;
  for (auto [i, kernel] : llvm::enumerate(kernels)) {
    if (!kernel.object.empty()) {
      ++counts.fromCache; // found by its dispatch
    } else if (std::optional<std::string> object = cache.lookup(kernel.key)) {
      kernel.object = std::move(*object);
      ++counts.fromCache;
    } else {
      missing.push_back(i);
    }
  }
  auto compileMissing = [&](unsigned i) {
    Kernel &kernel = kernels[i];
    if (Error error = compileKernel(kernel, target))
      kernel.error =
          "kernel '" + kernel.name + "': " + toString(std::move(error));
    else
      cache.store(kernel.key, kernel.object);
  };
  if (threads)
    mlir::parallelForEach(threads, missing, compileMissing);
  else
    llvm::for_each(missing, compileMissing);
  counts.compiled = missing.size();
  for (const Kernel &kernel : kernels)
    if (!kernel.error.empty())
      return createStringError(inconvertibleErrorCode(), kernel.error);
  return Error::success();
}

/// The glue's object: from `cache` when an earlier compile made the same
/// glue (its bitcode, for the same target, by the same code generator),
/// else code-generated and stored. It is rebuilt on every compile, so a
/// warm compile otherwise code-generated it each time.
Error findOrEmitGlue(Module &glue, const lcc::KernelObjectTarget &target,
                     lcc::KernelCache &cache, std::string &object,
                     lcc::KernelObjectCounts &counts) {
  SmallString<0> bitcode;
  raw_svector_ostream os(bitcode);
  WriteBitcodeToFile(glue, os);
  std::string key =
      lcc::kernelCacheKey({kGlueFormat, target.description, bitcode.str(),
                           lcc::codeGeneratorIdentity()});
  if (std::optional<std::string> cached = cache.lookup(key)) {
    object = std::move(*cached);
    counts.glueFromCache = true;
    return Error::success();
  }
  std::unique_ptr<TargetMachine> machine = target.createMachine();
  if (!machine)
    return createStringError(inconvertibleErrorCode(),
                             "cannot create a target machine");
  if (Error error = lcc::emitObject(glue, *machine, object))
    return error;
  cache.store(key, object);
  return Error::success();
}

} // namespace

std::string lcc::kernelObjectKey(StringRef symbol) {
  return kernelCacheKey({symbol, codeGeneratorIdentity()});
}

Error lcc::compileKernelObjects(Module &module,
                                MutableArrayRef<EntryPointKernel> entryPoints,
                                const KernelObjectTarget &target,
                                KernelCache &cache, mlir::MLIRContext *threads,
                                std::string &sharedObject,
                                KernelObjectCounts &counts) {
  StringSet<> entries;
  for (const EntryPointKernel &entryPoint : entryPoints) {
    Function *entry = module.getFunction(entryPoint.entryPoint);
    bool given = !entryPoint.symbol.empty();
    if (!entry || entry->isDeclaration() != given)
      return createStringError(inconvertibleErrorCode(),
                               "no entry point '" + entryPoint.entryPoint +
                                   "' to compile");
    entries.insert(entryPoint.entryPoint);
  }
  // State stays one definition, in the glue, that every kernel links to.
  for (GlobalVariable &variable : module.globals())
    if (!variable.isDeclaration() && !variable.isConstant() &&
        variable.hasLocalLinkage()) {
      variable.setLinkage(GlobalValue::ExternalLinkage);
      variable.setVisibility(GlobalValue::HiddenVisibility);
    }

  // In the entry points' order, given or extracted alike: the objects are
  // linked in the same order however many the cache held.
  std::vector<Kernel> kernels;
  StringSet<> keys;
  StringMap<std::string> symbolOfEntry;
  for (EntryPointKernel &entryPoint : entryPoints) {
    Kernel kernel;
    if (!entryPoint.symbol.empty()) {
      kernel.name = entryPoint.entryPoint;
      kernel.symbol = entryPoint.symbol;
      kernel.key = lcc::kernelObjectKey(kernel.symbol);
      kernel.object = std::move(entryPoint.object);
      entryPoint.object.clear();
    } else {
      kernel = extractKernel(module, *module.getFunction(entryPoint.entryPoint),
                             entries, target.description);
      entryPoint.symbol = kernel.symbol;
      entryPoint.declarations = kernel.declarations;
      entryPoint.fromGlue = kernel.fromGlue;
    }
    symbolOfEntry[entryPoint.entryPoint] = kernel.symbol;
    if (keys.insert(kernel.key).second)
      kernels.push_back(std::move(kernel));
  }
  counts.kernels = kernels.size();
  if (Error error = findOrCompile(kernels, target, cache, threads, counts))
    return error;

  std::unique_ptr<Module> glue = glueModule(module, symbolOfEntry, entries);
  // A kernel that keeps bf16 values in registers on a CPU without bf16
  // conversions calls compiler-rt's: defined once, in the glue.
  if (llvm::any_of(kernels, [](const Kernel &kernel) {
        return lcc::refersToUndefined(kernel.object, kBFloat16Truncation);
      }))
    defineBFloat16Truncation(*glue);
  std::string glueObject;
  if (Error error = findOrEmitGlue(*glue, target, cache, glueObject, counts))
    return error;
  SmallVector<StringRef> objects = {glueObject};
  for (const Kernel &kernel : kernels)
    objects.push_back(kernel.object);
  cache.prune();
  return linkSharedObject(objects, sharedObject);
}
