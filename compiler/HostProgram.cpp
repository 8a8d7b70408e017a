//===- HostProgram.cpp - planning the host side of a function -------------===//

#include "compiler/HostProgram.h"

#include "compiler/KernelReport.h"
#include "compiler/SourceNames.h"
#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <optional>

using namespace mlir;
using namespace lcc;

uint64_t lcc::byteSize(RankedTensorType type) {
  uint64_t elementBytes =
      llvm::divideCeil(type.getElementType().getIntOrFloatBitWidth(), 8);
  return elementBytes * static_cast<uint64_t>(type.getNumElements());
}

std::optional<std::pair<uint64_t, uint64_t>>
lcc::contiguousSliceBytes(tensor::InsertSliceOp insert) {
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
  uint64_t elementBytes =
      byteSize(RankedTensorType::get({1}, dest.getElementType()));
  uint64_t count = 1;
  for (int64_t size : sizes)
    count *= size;
  return std::make_pair(linear * elementBytes, count * elementBytes);
}

namespace {

/// How `attn-lower-to-linalg` asked the parameter to be initialised.
Parameter describeParameter(func::FuncOp host, unsigned argIndex,
                            StringRef name, RankedTensorType type) {
  Parameter p;
  p.signature = {name.str(), type, {}};
  if (auto init =
          host.getArgAttrOfType<StringAttr>(argIndex, "attn.param_init")) {
    if (init.getValue() == "ones")
      p.init = ParameterInit::Ones;
    else if (init.getValue() == "zeros")
      p.init = ParameterInit::Zeros;
    else if (init.getValue() == "constant")
      p.init = ParameterInit::Constant;
  }
  if (auto value =
          host.getArgAttrOfType<FloatAttr>(argIndex, "attn.param_value"))
    p.initValue = static_cast<float>(value.getValueAsDouble());
  if (auto scale =
          host.getArgAttrOfType<FloatAttr>(argIndex, "attn.param_scale"))
    p.initScale = static_cast<float>(scale.getValueAsDouble());
  p.state = static_cast<bool>(host.getArgAttr(argIndex, "attn.param_state"));
  return p;
}

/// A tensor assembled on the host by a chain of tensor.insert_slice ops (the
/// chunks of a chunked feed-forward, a concatenation). Each chain owns one
/// buffer. A chain continues only through a value whose one use is the next
/// insert: two chains that start from one (CSE'd) tensor.empty, or that
/// branch from one partial value, are two assemblies with two buffers, since
/// writing the second into the first's bytes would clobber a value that is
/// still read.
struct Assembly {
  RankedTensorType type;
  /// The value a chain that does not start from tensor.empty starts from;
  /// its bytes are copied into the buffer when the chain begins.
  Value initial;
  /// Planned on first use: the result buffer when the chain is returned.
  std::optional<unsigned> buffer;
  std::optional<unsigned> returnedAs;
};

/// Where a dispatch result that a chain inserts may be written directly.
struct SliceTarget {
  unsigned assembly;
  uint64_t offset, length;
};

bool overlaps(const BufferRange &a, const BufferRange &b) {
  return a.buffer == b.buffer && a.length > 0 && b.length > 0 &&
         a.offset < b.offset + b.length && b.offset < a.offset + a.length;
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
  /// The index the next command gets.
  int64_t nextCommand() const { return program.commands.size(); }
  /// A dispatch's FLOPs, counted once however often it is called.
  double flopsOf(func::FuncOp dispatch) {
    auto [it, added] = flops.try_emplace(dispatch.getName(), 0.0);
    if (added)
      it->second = countDispatchWork(dispatch).flops;
    return it->second;
  }

  LogicalResult planArguments();
  LogicalResult planAssemblies();
  LogicalResult planCall(func::CallOp call);
  LogicalResult planAllReduce(attn::AllReduceOp op);
  LogicalResult planExchange(Operation *op, PlannedCommand command);
  LogicalResult planInsertSlice(tensor::InsertSliceOp insert);
  LogicalResult planReturn(func::ReturnOp ret);
  unsigned assemblyBuffer(unsigned assembly);
  void computeLiveRanges();

  /// The buffer range of `v`, recording that the next command reads it.
  FailureOr<BufferRange> read(Operation *user, Value v) {
    auto it = where.find(v);
    if (it == where.end())
      return user->emitOpError("reads a tensor that has no buffer (it was "
                               "never written by a dispatch)");
    tensors[tensorOf.lookup(v)].lastRead = nextCommand();
    return it->second;
  }
  /// Records that `v` lives in `range`, with `defined` bytes holding its
  /// elements, complete after command `definedBy`.
  void define(Value v, BufferRange range, SmallVector<BufferRange> defined,
              int64_t definedBy, std::string description) {
    where[v] = range;
    tensorOf[v] = tensors.size();
    tensors.push_back({std::move(description), std::move(defined), definedBy,
                       /*lastRead=*/-1});
  }
  /// The buffer of `init`, a dispatch's initial output value, when the
  /// dispatch may update it in place instead of a copy: `init` is another
  /// dispatch's result that nothing else reads (no view, no slice, not
  /// returned), a whole transient buffer of its own that the dispatch's
  /// inputs do not overlap. A train step starts some 500 outputs from a
  /// zero fill that way; copied, each cost a buffer and a pass over it.
  std::optional<BufferRange> lastUseOfInitBuffer(Value init,
                                                 const PlannedCommand &call) {
    if (!init.getDefiningOp<func::CallOp>() || !init.hasOneUse() ||
        writtenInPlace.contains(init))
      return std::nullopt;
    auto it = where.find(init);
    if (it == where.end())
      return std::nullopt;
    BufferRange range = it->second;
    const PlannedBuffer &buffer = program.buffers[range.buffer];
    if (buffer.kind != BufferKind::Transient || range.offset != 0 ||
        range.length != buffer.size ||
        llvm::any_of(call.bindings, [&](const BufferRange &bound) {
          return overlaps(bound, range);
        }))
      return std::nullopt;
    return range;
  }
  /// The parameter's buffer, where a dispatch may update `init`, the
  /// parameter's old value, into `result`, its new one (attn.assign of a
  /// decode cache's new row): the old value has no reader but `call`, the
  /// new one is what the function assigns to that same parameter, and
  /// `call` reads no other byte of the buffer. Then neither the copy in nor
  /// the copy back happens.
  std::optional<BufferRange>
  parameterUpdatedInPlace(Value init, Value result,
                          const PlannedCommand &call) {
    auto arg = dyn_cast<BlockArgument>(init);
    auto assigned = assignedTo.find(result);
    if (!arg || arg.getOwner()->getParentOp() != host || !init.hasOneUse() ||
        assigned == assignedTo.end())
      return std::nullopt;
    auto name =
        host.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "attn.param");
    if (!name || name.getValue() != assigned->second)
      return std::nullopt;
    BufferRange range = where.lookup(init);
    if (llvm::any_of(call.bindings, [&](const BufferRange &bound) {
          return overlaps(bound, range);
        }))
      return std::nullopt;
    return range;
  }
  void copy(StringRef name, BufferRange from, BufferRange to,
            StringRef location = "") {
    PlannedCommand command;
    command.kind = PlannedCommand::Kind::Copy;
    command.name = name.str();
    command.location = location.str();
    command.source = from;
    command.target = to;
    program.commands.push_back(std::move(command));
  }

  func::FuncOp host;
  ParameterTable &parameters;
  SymbolTable symbols;
  llvm::StringMap<double> flops;
  HostProgram program;
  DenseMap<Value, BufferRange> where;
  DenseMap<Value, unsigned> tensorOf;
  SmallVector<PlannedTensor> tensors;

  /// The buffer of each parameter the function reads, by name: where a
  /// result that assigns it is copied.
  llvm::StringMap<unsigned> parameterBuffers;
  /// The returned values that assign a parameter, and its name.
  DenseMap<Value, StringRef> assignedTo;

  /// Dispatch results returned by the function: written straight into the
  /// result buffer instead of a transient one.
  DenseMap<Value, unsigned> returnedResult;
  SmallVector<unsigned> outputBuffers;

  SmallVector<Assembly> assemblies;
  /// The assembly of each insert_slice result.
  DenseMap<Value, unsigned> assemblyOf;
  /// Dispatch results that an insert_slice may place directly, and those
  /// that planCall did write directly (the others are copied).
  DenseMap<Value, SliceTarget> sliceOf;
  llvm::DenseSet<Value> writtenInPlace;
};

LogicalResult Planner::planArguments() {
  for (BlockArgument arg : host.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape())
      return host.emitOpError("expected statically shaped tensor arguments, "
                              "got ")
             << arg.getType();
    unsigned buffer;
    std::string description;
    if (auto name = host.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      "attn.param")) {
      auto [it, inserted] = parameters.indexByName.try_emplace(
          name.getValue(), parameters.parameters.size());
      if (inserted)
        parameters.parameters.push_back(
            describeParameter(host, arg.getArgNumber(), name.getValue(), type));
      else if (parameters.parameters[it->second].signature.type != type)
        return host.emitOpError() << "parameter '" << name.getValue()
                                  << "' has two types in one module";
      buffer = addBuffer(BufferKind::Parameter, it->second, type);
      parameterBuffers[name.getValue()] = buffer;
      description = ("parameter '" + name.getValue() + "'").str();
    } else {
      unsigned index = program.inputs.size();
      // The model's own name for the argument (%tokens), else its place.
      auto source =
          host.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "lcc.name");
      program.inputs.push_back(
          {source ? source.str() : ("arg" + Twine(index)).str(), type, {}});
      if (auto range = host.getArgAttrOfType<DenseI64ArrayAttr>(
              arg.getArgNumber(), "attn.valid_range");
          range && range.size() == 2)
        program.inputs.back().validRange = {range[0], range[1]};
      if (auto split = host.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                          "attn.split_dim"))
        program.inputs.back().splitDim = split.getInt();
      buffer = addBuffer(BufferKind::Input, index, type);
      description = "input " + std::to_string(index);
    }
    define(arg, whole(buffer), {whole(buffer)}, -1, description);
  }
  return success();
}

LogicalResult Planner::planAssemblies() {
  for (auto insert : host.getBody().front().getOps<tensor::InsertSliceOp>()) {
    if (!contiguousSliceBytes(insert))
      return insert.emitOpError("writes a strided region; the host can only "
                                "place contiguous slices");
    Value dest = insert.getDest();
    auto chain = assemblyOf.find(dest);
    unsigned assembly;
    if (chain != assemblyOf.end() && dest.hasOneUse()) {
      assembly = chain->second;
    } else {
      assembly = assemblies.size();
      Value initial = dest.getDefiningOp<tensor::EmptyOp>() ? Value() : dest;
      assemblies.push_back({insert.getDestType(), initial, {}, {}});
    }
    assemblyOf[insert.getResult()] = assembly;
    // A chain that starts from a value is filled by a copy when it begins,
    // which would overwrite slices written before it: only chains that
    // start empty take dispatch results in place.
    Value source = insert.getSource();
    if (!assemblies[assembly].initial && source.getDefiningOp<func::CallOp>() &&
        source.hasOneUse()) {
      std::pair<uint64_t, uint64_t> range = *contiguousSliceBytes(insert);
      sliceOf[source] = {assembly, range.first, range.second};
    }
  }
  return success();
}

unsigned Planner::assemblyBuffer(unsigned index) {
  Assembly &assembly = assemblies[index];
  if (!assembly.buffer)
    assembly.buffer = assembly.returnedAs
                          ? outputBuffers[*assembly.returnedAs]
                          : addBuffer(BufferKind::Transient, 0, assembly.type);
  return *assembly.buffer;
}

LogicalResult Planner::planCall(func::CallOp call) {
  auto dispatch = symbols.lookup<func::FuncOp>(call.getCallee());
  auto count =
      dispatch
          ? dispatch->getAttrOfType<DenseI64ArrayAttr>("lcc.workgroup_count")
          : nullptr;
  if (!count || count.size() != 3)
    return call.emitOpError("expected a call of a dispatch function with an "
                            "'lcc.workgroup_count' of three values");
  unsigned numOutputs = call.getNumResults();
  unsigned numInputs = call.getNumOperands() - numOutputs;
  PlannedCommand command;
  command.kind = PlannedCommand::Kind::Dispatch;
  command.entryPoint = call.getCallee().str();
  // What the call computes: the call's own names where deduplication
  // pointed it at a copy of its dispatch (DeduplicateDispatches.cpp).
  auto named = [&](StringRef attr) {
    auto value = call->getAttrOfType<StringAttr>(attr);
    return value ? value : dispatch->getAttrOfType<StringAttr>(attr);
  };
  StringAttr display = named("lcc.name");
  command.name = display ? display.str() : command.entryPoint;
  if (StringAttr location = named("lcc.location"))
    command.location = location.str();
  command.outputCount = numOutputs;
  command.flops = flopsOf(dispatch);
  llvm::copy(count.asArrayRef(), command.workgroupCount.begin());
  SmallVector<BufferRange> inputs;
  for (Value input : call.getOperands().take_front(numInputs)) {
    FailureOr<BufferRange> range = read(call, input);
    if (failed(range))
      return failure();
    inputs.push_back(*range);
  }
  command.bindings = inputs;
  for (unsigned i = 0; i < numOutputs; ++i) {
    Value init = call.getOperand(numInputs + i);
    Value result = call.getResult(i);
    auto type = cast<RankedTensorType>(result.getType());
    std::optional<BufferRange> range;
    auto slice = sliceOf.find(result);
    auto returned = returnedResult.find(result);
    if (slice != sliceOf.end()) {
      // In place only where the kernel reads nothing it writes and writes
      // no byte twice: its outputs are marked noalias (DispatchBuffers.cpp).
      BufferRange target = {assemblyBuffer(slice->second.assembly),
                            slice->second.offset, slice->second.length};
      if (llvm::none_of(command.bindings, [&](const BufferRange &bound) {
            return overlaps(bound, target);
          })) {
        range = target;
        writtenInPlace.insert(result);
      }
    }
    if (!range && returned != returnedResult.end())
      range = whole(outputBuffers[returned->second]);
    bool updatesInit = false;
    if (!range) {
      range = parameterUpdatedInPlace(init, result, command);
      updatesInit = range.has_value();
    }
    if (!range) {
      std::optional<BufferRange> last = lastUseOfInitBuffer(init, command);
      updatesInit = last.has_value();
      range = last ? *last : whole(addBuffer(BufferKind::Transient, 0, type));
    }
    // A dispatch updates its output in place: start it from the initial
    // value unless that is undefined (tensor.empty) or already there.
    if (updatesInit) {
      if (failed(read(call, init)))
        return failure();
      tensors[tensorOf.lookup(init)].updatedBy = nextCommand();
    } else if (!init.getDefiningOp<tensor::EmptyOp>()) {
      FailureOr<BufferRange> from = read(call, init);
      if (failed(from))
        return failure();
      copy(command.name + ".init" + std::to_string(i), *from, *range,
           command.location);
    }
    command.bindings.push_back(*range);
  }
  int64_t index = nextCommand();
  for (unsigned i = 0; i < numOutputs; ++i) {
    BufferRange range = command.bindings[numInputs + i];
    define(call.getResult(i), range, {range}, index,
           "result " + std::to_string(i) + " of '" + command.name + "'");
  }
  program.commands.push_back(std::move(command));
  return success();
}

LogicalResult Planner::planAllReduce(attn::AllReduceOp op) {
  PlannedCommand command;
  command.kind = PlannedCommand::Kind::AllReduce;
  command.reduction = op.getReduction() == attn::ReductionKind::Mean
                          ? PlannedCommand::Reduction::Mean
                          : PlannedCommand::Reduction::Sum;
  command.name = sourceNameOf(op.getLoc()).value_or("all_reduce");
  command.location = sourcePositionOf(op.getLoc()).value_or("");
  for (auto [i, value] : llvm::enumerate(op.getValues())) {
    FailureOr<BufferRange> from = read(op, value);
    if (failed(from))
      return failure();
    // Reduced where it lies when nothing else reads it; else in a copy.
    std::optional<BufferRange> last = lastUseOfInitBuffer(value, command);
    if (last) {
      tensors[tensorOf.lookup(value)].updatedBy = nextCommand();
    } else {
      last = whole(addBuffer(BufferKind::Transient, 0,
                             cast<RankedTensorType>(value.getType())));
      copy(command.name + ".in" + std::to_string(i), *from, *last,
           command.location);
    }
    command.bindings.push_back(*last);
  }
  command.outputCount = command.bindings.size();
  int64_t index = nextCommand();
  for (auto [i, result] : llvm::enumerate(op.getReduced()))
    define(result, command.bindings[i], {command.bindings[i]}, index,
           "result " + std::to_string(i) + " of '" + command.name + "'");
  program.commands.push_back(std::move(command));
  return success();
}

/// The exchange `op` is (attn.all_to_all, ring_shift, rank_slice,
/// rank_pad): which ranks get what; none for any other op.
std::optional<PlannedCommand> exchangeCommandOf(Operation &op) {
  PlannedCommand command;
  if (auto shift = dyn_cast<attn::RingShiftOp>(op)) {
    command.exchange = PlannedCommand::Exchange::Ring;
    command.ringOffset = shift.getOffset();
    return command;
  }
  if (isa<attn::AllToAllOp>(op))
    command.exchange = PlannedCommand::Exchange::AllToAll;
  else if (isa<attn::RankSliceOp>(op))
    command.exchange = PlannedCommand::Exchange::RankSlice;
  else if (isa<attn::RankPadOp>(op))
    command.exchange = PlannedCommand::Exchange::RankPad;
  else
    return std::nullopt;
  // One block per rank along the leading dimension of the side that holds
  // them all (both sides of an all-to-all; one block is the other side).
  auto leading = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getDimSize(0);
  };
  command.blocks =
      std::max(leading(op.getOperand(0)), leading(op.getResult(0)));
  return command;
}

LogicalResult Planner::planExchange(Operation *op, PlannedCommand command) {
  command.kind = PlannedCommand::Kind::Exchange;
  command.name =
      sourceNameOf(op->getLoc()).value_or(op->getName().stripDialect().str());
  command.location = sourcePositionOf(op->getLoc()).value_or("");
  Value value = op->getOperand(0);
  FailureOr<BufferRange> from = read(op, value);
  if (failed(from))
    return failure();
  auto type = cast<RankedTensorType>(value.getType());
  // The runtime sends from device memory it owns: an argument, which may
  // lie in the caller's memory, is copied first.
  if (program.buffers[from->buffer].kind == BufferKind::Input) {
    BufferRange staged = whole(addBuffer(BufferKind::Transient, 0, type));
    copy(command.name + ".in", *from, staged, command.location);
    from = staged;
  }
  BufferRange to =
      whole(addBuffer(BufferKind::Transient, 0,
                      cast<RankedTensorType>(op->getResult(0).getType())));
  command.bindings = {*from, to};
  command.outputCount = 1;
  int64_t index = nextCommand();
  define(op->getResult(0), to, {to}, index,
         "result 0 of '" + command.name + "'");
  program.commands.push_back(std::move(command));
  return success();
}

LogicalResult Planner::planInsertSlice(tensor::InsertSliceOp insert) {
  unsigned index = assemblyOf.lookup(insert.getResult());
  Assembly &assembly = assemblies[index];
  std::optional<std::string> sourceName = sourceNameOf(insert.getLoc());
  std::string sliceName =
      sourceName ? *sourceName + ".insert_slice" : "insert_slice";
  std::string location = sourcePositionOf(insert.getLoc()).value_or("");
  unsigned buffer = assemblyBuffer(index);
  auto [offset, length] = *contiguousSliceBytes(insert);
  BufferRange slice = {buffer, offset, length};
  Value dest = insert.getDest();
  SmallVector<BufferRange> defined;
  int64_t definedBy = -1;
  if (auto chain = assemblyOf.find(dest);
      chain != assemblyOf.end() && chain->second == index) {
    const PlannedTensor &partial = tensors[tensorOf.lookup(dest)];
    defined = partial.defined;
    definedBy = partial.definedBy;
  } else if (assembly.initial) {
    FailureOr<BufferRange> from = read(insert, assembly.initial);
    if (failed(from))
      return failure();
    definedBy = nextCommand();
    copy(sliceName + ".init", *from, whole(buffer), location);
    defined.push_back(whole(buffer));
  }
  Value source = insert.getSource();
  if (writtenInPlace.contains(source)) {
    definedBy = std::max(definedBy, tensors[tensorOf.lookup(source)].definedBy);
  } else {
    FailureOr<BufferRange> from = read(insert, source);
    if (failed(from))
      return failure();
    definedBy = nextCommand();
    copy(sliceName, *from, slice, location);
  }
  defined.push_back(slice);
  define(insert.getResult(), whole(buffer), std::move(defined), definedBy,
         "an assembly of slices of buffer " + std::to_string(buffer));
  return success();
}

LogicalResult Planner::planReturn(func::ReturnOp ret) {
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    FailureOr<BufferRange> from = read(ret, value);
    if (failed(from))
      return failure();
    if (from->buffer == outputBuffers[i])
      continue; // Written in place.
    copy("result" + std::to_string(i), *from, whole(outputBuffers[i]));
  }
  // Every returned value is read once more: when the caller takes it.
  for (Value value : ret.getOperands())
    tensors[tensorOf.lookup(value)].lastRead = nextCommand();
  return success();
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
    if (auto assigned =
            host.getResultAttrOfType<StringAttr>(i, "attn.assigns")) {
      // A new parameter value: copied into the parameter when the function
      // returns, after every command that reads the old one (unless a
      // dispatch updated the parameter in place).
      assignedTo[value] = assigned.getValue();
      auto buffer = parameterBuffers.find(assigned.getValue());
      if (buffer == parameterBuffers.end())
        return host.emitOpError() << "writes parameter '" << assigned.getValue()
                                  << "' without reading it";
      outputBuffers.push_back(buffer->second);
      continue;
    }
    auto name = host.getResultAttrOfType<StringAttr>(i, "lcc.name");
    unsigned index = program.outputs.size();
    program.outputs.push_back(
        {name ? name.str() : ("result" + Twine(index)).str(), type, {}});
    if (auto split = host.getResultAttrOfType<IntegerAttr>(i, "attn.split_dim"))
      program.outputs.back().splitDim = split.getInt();
    outputBuffers.push_back(addBuffer(BufferKind::Output, index, type));
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
  if (failed(planAssemblies()))
    return failure();
  // A chain is complete in its last value, the only one that can be
  // returned (every earlier one has the next insert as its one use).
  for (auto [i, value] : llvm::enumerate(ret.getOperands()))
    if (auto chain = assemblyOf.find(value); chain != assemblyOf.end()) {
      Assembly &assembly = assemblies[chain->second];
      if (!assembly.returnedAs && !host.getResultAttr(i, "attn.assigns"))
        assembly.returnedAs = i;
    }
  for (Operation &op : host.getBody().front()) {
    if (isa<tensor::EmptyOp>(op))
      continue;
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
      if (failed(planInsertSlice(insert)))
        return failure();
      continue;
    }
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op)) {
      // A reshape of a contiguous tensor names the same bytes.
      Value source = op.getOperand(0);
      auto it = where.find(source);
      if (it == where.end())
        return op.emitOpError("reshapes a tensor that has no buffer");
      PlannedTensor named = tensors[tensorOf.lookup(source)];
      define(op.getResult(0), it->second, named.defined, named.definedBy,
             named.description);
      continue;
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (failed(planCall(call)))
        return failure();
      continue;
    }
    if (auto allReduce = dyn_cast<attn::AllReduceOp>(op)) {
      if (failed(planAllReduce(allReduce)))
        return failure();
      continue;
    }
    if (std::optional<PlannedCommand> exchange = exchangeCommandOf(op)) {
      if (failed(planExchange(&op, std::move(*exchange))))
        return failure();
      continue;
    }
    if (auto returnOp = dyn_cast<func::ReturnOp>(op)) {
      if (failed(planReturn(returnOp)))
        return failure();
      break;
    }
    return op.emitOpError("cannot run on the host: only dispatch calls, "
                          "collectives, reshapes, contiguous insert_slices "
                          "and tensor.empty can");
  }
  computeLiveRanges();
  planArena(program);
  if (std::optional<std::string> hazard = verifyHostProgram(program, tensors))
    return host.emitOpError("internal error in buffer planning: ") << *hazard;
  return std::move(program);
}

} // namespace

FailureOr<HostProgram> lcc::planHostProgram(func::FuncOp host,
                                            ParameterTable &parameters) {
  return Planner(host, parameters).run();
}
