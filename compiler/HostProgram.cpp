//===- HostProgram.cpp - planning the host side of a function -------------===//

#include "compiler/HostProgram.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace lcc;

uint64_t lcc::byteSize(RankedTensorType type) {
  uint64_t elementBytes =
      llvm::divideCeil(type.getElementType().getIntOrFloatBitWidth(), 8);
  return elementBytes * static_cast<uint64_t>(type.getNumElements());
}

namespace {

/// How `attn-lower-to-linalg` asked the parameter to be initialised.
Parameter describeParameter(func::FuncOp host, unsigned argIndex,
                            StringRef name, RankedTensorType type) {
  Parameter p;
  p.signature = {name.str(), type, {}};
  if (auto init = host.getArgAttrOfType<StringAttr>(argIndex,
                                                    "attn.param_init")) {
    if (init.getValue() == "ones")
      p.init = ParameterInit::Ones;
    else if (init.getValue() == "zeros")
      p.init = ParameterInit::Zeros;
  }
  if (auto scale = host.getArgAttrOfType<FloatAttr>(argIndex,
                                                    "attn.param_scale"))
    p.initScale = static_cast<float>(scale.getValueAsDouble());
  return p;
}

class Planner {
public:
  Planner(func::FuncOp host, ParameterTable &parameters)
      : host(host), parameters(parameters), symbols(host->getParentOp()) {}

  FailureOr<HostProgram> run();

private:
  unsigned addBuffer(BufferKind kind, unsigned index, RankedTensorType type) {
    program.buffers.push_back({kind, index, byteSize(type)});
    return program.buffers.size() - 1;
  }
  BufferRange whole(unsigned buffer) {
    return {buffer, 0, program.buffers[buffer].size};
  }
  LogicalResult planArguments();
  LogicalResult planCall(func::CallOp call);
  FailureOr<BufferRange> lookup(Operation *user, Value v) {
    auto it = where.find(v);
    if (it == where.end())
      return user->emitOpError("reads a tensor that has no buffer (it was "
                               "never written by a dispatch)");
    return it->second;
  }
  void copy(StringRef name, BufferRange from, BufferRange to) {
    PlannedCommand command;
    command.kind = PlannedCommand::Kind::Copy;
    command.name = name.str();
    command.source = from;
    command.target = to;
    program.commands.push_back(std::move(command));
  }
  void computeLiveRanges();

  func::FuncOp host;
  ParameterTable &parameters;
  SymbolTable symbols;
  HostProgram program;
  DenseMap<Value, BufferRange> where;
  LogicalResult planInsertSlices();
  unsigned rootBuffer(Value root);

  /// Dispatch results returned by the function: written straight into the
  /// result buffer instead of a transient one.
  DenseMap<Value, unsigned> returnedResult;
  SmallVector<unsigned> outputBuffers;

  /// A tensor assembled by host-level insert_slices into a tensor.empty
  /// (the chunks of a chunked feed-forward): `rootOf` maps each partial
  /// result to that root, `sliceOf` a dispatch result that is inserted to
  /// the byte range it is written to directly.
  struct SliceTarget {
    Value root;
    uint64_t offset, length;
  };
  DenseMap<Value, Value> rootOf;
  DenseMap<Value, SliceTarget> sliceOf;
  DenseMap<Value, unsigned> rootBuffers;
  DenseMap<Value, unsigned> returnedRoot;
};

/// The byte range of a slice of a row-major tensor, if it is one contiguous
/// range with static offsets and unit strides.
std::optional<std::pair<uint64_t, uint64_t>>
contiguousRange(tensor::InsertSliceOp insert) {
  RankedTensorType dest = insert.getDestType();
  ArrayRef<int64_t> offsets = insert.getStaticOffsets();
  ArrayRef<int64_t> sizes = insert.getStaticSizes();
  if (ShapedType::isDynamicShape(offsets) ||
      ShapedType::isDynamicShape(sizes) || !insert.hasUnitStride())
    return std::nullopt;
  // Contiguous: unit sizes, then at most one partial dimension, then full
  // dimensions.
  int64_t rank = dest.getRank(), d = 0;
  while (d < rank && sizes[d] == 1)
    ++d;
  for (int64_t e = d + 1; e < rank; ++e)
    if (sizes[e] != dest.getDimSize(e))
      return std::nullopt;
  uint64_t linear = 0;
  for (int64_t e = 0; e < rank; ++e)
    linear = linear * dest.getDimSize(e) + offsets[e];
  uint64_t elementBytes = byteSize(RankedTensorType::get(
      {1}, dest.getElementType()));
  uint64_t count = 1;
  for (int64_t size : sizes)
    count *= size;
  return std::make_pair(linear * elementBytes, count * elementBytes);
}

LogicalResult Planner::planArguments() {
  for (BlockArgument arg : host.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape())
      return host.emitOpError("expected statically shaped tensor arguments, "
                              "got ")
             << arg.getType();
    unsigned buffer;
    if (auto name = host.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      "attn.param")) {
      auto [it, inserted] = parameters.indexByName.try_emplace(
          name.getValue(), parameters.parameters.size());
      if (inserted)
        parameters.parameters.push_back(describeParameter(
            host, arg.getArgNumber(), name.getValue(), type));
      else if (parameters.parameters[it->second].signature.type != type)
        return host.emitOpError() << "parameter '" << name.getValue()
                                  << "' has two types in one module";
      buffer = addBuffer(BufferKind::Parameter, it->second, type);
    } else {
      unsigned index = program.inputs.size();
      program.inputs.push_back({("arg" + Twine(index)).str(), type, {}});
      if (auto range = host.getArgAttrOfType<DenseI64ArrayAttr>(
              arg.getArgNumber(), "attn.valid_range");
          range && range.size() == 2)
        program.inputs.back().validRange = {range[0], range[1]};
      buffer = addBuffer(BufferKind::Input, index, type);
    }
    where[arg] = whole(buffer);
  }
  return success();
}

LogicalResult Planner::planCall(func::CallOp call) {
  auto dispatch = symbols.lookup<func::FuncOp>(call.getCallee());
  auto count =
      dispatch ? dispatch->getAttrOfType<DenseI64ArrayAttr>(
                     "lcc.workgroup_count")
               : nullptr;
  if (!count || count.size() != 3)
    return call.emitOpError("expected a call of a dispatch function with an "
                            "'lcc.workgroup_count' of three values");
  unsigned numOutputs = call.getNumResults();
  unsigned numInputs = call.getNumOperands() - numOutputs;
  PlannedCommand command;
  command.kind = PlannedCommand::Kind::Dispatch;
  command.name = command.entryPoint = call.getCallee().str();
  llvm::copy(count.asArrayRef(), command.workgroupCount.begin());
  for (Value input : call.getOperands().take_front(numInputs)) {
    FailureOr<BufferRange> range = lookup(call, input);
    if (failed(range))
      return failure();
    command.bindings.push_back(*range);
  }
  for (unsigned i = 0; i < numOutputs; ++i) {
    Value init = call.getOperand(numInputs + i);
    Value result = call.getResult(i);
    auto type = cast<RankedTensorType>(result.getType());
    BufferRange range;
    auto slice = sliceOf.find(result);
    auto returned = returnedResult.find(result);
    if (slice != sliceOf.end())
      range = {rootBuffer(slice->second.root), slice->second.offset,
               slice->second.length};
    else if (returned != returnedResult.end())
      range = whole(outputBuffers[returned->second]);
    else
      range = whole(addBuffer(BufferKind::Transient, 0, type));
    // A dispatch updates its output in place: start it from the initial
    // value unless that is undefined (tensor.empty).
    if (!init.getDefiningOp<tensor::EmptyOp>()) {
      FailureOr<BufferRange> from = lookup(call, init);
      if (failed(from))
        return failure();
      copy(call.getCallee().str() + ".init" + std::to_string(i), *from,
           range);
    }
    where[result] = range;
    command.bindings.push_back(range);
  }
  program.commands.push_back(std::move(command));
  return success();
}

LogicalResult Planner::planInsertSlices() {
  for (auto insert : host.getBody().front().getOps<tensor::InsertSliceOp>()) {
    Value dest = insert.getDest();
    Value root = dest.getDefiningOp<tensor::EmptyOp>() ? dest
                                                        : rootOf.lookup(dest);
    if (!root)
      return insert.emitOpError("can only assemble a tensor.empty on the "
                                "host");
    std::optional<std::pair<uint64_t, uint64_t>> range =
        contiguousRange(insert);
    if (!range)
      return insert.emitOpError("writes a strided region; the host can only "
                                "place contiguous slices");
    rootOf[insert.getResult()] = root;
    Value source = insert.getSource();
    if (source.getDefiningOp<func::CallOp>() && source.hasOneUse())
      sliceOf[source] = {root, range->first, range->second};
  }
  return success();
}

unsigned Planner::rootBuffer(Value root) {
  auto it = rootBuffers.find(root);
  if (it != rootBuffers.end())
    return it->second;
  auto returned = returnedRoot.find(root);
  unsigned buffer =
      returned != returnedRoot.end()
          ? outputBuffers[returned->second]
          : addBuffer(BufferKind::Transient, 0,
                      cast<RankedTensorType>(root.getType()));
  rootBuffers[root] = buffer;
  return buffer;
}

void Planner::computeLiveRanges() {
  SmallVector<bool> seen(program.buffers.size(), false);
  auto use = [&](const BufferRange &range, unsigned command) {
    PlannedBuffer &buffer = program.buffers[range.buffer];
    if (!seen[range.buffer])
      buffer.firstCommand = command;
    seen[range.buffer] = true;
    buffer.lastCommand = command;
  };
  for (auto [i, command] : llvm::enumerate(program.commands)) {
    if (command.kind == PlannedCommand::Kind::Copy) {
      use(command.source, i);
      use(command.target, i);
    } else {
      for (const BufferRange &binding : command.bindings)
        use(binding, i);
    }
  }
}

FailureOr<HostProgram> Planner::run() {
  program.name = host.getName().str();
  if (failed(planArguments()))
    return failure();
  auto ret = cast<func::ReturnOp>(host.getBody().front().getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    auto type = cast<RankedTensorType>(value.getType());
    program.outputs.push_back({("result" + Twine(i)).str(), type, {}});
    outputBuffers.push_back(addBuffer(BufferKind::Output, i, type));
    // A dispatch result returned as it is, or through reshapes that only
    // rename its bytes, is written straight into the result buffer.
    Value produced = value;
    while (Operation *def = produced.getDefiningOp()) {
      if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def) ||
          !def->getOperand(0).hasOneUse())
        break;
      produced = def->getOperand(0);
    }
    if (produced.getDefiningOp<func::CallOp>())
      returnedResult.try_emplace(produced, i);
  }
  if (failed(planInsertSlices()))
    return failure();
  for (auto [i, value] : llvm::enumerate(ret.getOperands()))
    if (Value root = rootOf.lookup(value))
      returnedRoot.try_emplace(root, i);
  for (Operation &op : host.getBody().front()) {
    if (isa<tensor::EmptyOp>(op))
      continue;
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
      Value root = rootOf.lookup(insert.getResult());
      unsigned buffer = rootBuffer(root);
      if (!sliceOf.count(insert.getSource())) {
        FailureOr<BufferRange> from = lookup(&op, insert.getSource());
        if (failed(from))
          return failure();
        std::optional<std::pair<uint64_t, uint64_t>> range =
            contiguousRange(insert);
        copy("insert_slice", *from, {buffer, range->first, range->second});
      }
      where[insert.getResult()] = whole(buffer);
      continue;
    }
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op)) {
      // A reshape of a contiguous tensor names the same bytes.
      FailureOr<BufferRange> range = lookup(&op, op.getOperand(0));
      if (failed(range))
        return failure();
      where[op.getResult(0)] = *range;
      continue;
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (failed(planCall(call)))
        return failure();
      continue;
    }
    if (isa<func::ReturnOp>(op))
      break;
    return op.emitOpError("cannot run on the host: only dispatch calls, "
                          "reshapes, contiguous insert_slices and "
                          "tensor.empty can");
  }
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    FailureOr<BufferRange> from = lookup(ret, value);
    if (failed(from))
      return failure();
    if (from->buffer == outputBuffers[i])
      continue; // Written in place.
    copy("result" + std::to_string(i), *from, whole(outputBuffers[i]));
  }
  computeLiveRanges();
  planArena(program);
  return std::move(program);
}

} // namespace

FailureOr<HostProgram> lcc::planHostProgram(func::FuncOp host,
                                            ParameterTable &parameters) {
  return Planner(host, parameters).run();
}
