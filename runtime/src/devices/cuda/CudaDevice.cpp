//===- CudaDevice.cpp - runs modules on an NVIDIA GPU ---------------------===//

#include "devices/cuda/CudaDevice.h"

#include <cstdint>
#include <sstream>

namespace lcc::runtime {

using namespace cuda;

namespace {

/// Dynamic shared memory a kernel may use without opting in.
constexpr uint32_t kDefaultSharedMemoryBytes = 48 * 1024;

CUdeviceptr toDevice(const void *address) {
  return CUdeviceptr(reinterpret_cast<uintptr_t>(address));
}

void *fromDevice(CUdeviceptr address) {
  return reinterpret_cast<void *>(uintptr_t(address));
}

template <typename T> std::string formatTriple(const std::array<T, 3> &values) {
  std::ostringstream os;
  os << '[' << values[0] << ", " << values[1] << ", " << values[2] << ']';
  return os.str();
}

/// Makes the device's context current on the calling thread for a scope,
/// then restores the caller's: the runtime may be called from any thread,
/// of an application that may use CUDA itself.
class CurrentContext {
public:
  CurrentContext(const CudaDriver &driver, CUcontext context)
      : driver(driver), result(driver.cuCtxPushCurrent(context)) {}
  ~CurrentContext() {
    CUcontext previous;
    if (result == CUDA_SUCCESS)
      driver.cuCtxPopCurrent(&previous);
  }
  CurrentContext(const CurrentContext &) = delete;
  CurrentContext &operator=(const CurrentContext &) = delete;

  Status check() const {
    if (result == CUDA_SUCCESS)
      return Status();
    return driver.check(result, "making its context current");
  }

private:
  const CudaDriver &driver;
  CUresult result;
};

/// Device memory from cuMemAlloc, zero-filled like the CPU's.
class CudaAllocator final : public Allocator {
public:
  CudaAllocator(std::shared_ptr<const CudaDriver> driver, CUcontext context)
      : driver(std::move(driver)), context(context) {}

protected:
  StatusOr<void *> allocateZeroed(uint64_t reserved, uint64_t size,
                                  const std::string &what) override {
    CurrentContext current(*driver, context);
    LCC_RETURN_IF_ERROR(current.check());
    CUdeviceptr address = 0;
    LCC_RETURN_IF_ERROR(driver->check(driver->cuMemAlloc(&address, reserved),
                                      "cuMemAlloc of " + std::to_string(size) +
                                          " bytes for " + what));
    Status zeroed = driver->check(driver->cuMemsetD8(address, 0, reserved),
                                  "zero-filling " + std::to_string(size) +
                                      " bytes for " + what);
    if (!zeroed.ok()) {
      driver->cuMemFree(address);
      return zeroed;
    }
    return fromDevice(address);
  }

  void free(void *bytes) override {
    CurrentContext current(*driver, context);
    // A destructor has no one to report a failure to.
    driver->cuMemFree(toDevice(bytes));
  }

private:
  std::shared_ptr<const CudaDriver> driver;
  CUcontext context;
};

/// An entry point's kernel and how to launch it.
struct Kernel {
  std::string name;
  CUfunction function = nullptr;
  std::array<uint32_t, 3> block{};
  uint32_t sharedMemoryBytes = 0;
};

/// A loaded CUmodule and its kernels, in entry point order.
class CudaExecutable final : public DeviceExecutable {
public:
  CudaExecutable(std::shared_ptr<const CudaDriver> driver, CUcontext context,
                 CUmodule module, Allocator &allocator)
      : driver(std::move(driver)), context(context), module(module),
        allocator(allocator) {}
  ~CudaExecutable() override {
    CurrentContext current(*driver, context);
    driver->cuModuleUnload(module);
    allocator.uncountHeld(globalBytes);
  }

  /// Counts the global scratch array of `kernel` (lcc places tile buffers
  /// too large for shared memory in `<kernel>_scratch`), which the driver
  /// allocated when it loaded the module.
  void countScratch(const Kernel &kernel) {
    CUdeviceptr address = 0;
    size_t bytes = 0;
    std::string name = kernel.name + "_scratch";
    if (driver->cuModuleGetGlobal(&address, &bytes, module, name.c_str()) !=
        CUDA_SUCCESS)
      return;
    allocator.countHeld(bytes);
    globalBytes += bytes;
  }

  std::vector<Kernel> kernels;

private:
  std::shared_ptr<const CudaDriver> driver;
  CUcontext context;
  CUmodule module;
  Allocator &allocator;
  uint64_t globalBytes = 0;
};

/// A command ready to launch or copy.
struct CudaCommand {
  lcm::CommandKind kind = lcm::CommandKind::Dispatch;
  std::string name;
  std::string location;
  // Dispatch.
  const Kernel *kernel = nullptr;
  std::vector<uint64_t> bindingLengths;
  std::array<uint32_t, 3> grid{};
  std::vector<CUdeviceptr> arguments; // one device pointer per binding
  std::vector<void *> parameters;     // &arguments[i], as cuLaunchKernel wants
  // Copy; `bounce` is set when source and target overlap.
  CUdeviceptr target = 0, source = 0, bounce = 0;
  uint64_t length = 0;
  // AllReduce: run on the host after the stream has drained.
  std::function<Status()> hostStep;
};

/// Commands issued in order on the device's stream, with an event before
/// the first and after each: the time between two events is a command's
/// time on the GPU.
class CudaCommandList final : public CommandList {
public:
  CudaCommandList(std::shared_ptr<const CudaDriver> driver, CUcontext context,
                  CUstream stream, std::string path,
                  std::shared_ptr<const EmulatorOptions> emulatorOptions)
      : driver(std::move(driver)), context(context), stream(stream),
        path(std::move(path)), emulatorOptions(std::move(emulatorOptions)) {}
  ~CudaCommandList() override {
    CurrentContext current(*driver, context);
    for (CUevent event : events)
      driver->cuEventDestroy(event);
  }

  Status run(uint64_t *nanoseconds) override {
    CurrentContext current(*driver, context);
    LCC_RETURN_IF_ERROR(current.check());
    LCC_RETURN_IF_ERROR(record(0));
    for (size_t c = 0; c < commands.size(); ++c) {
      CudaCommand &command = commands[c];
      if (command.kind == lcm::CommandKind::Dispatch) {
        const Kernel &kernel = *command.kernel;
        if (driver->isEmulator())
          describeNextLaunch({command.name, command.location,
                              command.bindingLengths, *emulatorOptions});
        CUresult result = driver->cuLaunchKernel(
            kernel.function, command.grid[0], command.grid[1], command.grid[2],
            kernel.block[0], kernel.block[1], kernel.block[2],
            kernel.sharedMemoryBytes, stream, command.parameters.data(),
            nullptr);
        // Messages are built on failure only: this is the hot path.
        if (result != CUDA_SUCCESS)
          return launchFailure(result, command);
      } else if (command.hostStep) {
        LCC_RETURN_IF_ERROR(driver->check(driver->cuStreamSynchronize(stream),
                                          "running the commands of " + path));
        LCC_RETURN_IF_ERROR(command.hostStep());
      } else if (command.bounce) {
        // Overlapping ranges: a plain device copy would be undefined.
        LCC_RETURN_IF_ERROR(copy(command.bounce, command.source, command));
        LCC_RETURN_IF_ERROR(copy(command.target, command.bounce, command));
      } else if (command.target != command.source) {
        LCC_RETURN_IF_ERROR(copy(command.target, command.source, command));
      }
      LCC_RETURN_IF_ERROR(record(c + 1));
    }
    // Kernels run asynchronously: a fault shows here, not at the launch.
    LCC_RETURN_IF_ERROR(driver->check(driver->cuStreamSynchronize(stream),
                                      "running the commands of " + path));
    for (size_t c = 0; c < commands.size(); ++c) {
      float milliseconds = 0;
      CUresult result =
          driver->cuEventElapsedTime(&milliseconds, events[c], events[c + 1]);
      if (result != CUDA_SUCCESS)
        return driver->check(result, "timing " + quoted(commands[c].name));
      nanoseconds[c] = uint64_t(double(milliseconds) * 1e6);
    }
    return Status();
  }

  std::vector<CudaCommand> commands;
  std::vector<CUevent> events;       // commands.size() + 1
  std::vector<DeviceBuffer> bounces; // of overlapping copies

private:
  Status record(size_t index) {
    CUresult result = driver->cuEventRecord(events[index], stream);
    if (result == CUDA_SUCCESS)
      return Status();
    return driver->check(result, "recording a timing event");
  }

  Status copy(CUdeviceptr target, CUdeviceptr source,
              const CudaCommand &command) {
    CUresult result =
        driver->cuMemcpyDtoDAsync(target, source, command.length, stream);
    if (result == CUDA_SUCCESS)
      return Status();
    return driver->check(result, "copying " + std::to_string(command.length) +
                                     " bytes for " + quoted(command.name));
  }

  /// The emulator's findings, one line each, or the driver's error.
  Status launchFailure(CUresult result, const CudaCommand &command) const {
    std::vector<std::string> findings;
    if (driver->isEmulator())
      findings = takeFindings();
    if (findings.empty())
      return driver->check(result, "launching " + describeLaunch(command));
    std::string lines;
    for (const std::string &finding : findings)
      lines += (lines.empty() ? "" : "\n") + finding;
    return Status(StatusCode::Internal, lines);
  }

  static std::string describeLaunch(const CudaCommand &command) {
    const Kernel &kernel = *command.kernel;
    return quoted(command.name) + " (kernel " + quoted(kernel.name) +
           ", grid " + formatTriple(command.grid) + ", block " +
           formatTriple(kernel.block) + ", " +
           std::to_string(kernel.sharedMemoryBytes) +
           " bytes of dynamic shared memory)";
  }

  std::shared_ptr<const CudaDriver> driver;
  CUcontext context;
  CUstream stream;
  std::string path;
  std::shared_ptr<const EmulatorOptions> emulatorOptions;
};

/// The JIT's error log as one line: its lines joined by "; ".
std::string oneLine(const char *log) {
  std::string line;
  std::istringstream lines(log);
  for (std::string next; std::getline(lines, next);) {
    while (!next.empty() && (next.back() == '\r' || next.back() == ' '))
      next.pop_back();
    if (!next.empty())
      line += (line.empty() ? "" : "; ") + next;
  }
  return line;
}

} // namespace

StatusOr<std::shared_ptr<CudaDevice>> CudaDevice::create(int ordinal) {
  StatusOr<std::shared_ptr<const CudaDriver>> loaded = CudaDriver::load();
  if (!loaded.ok())
    return loaded.getStatus();
  return open(loaded.take(), ordinal);
}

StatusOr<std::shared_ptr<CudaDevice>>
CudaDevice::createEmulator(const EmulatorOptions &options) {
  StatusOr<std::shared_ptr<CudaDevice>> device =
      open(CudaDriver::emulator(), 0);
  if (device.ok())
    (*device)->setEmulatorOptions(options);
  return device;
}

StatusOr<std::shared_ptr<CudaDevice>>
CudaDevice::open(std::shared_ptr<const CudaDriver> driver, int ordinal) {
  // Whatever fails before the device is usable makes it unavailable.
  auto check = [&](CUresult result, const std::string &what) -> Status {
    Status status = driver->check(result, what, "cuda device unavailable");
    if (status.ok())
      return status;
    return Status(StatusCode::Unavailable, status.getMessage());
  };
  std::string which = "device " + std::to_string(ordinal);

  LCC_RETURN_IF_ERROR(check(driver->cuInit(0), "cuInit"));
  CUdevice device = 0;
  LCC_RETURN_IF_ERROR(
      check(driver->cuDeviceGet(&device, ordinal), "cuDeviceGet of " + which));
  Limits limits;
  struct {
    CUdevice_attribute attribute;
    int *value;
  } attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &limits.major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &limits.minor},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &limits.maxBlock[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &limits.maxBlock[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &limits.maxBlock[2]},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &limits.maxThreadsPerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &limits.maxGrid[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &limits.maxGrid[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &limits.maxGrid[2]},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &limits.maxSharedMemoryPerBlock},
  };
  for (const auto &entry : attributes)
    LCC_RETURN_IF_ERROR(check(
        driver->cuDeviceGetAttribute(entry.value, entry.attribute, device),
        "cuDeviceGetAttribute " + std::to_string(entry.attribute) + " of " +
            which));
  char name[256] = {};
  LCC_RETURN_IF_ERROR(
      check(driver->cuDeviceGetName(name, sizeof(name) - 1, device),
            "cuDeviceGetName of " + which));
  size_t totalMemory = 0;
  LCC_RETURN_IF_ERROR(check(driver->cuDeviceTotalMem(&totalMemory, device),
                            "cuDeviceTotalMem of " + which));

  // The primary context is the one the CUDA runtime API uses too, so an
  // application mixing both shares memory and modules with lcc.
  CUcontext context = nullptr;
  LCC_RETURN_IF_ERROR(check(driver->cuDevicePrimaryCtxRetain(&context, device),
                            "cuDevicePrimaryCtxRetain of " + which));
  CUstream stream = nullptr;
  Status created;
  {
    CurrentContext current(*driver, context);
    created = current.check();
    if (created.ok())
      // A blocking stream: the synchronous copies of inputs and results,
      // on the legacy default stream, are ordered with its work.
      created = check(driver->cuStreamCreate(&stream, 0), "cuStreamCreate");
  }
  if (!created.ok()) {
    driver->cuDevicePrimaryCtxRelease(device);
    return created;
  }
  return std::shared_ptr<CudaDevice>(new CudaDevice(
      std::move(driver), device, context, stream, name, totalMemory, limits));
}

CudaDevice::CudaDevice(std::shared_ptr<const CudaDriver> driver,
                       CUdevice device, CUcontext context, CUstream stream,
                       std::string name, uint64_t totalMemory,
                       const Limits &limits)
    : Device(std::make_unique<CudaAllocator>(driver, context)),
      driver(std::move(driver)), device(device), context(context),
      stream(stream), name(std::move(name)), totalMemory(totalMemory),
      limits(limits) {}

CudaDevice::~CudaDevice() {
  {
    CurrentContext current(*driver, context);
    nccl.clear();
    driver->cuStreamDestroy(stream);
  }
  driver->cuDevicePrimaryCtxRelease(device);
}

std::string CudaDevice::getArchitecture() const {
  return formatCudaArchitecture(unsigned(limits.major), unsigned(limits.minor));
}

std::string CudaDevice::describe() const {
  return std::string("the ") + getKind() + " device " + getArchitecture();
}

Status CudaDevice::copyToDevice(void *target, const void *source,
                                uint64_t size) {
  if (size == 0)
    return Status();
  CurrentContext current(*driver, context);
  LCC_RETURN_IF_ERROR(current.check());
  CUresult result = driver->cuMemcpyHtoD(toDevice(target), source, size);
  if (result == CUDA_SUCCESS)
    return Status();
  return driver->check(result, "copying " + std::to_string(size) +
                                   " bytes to the device");
}

Status CudaDevice::copyToHost(void *target, const void *source, uint64_t size) {
  if (size == 0)
    return Status();
  CurrentContext current(*driver, context);
  LCC_RETURN_IF_ERROR(current.check());
  CUresult result = driver->cuMemcpyDtoH(target, toDevice(source), size);
  if (result == CUDA_SUCCESS)
    return Status();
  return driver->check(result, "copying " + std::to_string(size) +
                                   " bytes from the device");
}

StatusOr<NcclCommunicator *> CudaDevice::ncclOf(Communicator &job) {
  std::unique_ptr<NcclCommunicator> &made = nccl[&job];
  if (!made) {
    StatusOr<std::unique_ptr<NcclCommunicator>> created =
        NcclCommunicator::create(job);
    if (!created.ok()) {
      nccl.erase(&job);
      return created.getStatus();
    }
    made = created.take();
  }
  return made.get();
}

Status CudaDevice::runOnNccl(
    Communicator &job, const char *what,
    const std::function<Status(NcclCommunicator &)> &enqueue) {
  CurrentContext current(*driver, context);
  LCC_RETURN_IF_ERROR(current.check());
  StatusOr<NcclCommunicator *> engine = ncclOf(job);
  if (!engine.ok())
    return engine.getStatus();
  LCC_RETURN_IF_ERROR(enqueue(**engine));
  return driver->check(driver->cuStreamSynchronize(stream),
                       std::string(what) + " on " + describe());
}

StatusOr<bool> CudaDevice::allReduceOnDevice(Communicator &job, void *data,
                                             size_t count, bool mean) {
  // The emulator's memory is the host's: staged like the CPU's.
  if (isEmulator())
    return false;
  LCC_RETURN_IF_ERROR(
      runOnNccl(job, "an all-reduce", [&](NcclCommunicator &engine) {
        Status enqueued = engine.allReduce(toDevice(data), count, mean, stream);
        if (enqueued.ok())
          job.noteSent(count * sizeof(float));
        return enqueued;
      }));
  return true;
}

StatusOr<bool> CudaDevice::exchangeOnDevice(Communicator &job,
                                            const ExchangeSpec &exchange) {
  if (isEmulator())
    return false;
  uint64_t source = toDevice(exchange.source),
           target = toDevice(exchange.target);
  LCC_RETURN_IF_ERROR(
      runOnNccl(job, "an exchange", [&](NcclCommunicator &engine) {
        if (exchange.pattern == lcm::ExchangePattern::AllToAll) {
          uint64_t block = exchange.sourceBytes / exchange.blocks;
          Status enqueued =
              engine.allToAll(source, block, job.size(), target, stream);
          if (enqueued.ok())
            job.noteSent(block * uint64_t(job.size() - 1));
          return enqueued;
        }
        Status enqueued = engine.sendAroundRing(
            source, exchange.sourceBytes,
            job.ringNeighbour(exchange.ringOffset),
            job.ringNeighbour(-exchange.ringOffset), target, stream);
        if (enqueued.ok())
          job.noteSent(exchange.sourceBytes);
        return enqueued;
      }));
  return true;
}

Status CudaDevice::copyOnDevice(void *target, const void *source,
                                uint64_t size) {
  if (size == 0 || target == source)
    return Status();
  CurrentContext current(*driver, context);
  LCC_RETURN_IF_ERROR(current.check());
  std::string what =
      "copying " + std::to_string(size) + " bytes within the device";
  CUresult result = driver->cuMemcpyDtoDAsync(toDevice(target),
                                              toDevice(source), size, stream);
  if (result != CUDA_SUCCESS)
    return driver->check(result, what);
  result = driver->cuStreamSynchronize(stream);
  if (result != CUDA_SUCCESS)
    return driver->check(result, what);
  return Status();
}

StatusOr<std::unique_ptr<DeviceExecutable>>
CudaDevice::loadExecutable(const lcm::Executable &executable, size_t index) {
  const char *format = lcm::EnumNameExecutableFormat(executable.format());
  std::string what = "executables[" + std::to_string(index) + "]";
  // The loader checked that GPU executables name their architecture.
  bool emulated = executable.format() == lcm::ExecutableFormat::CudaEmulator;
  if (!isGpuFormat(executable.format()) || emulated != isEmulator())
    return Status::error(StatusCode::Unavailable, what, " is ", format,
                         ", which the ", getKind(), " device cannot run");
  what += " (" + executable.target()->str() + " " + format + ")";

  // Check what the driver would only refuse at the first launch.
  std::vector<Kernel> kernels;
  if (executable.entry_points()) {
    for (const lcm::EntryPoint *entryPoint : *executable.entry_points()) {
      Kernel kernel;
      kernel.name = entryPoint->name()->str();
      uint64_t threads = 1;
      bool fits = true;
      for (size_t i = 0; i < 3; ++i) {
        kernel.block[i] = entryPoint->block_size()->Get(i);
        threads *= kernel.block[i];
        fits &= kernel.block[i] <= uint32_t(limits.maxBlock[i]);
      }
      if (!fits || threads > uint64_t(limits.maxThreadsPerBlock))
        return Status::error(StatusCode::Unavailable, what, ": entry point '",
                             kernel.name, "' has block_size ",
                             formatTriple(kernel.block), "; ", describe(),
                             " allows at most ", formatTriple(limits.maxBlock),
                             " and ", limits.maxThreadsPerBlock, " threads");
      kernel.sharedMemoryBytes = entryPoint->shared_memory_bytes();
      if (kernel.sharedMemoryBytes > uint32_t(limits.maxSharedMemoryPerBlock))
        return Status::error(StatusCode::Unavailable, what, ": entry point '",
                             kernel.name, "' needs ", kernel.sharedMemoryBytes,
                             " bytes of dynamic shared memory per block; ",
                             describe(), " allows at most ",
                             limits.maxSharedMemoryPerBlock);
      kernels.push_back(std::move(kernel));
    }
  }

  CurrentContext current(*driver, context);
  LCC_RETURN_IF_ERROR(current.check());
  // PTX is text the JIT reads up to a NUL, which the schema's bytes lack.
  std::string ptx;
  const void *image = executable.data()->data();
  if (executable.format() == lcm::ExecutableFormat::Ptx) {
    ptx.assign(reinterpret_cast<const char *>(executable.data()->data()),
               executable.data()->size());
    image = ptx.c_str();
  }
  char log[8192] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log)))};
  CUmodule module = nullptr;
  Status status = driver->check(
      driver->cuModuleLoadDataEx(&module, image, 2, options, values),
      "loading " + what);
  if (!status.ok()) {
    log[sizeof(log) - 1] = '\0';
    std::string jit = oneLine(log);
    if (jit.empty())
      return status;
    return Status(status.getCode(), status.getMessage() + ": " + jit);
  }
  auto loaded =
      std::make_unique<CudaExecutable>(driver, context, module, getAllocator());
  for (Kernel &kernel : kernels) {
    loaded->countScratch(kernel);
    LCC_RETURN_IF_ERROR(driver->check(
        driver->cuModuleGetFunction(&kernel.function, module,
                                    kernel.name.c_str()),
        "looking up kernel " + quoted(kernel.name) + " in " + what));
    // Above 48 KiB a kernel must be allowed its dynamic shared memory.
    if (kernel.sharedMemoryBytes > kDefaultSharedMemoryBytes)
      LCC_RETURN_IF_ERROR(driver->check(
          driver->cuFuncSetAttribute(
              kernel.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
              int(kernel.sharedMemoryBytes)),
          "allowing kernel " + quoted(kernel.name) + " " +
              std::to_string(kernel.sharedMemoryBytes) +
              " bytes of dynamic shared memory"));
  }
  loaded->kernels = std::move(kernels);
  return std::unique_ptr<DeviceExecutable>(std::move(loaded));
}

StatusOr<std::unique_ptr<CommandList>>
CudaDevice::createCommandList(const DeviceExecutable *executable,
                              std::vector<DeviceCommand> commands,
                              const std::string &path) {
  // Only this device's loadExecutable made `executable`.
  const auto *loaded = static_cast<const CudaExecutable *>(executable);
  auto list = std::make_unique<CudaCommandList>(driver, context, stream, path,
                                                emulatorOptions);
  // No reallocation: each command's parameters point into its arguments.
  list->commands.reserve(commands.size());
  for (size_t c = 0; c < commands.size(); ++c) {
    const DeviceCommand &command = commands[c];
    CudaCommand next;
    next.kind = command.kind;
    next.name = command.name;
    next.location = command.location;
    if (command.kind == lcm::CommandKind::Dispatch) {
      next.kernel = &loaded->kernels[command.entryPoint];
      next.grid = command.workgroupCount;
      for (size_t i = 0; i < 3; ++i)
        if (next.grid[i] > uint32_t(limits.maxGrid[i]))
          return Status::error(StatusCode::Unavailable, path, ".commands[", c,
                               "] ", quoted(command.name),
                               " has workgroup_count ", formatTriple(next.grid),
                               "; ", describe(), " launches at most ",
                               formatTriple(limits.maxGrid), " blocks");
      for (void *binding : command.bindings)
        next.arguments.push_back(toDevice(binding));
      next.bindingLengths = command.bindingLengths;
      for (CUdeviceptr &argument : next.arguments)
        next.parameters.push_back(&argument);
    } else if (command.hostStep) {
      next.hostStep = command.hostStep;
    } else {
      next.target = toDevice(command.bindings[0]);
      next.source = toDevice(command.bindings[1]);
      next.length = command.copyLength;
      // The planner may overlap a copy's source and target, as memmove
      // allows on the CPU; a device copy needs disjoint ranges, so such a
      // copy goes through a buffer of its own (counted like any other).
      bool overlap = next.target != next.source &&
                     next.target < next.source + next.length &&
                     next.source < next.target + next.length;
      if (overlap) {
        StatusOr<DeviceBuffer> bounce = getAllocator().allocate(
            next.length,
            "the overlapping copy " + quoted(command.name) + " of " + path);
        if (!bounce.ok())
          return bounce.getStatus();
        next.bounce = toDevice(bounce->data());
        list->bounces.push_back(bounce.take());
      }
    }
    list->commands.push_back(std::move(next));
  }

  CurrentContext current(*driver, context);
  LCC_RETURN_IF_ERROR(current.check());
  for (size_t i = 0; i <= commands.size(); ++i) {
    CUevent event = nullptr;
    LCC_RETURN_IF_ERROR(driver->check(driver->cuEventCreate(&event, 0),
                                      "creating a timing event"));
    list->events.push_back(event);
  }
  return std::unique_ptr<CommandList>(std::move(list));
}

} // namespace lcc::runtime
