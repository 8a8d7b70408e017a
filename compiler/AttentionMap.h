//===- AttentionMap.h - lcc --emit=attention-map ----------------*- C++ -*-===//
//
// A picture of the work each attention op does: its (query tile, key tile)
// pairs, as flash attention visits them, from what is known when compiling
// (causality, the block table of a mask region), with the fraction of the
// dense work left; for LSH and routed attention, the keys each query scores
// for one input, with every token's bucket or cluster. One SVG per
// attention op of the model.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_ATTENTIONMAP_H
#define LCC_COMPILER_ATTENTIONMAP_H

#include "compiler/Pipeline.h"
#include "passes/KeySelection.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace lcc {

struct AttentionMap {
  std::string fileName; ///< "0-model.mlir-27-12.svg"
  std::string svg;
  std::string summary; ///< "model.mlir:27:12: 136 of 256 tile pairs (53.1%)"
};

/// What names a model op among its copies (the ones inlined into other
/// functions share it): its source position and op name.
std::string attentionMapKey(mlir::Operation *op);

/// The map of every attention op of `module` (after the attention forms),
/// once per model op, at `tiling`'s tiles. An op whose blocks depend on its
/// input (LSH, routed) is drawn from its entry in `selections` (by
/// attentionMapKey; AttentionMapProbe.h computes them for an input, when
/// `inputGiven`) and gets a remark where it has none.
std::vector<AttentionMap>
drawAttentionMaps(mlir::ModuleOp module, AttentionTiling tiling,
                  const llvm::StringMap<KeySelection> &selections = {},
                  bool inputGiven = false);

} // namespace lcc

#endif // LCC_COMPILER_ATTENTIONMAP_H
