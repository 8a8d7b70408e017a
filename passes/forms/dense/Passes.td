//===- Passes.td - the dense form's rewrite pass -----------*- tablegen -*-===//
//
// The pass that rewrites attention into this form; the form registers it
// (registerDenseAttentionForm), so lcc-opt and lcc-attention-forms know it.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_FORMS_DENSE_PASSES
#define LCC_PASSES_FORMS_DENSE_PASSES

include "mlir/Pass/PassBase.td"

def ToDense : Pass<"attn-to-dense", "mlir::ModuleOp"> {
  let summary = "rewrite every attention form into dense attention (--attention=dense)";
  let description = [{
    The exact reference of a model written with long-context forms:
    `attn.lsh_attention` becomes the shared-QK `attn.attention` it
    approximates, `attn.routed_attention` the `attn.attention` of its
    queries, keys and values (its centroids are dropped), and
    `attn.sparse_attention` the `attn.attention` whose mask region is its
    pattern, which computes the same result. Causality and scale are kept;
    a remark names each op rewritten.

    ```mlir
    %o = attn.lsh_attention %qk, %v {bucket_size = 64 : i64, n_hashes = 4 : i64}
        : (...) -> ...
    // becomes
    %o = attn.attention %qk, %qk, %v {shared_qk} : (...) -> ...
    ```
  }];
}

#endif // LCC_PASSES_FORMS_DENSE_PASSES
