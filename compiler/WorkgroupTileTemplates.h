//===- WorkgroupTileTemplates.h - tiled clusters reused ---------*- C++ -*-===//
//
// A deep model's layers are identical, so lcc-tile-to-workgroups meets the
// same cluster (a root op with the producers fused into its workgroups) once
// per layer, and upstream tile-and-fuse rebuilt each: at depth 16 it was
// the largest pass of the dispatch stage and grew with depth. A tiled
// cluster is kept as a template; a later cluster that is the same ops (names,
// attributes, types, bodies) wired the same way (each operand from the same
// member, or from outside in the same pattern) gets a clone of the
// template's scf.forall on its own operands instead. What a body reads from
// outside the cluster (a hoisted constant, a gathered table) is matched as
// an operand is: the clone reads the cluster's own.
//
// The clone computes what tiling the cluster would: its ops are the
// template's, and the forall reads only the cluster's outer operands and
// what its bodies read from outside (a template that reads anything else is
// not kept). It can differ from what
// upstream would make of it only in what it fuses, should upstream decide
// otherwise for an equal cluster.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_WORKGROUPTILETEMPLATES_H
#define LCC_COMPILER_WORKGROUPTILETEMPLATES_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <memory>

namespace lcc {

class WorkgroupTileTemplates {
public:
  WorkgroupTileTemplates();
  ~WorkgroupTileTemplates();

  /// Keeps `forall`, the tiling of `members.front()` (the root) with the
  /// other members fused into it, whose results `replacements` replace the
  /// root's; a cluster whose forall reads more than its members' outer
  /// operands and what their bodies read from outside is not kept.
  void keep(llvm::ArrayRef<mlir::Operation *> members,
            mlir::scf::ForallOp forall,
            llvm::ArrayRef<mlir::Value> replacements);

  /// Tiles `root` by a clone of a kept template whose cluster it matches:
  /// the clone is inserted before `root` and replaces its results, and the
  /// cluster's members (none of them in `fused`, each used only within the
  /// cluster) are added to `fused`. False when no template matches.
  bool reuse(mlir::RewriterBase &rewriter, mlir::Operation *root,
             llvm::SmallPtrSetImpl<mlir::Operation *> &fused);

  struct Template;

private:
  llvm::DenseMap<llvm::hash_code, llvm::SmallVector<std::unique_ptr<Template>>>
      templates;
};

} // namespace lcc

#endif // LCC_COMPILER_WORKGROUPTILETEMPLATES_H
