//===- Passes.td - the sparse form's rewrite pass ----------*- tablegen -*-===//
//
// The pass that rewrites attention into this form; the form registers it
// (registerSparseAttentionForm), so lcc-opt and lcc-attention-forms know it.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_FORMS_SPARSE_PASSES
#define LCC_PASSES_FORMS_SPARSE_PASSES

include "mlir/Pass/PassBase.td"

def DenseToSparse : Pass<"attn-dense-to-sparse", "mlir::ModuleOp"> {
  let summary = "rewrite dense attention into Sparse Transformer attention";
  let description = [{
    Replaces each `attn.attention` by an `attn.sparse_attention` with the
    pattern, block, stride and summary given as options (docs/design.md §3): the
    result then equals dense attention masked by the `fixed` or `strided`
    pattern, computed block-sparse. This changes what the model computes, so
    it runs only when asked (`lcc --attention=sparse`), and says what it did
    with a remark per op.

    An attention is kept dense, with a remark saying why, when its queries
    and keys have different lengths (the patterns relate positions of one
    sequence) or when it is shared-QK (Reformer attention, whose
    long-context form is LSH). `stride` 0 picks the power of two nearest
    `sqrt(seq)` (the Sparse Transformer's choice); `summary` 0 picks
    `stride / 4` (at least 1) for the fixed pattern.

    Before:

    ```mlir
    %o = attn.attention %q, %k, %v {causal = true} : (...) -> tensor<1x8x4096x64xf32>
    ```

    After (`pattern=fixed block=64 stride=128 summary=16`):

    ```mlir
    %o = attn.sparse_attention fixed %q, %k, %v
        {block = 64 : i64, causal = true, stride = 128 : i64, summary = 16 : i64}
        : (...) -> tensor<1x8x4096x64xf32>
    ```
  }];
  let options = [
    Option<"pattern", "pattern", "std::string",
           /*default=*/"::lcc::knobs::kSparsePattern.defaultValue.str()",
           "Sparse Transformer pattern: 'strided' or 'fixed'">,
    Option<"block", "block", "int64_t",
           /*default=*/"::lcc::knobs::kSparseBlock.defaultValue",
           "Block (tile) size of the block-sparse computation">,
    Option<"stride", "stride", "int64_t",
           /*default=*/"::lcc::knobs::kSparseStride.defaultValue",
           "Stride l of the pattern (0: power of two nearest sqrt(seq))">,
    Option<"summary", "summary", "int64_t",
           /*default=*/"::lcc::knobs::kSparseSummary.defaultValue",
           "Summary width c of the fixed pattern (0: stride / 4)">,
  ];
}

#endif // LCC_PASSES_FORMS_SPARSE_PASSES
