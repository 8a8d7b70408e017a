//===- CpuExecutable.cpp - host shared objects loaded from memory ---------===//

#include "CpuExecutable.h"

#include "ElfImage.h"
#include "KernelTemporaries.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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

/// What the compiler exports when its kernels use AMX tiles
/// (compiler/CpuTarget.h, kMatrixTilesSymbol).
constexpr const char *kMatrixTilesSymbol = "lcc_uses_amx_tiles";

/// Asks Linux for the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM,
/// XFEATURE_XTILEDATA), once per process: without it the first tile
/// instruction kills the process with SIGILL.
Status requestMatrixTiles(const std::string &what) {
#if defined(__x86_64__) && defined(__linux__)
  constexpr long kRequestPermission = 0x1023; // ARCH_REQ_XCOMP_PERM
  constexpr long kTileData = 18;              // XFEATURE_XTILEDATA
  static const int error = [] {
    return ::syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0
               ? 0
               : errno;
  }();
  if (error == 0)
    return Status();
  return Status::error(StatusCode::Unavailable, what,
                       " runs AMX tile instructions (compiled for a CPU with "
                       "amx_bf16), and the kernel does not grant this process "
                       "the tile state: ",
                       std::strerror(error),
                       "; compile it for this machine (lcc --cpu=native)");
#else
  return Status::error(StatusCode::Unavailable, what,
                       " runs AMX tile instructions, which this runtime only "
                       "runs on x86-64 Linux");
#endif
}

/// What a CPU executable exports when its kernels allocate heap
/// temporaries (compiler/CpuTarget.h, kTemporaryAllocatorSymbol): the
/// setter of the allocator they use.
constexpr const char *kTemporaryAllocatorSymbol = "lcc_use_temporary_allocator";
using TemporaryAllocatorSetter = void (*)(void *(*)(size_t, size_t),
                                          void (*)(void *));

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

OwnSymbol ownSymbol(void *handle, struct link_map *object,
                    const std::string &name) {
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

} // namespace

StatusOr<std::unique_ptr<CpuExecutable>>
CpuExecutable::load(const uint8_t *bytes, size_t size,
                    const std::vector<std::string> &entryPointNames,
                    const std::string &what, Backing backing) {
  LCC_RETURN_IF_ERROR(checkSharedObjectImage(bytes, size, what));
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
  struct link_map *object = nullptr;
  if (::dlinfo(executable->handle, RTLD_DI_LINKMAP, &object) != 0 || !object)
    return Status::error(StatusCode::Internal, what,
                         ": cannot inspect the loaded shared object");
  if (ownSymbol(executable->handle, object, kMatrixTilesSymbol).isDefined())
    LCC_RETURN_IF_ERROR(requestMatrixTiles(what));
  // Kernels that allocate keep their temporaries in this runtime's
  // per-thread cache instead of glibc's heap (KernelTemporaries.h).
  OwnSymbol setter =
      ownSymbol(executable->handle, object, kTemporaryAllocatorSymbol);
  if (setter.lookup == OwnSymbol::Function)
    reinterpret_cast<TemporaryAllocatorSetter>(setter.address)(
        allocateKernelTemporary, releaseKernelTemporary);
  for (const std::string &name : entryPointNames) {
    OwnSymbol entry = ownSymbol(executable->handle, object, name);
    switch (entry.lookup) {
    case OwnSymbol::Function:
      break;
    case OwnSymbol::Absent:
      return Status::error(StatusCode::NotFound, what, " has no entry point ",
                           quoted(name), " (no such exported symbol)");
    case OwnSymbol::DefinedElsewhere:
      return Status::error(
          StatusCode::InvalidModule, what, ": entry point ", quoted(name),
          " is not defined by the module's shared object (it resolves to ",
          quoted(entry.owner), ")");
    case OwnSymbol::Data:
      return Status::error(StatusCode::InvalidModule, what, ": entry point ",
                           quoted(name), " is not a function");
    }
    executable->entryPoints.push_back(
        reinterpret_cast<KernelFunction>(entry.address));
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
