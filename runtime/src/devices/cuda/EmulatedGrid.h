//===- EmulatedGrid.h - one kernel launch on the CUDA emulator --*- C++ -*-===//
//
// What the emulator's driver (CudaEmulator.cpp) hands a launch to: a loaded
// CudaEmulator module (its kernels, its table of access and barrier sites,
// its globals) and runGrid, which runs every block of the grid, the threads
// of a block as fibers with CUDA's barrier semantics, and checks what the
// launch asks for.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_EMULATEDGRID_H
#define LCC_RUNTIME_EMULATEDGRID_H

#include "devices/cuda/CudaEmulator.h"
#include "formats/SharedObject.h"

#include "CudaEmulatorAbi.h"

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lcc::runtime::cuda {

/// An access or barrier of a kernel, as the module's table lists it.
struct EmulatorSite {
  enum class Kind { Load, Store, Atomic, Barrier, Warp, Async };
  enum class AsyncStep { Copy, Commit, Wait };
  enum class Space { Parameter, Shared, Global, Unknown };
  Kind kind = Kind::Load;
  uint32_t bytes = 0;
  Space space = Space::Unknown;
  uint32_t parameter = 0;   // Space::Parameter
  std::string global;       // Space::Global
  lcm::emulator::WarpOperation warpOperation = {}; // Kind::Warp
  AsyncStep asyncStep = AsyncStep::Copy;            // Kind::Async
  std::string kernel;
  std::string location;     // "model.mlir:12:8", or "-"
};

/// A module global (a kernel's scratch array) in the loaded object.
struct EmulatorGlobal {
  uint8_t *address = nullptr;
  uint64_t bytes = 0;
};

/// A CudaEmulator executable loaded for the driver (a CUmodule).
struct EmulatorModule {
  std::unique_ptr<SharedObject> object;
  std::vector<EmulatorSite> sites;
  uint64_t staticSharedBytes = 0;
  std::map<std::string, EmulatorGlobal> globals;

  /// Reads the object's tables; an error names the line at fault.
  Status readTables(const std::string &what);
};

using EmulatorEntry = void (*)(lcm::emulator::ThreadContext *thread,
                               void *const *parameters);

/// A kernel of a loaded module (a CUfunction).
struct EmulatorKernel {
  const EmulatorModule *module = nullptr;
  std::string name;
  EmulatorEntry entry = nullptr;
  uint32_t maxDynamicSharedBytes = 48 * 1024;
};

struct GridLaunch {
  const EmulatorKernel *kernel = nullptr;
  std::array<uint32_t, 3> grid{}, block{};
  uint32_t dynamicSharedBytes = 0;
  void *const *parameters = nullptr;
  /// What the device said of this launch; bindingBytes may be empty (the
  /// parameters' buffers are then the allocations they point into).
  EmulatedLaunch description;
};

/// What a launch found; `memoryError` when memcheck found an access
/// outside its buffer.
struct GridFindings {
  std::vector<std::string> lines;
  bool memoryError = false;
};

/// Where a parameter's buffer is: the allocation holding an address.
using AllocationLookup = bool (*)(const void *address, const uint8_t **base,
                                  uint64_t *bytes);

/// Runs every block of `launch`; its findings (none: the launch succeeded).
/// Fails only when the host cannot give the threads their stacks.
StatusOr<GridFindings> runGrid(const GridLaunch &launch,
                               AllocationLookup allocationOf);

} // namespace lcc::runtime::cuda

#endif // LCC_RUNTIME_EMULATEDGRID_H
