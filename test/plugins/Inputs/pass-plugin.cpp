// A plugin whose registration leaves its own code in lcc's registries until
// the process exits (a pass constructor in MLIR's pass registry, an
// attention form's functions in lcc's), built without -Wl,-z,nodelete and
// with hidden symbols (so that glibc has no unique symbol to keep it mapped
// for): unloaded before those registries were destroyed, lcc crashed at
// exit after writing its output.
// -DMESSAGE="..." makes its registration fail with that text instead;
// -DFLAGGED gives its form a flag of its own, which lcc refuses (its flags
// were made before the plugin loaded). With TEST_PLUGIN_BREAK_IR set in the
// environment, its form's pass leaves IR that does not verify (a block
// without its terminator), as a broken pass would.
#include "passes/AttentionForms.h"
#include "passes/Plugin.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

#include <cstdlib>

namespace {

#ifdef FLAGGED
constexpr lcc::IntegerKnob kNothingWidth = {
    "nothing-width", "width", 1, 1, 8, false, "Width of nothing (test)"};
#endif

struct NothingPass
    : mlir::PassWrapper<NothingPass, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NothingPass)
  llvm::StringRef getArgument() const final { return "test-plugin-nothing"; }
  void runOnOperation() final {
    if (!std::getenv("TEST_PLUGIN_BREAK_IR"))
      return;
    getOperation().walk([](mlir::Operation *op) {
      if (op->hasTrait<mlir::OpTrait::IsTerminator>()) {
        op->erase();
        return mlir::WalkResult::interrupt();
      }
      return mlir::WalkResult::advance();
    });
  }
};

bool registerPlugin(std::string &error) {
#ifdef MESSAGE
  error = MESSAGE;
  return false;
#else
  mlir::registerPass([] { return std::make_unique<NothingPass>(); });
  lcc::AttentionFormDefinition form;
  form.name = "nothing";
  form.summary = "a form that rewrites nothing (test plugin)";
  form.addRewritePasses = [](mlir::OpPassManager &pm,
                             const lcc::AttentionFormOptions &,
                             llvm::raw_ostream &) {
    pm.addPass(std::make_unique<NothingPass>());
    return mlir::success();
  };
  form.populateLoweringPatterns = [](mlir::RewritePatternSet &,
                                     lcc::AttentionTiling) {};
#ifdef FLAGGED
  form.takesFormOptions = false;
  form.flags = {kNothingWidth};
#endif
  return lcc::registerAttentionForm(std::move(form), error);
#endif
}

} // namespace

LCC_PLUGIN_EXPORT lcc::PluginInfo lccGetPluginInfo() {
  return {LCC_PLUGIN_API_VERSION, LLVM_VERSION_STRING, "pass-plugin",
          registerPlugin};
}
