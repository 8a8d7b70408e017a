//===- CpuExecutable.cpp - host shared objects loaded from memory ---------===//

#include "CpuExecutable.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

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

StatusOr<std::unique_ptr<CpuExecutable>>
CpuExecutable::load(const uint8_t *bytes, size_t size,
                    const std::vector<std::string> &entryPointNames,
                    const std::string &what, Backing backing) {
  std::unique_ptr<CpuExecutable> executable(new CpuExecutable());
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
    executable->temporaryPath = path;
  }
  executable->fd = fd;
  LCC_RETURN_IF_ERROR(writeAll(fd, bytes, size, what));

  ::dlerror();
  executable->handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!executable->handle) {
    const char *reason = ::dlerror();
    return Status::error(StatusCode::InvalidModule, what,
                         ": cannot load the shared object: ",
                         reason ? reason : "unknown dlopen error");
  }
  for (const std::string &name : entryPointNames) {
    ::dlerror();
    void *symbol = ::dlsym(executable->handle, name.c_str());
    if (!symbol)
      return Status::error(StatusCode::NotFound, what, " has no entry point '",
                           name, "' (no such exported symbol)");
    executable->entryPoints.push_back(reinterpret_cast<KernelFunction>(symbol));
  }
  return executable;
}

CpuExecutable::~CpuExecutable() {
  if (handle)
    ::dlclose(handle);
  if (fd >= 0)
    ::close(fd);
  if (!temporaryPath.empty())
    ::unlink(temporaryPath.c_str());
}

} // namespace lcc::runtime
