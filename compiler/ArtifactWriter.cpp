//===- ArtifactWriter.cpp - the .lcm FlatBuffers file ---------------------===//

#include "compiler/ArtifactWriter.h"

#include "ModuleFormat.h"
#include "lcc/lcm_generated.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace lcc;

namespace {

std::optional<lcm::DType> dtypeOf(Type type) {
  if (type.isF32())
    return lcm::DType::F32;
  if (type.isF16())
    return lcm::DType::F16;
  if (type.isBF16())
    return lcm::DType::BF16;
  if (type.isInteger(32))
    return lcm::DType::I32;
  if (type.isInteger(64))
    return lcm::DType::I64;
  return std::nullopt;
}

class Writer {
public:
  FailureOr<std::string> run(ArrayRef<HostProgram> functions,
                             const ParameterTable &parameters,
                             ArrayRef<ExecutableImage> executables,
                             std::string &error, uint32_t contextParallel);

private:
  FailureOr<flatbuffers::Offset<lcm::TensorSignature>>
  signature(const TensorSignature &s, std::string &error) {
    std::optional<lcm::DType> dtype = dtypeOf(s.type.getElementType());
    if (!dtype) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "'" << s.name << "' has element type " << s.type.getElementType()
         << ", which an artifact cannot hold";
      error = text;
      return failure();
    }
    std::vector<int64_t> shape(s.type.getShape().begin(),
                               s.type.getShape().end());
    std::vector<int64_t> range;
    if (s.validRange)
      range = {s.validRange->first, s.validRange->second};
    return lcm::CreateTensorSignatureDirect(fbb, s.name.c_str(), *dtype, &shape,
                                            s.validRange ? &range : nullptr,
                                            int32_t(s.splitDim));
  }
  flatbuffers::Offset<lcm::Binding> binding(const BufferRange &r) {
    return lcm::CreateBinding(fbb, r.buffer, r.offset, r.length);
  }

  flatbuffers::FlatBufferBuilder fbb;
};

lcm::BufferKind bufferKind(BufferKind kind) {
  switch (kind) {
  case BufferKind::Input:
    return lcm::BufferKind::Input;
  case BufferKind::Output:
    return lcm::BufferKind::Output;
  case BufferKind::Parameter:
    return lcm::BufferKind::Parameter;
  case BufferKind::Transient:
    return lcm::BufferKind::Transient;
  }
  llvm_unreachable("unknown buffer kind");
}

lcm::ParameterInit parameterInit(ParameterInit init) {
  switch (init) {
  case ParameterInit::Normal:
    return lcm::ParameterInit::Normal;
  case ParameterInit::Zeros:
    return lcm::ParameterInit::Zeros;
  case ParameterInit::Ones:
    return lcm::ParameterInit::Ones;
  case ParameterInit::Constant:
    return lcm::ParameterInit::Constant;
  }
  llvm_unreachable("unknown parameter init");
}

lcm::ExecutableFormat executableFormat(ExecutableImage::Format format) {
  switch (format) {
  case ExecutableImage::Format::HostSharedObject:
    return lcm::ExecutableFormat::HostSharedObject;
  case ExecutableImage::Format::Ptx:
    return lcm::ExecutableFormat::Ptx;
  case ExecutableImage::Format::Cubin:
    return lcm::ExecutableFormat::Cubin;
  case ExecutableImage::Format::CudaEmulator:
    return lcm::ExecutableFormat::CudaEmulator;
  }
  llvm_unreachable("unknown executable format");
}

FailureOr<std::string> Writer::run(ArrayRef<HostProgram> functions,
                                   const ParameterTable &parameters,
                                   ArrayRef<ExecutableImage> executables,
                                   std::string &error,
                                   uint32_t contextParallel) {
  if (executables.empty()) {
    error = "the module has no executable";
    return failure();
  }
  llvm::StringMap<unsigned> entryIndex;
  for (auto [i, entry] : llvm::enumerate(executables.front().entryPoints))
    entryIndex[entry.name] = i;
  std::vector<flatbuffers::Offset<lcm::Executable>> executableOffsets;
  for (const ExecutableImage &executable : executables) {
    const auto &first = executables.front().entryPoints;
    if (executable.entryPoints.size() != first.size()) {
      error = "the " + executable.target + " executable has " +
              std::to_string(executable.entryPoints.size()) +
              " entry points, the " + executables.front().target + " one " +
              std::to_string(first.size());
      return failure();
    }
    std::vector<flatbuffers::Offset<lcm::EntryPoint>> entryPoints;
    for (auto [i, entry] : llvm::enumerate(executable.entryPoints)) {
      if (entry.name != first[i].name ||
          entry.bindingCount != first[i].bindingCount ||
          entry.workgroupCount != first[i].workgroupCount ||
          entry.bindingBytes != first[i].bindingBytes) {
        error = "entry point " + std::to_string(i) + " of the " +
                executable.target + " executable is '" + entry.name +
                "', the " + executables.front().target + " one's '" +
                first[i].name + "'";
        return failure();
      }
      std::vector<uint32_t> blockSize;
      if (executable.format != ExecutableImage::Format::HostSharedObject)
        blockSize.assign(entry.blockSize.begin(), entry.blockSize.end());
      std::vector<uint32_t> workgroups(entry.workgroupCount.begin(),
                                       entry.workgroupCount.end());
      std::vector<uint64_t> bytes(entry.bindingBytes.begin(),
                                  entry.bindingBytes.end());
      entryPoints.push_back(lcm::CreateEntryPointDirect(
          fbb, entry.name.c_str(), entry.bindingCount,
          blockSize.empty() ? nullptr : &blockSize, entry.sharedMemoryBytes,
          &workgroups, &bytes));
    }
    std::vector<uint8_t> image(executable.data.begin(), executable.data.end());
    std::vector<flatbuffers::Offset<flatbuffers::String>> cpuFeatures;
    for (const std::string &feature : executable.cpuFeatures)
      cpuFeatures.push_back(fbb.CreateString(feature));
    executableOffsets.push_back(lcm::CreateExecutableDirect(
        fbb, executableFormat(executable.format), executable.target.c_str(),
        &entryPoints, &image, cpuFeatures.empty() ? nullptr : &cpuFeatures,
        lcm::checksum(image.data(), image.size())));
  }

  std::vector<flatbuffers::Offset<lcm::Parameter>> parameterOffsets;
  for (const Parameter &p : parameters.parameters) {
    auto sig = signature(p.signature, error);
    if (failed(sig))
      return failure();
    parameterOffsets.push_back(lcm::CreateParameter(
        fbb, *sig, parameterInit(p.init), p.initScale,
        /*data=*/0, p.state, /*data_checksum=*/{}, p.initValue));
  }

  std::vector<flatbuffers::Offset<lcm::Function>> functionOffsets;
  for (const HostProgram &program : functions) {
    std::vector<flatbuffers::Offset<lcm::TensorSignature>> inputs, outputs;
    for (const TensorSignature &s : program.inputs) {
      auto sig = signature(s, error);
      if (failed(sig))
        return failure();
      inputs.push_back(*sig);
    }
    for (const TensorSignature &s : program.outputs) {
      auto sig = signature(s, error);
      if (failed(sig))
        return failure();
      outputs.push_back(*sig);
    }
    std::vector<flatbuffers::Offset<lcm::Buffer>> buffers;
    for (const PlannedBuffer &b : program.buffers)
      buffers.push_back(lcm::CreateBuffer(fbb, bufferKind(b.kind), b.index,
                                          b.size, b.arenaOffset));
    std::vector<flatbuffers::Offset<lcm::Command>> commands;
    for (const PlannedCommand &c : program.commands) {
      if (c.kind == PlannedCommand::Kind::Copy) {
        auto copy = lcm::CreateCopy(fbb, binding(c.source), binding(c.target));
        commands.push_back(lcm::CreateCommandDirect(
            fbb, lcm::CommandKind::Copy, c.name.c_str(), 0, copy,
            c.location.empty() ? nullptr : c.location.c_str()));
        continue;
      }
      if (c.kind == PlannedCommand::Kind::AllReduce) {
        std::vector<flatbuffers::Offset<lcm::Binding>> ranges;
        for (const BufferRange &r : c.bindings)
          ranges.push_back(binding(r));
        auto allReduce = lcm::CreateAllReduceDirect(
            fbb,
            c.reduction == PlannedCommand::Reduction::Mean
                ? lcm::Reduction::Mean
                : lcm::Reduction::Sum,
            &ranges);
        commands.push_back(lcm::CreateCommandDirect(
            fbb, lcm::CommandKind::AllReduce, c.name.c_str(), 0, 0,
            c.location.empty() ? nullptr : c.location.c_str(), 0, allReduce));
        continue;
      }
      if (c.kind == PlannedCommand::Kind::Exchange) {
        lcm::ExchangePattern pattern = lcm::ExchangePattern::AllToAll;
        switch (c.exchange) {
        case PlannedCommand::Exchange::AllToAll:
          break;
        case PlannedCommand::Exchange::Ring:
          pattern = lcm::ExchangePattern::Ring;
          break;
        case PlannedCommand::Exchange::RankSlice:
          pattern = lcm::ExchangePattern::RankSlice;
          break;
        case PlannedCommand::Exchange::RankPad:
          pattern = lcm::ExchangePattern::RankPad;
          break;
        }
        auto exchange = lcm::CreateExchange(
            fbb, pattern,
            uint64_t(c.blocks), c.ringOffset, binding(c.bindings[0]),
            binding(c.bindings[1]));
        commands.push_back(lcm::CreateCommandDirect(
            fbb, lcm::CommandKind::Exchange, c.name.c_str(), 0, 0,
            c.location.empty() ? nullptr : c.location.c_str(), 0, 0,
            exchange));
        continue;
      }
      auto entry = entryIndex.find(c.entryPoint);
      if (entry == entryIndex.end()) {
        error = "dispatch '" + c.entryPoint + "' has no compiled entry point";
        return failure();
      }
      std::vector<uint32_t> count(c.workgroupCount.begin(),
                                  c.workgroupCount.end());
      std::vector<flatbuffers::Offset<lcm::Binding>> bindings;
      for (const BufferRange &r : c.bindings)
        bindings.push_back(binding(r));
      auto dispatch =
          lcm::CreateDispatchDirect(fbb, entry->second, &count, &bindings);
      commands.push_back(lcm::CreateCommandDirect(
          fbb, lcm::CommandKind::Dispatch, c.name.c_str(), dispatch, 0,
          c.location.empty() ? nullptr : c.location.c_str(), c.flops));
    }
    functionOffsets.push_back(
        lcm::CreateFunctionDirect(fbb, program.name.c_str(), &inputs, &outputs,
                                  &buffers, program.arenaSize, &commands));
  }

  auto module = lcm::CreateModuleDirect(
      fbb, lcm::kModuleVersion, "lcc " LCC_VERSION, &functionOffsets,
      &parameterOffsets, &executableOffsets, contextParallel);
  lcm::FinishModuleBuffer(fbb, module);
  return std::string(reinterpret_cast<const char *>(fbb.GetBufferPointer()),
                     fbb.GetSize());
}

} // namespace

FailureOr<std::string> lcc::writeArtifact(ArrayRef<HostProgram> functions,
                                          const ParameterTable &parameters,
                                          ArrayRef<ExecutableImage> executables,
                                          std::string &error,
                                          uint32_t contextParallel) {
  return Writer().run(functions, parameters, executables, error,
                      contextParallel);
}
