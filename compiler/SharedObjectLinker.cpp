//===- SharedObjectLinker.cpp - LLVM IR to an x86-64 shared object --------===//

#include "compiler/SharedObjectLinker.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace llvm;

namespace {

Error fail(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// Removes a directory and what it holds when it goes out of scope.
struct TemporaryDirectory {
  SmallString<128> path;
  ~TemporaryDirectory() {
    if (!path.empty())
      (void)sys::fs::remove_directories(path);
  }
};

} // namespace

Error lcc::emitObject(Module &module, TargetMachine &machine,
                      std::string &object) {
  SmallString<0> bytes;
  raw_svector_ostream os(bytes);
  legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                  CodeGenFileType::ObjectFile))
    return fail("the target cannot emit object files");
  codegen.run(module);
  object.assign(bytes.begin(), bytes.end());
  return Error::success();
}

Error lcc::linkSharedObject(ArrayRef<StringRef> objects,
                            std::string &sharedObject) {
  TemporaryDirectory directory;
  if (std::error_code ec =
          sys::fs::createUniqueDirectory("lcc-kernels", directory.path))
    return fail("cannot create a temporary directory: " + ec.message());
  ErrorOr<std::string> linker = sys::findProgramByName("ld");
  if (!linker)
    return fail("cannot find the system linker 'ld' on PATH (Debian package "
                "binutils)");
  SmallString<128> libraryPath(directory.path);
  sys::path::append(libraryPath, "kernels.so");
  std::vector<std::string> objectPaths;
  for (auto [i, object] : llvm::enumerate(objects)) {
    SmallString<128> path(directory.path);
    sys::path::append(path, "kernel" + Twine(i) + ".o");
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    if (!ec) {
      os << object;
      os.close();
      if (os.has_error())
        ec = os.error();
      os.clear_error();
    }
    if (ec)
      return fail("cannot write '" + path + "': " + ec.message());
    objectPaths.push_back(std::string(path));
  }
  SmallVector<StringRef> args = {*linker, "-shared", "--no-undefined-version",
                                 "-o", libraryPath};
  args.append(objectPaths.begin(), objectPaths.end());
  args.push_back("-lm");
  SmallString<128> messagesPath(directory.path);
  sys::path::append(messagesPath, "ld.txt");
  std::optional<StringRef> redirects[] = {std::nullopt, messagesPath,
                                          messagesPath};
  std::string linkError;
  if (sys::ExecuteAndWait(*linker, args, std::nullopt, redirects, 0, 0,
                          &linkError) != 0) {
    // The linker's first complaint, on the one line of the error.
    if (ErrorOr<std::unique_ptr<MemoryBuffer>> messages =
            MemoryBuffer::getFile(messagesPath))
      for (StringRef line : llvm::split((*messages)->getBuffer(), '\n'))
        if (!line.trim().empty()) {
          linkError = line.trim().str();
          break;
        }
    return fail("linking the kernels failed: " + linkError);
  }
  ErrorOr<std::unique_ptr<MemoryBuffer>> library =
      MemoryBuffer::getFile(libraryPath);
  if (!library)
    return fail("cannot read the linked kernels: " +
                library.getError().message());
  sharedObject = (*library)->getBuffer().str();
  return Error::success();
}

Error lcc::linkSharedObject(Module &module, TargetMachine &machine,
                            std::string &sharedObject) {
  std::string object;
  if (Error error = emitObject(module, machine, object))
    return error;
  return linkSharedObject(ArrayRef<StringRef>{object}, sharedObject);
}

void lcc::defineBFloat16Truncation(Module &module) {
  LLVMContext &context = module.getContext();
  Function *truncate = Function::Create(
      FunctionType::get(Type::getBFloatTy(context), {Type::getFloatTy(context)},
                        false),
      GlobalValue::ExternalLinkage, kBFloat16Truncation, module);
  truncate->setVisibility(GlobalValue::HiddenVisibility);
  IRBuilder<> b(BasicBlock::Create(context, "entry", truncate));
  Value *x = truncate->getArg(0);
  Value *bits = b.CreateBitCast(x, b.getInt32Ty());
  Value *lowestKept = b.CreateAnd(b.CreateLShr(bits, 16), 1);
  Value *rounded = b.CreateLShr(
      b.CreateAdd(bits, b.CreateAdd(lowestKept, b.getInt32(0x7fff))), 16);
  // NaN stays NaN (quiet), whatever rounding would make of its payload.
  Value *quiet = b.CreateOr(b.CreateLShr(bits, 16), 0x40);
  Value *half = b.CreateSelect(b.CreateFCmpUNO(x, x), quiet, rounded);
  b.CreateRet(
      b.CreateBitCast(b.CreateTrunc(half, b.getInt16Ty()), b.getBFloatTy()));
}

bool lcc::refersToUndefined(StringRef object, StringRef symbol) {
  Expected<std::unique_ptr<object::ObjectFile>> file =
      object::ObjectFile::createObjectFile(MemoryBufferRef(object, "kernel"));
  if (!file) {
    // The linker reads it next and says what is wrong with it.
    consumeError(file.takeError());
    return false;
  }
  for (const object::SymbolRef &entry : (*file)->symbols()) {
    Expected<uint32_t> flags = entry.getFlags();
    Expected<StringRef> name = entry.getName();
    if (!flags || !name) {
      consumeError(flags.takeError());
      consumeError(name.takeError());
      continue;
    }
    if ((*flags & object::SymbolRef::SF_Undefined) && *name == symbol)
      return true;
  }
  return false;
}
