//===- RuntimeLibrary.h - a library loaded when it is needed ----*- C++ -*-===//
//
// The engines lcc uses but does not link against (MPI, NCCL) are opened
// with dlopen the first time they are needed, so that lcc runs where they
// are absent: `$VARIABLE` names the library when set, else its usual
// soname. Their functions are resolved into typed slots by name.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_SUPPORT_RUNTIMELIBRARY_H
#define LCC_RUNTIME_SUPPORT_RUNTIMELIBRARY_H

#include "support/Status.h"

#include <dlfcn.h>
#include <string>

namespace lcc::runtime {

/// An opened library; it stays loaded for the life of the process.
struct RuntimeLibrary {
  std::string path; ///< the one opened: `$variable`'s, or the default
  void *handle = nullptr;
};

/// Opens `$variable`'s library, or `defaultName`, with dlopen `flags`. On
/// failure, an Unavailable error: `unavailable` (e.g. "mpi unavailable: ")
/// then, for a library the variable named, "cannot load PATH, named by
/// VARIABLE (WHY)", else `situation` "cannot load DEFAULT (WHY): `hint`".
StatusOr<RuntimeLibrary> openRuntimeLibrary(const char *variable,
                                            const char *defaultName, int flags,
                                            const char *unavailable,
                                            const char *situation,
                                            const char *hint);

/// Resolves functions of `library` into typed slots, remembering the first
/// symbol that it lacks.
class SymbolResolver {
public:
  explicit SymbolResolver(const RuntimeLibrary &library)
      : handle(library.handle) {}
  template <typename Slot> void operator()(Slot &slot, const char *symbol) {
    slot = reinterpret_cast<Slot>(::dlsym(handle, symbol));
    if (!slot && !missing)
      missing = symbol;
  }
  /// The first symbol not found, or null.
  const char *firstMissing() const { return missing; }

private:
  void *handle;
  const char *missing = nullptr;
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_SUPPORT_RUNTIMELIBRARY_H
