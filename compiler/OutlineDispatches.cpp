//===- OutlineDispatches.cpp - scf.forall into dispatch functions ---------===//
//
// Splits a function into a host program and dispatches. A dispatch is a
// function of the workgroup id (gpu.block_id) and of its tensors, one per
// top-level scf.forall, so the host program is only an ordered list of calls
// whose tensors become planned buffers.
//
//===----------------------------------------------------------------------===//

#include "compiler/HostProgram.h"
#include "compiler/Passes.h"
#include "compiler/SourceNames.h"
#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/RegionUtils.h"

namespace lcc {
#define GEN_PASS_DEF_OUTLINEDISPATCHES
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// Constant tensors of at least this many bytes that are not one value
/// repeated are passed to the dispatches reading them, not built into their
/// kernels (as IREE keeps large constants out of its executables): each
/// layer's LSH rotations differ, and built in they made each layer's hashing
/// kernels its own, compiled once per layer.
constexpr uint64_t kPassedConstantBytes = 1024;

/// A tensor constant a dispatch receives as an argument, computed by a
/// dispatch of its own just before each dispatch that reads it (so its
/// buffer lives no longer than that read).
bool isPassedConstant(Operation *op) {
  auto constant = dyn_cast<arith::ConstantOp>(op);
  if (!constant)
    return false;
  auto type = dyn_cast<RankedTensorType>(constant.getType());
  auto value = dyn_cast<ElementsAttr>(constant.getValue());
  if (!type || !type.hasStaticShape() || !value || value.isSplat())
    return false;
  return lcc::byteSize(type) >= kPassedConstantBytes;
}

/// Ops a dispatch recomputes rather than receives: they cost nothing, and
/// cloning a view keeps the dispatch's argument the whole underlying tensor.
bool isClonedIntoDispatch(Operation *op) {
  if (isPassedConstant(op))
    return false;
  // Smaller constant tensors become read-only data of the kernels.
  if (isa<tensor::EmptyOp, tensor::ExtractSliceOp, tensor::ExpandShapeOp,
          tensor::CollapseShapeOp, arith::ConstantOp>(op))
    return true;
  // Scalar arithmetic (constants, index math) hoisted out of a body, and
  // scalar loops left at the top level where a one-iteration forall folded
  // away (the routed window search of a single row).
  return isMemoryEffectFree(op) && op->getNumResults() > 0 &&
         llvm::none_of(op->getResultTypes(),
                       [](Type t) { return isa<ShapedType>(t); });
}

/// Ops the host program keeps: they order dispatches or only name buffers.
bool staysOnHost(Operation &op) {
  if (isa<func::CallOp, func::ReturnOp, tensor::EmptyOp, tensor::ExpandShapeOp,
          tensor::CollapseShapeOp>(op) ||
      op.hasTrait<lcc::attn::Collective>())
    return true;
  // The planner writes a contiguous slice in place; any other becomes a
  // dispatch.
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    return lcc::contiguousSliceBytes(insert).has_value();
  return false;
}

/// What a dispatch argument receives from the host: a value the outlined op
/// read, or (`copiedConstant`) a copy of that passed constant made before
/// the call.
struct ArgumentSource {
  Value outer;
  bool copiedConstant;
};

/// The values `op` and the ops nested in it read from outside `op`, in walk
/// order, repeats included.
SmallVector<Value> readFromOutside(Operation *op) {
  SmallVector<Value> values;
  op->walk<WalkOrder::PreOrder>([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (nested == op ||
          !op->isAncestor(operand.getParentRegion()->getParentOp()))
        values.push_back(operand);
  });
  return values;
}

/// A hash of what `op` computes, equal for copies: each nested op's name,
/// attributes, properties and types, values defined inside numbered in walk
/// order, values read from outside by their type.
llvm::hash_code copyHash(Operation *op) {
  DenseMap<Value, unsigned> inner;
  auto number = [&](Value value) {
    return llvm::hash_value(
        inner.try_emplace(value, inner.size()).first->second);
  };
  auto operand = [&](Value value) -> llvm::hash_code {
    auto it = inner.find(value);
    return it == inner.end() ? mlir::hash_value(value.getType())
                             : llvm::hash_value(it->second);
  };
  llvm::hash_code hash = llvm::hash_value(op->getNumRegions());
  op->walk<WalkOrder::PreOrder>([&](Operation *nested) {
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(
                  nested, operand, number,
                  OperationEquivalence::IgnoreLocations));
    for (Region &region : nested->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          number(argument);
  });
  return hash;
}

/// Whether two top-level ops outline to the same dispatch, and which value
/// of the second each value the first reads from outside corresponds to.
/// The dispatch is a function of the op's structure and, for each value it
/// reads from outside, of whether it is cloned in (then of the producer's
/// structure, recursively), passed as a constant's copy, or passed: equal
/// structures with a one-to-one correspondence of those values, kind for
/// kind, give equal dispatches whose arguments correspond. Stricter than
/// deduplication (which still runs): a miss only costs the outlining.
class CopyMatcher {
public:
  bool matchOps(Operation *first, Operation *copy) {
    SmallVector<Value> firstReads = readFromOutside(first);
    SmallVector<Value> copyReads = readFromOutside(copy);
    if (firstReads.size() != copyReads.size())
      return false;
    for (auto [read, copyRead] : llvm::zip(firstReads, copyReads))
      if (!matchRead(read, copyRead))
        return false;
    return OperationEquivalence::isEquivalentTo(
        first, copy,
        [&](Value value, Value copyValue) {
          if (auto it = inner.find(value); it != inner.end())
            return success(it->second == copyValue);
          return success(lookup(value) == copyValue);
        },
        [&](Value value, Value copyValue) { inner[value] = copyValue; },
        OperationEquivalence::IgnoreLocations);
  }

  /// The copy's value for `value`, read from outside the first op; null
  /// when it was not matched.
  Value lookup(Value value) const { return reads.lookup(value); }

private:
  bool matchRead(Value read, Value copyRead) {
    if (auto it = reads.find(read); it != reads.end())
      return it->second == copyRead;
    if (copyReads.contains(copyRead) || read.getType() != copyRead.getType())
      return false;
    Operation *def = read.getDefiningOp();
    Operation *copyDef = copyRead.getDefiningOp();
    bool cloned = def && isClonedIntoDispatch(def);
    if (cloned != (copyDef && isClonedIntoDispatch(copyDef)))
      return false;
    if (cloned) {
      // A producer is cloned into the dispatch once, however many of its
      // results are read.
      if (cast<OpResult>(read).getResultNumber() !=
          cast<OpResult>(copyRead).getResultNumber())
        return false;
      if (auto it = clonedProducers.find(def); it != clonedProducers.end()) {
        if (it->second != copyDef)
          return false;
      } else if (copyClonedProducers.contains(copyDef) ||
                 !matchOps(def, copyDef)) {
        return false;
      }
      clonedProducers[def] = copyDef;
      copyClonedProducers.insert(copyDef);
    } else if ((def && isPassedConstant(def)) !=
               (copyDef && isPassedConstant(copyDef))) {
      return false;
    }
    reads[read] = copyRead;
    copyReads.insert(copyRead);
    return true;
  }

  DenseMap<Value, Value> reads;
  DenseSet<Value> copyReads;
  DenseMap<Operation *, Operation *> clonedProducers;
  DenseSet<Operation *> copyClonedProducers;
  /// Values defined inside the compared ops.
  DenseMap<Value, Value> inner;
};

/// Builds one dispatch function: arguments are added as the body asks for
/// outer values, outputs last.
class DispatchBuilder {
public:
  /// `hostPoint`: the host op the dispatch replaces.
  DispatchBuilder(func::FuncOp dispatch, Operation *hostPoint)
      : dispatch(dispatch), hostPoint(hostPoint) {
    builder.setInsertionPointToStart(&dispatch.getBody().front());
  }

  OpBuilder &getBuilder() { return builder; }
  IRMapping &getMapping() { return mapping; }
  ArrayRef<Value> getHostOperands() const { return hostOperands; }

  /// The dispatch-side value of outer value `v`: a clone of cheap producers,
  /// otherwise a new argument.
  Value materialize(Value v) {
    if (Value mapped = mapping.lookupOrNull(v))
      return mapped;
    Operation *def = v.getDefiningOp();
    if (def && isClonedIntoDispatch(def)) {
      for (Value operand : def->getOperands())
        materialize(operand);
      for (Region &region : def->getRegions())
        materializeCaptures(region);
      builder.clone(*def, mapping);
      return mapping.lookup(v);
    }
    if (def && isPassedConstant(def)) {
      // This dispatch's own copy, outlined after the host program is split.
      OpBuilder host(hostPoint);
      Value copy = host.clone(*def)->getResult(0);
      Value arg = addArgument(copy);
      sources.back() = {v, /*copiedConstant=*/true};
      mapping.map(v, arg);
      return arg;
    }
    return addArgument(v);
  }

  Value addArgument(Value hostValue) {
    Block &entry = dispatch.getBody().front();
    BlockArgument arg =
        entry.addArgument(hostValue.getType(), hostValue.getLoc());
    hostOperands.push_back(hostValue);
    sources.push_back({hostValue, /*copiedConstant=*/false});
    mapping.map(hostValue, arg);
    return arg;
  }

  ArrayRef<ArgumentSource> getSources() const { return sources; }

  /// Values defined outside `region` and used in it, materialised.
  void materializeCaptures(Region &region) {
    llvm::SetVector<Value> captures;
    getUsedValuesDefinedAbove(region, captures);
    for (Value capture : captures)
      materialize(capture);
  }

  void finish(ValueRange results) {
    func::ReturnOp::create(builder, dispatch.getLoc(), results);
    Block &entry = dispatch.getBody().front();
    dispatch.setFunctionType(FunctionType::get(dispatch.getContext(),
                                               entry.getArgumentTypes(),
                                               TypeRange(ValueRange(results))));
  }

private:
  func::FuncOp dispatch;
  Operation *hostPoint;
  OpBuilder builder{dispatch.getContext()};
  IRMapping mapping;
  SmallVector<Value> hostOperands;
  SmallVector<ArgumentSource> sources;
};

class Outliner {
public:
  Outliner(ModuleOp module, func::FuncOp func)
      : module(module), func(func), symbols(module) {}
  ~Outliner() { forgetFirsts(); }

  LogicalResult outline(scf::ForallOp forall);
  LogicalResult outline(DestinationStyleOpInterface op);
  LogicalResult outline(Operation *op);
  LogicalResult checkHostProgram();

  /// Erases the ops kept to recognise copies: they still read host values.
  void forgetFirsts() {
    for (OutlinedFirst &first : firsts)
      first.op->erase();
    firsts.clear();
    firstsByHash.clear();
  }

private:
  /// The names of the next dispatch, after the model op it computes:
  /// `forward_12_layers_1_ff` (its symbol), shown as `forward_12_layers.1.ff`
  /// with its source position in reports (lcc.name, lcc.location);
  /// `forward_dispatch_12` when its op has no source name (IR written by
  /// hand, lcc-opt).
  struct DispatchNames {
    std::string symbol;
    std::optional<std::string> shown, position;
  };
  DispatchNames nextNames(Location loc) {
    unsigned index = counter++;
    std::optional<std::string> source = lcc::sourceNameOf(loc);
    DispatchNames names;
    if (source)
      names.shown = (func.getName() + "_" + Twine(index) + "_" + *source).str();
    names.symbol = lcc::symbolSafe(
        names.shown ? *names.shown
                    : (func.getName() + "_dispatch_" + Twine(index)).str());
    names.position = lcc::sourcePositionOf(loc);
    return names;
  }

  /// Its attributes are given at creation: each later one would rebuild
  /// the function's attribute dictionary, for every dispatch of every layer.
  func::FuncOp createDispatch(Location loc, ArrayRef<int64_t> workgroupCount,
                              const DispatchNames &names) {
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<NamedAttribute> attributes = {
        b.getNamedAttr("lcc.dispatch", b.getUnitAttr()),
        b.getNamedAttr("lcc.workgroup_count",
                       b.getDenseI64ArrayAttr(workgroupCount))};
    if (names.shown)
      attributes.push_back(
          b.getNamedAttr("lcc.name", b.getStringAttr(*names.shown)));
    if (names.position)
      attributes.push_back(
          b.getNamedAttr("lcc.location", b.getStringAttr(*names.position)));
    auto dispatch = func::FuncOp::create(
        b, loc, names.symbol, FunctionType::get(module.getContext(), {}, {}),
        attributes);
    dispatch.setPrivate();
    dispatch.addEntryBlock();
    symbols.insert(dispatch);
    return dispatch;
  }

  /// Calls the dispatch of an earlier copy of `op` (another layer's) instead
  /// of outlining it again, with the names deduplication would give the
  /// call. `hash` is `op`'s copyHash.
  bool callEarlierCopy(Operation *op, llvm::hash_code hash,
                       const DispatchNames &names);

  /// Replaces `op` by a call of its dispatch; `op` is kept, out of the host
  /// program, to recognise its later copies (see callEarlierCopy).
  void replaceWithCall(Operation *op, func::FuncOp dispatch,
                       ArrayRef<Value> hostOperands,
                       ArrayRef<ArgumentSource> sources,
                       llvm::hash_code hash) {
    OpBuilder b(op);
    auto call = func::CallOp::create(b, op->getLoc(), dispatch, hostOperands);
    op->replaceAllUsesWith(call.getResults());
    op->remove();
    firstsByHash[hash].push_back(firsts.size());
    firsts.push_back({op, dispatch, llvm::to_vector(sources)});
  }

  /// A top-level op outlined first of its copies, out of the host program.
  struct OutlinedFirst {
    Operation *op;
    func::FuncOp dispatch;
    SmallVector<ArgumentSource> sources;
  };

  ModuleOp module;
  func::FuncOp func;
  SymbolTable symbols;
  unsigned counter = 0;
  std::vector<OutlinedFirst> firsts;
  DenseMap<llvm::hash_code, SmallVector<unsigned, 1>> firstsByHash;
};

bool Outliner::callEarlierCopy(Operation *op, llvm::hash_code hash,
                               const DispatchNames &names) {
  auto candidates = firstsByHash.find(hash);
  if (candidates == firstsByHash.end())
    return false;
  // Without a shown name the call is named by the symbol the dispatch would
  // have had; one already taken would have been renamed.
  if (!names.shown && symbols.lookup(names.symbol))
    return false;
  for (unsigned index : candidates->second) {
    const OutlinedFirst &first = firsts[index];
    CopyMatcher matcher;
    if (!matcher.matchOps(first.op, op))
      continue;
    SmallVector<Value> hostOperands;
    for (const ArgumentSource &source : first.sources) {
      Value read = matcher.lookup(source.outer);
      if (!read)
        return false;
      hostOperands.push_back(read);
    }
    OpBuilder host(op);
    for (auto [i, source] : llvm::enumerate(first.sources))
      if (source.copiedConstant)
        hostOperands[i] =
            host.clone(*hostOperands[i].getDefiningOp())->getResult(0);
    auto call =
        func::CallOp::create(host, op->getLoc(), first.dispatch, hostOperands);
    NamedAttrList attributes;
    attributes.set("lcc.name", host.getStringAttr(names.shown.value_or(
                                   names.symbol)));
    if (names.position)
      attributes.set("lcc.location", host.getStringAttr(*names.position));
    call->setDiscardableAttrs(attributes.getDictionary(op->getContext()));
    op->replaceAllUsesWith(call.getResults());
    op->erase();
    return true;
  }
  return false;
}

LogicalResult Outliner::outline(scf::ForallOp forall) {
  std::optional<SmallVector<int64_t>> lbs =
      getConstantIntValues(forall.getMixedLowerBound());
  std::optional<SmallVector<int64_t>> ubs =
      getConstantIntValues(forall.getMixedUpperBound());
  std::optional<SmallVector<int64_t>> steps =
      getConstantIntValues(forall.getMixedStep());
  if (!lbs || !ubs || !steps)
    return forall.emitOpError("expected static bounds to outline a dispatch");
  if (forall.getRank() > 3)
    return forall.emitOpError()
           << "has " << forall.getRank()
           << " dimensions; a workgroup grid has at most 3";

  DispatchNames names = nextNames(forall.getLoc());
  llvm::hash_code hash = copyHash(forall);
  if (callEarlierCopy(forall, hash, names))
    return success();
  SmallVector<int64_t> workgroupCount = {1, 1, 1};
  for (int64_t d = 0, e = forall.getRank(); d < e; ++d)
    workgroupCount[d] = llvm::divideCeil((*ubs)[d] - (*lbs)[d], (*steps)[d]);
  func::FuncOp dispatch =
      createDispatch(forall.getLoc(), workgroupCount, names);
  DispatchBuilder db(dispatch, forall);
  OpBuilder &b = db.getBuilder();
  IRMapping &mapping = db.getMapping();
  Location loc = forall.getLoc();

  db.materializeCaptures(forall.getRegion());
  SmallVector<Value> outputs;
  for (auto [init, iterArg] :
       llvm::zip(forall.getOutputs(), forall.getRegionIterArgs())) {
    Value output = db.addArgument(init);
    mapping.map(iterArg, output);
    outputs.push_back(output);
  }

  // Induction variable d = lower bound + block id d * step.
  const gpu::Dimension dims[] = {gpu::Dimension::x, gpu::Dimension::y,
                                 gpu::Dimension::z};
  for (auto [d, iv] : llvm::enumerate(forall.getInductionVars())) {
    Value id = gpu::BlockIdOp::create(b, loc, dims[d]);
    Value offset = arith::MulIOp::create(
        b, loc, id, arith::ConstantIndexOp::create(b, loc, (*steps)[d]));
    mapping.map(iv, arith::AddIOp::create(
                        b, loc, offset,
                        arith::ConstantIndexOp::create(b, loc, (*lbs)[d])));
  }

  for (Operation &op : forall.getBody()->without_terminator())
    b.clone(op, mapping);
  DenseMap<Value, Value> current;
  for (Value output : outputs)
    current[output] = output;
  for (Operation &yielding : forall.getTerminator().getYieldingOps()) {
    auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(&yielding);
    if (!insert)
      return yielding.emitOpError("unexpected op in scf.forall.in_parallel");
    Value dest = mapping.lookup(insert.getDest());
    SmallVector<OpFoldResult> offsets, sizes, strides;
    auto mapMixed = [&](ArrayRef<OpFoldResult> in,
                        SmallVectorImpl<OpFoldResult> &out) {
      for (OpFoldResult ofr : in)
        out.push_back(isa<Value>(ofr) ? OpFoldResult(mapping.lookupOrDefault(
                                            cast<Value>(ofr)))
                                      : ofr);
    };
    mapMixed(insert.getMixedOffsets(), offsets);
    mapMixed(insert.getMixedSizes(), sizes);
    mapMixed(insert.getMixedStrides(), strides);
    current[dest] = tensor::InsertSliceOp::create(
        b, loc, mapping.lookupOrDefault(insert.getSource()), current[dest],
        offsets, sizes, strides);
  }
  SmallVector<Value> results;
  for (Value output : outputs)
    results.push_back(current[output]);
  db.finish(results);
  replaceWithCall(forall, dispatch, db.getHostOperands(), db.getSources(),
                  hash);
  return success();
}

LogicalResult Outliner::outline(DestinationStyleOpInterface op) {
  DispatchNames names = nextNames(op.getLoc());
  llvm::hash_code hash = copyHash(op);
  if (callEarlierCopy(op, hash, names))
    return success();
  func::FuncOp dispatch = createDispatch(op.getLoc(), {1, 1, 1}, names);
  DispatchBuilder db(dispatch, op);
  for (Region &region : op->getRegions())
    db.materializeCaptures(region);
  for (OpOperand *input : op.getDpsInputOperands())
    db.materialize(input->get());
  for (OpOperand &init : op.getDpsInitsMutable())
    db.getMapping().map(init.get(), db.addArgument(init.get()));
  Operation *clone = db.getBuilder().clone(*op, db.getMapping());
  db.finish(clone->getResults());
  replaceWithCall(op, dispatch, db.getHostOperands(), db.getSources(), hash);
  return success();
}

/// Any other op with results (a loop over tensors, a constant the host
/// returns): one workgroup that computes it into fresh outputs. A scalar
/// result travels as a 0-d tensor (an index as i64) that the host reads back
/// with tensor.extract, which the dispatches using it then clone.
LogicalResult Outliner::outline(Operation *op) {
  func::FuncOp dispatch =
      createDispatch(op->getLoc(), {1, 1, 1}, nextNames(op->getLoc()));
  DispatchBuilder db(dispatch, op);
  for (Region &region : op->getRegions())
    db.materializeCaptures(region);
  for (Value operand : op->getOperands())
    db.materialize(operand);
  Location loc = op->getLoc();
  OpBuilder host(op);
  OpBuilder &b = db.getBuilder();
  auto carrier = [&](Type type) -> Type {
    return type.isIndex() ? b.getI64Type() : type;
  };
  for (Type type : op->getResultTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (tensor && tensor.hasStaticShape()) {
      db.addArgument(tensor::EmptyOp::create(host, loc, tensor.getShape(),
                                             tensor.getElementType()));
      continue;
    }
    if (!type.isIntOrIndexOrFloat())
      return op->emitOpError()
             << "has a result of type " << type
             << ", which a dispatch cannot return to the host program";
    db.addArgument(
        tensor::EmptyOp::create(host, loc, ArrayRef<int64_t>{}, carrier(type)));
  }
  Operation *clone = b.clone(*op, db.getMapping());
  SmallVector<Value> results;
  for (Value result : clone->getResults()) {
    if (isa<RankedTensorType>(result.getType())) {
      results.push_back(result);
      continue;
    }
    Value scalar = result;
    if (result.getType().isIndex())
      scalar = arith::IndexCastOp::create(b, loc, b.getI64Type(), result);
    results.push_back(tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, scalar.getType()), scalar));
  }
  db.finish(results);
  auto call = func::CallOp::create(host, loc, dispatch, db.getHostOperands());
  host.setInsertionPointAfter(call);
  for (auto [original, carried] :
       llvm::zip(op->getResults(), call.getResults())) {
    Value value = carried;
    if (!isa<RankedTensorType>(original.getType())) {
      value = tensor::ExtractOp::create(host, loc, carried, ValueRange{});
      if (original.getType().isIndex())
        value =
            arith::IndexCastOp::create(host, loc, original.getType(), value);
    }
    original.replaceAllUsesWith(value);
  }
  op->erase();
  return success();
}

/// What may stay in the host program: calls, returns, and ops that only
/// name or reshape buffers.
LogicalResult Outliner::checkHostProgram() {
  for (Operation &op : llvm::make_early_inc_range(
           llvm::reverse(func.getBody().front().getOperations()))) {
    if (isMemoryEffectFree(&op) && op.use_empty() &&
        !op.hasTrait<OpTrait::IsTerminator>()) {
      op.erase();
      continue;
    }
    if (staysOnHost(op))
      continue;
    return op.emitOpError(
        "was left outside every dispatch: the host program only orders "
        "dispatches, reshapes buffers and assembles slices");
  }
  return success();
}

struct OutlineDispatchesPass
    : lcc::impl::OutlineDispatchesBase<OutlineDispatchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func->hasAttr("lcc.dispatch") || func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitOpError("expected a single block to split into dispatches");
        return signalPassFailure();
      }
      Outliner outliner(module, func);
      Block &body = func.getBody().front();
      for (Operation &op : llvm::make_early_inc_range(body.getOperations())) {
        LogicalResult result = success();
        auto dps = dyn_cast<DestinationStyleOpInterface>(op);
        if (auto forall = dyn_cast<scf::ForallOp>(op))
          result = outliner.outline(forall);
        else if (dps && (isa<TilingInterface>(op) || !staysOnHost(op)))
          result = outliner.outline(dps);
        else if (!staysOnHost(op) && !isClonedIntoDispatch(&op) &&
                 !isPassedConstant(&op) &&
                 !op.hasTrait<OpTrait::IsTerminator>() && !op.use_empty())
          result = outliner.outline(&op);
        if (failed(result))
          return signalPassFailure();
      }
      outliner.forgetFirsts();
      // A constant the host itself uses (returns, inserts), and each
      // dispatch's copy of a passed constant, is computed by a dispatch of
      // its own; dispatches clone the smaller constants they read.
      for (auto constant :
           llvm::make_early_inc_range(body.getOps<arith::ConstantOp>()))
        if (isa<ShapedType>(constant.getType()) && !constant.use_empty() &&
            failed(outliner.outline(constant.getOperation())))
          return signalPassFailure();
      if (failed(outliner.checkHostProgram()))
        return signalPassFailure();
    }
  }
};

} // namespace
