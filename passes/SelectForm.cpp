//===- SelectForm.cpp - the --attention=auto policy -----------------------===//
//
// Chooses, per op, dense attention or the cheapest registered form that
// applies, from the forms' own FLOP and byte estimates; the policy is stated
// in Passes.td and every choice is reported as a remark.
//
//===----------------------------------------------------------------------===//

#include "passes/AttentionForms.h"
#include "passes/LowerToLinalg/MaskTiles.h"
#include "passes/Passes.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/FormatVariadic.h"

namespace lcc {
#define GEN_PASS_DEF_SELECTFORM
#include "passes/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

/// The tiles a mask's cost is counted in: flash attention's with CUDA a
/// target, and close to the CPU's, whose exact size the later lowering
/// picks for the CPU it compiles for.
constexpr int64_t kMaskCostTile = 64;

std::string gigas(double x) { return llvm::formatv("{0:F2}", x / 1e9).str(); }

StringRef titleOf(const AttentionFormDefinition &form) {
  return form.title.empty() ? StringRef(form.name) : StringRef(form.title);
}

struct SelectFormPass : lcc::impl::SelectFormBase<SelectFormPass> {
  using SelectFormBase::SelectFormBase;
  /// A copy makes its own form flags (clone copies their values).
  SelectFormPass(const SelectFormPass &other) : SelectFormBase(other) {}
  explicit SelectFormPass(const AttentionFormOptions &options) {
    forms = options.autoForms;
    memoryBudget = options.memoryBudget;
    seed = options.seed;
    formOptions = options.formOptions;
    formFlags.setFrom(options);
  }

  /// The registered forms' flags, which configure a chosen form.
  FormFlagOptions<Pass, Pass::Option<std::string>> formFlags{*this};

  /// A chosen form's ops may be of a plugin's dialect.
  void getDependentDialects(DialectRegistry &registry) const override {
    SelectFormBase::getDependentDialects(registry);
    registerAttentionFormDialects(registry);
  }

  void runOnOperation() override {
    if (failed(checkOptionRanges(getOperation(), "attn-select-form",
                                 {{knobs::kMemoryBudget, memoryBudget},
                                  {knobs::kSeed, seed}})))
      return signalPassFailure();
    AttentionFormOptions options;
    if (std::string problem = formFlags.setInto(options); !problem.empty()) {
      getOperation().emitError() << "attn-select-form: " << problem;
      return signalPassFailure();
    }
    FailureOr<std::vector<const AttentionFormDefinition *>> candidates =
        candidateForms();
    if (failed(candidates))
      return signalPassFailure();
    options.memoryBudget = memoryBudget;
    options.formOptions = formOptions;
    IRRewriter rewriter(&getContext());
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    int64_t next = seed;
    for (AttentionOp op : ops)
      if (select(rewriter, op, *candidates, options, next))
        ++next;
  }

  /// The forms of the `forms` option, each registered with an estimate.
  FailureOr<std::vector<const AttentionFormDefinition *>> candidateForms() {
    std::vector<std::string> names(forms.begin(), forms.end());
    if (names.empty())
      names.push_back("lsh");
    std::string error;
    llvm::raw_string_ostream errors(error);
    FailureOr<std::vector<const AttentionFormDefinition *>> found =
        lookupAutoForms(names, errors);
    if (failed(found))
      getOperation().emitError() << "attn-select-form: " << error;
    return found;
  }

  /// The cost of `op`'s dense attention under its mask, `dense` for all
  /// its scores: the (query, key) tile pairs its block table visits, at
  /// kMaskCostTile x kMaskCostTile tiles, as text for a remark.
  static std::string maskedCost(AttentionOp op, AttentionCost dense) {
    std::string all =
        gigas(dense.flops) + " GFLOP, " + gigas(dense.bytes) + " GB";
    Region *mask = op.getMaskRegion();
    if (!mask)
      return all;
    auto q = cast<RankedTensorType>(op.getQuery().getType());
    auto k = cast<RankedTensorType>(op.getKey().getType());
    auto v = cast<RankedTensorType>(op.getValue().getType());
    auto tiling =
        lowering::MaskTiling::of(op.getQuery(), op.getKey(), kMaskCostTile,
                                 kMaskCostTile, op.getCausal());
    std::string why;
    FailureOr<lowering::MaskTileTable> table =
        lowering::computeMaskTileTable(mask, tiling, why);
    if (failed(table))
      return all + ", every tile: " + why;
    double entries = static_cast<double>(table->visible.size());
    double visited = entries - static_cast<double>(table->hiddenTiles);
    // Every score of a visited tile pair is computed, masked or not.
    double flops = 2.0 * q.getDimSize(0) * q.getDimSize(1) * q.getDimSize(2) *
                   k.getDimSize(2) * (q.getDimSize(3) + v.getDimSize(3)) *
                   visited / entries;
    return gigas(flops) + " GFLOP for the " +
           std::to_string(static_cast<int64_t>(visited)) + " of " +
           std::to_string(static_cast<int64_t>(entries)) + " " +
           std::to_string(kMaskCostTile) + "x" + std::to_string(kMaskCostTile) +
           " tile pairs its mask visits, " + gigas(dense.bytes) + " GB";
  }

  /// Rewrites `op` to the cheapest applicable candidate, or keeps it dense;
  /// true if it was rewritten.
  bool select(IRRewriter &rewriter, AttentionOp op,
              ArrayRef<const AttentionFormDefinition *> candidates,
              const AttentionFormOptions &options, int64_t opSeed) {
    auto q = cast<RankedTensorType>(op.getQuery().getType());
    if (!q.hasStaticShape() ||
        !cast<RankedTensorType>(op.getKey().getType()).hasStaticShape()) {
      op.emitRemark("'attn.attention' kept dense: dynamic shapes");
      return false;
    }
    AttentionCost dense = denseAttentionCost(op);
    std::string keptDense = "'attn.attention' kept dense (" +
                            gigas(dense.flops) + " GFLOP, " +
                            gigas(dense.bytes) + " GB): ";
    if (op.hasMaskOrScore()) {
      op.emitRemark("'attn.attention' kept dense (" + maskedCost(op, dense) +
                    "): its mask or score region is honoured by dense "
                    "(flash) attention only");
      return false;
    }
    const AttentionFormDefinition *best = nullptr;
    AttentionCost bestCost{};
    SmallVector<std::string> reasons;
    for (const AttentionFormDefinition *form : candidates) {
      std::string whyNot;
      FailureOr<AttentionCost> cost = form->estimateCost(op, options, whyNot);
      std::string title = titleOf(*form).str();
      if (failed(cost)) {
        reasons.push_back(whyNot);
      } else if (cost->flops >= dense.flops) {
        reasons.push_back(title + " would take " + gigas(cost->flops) +
                          " GFLOP");
      } else if (options.memoryBudget > 0 &&
                 cost->bytes > options.memoryBudget) {
        reasons.push_back(title + " would need " + gigas(cost->bytes) +
                          " GB, over the memory budget of " +
                          gigas(static_cast<double>(options.memoryBudget)) +
                          " GB");
      } else if (!best || cost->flops < bestCost.flops) {
        best = form;
        bestCost = *cost;
      }
    }
    if (!best) {
      // One candidate (the default): its reason alone, as it has always read.
      std::string why = reasons.size() == 1 ? reasons.front() : "";
      if (reasons.size() > 1)
        for (auto [form, reason] : llvm::zip(candidates, reasons))
          why += (why.empty() ? "" : "; ") + form->name + ": " + reason;
      op.emitRemark(keptDense + why);
      return false;
    }
    InFlightDiagnostic remark = op.emitRemark();
    std::string became = best->rewrite(rewriter, op, options, opSeed);
    remark << "'attn.attention' rewritten to " << became << ": "
           << gigas(bestCost.flops) << " GFLOP and " << gigas(bestCost.bytes)
           << " GB against dense " << gigas(dense.flops) << " GFLOP";
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> lcc::createSelectForm(const AttentionFormOptions &options) {
  return std::make_unique<SelectFormPass>(options);
}
