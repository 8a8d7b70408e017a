//===- SharedObject.cpp - an ELF shared object loaded from memory ---------===//

#include "formats/SharedObject.h"

#include "formats/ElfImage.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace lcc::runtime {
namespace {

Status writeAll(int fd, const uint8_t *bytes, size_t size,
                const std::string &what) {
  while (size > 0) {
    ssize_t written = ::write(fd, bytes, size);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return Status::error(
          StatusCode::Internal, what,
          ": cannot write the shared object: ", std::strerror(errno));
    bytes += written;
    size -= size_t(written);
  }
  return Status();
}

std::string temporaryDirectory() {
  const char *dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

} // namespace

StatusOr<std::unique_ptr<SharedObject>>
SharedObject::load(const uint8_t *bytes, size_t size, const std::string &what,
                   Backing backing) {
  LCC_RETURN_IF_ERROR(checkSharedObjectImage(bytes, size, what));
  std::unique_ptr<SharedObject> loaded(new SharedObject());
  std::string path;
  int fd = backing == Backing::Memfd
               ? ::memfd_create("lcc_executable", MFD_CLOEXEC)
               : -1;
  if (fd >= 0) {
    path = "/proc/self/fd/" + std::to_string(fd);
  } else {
    // No memfd (old kernel, seccomp filter): a temporary file instead.
    std::string pattern = temporaryDirectory() + "/lcc_executable_XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0)
      return Status::error(StatusCode::Internal, what,
                           ": cannot create a file for the shared object: ",
                           std::strerror(errno));
    path = name.data();
    loaded->temporaryPath = path;
  }
  loaded->fd = fd;
  LCC_RETURN_IF_ERROR(writeAll(fd, bytes, size, what));

  ::dlerror();
  loaded->handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!loaded->handle) {
    const char *reason = ::dlerror();
    return Status::error(StatusCode::InvalidModule, what,
                         ": cannot load the shared object: ",
                         reason ? reason : "unknown dlopen error");
  }
  if (::dlinfo(loaded->handle, RTLD_DI_LINKMAP, &loaded->object) != 0 ||
      !loaded->object)
    return Status::error(StatusCode::Internal, what,
                         ": cannot inspect the loaded shared object");
  return loaded;
}

SharedObject::~SharedObject() {
  if (handle)
    ::dlclose(handle);
  if (fd >= 0)
    ::close(fd);
  if (!temporaryPath.empty())
    ::unlink(temporaryPath.c_str());
}

OwnSymbol SharedObject::lookup(const std::string &name) const {
  ::dlerror();
  void *symbol = ::dlsym(handle, name.c_str());
  if (!symbol)
    return {OwnSymbol::Absent};
  Dl_info info;
  struct link_map *owner = nullptr;
  void *entry = nullptr;
  if (!::dladdr1(symbol, &info, reinterpret_cast<void **>(&owner),
                 RTLD_DL_LINKMAP) ||
      owner != object)
    return {OwnSymbol::DefinedElsewhere, nullptr,
            info.dli_fname ? info.dli_fname : "another object"};
  bool function =
      ::dladdr1(symbol, &info, &entry, RTLD_DL_SYMENT) && entry &&
      ELF64_ST_TYPE(static_cast<const ElfW(Sym) *>(entry)->st_info) == STT_FUNC;
  return {function ? OwnSymbol::Function : OwnSymbol::Data, symbol};
}

} // namespace lcc::runtime
