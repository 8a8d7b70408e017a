//===- CudaEmulatorTarget.cpp - the CUDA kernels, for the host ------------===//
//
// Each kernel K(params...) of the NVPTX module becomes an internal
// K.emulated(thread, params...) in which
//   - the special registers (%tid, %ntid, %ctaid, %nctaid, %laneid) are
//     fields of the thread's context,
//   - a barrier is a call of the context's `barrier`, a warp collective
//     (shfl.sync, vote.sync, mma.sync m16n8k16) one of its `warp` with the
//     lane's registers in an array,
//   - shared memory variables are offsets into the block's shared memory,
//   - every load, store and atomic of global or shared memory first asks the
//     site's range in the context and asks the context's `access` where to
//     go when it is outside (checks off: the range is everything),
// and the exported lcc_emu_kernel_K(thread, parameters) calls it with the
// parameter values cuLaunchKernel's array points at. A table names each
// access and barrier (its kernel, kind, size, the buffer its address derives
// from and its model source location) for the emulator's messages.
//
//===----------------------------------------------------------------------===//

#include "compiler/CudaEmulatorTarget.h"

#include "compiler/SharedObjectLinker.h"

#include "CudaEmulatorAbi.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/IR/ReplaceConstant.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#include <optional>

using namespace llvm;
namespace abi = lcc::lcm::emulator;

namespace {

constexpr unsigned kSharedAddressSpace = 3;
constexpr int64_t kSharedAlignment = 16;

Error emulatorError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// The context field (and element) an NVVM special-register read becomes.
struct RegisterField {
  unsigned field;
  std::optional<unsigned> element;
};

std::optional<RegisterField> specialRegister(StringRef intrinsic) {
  if (!intrinsic.consume_front("llvm.nvvm.read.ptx.sreg."))
    return std::nullopt;
  if (intrinsic == "laneid")
    return RegisterField{abi::kLaneIdField, std::nullopt};
  static constexpr std::pair<StringLiteral, unsigned> kVectors[] = {
      {"tid.", abi::kThreadIdField},
      {"ntid.", abi::kBlockDimField},
      {"ctaid.", abi::kBlockIdField},
      {"nctaid.", abi::kGridDimField}};
  for (const auto &[prefix, field] : kVectors) {
    StringRef axis = intrinsic;
    if (!axis.consume_front(prefix) || axis.size() != 1 || axis[0] < 'x' ||
        axis[0] > 'z')
      continue;
    return RegisterField{field, unsigned(axis[0] - 'x')};
  }
  return std::nullopt;
}

/// Whether `intrinsic` is a barrier of every thread of the block
/// (__syncthreads) with `id` its barrier number operand, if any.
bool isBlockBarrier(StringRef intrinsic) {
  return intrinsic == "llvm.nvvm.barrier0" ||
         intrinsic == "llvm.nvvm.barrier.cta.sync.aligned.all" ||
         intrinsic == "llvm.nvvm.barrier.cta.sync.all" ||
         intrinsic == "llvm.nvvm.barrier.sync";
}

/// The warp collective an NVVM intrinsic is, if it is one the emulator runs.
std::optional<abi::WarpOperation> warpOperation(StringRef intrinsic) {
  if (intrinsic.consume_front("llvm.nvvm.shfl.sync.")) {
    static constexpr std::pair<StringLiteral, abi::WarpOperation> kModes[] = {
        {"up.", abi::kShuffleUp},
        {"down.", abi::kShuffleDown},
        {"bfly.", abi::kShuffleButterfly},
        {"idx.", abi::kShuffleIndex}};
    for (const auto &[mode, operation] : kModes)
      if (intrinsic.consume_front(mode) &&
          (intrinsic == "i32" || intrinsic == "f32" || intrinsic == "i32p" ||
           intrinsic == "f32p"))
        return operation;
    return std::nullopt;
  }
  // ldmatrix is overloaded on its pointer's address space: ".p3".
  if (intrinsic.starts_with("llvm.nvvm.ldmatrix."))
    intrinsic.consume_back(".p3");
  return StringSwitch<std::optional<abi::WarpOperation>>(intrinsic)
      .Case("llvm.nvvm.vote.all.sync", abi::kVoteAll)
      .Case("llvm.nvvm.vote.any.sync", abi::kVoteAny)
      .Case("llvm.nvvm.vote.uni.sync", abi::kVoteUniform)
      .Case("llvm.nvvm.vote.ballot.sync", abi::kVoteBallot)
      .Case("llvm.nvvm.mma.m16n8k16.row.col.bf16", abi::kMmaM16N8K16BF16)
      .Case("llvm.nvvm.mma.m16n8k16.row.col.f32.f32", abi::kMmaM16N8K16F16)
      .Case("llvm.nvvm.mma.m16n8k8.row.col.tf32", abi::kMmaM16N8K8TF32)
      .Case("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.b16", abi::kLdMatrixX1)
      .Case("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.b16", abi::kLdMatrixX2)
      .Case("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16", abi::kLdMatrixX4)
      .Case("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.trans.b16",
            abi::kLdMatrixX1Trans)
      .Case("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16",
            abi::kLdMatrixX2Trans)
      .Case("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16",
            abi::kLdMatrixX4Trans)
      .Default(std::nullopt);
}

/// Whether `intrinsic` is a cp.async the emulator runs: a copy of 4, 8 or
/// 16 bytes from global to shared memory (.ca or .cg, with or without its
/// source size), commit_group, wait_group or wait_all.
bool isAsyncCopy(StringRef intrinsic) {
  if (!intrinsic.consume_front("llvm.nvvm.cp.async."))
    return false;
  if (intrinsic == "commit.group" || intrinsic == "wait.group" ||
      intrinsic == "wait.all")
    return true;
  intrinsic.consume_back(".s");
  return intrinsic == "ca.shared.global.4" ||
         intrinsic == "ca.shared.global.8" ||
         intrinsic == "ca.shared.global.16" ||
         intrinsic == "cg.shared.global.16";
}

/// The kernels of one NVPTX module, retargeted for the emulator in place.
class EmulatedKernels {
public:
  explicit EmulatedKernels(Module &module)
      : module(module), context(module.getContext()),
        pointer(PointerType::get(context, 0)) {
    Type *i32 = Type::getInt32Ty(context);
    Type *i64 = Type::getInt64Ty(context);
    Type *triple = ArrayType::get(i32, 3);
    threadContext = StructType::create(
        context,
        {triple, triple, triple, triple, pointer, i32, i32, pointer, pointer,
         pointer, pointer, pointer, i64, i64, i64, pointer, pointer},
        "lcc.emulator.ThreadContext");
  }

  Error run();

private:
  void layoutSharedMemory();
  Function *addThreadParameter(Function &kernel);
  Error instrumentAccesses(Function &body, StringRef kernel);
  std::string bufferOf(Value *address) const;
  Value *checkedAddress(Instruction *access, Value *thread, Value *address,
                        uint64_t bytes, unsigned site, bool sharedWord);
  Value *cannotRace(IRBuilder<> &b, Value *thread, Value *generic,
                    bool isLoad);
  Error replaceIntrinsics(Function &body, StringRef kernel);
  void replaceWarpCollective(CallInst *call, abi::WarpOperation operation,
                             Value *thread, StringRef kernel);
  void replaceAsyncCopy(CallInst *call, StringRef intrinsic, Value *thread,
                        StringRef kernel);
  void replaceSharedMemory(Function &body);
  void addEntryPoint(Function &body, StringRef kernel);
  void exportGlobals();
  void addTable(StringRef symbol, StringRef text);
  Value *field(IRBuilder<> &b, Value *thread, unsigned index,
               std::optional<unsigned> element = std::nullopt);
  static std::string location(const Instruction &instruction);

  Module &module;
  LLVMContext &context;
  PointerType *pointer;
  StructType *threadContext;
  SmallVector<GlobalVariable *> sharedVariables;
  DenseMap<GlobalVariable *, uint64_t> sharedOffsets;
  std::string sites, globals;
  unsigned siteCount = 0;
};

Value *EmulatedKernels::field(IRBuilder<> &b, Value *thread, unsigned index,
                              std::optional<unsigned> element) {
  SmallVector<Value *, 3> indices = {b.getInt32(0), b.getInt32(index)};
  if (element)
    indices.push_back(b.getInt32(*element));
  return b.CreateInBoundsGEP(threadContext, thread, indices);
}

std::string EmulatedKernels::location(const Instruction &instruction) {
  const DILocation *at = instruction.getDebugLoc().get();
  if (!at || at->getFilename().empty())
    return "-";
  return (at->getFilename() + ":" + Twine(at->getLine()) + ":" +
          Twine(at->getColumn()))
      .str();
}

/// CUDA's layout: the static shared variables first, then the dynamic
/// shared memory (`extern __shared__`, what lcc's kernels use).
void EmulatedKernels::layoutSharedMemory() {
  const DataLayout &layout = module.getDataLayout();
  uint64_t end = 0;
  SmallVector<GlobalVariable *> dynamic;
  for (GlobalVariable &variable : module.globals()) {
    if (variable.getAddressSpace() != kSharedAddressSpace)
      continue;
    sharedVariables.push_back(&variable);
    uint64_t bytes = layout.getTypeAllocSize(variable.getValueType());
    if (variable.isDeclaration() || bytes == 0) {
      dynamic.push_back(&variable);
      continue;
    }
    uint64_t alignment = std::max<uint64_t>(
        variable.getAlign().valueOrOne().value(), kSharedAlignment);
    end = alignTo(end, alignment);
    sharedOffsets[&variable] = end;
    end += bytes;
  }
  end = alignTo(end, kSharedAlignment);
  for (GlobalVariable *variable : dynamic)
    sharedOffsets[variable] = end;
  sites += "shared-static " + std::to_string(end) + "\n";
}

/// K(params...) -> K.emulated(thread, params...), the body moved over.
Function *EmulatedKernels::addThreadParameter(Function &kernel) {
  SmallVector<Type *> parameters = {pointer};
  llvm::append_range(parameters, kernel.getFunctionType()->params());
  Function *body = Function::Create(
      FunctionType::get(Type::getVoidTy(context), parameters, false),
      GlobalValue::InternalLinkage, kernel.getName() + ".emulated", module);
  body->splice(body->end(), &kernel);
  body->getArg(0)->setName("thread");
  for (Argument &argument : kernel.args()) {
    Argument *moved = body->getArg(argument.getArgNo() + 1);
    moved->takeName(&argument);
    argument.replaceAllUsesWith(moved);
  }
  body->setSubprogram(kernel.getSubprogram());
  kernel.setSubprogram(nullptr);
  return body;
}

/// Which buffer `address` lies in, as the access table names it: the kernel
/// parameter, shared memory or module global every path to it starts from.
std::string EmulatedKernels::bufferOf(Value *address) const {
  SmallVector<Value *> work = {address};
  SmallPtrSet<Value *, 16> seen;
  std::string root;
  while (!work.empty()) {
    Value *value = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (auto *gep = dyn_cast<GEPOperator>(value)) {
      work.push_back(gep->getPointerOperand());
      continue;
    }
    if (auto *op = dyn_cast<Operator>(value);
        op && (op->getOpcode() == Instruction::AddrSpaceCast ||
               op->getOpcode() == Instruction::BitCast)) {
      work.push_back(op->getOperand(0));
      continue;
    }
    if (auto *phi = dyn_cast<PHINode>(value)) {
      llvm::append_range(work, phi->incoming_values());
      continue;
    }
    if (auto *select = dyn_cast<SelectInst>(value)) {
      work.push_back(select->getTrueValue());
      work.push_back(select->getFalseValue());
      continue;
    }
    std::string here;
    if (auto *argument = dyn_cast<Argument>(value))
      here = "param:" + std::to_string(argument->getArgNo() - 1);
    else if (auto *global = dyn_cast<GlobalVariable>(value))
      here = global->getAddressSpace() == kSharedAddressSpace
                 ? "shared"
                 : ("global:" + global->getName()).str();
    else if (isa<AllocaInst>(value))
      here = "private";
    else
      return "unknown";
    if (root.empty())
      root = here;
    else if (root != here)
      return "unknown";
  }
  return root.empty() ? "unknown" : root;
}

/// Before `access`: when the bytes at `address` are not inside the site's
/// range, address = thread->access(thread, address, site). One branch per
/// access, so that the emulator's code stays quick to compile.
/// Racecheck's filter for an aligned 4-byte access of shared memory at
/// `generic`: whether its word's tag says it cannot race (CudaEmulatorAbi.h).
Value *EmulatedKernels::cannotRace(IRBuilder<> &b, Value *thread,
                                   Value *generic, bool isLoad) {
  Type *i64 = b.getInt64Ty();
  Value *shared =
      b.CreateLoad(pointer, field(b, thread, abi::kSharedMemoryField));
  Value *offset = b.CreateSub(b.CreatePtrToInt(generic, i64),
                              b.CreatePtrToInt(shared, i64));
  Value *word = b.CreateLShr(offset, 2);
  Value *words = b.CreateLoad(i64, field(b, thread, abi::kFilterWordsField));
  Value *covered =
      b.CreateAnd(b.CreateICmpEQ(b.CreateAnd(offset, 3), b.getInt64(0)),
                  b.CreateICmpULT(word, words));
  // Word 0 where the filter does not cover the access: the filter always
  // has one, and `covered` decides.
  Value *index = b.CreateSelect(covered, word, b.getInt64(0));
  Value *filter = b.CreateLoad(pointer, field(b, thread, abi::kRaceFilterField));
  Value *tag = b.CreateLoad(i64, b.CreateInBoundsGEP(i64, filter, index));
  Value *owned = b.CreateICmpEQ(
      tag, b.CreateLoad(i64, field(b, thread, abi::kOwnerTagField)));
  if (isLoad)
    owned = b.CreateOr(owned, b.CreateICmpEQ(tag, b.CreateLoad(i64, field(
                                                      b, thread,
                                                      abi::kReadersTagField))));
  return b.CreateAnd(covered, owned);
}

Value *EmulatedKernels::checkedAddress(Instruction *access, Value *thread,
                                       Value *address, uint64_t bytes,
                                       unsigned site, bool sharedWord) {
  BasicBlock *head = access->getParent();
  IRBuilder<> b(access);
  Value *ranges = b.CreateLoad(pointer, field(b, thread, abi::kSiteRangesField));
  StructType *rangeType = StructType::get(pointer, pointer);
  Value *range = b.CreateConstInBoundsGEP1_32(rangeType, ranges, site);
  Value *begin = b.CreateLoad(pointer, b.CreateStructGEP(rangeType, range, 0));
  Value *end = b.CreateLoad(pointer, b.CreateStructGEP(rangeType, range, 1));
  Value *generic = b.CreatePointerBitCastOrAddrSpaceCast(address, pointer);
  Value *last = b.CreateConstGEP1_64(b.getInt8Ty(), generic, bytes);
  Value *outside = b.CreateOr(b.CreateICmpULT(generic, begin),
                              b.CreateICmpUGT(last, end));
  Instruction *callEnd =
      SplitBlockAndInsertIfThen(outside, access->getIterator(), false);
  // An aligned word of shared memory racecheck's filter says cannot race
  // goes ahead without the call (most accesses of a tile loop).
  PHINode *filtered = nullptr;
  BasicBlock *filterBlock = callEnd->getParent();
  if (sharedWord) {
    IRBuilder<> f(callEnd);
    Value *skip = cannotRace(f, thread, generic, isa<LoadInst>(access));
    Instruction *unfilteredEnd = SplitBlockAndInsertIfThen(
        f.CreateNot(skip), callEnd->getIterator(), false);
    filtered = PHINode::Create(address->getType(), 2, "filtered",
                               callEnd->getParent()->begin());
    callEnd = unfilteredEnd;
  }

  IRBuilder<> c(callEnd);
  Value *function =
      c.CreateLoad(pointer, field(c, thread, abi::kAccessField), "access");
  FunctionType *type =
      FunctionType::get(pointer, {pointer, pointer, c.getInt32Ty()}, false);
  Value *redirected =
      c.CreateCall(type, function, {thread, generic, c.getInt32(site)});
  redirected =
      c.CreatePointerBitCastOrAddrSpaceCast(redirected, address->getType());
  BasicBlock *callBlock = callEnd->getParent();
  if (filtered) {
    filtered->addIncoming(address, filterBlock);
    filtered->addIncoming(redirected, callBlock);
    redirected = filtered;
    callBlock = filtered->getParent();
  }
  PHINode *merged = PHINode::Create(address->getType(), 2, "address",
                                    access->getParent()->begin());
  merged->addIncoming(address, head);
  merged->addIncoming(redirected, callBlock);
  return merged;
}

Error EmulatedKernels::instrumentAccesses(Function &body, StringRef kernel) {
  const DataLayout &layout = module.getDataLayout();
  struct Access {
    Instruction *instruction;
    unsigned operand;
    Type *type;
    const char *kind;
  };
  SmallVector<Access> accesses;
  for (Instruction &instruction : instructions(body)) {
    if (auto *load = dyn_cast<LoadInst>(&instruction))
      accesses.push_back({load, load->getPointerOperandIndex(),
                          load->getType(), "load"});
    else if (auto *store = dyn_cast<StoreInst>(&instruction))
      accesses.push_back({store, store->getPointerOperandIndex(),
                          store->getValueOperand()->getType(), "store"});
    else if (auto *rmw = dyn_cast<AtomicRMWInst>(&instruction))
      accesses.push_back({rmw, rmw->getPointerOperandIndex(),
                          rmw->getValOperand()->getType(), "atomic"});
    else if (auto *cmpxchg = dyn_cast<AtomicCmpXchgInst>(&instruction))
      accesses.push_back({cmpxchg, cmpxchg->getPointerOperandIndex(),
                          cmpxchg->getNewValOperand()->getType(), "atomic"});
    else if (auto *intrinsic = dyn_cast<MemIntrinsic>(&instruction);
             intrinsic && bufferOf(intrinsic->getDest()) != "private")
      return emulatorError("kernel '" + kernel + "' calls " +
                     intrinsic->getCalledFunction()->getName() +
                     ", whose accesses the CUDA emulator cannot check");
  }
  Value *thread = body.getArg(0);
  for (const Access &access : accesses) {
    Value *address = access.instruction->getOperand(access.operand);
    std::string buffer = bufferOf(address);
    if (buffer == "private")
      continue;
    unsigned site = siteCount++;
    uint64_t bytes = layout.getTypeStoreSize(access.type).getFixedValue();
    sites += ("access " + kernel + " " + access.kind + " " + Twine(bytes) +
              " " + buffer + " " + location(*access.instruction) + "\n")
                 .str();
    bool sharedWord = buffer == "shared" && bytes == 4 &&
                      isa<LoadInst, StoreInst>(access.instruction);
    access.instruction->setOperand(
        access.operand, checkedAddress(access.instruction, thread, address,
                                       bytes, site, sharedWord));
  }
  return Error::success();
}

Error EmulatedKernels::replaceIntrinsics(Function &body, StringRef kernel) {
  Value *thread = body.getArg(0);
  SmallVector<CallInst *> calls;
  for (Instruction &instruction : instructions(body))
    if (auto *call = dyn_cast<CallInst>(&instruction))
      if (Function *callee = call->getCalledFunction();
          callee && callee->getName().starts_with("llvm.nvvm."))
        calls.push_back(call);
  for (CallInst *call : calls) {
    StringRef name = call->getCalledFunction()->getName();
    IRBuilder<> b(call);
    if (name == "llvm.nvvm.read.ptx.sreg.warpsize") {
      call->replaceAllUsesWith(b.getInt32(32));
    } else if (std::optional<RegisterField> reg = specialRegister(name)) {
      call->replaceAllUsesWith(b.CreateLoad(
          b.getInt32Ty(), field(b, thread, reg->field, reg->element)));
    } else if (isBlockBarrier(name)) {
      auto *id = call->arg_size() ? dyn_cast<ConstantInt>(call->getArgOperand(0))
                                  : nullptr;
      if (call->arg_size() && (!id || !id->isZero()))
        return emulatorError("kernel '" + kernel + "' calls " + name +
                       " with a barrier other than 0, which the CUDA emulator "
                       "does not run");
      unsigned site = siteCount++;
      sites += ("barrier " + kernel + " " + location(*call) + "\n").str();
      Value *function = b.CreateLoad(
          pointer, field(b, thread, abi::kBarrierField), "barrier");
      b.CreateCall(FunctionType::get(b.getVoidTy(),
                                     {pointer, b.getInt32Ty()}, false),
                   function, {thread, b.getInt32(site)});
    } else if (std::optional<abi::WarpOperation> operation =
                   warpOperation(name)) {
      replaceWarpCollective(call, *operation, thread, kernel);
    } else if (isAsyncCopy(name)) {
      replaceAsyncCopy(call, name, thread, kernel);
    } else {
      return emulatorError("kernel '" + kernel + "' calls " + name +
                     ", which the CUDA emulator does not run");
    }
    call->eraseFromParent();
  }
  return Error::success();
}

void EmulatedKernels::replaceAsyncCopy(CallInst *call, StringRef intrinsic,
                                       Value *thread, StringRef kernel) {
  unsigned site = siteCount++;
  IRBuilder<> b(call);
  Value *null = ConstantPointerNull::get(pointer);
  Value *destination = null, *source = null, *count = b.getInt32(0);
  StringRef what = intrinsic.drop_front(StringRef("llvm.nvvm.cp.async.").size());
  std::string line;
  if (what == "commit.group") {
    line = "commit";
  } else if (what == "wait.group") {
    line = "wait";
    count = call->getArgOperand(0);
  } else if (what == "wait.all") {
    line = "wait";
    count = b.getInt32(abi::kWaitAll);
  } else {
    bool sourceSize = what.consume_back(".s");
    unsigned bytes = 0;
    what.rsplit('.').second.getAsInteger(10, bytes);
    line = "copy " + std::to_string(bytes);
    destination = b.CreateAddrSpaceCast(call->getArgOperand(0), pointer);
    source = b.CreateAddrSpaceCast(call->getArgOperand(1), pointer);
    count = sourceSize ? call->getArgOperand(2) : b.getInt32(bytes);
  }
  sites += ("async " + kernel + " " + line + " " + location(*call) + "\n").str();
  Value *function = b.CreateLoad(
      pointer, field(b, thread, abi::kAsyncCopyField), "asyncCopy");
  b.CreateCall(FunctionType::get(b.getVoidTy(),
                                 {pointer, b.getInt32Ty(), pointer, pointer,
                                  b.getInt32Ty()},
                                 false),
               function, {thread, b.getInt32(site), destination, source, count});
}

void EmulatedKernels::replaceWarpCollective(CallInst *call,
                                            abi::WarpOperation operation,
                                            Value *thread, StringRef kernel) {
  unsigned site = siteCount++;
  sites += ("warp " + kernel + " " + abi::kWarpOperationNames[operation] +
            " " + location(*call) + "\n")
               .str();
  Function *body = call->getFunction();
  IRBuilder<> entry(&*body->getEntryBlock().getFirstInsertionPt());
  Type *i32 = entry.getInt32Ty();
  Value *in = entry.CreateAlloca(ArrayType::get(i32, abi::kWarpWordsIn));
  Value *out = entry.CreateAlloca(ArrayType::get(i32, abi::kWarpWordsOut));
  IRBuilder<> b(call);
  // Every register the lane passes, as a 32-bit word.
  auto word = [&](Value *value) -> Value * {
    if (value->getType()->isIntegerTy(1))
      return b.CreateZExt(value, i32);
    return b.CreateBitCast(value, i32);
  };
  bool wholeWarp = operation == abi::kMmaM16N8K16BF16 ||
                   operation == abi::kMmaM16N8K16F16 ||
                   operation == abi::kMmaM16N8K8TF32 ||
                   abi::isLdMatrix(operation);
  // shfl and vote take the member mask first; mma.sync and ldmatrix are
  // the whole warp's.
  Value *mask = wholeWarp ? b.getInt32(~0u) : call->getArgOperand(0);
  if (abi::isLdMatrix(operation)) {
    // The row's address, as two words.
    Value *address = b.CreatePtrToInt(
        b.CreateAddrSpaceCast(call->getArgOperand(0), pointer), b.getInt64Ty());
    b.CreateStore(b.CreateTrunc(address, i32),
                  b.CreateConstInBoundsGEP1_32(i32, in, 0));
    b.CreateStore(b.CreateTrunc(b.CreateLShr(address, 32), i32),
                  b.CreateConstInBoundsGEP1_32(i32, in, 1));
  } else {
    unsigned first = wholeWarp ? 0 : 1;
    for (unsigned i = first; i < call->arg_size(); ++i)
      b.CreateStore(word(call->getArgOperand(i)),
                    b.CreateConstInBoundsGEP1_32(i32, in, i - first));
  }
  Value *function =
      b.CreateLoad(pointer, field(b, thread, abi::kWarpField), "warp");
  b.CreateCall(FunctionType::get(b.getVoidTy(),
                                 {pointer, i32, i32, pointer, pointer}, false),
               function, {thread, b.getInt32(site), mask, in, out});
  auto result = [&](unsigned index, Type *type) -> Value * {
    Value *bits = b.CreateLoad(i32, b.CreateConstInBoundsGEP1_32(i32, out, index));
    return type->isIntegerTy(1) ? b.CreateTrunc(bits, type)
                                : b.CreateBitCast(bits, type);
  };
  Type *type = call->getType();
  Value *replacement;
  if (auto *members = dyn_cast<StructType>(type)) {
    replacement = PoisonValue::get(type);
    for (unsigned i = 0; i < members->getNumElements(); ++i)
      replacement = b.CreateInsertValue(
          replacement, result(i, members->getElementType(i)), i);
  } else {
    replacement = result(0, type);
  }
  call->replaceAllUsesWith(replacement);
}

void EmulatedKernels::replaceSharedMemory(Function &body) {
  SmallVector<Constant *> variables(sharedVariables.begin(),
                                    sharedVariables.end());
  convertUsersOfConstantsToInstructions(variables, &body);
  IRBuilder<> b(&*body.getEntryBlock().getFirstInsertionPt());
  Value *shared =
      b.CreateLoad(pointer, field(b, body.getArg(0), abi::kSharedMemoryField),
                   "shared");
  for (GlobalVariable *variable : sharedVariables) {
    Value *at = b.CreateAddrSpaceCast(
        b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), shared,
                                     sharedOffsets.lookup(variable)),
        variable->getType());
    variable->replaceUsesWithIf(at, [&](Use &use) {
      auto *user = dyn_cast<Instruction>(use.getUser());
      return user && user->getFunction() == &body;
    });
  }
}

void EmulatedKernels::addEntryPoint(Function &body, StringRef kernel) {
  Function *entry = Function::Create(
      FunctionType::get(Type::getVoidTy(context), {pointer, pointer}, false),
      GlobalValue::ExternalLinkage, abi::kKernelPrefix + kernel, module);
  IRBuilder<> b(BasicBlock::Create(context, "entry", entry));
  SmallVector<Value *> arguments = {entry->getArg(0)};
  for (unsigned i = 1; i < body.arg_size(); ++i) {
    Value *slot =
        b.CreateConstInBoundsGEP1_64(pointer, entry->getArg(1), i - 1);
    Value *value = b.CreateLoad(pointer, slot);
    arguments.push_back(b.CreateLoad(body.getArg(i)->getType(), value));
  }
  b.CreateCall(&body, arguments);
  b.CreateRetVoid();
}

/// The module's own globals (scratch arrays) as cuModuleGetGlobal finds
/// them, exported and listed with their sizes.
void EmulatedKernels::exportGlobals() {
  const DataLayout &layout = module.getDataLayout();
  for (GlobalVariable &variable : module.globals()) {
    if (variable.isDeclaration() || variable.getName().starts_with("llvm."))
      continue;
    variable.setLinkage(GlobalValue::ExternalLinkage);
    variable.setVisibility(GlobalValue::DefaultVisibility);
    globals += (variable.getName() + " " +
                Twine(layout.getTypeAllocSize(variable.getValueType())) + "\n")
                   .str();
  }
}

void EmulatedKernels::addTable(StringRef symbol, StringRef text) {
  Constant *bytes = ConstantDataArray::getString(context, text);
  new GlobalVariable(module, bytes->getType(), /*isConstant=*/true,
                     GlobalValue::ExternalLinkage, bytes, symbol);
}

Error EmulatedKernels::run() {
  layoutSharedMemory();
  SmallVector<Function *> kernels;
  for (Function &function : module)
    if (!function.isDeclaration()) {
      if (function.getCallingConv() != CallingConv::PTX_Kernel)
        return emulatorError("function '" + function.getName() +
                       "' of the CUDA kernels is not a kernel; the CUDA "
                       "emulator runs kernels only");
      kernels.push_back(&function);
    }
  for (Function *kernel : kernels) {
    std::string name = kernel->getName().str();
    Function *body = addThreadParameter(*kernel);
    kernel->eraseFromParent();
    if (Error error = instrumentAccesses(*body, name))
      return error;
    replaceSharedMemory(*body);
    if (Error error = replaceIntrinsics(*body, name))
      return error;
    addEntryPoint(*body, name);
  }
  for (GlobalVariable *variable : sharedVariables)
    variable->eraseFromParent();
  for (Function &function : llvm::make_early_inc_range(module))
    if (function.isDeclaration() && function.use_empty())
      function.eraseFromParent();
  exportGlobals();
  addTable(abi::kSitesSymbol, sites);
  addTable(abi::kGlobalsSymbol, globals);
  for (Function &function : module) {
    function.removeFnAttr("target-cpu");
    function.removeFnAttr("target-features");
    function.setCallingConv(CallingConv::C);
  }
  if (NamedMDNode *annotations = module.getNamedMetadata("nvvm.annotations"))
    module.eraseNamedMetadata(annotations);
  return Error::success();
}

} // namespace

Error lcc::compileKernelsForEmulator(Module &kernels, const StageDumper &dump,
                                     std::string &sharedObject) {
  EmulatedKernels emulated(kernels);
  if (Error error = emulated.run())
    return error;
  StripDebugInfo(kernels);

  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  Triple triple(sys::getProcessTriple());
  std::string error;
  const Target *target = TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return emulatorError("no LLVM target for " + triple.str() + ": " + error);
  // The baseline x86-64 CPU, so that the emulator's code runs on any host,
  // and no optimisation: the IR is already optimised (for the GPU), and
  // fast code generation keeps the instrumented kernels, a branch per
  // access, quick to compile.
  std::unique_ptr<TargetMachine> machine(target->createTargetMachine(
      triple, "x86-64", "", TargetOptions(), Reloc::PIC_, std::nullopt,
      CodeGenOptLevel::None));
  if (!machine)
    return emulatorError("cannot create a host target machine for the CUDA "
                   "emulator");
  kernels.setDataLayout(machine->createDataLayout());
  kernels.setTargetTriple(triple);
  std::string broken;
  raw_string_ostream brokenStream(broken);
  if (verifyModule(kernels, &brokenStream))
    return emulatorError("the CUDA emulator's kernels are not valid LLVM IR: " +
                   broken);
  if (dump) {
    std::string text;
    raw_string_ostream os(text);
    kernels.print(os, nullptr);
    dump("gpu-emulator.ll", text);
  }
  // Only code generation calls it.
  if (!kernels.getFunction(kBFloat16Truncation))
    defineBFloat16Truncation(kernels);
  return lcc::linkSharedObject(kernels, *machine, sharedObject);
}
