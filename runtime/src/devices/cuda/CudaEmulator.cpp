//===- CudaEmulator.cpp - a CUDA driver that runs kernels on the CPU ------===//
//
// The driver entry points of CudaDriver.h over host memory and CudaEmulator
// modules. State shared by every context (allocations, what each handle
// is) sits behind one mutex; a launch runs on the calling thread
// (EmulatedGrid.cpp), synchronously, so a stream is always idle and an event
// records the host clock.
//
//===----------------------------------------------------------------------===//

#include "devices/cuda/CudaEmulator.h"

#include "devices/cuda/EmulatedGrid.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <unistd.h>

namespace lcc::runtime::cuda {
namespace {

namespace abi = lcm::emulator;

/// The GPU the emulator presents: an sm_90 part with the H100's limits.
constexpr int kComputeMajor = 9, kComputeMinor = 0;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kMaxBlock[3] = {1024, 1024, 64};
constexpr int kMaxGrid[3] = {2147483647, 65535, 65535};
constexpr int kMaxSharedOptIn = 232448;
constexpr uint32_t kDefaultSharedBytes = 48 * 1024;
constexpr size_t kAllocationAlignment = 256;

struct LoadedModule {
  EmulatorModule module;
  std::map<std::string, std::unique_ptr<EmulatorKernel>> kernels;
};

struct Event {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};

/// Everything every context of the process shares.
struct DriverState {
  std::mutex mutex;
  std::map<uintptr_t, uint64_t> allocations; // base -> bytes
};

DriverState &state() {
  static DriverState *shared = new DriverState(); // never destroyed
  return *shared;
}

thread_local EmulatedLaunch nextLaunch;
thread_local std::vector<std::string> lastFindings;

bool allocationOf(const void *address, const uint8_t **base, uint64_t *bytes) {
  DriverState &driver = state();
  std::lock_guard<std::mutex> lock(driver.mutex);
  auto at = reinterpret_cast<uintptr_t>(address);
  auto next = driver.allocations.upper_bound(at);
  if (next == driver.allocations.begin())
    return false;
  --next;
  if (at - next->first >= next->second)
    return false;
  *base = reinterpret_cast<const uint8_t *>(next->first);
  *bytes = next->second;
  return true;
}

/// Whether [address, address + size) lies in one allocation.
bool isDeviceRange(CUdeviceptr address, size_t size) {
  const uint8_t *base = nullptr;
  uint64_t bytes = 0;
  auto *at = reinterpret_cast<const uint8_t *>(uintptr_t(address));
  return allocationOf(at, &base, &bytes) &&
         uint64_t(at - base) + size <= bytes;
}

CUresult emuInit(unsigned int) { return CUDA_SUCCESS; }

CUresult emuGetErrorName(CUresult error, const char **name) {
  switch (error) {
#define LCC_NAME(code)                                                         \
  case code:                                                                   \
    *name = #code;                                                             \
    return CUDA_SUCCESS;
    LCC_NAME(CUDA_SUCCESS)
    LCC_NAME(CUDA_ERROR_INVALID_VALUE)
    LCC_NAME(CUDA_ERROR_OUT_OF_MEMORY)
    LCC_NAME(CUDA_ERROR_INVALID_DEVICE)
    LCC_NAME(CUDA_ERROR_INVALID_IMAGE)
    LCC_NAME(CUDA_ERROR_NOT_FOUND)
    LCC_NAME(CUDA_ERROR_ILLEGAL_ADDRESS)
    LCC_NAME(CUDA_ERROR_LAUNCH_FAILED)
#undef LCC_NAME
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult emuGetErrorString(CUresult error, const char **text) {
  switch (error) {
  case CUDA_SUCCESS:
    *text = "no error";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_VALUE:
    *text = "invalid argument";
    return CUDA_SUCCESS;
  case CUDA_ERROR_OUT_OF_MEMORY:
    *text = "out of memory";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_DEVICE:
    *text = "invalid device ordinal";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_IMAGE:
    *text = "device kernel image is invalid";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NOT_FOUND:
    *text = "named symbol not found";
    return CUDA_SUCCESS;
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    *text = "an illegal memory access was encountered";
    return CUDA_SUCCESS;
  case CUDA_ERROR_LAUNCH_FAILED:
    *text = "unspecified launch failure";
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult emuDeviceGet(CUdevice *device, int ordinal) {
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult emuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                               CUdevice device) {
  if (!value || device != 0)
    return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = kMaxThreadsPerBlock;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
    *value = kMaxBlock[attribute - CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X];
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
    *value = kMaxGrid[attribute - CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X];
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = kComputeMajor;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = kComputeMinor;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = kMaxSharedOptIn;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult emuDeviceGetName(char *name, int length, CUdevice device) {
  if (!name || length <= 0 || device != 0)
    return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, size_t(length), "CUDA emulator");
  return CUDA_SUCCESS;
}

CUresult emuDeviceTotalMem(size_t *bytes, CUdevice device) {
  if (!bytes || device != 0)
    return CUDA_ERROR_INVALID_VALUE;
  *bytes = size_t(::sysconf(_SC_PHYS_PAGES)) * size_t(::sysconf(_SC_PAGESIZE));
  return CUDA_SUCCESS;
}

/// The one context; its address is all a CUcontext is.
CUcontext primaryContext() {
  static char context;
  return reinterpret_cast<CUcontext>(&context);
}

CUresult emuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  if (!context || device != 0)
    return CUDA_ERROR_INVALID_VALUE;
  *context = primaryContext();
  return CUDA_SUCCESS;
}

CUresult emuDevicePrimaryCtxRelease(CUdevice device) {
  return device == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult emuCtxPushCurrent(CUcontext context) {
  return context == primaryContext() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult emuCtxPopCurrent(CUcontext *context) {
  if (context)
    *context = primaryContext();
  return CUDA_SUCCESS;
}

CUresult emuMemAlloc(CUdeviceptr *address, size_t size) {
  if (!address || size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  void *bytes = nullptr;
  if (::posix_memalign(&bytes, kAllocationAlignment, size) != 0)
    return CUDA_ERROR_OUT_OF_MEMORY;
  DriverState &driver = state();
  std::lock_guard<std::mutex> lock(driver.mutex);
  driver.allocations[reinterpret_cast<uintptr_t>(bytes)] = size;
  *address = CUdeviceptr(reinterpret_cast<uintptr_t>(bytes));
  return CUDA_SUCCESS;
}

CUresult emuMemFree(CUdeviceptr address) {
  DriverState &driver = state();
  std::lock_guard<std::mutex> lock(driver.mutex);
  auto found = driver.allocations.find(uintptr_t(address));
  if (found == driver.allocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  driver.allocations.erase(found);
  std::free(reinterpret_cast<void *>(uintptr_t(address)));
  return CUDA_SUCCESS;
}

void *hostAddress(CUdeviceptr address) {
  return reinterpret_cast<void *>(uintptr_t(address));
}

CUresult emuMemsetD8(CUdeviceptr address, unsigned char value, size_t count) {
  if (!isDeviceRange(address, count))
    return CUDA_ERROR_INVALID_VALUE;
  std::memset(hostAddress(address), value, count);
  return CUDA_SUCCESS;
}

CUresult emuMemcpyHtoD(CUdeviceptr target, const void *source, size_t size) {
  if (!isDeviceRange(target, size) || (size && !source))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(hostAddress(target), source, size);
  return CUDA_SUCCESS;
}

CUresult emuMemcpyDtoH(void *target, CUdeviceptr source, size_t size) {
  if (!isDeviceRange(source, size) || (size && !target))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(target, hostAddress(source), size);
  return CUDA_SUCCESS;
}

CUresult emuMemcpyDtoDAsync(CUdeviceptr target, CUdeviceptr source,
                            size_t size, CUstream) {
  if (!isDeviceRange(target, size) || !isDeviceRange(source, size))
    return CUDA_ERROR_INVALID_VALUE;
  std::memmove(hostAddress(target), hostAddress(source), size);
  return CUDA_SUCCESS;
}

CUresult emuStreamCreate(CUstream *stream, unsigned int) {
  if (!stream)
    return CUDA_ERROR_INVALID_VALUE;
  *stream = reinterpret_cast<CUstream>(new char);
  return CUDA_SUCCESS;
}

CUresult emuStreamDestroy(CUstream stream) {
  delete reinterpret_cast<char *>(stream);
  return CUDA_SUCCESS;
}

CUresult emuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }

CUresult emuEventCreate(CUevent *event, unsigned int) {
  if (!event)
    return CUDA_ERROR_INVALID_VALUE;
  *event = reinterpret_cast<CUevent>(new Event());
  return CUDA_SUCCESS;
}

CUresult emuEventDestroy(CUevent event) {
  delete reinterpret_cast<Event *>(event);
  return CUDA_SUCCESS;
}

CUresult emuEventRecord(CUevent event, CUstream) {
  if (!event)
    return CUDA_ERROR_INVALID_VALUE;
  auto *recorded = reinterpret_cast<Event *>(event);
  recorded->time = std::chrono::steady_clock::now();
  recorded->recorded = true;
  return CUDA_SUCCESS;
}

CUresult emuEventElapsedTime(float *milliseconds, CUevent start, CUevent end) {
  auto *from = reinterpret_cast<Event *>(start);
  auto *to = reinterpret_cast<Event *>(end);
  if (!milliseconds || !from || !to || !from->recorded || !to->recorded)
    return CUDA_ERROR_INVALID_VALUE;
  *milliseconds =
      std::chrono::duration<float, std::milli>(to->time - from->time).count();
  return CUDA_SUCCESS;
}

/// The bytes of the ELF object at `image`: up to the end of its section
/// headers or of the furthest segment, as a driver reads a cubin.
size_t elfImageSize(const uint8_t *image) {
  Elf64_Ehdr header;
  std::memcpy(&header, image, sizeof(header));
  size_t end = std::max<size_t>(sizeof(header),
                                header.e_shoff + size_t(header.e_shnum) *
                                                     header.e_shentsize);
  end = std::max<size_t>(end, header.e_phoff + size_t(header.e_phnum) *
                                                   header.e_phentsize);
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, image + header.e_phoff + i * header.e_phentsize,
                sizeof(segment));
    end = std::max<size_t>(end, segment.p_offset + segment.p_filesz);
  }
  return end;
}

/// Writes `message` to the JIT error log the caller passed, if any.
void writeLog(unsigned int optionCount, CUjit_option *options, void **values,
              const std::string &message) {
  char *log = nullptr;
  size_t size = 0;
  for (unsigned i = 0; options && values && i < optionCount; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
      log = static_cast<char *>(values[i]);
    else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      size = size_t(reinterpret_cast<uintptr_t>(values[i]));
  }
  if (log && size > 0)
    std::snprintf(log, size, "%s", message.c_str());
}

CUresult emuModuleLoadDataEx(CUmodule *module, const void *image,
                             unsigned int optionCount, CUjit_option *options,
                             void **optionValues) {
  if (!module || !image)
    return CUDA_ERROR_INVALID_VALUE;
  auto *bytes = static_cast<const uint8_t *>(image);
  if (std::memcmp(bytes, ELFMAG, SELFMAG) != 0) {
    writeLog(optionCount, options, optionValues,
             "the CUDA emulator runs CudaEmulator executables (an x86-64 "
             "shared object), not PTX or a cubin");
    return CUDA_ERROR_INVALID_IMAGE;
  }
  auto loaded = std::make_unique<LoadedModule>();
  std::string what = "the CUDA emulator's module";
  StatusOr<std::unique_ptr<SharedObject>> object =
      SharedObject::load(bytes, elfImageSize(bytes), what);
  Status status = object.ok() ? Status() : object.getStatus();
  if (status.ok()) {
    loaded->module.object = object.take();
    status = loaded->module.readTables(what);
  }
  if (!status.ok()) {
    writeLog(optionCount, options, optionValues, status.getMessage());
    return CUDA_ERROR_INVALID_IMAGE;
  }
  *module = reinterpret_cast<CUmodule>(loaded.release());
  return CUDA_SUCCESS;
}

CUresult emuModuleUnload(CUmodule module) {
  delete reinterpret_cast<LoadedModule *>(module);
  return CUDA_SUCCESS;
}

CUresult emuModuleGetFunction(CUfunction *function, CUmodule module,
                              const char *name) {
  if (!function || !module || !name)
    return CUDA_ERROR_INVALID_VALUE;
  auto *loaded = reinterpret_cast<LoadedModule *>(module);
  std::unique_ptr<EmulatorKernel> &kernel = loaded->kernels[name];
  if (!kernel) {
    OwnSymbol entry =
        loaded->module.object->lookup(abi::kKernelPrefix + std::string(name));
    if (entry.lookup != OwnSymbol::Function) {
      loaded->kernels.erase(name);
      return CUDA_ERROR_NOT_FOUND;
    }
    kernel = std::make_unique<EmulatorKernel>();
    kernel->module = &loaded->module;
    kernel->name = name;
    kernel->entry = reinterpret_cast<EmulatorEntry>(entry.address);
  }
  *function = reinterpret_cast<CUfunction>(kernel.get());
  return CUDA_SUCCESS;
}

CUresult emuModuleGetGlobal(CUdeviceptr *address, size_t *size,
                            CUmodule module, const char *name) {
  if (!module || !name)
    return CUDA_ERROR_INVALID_VALUE;
  auto *loaded = reinterpret_cast<LoadedModule *>(module);
  auto found = loaded->module.globals.find(name);
  if (found == loaded->module.globals.end())
    return CUDA_ERROR_NOT_FOUND;
  if (address)
    *address = CUdeviceptr(reinterpret_cast<uintptr_t>(found->second.address));
  if (size)
    *size = found->second.bytes;
  return CUDA_SUCCESS;
}

CUresult emuFuncSetAttribute(CUfunction function,
                             CUfunction_attribute attribute, int value) {
  auto *kernel = reinterpret_cast<EmulatorKernel *>(function);
  if (!kernel || attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ||
      value < 0 ||
      uint64_t(value) + kernel->module->staticSharedBytes > kMaxSharedOptIn)
    return CUDA_ERROR_INVALID_VALUE;
  kernel->maxDynamicSharedBytes = uint32_t(value);
  return CUDA_SUCCESS;
}

CUresult emuLaunchKernel(CUfunction function, unsigned int gridX,
                         unsigned int gridY, unsigned int gridZ,
                         unsigned int blockX, unsigned int blockY,
                         unsigned int blockZ, unsigned int sharedMemoryBytes,
                         CUstream, void **parameters, void **extra) {
  EmulatedLaunch description = std::move(nextLaunch);
  nextLaunch = EmulatedLaunch();
  lastFindings.clear();
  auto *kernel = reinterpret_cast<EmulatorKernel *>(function);
  GridLaunch launch;
  launch.kernel = kernel;
  launch.grid = {gridX, gridY, gridZ};
  launch.block = {blockX, blockY, blockZ};
  launch.dynamicSharedBytes = sharedMemoryBytes;
  launch.parameters = parameters;
  launch.description = std::move(description);
  uint64_t threads = uint64_t(blockX) * blockY * blockZ;
  bool shapeFits = kernel && extra == nullptr && threads >= 1 &&
                   threads <= uint64_t(kMaxThreadsPerBlock) && gridX >= 1 &&
                   gridY >= 1 && gridZ >= 1;
  for (int axis = 0; shapeFits && axis < 3; ++axis)
    shapeFits = launch.block[axis] <= unsigned(kMaxBlock[axis]) &&
                launch.grid[axis] <= unsigned(kMaxGrid[axis]);
  if (!shapeFits || sharedMemoryBytes > std::max(kernel->maxDynamicSharedBytes,
                                                 kDefaultSharedBytes))
    return CUDA_ERROR_INVALID_VALUE;
  StatusOr<GridFindings> findings = runGrid(launch, allocationOf);
  if (!findings.ok()) {
    lastFindings = {findings.getStatus().getMessage()};
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (findings->lines.empty())
    return CUDA_SUCCESS;
  lastFindings = std::move(findings->lines);
  return findings->memoryError ? CUDA_ERROR_ILLEGAL_ADDRESS
                               : CUDA_ERROR_LAUNCH_FAILED;
}

/// Splits "key value..." lines; the last field takes the rest of the line.
std::vector<std::string> fields(const std::string &line, size_t count) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (parts.size() + 1 < count) {
    size_t space = line.find(' ', at);
    if (space == std::string::npos)
      break;
    parts.push_back(line.substr(at, space - at));
    at = space + 1;
  }
  parts.push_back(line.substr(at));
  return parts;
}

} // namespace

Status EmulatorModule::readTables(const std::string &what) {
  auto table = [&](const char *symbol, std::string &text) -> Status {
    OwnSymbol found = object->lookup(symbol);
    if (found.lookup != OwnSymbol::Data)
      return Status::error(StatusCode::InvalidModule, what, " has no table ",
                           symbol, ": not a CudaEmulator executable");
    text = static_cast<const char *>(found.address);
    return Status();
  };
  std::string sitesText, globalsText;
  LCC_RETURN_IF_ERROR(table(abi::kSitesSymbol, sitesText));
  LCC_RETURN_IF_ERROR(table(abi::kGlobalsSymbol, globalsText));
  auto invalid = [&](const char *symbol, const std::string &line) {
    return Status::error(StatusCode::InvalidModule, what, ": ", symbol,
                         " has a line it cannot read: ", quoted(line));
  };
  std::istringstream lines(sitesText);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> parts = fields(line, 6);
    EmulatorSite site;
    if (parts[0] == "shared-static" && parts.size() == 2) {
      staticSharedBytes = std::strtoull(parts[1].c_str(), nullptr, 10);
      continue;
    }
    if (parts[0] == "barrier") {
      parts = fields(line, 3);
      if (parts.size() != 3)
        return invalid(abi::kSitesSymbol, line);
      site.kind = EmulatorSite::Kind::Barrier;
      site.kernel = parts[1];
      site.location = parts[2];
      sites.push_back(std::move(site));
      continue;
    }
    if (parts[0] == "warp") {
      parts = fields(line, 4);
      const auto *names = std::begin(abi::kWarpOperationNames);
      const auto *name = parts.size() == 4
                             ? std::find(names, std::end(abi::kWarpOperationNames),
                                         parts[2])
                             : std::end(abi::kWarpOperationNames);
      if (name == std::end(abi::kWarpOperationNames))
        return invalid(abi::kSitesSymbol, line);
      site.kind = EmulatorSite::Kind::Warp;
      site.warpOperation = abi::WarpOperation(name - names);
      if (abi::isLdMatrix(site.warpOperation)) {
        // Each lane's row: a 16-byte load from shared memory.
        site.space = EmulatorSite::Space::Shared;
        site.bytes = 16;
      }
      site.kernel = parts[1];
      site.location = parts[3];
      sites.push_back(std::move(site));
      continue;
    }
    if (parts[0] == "async") {
      parts = fields(line, 5);
      site.kind = EmulatorSite::Kind::Async;
      if (parts.size() == 5 && parts[2] == "copy") {
        site.asyncStep = EmulatorSite::AsyncStep::Copy;
        site.bytes = uint32_t(std::strtoul(parts[3].c_str(), nullptr, 10));
        site.space = EmulatorSite::Space::Shared;
        if (site.bytes != 4 && site.bytes != 8 && site.bytes != 16)
          return invalid(abi::kSitesSymbol, line);
        site.location = parts[4];
      } else {
        parts = fields(line, 4);
        if (parts.size() != 4 || (parts[2] != "commit" && parts[2] != "wait"))
          return invalid(abi::kSitesSymbol, line);
        site.asyncStep = parts[2] == "commit" ? EmulatorSite::AsyncStep::Commit
                                              : EmulatorSite::AsyncStep::Wait;
        site.location = parts[3];
      }
      site.kernel = parts[1];
      sites.push_back(std::move(site));
      continue;
    }
    if (parts[0] != "access" || parts.size() != 6)
      return invalid(abi::kSitesSymbol, line);
    site.kernel = parts[1];
    if (parts[2] == "load")
      site.kind = EmulatorSite::Kind::Load;
    else if (parts[2] == "store")
      site.kind = EmulatorSite::Kind::Store;
    else if (parts[2] == "atomic")
      site.kind = EmulatorSite::Kind::Atomic;
    else
      return invalid(abi::kSitesSymbol, line);
    site.bytes = uint32_t(std::strtoul(parts[3].c_str(), nullptr, 10));
    const std::string &space = parts[4];
    if (space.rfind("param:", 0) == 0) {
      site.space = EmulatorSite::Space::Parameter;
      site.parameter = uint32_t(std::strtoul(space.c_str() + 6, nullptr, 10));
    } else if (space == "shared") {
      site.space = EmulatorSite::Space::Shared;
    } else if (space.rfind("global:", 0) == 0) {
      site.space = EmulatorSite::Space::Global;
      site.global = space.substr(7);
    } else if (space != "unknown") {
      return invalid(abi::kSitesSymbol, line);
    }
    if (site.bytes == 0 || site.bytes > 64)
      return invalid(abi::kSitesSymbol, line);
    site.location = parts[5];
    sites.push_back(std::move(site));
  }
  std::istringstream globalLines(globalsText);
  for (std::string line; std::getline(globalLines, line);) {
    std::vector<std::string> parts = fields(line, 2);
    if (parts.size() != 2)
      return invalid(abi::kGlobalsSymbol, line);
    OwnSymbol symbol = object->lookup(parts[0]);
    if (symbol.lookup != OwnSymbol::Data)
      return invalid(abi::kGlobalsSymbol, line);
    globals[parts[0]] = {static_cast<uint8_t *>(symbol.address),
                         std::strtoull(parts[1].c_str(), nullptr, 10)};
  }
  return Status();
}

void describeNextLaunch(EmulatedLaunch launch) {
  nextLaunch = std::move(launch);
}

std::vector<std::string> takeFindings() { return std::move(lastFindings); }

bool EmulatorOptions::parseChecks(const std::string &text) {
  memcheck = racecheck = false;
  if (text == "none")
    return true;
  std::istringstream names(text);
  std::string name;
  bool any = false;
  while (std::getline(names, name, ',')) {
    if (name == "memcheck")
      memcheck = true;
    else if (name == "racecheck")
      racecheck = true;
    else
      return false;
    any = true;
  }
  return any;
}

bool EmulatorOptions::parseThreadOrder(const std::string &text) {
  if (text == "forward") {
    order = ThreadOrder::Forward;
    return true;
  }
  if (text == "reversed") {
    order = ThreadOrder::Reversed;
    return true;
  }
  if (text.rfind("shuffled", 0) != 0)
    return false;
  order = ThreadOrder::Shuffled;
  seed = 0;
  if (text.size() == 8)
    return true;
  if (text[8] != ':' || text.size() == 9 || text.size() > 9 + 19)
    return false;
  for (size_t i = 9; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9')
      return false;
    seed = seed * 10 + uint64_t(text[i] - '0');
  }
  return true;
}

std::string EmulatorOptions::describeChecks() const {
  if (memcheck && racecheck)
    return "memcheck,racecheck";
  if (memcheck)
    return "memcheck";
  return racecheck ? "racecheck" : "none";
}

std::shared_ptr<const CudaDriver> CudaDriver::emulator() {
  std::shared_ptr<CudaDriver> driver(new CudaDriver());
  driver->path = "the CUDA emulator";
  driver->emulated = true;
  driver->cuInit = emuInit;
  driver->cuGetErrorName = emuGetErrorName;
  driver->cuGetErrorString = emuGetErrorString;
  driver->cuDeviceGet = emuDeviceGet;
  driver->cuDeviceGetAttribute = emuDeviceGetAttribute;
  driver->cuDeviceGetName = emuDeviceGetName;
  driver->cuDeviceTotalMem = emuDeviceTotalMem;
  driver->cuDevicePrimaryCtxRetain = emuDevicePrimaryCtxRetain;
  driver->cuDevicePrimaryCtxRelease = emuDevicePrimaryCtxRelease;
  driver->cuCtxPushCurrent = emuCtxPushCurrent;
  driver->cuCtxPopCurrent = emuCtxPopCurrent;
  driver->cuMemAlloc = emuMemAlloc;
  driver->cuMemFree = emuMemFree;
  driver->cuMemsetD8 = emuMemsetD8;
  driver->cuMemcpyHtoD = emuMemcpyHtoD;
  driver->cuMemcpyDtoH = emuMemcpyDtoH;
  driver->cuMemcpyDtoDAsync = emuMemcpyDtoDAsync;
  driver->cuStreamCreate = emuStreamCreate;
  driver->cuStreamDestroy = emuStreamDestroy;
  driver->cuStreamSynchronize = emuStreamSynchronize;
  driver->cuEventCreate = emuEventCreate;
  driver->cuEventDestroy = emuEventDestroy;
  driver->cuEventRecord = emuEventRecord;
  driver->cuEventElapsedTime = emuEventElapsedTime;
  driver->cuModuleLoadDataEx = emuModuleLoadDataEx;
  driver->cuModuleUnload = emuModuleUnload;
  driver->cuModuleGetFunction = emuModuleGetFunction;
  driver->cuModuleGetGlobal = emuModuleGetGlobal;
  driver->cuFuncSetAttribute = emuFuncSetAttribute;
  driver->cuLaunchKernel = emuLaunchKernel;
  return driver;
}

} // namespace lcc::runtime::cuda
