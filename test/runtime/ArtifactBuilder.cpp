//===- ArtifactBuilder.cpp - test-only .lcm writer ------------------------===//

#include "ArtifactBuilder.h"

#include <cstring>

namespace lcc::test {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

Offset<lcm::TensorSignature> buildSignature(FlatBufferBuilder &builder,
                                            const SignatureSpec &spec) {
  return lcm::CreateTensorSignatureDirect(
      builder, spec.name.c_str(), spec.dtype, &spec.shape,
      spec.validRange ? &*spec.validRange : nullptr, spec.splitDim);
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
  Offset<lcm::AllReduce> allReduce;
  if (spec.writeAllReduce.value_or(spec.kind == lcm::CommandKind::AllReduce)) {
    std::vector<Offset<lcm::Binding>> ranges;
    for (const BindingSpec &range : spec.ranges)
      ranges.push_back(buildBinding(builder, range));
    allReduce = lcm::CreateAllReduceDirect(builder, spec.reduction, &ranges);
  }
  Offset<lcm::Exchange> exchange;
  if (spec.writeExchange.value_or(spec.kind == lcm::CommandKind::Exchange))
    exchange = lcm::CreateExchange(
        builder, spec.pattern, spec.blocks, spec.ringOffset,
        buildBinding(builder, spec.source), buildBinding(builder, spec.target));
  return lcm::CreateCommandDirect(
      builder, spec.kind, spec.name.empty() ? nullptr : spec.name.c_str(),
      dispatch, copy, nullptr, 0.0, allReduce, exchange);
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

/// The first dispatch of entry point `index` in any function, if any.
const CommandSpec *firstDispatchOf(const ModuleSpec &spec, size_t index) {
  for (const FunctionSpec &function : spec.functions)
    for (const CommandSpec &command : function.commands)
      if (command.kind == lcm::CommandKind::Dispatch &&
          command.entryPoint == index)
        return &command;
  return nullptr;
}

/// The workgroup count and binding bytes written for entry point `index`.
std::pair<std::vector<uint32_t>, std::vector<uint64_t>>
requirementsOf(const ModuleSpec &spec, const EntryPointSpec &entryPoint,
               size_t index) {
  std::vector<uint32_t> workgroups = {1, 1, 1};
  std::vector<uint64_t> bytes(entryPoint.bindingCount, 0);
  if (const CommandSpec *first = firstDispatchOf(spec, index)) {
    workgroups = first->workgroupCount;
    bytes.clear();
    for (const BindingSpec &binding : first->bindings)
      bytes.push_back(binding.length);
  }
  if (entryPoint.workgroupCount)
    workgroups = *entryPoint.workgroupCount;
  if (entryPoint.bindingBytes)
    bytes = *entryPoint.bindingBytes;
  return {workgroups, bytes};
}

} // namespace

ModuleSpec pinKernelRequirements(ModuleSpec spec) {
  ModuleSpec pinned = spec;
  for (ExecutableSpec &executable : pinned.executables)
    for (size_t i = 0; i < executable.entryPoints.size(); ++i) {
      auto [workgroups, bytes] =
          requirementsOf(spec, executable.entryPoints[i], i);
      executable.entryPoints[i].workgroupCount = workgroups;
      executable.entryPoints[i].bindingBytes = bytes;
    }
  return pinned;
}

namespace {

flatbuffers::Optional<uint64_t>
flatbuffersOptional(const std::optional<uint64_t> &value) {
  return value ? flatbuffers::Optional<uint64_t>(*value) : flatbuffers::nullopt;
}

} // namespace

std::vector<uint8_t> buildModule(const ModuleSpec &spec) {
  FlatBufferBuilder builder;
  std::vector<Offset<lcm::Function>> functions;
  for (const FunctionSpec &function : spec.functions)
    functions.push_back(buildFunction(builder, function));
  std::vector<Offset<lcm::Parameter>> parameters;
  for (const ParameterSpec &parameter : spec.parameters) {
    std::optional<uint64_t> checksum = parameter.dataChecksum;
    if (parameter.data && !checksum)
      checksum = lcm::checksum(parameter.data->data(), parameter.data->size());
    if (!parameter.writeChecksum)
      checksum.reset();
    parameters.push_back(lcm::CreateParameterDirect(
        builder, buildSignature(builder, parameter.signature), parameter.init,
        parameter.initScale, parameter.data ? &*parameter.data : nullptr,
        parameter.state, flatbuffersOptional(checksum), parameter.initValue));
  }
  std::vector<Offset<lcm::Executable>> executables;
  for (const ExecutableSpec &executable : spec.executables) {
    std::vector<Offset<lcm::EntryPoint>> entryPoints;
    for (size_t index = 0; index < executable.entryPoints.size(); ++index) {
      const EntryPointSpec &entryPoint = executable.entryPoints[index];
      auto [workgroups, bytes] = requirementsOf(spec, entryPoint, index);
      entryPoints.push_back(lcm::CreateEntryPointDirect(
          builder, entryPoint.name.c_str(), entryPoint.bindingCount,
          entryPoint.blockSize.empty() ? nullptr : &entryPoint.blockSize,
          entryPoint.sharedMemoryBytes, &workgroups, &bytes));
    }
    std::vector<flatbuffers::Offset<flatbuffers::String>> cpuFeatures;
    for (const std::string &feature : executable.cpuFeatures)
      cpuFeatures.push_back(builder.CreateString(feature));
    std::optional<uint64_t> checksum;
    if (executable.writeChecksum)
      checksum = executable.dataChecksum.value_or(
          lcm::checksum(executable.data.data(), executable.data.size()));
    executables.push_back(lcm::CreateExecutableDirect(
        builder, executable.format, executable.target.c_str(), &entryPoints,
        &executable.data, cpuFeatures.empty() ? nullptr : &cpuFeatures,
        flatbuffersOptional(checksum)));
  }
  auto root = lcm::CreateModuleDirect(
      builder, spec.version, spec.producer.c_str(), &functions, &parameters,
      &executables, spec.contextParallel);
  builder.Finish(root, spec.identifier.c_str());
  return std::vector<uint8_t>(builder.GetBufferPointer(),
                              builder.GetBufferPointer() + builder.GetSize());
}

namespace {

template <typename T> std::vector<T> toVector(const flatbuffers::Vector<T> *v) {
  std::vector<T> out;
  if (v)
    for (size_t i = 0; i < v->size(); ++i) {
      T value;
      std::memcpy(&value, v->Data() + i * sizeof(T), sizeof(T));
      out.push_back(value);
    }
  return out;
}

std::string text(const flatbuffers::String *s) { return s ? s->str() : ""; }

SignatureSpec describeSignature(const lcm::TensorSignature *signature) {
  SignatureSpec spec;
  if (!signature)
    return spec;
  spec.name = text(signature->name());
  spec.dtype = signature->dtype();
  spec.shape = toVector(signature->shape());
  if (signature->valid_range())
    spec.validRange = toVector(signature->valid_range());
  spec.splitDim = signature->split_dim();
  return spec;
}

BindingSpec describeBinding(const lcm::Binding *binding) {
  if (!binding)
    return {};
  return {binding->buffer(), binding->offset(), binding->length()};
}

} // namespace

ModuleSpec describeModule(const lcm::Module &module) {
  ModuleSpec spec;
  spec.version = module.version();
  spec.contextParallel = module.context_parallel();
  spec.producer = text(module.producer());
  if (module.functions())
    for (const lcm::Function *function : *module.functions()) {
      FunctionSpec f;
      f.name = text(function->name());
      if (function->inputs())
        for (const lcm::TensorSignature *input : *function->inputs())
          f.inputs.push_back(describeSignature(input));
      if (function->outputs())
        for (const lcm::TensorSignature *output : *function->outputs())
          f.outputs.push_back(describeSignature(output));
      if (function->buffers())
        for (const lcm::Buffer *buffer : *function->buffers())
          f.buffers.push_back({buffer->kind(), buffer->index(), buffer->size(),
                               buffer->arena_offset()});
      f.arenaSize = function->arena_size();
      if (function->commands())
        for (const lcm::Command *command : *function->commands()) {
          CommandSpec c;
          c.kind = command->kind();
          c.name = text(command->name());
          if (const lcm::Dispatch *dispatch = command->dispatch()) {
            c.entryPoint = dispatch->entry_point();
            c.workgroupCount = toVector(dispatch->workgroup_count());
            if (dispatch->bindings())
              for (const lcm::Binding *binding : *dispatch->bindings())
                c.bindings.push_back(describeBinding(binding));
          }
          if (const lcm::Copy *copy = command->copy()) {
            c.source = describeBinding(copy->source());
            c.target = describeBinding(copy->target());
          }
          if (const lcm::AllReduce *allReduce = command->all_reduce()) {
            c.reduction = allReduce->reduction();
            if (allReduce->ranges())
              for (const lcm::Binding *range : *allReduce->ranges())
                c.ranges.push_back(describeBinding(range));
          }
          c.writeDispatch = command->dispatch() != nullptr;
          c.writeCopy = command->copy() != nullptr;
          c.writeAllReduce = command->all_reduce() != nullptr;
          f.commands.push_back(std::move(c));
        }
      spec.functions.push_back(std::move(f));
    }
  if (module.parameters())
    for (const lcm::Parameter *parameter : *module.parameters()) {
      ParameterSpec p;
      p.signature = describeSignature(parameter->signature());
      p.init = parameter->init();
      p.initScale = parameter->init_scale();
      if (parameter->data())
        p.data = toVector(parameter->data());
      p.state = parameter->state();
      if (parameter->data_checksum())
        p.dataChecksum = *parameter->data_checksum();
      p.writeChecksum = parameter->data_checksum().has_value();
      spec.parameters.push_back(std::move(p));
    }
  if (module.executables())
    for (const lcm::Executable *executable : *module.executables()) {
      ExecutableSpec e;
      e.format = executable->format();
      e.target = text(executable->target());
      e.data = toVector(executable->data());
      if (executable->data_checksum())
        e.dataChecksum = *executable->data_checksum();
      e.writeChecksum = executable->data_checksum().has_value();
      if (executable->cpu_features())
        for (const flatbuffers::String *feature : *executable->cpu_features())
          e.cpuFeatures.push_back(feature->str());
      if (executable->entry_points())
        for (const lcm::EntryPoint *entryPoint : *executable->entry_points()) {
          EntryPointSpec p;
          p.name = text(entryPoint->name());
          p.bindingCount = entryPoint->binding_count();
          p.blockSize = toVector(entryPoint->block_size());
          p.sharedMemoryBytes = entryPoint->shared_memory_bytes();
          p.workgroupCount = toVector(entryPoint->workgroup_count());
          p.bindingBytes = toVector(entryPoint->binding_bytes());
          e.entryPoints.push_back(std::move(p));
        }
      spec.executables.push_back(std::move(e));
    }
  return spec;
}

} // namespace lcc::test
