//===- InputKeySelections.cpp - lcc --emit=attention-map --input ----------===//

#include "InputKeySelections.h"

#include "compiler/AttentionMapProbe.h"
#include "compiler/Diagnostics.h"

#include "lcc/runtime.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>

using namespace mlir;
using namespace lcc;

namespace {

/// The runtime's handles, destroyed in the order they depend on.
struct ProbeRun {
  std::vector<LccHostTensor> inputs;
  LccModule module = nullptr;
  LccDevice device = nullptr;
  LccSession session = nullptr;

  ~ProbeRun() {
    if (session)
      lccSessionDestroy(session);
    if (device)
      lccDeviceDestroy(device);
    if (module)
      lccModuleDestroy(module);
    for (LccHostTensor tensor : inputs)
      lccHostTensorDestroy(tensor);
  }
};

/// Reports `status` (freed) as `tool: error: WHAT: message`; true when it
/// was an error.
bool failedWith(LccStatus status, llvm::StringRef tool,
                const std::string &what) {
  if (!status)
    return false;
  reportError(tool, what + ": " + lccStatusGetMessage(status));
  lccStatusDestroy(status);
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

  ProbeRun run;
  for (const std::string &path : given.inputs) {
    LccHostTensor tensor = nullptr;
    if (failedWith(lccNpyRead(path.c_str(), &tensor), tool, "--input"))
      return failure();
    run.inputs.push_back(tensor);
  }
  std::vector<LccTensorView> views(run.inputs.size());
  for (size_t i = 0; i < run.inputs.size(); ++i)
    lccHostTensorGetView(run.inputs[i], &views[i]);
  if (failedWith(
          lccModuleLoadMemory(artifact->data(), artifact->size(), &run.module),
          tool, "the attention map's probes") ||
      failedWith(lccDeviceCreate("cpu", 0, &run.device), tool, "cpu device") ||
      failedWith(lccSessionCreate(run.device, run.module, &run.session), tool,
                 "the attention map's probes"))
    return failure();
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
    if (failedWith(lccSessionLookupFunction(run.session, probe.function.c_str(),
                                            &function),
                   tool, "the attention map's probes") ||
        failedWith(lccFunctionCall(function, views.data(), views.size()), tool,
                   "--input (for @" + probes->modelFunction + ")"))
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
