//===- LowerToLinalg.cpp - attn ops to linalg on tensors ------------------===//
//
// The attn-lower-to-linalg pass: parameters become function arguments, then
// every attn op is rewritten to linalg/tensor/arith/math/scf on tensors by
// the patterns of its family (Lowerings.h). Dense and sparse attention take
// the tiled online-softmax (flash) form, so that no seq x seq tensor is
// ever built.
//
//===----------------------------------------------------------------------===//

#include "passes/AttentionForms.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/RegionArithmetic.h"
#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/Passes.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

namespace lcc {
#define GEN_PASS_DEF_LOWERTOLINALG
#include "passes/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// How a fresh weights file fills a parameter, from the ops that use it:
/// layer-norm gains start at one, biases, shifts and adaptive spans (z) at
/// zero, everything else N(0, 1/fan_in) with fan_in the first dimension of
/// a matrix. Optimizer state starts at zero, or at its `initial` value.
NamedAttrList parameterInit(ParamOp param) {
  MLIRContext *context = param.getContext();
  StringRef init = "normal";
  for (OpOperand &use : param.getResult().getUses()) {
    Operation *user = use.getOwner();
    unsigned index = use.getOperandNumber();
    if (auto norm = dyn_cast<LayerNormOp>(user))
      init = &use == &norm.getGammaMutable() ? "ones" : "zeros";
    else if (isa<LinearOp>(user) && index == 2)
      init = "zeros";
    else if (auto span = dyn_cast<AdaptiveSpanAttentionOp>(user);
             span && &use == &span.getZMutable())
      init = "zeros"; // As facebookresearch/adaptive-span starts: the ramp.
    else if (auto ff = dyn_cast<FeedForwardOp>(user);
             ff && (&use == &ff.getUpBiasMutable() ||
                    &use == &ff.getDownBiasMutable()))
      init = "zeros";
  }
  if (param.getState())
    init = param.getInitial() ? "constant" : "zeros";
  auto type = cast<RankedTensorType>(param.getType());
  double scale = type.getRank() >= 2
                     ? 1.0 / std::sqrt(static_cast<double>(type.getDimSize(0)))
                     : 0.02;
  NamedAttrList attrs;
  attrs.append("attn.param", param.getNameAttr());
  attrs.append("attn.param_init", StringAttr::get(context, init));
  attrs.append("attn.param_scale",
               FloatAttr::get(Float32Type::get(context), scale));
  if (param.getState())
    attrs.append("attn.param_state", UnitAttr::get(context));
  if (FloatAttr initial = param.getInitialAttr())
    attrs.append("attn.param_value", initial);
  return attrs;
}

/// Marks function arguments used as token ids or labels with the range of
/// the table they index (`attn.valid_range`), so the runtime rejects an
/// out-of-range id instead of the kernels clamping it silently.
void recordIndexRanges(func::FuncOp func) {
  auto mark = [&](Value ids, int64_t size) {
    auto arg = dyn_cast<BlockArgument>(ids);
    if (!arg || arg.getOwner()->getParentOp() != func.getOperation())
      return;
    func.setArgAttr(arg.getArgNumber(), "attn.valid_range",
                    DenseI64ArrayAttr::get(func.getContext(), {0, size - 1}));
  };
  func.walk([&](EmbeddingOp op) {
    mark(op.getTokens(), tensorType(op.getTable()).getDimSize(0));
  });
  func.walk([&](SoftmaxCrossEntropyOp op) {
    mark(op.getLabels(), tensorType(op.getLogits()).getShape().back());
  });
}

/// Turns each attn.param into a function argument tagged with its name; all
/// params of one name in a function share one argument.
LogicalResult paramsToArguments(func::FuncOp func) {
  llvm::StringMap<BlockArgument> arguments;
  SmallVector<ParamOp> params;
  func.walk([&](ParamOp op) { params.push_back(op); });
  for (ParamOp param : params) {
    auto [it, inserted] = arguments.try_emplace(param.getName());
    if (inserted) {
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(
              index, param.getType(),
              parameterInit(param).getDictionary(func.getContext()),
              param.getLoc())))
        return param.emitOpError("could not become a function argument");
      it->second = func.getArgument(index);
    } else if (it->second.getType() != param.getType()) {
      return param.emitOpError()
             << "parameter '" << param.getName() << "' has type "
             << param.getType() << " here but " << it->second.getType()
             << " elsewhere";
    }
    param.getResult().replaceAllUsesWith(it->second);
    param.erase();
  }
  return success();
}

/// Turns each attn.assign into a result of the function tagged with the
/// parameter it writes (`attn.assigns`): the host program copies it into
/// the parameter's buffer when the function returns, after every read of
/// the old value.
LogicalResult assignsToResults(func::FuncOp func) {
  SmallVector<AssignOp> assigns;
  func.walk([&](AssignOp op) { assigns.push_back(op); });
  if (assigns.empty())
    return success();
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("writes parameters but has more than one block");
  llvm::StringSet<> written, read;
  func.walk([&](ParamOp op) { read.insert(op.getName()); });
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  unsigned first = results.size();
  for (AssignOp assign : assigns) {
    if (assign->getBlock() != &func.getBody().front())
      return assign.emitOpError("must be in the function's body, not a "
                                "nested region");
    if (!written.insert(assign.getName()).second)
      return assign.emitOpError() << "writes parameter '" << assign.getName()
                                  << "' a second time in one function";
    // State the function only writes (what a decode step will read) is
    // still an argument: its buffer is the one written.
    if (!read.contains(assign.getName())) {
      OpBuilder entry = OpBuilder::atBlockBegin(&func.getBody().front());
      ParamOp::create(entry, assign.getLoc(), assign.getValue().getType(),
                      assign.getName(), /*state=*/true, FloatAttr());
    }
    results.push_back(assign.getValue());
  }
  OpBuilder b(ret);
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  SmallVector<DictionaryAttr> resultAttrs;
  func.getAllResultAttrs(resultAttrs);
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  resultAttrs.resize(results.size(), DictionaryAttr::get(func.getContext()));
  func.setAllResultAttrs(resultAttrs);
  for (auto [i, assign] : llvm::enumerate(assigns)) {
    func.setResultAttr(first + i, "attn.assigns", assign.getNameAttr());
    assign.erase();
  }
  return success();
}

} // namespace

StringRef lcc::halfPrecisionOf(Operation *op) {
  for (Type type :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (tensor && tensor.getElementType().isF16())
      return "f16";
    if (tensor && tensor.getElementType().isBF16())
      return "bf16";
  }
  return "";
}

LogicalResult lcc::checkPairedSize(Operation *op, StringRef multiplies,
                                   StringRef name, int64_t size) {
  if (size % 2 == 0)
    return success();
  return op->emitOpError() << halfPrecisionOf(op) << " " << multiplies
                           << " in pairs; " << name << " " << size << " is odd";
}

bool lcc::computesInHalfPrecision(Operation *op) {
  return isa<AttentionOp, AttentionBackwardOp, SparseAttentionOp,
             AdaptiveSpanAttentionOp, AdaptiveSpanAttentionBackwardOp,
             RelativeAttentionOp, RelativeAttentionBackwardOp, LSHAttentionOp,
             LSHAttentionBackwardOp, RoutedAttentionOp,
             RoutedAttentionBackwardOp>(op);
}

namespace {

/// bf16 and f16 are computed by the flash form (attention, sparse,
/// adaptive-span and relative attention and the backwards), LSH and routed
/// attention: products on pairs of the half type, softmax in f32; every
/// other op's lowering computes in f32. One error naming the first op
/// outside that, or whose paired dimensions are odd (the LSH and routed
/// forms check their own sizes, in their checkLowering).
LogicalResult checkHalfPrecision(ModuleOp module, AttentionTiling tiling) {
  WalkResult walk = module.walk([&](Operation *op) {
    StringRef dialect = op->getName().getDialectNamespace();
    if (dialect != AttnDialect::getDialectNamespace() &&
        !isAttentionFormDialect(dialect))
      return WalkResult::advance();
    std::string half = halfPrecisionOf(op).str();
    if (half.empty())
      return WalkResult::advance();
    auto problem = [&]() -> std::string {
      if (!computesInHalfPrecision(op))
        return half + " is computed by attn.attention, attn.sparse_attention, "
                      "attn.adaptive_span_attention, attn.relative_attention, "
                      "attn.lsh_attention and attn.routed_attention and their "
                      "backward ops (dense, masked, sparse, adaptive-span, "
                      "relative, LSH and routed forms) only; give this op f32 "
                      "tensors";
      int64_t headDim = tensorType(op->getOperand(0)).getDimSize(3);
      if (headDim % 2 != 0)
        return half + " attention multiplies head_dim in pairs; head_dim " +
               std::to_string(headDim) + " is odd";
      if (isa<LSHAttentionOp, LSHAttentionBackwardOp, RoutedAttentionOp,
              RoutedAttentionBackwardOp>(op))
        return "";
      if (tiling.keyTile % 2 != 0)
        return half + " attention multiplies keys in pairs; key-tile " +
               std::to_string(tiling.keyTile) + " is odd";
      if (!isa<AttentionBackwardOp, AdaptiveSpanAttentionBackwardOp,
               RelativeAttentionBackwardOp>(op))
        return "";
      // The backward also sums over queries (dk, dv) and over the values'
      // head_dim (do·vᵀ).
      if (tiling.queryTile % 2 != 0)
        return half +
               " attention's backward multiplies queries in pairs; "
               "query-tile " +
               std::to_string(tiling.queryTile) + " is odd";
      // Query, key, value: the first three operands of every backward.
      int64_t valueDim = tensorType(op->getOperand(2)).getDimSize(3);
      if (valueDim % 2 != 0)
        return half +
               " attention's backward multiplies the values' "
               "head_dim in pairs; it is " +
               std::to_string(valueDim) + ", odd";
      return "";
    }();
    if (problem.empty())
      return WalkResult::advance();
    op->emitOpError() << problem;
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

struct LowerToLinalgPass : lcc::impl::LowerToLinalgBase<LowerToLinalgPass> {
  using LowerToLinalgBase::LowerToLinalgBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkOptionRanges(
            module, getArgument(),
            {{knobs::kQueryTile, queryTile}, {knobs::kKeyTile, keyTile}})))
      return signalPassFailure();
    // 0 picks the tiles of no particular target.
    AttentionTiling tiling = AttentionTiling().withGiven(queryTile, keyTile);
    if (failed(checkHalfPrecision(module, tiling)))
      return signalPassFailure();
    // What a pattern cannot lower is said once, here: an error inside a
    // pattern is repeated by every retry of the greedy driver.
    for (const AttentionFormDefinition *form : registeredAttentionForms())
      if (form->checkLowering && failed(form->checkLowering(module)))
        return signalPassFailure();
    // A mask or score region's arithmetic is defined for every input
    // before any lowering copies or evaluates it (RegionArithmetic.h).
    module.walk([](Operation *op) {
      if (isa<AttentionOp, AttentionBackwardOp>(op))
        for (Region &region : op->getRegions())
          defineRegionArithmetic(region);
    });
    for (auto func : module.getOps<func::FuncOp>()) {
      recordIndexRanges(func);
      if (failed(assignsToResults(func)) || failed(paramsToArguments(func)))
        return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateLowerToLinalgPatterns(patterns, tiling);
    // The canonicalizer after it simplifies the regions (see
    // FuseElementwise).
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(module, std::move(patterns), config)))
      return signalPassFailure();
    // What is left has no lowering: say which op, rather than emit
    // half-lowered IR.
    WalkResult remaining = module.walk([&](Operation *op) {
      StringRef dialect = op->getName().getDialectNamespace();
      // Collectives run on the host, between dispatches: they stay.
      if ((dialect != AttnDialect::getDialectNamespace() &&
           !isAttentionFormDialect(dialect)) ||
          op->hasTrait<Collective>())
        return WalkResult::advance();
      op->emitOpError("has no lowering to linalg yet");
      return WalkResult::interrupt();
    });
    if (remaining.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void lcc::populateLowerToLinalgPatterns(RewritePatternSet &patterns,
                                        AttentionTiling tiling) {
  populateModelOpLoweringPatterns(patterns);
  populateTrainingOpLoweringPatterns(patterns);
  populateMergePartialsLoweringPatterns(patterns);
  // The attention ops a model writes directly (no form rewrites into them).
  populateRelativeAttentionLoweringPatterns(patterns, tiling);
  populateRelativeAttentionBackwardLoweringPatterns(patterns, tiling);
  populateAdaptiveSpanAttentionLoweringPatterns(patterns, tiling);
  populateAdaptiveSpanAttentionBackwardLoweringPatterns(patterns, tiling);
  // Every form's ops, forward and backward, as the form registered them.
  for (const AttentionFormDefinition *form : registeredAttentionForms())
    form->populateLoweringPatterns(patterns, tiling);
}
