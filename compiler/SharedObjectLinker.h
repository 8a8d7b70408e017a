//===- SharedObjectLinker.h - LLVM IR to an x86-64 shared object -*- C++ -*-===//
//
// The last step of every target whose code runs on the host (the CPU
// kernels, the CUDA emulator's kernels): object files from LLVM's
// TargetMachine, linked by the system linker into an ELF shared object that
// the runtime loads from memory.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_SHAREDOBJECTLINKER_H
#define LCC_COMPILER_SHAREDOBJECTLINKER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace lcc {

/// Compiles `module` (optimised, its data layout and triple those of
/// `machine`) to the bytes of an object file in `object`.
llvm::Error emitObject(llvm::Module &module, llvm::TargetMachine &machine,
                       std::string &object);

/// Links `objects` (object files' bytes), with libm, into the bytes of a
/// shared object in `sharedObject`.
llvm::Error linkSharedObject(llvm::ArrayRef<llvm::StringRef> objects,
                             std::string &sharedObject);

/// emitObject, then linkSharedObject of that one object.
llvm::Error linkSharedObject(llvm::Module &module,
                             llvm::TargetMachine &machine,
                             std::string &sharedObject);

/// compiler-rt's f32 -> bf16 conversion, which the x86-64 backend calls
/// where it keeps a bf16 value in a register (promoted to f32) and the CPU
/// has no conversion instruction.
inline constexpr const char *kBFloat16Truncation = "__truncsfbf2";

/// Defines kBFloat16Truncation in `module`, hidden, rounding to nearest
/// even (NaN stays a quiet NaN) as the lowering's own conversions and PTX's
/// cvt.rn.bf16.f32 do: the shared objects link no compiler runtime.
void defineBFloat16Truncation(llvm::Module &module);

/// Whether the object file `object` (its bytes) refers to `symbol` without
/// defining it.
bool refersToUndefined(llvm::StringRef object, llvm::StringRef symbol);

} // namespace lcc

#endif // LCC_COMPILER_SHAREDOBJECTLINKER_H
