//===- SharedObjectLinker.cpp - LLVM IR to an x86-64 shared object --------===//

#include "compiler/SharedObjectLinker.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace llvm;

Error lcc::linkSharedObject(Module &module, TargetMachine &machine,
                            std::string &sharedObject) {
  auto fail = [](const Twine &message) {
    return createStringError(inconvertibleErrorCode(), message);
  };
  SmallString<128> objectPath, libraryPath;
  int objectFd;
  if (std::error_code ec = sys::fs::createTemporaryFile("lcc-kernels", "o",
                                                        objectFd, objectPath))
    return fail("cannot create a temporary file: " + ec.message());
  FileRemover removeObject(objectPath);
  {
    raw_fd_ostream os(objectFd, /*shouldClose=*/true);
    legacy::PassManager codegen;
    if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                    CodeGenFileType::ObjectFile))
      return fail("the target cannot emit object files");
    codegen.run(module);
  }
  if (std::error_code ec =
          sys::fs::getPotentiallyUniqueTempFileName("lcc-kernels", "so",
                                                    libraryPath))
    return fail("cannot name a temporary file: " + ec.message());
  FileRemover removeLibrary(libraryPath);
  ErrorOr<std::string> linker = sys::findProgramByName("ld");
  if (!linker)
    return fail("cannot find the system linker 'ld' on PATH (Debian package "
                "binutils)");
  std::string linkError;
  SmallVector<StringRef> args = {*linker, "-shared",   "--no-undefined-version",
                                 "-o",    libraryPath, objectPath,
                                 "-lm"};
  if (sys::ExecuteAndWait(*linker, args, std::nullopt, {}, 0, 0,
                          &linkError) != 0)
    return fail("linking the kernels failed: " + linkError);
  ErrorOr<std::unique_ptr<MemoryBuffer>> library =
      MemoryBuffer::getFile(libraryPath);
  if (!library)
    return fail("cannot read the linked kernels: " +
                library.getError().message());
  sharedObject = (*library)->getBuffer().str();
  return Error::success();
}
