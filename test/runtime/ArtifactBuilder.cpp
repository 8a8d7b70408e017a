//===- ArtifactBuilder.cpp - test-only .lcm writer ------------------------===//

#include "ArtifactBuilder.h"

namespace lcc::test {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

Offset<lcm::TensorSignature> buildSignature(FlatBufferBuilder &builder,
                                            const SignatureSpec &spec) {
  return lcm::CreateTensorSignatureDirect(builder, spec.name.c_str(),
                                          spec.dtype, &spec.shape);
}

Offset<lcm::Binding> buildBinding(FlatBufferBuilder &builder,
                                  const BindingSpec &spec) {
  return lcm::CreateBinding(builder, spec.buffer, spec.offset, spec.length);
}

Offset<lcm::Command> buildCommand(FlatBufferBuilder &builder,
                                  const CommandSpec &spec) {
  bool isDispatch = spec.kind == lcm::CommandKind::Dispatch;
  Offset<lcm::Dispatch> dispatch;
  if (spec.writeDispatch.value_or(isDispatch)) {
    std::vector<Offset<lcm::Binding>> bindings;
    for (const BindingSpec &binding : spec.bindings)
      bindings.push_back(buildBinding(builder, binding));
    dispatch = lcm::CreateDispatchDirect(builder, spec.entryPoint,
                                         &spec.workgroupCount, &bindings);
  }
  Offset<lcm::Copy> copy;
  if (spec.writeCopy.value_or(spec.kind == lcm::CommandKind::Copy))
    copy = lcm::CreateCopy(builder, buildBinding(builder, spec.source),
                           buildBinding(builder, spec.target));
  return lcm::CreateCommandDirect(
      builder, spec.kind, spec.name.empty() ? nullptr : spec.name.c_str(),
      dispatch, copy);
}

Offset<lcm::Function> buildFunction(FlatBufferBuilder &builder,
                                    const FunctionSpec &spec) {
  std::vector<Offset<lcm::TensorSignature>> inputs, outputs;
  for (const SignatureSpec &input : spec.inputs)
    inputs.push_back(buildSignature(builder, input));
  for (const SignatureSpec &output : spec.outputs)
    outputs.push_back(buildSignature(builder, output));
  std::vector<Offset<lcm::Buffer>> buffers;
  for (const BufferSpec &buffer : spec.buffers)
    buffers.push_back(lcm::CreateBuffer(builder, buffer.kind, buffer.index,
                                        buffer.size, buffer.arenaOffset));
  std::vector<Offset<lcm::Command>> commands;
  for (const CommandSpec &command : spec.commands)
    commands.push_back(buildCommand(builder, command));
  return lcm::CreateFunctionDirect(builder, spec.name.c_str(), &inputs,
                                   &outputs, &buffers, spec.arenaSize,
                                   &commands);
}

} // namespace

std::vector<uint8_t> buildModule(const ModuleSpec &spec) {
  FlatBufferBuilder builder;
  std::vector<Offset<lcm::Function>> functions;
  for (const FunctionSpec &function : spec.functions)
    functions.push_back(buildFunction(builder, function));
  std::vector<Offset<lcm::Parameter>> parameters;
  for (const ParameterSpec &parameter : spec.parameters)
    parameters.push_back(lcm::CreateParameterDirect(
        builder, buildSignature(builder, parameter.signature), parameter.init,
        parameter.initScale, parameter.data ? &*parameter.data : nullptr));
  std::vector<Offset<lcm::Executable>> executables;
  for (const ExecutableSpec &executable : spec.executables) {
    std::vector<Offset<lcm::EntryPoint>> entryPoints;
    for (const EntryPointSpec &entryPoint : executable.entryPoints)
      entryPoints.push_back(lcm::CreateEntryPointDirect(
          builder, entryPoint.name.c_str(), entryPoint.bindingCount,
          entryPoint.blockSize.empty() ? nullptr : &entryPoint.blockSize,
          entryPoint.sharedMemoryBytes));
    executables.push_back(lcm::CreateExecutableDirect(
        builder, executable.format, executable.target.c_str(), &entryPoints,
        &executable.data));
  }
  auto root =
      lcm::CreateModuleDirect(builder, spec.version, spec.producer.c_str(),
                              &functions, &parameters, &executables);
  builder.Finish(root, spec.identifier.c_str());
  return std::vector<uint8_t>(builder.GetBufferPointer(),
                              builder.GetBufferPointer() + builder.GetSize());
}

} // namespace lcc::test
