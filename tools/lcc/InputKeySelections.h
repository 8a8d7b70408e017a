//===- InputKeySelections.h - lcc --emit=attention-map --input --*- C++ -*-===//
//
// The keys LSH and routed attention score for an input the user gives: the
// model's probes (compiler/AttentionMapProbe.h) compiled for this CPU and
// run by the runtime on the input and the weights.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_LCC_INPUTKEYSELECTIONS_H
#define LCC_TOOLS_LCC_INPUTKEYSELECTIONS_H

#include "compiler/Pipeline.h"
#include "passes/KeySelection.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace lcc {

/// What --input and --params name.
struct AttentionMapInputs {
  std::vector<std::string> inputs; ///< .npy files, in argument order
  std::string params;              ///< .safetensors, or "": drawn, seed 0
};

/// The KeySelection of each LSH and routed op of `source` (the parsed
/// model, which this compiles with `options`' attention forms only) for
/// `given`, by attentionMapKey; failure after one error line (`tool`:
/// error: ...) or diagnostics.
mlir::FailureOr<llvm::StringMap<KeySelection>>
selectKeysForInput(mlir::ModuleOp source, const CompileOptions &options,
                   const AttentionMapInputs &given, llvm::StringRef tool);

} // namespace lcc

#endif // LCC_TOOLS_LCC_INPUTKEYSELECTIONS_H
