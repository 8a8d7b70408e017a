//===- Passes.td - the LSH form's rewrite pass -------------*- tablegen -*-===//
//
// The pass that rewrites attention into this form; the form registers it
// (registerLSHAttentionForm), so lcc-opt and lcc-attention-forms know it.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_FORMS_LSH_PASSES
#define LCC_PASSES_FORMS_LSH_PASSES

include "mlir/Pass/PassBase.td"

def DenseToLSH : Pass<"attn-dense-to-lsh", "mlir::ModuleOp"> {
  let summary = "rewrite shared-QK attention into Reformer LSH attention";
  let description = [{
    Replaces each shared-QK `attn.attention` by an `attn.lsh_attention`
    with `n_hashes` rounds of `bucket_size` buckets (docs/design.md §3). LSH
    approximates the attention, so this runs only when asked
    (`lcc --attention=lsh`) and remarks on every op it rewrites or keeps.
    Attention whose queries and keys differ is kept dense: LSH hashes one
    set of vectors as both. The i-th rewritten op (in program order) gets
    rotations seeded with `seed + i`, so layers hash independently and a
    build is reproducible.

    Before:

    ```mlir
    %o = attn.attention %qk, %qk, %v {causal = true, shared_qk} : (...) -> ...
    ```

    After (`n-hashes=4 bucket-size=64 seed=0`):

    ```mlir
    %o = attn.lsh_attention %qk, %v
        {bucket_size = 64 : i64, causal = true, n_hashes = 4 : i64, seed = 0 : i64}
        : (...) -> ...
    ```
  }];
  let options = [
    Option<"nHashes", "n-hashes", "int64_t",
           /*default=*/"::lcc::knobs::kLSHHashes.defaultValue",
           "Hash rounds">,
    Option<"bucketSize", "bucket-size", "int64_t",
           /*default=*/"::lcc::knobs::kLSHBucketSize.defaultValue",
           "Tokens per bucket (and per attention chunk)">,
    Option<"seed", "seed", "int64_t",
           /*default=*/"::lcc::knobs::kSeed.defaultValue",
           "Seed of the first op's rotations">,
    Option<"hash", "hash", "std::string",
           /*default=*/"::lcc::knobs::kLSHHash.defaultValue.str()",
           "Hashing: plain, factorized (trax's n_buckets as a pair; "
           "n_buckets a multiple of 4) or auto (factorized from 256 "
           "buckets, when they factor)">,
  ];
}

#endif // LCC_PASSES_FORMS_LSH_PASSES
