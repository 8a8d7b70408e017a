//===- AttentionMapProbe.h - keys of LSH and routed attention -*- C++ -*-===//
//
// For `lcc --emit=attention-map --input=...`: the model's first function cut
// short after each op whose keys depend on the input (LSH, routed), each
// copy returning what its form says decides those keys (KeySelection.h).
// lcc compiles these probes like any model, runs them on the input and
// reads the results back into each op's KeySelection.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_ATTENTIONMAPPROBE_H
#define LCC_COMPILER_ATTENTIONMAPPROBE_H

#include "passes/KeySelection.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace lcc {

struct AttentionMapProbes {
  /// A function per probe, each taking the inputs of `modelFunction`.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string modelFunction;
  struct Probe {
    std::string key;      ///< attentionMapKey of the op
    std::string function; ///< "attention_map_probe_0"
    std::function<KeySelection(llvm::ArrayRef<const int32_t *>)> read;
  };
  std::vector<Probe> probes;
};

/// The probes of the ops of the first public function of `attnStage` (the
/// attn stage of a model, after its attention forms only: reversible
/// blocks, chunks and the train step would hide the ops in regions) whose
/// form draws their keys for an input. An op whose probe cannot be built
/// gets a remark; failure (with an error) when there is no function.
mlir::FailureOr<AttentionMapProbes>
buildAttentionMapProbes(mlir::ModuleOp attnStage);

} // namespace lcc

#endif // LCC_COMPILER_ATTENTIONMAPPROBE_H
