//===- DispatchCache.h - kernels found by their dispatch --------*- C++ -*-===//
//
// The kernel cache (KernelCache.h) keys a kernel's object by its LLVM IR, so
// a compile that finds every object still bufferizes and lowers every
// dispatch to LLVM IR first: most of a warm compile. Here a dispatch, as
// outlined on tensors, is keyed by its own code: a hit skips its lowering
// and gives the symbol and object an earlier compile made of it.
//
// The key is a SHA-256 of the dispatch printed in full (generic form, no
// locations, no elided constants; its names set aside), the target, and the
// builds of everything that lowers and compiles it (lcc's compiler, passes
// and dialect libraries, MLIR and LLVM). A dispatch that names a symbol or
// holds a resource blob (what its print would not show), or an op of a
// dialect other than MLIR's that lcc lowers (a plugin's), is not keyed.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_DISPATCHCACHE_H
#define LCC_COMPILER_DISPATCHCACHE_H

#include "compiler/KernelCache.h"
#include "compiler/KernelObjects.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>

namespace lcc {

/// The key of `dispatch`'s kernel for the code generator `target` (its
/// triple, CPU, features and options), or an empty string where the
/// dispatch cannot be keyed.
std::string dispatchKernelKey(mlir::func::FuncOp dispatch,
                              llvm::StringRef target);

/// The kernel `cache` keeps under a dispatch's `key`: its symbol,
/// declarations and object (`entryPoint` left empty), if both its entry and
/// its object are there and intact.
std::optional<EntryPointKernel> lookupDispatchKernel(KernelCache &cache,
                                                     llvm::StringRef key);

/// Keeps what a dispatch's kernel became (its symbol and declarations; the
/// object is kept by KernelObjects under its own key).
void storeDispatchKernel(KernelCache &cache, llvm::StringRef key,
                         const EntryPointKernel &kernel);

} // namespace lcc

#endif // LCC_COMPILER_DISPATCHCACHE_H
