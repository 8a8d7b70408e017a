//===- KernelObjects.h - one object file per kernel -------------*- C++ -*-===//
//
// The host code generation of a module of kernels, a kernel at a time: each
// entry point with what it reaches becomes a module of its own, named
// canonically and keyed for the KernelCache; the kernels the cache lacks
// are optimised and code-generated in parallel, each in its own LLVM
// context; a small glue object exports every entry point under its
// dispatch's name (a tail call into its kernel) and holds the module's
// shared state (mutable globals, what no entry point reaches). The system
// linker joins them into one shared object.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_KERNELOBJECTS_H
#define LCC_COMPILER_KERNELOBJECTS_H

#include "compiler/KernelCache.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace lcc {

/// How each kernel becomes machine code.
struct KernelObjectTarget {
  /// A target machine for one thread's code generation.
  std::function<std::unique_ptr<llvm::TargetMachine>()> createMachine;
  /// Optimises one kernel's module before its code generation.
  std::function<llvm::Error(llvm::Module &, llvm::TargetMachine &)> optimize;
  /// Everything createMachine and optimize depend on besides the IR (the
  /// triple, CPU, features, optimisation level): part of the cache key.
  std::string description;
};

/// An entry point and the kernel it runs.
struct EntryPointKernel {
  std::string entryPoint;
  /// The kernel's exported symbol (lcc_kernel_<hash of its canonical IR and
  /// target>). Given, with `object`, for a kernel an earlier compile made
  /// (the module then only declares the entry point); else set by
  /// compileKernelObjects.
  std::string symbol;
  std::string object;
  /// What the kernel's module declares, sorted: external functions,
  /// intrinsics and the state the glue defines (set with `symbol`).
  std::vector<std::string> declarations;
  /// Those of `declarations` the glue defines (shared state; set only for
  /// a kernel compiled here).
  std::vector<std::string> fromGlue;
};

struct KernelObjectCounts {
  unsigned kernels = 0;
  unsigned fromCache = 0;
  unsigned compiled = 0;
  /// Whether the glue (the entry points and what kernels share) came from
  /// the cache.
  bool glueFromCache = false;
};

/// The cache key of the object of the kernel exported as `symbol`: the
/// symbol and the build of the code generator.
std::string kernelObjectKey(llvm::StringRef symbol);

/// Compiles the exported functions `entryPoints` of `module` (its data
/// layout and triple set; changed: its mutable globals become hidden
/// external ones) into one shared object in `sharedObject`, each kernel
/// given, else from `cache` when it holds it, the others on `threads`'s
/// thread pool (serially where threading is off) and then into `cache`.
/// The glue exports the entry points in `entryPoints`' order.
llvm::Error
compileKernelObjects(llvm::Module &module,
                     llvm::MutableArrayRef<EntryPointKernel> entryPoints,
                     const KernelObjectTarget &target, KernelCache &cache,
                     mlir::MLIRContext *threads, std::string &sharedObject,
                     KernelObjectCounts &counts);

} // namespace lcc

#endif // LCC_COMPILER_KERNELOBJECTS_H
