//===- SequencePositions.cpp - which values run at one position -----------===//

#include "passes/Decode/SequencePositions.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

RankedTensorType lcc::atOnePosition(Type type, unsigned axis) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[axis] = 1;
  return RankedTensorType::get(shape, tensor.getElementType());
}

namespace {

/// The model ops that compute each position from that position alone (as
/// the dialect defines them), and elementwise ops.
bool isPositionwiseModelOp(Operation *op) {
  if (isa<EmbeddingOp, LayerNormOp, LinearOp, FeedForwardOp, SplitHeadsOp,
          MergeHeadsOp, StopGradientOp>(op))
    return true;
  return op->getNumRegions() == 0 && op->hasTrait<OpTrait::Elementwise>();
}

int64_t tensorRank(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

int64_t dimOf(Value v, unsigned axis) {
  return cast<RankedTensorType>(v.getType()).getDimSize(axis);
}

} // namespace

SequencePositions::SequencePositions(func::FuncOp function, int64_t length,
                                     int64_t cachePositions,
                                     ArrayRef<unsigned> positionArguments)
    : SequencePositions(function, length, cachePositions,
                        llvm::map_to_vector(positionArguments, [](unsigned a) {
                          return std::pair<unsigned, unsigned>(a, 1);
                        })) {}

SequencePositions::SequencePositions(
    func::FuncOp function, int64_t length, int64_t cachePositions,
    ArrayRef<std::pair<unsigned, unsigned>> argumentAxes)
    : length(length), cachePositions(cachePositions) {
  for (auto [argument, axis] : argumentAxes)
    axes[function.getArgument(argument)] = PositionAxis{axis, 0};
  for (Operation &op : function.getBody().front())
    visit(op);
}

std::optional<PositionAxis> SequencePositions::lookup(Value value) const {
  auto it = axes.find(value);
  if (it == axes.end())
    return std::nullopt;
  return it->second;
}

void SequencePositions::visit(Operation &op) {
  bool readsPositions = false;
  for (Value operand : op.getOperands()) {
    if (auto it = taintedBy.find(operand); it != taintedBy.end()) {
      for (Value result : op.getResults())
        taintedBy[result] = it->second;
      return;
    }
    readsPositions = readsPositions || axes.count(operand);
  }
  if (!readsPositions)
    return;
  std::string why = placeResults(op);
  if (why.empty())
    return;
  refused[&op] = ("'" + op.getName().getStringRef() + "' " + why).str();
  for (Value result : op.getResults())
    if (!axes.count(result))
      taintedBy[result] = &op;
}

std::string SequencePositions::whyNotAtOnePosition(Operation *op) const {
  if (auto it = refused.find(op); it != refused.end())
    return it->second;
  for (Value operand : op->getOperands())
    if (auto it = taintedBy.find(operand); it != taintedBy.end())
      return ("'" + op->getName().getStringRef() + "' reads what '" +
              it->second->getName().getStringRef() +
              "' computes, which a decode step cannot compute at one "
              "position: " +
              refused.lookup(it->second))
          .str();
  return "";
}

std::string SequencePositions::placeResults(Operation &op) {
  // An attention attends from its queries' positions; what else it
  // returns (softmax statistics) is no position's.
  if (isa<AttentionFormInterface>(op)) {
    std::optional<PositionAxis> query = lookup(op.getOperand(0));
    if (!query || query->axis != 2 || query->memoryRows != 0)
      return "attends from queries that are not one per position";
    axes[op.getResult(0)] = PositionAxis{2, 0};
    return op.getNumResults() > 1
               ? "returns softmax statistics, which are no position's: a "
                 "decode step computes none"
               : "";
  }
  if (isPositionwiseModelOp(&op))
    return placeModelOp(op);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    PositionAxis in = *lookup(expand.getSrc());
    int64_t rows = dimOf(expand.getSrc(), in.axis);
    std::optional<unsigned> out;
    // Kept: the groups are built anew by each call.
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    for (int64_t dim : groups[in.axis])
      if (dimOf(expand.getResult(), dim) != 1) {
        if (out || dimOf(expand.getResult(), dim) != rows)
          return "splits the positions' axis";
        out = dim;
      }
    if (!out)
      return "splits the positions' axis";
    axes[expand.getResult()] = PositionAxis{*out, in.memoryRows};
    return "";
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    PositionAxis in = *lookup(collapse.getSrc());
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    for (auto [group, dims] : llvm::enumerate(groups)) {
      if (!llvm::is_contained(dims, int64_t(in.axis)))
        continue;
      for (int64_t dim : dims)
        if (dim != int64_t(in.axis) && dimOf(collapse.getSrc(), dim) != 1)
          return "merges the positions' axis with another";
      axes[collapse.getResult()] = PositionAxis{unsigned(group), in.memoryRows};
      return "";
    }
    return "merges the positions' axis with another";
  }
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    if (lookup(transpose.getInit()))
      return "writes into a tensor of positions";
    PositionAxis in = *lookup(transpose.getInput());
    ArrayRef<int64_t> permutation = transpose.getPermutation();
    unsigned out =
        llvm::find(permutation, int64_t(in.axis)) - permutation.begin();
    axes[transpose.getResult()[0]] = PositionAxis{out, in.memoryRows};
    return "";
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    // [memories...; positions]: Transformer-XL's keys and values.
    ValueRange inputs = concat.getInputs();
    std::optional<PositionAxis> last = lookup(inputs.back());
    if (!last || last->memoryRows != 0 || last->axis != concat.getDim())
      return "joins positions other than after memories on their axis";
    int64_t memoryRows = 0;
    for (Value input : inputs.drop_back()) {
      if (lookup(input))
        return "joins positions other than after memories on their axis";
      memoryRows += dimOf(input, last->axis);
    }
    axes[concat.getResult()] = PositionAxis{last->axis, memoryRows};
    return "";
  }
  return ("may mix positions: a decode step, or a rank's share of the "
          "sequence, runs only the ops that work position by position "
          "(attn's model ops, elementwise ops, reshapes and transposes that "
          "keep the positions apart, memories joined before them)");
}

bool SequencePositions::isLearnedPositions(Value v, unsigned axis) const {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getRank() == 3 && axis == 1 && type.getDimSize(0) == 1 &&
         type.getDimSize(1) == length;
}

std::string SequencePositions::placeModelOp(Operation &op) {
  std::optional<PositionAxis> in;
  for (Value operand : op.getOperands()) {
    std::optional<PositionAxis> axis = lookup(operand);
    if (!axis)
      continue;
    if (in && (in->axis != axis->axis || in->memoryRows != axis->memoryRows))
      return "combines values whose positions lie differently";
    in = axis;
  }
  PositionAxis out = *in;
  // The ops that work along their operand's last axis (a product, a
  // norm) mix positions there; splitting and merging heads move them.
  if (isa<LinearOp, FeedForwardOp, LayerNormOp>(op) &&
      in->axis + 1 == tensorRank(op.getOperand(0)))
    return "works along the positions' axis";
  if (isa<SplitHeadsOp>(op) || isa<MergeHeadsOp>(op)) {
    unsigned from = isa<SplitHeadsOp>(op) ? 1 : 2;
    if (in->axis != from)
      return "moves an axis other than the positions'";
    out.axis = 3 - from;
  }
  for (Value operand : op.getOperands()) {
    if (lookup(operand))
      continue;
    // A weight, or what is the same at every position.
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || type.getRank() < 3 ||
        type.getRank() != tensorRank(op.getResult(0)) ||
        type.getDimSize(out.axis) != dimOf(op.getResult(0), out.axis) ||
        type.getDimSize(out.axis) == 1)
      continue;
    if (!isLearnedPositions(operand, out.axis) || out.memoryRows != 0)
      return "reads a tensor of every position that is not learned "
             "positions [1, seq, width]";
    if (cachePositions > length)
      return "reads learned positions of " + std::to_string(length) +
             " positions: a cache of --max-cache=" +
             std::to_string(cachePositions) + " has none to read beyond them";
  }
  for (Value result : op.getResults())
    axes[result] = out;
  return "";
}

void SequencePositions::buildAtOnePosition(OpBuilder &b, Operation &op,
                                           IRMapping &mapping,
                                           Value position) const {
  Location loc = op.getLoc();
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    Value row = tensor::ExpandShapeOp::create(
        b, loc, atOnePosition(expand.getType(), lookup(expand)->axis),
        mapping.lookup(expand.getSrc()), expand.getReassociationIndices());
    mapping.map(expand.getResult(), row);
    return;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    Value row = tensor::CollapseShapeOp::create(
        b, loc, mapping.lookup(collapse.getSrc()),
        collapse.getReassociationIndices());
    mapping.map(collapse.getResult(), row);
    return;
  }
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    Value result = transpose.getResult()[0];
    RankedTensorType type =
        atOnePosition(result.getType(), lookup(result)->axis);
    Value init =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    auto row = linalg::TransposeOp::create(b, loc,
                                           mapping.lookup(transpose.getInput()),
                                           init, transpose.getPermutation());
    mapping.map(result, row.getResult()[0]);
    return;
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    // The memories' rows are the attention's caches'.
    mapping.map(concat.getResult(), mapping.lookup(concat.getInputs().back()));
    return;
  }
  unsigned axis = lookup(op.getResult(0))->axis;
  for (Value operand : op.getOperands())
    if (!lookup(operand) && isLearnedPositions(operand, axis) &&
        dimOf(op.getResult(0), axis) == length) {
      Value table = tensor::CollapseShapeOp::create(
          b, loc, mapping.lookup(operand),
          ArrayRef<ReassociationIndices>{{0, 1}, {2}});
      mapping.map(operand, EmbeddingOp::create(
                               b, loc, atOnePosition(operand.getType(), 1),
                               position, table)
                               .getResult());
    }
  Operation *copy = b.clone(op, mapping);
  for (Value result : copy->getResults())
    result.setType(atOnePosition(result.getType(), axis));
}
