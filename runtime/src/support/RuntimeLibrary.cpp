//===- RuntimeLibrary.cpp - a library loaded when it is needed ------------===//

#include "support/RuntimeLibrary.h"

#include <cstdlib>

namespace lcc::runtime {

StatusOr<RuntimeLibrary> openRuntimeLibrary(const char *variable,
                                            const char *defaultName, int flags,
                                            const char *unavailable,
                                            const char *situation,
                                            const char *hint) {
  const char *chosen = std::getenv(variable);
  bool overridden = chosen && *chosen;
  RuntimeLibrary library;
  library.path = overridden ? chosen : defaultName;
  ::dlerror();
  library.handle = ::dlopen(library.path.c_str(), flags);
  if (library.handle)
    return library;
  const char *reason = ::dlerror();
  std::string why = reason ? reason : "unknown dlopen error";
  if (overridden)
    return Status::error(StatusCode::Unavailable, unavailable, "cannot load ",
                         library.path, ", named by ", variable, " (", why, ")");
  return Status::error(StatusCode::Unavailable, unavailable, situation,
                       "cannot load ", defaultName, " (", why, "): ", hint);
}

} // namespace lcc::runtime
