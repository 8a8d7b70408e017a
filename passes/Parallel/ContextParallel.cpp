//===- ContextParallel.cpp - one sequence split over ranks ----------------===//
//
// lcc --context-parallel=P (docs/training.md, "Context parallel"): every
// function that attends gets rank r's share of the positions of each
// argument that holds the sequence, [B, L, ...] becoming [B, L / P, ...]:
// chunks r and 2P - 1 - r of 2P equal chunks (zigzag, which gives every
// rank the same causal work). Its blocks flattened as for the train step,
// the ops that work position by position (SequencePositions, as the
// decode step finds them) run on the share; learned positions are cut to
// the share (attn.rank_slice); each attention form is split as its
// interface says (getSequenceSplit: dense attention, relative and adaptive-
// span attention as ring attention, keys and values passed around the
// ranks; every other form over the heads, DeepSpeed-Ulysses); a
// cross-entropy loss, the mean
// over the share's positions, is averaged over the ranks. Anything else
// that reads the positions is an error naming it. Arguments and results
// split over the ranks carry attn.split_dim, which the artifact records so
// that the tools give each rank its share and gather the results.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/Attn/IR/AttnOps.h"
#include "passes/Decode/SequencePositions.h"
#include "passes/Parallel/HeadsOverRanks.h"
#include "passes/Parallel/KeysAroundRing.h"
#include "passes/Training/TrainStep.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"

namespace lcc {
#define GEN_PASS_DEF_CONTEXTPARALLEL
#include "passes/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

RankedTensorType tensorOf(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

/// The positions' axis of every value of one function that holds a share
/// of the sequence, kept as the function is rewritten.
using ShareAxes = llvm::DenseMap<Value, int64_t>;

struct ContextParallelPass
    : lcc::impl::ContextParallelBase<ContextParallelPass> {
  using ContextParallelBase::ContextParallelBase;

  void runOnOperation() override {
    if (ranks < 1) {
      getOperation().emitError()
          << "attn-context-parallel: ranks must be at least 1, got "
          << static_cast<int64_t>(ranks);
      return signalPassFailure();
    }
    if (ranks == 1)
      return;
    SmallVector<func::FuncOp> functions;
    for (auto function : getOperation().getOps<func::FuncOp>())
      if (!function.isDeclaration())
        functions.push_back(function);
    for (func::FuncOp function : functions)
      if (failed(splitFunction(function)))
        return signalPassFailure();
  }

  LogicalResult splitFunction(func::FuncOp function);
  /// The length of the sequence every attention of `function` attends
  /// over, its queries and keys alike; 0 when it has none.
  FailureOr<int64_t> sequenceLength(func::FuncOp function);
  LogicalResult splitOp(Operation &op, SequencePositions &positions,
                        ShareAxes &axes);
  LogicalResult splitPositionwise(Operation &op, SequencePositions &positions,
                                  ShareAxes &axes);
  void averageLoss(SoftmaxCrossEntropyOp loss);
  int64_t length = 0;
};

FailureOr<int64_t> ContextParallelPass::sequenceLength(func::FuncOp function) {
  int64_t seq = 0;
  WalkResult walked = function.walk([&](AttentionFormInterface form) {
    Operation *op = form.getOperation();
    RankedTensorType query = tensorOf(op->getOperand(0));
    if (!query || query.getRank() != 4) {
      op->emitError("context parallelism splits attention over queries "
                    "[batch, heads, seq, dim]");
      return WalkResult::interrupt();
    }
    // The collectives and the ring's exchanges carry f32.
    if (!query.getElementType().isF32()) {
      op->emitError() << "attends on " << query.getElementType()
                      << " operands: context parallelism exchanges f32 "
                         "between ranks only; give the model f32 tensors";
      return WalkResult::interrupt();
    }
    int64_t queries = query.getDimSize(2);
    for (Value operand : op->getOperands())
      if (RankedTensorType type = tensorOf(operand);
          type && type.getRank() == 4 && type.getDimSize(2) != queries) {
        op->emitError() << "attends to " << type.getDimSize(2)
                        << " positions from " << queries
                        << " queries (memories of earlier segments): "
                           "context parallelism splits one sequence, and "
                           "attention within it";
        return WalkResult::interrupt();
      }
    if (seq && queries != seq) {
      op->emitError() << "attends over " << queries
                      << " positions where another attention attends over "
                      << seq << ": context parallelism splits one sequence";
      return WalkResult::interrupt();
    }
    seq = queries;
    // Under HeadsOverRanks a rank holds a share of the heads, numbered from
    // 0: a mask or score that reads the head number would read the wrong
    // one. Around the ring every rank holds every head.
    auto attention = dyn_cast<AttentionOp>(op);
    bool overTheHeads =
        attention && (overHeads || attention.getSequenceSplit() ==
                                       SequenceSplit::HeadsOverRanks);
    if (overTheHeads)
      for (auto [region, head] : {std::pair{attention.getMaskRegion(), 1},
                                  std::pair{attention.getScoreRegion(), 2}})
        if (region && !region->getArgument(head).use_empty()) {
          op->emitError("its mask or score reads the head number, which "
                        "context parallelism over the heads (each rank a "
                        "share of them) does not support yet");
          return WalkResult::interrupt();
        }
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  if (seq % (2 * ranks) != 0)
    return function.emitError()
           << "context parallelism gives each of "
           << static_cast<int64_t>(ranks) << " ranks two of "
           << 2 * static_cast<int64_t>(ranks) << " equal chunks of the " << seq
           << " positions: give a multiple of "
           << 2 * static_cast<int64_t>(ranks);
  return seq;
}

LogicalResult ContextParallelPass::splitFunction(func::FuncOp function) {
  FailureOr<int64_t> seq = sequenceLength(function);
  if (failed(seq))
    return failure();
  if (*seq == 0)
    return success(); // Nothing attends: every rank computes it whole.
  length = *seq;
  training::flattenForDifferentiation(function, /*keepReversible=*/false,
                                      /*keepAttentionForms=*/true);

  // The arguments that hold the sequence: [B, L, ...], or attention's
  // [B, H, L, d].
  SmallVector<std::pair<unsigned, unsigned>> sequenceArguments;
  for (BlockArgument argument : function.getArguments()) {
    RankedTensorType type = tensorOf(argument);
    if (!type)
      continue;
    if (type.getRank() >= 2 && type.getDimSize(1) == length) {
      sequenceArguments.push_back({argument.getArgNumber(), 1});
      continue;
    }
    if (type.getRank() == 4 && type.getDimSize(2) == length) {
      sequenceArguments.push_back({argument.getArgNumber(), 2});
      continue;
    }
    if (llvm::is_contained(type.getShape(), length))
      return function.emitError()
             << "argument #" << argument.getArgNumber() << " (" << type
             << ") has " << length
             << " rows but not in dimension 1 (or 2 of 4): context "
                "parallelism splits arguments [batch, seq, ...] and "
                "[batch, heads, seq, dim] on their positions";
  }
  SequencePositions positions(function, length, length, sequenceArguments);
  ShareAxes axes;
  for (auto [index, axis] : sequenceArguments) {
    BlockArgument argument = function.getArgument(index);
    argument.setType(parallel::shareOf(tensorOf(argument), axis, ranks));
    axes[argument] = axis;
    function.setArgAttr(
        index, "attn.split_dim",
        OpBuilder(function).getI64IntegerAttr(static_cast<int64_t>(axis)));
  }
  for (Operation &op : llvm::make_early_inc_range(function.getBody().front()))
    if (failed(splitOp(op, positions, axes)))
      return failure();

  auto ret = cast<func::ReturnOp>(function.getBody().front().getTerminator());
  function.setType(FunctionType::get(
      function.getContext(), function.getBody().front().getArgumentTypes(),
      ret.getOperandTypes()));
  for (auto [index, value] : llvm::enumerate(ret.getOperands()))
    if (auto it = axes.find(value); it != axes.end())
      function.setResultAttr(index, "attn.split_dim",
                             OpBuilder(function).getI64IntegerAttr(it->second));
  if (failed(verify(function)))
    return function.emitError("internal error: context parallelism left "
                              "ops whose types disagree");
  return success();
}

LogicalResult ContextParallelPass::splitOp(Operation &op,
                                           SequencePositions &positions,
                                           ShareAxes &axes) {
  bool readsShare = llvm::any_of(op.getOperands(),
                                 [&](Value v) { return axes.count(v) > 0; });
  if (!readsShare || isa<func::ReturnOp>(op))
    return success();
  if (auto form = dyn_cast<AttentionFormInterface>(op)) {
    for (Value operand : op.getOperands())
      if (auto it = axes.find(operand); it != axes.end() && it->second != 2)
        return op.emitError()
               << "--context-parallel: an operand holds the positions in "
                  "dimension "
               << it->second
               << ", where attention takes [batch, heads, seq, dim]";
    SmallVector<Value> shares;
    switch (overHeads ? SequenceSplit::HeadsOverRanks
                      : form.getSequenceSplit()) {
    case SequenceSplit::HeadsOverRanks:
      if (failed(parallel::splitHeadsOverRanks(
              form, ranks,
              [&](Value v) {
                auto it = axes.find(v);
                return it != axes.end() && it->second == 2;
              },
              shares)))
        return failure();
      break;
    case SequenceSplit::KeysAroundRing: {
      // A form whose distances count from where its queries are placed
      // attends chunk pairs around the ring.
      if (!isa<AttentionOp>(op) && form.attendsAtQueryOffset()) {
        shares.push_back(parallel::splitFormAroundRing(form, ranks));
        break;
      }
      // Another form runs as the attention it is exactly (the interface).
      auto attention = dyn_cast<AttentionOp>(op);
      if (!attention) {
        OpBuilder b(&op);
        std::string description;
        Value dense = form.buildDenseAttention(b, description);
        attention = dense ? dense.getDefiningOp<AttentionOp>() : nullptr;
        if (!attention)
          return op.emitError("internal error: a form split around the ring "
                              "built no attn.attention");
        op.getResult(0).replaceAllUsesWith(dense);
        op.erase();
      }
      shares.push_back(parallel::splitKeysAroundRing(attention, ranks));
      break;
    }
    }
    for (Value share : shares)
      axes[share] = 2;
    return success();
  }
  if (auto loss = dyn_cast<SoftmaxCrossEntropyOp>(op)) {
    if (loss.getWeights())
      return op.emitError("context parallelism averages a loss over the "
                          "ranks' equal shares of the positions, which a "
                          "weighted loss does not allow yet");
    averageLoss(loss);
    return success();
  }
  return splitPositionwise(op, positions, axes);
}

void ContextParallelPass::averageLoss(SoftmaxCrossEntropyOp loss) {
  // Each rank's loss is the mean over its positions, as many as every
  // other rank's: their mean is the whole sequence's.
  OpBuilder b(loss.getContext());
  b.setInsertionPointAfter(loss);
  SmallVector<OpOperand *> readers = llvm::map_to_vector(
      loss.getResult().getUses(), [](OpOperand &use) { return &use; });
  auto mean = AllReduceOp::create(
      b, loss.getLoc(),
      ReductionKindAttr::get(b.getContext(), ReductionKind::Mean),
      ValueRange{loss.getResult()});
  for (OpOperand *reader : readers)
    reader->set(mean.getResult(0));
}

LogicalResult ContextParallelPass::splitPositionwise(
    Operation &op, SequencePositions &positions, ShareAxes &axes) {
  // The analysis ran on the whole function: an op it could not place
  // mixes positions.
  std::optional<PositionAxis> placed =
      op.getNumResults() ? positions.lookup(op.getResult(0)) : std::nullopt;
  if (!placed || placed->memoryRows != 0) {
    std::string why = positions.whyNotAtOnePosition(&op);
    return op.emitError() << "--context-parallel: "
                          << (why.empty() ? "'" + op.getName().getStringRef() +
                                                "' mixes positions"
                                          : why);
  }
  int64_t axis = placed->axis;
  OpBuilder b(&op);
  // Learned positions [1, L, width], the same on every rank (the one
  // tensor of every position SequencePositions lets an op read): this
  // rank's share.
  int64_t resultRank = tensorOf(op.getResult(0)).getRank();
  for (OpOperand &operand : op.getOpOperands()) {
    RankedTensorType type = tensorOf(operand.get());
    if (!axes.count(operand.get()) && type && type.getRank() >= 3 &&
        type.getRank() == resultRank && type.getDimSize(axis) == length &&
        !isa<linalg::TransposeOp>(op))
      operand.set(parallel::takeRankPositions(b, op.getLoc(), operand.get(),
                                              axis, ranks));
  }
  Operation *split = &op;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    split = tensor::ExpandShapeOp::create(
        b, op.getLoc(), parallel::shareOf(expand.getResultType(), axis, ranks),
        expand.getSrc(), expand.getReassociationIndices());
  } else if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    RankedTensorType type =
        parallel::shareOf(tensorOf(transpose.getInit()), axis, ranks);
    Value init = tensor::EmptyOp::create(b, op.getLoc(), type.getShape(),
                                         type.getElementType());
    split = linalg::TransposeOp::create(b, op.getLoc(), transpose.getInput(),
                                        init, transpose.getPermutation());
  } else {
    for (OpResult result : op.getResults())
      result.setType(parallel::shareOf(tensorOf(result), axis, ranks));
    // Chunks of positions, as many positions a chunk as before (at least
    // one chunk): the share has 1 / P of the positions.
    if (auto feedForward = dyn_cast<FeedForwardOp>(op))
      feedForward.setChunks(
          std::max<int64_t>(1, feedForward.getChunks() / ranks));
  }
  if (split != &op) {
    op.replaceAllUsesWith(split->getResults());
    op.erase();
  }
  for (Value result : split->getResults())
    axes[result] = axis;
  return success();
}

} // namespace
