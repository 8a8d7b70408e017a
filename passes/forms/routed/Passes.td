//===- Passes.td - the routed form's rewrite pass ----------*- tablegen -*-===//
//
// The pass that rewrites attention into this form; the form registers it
// (registerRoutedAttentionForm), so lcc-opt and lcc-attention-forms know it.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_FORMS_ROUTED_PASSES
#define LCC_PASSES_FORMS_ROUTED_PASSES

include "mlir/Pass/PassBase.td"

def DenseToRouted : Pass<"attn-dense-to-routed", "mlir::ModuleOp"> {
  let summary = "rewrite dense attention into Routing Transformer attention";
  let description = [{
    Replaces each `attn.attention` by an `attn.routed_attention` with
    `clusters` clusters and `window` keys per cluster, its centroids from
    k-means over the run-time queries and keys inside the compiled code
    (docs/design.md §3). Routing approximates the attention, so this runs only
    when asked (`lcc --attention=routed`) and remarks on every op it
    rewrites or keeps. Shared-QK attention is kept (its self-masking has no
    routed form; its long-context form is LSH). `clusters` 0 picks the
    power of two nearest `sqrt(seq)`; `window` 0 picks `key seq / clusters`
    (balanced clusters). The i-th rewritten op's k-means starts from
    `seed + i`.

    ```mlir
    %o = attn.attention %q, %k, %v : (...) -> tensor<1x8x4096x64xf32>
    // becomes (clusters=64 window=64)
    %o = attn.routed_attention %q, %k, %v {clusters = 64 : i64, window = 64 : i64}
        : (...) -> tensor<1x8x4096x64xf32>
    ```
  }];
  let options = [
    Option<"clusters", "clusters", "int64_t",
           /*default=*/"::lcc::knobs::kRoutedClusters.defaultValue",
           "Clusters (0: power of two nearest sqrt(seq))">,
    Option<"window", "window", "int64_t",
           /*default=*/"::lcc::knobs::kRoutedWindow.defaultValue",
           "Keys per cluster (0: key seq / clusters)">,
    Option<"seed", "seed", "int64_t",
           /*default=*/"::lcc::knobs::kSeed.defaultValue",
           "Seed of the first op's k-means initialisation">,
  ];
}

#endif // LCC_PASSES_FORMS_ROUTED_PASSES
