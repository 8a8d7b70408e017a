//===- GenerateTrainStep.cpp - attn-generate-train-step -------------------===//
//
// The pass: a copy of the loss function is flattened and differentiated
// (TrainStep.h), and its gradients feed the optimizer, whose new parameter
// values (and optimizer state) are written with attn.assign. The loss
// function itself, and every other function, stay as they are.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Training/TrainStep.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"

#include <cmath>

namespace lcc {
#define GEN_PASS_DEF_GENERATETRAINSTEP
#include "passes/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::training;

namespace {

constexpr StringLiteral kTrainStepName = "train_step";
constexpr StringLiteral kAccumulateStepName = "accumulate_step";
/// Names of Adam's state and of the hyper-parameters: a model's parameters
/// may not use them.
constexpr StringLiteral kAdamPrefix = "adam.";
constexpr StringLiteral kHyperParameterPrefix = "optimizer.";

struct OptimizerSettings {
  bool adam;
  double lr, beta1, beta2, epsilon, weightDecay, gradClip, centroidDecay;
};

/// A double as a user wrote it ("0.001", "1e-08").
std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

FloatAttr f32(Builder &b, double value) {
  return b.getF32FloatAttr(static_cast<float>(value));
}

/// The state that sums a parameter's gradients over micro-batches.
std::string accumulatedName(StringRef name) {
  return (kHyperParameterPrefix + "accumulated." + name).str();
}

/// Reads the sum of `name`'s gradients over the micro-batches so far.
Value readAccumulated(OpBuilder &b, Location loc, StringRef name, Type type) {
  return ParamOp::create(b, loc, type, accumulatedName(name), /*state=*/true,
                         FloatAttr());
}

/// A 0-d f32 hyper-parameter: state starting at `initial`.
Value hyperParameter(OpBuilder &b, Location loc, StringRef name,
                     double initial) {
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  return ParamOp::create(b, loc, Type(scalar),
                         (kHyperParameterPrefix + name).str(),
                         /*state=*/true, f32(b, initial));
}

/// The hyper-parameters the update reads: state the loaded module keeps
/// (`optimizer.lr`, ...), starting at the values lcc was given, which a
/// trainer sets between steps (lcc-train --lr, its schedule) without
/// recompiling.
struct HyperParameters {
  Value lr, weightDecay, gradClip, beta1, beta2, epsilon;

  static HyperParameters create(OpBuilder &b, Location loc,
                                const OptimizerSettings &settings) {
    auto read = [&](StringRef name, double initial) {
      return hyperParameter(b, loc, name, initial);
    };
    HyperParameters h;
    h.lr = read("lr", settings.lr);
    h.weightDecay = read("weight_decay", settings.weightDecay);
    h.gradClip = read("grad_clip", settings.gradClip);
    if (settings.adam) {
      h.beta1 = read("beta1", settings.beta1);
      h.beta2 = read("beta2", settings.beta2);
      h.epsilon = read("epsilon", settings.epsilon);
    }
    return h;
  }
};

Value splat(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  return arith::ConstantOp::create(
      b, loc, type,
      DenseElementsAttr::get(type,
                             FloatAttr::get(type.getElementType(), value)));
}

/// `x` clamped elementwise into [0, 1].
Value clampToUnit(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  Value floored =
      arith::MaximumFOp::create(b, loc, x, splat(b, loc, type, 0.0));
  return arith::MinimumFOp::create(b, loc, floored, splat(b, loc, type, 1.0));
}

/// The parameter `value` is, or is a rank's share of (attn-context-
/// parallel's rank slice of its heads, reshaped): null for anything else.
/// `rankShare` (when given) says whether a rank slice was passed.
ParamOp parameterBehind(Value value, bool *rankShare = nullptr) {
  bool share = false;
  while (Operation *def = value.getDefiningOp()) {
    if (auto param = dyn_cast<ParamOp>(def)) {
      if (rankShare)
        *rankShare = share;
      return param;
    }
    if (isa<RankSliceOp>(def))
      share = true;
    else if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                  linalg::TransposeOp>(def))
      return nullptr;
    value = def->getOperand(0);
  }
  return nullptr;
}

/// The parameters an op reads where they must stay in [0, 1]
/// (DifferentiableOpInterface::getUnitIntervalOperands, adaptive span's z):
/// the update clamps them back, as facebookresearch/adaptive-span does
/// after each step.
llvm::StringSet<> unitIntervalParameters(func::FuncOp trainStep) {
  llvm::StringSet<> names;
  trainStep.walk([&](DifferentiableOpInterface op) {
    SmallVector<unsigned> operands;
    op.getUnitIntervalOperands(operands);
    for (unsigned i : operands)
      if (ParamOp param = parameterBehind(op->getOperand(i)))
        names.insert(param.getName());
  });
  return names;
}

/// The optimizer's update of every parameter, written with attn.assign;
/// the names in `unitInterval` are clamped into [0, 1] after it.
void appendOptimizer(OpBuilder &b, Location loc,
                     const ParameterGradients &params,
                     ArrayRef<Value> gradients,
                     const OptimizerSettings &settings,
                     const HyperParameters &hyper,
                     const llvm::StringSet<> &unitInterval) {
  auto clamped = [&](StringRef name, Value updated) {
    return unitInterval.contains(name) ? clampToUnit(b, loc, updated) : updated;
  };
  Value step;
  if (settings.adam) {
    // The step count t, from 1: Adam's bias correction needs it.
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    Value previous =
        ParamOp::create(b, loc, Type(scalar), StringRef("adam.step"),
                        /*state=*/true, FloatAttr());
    step = arith::AddFOp::create(b, loc, previous, splat(b, loc, scalar, 1.0));
    AssignOp::create(b, loc, "adam.step", step);
  }
  for (auto [name, value, gradient] :
       llvm::zip_equal(params.names, params.values, gradients)) {
    if (!settings.adam) {
      Value updated =
          SGDUpdateOp::create(b, loc, value.getType(), value, gradient,
                              hyper.lr, hyper.weightDecay);
      AssignOp::create(b, loc, name, clamped(name, updated));
      continue;
    }
    std::string m = (kAdamPrefix + "m." + name).str();
    std::string v = (kAdamPrefix + "v." + name).str();
    Value moment1 = ParamOp::create(b, loc, value.getType(), StringRef(m),
                                    /*state=*/true, FloatAttr());
    Value moment2 = ParamOp::create(b, loc, value.getType(), StringRef(v),
                                    /*state=*/true, FloatAttr());
    Type type = value.getType();
    auto update = AdamUpdateOp::create(b, loc, TypeRange{type, type, type},
                                       value, gradient, moment1, moment2, step,
                                       hyper.lr, hyper.beta1, hyper.beta2,
                                       hyper.epsilon, hyper.weightDecay);
    AssignOp::create(b, loc, name, clamped(name, update.getResult()));
    AssignOp::create(b, loc, m, update.getNewMoment1());
    AssignOp::create(b, loc, v, update.getNewMoment2());
  }
}

/// The update of every operand an op trains by its own rule
/// (DifferentiableOpInterface::getSelfTrainedOperand: routed attention's
/// centroids, by their moving average), written with attn.assign. Such an
/// operand gets no gradient, so it must not be trained by the optimizer
/// too, nor be computed from parameters (which would then silently not
/// train).
LogicalResult appendSelfTrainedUpdates(OpBuilder &b, func::FuncOp trainStep,
                                       const ParameterGradients &params,
                                       double decay) {
  llvm::StringSet<> updated;
  SmallVector<DifferentiableOpInterface> ops(
      trainStep.getBody().front().getOps<DifferentiableOpInterface>());
  for (DifferentiableOpInterface op : ops) {
    SelfTrainedOperand trained = op.getSelfTrainedOperand();
    if (!trained.operand || op->hasAttr(kRecomputedAttrName))
      continue; // None, or the backward's copy of a forward op.
    Value value = trained.operand->get();
    if (isa<BlockArgument>(value) || value.getDefiningOp<arith::ConstantOp>())
      continue;
    auto param = value.getDefiningOp<ParamOp>();
    bool rankShare = false;
    if (!param && parameterBehind(value, &rankShare) && rankShare)
      return op->emitOpError()
             << "has " << trained.name
             << " that context parallelism cuts to each rank's heads: "
                "training them by "
             << trained.rule
             << " over ranks that share a sequence is not supported yet";
    if (!param)
      return op->emitOpError()
             << "has " << trained.name
             << " computed by other ops: attn-generate-train-step trains "
                "them by "
             << trained.rule
             << ", so they must be an attn.param (or a constant or an "
                "argument, not trained)";
    StringRef name = param.getName();
    if (llvm::is_contained(params.names, name))
      return op->emitOpError()
             << "has " << trained.name << " '" << name
             << "' that the loss is also differentiated by elsewhere: they "
                "are trained by "
             << trained.rule << " only";
    if (!updated.insert(name).second)
      return op->emitOpError() << "shares its " << trained.name << " '" << name
                               << "' with another op that trains them by "
                               << trained.rule << ": each op trains its own";
    // Computed where the forward's inputs are (they need not live to the
    // end for it), written at the end with the other updates.
    OpBuilder next(op->getBlock(), std::next(op->getIterator()));
    AssignOp::create(b, op->getLoc(), name,
                     op.buildSelfTrainedUpdate(next, decay));
  }
  return success();
}

/// The gradients with the sums of earlier micro-batches added (state
/// `optimizer.accumulated.NAME`), each sum set back to zero.
void addAccumulatedGradients(OpBuilder &b, Location loc,
                             ArrayRef<std::string> names,
                             MutableArrayRef<Value> gradients) {
  for (auto [name, gradient] : llvm::zip_equal(names, gradients)) {
    auto type = cast<RankedTensorType>(gradient.getType());
    Value sum = readAccumulated(b, loc, name, type);
    gradient = arith::AddFOp::create(b, loc, gradient, sum);
    Value empty =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    Value zero = arith::ConstantOp::create(b, loc, f32(b, 0.0));
    Value zeros = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
    AssignOp::create(b, loc, accumulatedName(name), zeros);
  }
}

/// `loss` and `gradients` replaced by their means over the ranks of the
/// job (attn.all_reduce in `b`'s block), in buckets of about `bucketBytes`
/// (0: one): the values in the order the step computes them, each
/// bucket's all-reduce right after the last of its values, so that the
/// runtime reduces it while the backward goes on (PyTorch DDP's buckets).
void averageOverRanks(OpBuilder &b, Location loc, Value &loss,
                      MutableArrayRef<Value> gradients, int64_t bucketBytes) {
  SmallVector<Value *> values = {&loss};
  for (Value &gradient : gradients)
    values.push_back(&gradient);
  Block *block = b.getInsertionBlock();
  // Where each value is computed in the step: its op there, or none (an
  // argument, or a constant outside).
  auto computedAt = [&](Value v) -> Operation * {
    Operation *def = v.getDefiningOp();
    return def ? block->findAncestorOpInBlock(*def) : nullptr;
  };
  auto earlier = [&](Value *x, Value *y) {
    Operation *a = computedAt(*x), *c = computedAt(*y);
    return a != c && (!a || (c && a->isBeforeInBlock(c)));
  };
  llvm::stable_sort(values, earlier);
  OpBuilder::InsertionGuard guard(b);
  for (size_t first = 0; first < values.size();) {
    size_t last = first;
    int64_t bytes = 0;
    do {
      auto type = cast<RankedTensorType>(values[last]->getType());
      bytes += type.getNumElements() * type.getElementTypeBitWidth() / 8;
      ++last;
    } while (last < values.size() && (bucketBytes == 0 || bytes < bucketBytes));
    SmallVector<Value> bucket;
    Operation *after = nullptr;
    for (size_t i = first; i < last; ++i) {
      bucket.push_back(*values[i]);
      if (Operation *at = computedAt(*values[i]))
        after = !after || after->isBeforeInBlock(at) ? at : after;
    }
    if (after)
      b.setInsertionPointAfter(after);
    else
      b.setInsertionPointToStart(block);
    auto reduced = AllReduceOp::create(b, loc, ReductionKind::Mean, bucket);
    for (size_t i = first; i < last; ++i)
      *values[i] = reduced.getResult(i - first);
    first = last;
  }
}

struct GenerateTrainStepPass
    : lcc::impl::GenerateTrainStepBase<GenerateTrainStepPass> {
  using GenerateTrainStepBase::GenerateTrainStepBase;

  LogicalResult checkOptions(ModuleOp module, OptimizerSettings &settings) {
    auto fail = [&](const Twine &message) {
      return module.emitError("attn-generate-train-step: " + message);
    };
    if (optimizer != "sgd" && optimizer != "adam")
      return fail("unknown optimizer '" + optimizer +
                  "'; expected sgd or adam");
    if (gradientBucketBytes < 0)
      return fail("expected gradient-bucket-bytes >= 0, got " +
                  Twine(static_cast<int64_t>(gradientBucketBytes)));
    for (auto [knob, value] :
         {std::pair<const RealKnob &, double>{knobs::kLearningRate, lr},
          {knobs::kWeightDecay, weightDecay},
          {knobs::kGradClip, gradClip},
          {knobs::kCentroidDecay, centroidDecay}}) {
      std::string problem = checkKnob(knob, knob.flag, value);
      if (!problem.empty())
        return fail(problem);
    }
    auto positive = [](double v) { return std::isfinite(v) && v > 0.0; };
    if (!(beta1 >= 0.0 && beta1 < 1.0) || !(beta2 >= 0.0 && beta2 < 1.0))
      return fail("expected beta1 and beta2 in [0, 1), got " +
                  formatNumber(beta1) + " and " + formatNumber(beta2));
    if (!positive(epsilon))
      return fail("expected epsilon > 0, got " + formatNumber(epsilon));
    settings = {optimizer == "adam", lr,       beta1,        beta2, epsilon,
                weightDecay,         gradClip, centroidDecay};
    return success();
  }

  /// The loss function, checked: its first result is a 0-d float loss.
  FailureOr<func::FuncOp> findLoss(ModuleOp module) {
    auto loss = module.lookupSymbol<func::FuncOp>(function);
    if (!loss || loss.isExternal())
      return module.emitError()
             << "attn-generate-train-step: no function '" << function
             << "' to differentiate (--train=FUNC names it)";
    auto type = loss.getNumResults()
                    ? dyn_cast<RankedTensorType>(loss.getResultTypes()[0])
                    : RankedTensorType();
    if (!type || type.getRank() != 0 || !type.getElementType().isF32())
      return loss.emitOpError()
             << "is differentiated by attn-generate-train-step: expected its "
                "first result to be the loss, a tensor<f32>, got "
             << (loss.getNumResults() ? loss.getResultTypes()[0]
                                      : Type(NoneType::get(&getContext())));
    for (StringRef name : {kTrainStepName.str(), kAccumulateStepName.str(),
                           (function + "_gradients")})
      if (module.lookupSymbol(name))
        return module.emitError()
               << "attn-generate-train-step: the module already has a "
                  "function '"
               << name << "'";
    WalkResult reserved = loss.walk([&](ParamOp param) {
      if (param.getName().starts_with(kAdamPrefix) ||
          param.getName().starts_with(kHyperParameterPrefix) ||
          param.getState()) {
        param.emitOpError() << "uses the name '" << param.getName()
                            << "': names starting with '" << kAdamPrefix
                            << "' or '" << kHyperParameterPrefix
                            << "' and state parameters belong to the "
                               "optimizer";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (reserved.wasInterrupted())
      return failure();
    return loss;
  }

  /// FUNC_gradients: a flattened copy of the loss function, differentiated,
  /// returning the loss, every gradient (results named after the
  /// parameters) and, until dropState, the loss function's other results
  /// (state such as a Transformer-XL's new memories, not differentiated).
  FailureOr<func::FuncOp> buildGradientsFunction(ModuleOp module,
                                                 func::FuncOp loss) {
    func::FuncOp gradients = loss.clone();
    gradients.setName(function + "_gradients");
    module.insert(std::next(Block::iterator(loss)), gradients);
    flattenForDifferentiation(gradients, recomputeReversible);
    auto ret =
        cast<func::ReturnOp>(gradients.getBody().front().getTerminator());
    Value lossValue = ret.getOperand(0);
    SmallVector<Value> state(ret.getOperands().drop_front());
    FailureOr<ParameterGradients> params = differentiate(gradients, lossValue);
    if (failed(params))
      return failure();
    // The forward's reversible blocks, once their rules have recomputed
    // them, are flattened like every other block.
    flattenForDifferentiation(gradients, /*keepReversible=*/false);
    if (params->names.empty())
      return loss.emitOpError("has no attn.param that its loss depends on: "
                              "nothing to train");
    SmallVector<Value> results = {lossValue};
    llvm::append_range(results, params->gradients);
    llvm::append_range(results, state);
    OpBuilder b(ret);
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();
    gradients.setType(FunctionType::get(&getContext(),
                                        gradients.getArgumentTypes(),
                                        ValueRange(results).getTypes()));
    gradients.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
    gradients.setResultAttr(0, "lcc.name", b.getStringAttr("loss"));
    for (auto [i, name] : llvm::enumerate(params->names))
      gradients.setResultAttr(i + 1, "lcc.name", b.getStringAttr(name));
    for (unsigned i = 1; i < loss.getNumResults(); ++i)
      gradients.setResultAttr(params->names.size() + i, "lcc.name",
                              b.getStringAttr(stateName(loss, i)));
    // Once the gradients are returned: it replaces ops whose results
    // `params` holds.
    fuseRecomputedFeedForwards(gradients);
    return gradients;
  }

  /// The name of the loss function's result `i` (state): its lcc.name, or
  /// "result<i>".
  static std::string stateName(func::FuncOp loss, unsigned i) {
    if (auto name = loss.getResultAttrOfType<StringAttr>(i, "lcc.name"))
      return name.str();
    return "result" + std::to_string(i);
  }

  /// train_step: a copy of FUNC_gradients whose gradients feed the
  /// optimizer, returning the loss and the loss function's other results
  /// (`stateCount` of them).
  LogicalResult buildTrainStep(ModuleOp module, func::FuncOp gradientsFunc,
                               unsigned stateCount,
                               const OptimizerSettings &settings) {
    func::FuncOp trainStep = gradientsFunc.clone();
    trainStep.setName(kTrainStepName);
    module.insert(std::next(Block::iterator(gradientsFunc)), trainStep);
    auto ret =
        cast<func::ReturnOp>(trainStep.getBody().front().getTerminator());
    OpBuilder b(ret);
    Location where = ret.getLoc();
    Value lossValue = ret.getOperand(0);
    unsigned gradientCount = ret.getNumOperands() - 1 - stateCount;
    SmallVector<Value> gradients(
        ret.getOperands().drop_front().take_front(gradientCount));
    SmallVector<Value> results = {lossValue};
    llvm::append_range(results, ret.getOperands().take_back(stateCount));
    // Each gradient's parameter: the first attn.param of its name, as
    // differentiate() picked it; the names are the results' names.
    llvm::StringMap<Value> firstUse;
    for (ParamOp param : trainStep.getOps<ParamOp>())
      firstUse.try_emplace(param.getName(), param.getResult());
    ParameterGradients params;
    for (unsigned i = 1; i <= gradientCount; ++i) {
      auto name = gradientsFunc.getResultAttrOfType<StringAttr>(i, "lcc.name");
      params.names.push_back(name.str());
      params.values.push_back(firstUse.lookup(name));
    }
    auto hyper = HyperParameters::create(b, where, settings);
    Value scale;
    if (accumulateGradients) {
      addAccumulatedGradients(b, where, params.names, gradients);
      scale = hyperParameter(b, where, "gradient_scale", 1.0);
    }
    // Data parallelism: each rank's loss and gradients are of its share of
    // the batch; their mean over the ranks is the whole batch's (the loss
    // is a mean over rows). One rank computes the identity.
    averageOverRanks(b, where, results.front(), gradients, gradientBucketBytes);
    // Always there, so that clipping can be turned on at run time; off
    // (max_norm 0) it costs one read of the gradients for their norm.
    auto clip =
        ClipByGlobalNormOp::create(b, where, ValueRange(gradients).getTypes(),
                                   gradients, hyper.gradClip, scale);
    gradients.assign(clip.getClipped().begin(), clip.getClipped().end());
    appendOptimizer(b, where, params, gradients, settings, hyper,
                    unitIntervalParameters(trainStep));
    if (failed(appendSelfTrainedUpdates(b, trainStep, params,
                                        settings.centroidDecay)))
      return failure();
    returnLossAndState(trainStep, ret, results, gradientsFunc, gradientCount);
    return success();
  }

  /// Ends `step` (a copy of FUNC_gradients, `ret` its return) returning
  /// `results`: the loss, then the loss function's other results, named as
  /// FUNC_gradients names them after its `gradientCount` gradients.
  static void returnLossAndState(func::FuncOp step, func::ReturnOp ret,
                                 ArrayRef<Value> results,
                                 func::FuncOp gradientsFunc,
                                 unsigned gradientCount) {
    OpBuilder b(ret);
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();
    step.setType(FunctionType::get(step.getContext(), step.getArgumentTypes(),
                                   ValueRange(results).getTypes()));
    step.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
    for (unsigned i = 1; i < results.size(); ++i)
      step.setResultAttr(
          i, "lcc.name",
          gradientsFunc.getResultAttr(gradientCount + i, "lcc.name"));
  }

  /// accumulate_step: a copy of FUNC_gradients that adds each gradient to
  /// its sum over micro-batches and returns what train_step does (the loss
  /// and the loss function's other results).
  void buildAccumulateStep(ModuleOp module, func::FuncOp gradientsFunc,
                           unsigned stateCount) {
    func::FuncOp step = gradientsFunc.clone();
    step.setName(kAccumulateStepName);
    module.insert(std::next(Block::iterator(gradientsFunc)), step);
    auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
    OpBuilder b(ret);
    Location where = ret.getLoc();
    unsigned gradientCount = ret.getNumOperands() - 1 - stateCount;
    for (unsigned i = 1; i <= gradientCount; ++i) {
      Value gradient = ret.getOperand(i);
      StringRef name =
          gradientsFunc.getResultAttrOfType<StringAttr>(i, "lcc.name")
              .getValue();
      Value sum = readAccumulated(b, where, name, gradient.getType());
      AssignOp::create(b, where, accumulatedName(name),
                       arith::AddFOp::create(b, where, sum, gradient));
    }
    SmallVector<Value> results = {ret.getOperand(0)};
    llvm::append_range(results, ret.getOperands().take_back(stateCount));
    returnLossAndState(step, ret, results, gradientsFunc, gradientCount);
  }

  /// FUNC_gradients without its last `stateCount` results: it returns the
  /// loss and the gradients only.
  static void dropState(func::FuncOp gradients, unsigned stateCount) {
    if (stateCount == 0)
      return;
    auto ret =
        cast<func::ReturnOp>(gradients.getBody().front().getTerminator());
    SmallVector<Value> kept(ret.getOperands().drop_back(stateCount));
    SmallVector<DictionaryAttr> names;
    gradients.getAllResultAttrs(names);
    names.resize(kept.size());
    OpBuilder b(ret);
    func::ReturnOp::create(b, ret.getLoc(), kept);
    ret.erase();
    gradients.setType(FunctionType::get(gradients.getContext(),
                                        gradients.getArgumentTypes(),
                                        ValueRange(kept).getTypes()));
    gradients.setAllResultAttrs(names);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OptimizerSettings settings;
    FailureOr<func::FuncOp> loss, gradients;
    if (failed(checkOptions(module, settings)) ||
        failed(loss = findLoss(module)) ||
        failed(gradients = buildGradientsFunction(module, *loss)))
      return signalPassFailure();
    unsigned stateCount = loss->getNumResults() - 1;
    if (failed(buildTrainStep(module, *gradients, stateCount, settings)))
      return signalPassFailure();
    if (accumulateGradients)
      buildAccumulateStep(module, *gradients, stateCount);
    dropState(*gradients, stateCount);
    if (!emitGradients)
      gradients->erase();
  }
};

} // namespace
