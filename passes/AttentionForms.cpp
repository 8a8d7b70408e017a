//===- AttentionForms.cpp - the registry of attention forms ---------------===//

#include "passes/AttentionForms.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"

#include <deque>
#include <mutex>

using namespace mlir;
using namespace lcc;

namespace {

/// Registration happens while tools start and plugins load; lookups come
/// later. A deque keeps the definitions where they are as it grows.
struct FormRegistry {
  std::mutex mutex;
  std::deque<AttentionFormDefinition> forms;
  /// The namespaces the forms' registerDialects add, known at registration
  /// so that asking about an op's dialect costs no registry.
  std::vector<std::string> dialectNamespaces;
  /// Whether a tool has made its flags of the forms' (registeredFormFlags).
  bool flagsMade = false;
};

/// The dialects `form` registers, less the builtin one every registry has.
std::vector<std::string>
dialectNamespacesOf(const AttentionFormDefinition &form) {
  std::vector<std::string> names;
  if (!form.registerDialects)
    return names;
  DialectRegistry dialects, builtinOnly;
  form.registerDialects(dialects);
  for (StringRef name : dialects.getDialectNames())
    if (!llvm::is_contained(builtinOnly.getDialectNames(), name))
      names.push_back(name.str());
  return names;
}

FormRegistry &formRegistry() {
  static FormRegistry registry;
  return registry;
}

/// "keep" and "auto" are what --attention does besides picking a form.
bool isReservedName(StringRef name) { return name == "keep" || name == "auto"; }

bool isFormName(StringRef name) {
  return !name.empty() && llvm::all_of(name, [](char c) {
    return llvm::isLower(c) || llvm::isDigit(c) || c == '-';
  });
}

} // namespace

bool lcc::registerAttentionForm(AttentionFormDefinition form,
                                std::string &error) {
  if (!isFormName(form.name) || isReservedName(form.name)) {
    error = "attention form name '" + form.name +
            "' is not lowercase letters, digits and '-', or is reserved "
            "('keep', 'auto')";
    return false;
  }
  if (!form.addRewritePasses || !form.populateLoweringPatterns) {
    error = "attention form '" + form.name +
            "' has no rewrite or no lowering: a form needs both";
    return false;
  }
  if (static_cast<bool>(form.estimateCost) != static_cast<bool>(form.rewrite)) {
    error = "attention form '" + form.name +
            "' gives only one of the cost estimate and the rewrite of one "
            "op: --attention=auto needs both";
    return false;
  }
  if (form.opName.empty() && (form.buildKeySelectionProbe ||
                              form.fillDecodeCaches || form.buildDecodeStep)) {
    error = "attention form '" + form.name +
            "' gives the probe of its keys or its decode step but not its "
            "op's name, which they take";
    return false;
  }
  if (static_cast<bool>(form.fillDecodeCaches) !=
      static_cast<bool>(form.buildDecodeStep)) {
    error = "attention form '" + form.name +
            "' gives only one of what fills its decode caches and its "
            "decode step: --decode needs both";
    return false;
  }
  if (!form.flags.empty() && form.takesFormOptions) {
    error = "attention form '" + form.name +
            "' declares flags and takes --attention-options: a form takes "
            "one or the other";
    return false;
  }
  FormRegistry &registry = formRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (!form.flags.empty() && registry.flagsMade) {
    error = "attention form '" + form.name +
            "' declares flags, but the tool has made its flags already: a "
            "form a plugin adds takes --attention-options instead";
    return false;
  }
  for (const AttentionFormDefinition &known : registry.forms) {
    if (known.name == form.name) {
      error = "attention form '" + form.name + "' is registered twice";
      return false;
    }
    for (const AttentionFormFlag &flag : form.flags)
      for (const AttentionFormFlag &knownFlag : known.flags)
        if (flag.name() == knownFlag.name()) {
          error = ("attention form '" + form.name + "' declares the flag '" +
                   flag.name() + "' of form '" + known.name + "'")
                      .str();
          return false;
        }
  }
  for (std::string &name : dialectNamespacesOf(form))
    registry.dialectNamespaces.push_back(std::move(name));
  registry.forms.push_back(std::move(form));
  return true;
}

const AttentionFormDefinition *lcc::lookupAttentionForm(StringRef name) {
  FormRegistry &registry = formRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const AttentionFormDefinition &form : registry.forms)
    if (form.name == name)
      return &form;
  return nullptr;
}

/// The form named after `op`'s op that has `hook`, or null.
template <typename Hook>
static const AttentionFormDefinition *lookupFormWith(Operation *op,
                                                     Hook hook) {
  FormRegistry &registry = formRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const AttentionFormDefinition &form : registry.forms)
    if (form.*hook && form.opName == op->getName().getStringRef())
      return &form;
  return nullptr;
}

const AttentionFormDefinition *lcc::lookupKeySelectionForm(Operation *op) {
  return lookupFormWith(op, &AttentionFormDefinition::buildKeySelectionProbe);
}

const AttentionFormDefinition *lcc::lookupDecodeForm(Operation *op) {
  return lookupFormWith(op, &AttentionFormDefinition::buildDecodeStep);
}

std::vector<const AttentionFormDefinition *> lcc::registeredAttentionForms() {
  FormRegistry &registry = formRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::vector<const AttentionFormDefinition *> forms;
  for (const AttentionFormDefinition &form : registry.forms)
    forms.push_back(&form);
  return forms;
}

std::vector<AttentionFormFlag> lcc::registeredFormFlags() {
  FormRegistry &registry = formRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.flagsMade = true;
  std::vector<AttentionFormFlag> flags;
  for (const AttentionFormDefinition &form : registry.forms)
    llvm::append_range(flags, form.flags);
  return flags;
}

std::string lcc::setFormFlag(AttentionFormOptions &options,
                             const AttentionFormFlag &flag, StringRef text,
                             StringRef prefix) {
  std::string problem = flag.check(text, (prefix + flag.name()).str());
  if (problem.empty())
    options.formFlags[flag.name().str()] = text.str();
  return problem;
}

StringRef AttentionFormFlag::name() const {
  return integer ? integer->flag : choice->flag;
}

StringRef AttentionFormFlag::help() const {
  return integer ? integer->help : choice->help;
}

std::string AttentionFormFlag::valueName() const {
  return integer ? "N" : llvm::join(choice->choices, "|");
}

std::string AttentionFormFlag::defaultText() const {
  return integer ? std::to_string(integer->defaultValue)
                 : choice->defaultValue.str();
}

std::string AttentionFormFlag::check(StringRef text,
                                     StringRef spelledAs) const {
  if (choice)
    return checkKnob(*choice, spelledAs, text);
  int64_t value;
  if (text.getAsInteger(10, value))
    return ("expected an integer for " + spelledAs + ", got '" + text + "'")
        .str();
  return checkKnob(*integer, spelledAs, value);
}

int64_t AttentionFormOptions::get(const IntegerKnob &knob) const {
  auto given = formFlags.find(knob.flag.str());
  if (given == formFlags.end())
    return knob.defaultValue;
  int64_t value;
  if (StringRef(given->second).getAsInteger(10, value))
    llvm::report_fatal_error("flag --" + knob.flag + " set unchecked to '" +
                             given->second + "'");
  return value;
}

StringRef AttentionFormOptions::get(const ChoiceKnob &knob) const {
  auto given = formFlags.find(knob.flag.str());
  return given == formFlags.end() ? StringRef(knob.defaultValue)
                                  : StringRef(given->second);
}

std::string lcc::attentionFormNames() {
  std::string names = "'keep'";
  for (const AttentionFormDefinition *form : registeredAttentionForms())
    names += ", '" + form->name + "'";
  return names + ", 'auto', or a form a plugin adds (--load-plugin=LIB.so)";
}

namespace lcc {
#define LCC_BUILTIN_FORM(folder, Name) void register##Name##AttentionForm();
#include "passes/forms/BuiltinForms.def"
#undef LCC_BUILTIN_FORM
} // namespace lcc

void lcc::registerBuiltinAttentionForms() {
  static std::once_flag once;
  std::call_once(once, [] {
#define LCC_BUILTIN_FORM(folder, Name) register##Name##AttentionForm();
#include "passes/forms/BuiltinForms.def"
#undef LCC_BUILTIN_FORM
  });
}

void lcc::registerAttentionFormDialects(DialectRegistry &registry) {
  for (const AttentionFormDefinition *form : registeredAttentionForms())
    if (form->registerDialects)
      form->registerDialects(registry);
}

bool lcc::isAttentionFormDialect(StringRef dialectNamespace) {
  FormRegistry &registry = formRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return llvm::is_contained(registry.dialectNamespaces, dialectNamespace);
}

FailureOr<std::vector<const AttentionFormDefinition *>>
lcc::lookupAutoForms(ArrayRef<std::string> names, llvm::raw_ostream &errors) {
  std::vector<const AttentionFormDefinition *> found;
  for (const std::string &name : names) {
    const AttentionFormDefinition *form = lookupAttentionForm(name);
    if (form && form->estimateCost) {
      found.push_back(form);
      continue;
    }
    std::string withEstimate;
    for (const AttentionFormDefinition *known : registeredAttentionForms())
      if (known->estimateCost)
        withEstimate +=
            (withEstimate.empty() ? "'" : ", '") + known->name + "'";
    errors << "'" << name << "' is not a form --attention=auto can choose: "
           << (form ? "it has no cost estimate" : "no such form")
           << " (forms with one: "
           << (withEstimate.empty() ? "none" : withEstimate) << ")";
    return failure();
  }
  return found;
}

std::function<LogicalResult(OpPassManager &, const AttentionFormOptions &,
                            llvm::raw_ostream &)>
lcc::rewriteByPass(std::string passArgument) {
  return [passArgument](OpPassManager &pm, const AttentionFormOptions &options,
                        llvm::raw_ostream &errors) -> LogicalResult {
    const PassInfo *pass = PassInfo::lookup(passArgument);
    if (!pass) {
      errors << "the rewrite pass '" << passArgument << "' is not registered";
      return failure();
    }
    return pass->addToPipeline(pm, options.formOptions, [&](const Twine &msg) {
      errors << passArgument << " (--attention-options): " << msg;
      return failure();
    });
  };
}

AttentionCost lcc::denseAttentionCost(attn::AttentionOp op) {
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  auto k = cast<RankedTensorType>(op.getKey().getType());
  auto v = cast<RankedTensorType>(op.getValue().getType());
  double b = q.getDimSize(0), h = q.getDimSize(1), sq = q.getDimSize(2),
         sk = k.getDimSize(2), d = q.getDimSize(3), dv = v.getDimSize(3);
  double flops = 2 * b * h * sq * sk * (d + dv) * (op.getCausal() ? 0.5 : 1);
  double bytes = 4 * b * h * (sq * d + sk * d + sk * dv + sq * dv);
  return {flops, bytes};
}

void lcc::registerAttentionFormOrDie(AttentionFormDefinition form) {
  std::string error;
  if (!registerAttentionForm(std::move(form), error))
    llvm::report_fatal_error(llvm::StringRef(error));
}
