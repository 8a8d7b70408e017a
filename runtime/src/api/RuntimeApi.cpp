//===- RuntimeApi.cpp - the C API over the C++ runtime --------------------===//
//
// Thin wrappers: convert handles and views, and turn every C++ exception
// (std::bad_alloc, mostly) into a status, so none crosses the C boundary.
//
//===----------------------------------------------------------------------===//

#include "lcc/runtime.h"

#include "comm/Communicator.h"
#include "devices/cpu/CpuDevice.h"
#include "devices/cpu/CpuFeatures.h"
#include "devices/cuda/CudaDevice.h"
#include "formats/Npy.h"
#include "module/ParameterInit.h"
#include "module/Session.h"
#include "support/File.h"

#include <cmath>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <new>
#include <sstream>

using namespace lcc;
using namespace lcc::runtime;

struct LccStatusImpl {
  LccStatusCode code;
  std::string message;
};

struct LccModuleImpl {
  explicit LccModuleImpl(std::shared_ptr<const Module> module)
      : module(std::move(module)) {}
  std::shared_ptr<const Module> module;

  /// The shape of `signature` as aligned int64s that live as long as the
  /// handle (the file's own may sit at any multiple of 4).
  const std::vector<int64_t> &shapeOf(const lcm::TensorSignature &signature) {
    std::lock_guard<std::mutex> lock(mutex);
    auto [it, inserted] = shapes.try_emplace(&signature);
    if (inserted)
      it->second = getShape(signature);
    return it->second;
  }
  /// `text` kept alive as long as the handle.
  const char *keep(std::string text) {
    std::lock_guard<std::mutex> lock(mutex);
    strings.push_back(std::move(text));
    return strings.back().c_str();
  }

private:
  std::mutex mutex;
  std::map<const lcm::TensorSignature *, std::vector<int64_t>> shapes;
  std::list<std::string> strings;
};

struct LccDeviceImpl {
  std::shared_ptr<Device> device;
  // What the getters return, alive as long as the handle.
  std::string name;
  std::string architecture;
};

struct LccSessionImpl {
  std::unique_ptr<Session> session;
  // The last lccSessionGetParameter's value and shape.
  std::vector<uint8_t> parameterValue;
  std::vector<int64_t> parameterShape;
};

// An LccFunction is the address of a runtime Function.
struct LccFunctionImpl;

struct LccHostTensorImpl {
  HostTensor tensor;
};

struct LccMetadataImpl {
  std::vector<std::pair<std::string, std::string>> entries;
};

struct LccCommunicatorImpl {
  std::unique_ptr<Communicator> communicator;
  std::string description;
};

namespace {

/// Far more than any host has; a larger count is a mistake, not a wish.
constexpr unsigned kMaxThreads = 4096;

LccStatus toC(const Status &status) {
  if (status.ok())
    return nullptr;
  return new (std::nothrow)
      LccStatusImpl{LccStatusCode(status.getCode()), status.getMessage()};
}

/// Runs `body`, turning an escaping exception into a status.
template <typename Body> LccStatus guarded(const char *api, Body &&body) {
  try {
    return toC(body());
  } catch (const std::bad_alloc &) {
    return toC(
        Status::error(StatusCode::ResourceExhausted, api, ": out of memory"));
  } catch (const std::exception &error) {
    return toC(Status::error(StatusCode::Internal, api, ": ", error.what()));
  }
}

Status nullArgument(const char *api, const char *argument) {
  return Status::error(StatusCode::InvalidArgument, api, ": ", argument,
                       " is NULL");
}

Function *unwrap(LccFunction function) {
  return reinterpret_cast<Function *>(function);
}

/// The DType of a C enum value the caller may have set to anything. It is
/// read as the integer it is (a load of an LccDType outside its values is
/// undefined behaviour in C++), and a value the schema lacks becomes a
/// DType no check accepts rather than wrapping onto a valid one.
DType dtypeFromC(const LccDType &dtype) {
  int raw;
  static_assert(sizeof(raw) == sizeof(dtype));
  std::memcpy(&raw, &dtype, sizeof(raw));
  if (raw < int(DType::MIN) || raw > int(DType::MAX))
    return DType(int8_t(INT8_MAX));
  return DType(raw);
}

TensorView fromC(const LccTensorView &view) {
  TensorView result;
  result.dtype = dtypeFromC(view.dtype);
  result.shape = view.shape;
  result.rank = view.shape ? view.rank : 0;
  result.data = view.data;
  result.size = view.size;
  result.name = view.name;
  return result;
}

/// A signature's name as a C string that lives as long as the module.
const char *cName(const lcm::TensorSignature &signature) {
  return signature.name() ? signature.name()->c_str() : "";
}

void toC(const TensorView &view, const char *name, LccTensorView *out) {
  out->name = name;
  out->dtype = LccDType(view.dtype);
  out->rank = view.rank;
  out->shape = view.shape;
  out->data = view.data;
  out->size = view.size;
}

} // namespace

extern "C" {

LccStatusCode lccStatusGetCode(LccStatus status) {
  return status ? status->code : LCC_STATUS_OK;
}

const char *lccStatusGetMessage(LccStatus status) {
  return status ? status->message.c_str() : "";
}

void lccStatusDestroy(LccStatus status) { delete status; }

const char *lccDTypeGetName(LccDType dtype) {
  DType known = dtypeFromC(dtype);
  return isValidDType(known) ? dtypeName(known) : "unknown";
}

size_t lccDTypeGetSize(LccDType dtype) {
  DType known = dtypeFromC(dtype);
  return isValidDType(known) ? dtypeSize(known) : 0;
}

double lccTensorGetElement(const LccTensorView *tensor, uint64_t index) {
  DType known = dtypeFromC(tensor->dtype);
  if (!isValidDType(known))
    return std::nan("");
  return elementAsDouble(known, tensor->data, index);
}

uint32_t lccGetModuleVersion(void) { return kModuleVersion; }

LccStatus lccModuleLoadFile(const char *path, LccModule *module) {
  return guarded("lccModuleLoadFile", [&]() -> Status {
    if (!path || !module)
      return nullArgument("lccModuleLoadFile", !path ? "path" : "module");
    StatusOr<std::shared_ptr<const Module>> loaded = loadModuleFromFile(path);
    if (!loaded.ok())
      return loaded.getStatus();
    *module = new LccModuleImpl(loaded.take());
    return Status();
  });
}

LccStatus lccModuleLoadMemory(const void *data, size_t size,
                              LccModule *module) {
  return guarded("lccModuleLoadMemory", [&]() -> Status {
    if ((!data && size > 0) || !module)
      return nullArgument("lccModuleLoadMemory", !module ? "module" : "data");
    StatusOr<std::shared_ptr<const Module>> loaded =
        loadModuleFromMemory(data, size);
    if (!loaded.ok())
      return loaded.getStatus();
    *module = new LccModuleImpl(loaded.take());
    return Status();
  });
}

void lccModuleDestroy(LccModule module) { delete module; }

size_t lccModuleGetFunctionCount(LccModule module) {
  return module->module->getFunctionCount();
}

const char *lccModuleGetFunctionName(LccModule module, size_t index) {
  return module->module->getFunction(index).name()->c_str();
}

size_t lccModuleGetParameterCount(LccModule module) {
  return module->module->getParameterCount();
}

namespace {
void signatureToC(LccModule module, const lcm::TensorSignature &signature,
                  LccTensorView *view) {
  const std::vector<int64_t> &shape = module->shapeOf(signature);
  view->name = cName(signature);
  view->dtype = LccDType(signature.dtype());
  view->rank = shape.size();
  view->shape = shape.data();
  view->data = nullptr;
  view->size = *byteSize(signature.dtype(), shape);
}
} // namespace

size_t lccModuleGetFunctionInputCount(LccModule module, size_t function) {
  const auto *inputs = module->module->getFunction(function).inputs();
  return inputs ? inputs->size() : 0;
}

size_t lccModuleGetFunctionOutputCount(LccModule module, size_t function) {
  const auto *outputs = module->module->getFunction(function).outputs();
  return outputs ? outputs->size() : 0;
}

void lccModuleGetFunctionInput(LccModule module, size_t function, size_t index,
                               LccTensorView *signature) {
  signatureToC(module,
               *module->module->getFunction(function).inputs()->Get(index),
               signature);
}

void lccModuleGetFunctionOutput(LccModule module, size_t function, size_t index,
                                LccTensorView *signature) {
  signatureToC(module,
               *module->module->getFunction(function).outputs()->Get(index),
               signature);
}

int lccModuleGetFunctionInputSplitDim(LccModule module, size_t function,
                                      size_t index) {
  return module->module->getFunction(function)
      .inputs()
      ->Get(index)
      ->split_dim();
}

int lccModuleGetFunctionOutputSplitDim(LccModule module, size_t function,
                                       size_t index) {
  return module->module->getFunction(function)
      .outputs()
      ->Get(index)
      ->split_dim();
}

int lccModuleGetFunctionInputRange(LccModule module, size_t function,
                                   size_t index, int64_t *low, int64_t *high) {
  const lcm::TensorSignature &signature =
      *module->module->getFunction(function).inputs()->Get(index);
  // The loader checked that a range holds [min, max].
  const flatbuffers::Vector<int64_t> *range = signature.valid_range();
  if (!range)
    return 0;
  *low = readUnaligned(*range, 0);
  *high = readUnaligned(*range, 1);
  return 1;
}

size_t lccModuleGetFunctionCommandCount(LccModule module, size_t function) {
  const auto *commands = module->module->getFunction(function).commands();
  return commands ? commands->size() : 0;
}

uint64_t lccModuleGetFunctionArenaBytes(LccModule module, size_t function) {
  return module->module->getFunction(function).arena_size();
}

void lccModuleGetParameter(LccModule module, size_t index,
                           LccTensorView *signature) {
  const lcm::Parameter &parameter = module->module->getParameter(index);
  signatureToC(module, *parameter.signature(), signature);
  if (parameter.data())
    signature->data = parameter.data()->data();
}

const char *lccModuleGetParameterInit(LccModule module, size_t index) {
  const lcm::Parameter &parameter = module->module->getParameter(index);
  switch (parameter.init()) {
  case lcm::ParameterInit::Zeros:
    return "zeros";
  case lcm::ParameterInit::Ones:
    return "ones";
  case lcm::ParameterInit::Constant: {
    std::ostringstream text;
    text << "constant(" << parameter.init_value() << ")";
    return module->keep(text.str());
  }
  case lcm::ParameterInit::Normal:
    break;
  }
  std::ostringstream text;
  text << "normal(0, " << parameter.init_scale() << ")";
  return module->keep(text.str());
}

size_t lccModuleGetExecutableCount(LccModule module) {
  const auto *executables = module->module->get().executables();
  return executables ? executables->size() : 0;
}

const char *lccModuleGetExecutableDescription(LccModule module, size_t index) {
  const lcm::Executable &executable = module->module->getExecutable(index);
  std::ostringstream text;
  text << lcm::EnumNameExecutableFormat(executable.format()) << " for "
       << (executable.target() ? executable.target()->str() : "?") << ", "
       << (executable.data() ? executable.data()->size() : 0) << " bytes, "
       << (executable.entry_points() ? executable.entry_points()->size() : 0)
       << " entry points";
  // Of the CPU features it was compiled for, those the loader checks.
  std::string checked;
  if (executable.cpu_features())
    for (const flatbuffers::String *feature : *executable.cpu_features())
      if (isTestedCpuFeature(feature->str()))
        checked += (checked.empty() ? "" : " ") + feature->str();
  if (!checked.empty())
    text << ", needs " << checked;
  return module->keep(text.str());
}

uint64_t lccModuleGetChecksum(LccModule module) {
  return module->module->getChecksum();
}

uint32_t lccModuleGetContextParallel(LccModule module) {
  return module->module->get().context_parallel();
}

uint64_t lccModuleGetParameterBytes(LccModule module) {
  uint64_t total = 0;
  const Module &loaded = *module->module;
  for (size_t i = 0; i < loaded.getParameterCount(); ++i) {
    const lcm::Parameter &parameter = loaded.getParameter(i);
    if (!isWeight(parameter))
      continue;
    // The loader checked each size (<= 2^40); saturate the sum.
    uint64_t bytes = *byteSize(parameter.signature()->dtype(),
                               getShape(*parameter.signature()));
    total = bytes > UINT64_MAX - total ? UINT64_MAX : total + bytes;
  }
  return total;
}

int lccModuleIsStateParameter(LccModule module, size_t index) {
  return module->module->getParameter(index).state() ? 1 : 0;
}

int lccModuleIsDecodeCache(LccModule module, size_t index) {
  return lcc::runtime::isDecodeCache(module->module->getParameter(index)) ? 1
                                                                          : 0;
}

LccStatus lccModuleWriteInitialParameters(LccModule module, uint64_t seed,
                                          const char *path) {
  return guarded("lccModuleWriteInitialParameters", [&]() -> Status {
    if (!module || !path)
      return nullArgument("lccModuleWriteInitialParameters",
                          !module ? "module" : "path");
    return writeInitialParameters(*module->module, seed, path);
  });
}

LccStatus lccDeviceCreate(const char *kind, unsigned threadCount,
                          LccDevice *device) {
  return guarded("lccDeviceCreate", [&]() -> Status {
    if (!kind || !device)
      return nullArgument("lccDeviceCreate", !kind ? "kind" : "device");
    std::string name = kind;
    std::shared_ptr<Device> created;
    if (name == "cuda" || name == "cuda-emulator") {
      StatusOr<std::shared_ptr<CudaDevice>> gpu =
          name == "cuda" ? CudaDevice::create()
                         : CudaDevice::createEmulator(cuda::EmulatorOptions());
      if (!gpu.ok())
        return gpu.getStatus();
      created = gpu.take();
    } else if (name == "cpu") {
      if (threadCount > kMaxThreads)
        return Status::error(StatusCode::InvalidArgument, "cannot use ",
                             threadCount, " threads; at most ", kMaxThreads);
      created = std::make_shared<CpuDevice>(threadCount);
    } else {
      return Status::error(StatusCode::InvalidArgument, "unknown device '",
                           name,
                           "'; expected 'cpu', 'cuda' or 'cuda-emulator'");
    }
    *device = new LccDeviceImpl{created, created->getName(),
                                created->getArchitecture()};
    return Status();
  });
}

void lccDeviceDestroy(LccDevice device) { delete device; }

LccStatus lccDeviceSetEmulatorChecks(LccDevice device, const char *checks,
                                     const char *threadOrder) {
  return guarded("lccDeviceSetEmulatorChecks", [&]() -> Status {
    if (!device || !checks)
      return nullArgument("lccDeviceSetEmulatorChecks",
                          !device ? "device" : "checks");
    auto *emulator = dynamic_cast<CudaDevice *>(device->device.get());
    if (!emulator || !emulator->isEmulator())
      return Status::error(StatusCode::InvalidArgument, "the ",
                           device->device->getKind(),
                           " device has no emulator checks; they are the "
                           "cuda-emulator device's");
    cuda::EmulatorOptions options;
    if (!options.parseChecks(checks))
      return Status::error(StatusCode::InvalidArgument, "unknown check ",
                           quoted(checks),
                           "; expected memcheck, racecheck, both "
                           "comma-separated, or none");
    if (threadOrder && !options.parseThreadOrder(threadOrder))
      return Status::error(StatusCode::InvalidArgument, "unknown thread order ",
                           quoted(threadOrder),
                           "; expected forward, reversed, shuffled or "
                           "shuffled:SEED");
    emulator->setEmulatorOptions(options);
    return Status();
  });
}

const char *lccDeviceGetKind(LccDevice device) {
  return device->device->getKind();
}

const char *lccDeviceGetName(LccDevice device) { return device->name.c_str(); }

const char *lccDeviceGetArchitecture(LccDevice device) {
  return device->architecture.c_str();
}

unsigned lccDeviceGetThreadCount(LccDevice device) {
  return device->device->getThreadCount();
}

void lccDeviceSetMemoryLimit(LccDevice device, uint64_t bytes) {
  device->device->getAllocator().setLimit(bytes);
}

uint64_t lccGetPhysicalMemoryBytes(void) { return physicalMemoryBytes(); }

uint64_t lccDeviceGetMemoryLimit(LccDevice device) {
  return device->device->getAllocator().getLimit();
}

uint64_t lccDeviceGetCurrentBytes(LccDevice device) {
  return device->device->getAllocator().currentBytes();
}

uint64_t lccDeviceGetPeakBytes(LccDevice device) {
  return device->device->getAllocator().peakBytes();
}

LccStatus lccSessionCreate(LccDevice device, LccModule module,
                           LccSession *session) {
  return guarded("lccSessionCreate", [&]() -> Status {
    if (!device || !module || !session)
      return nullArgument("lccSessionCreate", !device   ? "device"
                                              : !module ? "module"
                                                        : "session");
    StatusOr<std::unique_ptr<Session>> created =
        Session::create(device->device, module->module);
    if (!created.ok())
      return created.getStatus();
    *session = new LccSessionImpl{created.take()};
    return Status();
  });
}

void lccSessionDestroy(LccSession session) { delete session; }

LccStatus lccSessionBindParametersFile(LccSession session, const char *path) {
  return guarded("lccSessionBindParametersFile", [&]() -> Status {
    if (!session || !path)
      return nullArgument("lccSessionBindParametersFile",
                          !session ? "session" : "path");
    return session->session->bindParameters(path);
  });
}

LccStatus lccSessionBindParameter(LccSession session, const char *name,
                                  const LccTensorView *value) {
  return guarded("lccSessionBindParameter", [&]() -> Status {
    if (!session || !name || !value)
      return nullArgument("lccSessionBindParameter", !session ? "session"
                                                     : !name  ? "name"
                                                              : "value");
    return session->session->bindParameter(name, fromC(*value));
  });
}

LccStatus lccSessionInitializeParameters(LccSession session, uint64_t seed) {
  return guarded("lccSessionInitializeParameters", [&]() -> Status {
    if (!session)
      return nullArgument("lccSessionInitializeParameters", "session");
    return session->session->initializeParameters(seed);
  });
}

size_t lccSessionGetParameterCount(LccSession session) {
  return session->session->getParameterCount();
}

LccStatus lccSessionGetParameter(LccSession session, size_t index,
                                 LccTensorView *value) {
  return guarded("lccSessionGetParameter", [&]() -> Status {
    if (!session || !value)
      return nullArgument("lccSessionGetParameter",
                          !session ? "session" : "value");
    Session &owner = *session->session;
    if (index >= owner.getParameterCount())
      return Status::error(
          StatusCode::InvalidArgument, "lccSessionGetParameter: parameter ",
          index, " does not exist; the module has ", owner.getParameterCount());
    LCC_RETURN_IF_ERROR(owner.readParameter(index, session->parameterValue));
    const lcm::TensorSignature &signature =
        *owner.getModule().getParameter(index).signature();
    session->parameterShape = getShape(signature);
    value->name = cName(signature);
    value->dtype = LccDType(signature.dtype());
    value->rank = session->parameterShape.size();
    value->shape = session->parameterShape.data();
    value->data = session->parameterValue.data();
    value->size = session->parameterValue.size();
    return Status();
  });
}

LccStatus lccSessionWriteParametersFile(LccSession session, const char *path) {
  return guarded("lccSessionWriteParametersFile", [&]() -> Status {
    if (!session || !path)
      return nullArgument("lccSessionWriteParametersFile",
                          !session ? "session" : "path");
    return session->session->writeParameters(path);
  });
}

LccStatus lccSessionWriteCheckpoint(LccSession session, const char *path,
                                    const char *const *keys,
                                    const char *const *values, size_t count) {
  return guarded("lccSessionWriteCheckpoint", [&]() -> Status {
    if (!session || !path || (count > 0 && (!keys || !values)))
      return nullArgument("lccSessionWriteCheckpoint", !session ? "session"
                                                       : !path
                                                           ? "path"
                                                           : "keys or values");
    std::map<std::string, std::string> metadata;
    for (size_t i = 0; i < count; ++i) {
      if (!keys[i] || !values[i])
        return nullArgument("lccSessionWriteCheckpoint",
                            !keys[i] ? "a key" : "a value");
      std::string key = keys[i];
      if (key == kProducerKey || key == kCheckpointKey)
        return Status::error(StatusCode::InvalidArgument,
                             "lccSessionWriteCheckpoint: metadata key ",
                             quoted(key), " is the runtime's own");
      if (!metadata.emplace(key, values[i]).second)
        return Status::error(StatusCode::InvalidArgument,
                             "lccSessionWriteCheckpoint: metadata key ",
                             quoted(key), " is given twice");
    }
    return session->session->writeParameters(path, metadata);
  });
}

LccStatus lccSafetensorsReadMetadata(const char *path, LccMetadata *metadata) {
  return guarded("lccSafetensorsReadMetadata", [&]() -> Status {
    if (!path || !metadata)
      return nullArgument("lccSafetensorsReadMetadata",
                          !path ? "path" : "metadata");
    StatusOr<std::unique_ptr<SafetensorsReader>> reader =
        SafetensorsReader::open(path);
    if (!reader.ok())
      return reader.getStatus();
    const std::map<std::string, std::string> &read =
        (*reader)->getHeader().metadata;
    *metadata = new LccMetadataImpl{{read.begin(), read.end()}};
    return Status();
  });
}

size_t lccMetadataGetCount(LccMetadata metadata) {
  return metadata->entries.size();
}

const char *lccMetadataGetKey(LccMetadata metadata, size_t index) {
  return metadata->entries[index].first.c_str();
}

const char *lccMetadataGetValue(LccMetadata metadata, size_t index) {
  return metadata->entries[index].second.c_str();
}

const char *lccMetadataFind(LccMetadata metadata, const char *key) {
  for (const auto &[name, value] : metadata->entries)
    if (name == key)
      return value.c_str();
  return nullptr;
}

void lccMetadataDestroy(LccMetadata metadata) { delete metadata; }

LccStatus lccSessionLookupFunction(LccSession session, const char *name,
                                   LccFunction *function) {
  return guarded("lccSessionLookupFunction", [&]() -> Status {
    if (!session || !function)
      return nullArgument("lccSessionLookupFunction",
                          !session ? "session" : "function");
    StatusOr<Function *> found =
        session->session->lookupFunction(name ? name : "");
    if (!found.ok())
      return found.getStatus();
    *function = reinterpret_cast<LccFunction>(*found);
    return Status();
  });
}

const char *lccFunctionGetName(LccFunction function) {
  return unwrap(function)->getName().c_str();
}

size_t lccFunctionGetInputCount(LccFunction function) {
  return unwrap(function)->getInputCount();
}

size_t lccFunctionGetOutputCount(LccFunction function) {
  return unwrap(function)->getOutputCount();
}

void lccFunctionGetInput(LccFunction function, size_t index,
                         LccTensorView *signature) {
  Function *fn = unwrap(function);
  toC(fn->getInputType(index), cName(fn->getInput(index)), signature);
}

void lccFunctionGetOutput(LccFunction function, size_t index,
                          LccTensorView *signature) {
  Function *fn = unwrap(function);
  toC(fn->getOutputType(index), cName(fn->getOutput(index)), signature);
}

LccStatus lccFunctionCall(LccFunction function, const LccTensorView *inputs,
                          size_t inputCount) {
  return guarded("lccFunctionCall", [&]() -> Status {
    if (!function || (!inputs && inputCount > 0))
      return nullArgument("lccFunctionCall", !function ? "function" : "inputs");
    std::vector<TensorView> views;
    views.reserve(inputCount);
    for (size_t i = 0; i < inputCount; ++i)
      views.push_back(fromC(inputs[i]));
    return unwrap(function)->call(views.data(), views.size());
  });
}

LccStatus lccFunctionCarryResult(LccFunction function, size_t result,
                                 size_t input) {
  return guarded("lccFunctionCarryResult", [&]() -> Status {
    if (!function)
      return nullArgument("lccFunctionCarryResult", "function");
    return unwrap(function)->carryResult(result, input);
  });
}

void lccFunctionGetResult(LccFunction function, size_t index,
                          LccTensorView *result) {
  Function *fn = unwrap(function);
  toC(fn->getResult(index), cName(fn->getOutput(index)), result);
}

uint64_t lccFunctionGetCallCount(LccFunction function) {
  return unwrap(function)->getCallCount();
}

uint64_t lccFunctionGetTotalNanoseconds(LccFunction function) {
  return unwrap(function)->getTotalNanoseconds();
}

uint64_t lccFunctionGetCopiedInputBytes(LccFunction function) {
  return unwrap(function)->getCopiedInputBytes();
}

uint64_t lccFunctionGetArenaBytes(LccFunction function) {
  return unwrap(function)->getArenaBytes();
}

size_t lccFunctionGetCommandCount(LccFunction function) {
  return unwrap(function)->getCommandCount();
}

void lccFunctionGetCommandStats(LccFunction function, size_t index,
                                LccCommandStats *stats) {
  Function *fn = unwrap(function);
  stats->name = fn->getCommandName(index).c_str();
  stats->location = fn->getCommandLocation(index).c_str();
  switch (fn->getCommandKind(index)) {
  case lcm::CommandKind::Dispatch:
    stats->kind = "dispatch";
    break;
  case lcm::CommandKind::AllReduce:
    stats->kind = "all_reduce";
    break;
  case lcm::CommandKind::Exchange:
    stats->kind = "exchange";
    break;
  default:
    stats->kind = "copy";
    break;
  }
  stats->totalNanoseconds = fn->getCommandNanoseconds(index);
}

double lccFunctionGetCommandFlops(LccFunction function, size_t index) {
  Function *fn = unwrap(function);
  return index < fn->getCommandCount() ? fn->getCommandFlops(index) : 0.0;
}

void lccFunctionResetStats(LccFunction function) {
  unwrap(function)->resetStats();
}

LccStatus lccNpyRead(const char *path, LccHostTensor *tensor) {
  return guarded("lccNpyRead", [&]() -> Status {
    if (!path || !tensor)
      return nullArgument("lccNpyRead", !path ? "path" : "tensor");
    StatusOr<HostTensor> read = readNpy(path);
    if (!read.ok())
      return read.getStatus();
    *tensor = new LccHostTensorImpl{read.take()};
    return Status();
  });
}

void lccHostTensorGetView(LccHostTensor tensor, LccTensorView *view) {
  view->name = nullptr;
  view->dtype = LccDType(tensor->tensor.dtype);
  view->rank = tensor->tensor.shape.size();
  view->shape = tensor->tensor.shape.data();
  view->data = tensor->tensor.data.data();
  view->size = tensor->tensor.data.size();
}

void lccHostTensorDestroy(LccHostTensor tensor) { delete tensor; }

LccStatus lccNpyWrite(const char *path, const LccTensorView *tensor) {
  return guarded("lccNpyWrite", [&]() -> Status {
    if (!path || !tensor)
      return nullArgument("lccNpyWrite", !path ? "path" : "tensor");
    TensorView view = fromC(*tensor);
    std::vector<int64_t> shape(view.shape, view.shape + view.rank);
    std::optional<uint64_t> bytes = byteSize(view.dtype, shape);
    if (!bytes || *bytes != view.size || (view.size > 0 && !view.data))
      return Status::error(
          StatusCode::InvalidArgument, "lccNpyWrite: ", view.size,
          " bytes of data do not hold a ",
          isValidDType(view.dtype) ? formatType(shape, view.dtype)
                                   : formatShape(shape) + " tensor of unknown "
                                                          "dtype");
    return writeNpy(path, view.dtype, shape, view.data);
  });
}

LccStatus lccCommunicatorCreate(LccCommunicator *communicator) {
  return guarded("lccCommunicatorCreate", [&]() -> Status {
    if (!communicator)
      return nullArgument("lccCommunicatorCreate", "communicator");
    StatusOr<std::unique_ptr<Communicator>> created = createCommunicator();
    if (!created.ok())
      return created.getStatus();
    std::string description = (*created)->describe();
    *communicator =
        new LccCommunicatorImpl{created.take(), std::move(description)};
    return Status();
  });
}

void lccCommunicatorDestroy(LccCommunicator communicator) {
  delete communicator;
}

int lccCommunicatorGetRank(LccCommunicator communicator) {
  return communicator->communicator->rank();
}

int lccCommunicatorGetSize(LccCommunicator communicator) {
  return communicator->communicator->size();
}

const char *lccCommunicatorDescribe(LccCommunicator communicator) {
  return communicator->description.c_str();
}

LccStatus lccCommunicatorAllReduceSum(LccCommunicator communicator, float *data,
                                      size_t count) {
  return guarded("lccCommunicatorAllReduceSum", [&]() -> Status {
    if (!communicator || (!data && count))
      return nullArgument("lccCommunicatorAllReduceSum",
                          !communicator ? "communicator" : "data");
    return communicator->communicator->allReduceSum(data, count);
  });
}

LccStatus lccCommunicatorAllGather(LccCommunicator communicator,
                                   const void *data, size_t bytes, void *out) {
  return guarded("lccCommunicatorAllGather", [&]() -> Status {
    if (!communicator || (bytes && (!data || !out)))
      return nullArgument("lccCommunicatorAllGather", !communicator
                                                          ? "communicator"
                                                      : !data ? "data"
                                                              : "out");
    return communicator->communicator->allGather(data, bytes, out);
  });
}

uint64_t lccCommunicatorGetSentBytes(LccCommunicator communicator) {
  return communicator ? communicator->communicator->getSentBytes() : 0;
}

LccStatus lccSessionSetCommunicator(LccSession session,
                                    LccCommunicator communicator) {
  return guarded("lccSessionSetCommunicator", [&]() -> Status {
    if (!session)
      return nullArgument("lccSessionSetCommunicator", "session");
    session->session->setCommunicator(
        communicator ? communicator->communicator.get() : nullptr);
    return Status();
  });
}

void lccCommunicatorAbort(LccCommunicator communicator, int code) {
  communicator->communicator->abort(code);
}

LccStatus lccFileCheckWritable(const char *path) {
  return guarded("lccFileCheckWritable", [&]() -> Status {
    if (!path)
      return nullArgument("lccFileCheckWritable", "path");
    return OutputFile::checkWritable(path);
  });
}

LccStatus lccSafetensorsWrite(const char *path, const LccTensorView *tensors,
                              size_t count) {
  return guarded("lccSafetensorsWrite", [&]() -> Status {
    if (!path || (!tensors && count > 0))
      return nullArgument("lccSafetensorsWrite", !path ? "path" : "tensors");
    std::vector<SafetensorsLayout> layout;
    for (size_t i = 0; i < count; ++i) {
      TensorView view = fromC(tensors[i]);
      if (!tensors[i].name)
        return Status::error(StatusCode::InvalidArgument,
                             "lccSafetensorsWrite: tensor ", i, " has no name");
      if (view.size > 0 && !view.data)
        return Status::error(StatusCode::InvalidArgument,
                             "lccSafetensorsWrite: tensor ",
                             quoted(tensors[i].name), " has no data");
      layout.push_back(
          {tensors[i].name, view.dtype,
           std::vector<int64_t>(view.shape, view.shape + view.rank),
           view.size});
    }
    // The writer checks each size against its dtype and shape.
    StatusOr<SafetensorsWriter> file = SafetensorsWriter::create(path, layout);
    if (!file.ok())
      return file.getStatus();
    for (size_t i = 0; i < count; ++i)
      LCC_RETURN_IF_ERROR(file->write(tensors[i].data, tensors[i].size));
    return file->commit();
  });
}

} // extern "C"
