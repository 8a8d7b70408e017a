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
    mapping.map(hostValue, arg);
    return arg;
  }

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
};

class Outliner {
public:
  Outliner(ModuleOp module, func::FuncOp func)
      : module(module), func(func), symbols(module) {}

  LogicalResult outline(scf::ForallOp forall);
  LogicalResult outline(DestinationStyleOpInterface op);
  LogicalResult outline(Operation *op);
  LogicalResult checkHostProgram();

private:
  /// A dispatch named after the model op it computes:
  /// `forward_12_layers_1_ff` (its symbol), shown as `forward_12_layers.1.ff`
  /// with its source position in reports (lcc.name, lcc.location);
  /// `forward_dispatch_12` when its op has no source name.
  /// Its attributes are given at creation: each later one would rebuild
  /// the function's attribute dictionary, for every dispatch of every layer.
  func::FuncOp createDispatch(Location loc, ArrayRef<int64_t> workgroupCount) {
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    unsigned index = counter++;
    std::optional<std::string> source = lcc::sourceNameOf(loc);
    // Without a source name (IR written by hand, lcc-opt) the dispatch is
    // only its number.
    std::string display =
        source ? (func.getName() + "_" + Twine(index) + "_" + *source).str()
               : (func.getName() + "_dispatch_" + Twine(index)).str();
    SmallVector<NamedAttribute> attributes = {
        b.getNamedAttr("lcc.dispatch", b.getUnitAttr()),
        b.getNamedAttr("lcc.workgroup_count",
                       b.getDenseI64ArrayAttr(workgroupCount))};
    if (source)
      attributes.push_back(
          b.getNamedAttr("lcc.name", b.getStringAttr(display)));
    if (std::optional<std::string> position = lcc::sourcePositionOf(loc))
      attributes.push_back(
          b.getNamedAttr("lcc.location", b.getStringAttr(*position)));
    auto dispatch = func::FuncOp::create(
        b, loc, lcc::symbolSafe(display),
        FunctionType::get(module.getContext(), {}, {}), attributes);
    dispatch.setPrivate();
    dispatch.addEntryBlock();
    symbols.insert(dispatch);
    return dispatch;
  }

  void replaceWithCall(Operation *op, func::FuncOp dispatch,
                       ArrayRef<Value> hostOperands) {
    OpBuilder b(op);
    auto call = func::CallOp::create(b, op->getLoc(), dispatch, hostOperands);
    op->replaceAllUsesWith(call.getResults());
    op->erase();
  }

  ModuleOp module;
  func::FuncOp func;
  SymbolTable symbols;
  unsigned counter = 0;
};

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

  SmallVector<int64_t> workgroupCount = {1, 1, 1};
  for (int64_t d = 0, e = forall.getRank(); d < e; ++d)
    workgroupCount[d] = llvm::divideCeil((*ubs)[d] - (*lbs)[d], (*steps)[d]);
  func::FuncOp dispatch = createDispatch(forall.getLoc(), workgroupCount);
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
  replaceWithCall(forall, dispatch, db.getHostOperands());
  return success();
}

LogicalResult Outliner::outline(DestinationStyleOpInterface op) {
  func::FuncOp dispatch = createDispatch(op.getLoc(), {1, 1, 1});
  DispatchBuilder db(dispatch, op);
  for (Region &region : op->getRegions())
    db.materializeCaptures(region);
  for (OpOperand *input : op.getDpsInputOperands())
    db.materialize(input->get());
  for (OpOperand &init : op.getDpsInitsMutable())
    db.getMapping().map(init.get(), db.addArgument(init.get()));
  Operation *clone = db.getBuilder().clone(*op, db.getMapping());
  db.finish(clone->getResults());
  replaceWithCall(op, dispatch, db.getHostOperands());
  return success();
}

/// Any other op with results (a loop over tensors, a constant the host
/// returns): one workgroup that computes it into fresh outputs. A scalar
/// result travels as a 0-d tensor (an index as i64) that the host reads back
/// with tensor.extract, which the dispatches using it then clone.
LogicalResult Outliner::outline(Operation *op) {
  func::FuncOp dispatch = createDispatch(op->getLoc(), {1, 1, 1});
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
