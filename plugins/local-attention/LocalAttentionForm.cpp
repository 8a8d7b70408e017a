//===- LocalAttentionForm.cpp - the "local" form, registered with lcc -----===//
//
// Everything lcc needs of the form in one definition: its dialect and the
// interfaces its op answers (LocalAttentionInterfaces.cpp), its rewrite (the
// local-dense-to-local pass), its lowering (forward and backward), and the
// cost attn-select-form weighs (`--attention=auto --auto-forms=local`).
//
//===----------------------------------------------------------------------===//

#include "DenseToLocal.h"
#include "LocalAttention.h"

#include "passes/AttentionForms.h"
#include "passes/Plugin.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace local;

namespace {

/// The form's options as --attention-options gives them, parsed by the
/// rewrite pass itself, so both read them alike.
FailureOr<DenseToLocalPass> parseOptions(const lcc::AttentionFormOptions &o,
                                         std::string &error) {
  DenseToLocalPass pass;
  if (failed(pass.initializeOptions(o.formOptions, [&](const Twine &message) {
        error = message.str();
        return failure();
      }))) {
    if (error.empty())
      error = "invalid local attention options '" + o.formOptions + "'";
    return failure();
  }
  return pass;
}

/// FLOPs of q·k and p·v over the keys a query's windows hold.
FailureOr<lcc::AttentionCost> estimateLocal(lcc::attn::AttentionOp op,
                                            const lcc::AttentionFormOptions &o,
                                            std::string &whyNot) {
  whyNot = whyNotLocal(op);
  if (!whyNot.empty())
    return failure();
  FailureOr<DenseToLocalPass> options = parseOptions(o, whyNot);
  if (failed(options))
    return failure();
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  auto v = cast<RankedTensorType>(op.getValue().getType());
  double b = q.getDimSize(0), h = q.getDimSize(1), seq = q.getDimSize(2),
         d = q.getDimSize(3), dv = v.getDimSize(3);
  int64_t windows =
      options->lookBackward + 1 + (op.getCausal() ? 0 : options->lookForward);
  double keys = std::min<double>(seq, windows * options->window);
  lcc::AttentionCost cost = lcc::denseAttentionCost(op);
  cost.flops = 2 * b * h * seq * keys * (d + dv) * (op.getCausal() ? 0.5 : 1);
  return cost;
}

} // namespace

bool local::registerLocalAttention(std::string &error) {
  PassRegistration<DenseToLocalPass>();
  lcc::AttentionFormDefinition form;
  form.name = "local";
  form.title = "local attention";
  form.summary = "windowed local attention (plugin; --attention-options="
                 "\"window=N look-backward=N look-forward=N\")";
  form.registerDialects = [](DialectRegistry &registry) {
    registry.insert<LocalDialect>();
    registerLocalAttentionInterfaces(registry);
  };
  form.addRewritePasses = lcc::rewriteByPass("local-dense-to-local");
  form.populateLoweringPatterns = populateLocalAttentionLoweringPatterns;
  form.estimateCost = estimateLocal;
  form.rewrite = [](RewriterBase &rewriter, lcc::attn::AttentionOp op,
                    const lcc::AttentionFormOptions &o, int64_t) {
    std::string error;
    FailureOr<DenseToLocalPass> options = parseOptions(o, error);
    if (failed(options)) // estimateLocal parsed the same options
      llvm::report_fatal_error(llvm::StringRef(error));
    AttentionOp local = rewriteToLocal(rewriter, op, *options);
    return llvm::formatv("local attention (window {0}, {1} back, {2} ahead)",
                         local.getWindow(), local.getLookBackward(),
                         local.getLookForward())
        .str();
  };
  return lcc::registerAttentionForm(std::move(form), error);
}

LCC_PLUGIN_EXPORT lcc::PluginInfo lccGetPluginInfo() {
  return {LCC_PLUGIN_API_VERSION, LLVM_VERSION_STRING, "local-attention",
          local::registerLocalAttention};
}
