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

#include "passes/DecodeStep.h"
#include "passes/KeySelection.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"

#include "llvm/Support/CommandLine.h"

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace lcc {

/// A flag an attention form declares, one knob: lcc's `--lsh-bucket-size`,
/// the lcc-attention-forms option and attn-select-form's of that name.
class AttentionFormFlag {
public:
  AttentionFormFlag(const IntegerKnob &knob) : integer(&knob) {}
  AttentionFormFlag(const ChoiceKnob &knob) : choice(&knob) {}

  /// "lsh-bucket-size".
  llvm::StringRef name() const;
  /// One line for --help, with the default.
  llvm::StringRef help() const;
  /// What --help shows for the value: "N", "plain|factorized|auto".
  std::string valueName() const;
  /// The value when the flag is not given, as text.
  std::string defaultText() const;
  /// Empty when `text` is a value of the flag; otherwise the error, naming
  /// the flag as `spelledAs` ("--lsh-hashes" or "lsh-hashes").
  std::string check(llvm::StringRef text, llvm::StringRef spelledAs) const;

private:
  const IntegerKnob *integer = nullptr;
  const ChoiceKnob *choice = nullptr;
};

/// What the attention-forms stage builds: lcc's --attention flags.
struct AttentionFormOptions {
  /// "keep" (as written), "auto" (attn-select-form) or a registered form.
  std::string attention = "keep";
  /// The first seed of the forms that draw random numbers (LSH's rotations,
  /// routed attention's first centroids); op i gets seed + i.
  int64_t seed = knobs::kSeed.defaultValue;
  /// Under "auto": bytes an attention may use (0: no limit), and the forms
  /// it may choose.
  int64_t memoryBudget = knobs::kMemoryBudget.defaultValue;
  std::vector<std::string> autoForms = {"lsh"};
  /// The options of a form without flags of its own (a plugin's), in
  /// MLIR's pass-option syntax: "window=128 look-back=1".
  std::string formOptions;
  /// The flags of the forms (AttentionFormDefinition::flags) that were
  /// given, by name: "lsh-bucket-size" -> "32", each checked.
  std::map<std::string, std::string> formFlags;

  /// The value of a form's flag: as given, or its default.
  int64_t get(const IntegerKnob &knob) const;
  llvm::StringRef get(const ChoiceKnob &knob) const;
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
  /// built-in forms take flags of their own instead and refuse them.
  bool takesFormOptions = true;
  /// The flags that configure it (a built-in form's: lcc makes its flags
  /// before it loads plugins, so a plugin's form takes formOptions).
  std::vector<AttentionFormFlag> flags;
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
  /// Run by attn-lower-to-linalg on its module before the patterns (null:
  /// nothing to check): an error on an op of the form that its patterns
  /// cannot lower, said once (an error inside a pattern is repeated by
  /// every retry of the greedy driver).
  std::function<mlir::LogicalResult(mlir::Operation *root)> checkLowering;
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
  /// The form's op ("attn.lsh_attention"), which the hooks below take;
  /// needed when one of them is given.
  std::string opName;
  /// For `lcc --emit=attention-map --input` (null: the form's blocks are
  /// known when compiling, or not drawn): what builds at `b`'s insertion
  /// point, after `op`, what decides the keys its queries score, which
  /// depend on the input (failure, and `whyNot`, where it cannot).
  std::function<mlir::FailureOr<KeySelectionProbe>(
      mlir::OpBuilder &b, mlir::Operation *op, std::string &whyNot)>
      buildKeySelectionProbe;
  /// For `lcc --decode` (null: the form has no cached form; both or
  /// neither, DecodeStep.h): what writes `op`'s caches in prefill, and `op`
  /// at one position of the decode step, as the form's forward gives that
  /// position.
  std::function<DecodeCacheFill> fillDecodeCaches;
  std::function<DecodeStepBuild> buildDecodeStep;
};

/// Adds `form` to the registry; false (and `error` says why) for a bad
/// or already registered name, a definition missing its rewrite or
/// lowering, or flags that another form declares, that come with
/// takesFormOptions or that come after the tools made their flags.
bool registerAttentionForm(AttentionFormDefinition form, std::string &error);

/// registerAttentionForm for a definition that cannot be wrong (a built-in
/// one): a failure is a bug in lcc and aborts.
void registerAttentionFormOrDie(AttentionFormDefinition form);

/// The form registered as `name`, or null.
const AttentionFormDefinition *lookupAttentionForm(llvm::StringRef name);

/// The form that draws the keys of `op` for an input (its
/// buildKeySelectionProbe), or null.
const AttentionFormDefinition *lookupKeySelectionForm(mlir::Operation *op);

/// The form whose cached form decodes `op` (its buildDecodeStep), or null.
const AttentionFormDefinition *lookupDecodeForm(mlir::Operation *op);

/// Every registered form, in registration order.
std::vector<const AttentionFormDefinition *> registeredAttentionForms();

/// The forms `names` asks --attention=auto to choose among, each
/// registered with a cost estimate; failure, and `errors` names the first
/// that is not such a form and the ones that are.
mlir::FailureOr<std::vector<const AttentionFormDefinition *>>
lookupAutoForms(llvm::ArrayRef<std::string> names, llvm::raw_ostream &errors);

/// The flags of every registered form, in registration order. A tool
/// makes its flags or options of them; forms registered later may declare
/// none.
std::vector<AttentionFormFlag> registeredFormFlags();

/// Sets `options.formFlags[name]` to `text`, or returns the error (checked
/// as AttentionFormFlag::check, naming the flag `prefix` + its name).
std::string setFormFlag(AttentionFormOptions &options,
                        const AttentionFormFlag &flag, llvm::StringRef text,
                        llvm::StringRef prefix);

/// The registered forms' flags as options of a pass or a pass pipeline
/// (`Parent`: a Pass or PassOptions, `Option` its option of strings), named
/// as lcc's flags, with their help and defaults.
template <typename Parent, typename Option>
class FormFlagOptions {
public:
  explicit FormFlagOptions(Parent &parent) {
    for (const AttentionFormFlag &flag : registeredFormFlags()) {
      flags.push_back(flag);
      options.emplace_back(parent, flag.name(), llvm::cl::desc(flag.help()),
                           llvm::cl::init(flag.defaultText()));
    }
  }

  /// Gives the options the values `forms` was given.
  void setFrom(const AttentionFormOptions &forms) {
    for (size_t i = 0; i < flags.size(); ++i)
      if (auto given = forms.formFlags.find(flags[i].name().str());
          given != forms.formFlags.end())
        options[i] = given->second;
  }

  /// Sets the options given into `forms`, or returns the first error.
  std::string setInto(AttentionFormOptions &forms) const {
    for (size_t i = 0; i < flags.size(); ++i)
      if (options[i].hasValue())
        if (std::string problem =
                setFormFlag(forms, flags[i], options[i].getValue(), "");
            !problem.empty())
          return problem;
    return "";
  }

private:
  std::vector<AttentionFormFlag> flags;
  /// A deque: an option is registered with its parent by address.
  std::deque<Option> options;
};

/// attn-select-form configured as `options` say (--attention=auto).
std::unique_ptr<mlir::Pass> createSelectForm(const AttentionFormOptions &options);

/// "'dense', 'sparse', 'lsh', ...": the names --attention accepts.
std::string attentionFormNames();

/// Registers the forms lcc has built in (forms/BuiltinForms.def); once
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

} // namespace lcc

#endif // LCC_PASSES_ATTENTIONFORMS_H
