//===- InputKeySelections.cpp - lcc --emit=attention-map --input ----------===//

#include "InputKeySelections.h"

#include "compiler/AttentionMapProbe.h"
#include "compiler/Diagnostics.h"

#include "common/RuntimeTool.h"
#include "lcc/runtime.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::tools;

namespace {

/// Reports `status` (freed) as `tool: error: WHAT: message`; true when it
/// was an error.
bool failedWith(LccStatus status, llvm::StringRef tool,
                const std::string &what) {
  if (!status)
    return false;
  reportError(tool, what + ": " + takeMessage(status));
  return true;
}

/// `options` with the attention forms alone: the probes need the ops at
/// the top of the function, where reversible blocks, chunks and the train
/// step would not leave them.
CompileOptions formsOnly(const CompileOptions &options) {
  CompileOptions forms = options;
  forms.stopAfter = Stage::Attn;
  forms.reversible = false;
  forms.ffChunks = 0;
  forms.attentionChunks = 0;
  forms.train.reset();
  forms.dump = {};
  forms.progress = {};
  return forms;
}

/// The probes' artifact for this CPU.
CompileOptions probeArtifact(const CompileOptions &options) {
  CompileOptions probe = formsOnly(options);
  probe.attention = "keep";
  probe.checkModel = false;
  probe.stopAfter = Stage::Artifact;
  probe.targetCpu = true;
  probe.targetCuda = false;
  return probe;
}

} // namespace

FailureOr<llvm::StringMap<KeySelection>>
lcc::selectKeysForInput(ModuleOp source, const CompileOptions &options,
                        const AttentionMapInputs &given, llvm::StringRef tool) {
  if (failed(compile(source, formsOnly(options))))
    return failure();
  FailureOr<AttentionMapProbes> probes = buildAttentionMapProbes(source);
  if (failed(probes))
    return failure();
  llvm::StringMap<KeySelection> selections;
  if (probes->probes.empty())
    return selections;
  FailureOr<std::string> artifact =
      compile(*probes->module, probeArtifact(options));
  if (failed(artifact))
    return failure();

  NpyFiles inputs;
  for (const std::string &path : given.inputs)
    if (std::string error = inputs.read(path); !error.empty())
      return reportError(tool, "--input: " + error), failure();
  Handles run;
  if (std::string error =
          run.loadMemory(*artifact, "the attention map's probes");
      !error.empty())
    return reportError(tool, error), failure();
  if (std::string error = run.open(DeviceOptions()); !error.empty())
    return reportError(tool, "cpu device: " + error), failure();
  if (!given.params.empty()) {
    if (failedWith(
            lccSessionBindParametersFile(run.session, given.params.c_str()),
            tool, "--params"))
      return failure();
  } else if (lccModuleGetParameterCount(run.module) > 0) {
    llvm::errs() << tool
                 << ": note: no --params: the weights are drawn as lcc-run "
                    "--init-params draws them (seed 0)\n";
    if (failedWith(lccSessionInitializeParameters(run.session, 0), tool,
                   "drawing the weights"))
      return failure();
  }
  for (const AttentionMapProbes::Probe &probe : probes->probes) {
    LccFunction function = nullptr;
    if (std::string error = run.lookup(probe.function, function);
        !error.empty())
      return reportError(tool, error), failure();
    if (failedWith(
            lccFunctionCall(function, inputs.views.data(), inputs.views.size()),
            tool, "--input (for @" + probes->modelFunction + ")"))
      return failure();
    std::vector<const int32_t *> contents;
    for (size_t i = 0; i < lccFunctionGetOutputCount(function); ++i) {
      LccTensorView result;
      lccFunctionGetResult(function, i, &result);
      if (result.dtype != LCC_DTYPE_I32) {
        reportError(tool, "the attention map's probe '" + probe.function +
                              "' returned a non-i32 result");
        return failure();
      }
      contents.push_back(static_cast<const int32_t *>(result.data));
    }
    selections[probe.key] = probe.read(contents);
  }
  return selections;
}
