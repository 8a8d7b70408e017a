//===- AttentionForms.h - the registry of attention forms -------*- C++ -*-===//
//
// An attention form (LSH, sparse, routed, or one a plugin adds) is an op, a
// rewrite from dense attention, a lowering and a cost estimate for
// `--attention=auto`, registered together under one name. `lcc
// --attention=NAME`, the lcc-attention-forms pipeline, attn-select-form and
// attn-lower-to-linalg find every form here, built in or loaded.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_ATTENTIONFORMS_H
#define LCC_PASSES_ATTENTIONFORMS_H

#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace lcc {

/// What the attention-forms stage builds: lcc's --attention flags.
struct AttentionFormOptions {
  /// "keep" (as written), "auto" (attn-select-form) or a registered form.
  std::string attention = "keep";
  /// The sparse attention to build for "sparse".
  SparseAttentionOptions sparse = {attn::SparsePattern::Strided,
                                   knobs::kSparseBlock.defaultValue,
                                   knobs::kSparseStride.defaultValue,
                                   knobs::kSparseSummary.defaultValue};
  /// The LSH attention to build for "lsh" (and for "auto").
  int64_t lshHashes = knobs::kLSHHashes.defaultValue;
  int64_t lshBucketSize = knobs::kLSHBucketSize.defaultValue;
  int64_t seed = knobs::kSeed.defaultValue;
  /// Its hashing: "plain", "factorized" or "auto" (see lshFactorizedHash).
  std::string lshHash = "auto";
  /// The routed attention to build for "routed" (0: default).
  int64_t routedClusters = knobs::kRoutedClusters.defaultValue;
  int64_t routedWindow = knobs::kRoutedWindow.defaultValue;
  /// Under "auto": bytes an attention may use (0: no limit), the shortest
  /// sequence LSH is considered for, and the forms it may choose.
  int64_t memoryBudget = knobs::kMemoryBudget.defaultValue;
  int64_t lshThreshold = knobs::kLSHThreshold.defaultValue;
  std::vector<std::string> autoForms = {"lsh"};
  /// The options of a form without lcc flags of its own (a plugin's), in
  /// MLIR's pass-option syntax: "window=128 look-back=1".
  std::string formOptions;
};

/// What one attention would cost in a form, as attn-select-form weighs it.
struct AttentionCost {
  double flops;
  double bytes;
};

/// One attention form, everything lcc needs of it in one place.
struct AttentionFormDefinition {
  /// `--attention=NAME`; lowercase letters, digits and '-'.
  std::string name;
  /// One line for --help and lcc-opt's option list.
  std::string summary;
  /// How remarks call it ("LSH"); empty: the name.
  std::string title;
  /// Whether options.formOptions (--attention-options) configure it. The
  /// built-in forms take lcc's own flags instead and refuse them.
  bool takesFormOptions = true;
  /// The dialects of the form's ops (null: attn's own).
  std::function<void(mlir::DialectRegistry &)> registerDialects;
  /// Adds the passes that rewrite dense attention into the form to `pm`,
  /// or writes why `options` describe none to `errors`.
  std::function<mlir::LogicalResult(mlir::OpPassManager &pm,
                                    const AttentionFormOptions &options,
                                    llvm::raw_ostream &errors)>
      addRewritePasses;
  /// Adds the patterns that lower the form's ops to linalg on tensors, its
  /// backward ops' included (attn-lower-to-linalg applies those of every
  /// form, with its tiling).
  std::function<void(mlir::RewritePatternSet &, AttentionTiling)>
      populateLoweringPatterns;
  /// For --attention=auto (null: auto never picks the form): the cost of
  /// `op` in this form, or failure and why the form does not apply.
  std::function<mlir::FailureOr<AttentionCost>(
      attn::AttentionOp op, const AttentionFormOptions &options,
      std::string &whyNot)>
      estimateCost;
  /// For --attention=auto: rewrites `op`, whose estimate applied, and says
  /// what it became ("LSH attention (4 hashes, bucket 64, seed 0)"); `seed`
  /// is the op's own (options.seed plus the ops rewritten before it).
  std::function<std::string(mlir::RewriterBase &rewriter, attn::AttentionOp op,
                            const AttentionFormOptions &options, int64_t seed)>
      rewrite;
};

/// Adds `form` to the registry; false (and `error` says why) for a bad
/// or already registered name or a definition missing its rewrite or
/// lowering.
bool registerAttentionForm(AttentionFormDefinition form, std::string &error);

/// registerAttentionForm for a definition that cannot be wrong (a built-in
/// one): a failure is a bug in lcc and aborts.
void registerAttentionFormOrDie(AttentionFormDefinition form);

/// The form registered as `name`, or null.
const AttentionFormDefinition *lookupAttentionForm(llvm::StringRef name);

/// Every registered form, in registration order.
std::vector<const AttentionFormDefinition *> registeredAttentionForms();

/// The forms `names` asks --attention=auto to choose among, each
/// registered with a cost estimate; failure, and `errors` names the first
/// that is not such a form and the ones that are.
mlir::FailureOr<std::vector<const AttentionFormDefinition *>>
lookupAutoForms(llvm::ArrayRef<std::string> names, llvm::raw_ostream &errors);

/// "'dense', 'sparse', 'lsh', ...": the names --attention accepts.
std::string attentionFormNames();

/// Registers the forms lcc has built in (dense, sparse, lsh, routed); once
/// only, however often it is called. A tool calls it at its start, before it
/// loads plugins (whose forms may not take a built-in name) and before any
/// pass or pipeline reads the registry: nothing registers them lazily.
void registerBuiltinAttentionForms();

/// Adds each registered form's dialects to `registry`.
void registerAttentionFormDialects(mlir::DialectRegistry &registry);

/// Whether `dialectNamespace` is the dialect of a registered form's op (a
/// plugin's; lcc's own forms are attn ops).
bool isAttentionFormDialect(llvm::StringRef dialectNamespace);

/// A rewrite that runs the registered pass `passArgument` with
/// options.formOptions as its options: the usual rewrite of a plugin form.
std::function<mlir::LogicalResult(
    mlir::OpPassManager &, const AttentionFormOptions &, llvm::raw_ostream &)>
rewriteByPass(std::string passArgument);

/// The FLOPs and bytes of `op` as dense (flash) attention: what every
/// form's estimate is weighed against.
AttentionCost denseAttentionCost(attn::AttentionOp op);

/// The built-in forms, each registered in the file of its rewrite.
void registerDenseAttentionForm();
void registerSparseAttentionForm();
void registerLSHAttentionForm();
void registerRoutedAttentionForm();

} // namespace lcc

#endif // LCC_PASSES_ATTENTIONFORMS_H
