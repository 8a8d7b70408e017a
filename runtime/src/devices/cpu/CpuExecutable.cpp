//===- CpuExecutable.cpp - host shared objects loaded from memory ---------===//

#include "devices/cpu/CpuExecutable.h"

#include "module/KernelTemporaries.h"

#include <cerrno>
#include <cstring>
#include <sys/syscall.h>
#include <unistd.h>

namespace lcc::runtime {
namespace {

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

} // namespace

StatusOr<std::unique_ptr<CpuExecutable>>
CpuExecutable::load(const uint8_t *bytes, size_t size,
                    const std::vector<std::string> &entryPointNames,
                    const std::string &what, Backing backing) {
  StatusOr<std::unique_ptr<SharedObject>> object =
      SharedObject::load(bytes, size, what, backing);
  if (!object.ok())
    return object.getStatus();
  std::unique_ptr<CpuExecutable> executable(new CpuExecutable());
  executable->object = object.take();
  if (executable->object->lookup(kMatrixTilesSymbol).isDefined())
    LCC_RETURN_IF_ERROR(requestMatrixTiles(what));
  // Kernels that allocate keep their temporaries in this runtime's
  // per-thread cache instead of glibc's heap (KernelTemporaries.h).
  OwnSymbol setter = executable->object->lookup(kTemporaryAllocatorSymbol);
  if (setter.lookup == OwnSymbol::Function)
    reinterpret_cast<TemporaryAllocatorSetter>(setter.address)(
        allocateKernelTemporary, releaseKernelTemporary);
  for (const std::string &name : entryPointNames) {
    OwnSymbol entry = executable->object->lookup(name);
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

CpuExecutable::~CpuExecutable() = default;

} // namespace lcc::runtime
