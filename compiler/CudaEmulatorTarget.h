//===- CudaEmulatorTarget.h - the CUDA kernels, for the host ----*- C++ -*-===//
//
// The CudaEmulator executable of a `--target=cuda` artifact: the kernels as
// the NVPTX backend receives them (LLVM IR, optimised for the GPU), compiled
// for the host instead (runtime/schema/CudaEmulatorAbi.h). Special registers
// become reads of the running thread's context, barriers and every global
// and shared memory access become calls into the emulator, and the block's
// shared memory is the emulator's; grid, block shape, thread mapping,
// shared-memory layout and barriers stay those of the PTX.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_CUDAEMULATORTARGET_H
#define LCC_COMPILER_CUDAEMULATORTARGET_H

#include "compiler/DispatchBuffers.h"

#include "llvm/Support/Error.h"

#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace lcc {

/// Compiles `kernels` (the NVPTX module of the CUDA target after LLVM's
/// optimisation, a copy with debug locations; consumed) into the shared
/// object of a CudaEmulator executable. Fails naming the kernel and the
/// NVVM intrinsic the emulator cannot run, or the step that failed.
llvm::Error compileKernelsForEmulator(llvm::Module &kernels,
                                      const StageDumper &dump,
                                      std::string &sharedObject);

} // namespace lcc

#endif // LCC_COMPILER_CUDAEMULATORTARGET_H
