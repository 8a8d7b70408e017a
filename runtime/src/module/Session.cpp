//===- Session.cpp - a module loaded on a device, and its functions -------===//

#include "module/Session.h"

#include "formats/Safetensors.h"
#include "module/Collectives.h"
#include "module/ExecutableSelection.h"
#include "module/ParameterInit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace lcc::runtime {
namespace {

uint64_t nowNanoseconds() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

std::string describeArgument(const char *kind, size_t index,
                             const lcm::TensorSignature &signature) {
  return std::string(kind) + " " + std::to_string(index) + " " +
         quoted(getName(signature));
}

/// Checks that every element of an integer `value` lies in the signature's
/// valid range: the compiled code indexes a table with it.
Status checkValueRange(const TensorView &value,
                       const lcm::TensorSignature &signature,
                       const std::string &what) {
  const flatbuffers::Vector<int64_t> *range = signature.valid_range();
  if (!range || range->size() != 2)
    return Status();
  int64_t low = readUnaligned(*range, 0), high = readUnaligned(*range, 1);
  size_t count;
  auto element = [&](size_t i) -> int64_t {
    int64_t v;
    if (value.dtype == lcm::DType::I32) {
      int32_t narrow;
      std::memcpy(&narrow, static_cast<const char *>(value.data) + 4 * i, 4);
      v = narrow;
    } else {
      std::memcpy(&v, static_cast<const char *>(value.data) + 8 * i, 8);
    }
    return v;
  };
  if (value.dtype == lcm::DType::I32)
    count = value.size / 4;
  else if (value.dtype == lcm::DType::I64)
    count = value.size / 8;
  else
    return Status();
  for (size_t i = 0; i < count; ++i) {
    int64_t v = element(i);
    if (v < low || v > high)
      return Status::error(StatusCode::InvalidArgument, what, ": element ", i,
                           " is ", v, ", outside the valid range [", low, ", ",
                           high, "] of the table it indexes");
  }
  return Status();
}

/// Checks that `value` has the dtype and shape of `signature`.
Status checkTensor(const TensorView &value,
                   const lcm::TensorSignature &signature,
                   const std::string &what) {
  std::vector<int64_t> expected = getShape(signature);
  std::vector<int64_t> actual(value.shape, value.shape + value.rank);
  if (value.dtype != signature.dtype() || actual != expected)
    return Status::error(StatusCode::InvalidArgument, what, ": expected shape ",
                         formatType(expected, signature.dtype()), ", got ",
                         isValidDType(value.dtype)
                             ? formatType(actual, value.dtype)
                             : formatShape(actual) + " of unknown dtype");
  uint64_t bytes = *byteSize(signature.dtype(), expected);
  if (value.size != bytes || (bytes > 0 && !value.data))
    return Status::error(StatusCode::InvalidArgument, what, ": expected ",
                         bytes, " bytes of data for ",
                         formatType(expected, signature.dtype()), ", got ",
                         value.data ? value.size : 0);
  return checkValueRange(value, signature, what);
}

} // namespace

//===----------------------------------------------------------------------===//
// Function
//===----------------------------------------------------------------------===//

Function::Function(Session &session, const lcm::Function &definition)
    : session(session), definition(definition), name(definition.name()->str()) {
}

const lcm::TensorSignature &Function::getInput(size_t index) const {
  return *inputs[index].signature;
}

const lcm::TensorSignature &Function::getOutput(size_t index) const {
  return *outputs[index].signature;
}

Status Function::prepare(size_t index) {
  Device &device = session.getDevice();
  Allocator &allocator = device.getAllocator();
  std::string path = "functions[" + std::to_string(index) + "]";
  auto makeArguments = [&](const auto *signatures, std::vector<Argument> &out,
                           const char *kind) -> Status {
    if (!signatures)
      return Status();
    for (size_t i = 0; i < signatures->size(); ++i) {
      const lcm::TensorSignature *signature = signatures->Get(i);
      std::vector<int64_t> shape = getShape(*signature);
      StatusOr<DeviceBuffer> buffer =
          allocator.allocate(*byteSize(signature->dtype(), shape),
                             describeArgument(kind, i, *signature) +
                                 " of function " + quoted(name));
      if (!buffer.ok())
        return buffer.getStatus();
      out.push_back({signature, std::move(shape), buffer.take(), {}});
    }
    return Status();
  };
  LCC_RETURN_IF_ERROR(makeArguments(definition.inputs(), inputs, "input"));
  for (Argument &input : inputs)
    input.boundTo = input.buffer.data();
  LCC_RETURN_IF_ERROR(makeArguments(definition.outputs(), outputs, "output"));
  StatusOr<DeviceBuffer> arenaBuffer = allocator.allocate(
      definition.arena_size(), "the arena of function " + quoted(name));
  if (!arenaBuffer.ok())
    return arenaBuffer.getStatus();
  arena = arenaBuffer.take();

  // Where each buffer starts; the loader checked every index and range.
  std::vector<char *> bufferBase;
  if (definition.buffers()) {
    for (const lcm::Buffer *buffer : *definition.buffers()) {
      void *base = nullptr;
      switch (buffer->kind()) {
      case lcm::BufferKind::Input:
        base = inputs[buffer->index()].buffer.data();
        break;
      case lcm::BufferKind::Output:
        base = outputs[buffer->index()].buffer.data();
        break;
      case lcm::BufferKind::Parameter:
        base = session.parameters[buffer->index()].data();
        usedParameters.push_back(buffer->index());
        break;
      case lcm::BufferKind::Transient:
        base = static_cast<char *>(arena.data()) + buffer->arena_offset();
        break;
      }
      bufferBase.push_back(static_cast<char *>(base));
    }
  }
  auto resolve = [&](const lcm::Binding &binding) -> void * {
    return bufferBase[binding.buffer()] + binding.offset();
  };
  // Which bindings read an input, to point them at the caller's data.
  auto noteReader = [&](const lcm::Binding &binding, size_t command,
                        size_t slot) {
    const lcm::Buffer &buffer = *definition.buffers()->Get(binding.buffer());
    if (buffer.kind() == lcm::BufferKind::Input)
      inputs[buffer.index()].readers.push_back(
          {command, slot, binding.offset()});
  };
  // Ring shifts and all-reduces run behind the commands after them where
  // the device's memory is the host's (the communicator moves the bytes
  // there); each command then waits for those that move bytes it touches.
  bool inFlight = false;
  if (session.getDevice().isHostAddressable() && definition.commands())
    for (const lcm::Command *command : *definition.commands())
      inFlight |=
          command->kind() == lcm::CommandKind::AllReduce ||
          (command->kind() == lcm::CommandKind::Exchange &&
           command->exchange()->pattern() == lcm::ExchangePattern::Ring);
  std::vector<ByteRange> touched;
  auto touch = [&](const void *data, uint64_t bytes) {
    touched.push_back({data, bytes});
  };

  const DeviceExecutable *executable = nullptr;
  std::vector<DeviceCommand> prepared;
  size_t commandCount =
      definition.commands() ? definition.commands()->size() : 0;
  for (size_t c = 0; c < commandCount; ++c) {
    const lcm::Command &command = *definition.commands()->Get(c);
    DeviceCommand next;
    touched.clear();
    next.kind = command.kind();
    next.name = runtime::getCommandName(command, c);
    next.location = command.location() ? command.location()->str() : "";
    if (command.kind() == lcm::CommandKind::Dispatch) {
      if (!executable) {
        StatusOr<const DeviceExecutable *> loaded = session.getExecutable();
        if (!loaded.ok())
          return loaded.getStatus().withContext(path + ".commands[" +
                                                std::to_string(c) + "]");
        executable = *loaded;
      }
      const lcm::Dispatch &dispatch = *command.dispatch();
      next.entryPoint = dispatch.entry_point();
      for (size_t i = 0; i < 3; ++i)
        next.workgroupCount[i] = dispatch.workgroup_count()->Get(i);
      if (dispatch.bindings())
        for (const lcm::Binding *binding : *dispatch.bindings()) {
          noteReader(*binding, c, next.bindings.size());
          next.bindings.push_back(resolve(*binding));
          next.bindingLengths.push_back(binding->length());
          touch(next.bindings.back(), binding->length());
        }
    } else if (command.kind() == lcm::CommandKind::AllReduce) {
      const lcm::AllReduce &allReduce = *command.all_reduce();
      std::vector<ReducedRange> ranges;
      for (const lcm::Binding *range : *allReduce.ranges()) {
        ranges.push_back({resolve(*range), range->length()});
        touch(ranges.back().data, range->length());
      }
      next.hostStep = makeAllReduceStep(
          session.getDevice(), &session.communicator, std::move(ranges),
          allReduce.reduction() == lcm::Reduction::Mean, next.name,
          inFlight ? &transfers : nullptr);
    } else if (command.kind() == lcm::CommandKind::Exchange) {
      const lcm::Exchange &exchange = *command.exchange();
      ExchangeSpec spec{exchange.pattern(),
                        exchange.blocks(),
                        exchange.ring_offset(),
                        resolve(*exchange.source()),
                        resolve(*exchange.target()),
                        exchange.source()->length(),
                        exchange.target()->length()};
      touch(spec.source, spec.sourceBytes);
      touch(spec.target, spec.targetBytes);
      next.hostStep =
          makeExchangeStep(session.getDevice(), &session.communicator, spec,
                           next.name, inFlight ? &transfers : nullptr);
    } else {
      const lcm::Copy &copy = *command.copy();
      noteReader(*copy.source(), c, 1);
      next.bindings = {resolve(*copy.target()), resolve(*copy.source())};
      next.copyLength = copy.source()->length();
      touch(next.bindings[0], next.copyLength);
      touch(next.bindings[1], next.copyLength);
    }
    if (inFlight)
      next.beforeRun = [this, ranges = touched]() {
        return transfers.settle(ranges);
      };
    stats.push_back({next.name, next.location, command.kind(), 0,
                     std::isfinite(command.flops()) && command.flops() > 0
                         ? command.flops()
                         : 0.0});
    prepared.push_back(std::move(next));
  }
  lastNanoseconds.resize(commandCount);
  StatusOr<std::unique_ptr<CommandList>> list =
      device.createCommandList(executable, std::move(prepared), path);
  if (!list.ok())
    return list.getStatus();
  commands = list.take();
  return Status();
}

Status Function::call(const TensorView *values, size_t count) {
  std::lock_guard<std::mutex> lock(callMutex);
  if (count != inputs.size())
    return Status::error(StatusCode::InvalidArgument, "function ", quoted(name),
                         " takes ", inputs.size(), " input",
                         inputs.size() == 1 ? "" : "s", ", got ", count);
  for (size_t i = 0; i < count; ++i) {
    const lcm::TensorSignature &signature = *inputs[i].signature;
    // Inputs are taken by position; a name, when given, must agree.
    if (values[i].name && values[i].name != runtime::getName(signature))
      return Status::error(StatusCode::InvalidArgument,
                           describeArgument("input", i, signature),
                           " is given as ", quoted(values[i].name),
                           ": inputs are taken in order, and a name given "
                           "with one must be its own");
    if (!values[i].data && inputs[i].holdsCarriedValue)
      continue; // keeps the result carried into it
    LCC_RETURN_IF_ERROR(checkTensor(values[i], signature,
                                    describeArgument("input", i, signature)));
  }
  {
    std::lock_guard<std::mutex> bindings(session.mutex);
    for (uint32_t index : usedParameters)
      if (!session.parameterBound[index])
        return Status::error(
            StatusCode::InvalidArgument, "parameter ",
            quoted(runtime::getName(
                *session.module->getParameter(index).signature())),
            " of function ", quoted(name),
            " is not bound; give a weights file (--params)");
  }

  Device &device = session.getDevice();
  uint64_t callStart = nowNanoseconds();
  for (size_t i = 0; i < count; ++i) {
    Argument &input = inputs[i];
    if (!values[i].data && input.holdsCarriedValue) {
      LCC_RETURN_IF_ERROR(bindInput(i, input.buffer.data()));
      continue;
    }
    // Read in place where the commands could have read the buffer: a
    // carried input's buffer is written after the call, so it stays.
    bool inPlace =
        device.isHostAddressable() && !input.carriedFrom &&
        reinterpret_cast<uintptr_t>(values[i].data) % kBufferAlignment == 0;
    if (!inPlace) {
      LCC_RETURN_IF_ERROR(device.copyToDevice(input.buffer.data(),
                                              values[i].data, values[i].size));
      copiedInputBytes += values[i].size;
    }
    LCC_RETURN_IF_ERROR(
        bindInput(i, inPlace ? values[i].data : input.buffer.data()));
  }
  // Every transfer finishes within the call, whether or not it ran to the
  // end (MPI owns its bytes until then). It can: the other ranks run the
  // same commands past every transfer this rank started, so they post its
  // other side; the tools then end the job on this rank's error.
  Status ran = commands->run(lastNanoseconds.data());
  Status settled = transfers.settleAll();
  LCC_RETURN_IF_ERROR(ran);
  LCC_RETURN_IF_ERROR(settled);
  for (Argument &input : inputs) {
    if (!input.carriedFrom)
      continue;
    const Argument &output = outputs[*input.carriedFrom];
    LCC_RETURN_IF_ERROR(device.copyOnDevice(
        input.buffer.data(), output.buffer.data(), input.buffer.size()));
    input.holdsCarriedValue = true;
  }
  // The results, copied for the calling thread while the call is still
  // its own: another thread's next call rewrites the output buffers.
  ThreadResults &results = resultsOfThisThread();
  for (size_t i = 0; i < outputs.size(); ++i)
    LCC_RETURN_IF_ERROR(device.copyToHost(
        results[i].data(), outputs[i].buffer.data(), results[i].size()));
  totalNanoseconds += nowNanoseconds() - callStart;
  for (size_t c = 0; c < stats.size(); ++c)
    stats[c].totalNanoseconds += lastNanoseconds[c];
  ++callCount;
  return Status();
}

Status Function::bindInput(size_t index, const void *data) {
  Argument &input = inputs[index];
  if (input.boundTo == data)
    return Status();
  for (const Argument::Reader &reader : input.readers)
    LCC_RETURN_IF_ERROR(commands->rebind(
        reader.command, reader.binding,
        const_cast<char *>(static_cast<const char *>(data)) + reader.offset));
  input.boundTo = data;
  return Status();
}

Status Function::carryResult(size_t result, size_t input) {
  std::lock_guard<std::mutex> lock(callMutex);
  if (result >= outputs.size() || input >= inputs.size())
    return Status::error(
        StatusCode::InvalidArgument, "function ", quoted(name), " has ",
        outputs.size(), " result", outputs.size() == 1 ? "" : "s", " and ",
        inputs.size(), " input", inputs.size() == 1 ? "" : "s",
        ": it cannot carry result ", result, " to input ", input);
  Argument &to = inputs[input];
  const Argument &from = outputs[result];
  std::string what = "carrying " +
                     describeArgument("result", result, *from.signature) +
                     " to " + describeArgument("input", input, *to.signature);
  if (to.signature->dtype() != from.signature->dtype() ||
      to.shape != from.shape)
    return Status::error(StatusCode::InvalidArgument, what,
                         ": their types differ, ",
                         formatType(from.shape, from.signature->dtype()),
                         " and ", formatType(to.shape, to.signature->dtype()));
  if (to.carriedFrom && *to.carriedFrom != result)
    return Status::error(StatusCode::InvalidArgument, what,
                         ": the input already takes result ", *to.carriedFrom);
  to.carriedFrom = result;
  return Status();
}

TensorView Function::getInputType(size_t index) const {
  const Argument &input = inputs[index];
  TensorView view;
  view.dtype = input.signature->dtype();
  view.shape = input.shape.data();
  view.rank = input.shape.size();
  view.size = input.buffer.size();
  return view;
}

Function::ThreadResults &Function::resultsOfThisThread() const {
  ThreadResults &results = resultsByThread[std::this_thread::get_id()];
  if (results.empty())
    for (const Argument &output : outputs)
      results.emplace_back(output.buffer.size(), 0);
  return results;
}

TensorView Function::getOutputType(size_t index) const {
  const Argument &output = outputs[index];
  TensorView view;
  view.dtype = output.signature->dtype();
  view.shape = output.shape.data();
  view.rank = output.shape.size();
  view.size = output.buffer.size();
  return view;
}

TensorView Function::getResult(size_t index) const {
  std::lock_guard<std::mutex> lock(callMutex);
  TensorView view = getOutputType(index);
  view.data = resultsOfThisThread()[index].data();
  return view;
}

uint64_t Function::getCallCount() const {
  std::lock_guard<std::mutex> lock(callMutex);
  return callCount;
}

uint64_t Function::getTotalNanoseconds() const {
  std::lock_guard<std::mutex> lock(callMutex);
  return totalNanoseconds;
}

uint64_t Function::getCopiedInputBytes() const {
  std::lock_guard<std::mutex> lock(callMutex);
  return copiedInputBytes;
}

std::vector<CommandStats> Function::getCommandStats() const {
  std::lock_guard<std::mutex> lock(callMutex);
  return stats;
}

uint64_t Function::getCommandNanoseconds(size_t index) const {
  std::lock_guard<std::mutex> lock(callMutex);
  return stats[index].totalNanoseconds;
}

void Function::resetStats() {
  std::lock_guard<std::mutex> lock(callMutex);
  callCount = 0;
  totalNanoseconds = 0;
  copiedInputBytes = 0;
  for (CommandStats &command : stats)
    command.totalNanoseconds = 0;
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

bool isDecodeCache(const lcm::Parameter &parameter) {
  return parameter.state() &&
         getName(*parameter.signature()).rfind(lcm::kDecodeCachePrefix, 0) == 0;
}

Session::Session(std::shared_ptr<Device> device,
                 std::shared_ptr<const Module> module)
    : device(std::move(device)), module(std::move(module)) {}

Session::~Session() = default;

StatusOr<std::unique_ptr<Session>>
Session::create(std::shared_ptr<Device> device,
                std::shared_ptr<const Module> module) {
  std::unique_ptr<Session> session(
      new Session(std::move(device), std::move(module)));
  const Module &loaded = *session->module;
  // A module without executables only copies; one with them must have
  // code for this device, which is loaded when a function first needs it.
  if (loaded.get().executables() && loaded.get().executables()->size() > 0) {
    StatusOr<size_t> selected =
        selectExecutable(loaded.get(), session->device->getTarget());
    if (!selected.ok())
      return selected.getStatus();
    session->executableIndex = *selected;
  }
  for (size_t i = 0; i < loaded.getParameterCount(); ++i) {
    const lcm::Parameter &parameter = loaded.getParameter(i);
    const lcm::TensorSignature &signature = *parameter.signature();
    std::string name = getName(signature);
    StatusOr<DeviceBuffer> buffer = session->device->getAllocator().allocate(
        *byteSize(signature.dtype(), getShape(signature)),
        "parameter " + quoted(name));
    if (!buffer.ok())
      return buffer.getStatus();
    if (parameter.data())
      LCC_RETURN_IF_ERROR(session->device->copyToDevice(
          buffer->data(), parameter.data()->data(), parameter.data()->size()));
    else if (parameter.state() &&
             parameter.init() == lcm::ParameterInit::Constant)
      LCC_RETURN_IF_ERROR(session->fillConstant(parameter, *buffer));
    session->parameters.push_back(buffer.take());
    // State is zero, as allocated, or its starting value (a training
    // hyper-parameter's); weights wait for a file.
    session->parameterBound.push_back(parameter.data() || parameter.state());
    session->parameterIndex[name] = i;
  }
  return session;
}

Status Session::bindParameters(const std::string &path) {
  StatusOr<std::unique_ptr<SafetensorsReader>> reader =
      SafetensorsReader::open(path);
  if (!reader.ok())
    return reader.getStatus();
  std::lock_guard<std::mutex> lock(mutex);
  LCC_RETURN_IF_ERROR(checkStateComplete(**reader, path));
  for (size_t i = 0; i < module->getParameterCount(); ++i) {
    const lcm::Parameter &parameter = module->getParameter(i);
    if (parameter.data())
      continue;
    const lcm::TensorSignature &signature = *parameter.signature();
    StatusOr<const SafetensorsEntry *> entry =
        (*reader)->find(getName(signature));
    // Weights files hold no state; checkpoints hold all of it.
    if (!entry.ok() && parameter.state())
      continue;
    if (!entry.ok())
      return entry.getStatus();
    std::vector<int64_t> shape = getShape(signature);
    if ((*entry)->dtype != signature.dtype() || (*entry)->shape != shape)
      return Status::error(StatusCode::InvalidArgument, "weights file ",
                           quoted(path), ": parameter ",
                           quoted(getName(signature)), ": expected shape ",
                           formatType(shape, signature.dtype()), ", got ",
                           formatType((*entry)->shape, (*entry)->dtype));
    if (device->isHostAddressable()) {
      LCC_RETURN_IF_ERROR((*reader)->read(**entry, parameters[i].data()));
    } else {
      // Read into host memory first: one parameter at a time, so the
      // staging never needs more than the largest parameter.
      std::vector<uint8_t> staging(parameters[i].size());
      LCC_RETURN_IF_ERROR((*reader)->read(**entry, staging.data()));
      LCC_RETURN_IF_ERROR(device->copyToDevice(parameters[i].data(),
                                               staging.data(), staging.size()));
    }
    parameterBound[i] = true;
  }
  return Status();
}

Status Session::fillConstant(const lcm::Parameter &parameter,
                             DeviceBuffer &buffer) {
  ParameterValues values(parameter, /*seed=*/0);
  LCC_RETURN_IF_ERROR(values.check());
  // A chunk at a time: a module's parameter may be as large as the device.
  uint64_t elementBytes = buffer.size() / std::max<uint64_t>(1, values.size());
  uint64_t chunk =
      std::max<uint64_t>(1, (1u << 20) / std::max<uint64_t>(1, elementBytes));
  std::vector<uint8_t> host(chunk * elementBytes);
  for (uint64_t done = 0; done < values.size(); done += chunk) {
    uint64_t count = std::min(chunk, values.size() - done);
    values.next(host.data(), count);
    LCC_RETURN_IF_ERROR(device->copyToDevice(
        static_cast<uint8_t *>(buffer.data()) + done * elementBytes,
        host.data(), count * elementBytes));
  }
  return Status();
}

Status Session::checkStateComplete(const SafetensorsReader &file,
                                   const std::string &path) const {
  // A checkpoint says so (writeParameters marks it); an older one shows it
  // by holding some state.
  bool checkpoint = file.getHeader().metadata.count(kCheckpointKey) != 0;
  std::optional<size_t> missing;
  for (size_t i = 0; i < module->getParameterCount(); ++i) {
    const lcm::Parameter &parameter = module->getParameter(i);
    if (!parameter.state() || isDecodeCache(parameter))
      continue;
    bool held = file.find(getName(*parameter.signature())).ok();
    checkpoint |= held;
    if (!held && !missing)
      missing = i;
  }
  if (!checkpoint || !missing)
    return Status();
  return Status::error(
      StatusCode::InvalidData, "checkpoint ", quoted(path),
      " lacks the optimizer state ",
      quoted(getName(*module->getParameter(*missing).signature())),
      ": a checkpoint holds all of it (resuming with zeros in its place "
      "would not continue the run); a weights file holds none");
}

Status Session::bindParameter(const std::string &name,
                              const TensorView &value) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = parameterIndex.find(name);
  if (it == parameterIndex.end())
    return Status::error(StatusCode::NotFound, "the module has no parameter ",
                         quoted(name));
  const lcm::Parameter &parameter = module->getParameter(it->second);
  if (parameter.data())
    return Status::error(StatusCode::InvalidArgument, "parameter ",
                         quoted(name),
                         " is embedded in the module and cannot be rebound");
  LCC_RETURN_IF_ERROR(
      checkTensor(value, *parameter.signature(), "parameter " + quoted(name)));
  LCC_RETURN_IF_ERROR(device->copyToDevice(parameters[it->second].data(),
                                           value.data, value.size));
  parameterBound[it->second] = true;
  return Status();
}

Status Session::initializeParameters(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex);
  // Every init is checked first: an error leaves no parameter half-set.
  for (size_t i = 0; i < module->getParameterCount(); ++i)
    if (isWeight(module->getParameter(i)))
      LCC_RETURN_IF_ERROR(
          ParameterValues(module->getParameter(i), seed).check());
  std::vector<uint8_t> chunk;
  for (size_t i = 0; i < module->getParameterCount(); ++i) {
    const lcm::Parameter &parameter = module->getParameter(i);
    if (!isWeight(parameter))
      continue;
    ParameterValues values(parameter, seed);
    size_t elementBytes = dtypeSize(parameter.signature()->dtype());
    char *base = static_cast<char *>(parameters[i].data());
    // A chunk at a time through host memory, as the file writer does; on
    // the cpu straight into the parameter.
    for (uint64_t done = 0; done < values.size();) {
      uint64_t step = std::min(kInitChunkElements, values.size() - done);
      uint64_t offset = done * elementBytes;
      if (device->isHostAddressable()) {
        values.next(reinterpret_cast<uint8_t *>(base + offset), step);
      } else {
        chunk.resize(step * elementBytes);
        values.next(chunk.data(), step);
        LCC_RETURN_IF_ERROR(
            device->copyToDevice(base + offset, chunk.data(), chunk.size()));
      }
      done += step;
    }
    parameterBound[i] = true;
  }
  return Status();
}

Status Session::checkBound(size_t index, const std::string &what) const {
  if (parameterBound[index])
    return Status();
  return Status::error(
      StatusCode::InvalidArgument, what, "parameter ",
      quoted(getName(*module->getParameter(index).signature())),
      " is not bound; give a weights file (--params)");
}

Status Session::readParameter(size_t index, std::vector<uint8_t> &out) {
  std::lock_guard<std::mutex> lock(mutex);
  LCC_RETURN_IF_ERROR(checkBound(index, ""));
  const DeviceBuffer &buffer = parameters[index];
  out.resize(buffer.size());
  if (buffer.size() == 0)
    return Status();
  return device->copyToHost(out.data(), buffer.data(), buffer.size());
}

Status Session::writeParameters(
    const std::string &path,
    const std::map<std::string, std::string> &extraMetadata) {
  std::lock_guard<std::mutex> lock(mutex);
  std::map<std::string, std::string> metadata = extraMetadata;
  metadata[kProducerKey] = "lcc " LCC_VERSION;
  metadata[kCheckpointKey] = "every parameter, optimizer state included";
  std::vector<SafetensorsLayout> layout;
  std::vector<size_t> written;
  for (size_t i = 0; i < module->getParameterCount(); ++i) {
    const lcm::Parameter &parameter = module->getParameter(i);
    if (parameter.data() || isDecodeCache(parameter))
      continue;
    LCC_RETURN_IF_ERROR(checkBound(i, "cannot write " + quoted(path) + ": "));
    const lcm::TensorSignature &signature = *parameter.signature();
    layout.push_back({getName(signature), signature.dtype(),
                      getShape(signature), parameters[i].size()});
    written.push_back(i);
  }
  StatusOr<SafetensorsWriter> file =
      SafetensorsWriter::create(path, layout, metadata);
  if (!file.ok())
    return file.getStatus();
  // Device memory goes out through a bounded staging buffer; the cpu's is
  // written as it is.
  constexpr uint64_t kStagingBytes = uint64_t(1) << 24;
  std::vector<uint8_t> staging;
  for (size_t i : written) {
    const char *base = static_cast<const char *>(parameters[i].data());
    uint64_t size = parameters[i].size();
    if (device->isHostAddressable()) {
      LCC_RETURN_IF_ERROR(file->write(base, size));
      continue;
    }
    for (uint64_t done = 0; done < size;) {
      uint64_t step = std::min(kStagingBytes, size - done);
      staging.resize(step);
      LCC_RETURN_IF_ERROR(
          device->copyToHost(staging.data(), base + done, step));
      LCC_RETURN_IF_ERROR(file->write(staging.data(), step));
      done += step;
    }
  }
  return file->commit();
}

StatusOr<const DeviceExecutable *> Session::getExecutable() {
  if (!executable) {
    StatusOr<std::unique_ptr<DeviceExecutable>> loaded = device->loadExecutable(
        module->getExecutable(executableIndex), executableIndex);
    if (!loaded.ok())
      return loaded.getStatus();
    executable = loaded.take();
  }
  return executable.get();
}

StatusOr<Function *> Session::lookupFunction(const std::string &name) {
  std::lock_guard<std::mutex> lock(mutex);
  size_t index = 0;
  if (name.empty()) {
    if (module->getFunctionCount() == 0)
      return Status::error(StatusCode::NotFound, "the module has no functions");
  } else {
    StatusOr<size_t> found = module->findFunction(name);
    if (!found.ok())
      return found.getStatus();
    index = *found;
  }
  auto it = functions.find(index);
  if (it != functions.end())
    return it->second.get();
  std::unique_ptr<Function> function(
      new Function(*this, module->getFunction(index)));
  LCC_RETURN_IF_ERROR(function->prepare(index));
  Function *result = function.get();
  functions[index] = std::move(function);
  return result;
}

} // namespace lcc::runtime
