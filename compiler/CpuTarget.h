//===- CpuTarget.h - dispatches to an x86-64 shared object ------*- C++ -*-===//
//
// Turns the dispatch functions of a module into one ELF shared object whose
// exported entry points follow the HostSharedObject ABI of
// runtime/schema/lcm.fbs:
//
//   void <dispatch>(void *const *bindings, int64_t wg_x, int64_t wg_y,
//                   int64_t wg_z)
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_CPUTARGET_H
#define LCC_COMPILER_CPUTARGET_H

#include "compiler/DispatchBuffers.h"
#include "compiler/KernelObjects.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace lcc {

struct CpuTargetOptions {
  /// LLVM CPU name; "native" is the machine lcc runs on.
  std::string cpu = "native";
  /// Dumps each stage when set.
  StageDumper dump;
  /// Where compiled kernels are kept between compiles; none when null.
  KernelCache *cache = nullptr;
};

/// The vector registers of a CPU, which the register blocks of its
/// contractions are sized for. The default is AVX2's.
struct CpuVectorRegisters {
  int64_t bits = 256;
  int64_t count = 16;
  /// AVX-512's bf16 dot products (avx512_bf16).
  bool bf16Dot = false;
  /// AMX's bf16 tile products (amx_tile and amx_bf16; the runtime asks
  /// the kernel for the tile state before it runs such code).
  bool amxTiles = false;
};

/// The symbol a CPU executable exports when its kernels use AMX tiles
/// (runtime/src/devices/cpu/CpuExecutable.cpp reads it).
inline constexpr const char *kMatrixTilesSymbol = "lcc_uses_amx_tiles";

/// The function a CPU executable exports when its kernels allocate heap
/// temporaries: `void (void *(*allocate)(size_t alignment, size_t size),
/// void (*release)(void *))` sets what they allocate and free them with
/// (aligned_alloc and free until called). runtime/src/devices/cpu/CpuExecutable.cpp
/// calls it with a cache that keeps a thread's freed temporaries for its
/// next workgroup.
inline constexpr const char *kTemporaryAllocatorSymbol =
    "lcc_use_temporary_allocator";

/// The vector registers of LLVM CPU `cpu` ("native": this machine):
/// AVX-512's 32 x 512 bits, AVX's 16 x 256, or SSE's 16 x 128, and
/// whether it has avx512_bf16 and AMX's bf16 tiles.
CpuVectorRegisters cpuVectorRegisters(llvm::StringRef cpu);

/// The CPU kernel stages, as lcc runs them and lcc-lower-to-kernels names
/// them: the dispatches bufferized (heap temporaries freed), then lowered
/// to the LLVM dialect with register blocks sized for `registers`.
void buildCpuBufferizePipeline(mlir::OpPassManager &pm);
void buildCpuToLLVMPipeline(mlir::OpPassManager &pm,
                            CpuVectorRegisters registers = {});

/// Bufferizes and lowers `kernels` (a module holding only dispatch functions
/// on tensors, outputs last) to the LLVM dialect, in place, and returns the
/// signature of each dispatch in `signatures`.
mlir::LogicalResult
lowerDispatchesToLLVM(mlir::ModuleOp kernels, const CpuTargetOptions &options,
                      llvm::SmallVectorImpl<KernelSignature> &signatures);

/// What the CPU target makes of the kernels.
struct CpuKernelImage {
  /// The kernels' optimised LLVM IR, as one module (`--emit=llvm`, and the
  /// dump's kernels.ll).
  std::string llvmIR;
  /// The linked shared object.
  std::string sharedObject;
  /// The LLVM names of the CPU features the code was compiled for.
  std::vector<std::string> cpuFeatures;
  /// How many distinct kernels, from the cache or compiled.
  KernelObjectCounts counts;
};

/// Compiles `kernels` (a module holding only dispatch functions on
/// tensors, outputs last; changed in place) for the CPU: each dispatch
/// whose kernel options.cache holds by the dispatch's own code
/// (DispatchCache.h) is taken from it unlowered, the others are lowered
/// (lowerDispatchesToLLVM) and, with `wantSharedObject`, each kernel is
/// compiled to an object (KernelObjects.h: from the cache where it holds
/// it, in parallel) and all are linked into `image.sharedObject`; without
/// it (or with options.dump, which lowers every dispatch), the kernels are
/// optimised as one module into `image.llvmIR`. Emits an error on
/// `kernels` and fails if code generation or linking fails.
mlir::LogicalResult compileCpuKernels(mlir::ModuleOp kernels,
                                      const CpuTargetOptions &options,
                                      bool wantSharedObject,
                                      CpuKernelImage &image);

} // namespace lcc

#endif // LCC_COMPILER_CPUTARGET_H
