//===- Passes.td - lcc compiler (codegen) passes -----------*- tablegen -*-===//
//
// Passes that turn lowered tensor programs into dispatches: kernels that are
// functions of a workgroup id and their buffers, called from a host program
// that only orders them (DESIGN.md §5).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_PASSES
#define LCC_COMPILER_PASSES

include "mlir/Pass/PassBase.td"

def FuseElementwise : Pass<"lcc-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "fuse elementwise producers into elementwise consumers";
  let description = [{
    Upstream elementwise fusion, restricted to consumers without reduction
    loops: fusing a producer into a contraction would recompute it once per
    reduction step (a GELU fused into the down projection runs d_model
    times per element). Producers of contractions stay separate and are
    fused per tile by `lcc-tile-to-workgroups` instead.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def TileToWorkgroups : Pass<"lcc-tile-to-workgroups", "mlir::ModuleOp"> {
  let summary = "tile top-level tensor ops into scf.forall over workgroups";
  let description = [{
    Each op of a function body that implements the TilingInterface (linalg
    ops, tensor.pad) and is not already inside an `scf.forall` becomes an
    `scf.forall` whose iterations are the workgroups of one dispatch. Ops are
    visited from the last to the first; a producer of an input whose only
    use is the tiled op is fused into it (computed per tile). Producers of
    the destination (the fill or bias broadcast that starts a contraction)
    are not fused yet: they get a dispatch of their own.

    Tile sizes split the outermost parallel loops until about
    `workgroups` tiles exist (at most three loops, the workgroup grid's
    rank). A top-level `tensor.extract_slice` (a strided view in general)
    becomes a `linalg.copy` first, so every computation ends up in some
    dispatch.

    ```mlir
    %0 = linalg.generic ... ins(%x : tensor<1x512x128xf32>) ...
    // becomes
    %0 = scf.forall (%i, %j) = (0, 0) to (1, 512) step (1, 8) ... {
      ... linalg.generic on a 1x8x128 slice ...
    }
    ```
  }];
  let dependentDialects = [
    "mlir::linalg::LinalgDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect", "mlir::affine::AffineDialect"
  ];
  let options = [
    Option<"workgroups", "workgroups", "int64_t", /*default=*/"64",
           "Number of workgroups to aim for per dispatch">,
  ];
}

def OutlineDispatches : Pass<"lcc-outline-dispatches", "mlir::ModuleOp"> {
  let summary = "outline each scf.forall into a dispatch function";
  let description = [{
    Every top-level `scf.forall` of a function (and every remaining top-level
    TilingInterface op, as a single workgroup) becomes a private function
    `@<func>_dispatch_<n>` on tensors, marked `lcc.dispatch` and carrying
    its `lcc.workgroup_count` (three values). Inside it, the forall's
    induction variables are computed from `gpu.block_id x/y/z`, so the same
    body serves the CPU device (block ids are kernel arguments) and the GPU
    (block ids are CTA ids). Each `tensor.parallel_insert_slice` becomes a
    `tensor.insert_slice` into the matching output argument.

    Arguments are the tensors the body reads, then one per output; views
    (`tensor.extract_slice`, `expand_shape`, `collapse_shape`), constants and
    `tensor.empty` are cloned into the dispatch instead of passed. The forall
    is replaced by a `func.call` of the dispatch.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::gpu::GPUDialect"];
}

#endif // LCC_COMPILER_PASSES
