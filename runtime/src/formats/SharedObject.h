//===- SharedObject.h - an ELF shared object loaded from memory -*- C++ -*-===//
//
// The code of a module's CPU executable and of its CUDA emulator executable
// is an ELF shared object embedded in the module. It is checked
// (ElfImage.h), then loaded without leaving a file behind (memfd_create,
// then dlopen of /proc/self/fd/N, as IREE's system-library loader does), and
// its symbols are looked up in the object itself only.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_SHAREDOBJECT_H
#define LCC_RUNTIME_SHAREDOBJECT_H

#include "support/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

struct link_map;

namespace lcc::runtime {

/// A name looked up in a loaded object: what the object itself defines
/// under it, or why nothing. dlsym also searches the object's
/// dependencies, where a name such as "system" would find libc's.
struct OwnSymbol {
  enum { Function, Data, Absent, DefinedElsewhere } lookup;
  void *address = nullptr;
  /// DefinedElsewhere: the file that defines it.
  std::string owner;

  bool isDefined() const { return lookup == Function || lookup == Data; }
};

class SharedObject {
public:
  /// Where the bytes are written for dlopen: a memfd, or (where memfd_create
  /// fails, or when asked) a temporary file removed on unload.
  enum class Backing { Memfd, TemporaryFile };

  /// Checks and loads the shared object `bytes`. `what` names it in errors,
  /// e.g. "executables[0]".
  static StatusOr<std::unique_ptr<SharedObject>>
  load(const uint8_t *bytes, size_t size, const std::string &what,
       Backing backing = Backing::Memfd);
  ~SharedObject();
  SharedObject(const SharedObject &) = delete;
  SharedObject &operator=(const SharedObject &) = delete;

  OwnSymbol lookup(const std::string &name) const;

private:
  SharedObject() = default;

  void *handle = nullptr;
  struct link_map *object = nullptr;
  // The file the object was loaded from stays open (memfd) or present
  // (temporary file) until dlclose: glibc recognises an already-loaded
  // object by its path, so a reused "/proc/self/fd/N" while the first
  // object is still loaded would hand back the wrong library.
  int fd = -1;
  std::string temporaryPath;
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_SHAREDOBJECT_H
