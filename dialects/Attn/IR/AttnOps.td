//===- AttnOps.td - attn dialect operations ----------------*- tablegen -*-===//
//
// Attention ops work on [batch, heads, seq, head_dim] tensors; model-level
// ops on [batch, seq, d_model] activations. docs/design.md §3 is the
// contract for the semantics written here.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_DIALECT_ATTN_IR_ATTNOPS
#define LCC_DIALECT_ATTN_IR_ATTNOPS

include "dialects/Attn/IR/AttnBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "dialects/Attn/IR/AttnInterfaces.td"

//===----------------------------------------------------------------------===//
// Attention forms
//===----------------------------------------------------------------------===//

def Attn_AttentionOp : Attn_Op<"attention", [Pure,
    DeclareOpInterfaceMethods<Attn_AttentionFormInterface,
        ["getSequenceSplit"]>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["expandForDifferentiation", "buildVectorJacobianProduct"]>]> {
  let summary = "dense scaled dot-product attention";
  let description = [{
    Computes `softmax(q kᵀ · scale) · v` over the last two dimensions of
    `[batch, heads, seq, head_dim]` tensors. `scale` defaults to
    `1/sqrt(head_dim)`. The key and value sequences may differ in length from
    the query sequence; the value head_dim may differ from the key head_dim.

    * `causal`: key `j` is visible to query `i` iff `j <= i`.
    * `shared_qk` (Reformer semantics): `key` must be the same SSA value as
      `query`. Keys are then `q_j / max(||q_j||₂, 1e-12)` (the floor of
      `torch.nn.functional.normalize`: a zero query is a zero key, never
      NaN), and the score of a token with
      itself is replaced by `-1e5`, so a token attends to itself only when
      nothing else is visible.

    * `mask` (optional region, FlexAttention's mask_mod as IR): gets
      `(b, h, i, j : index)` and yields an `i1`, true where key `j` is
      visible to query `i` of head `h` of batch `b`; with `causal`, a key
      must pass both. A query that sees no key at all, or whose every score
      is -inf (with or without a mask), gets zeros and zero gradients.
    * `score` (optional region, score_mod): gets `(s : f32, b, h, i, j :
      index)`, the scaled score, and yields the score to use (ALiBi, a soft
      cap, a bias). Masking comes after it.

    The regions hold `arith` and `math` ops only (and `attn.yield`), so what
    a mask hides is known at compile time: key tiles it hides from a whole
    query tile are never read. Their integer operations have one result for
    every input (`x / 0 = 0`, `x % 0 = x`, `MIN / -1 = MIN`; docs/masks.md),
    never a trap. In the generic form the op has no regions or both, in the
    order mask, score, an absent one empty.

    * `positions` (optional, two 1-D `i64` tensors: `[q_seq]`, `[k_seq]`):
      where each query and key sits in the whole sequence, as the mask and
      score regions see them (query `i` at `positions#0[i]`, key `j` at
      `positions#1[j]`) and as `causal` compares them (key `j` visible iff
      `positions#1[j] <= positions#0[i]`). Ring attention writes them for
      each block of a sequence split over ranks; without them a query and a
      key sit at their indices. They need a region or `causal` to mean
      anything.

    * `logsumexp` (optional second result, `[batch, heads, q_seq]`, f32
      whatever the operands' type): each query's `log sum_j exp(s_ij)` over
      its visible keys (-inf when it sees none). The train step asks for
      it, so that `attn.attention_backward` recomputes the probabilities
      from it instead of storing them.

    On bf16 or f16 tensors (q, k, v and the result; one type for all),
    both products take their operands in that type and accumulate in f32;
    the scores, the softmax and its running state are f32, the
    probabilities are rounded to the half type for p·v and the result at
    the end. The scale is applied to q in f32 before it is rounded.
    A score region works on the f32 scores whatever the operands' type.
    head_dim must be even (products run on pairs of it); half tensors with
    `shared_qk` are refused by the lowering with one error.

    Example:

    ```mlir
    %o = attn.attention %q, %k, %v {causal = true}
        : (tensor<1x4x128x32xf32>, tensor<1x4x128x32xf32>,
           tensor<1x4x128x32xf32>) -> tensor<1x4x128x32xf32>

    // A sliding window of 64 keys.
    %w = attn.attention %q, %k, %v
        : (tensor<1x4x128x32xf32>, tensor<1x4x128x32xf32>,
           tensor<1x4x128x32xf32>) -> tensor<1x4x128x32xf32>
        mask {
        ^bb0(%b: index, %h: index, %i: index, %j: index):
          %d = arith.subi %i, %j : index
          %c = arith.constant 64 : index
          %near = arith.cmpi ult, %d, %c : index
          attn.yield %near : i1
        }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
      Attn_FloatTensor:$value,
      Variadic<RankedTensorOf<[I64]>>:$positions,
      DefaultValuedAttr<Attn_BoolFlag, "false">:$causal,
      OptionalAttr<F32Attr>:$scale,
      Attn_UnitFlag:$shared_qk);
  let results = (outs Attn_FloatTensor:$result,
      Optional<Attn_FloatTensor>:$logsumexp);
  let regions = (region VariadicRegion<MaxSizedRegion<1>>:$modifiers);
  let assemblyFormat =
      "$query `,` $key `,` $value (`positions` `(` $positions^ `)`)? attr-dict `:` functional-type(operands, results) custom<AttentionModifiers>($modifiers)";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The mask region, or null when the op has none.
    ::mlir::Region *getMaskRegion();
    /// The score region, or null when the op has none.
    ::mlir::Region *getScoreRegion();
    /// Whether a mask or score region says more than the attributes do:
    /// then no other form computes what the op means.
    bool hasMaskOrScore() { return getMaskRegion() || getScoreRegion(); }
    /// Where the queries sit in the whole sequence, or null (at their
    /// indices).
    ::mlir::Value getQueryPositions() {
      return getPositions().empty() ? ::mlir::Value() : getPositions()[0];
    }
    /// Where the keys sit in the whole sequence, or null.
    ::mlir::Value getKeyPositions() {
      return getPositions().empty() ? ::mlir::Value() : getPositions()[1];
    }
  }];
}

def Attn_LSHAttentionOp : Attn_Op<"lsh_attention", [Pure,
    DeclareOpInterfaceMethods<Attn_AttentionFormInterface,
        ["buildDenseAttention", "getChunkableRows", "getRowChunks",
         "setRowChunks"]>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "Reformer locality-sensitive-hashing attention";
  let description = [{
    Approximates shared-QK attention (`attn.attention` with `shared_qk`) as
    the Reformer does. `n_buckets` defaults to `padded_seq / bucket_size`
    (one bucket per chunk):

    1. random rotations `R ~ N(0, 1)` of shape
       `[head_dim, n_hashes, n_buckets/2]`, drawn from `seed`;
    2. per round, `bucket = argmax([xR; -xR])`;
    3. per round, sort tokens by `(bucket, position)`; the rounds' sorted
       orders, laid end to end, are cut into chunks of `bucket_size`, and
       each chunk attends to itself and the chunk before it (a round's
       first chunk to the previous round's last, the very first to the
       last round's last: trax, reformer-pytorch and Hugging Face alike),
       with the self-mask of shared-QK attention (for every copy of the
       query among the keys) and, if `causal`, the causal mask;
    4. undo the sort and combine the rounds weighted by their per-row
       logsumexp.

    `n_buckets` (even) sets the bucket count apart from the chunks, as
    Hugging Face's `num_buckets` does: chunks stay `bucket_size` tokens.

    A `seq` that is not a multiple of `2 * bucket_size` (of `bucket_size`,
    with `n_buckets` given) is padded inside the lowering with masked
    positions, which hash to bucket `n_buckets` and so sort last.
    `scale` defaults to `1/sqrt(head_dim)`.

    `chunks` (default 1) splits the `batch * heads` rows into that many
    groups, attended one after another (Reformer's attention chunking): the
    sorted copies, scores and per-round outputs exist for one group at a
    time. Every row is hashed, sorted and attended on its own, so the
    result is the same bit for bit; `attn-chunk-ff` sets it
    (`lcc --attention-chunks=N`).

    With `factorized_hash` (trax's `n_buckets` as a pair), each round hashes
    into two smaller bucket sets, `n_buckets = n1 * n2` with `n1` the
    largest even divisor of `n_buckets` not above its square root and `n2 =
    n_buckets / n1` even: the rotations are `[head_dim, n_hashes, (n1 +
    n2) / 2]`, `b1 = argmax([xR1; -xR1])` over the first `n1 / 2` columns,
    `b2` likewise over the next `n2 / 2`, and `bucket = b1 + n1 * b2`.
    Hashing then costs `(n1 + n2) / 2` instead of `n_buckets / 2` columns
    per token and round (32 instead of 512 at 64K tokens in buckets of
    64), so it stays linear in the sequence. `n_buckets` must be a multiple
    of 4. `lcc --lsh-hash` chooses it.

    `causal` masks keys `j > i`, but which past keys share a query's chunk
    depends on every token's hash, later ones included (as in trax and
    reformer-pytorch): the outputs of a prefix of the sequence differ from
    the first outputs of the whole sequence.

    Limits (what lcc compiles in reasonable time and memory): `n_hashes <=
    1024`, `bucket_size <= seq` (a larger bucket only pads: every chunk would
    see the whole padded sequence), and at most 2^24 rotation values
    (`head_dim * n_hashes * n_buckets / 2`, a constant of the compiled
    code), `n_buckets <= 2^20` (each row's sort counts them).

    Example:

    ```mlir
    %o = attn.lsh_attention %qk, %v {n_hashes = 4 : i64, bucket_size = 64 : i64,
                                     causal = true, seed = 7 : i64}
        : (tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>)
        -> tensor<1x8x4096x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query_key, Attn_FloatTensor:$value,
      I64Attr:$n_hashes,
      I64Attr:$bucket_size,
      DefaultValuedAttr<Attn_BoolFlag, "false">:$causal,
      DefaultValuedAttr<I64Attr, "0">:$seed,
      OptionalAttr<F32Attr>:$scale,
      DefaultValuedAttr<I64Attr, "1">:$chunks,
      Attn_UnitFlag:$factorized_hash,
      OptionalAttr<I64Attr>:$n_buckets);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat =
      "$query_key `,` $value attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Attn_SparseAttentionOp : Attn_Op<"sparse_attention", [Pure,
    DeclareOpInterfaceMethods<Attn_AttentionFormInterface,
        ["buildDenseAttention"]>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["expandForDifferentiation"]>]> {
  let summary = "Sparse Transformer fixed or strided attention";
  let description = [{
    Exact attention restricted to the union of the two Sparse Transformer
    index sets (the "merged head"). With stride `l`:

    * `strided`: `j ∈ A(i)` iff `|i - j| < l` or `(i - j) mod l == 0`;
    * `fixed` (summary `c`): `j ∈ A(i)` iff `floor(j/l) == floor(i/l)` or
      `(j mod l) >= l - c`;
    * `causal` additionally requires `j <= i`.

    The result equals dense attention with that mask, to float rounding.
    `block` is the compute tile: the lowering never touches a block of the
    score matrix that the pattern masks entirely. Query and key sequences have
    the same length.

    Example:

    ```mlir
    %o = attn.sparse_attention fixed %q, %k, %v
        {block = 64 : i64, stride = 128 : i64, summary = 16 : i64}
        : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>,
           tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32>
    ```
  }];
  let arguments = (ins Attn_SparsePatternAttr:$pattern,
      Attn_FloatTensor:$query, Attn_FloatTensor:$key, Attn_FloatTensor:$value,
      I64Attr:$block,
      I64Attr:$stride,
      OptionalAttr<I64Attr>:$summary,
      DefaultValuedAttr<Attn_BoolFlag, "false">:$causal,
      OptionalAttr<F32Attr>:$scale);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    custom<EnumKeyword>($pattern) $query `,` $key `,` $value attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_RoutedAttentionOp : Attn_Op<"routed_attention", [Pure,
    DeclareOpInterfaceMethods<Attn_AttentionFormInterface,
        ["buildDenseAttention", "getPerHeadOperands"]>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct", "getSelfTrainedOperand",
         "buildSelfTrainedUpdate"]>]> {
  let summary = "Routing Transformer k-means routed attention";
  let description = [{
    Unit-normalised queries and keys are routed to `clusters` centroids: each
    query joins its nearest centroid, and each cluster takes the `window` keys
    nearest to its centroid (balanced top-k). A query attends to its
    cluster's keys with the dense scores `q kᵀ · scale` (normalisation is for
    routing only); `causal` additionally hides keys `j > i`.

    Centroids are either an operand of shape `[heads, clusters, head_dim]`
    (the trained centroids of a Routing Transformer) or, when absent, come
    from a few k-means iterations over the run-time queries and keys,
    initialised from `seed`. With `clusters = 1` and `window = seq` the result
    equals dense attention.

    Routing is defined for any input: vectors are normalised with a norm
    floored at 1e-12 (a zero row is a zero vector, scoring 0 against every
    centroid), a centroid whose members cancel keeps its place, and a NaN
    score ranks below every other, so each window always holds `window`
    distinct keys. Causal routing, like causal LSH, depends on later tokens
    (they move the centroids and fill the windows): a prefix run and a full
    run differ.

    Example:

    ```mlir
    %o = attn.routed_attention %q, %k, %v centroids %c
        {clusters = 16 : i64, window = 256 : i64}
        : (tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>,
           tensor<1x8x4096x64xf32>, tensor<8x16x64xf32>)
        -> tensor<1x8x4096x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
      Attn_FloatTensor:$value, Optional<Attn_FloatTensor>:$centroids,
      I64Attr:$clusters,
      I64Attr:$window,
      DefaultValuedAttr<Attn_BoolFlag, "false">:$causal,
      DefaultValuedAttr<I64Attr, "0">:$seed,
      OptionalAttr<F32Attr>:$scale);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`centroids` $centroids^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_RelativeAttentionOp : Attn_Op<"relative_attention", [Pure,
    DeclareOpInterfaceMethods<Attn_AttentionFormInterface,
        ["getPerHeadOperands", "getSequenceSplit", "attendsAtQueryOffset",
         "isCausal"]>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["expandForDifferentiation", "buildVectorJacobianProduct"]>]> {
  let summary = "Transformer-XL attention: relative positions over a memory";
  let description = [{
    The attention of Transformer-XL (Dai et al. 2019), always causal.
    `query` is `[batch, heads, q_seq, head_dim]`; `key` and `value` are
    `[batch, heads, k_seq, head_dim]` with `k_seq >= q_seq`: the first
    `M = k_seq - q_seq` keys are the memory (the previous segments' hidden
    states), the rest the segment itself. `pos` `[heads, k_seq, head_dim]`
    holds the projected encoding of each distance: `pos[h, t]` is that of
    distance `t`. `u` and `w` `[heads, head_dim]` are the content and
    position biases (the reference's `r_w_bias` and `r_r_bias`).

    Query `i` sits at position `M + i`; key `j` is visible iff `j <= M + i`.
    With the distance `t = M + i - j`:

    ```
    score(i, j) = ((q_i + u_h)·k_j + (q_i + w_h)·pos[h, min(t, clamp_len)]) · scale
    ```

    `scale` defaults to `1/sqrt(head_dim)`. This is kimiyoung/transformer-xl's
    formula with its `_rel_shift` done exactly: no wrapped-around terms.

    * `clamp_len` (optional, >= 0): distances beyond it use the encoding of
      `clamp_len`, as the reference clamps its position sequence.
    * `same_length` (optional, N >= 1): key `j` is visible only if also
      `t < N`, so that every query sees the same number of keys once the
      memory is full: the reference's `same_length` with `mem_len = N`.

    * `logsumexp` (optional second result, `[batch, heads, q_seq]`, f32
      whatever the operands' type): each query's `log sum_j exp(score(i,
      j))` over its visible keys (-inf when it sees none), which
      `attn.relative_attention_backward` recomputes the probabilities from.
      The train step asks for it.
    * `query_offset` (optional, a 0-d i32 known at run time): query `i`
      sits at key position `query_offset + i` instead of `M + i`, the
      distances and causality counted from there, and `pos` may hold any
      number of encodings (distances past its last use the last). Ring
      attention's steps use it: a chunk of queries against a chunk of keys
      from elsewhere in the sequence. A query that then sees no key gets
      zeros.

    The lowering is the flash form; no `[q_seq, k_seq]` tensor is built. A
    query tile meets the distances of a key tile in a band of
    `query tile + key tile - 1` encodings (rounded up to a multiple of 16
    rows, whole tensor-core tiles): their product with `q + w` is one
    contraction per tile pair, read along its diagonals into the scores. On
    bf16 or f16 operands (pos, u and w of the query's type) the products
    take pairs of the half type with f32 sums; `q + u` and `q + w` are
    summed in f32 and rounded once; scores and the softmax are f32.

    Example (a segment of 128 after a memory of 128):

    ```mlir
    %o = attn.relative_attention %q, %k, %v, %pos, %u, %w {clamp_len = 200 : i64}
        : (tensor<1x8x128x64xf32>, tensor<1x8x256x64xf32>,
           tensor<1x8x256x64xf32>, tensor<8x256x64xf32>, tensor<8x64xf32>,
           tensor<8x64xf32>) -> tensor<1x8x128x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
      Attn_FloatTensor:$value, Attn_FloatTensor:$pos, Attn_FloatTensor:$u,
      Attn_FloatTensor:$w, Optional<0DTensorOf<[I32]>>:$query_offset,
      OptionalAttr<F32Attr>:$scale,
      OptionalAttr<I64Attr>:$clamp_len,
      OptionalAttr<I64Attr>:$same_length);
  let results = (outs Attn_FloatTensor:$result,
      Optional<Attn_FloatTensor>:$logsumexp);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $pos `,` $u `,` $w
    (`query_offset` `(` $query_offset^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_AdaptiveSpanAttentionOp
    : Attn_Op<"adaptive_span_attention", [Pure,
      DeclareOpInterfaceMethods<Attn_AttentionFormInterface,
        ["getPerHeadOperands", "getSequenceSplit", "attendsAtQueryOffset"]>,
      DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["expandForDifferentiation", "buildVectorJacobianProduct",
         "getUnitIntervalOperands"]>]> {
  let summary = "adaptive-span attention: a learned span per head";
  let description = [{
    The attention of Adaptive Span (Sukhbaatar et al. 2019). `query` is
    `[batch, heads, q_seq, head_dim]`; `key` and `value` are
    `[batch, heads, k_seq, head_dim]` with `k_seq >= q_seq` (the first
    `M = k_seq - q_seq` keys are a memory of earlier segments); `z`
    `[heads]` is each head's learned span as a fraction of `max_span`.
    Query `i` sits at position `M + i`; with the distance `x = M + i - j`,
    the span `span_h = z_h · max_span` and the soft mask

    ```
    m(x) = clamp((ramp + span_h - x) / ramp, 0, 1)
    ```

    key `j` is visible to query `i` iff `m(x) > 0` (that is
    `x < span_h + ramp`) and, with `causal`, `x >= 0`. Over the visible keys,
    with `s_ij = q_i·k_j·scale`:

    ```
    a_ij = softmax_j(s_ij),   a'_ij = a_ij m(x) / (sum_j a_ij m(x) + 1e-8),
    result_i = sum_j a'_ij v_j
    ```

    The mask applies after the softmax and the weights are renormalised,
    as facebookresearch/adaptive-span does. That reference takes the
    softmax over its attention window trimmed to a multiple of 64 keys;
    here it runs over the keys the ramp reaches. The two differ only through
    the `1e-8` term. `scale` defaults to `1/sqrt(head_dim)`. `z` is meant to
    lie in [0, 1]: the train step clamps a `z` that is an `attn.param` back
    into [0, 1] after each update. A query that sees no key (a negative
    span) gets zeros. The span loss, `max_span · mean(z)` times a weight, is
    the model's to add.

    * `log_normalizer` (optional second result, `[batch, heads, q_seq]`):
      each query's `log(sum_j exp(s_ij) (m(x) + 1e-8))` over its visible
      keys (-inf when it sees none), from which
      `attn.adaptive_span_attention_backward` recomputes the weights. The
      train step asks for it.
    * `query_offset` (optional, a 0-d i32 known at run time): query `i`
      sits at key position `query_offset + i` instead of `M + i`, the
      distances (and causality) counted from there; ring attention's steps
      use it.

    The lowering is the flash form: key tiles beyond every query's reach
    (`x >= span_h + ramp` for the whole tile) are never read, so the time
    falls with the learned span. It computes in f32.

    ```mlir
    %o = attn.adaptive_span_attention %q, %k, %v, %z
        {max_span = 1024 : i64, ramp = 32 : i64, causal = true}
        : (tensor<1x8x512x64xf32>, tensor<1x8x1024x64xf32>,
           tensor<1x8x1024x64xf32>, tensor<8xf32>) -> tensor<1x8x512x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
      Attn_FloatTensor:$value, Attn_FloatTensor:$z,
      Optional<0DTensorOf<[I32]>>:$query_offset,
      I64Attr:$max_span,
      DefaultValuedAttr<I64Attr, "32">:$ramp,
      DefaultValuedAttr<Attn_BoolFlag, "false">:$causal,
      OptionalAttr<F32Attr>:$scale);
  let results = (outs Attn_FloatTensor:$result,
      Optional<Attn_FloatTensor>:$log_normalizer);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $z
    (`query_offset` `(` $query_offset^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_GateSelectOp : Attn_Op<"gate_select", [Pure,
    AllTypesMatch<["on_open", "on_closed", "result"]>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "one of two tensors, chosen by a gate known at run time";
  let description = [{
    `on_open` where `gate` (`tensor<1xf32>`) holds a nonzero value,
    `on_closed` where it holds 0. Ring attention's causal steps choose the
    halves of a rank's share this way, the gate one value per rank cut to
    this rank's (`attn.rank_slice`). The gradient goes to the chosen
    operand; the other gets zeros.

    ```mlir
    %q = attn.gate_select %gate, %first_half, %second_half
        : tensor<1xf32>, tensor<1x4x128x32xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$gate,
      RankedTensorOf<[F32]>:$on_open, RankedTensorOf<[F32]>:$on_closed);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $gate `,` $on_open `,` $on_closed attr-dict `:` type($gate) `,`
    type($result)
  }];
  let hasVerifier = 1;
}

def Attn_MergePartialsOp : Attn_Op<"merge_partials", [Pure,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "two partial attention results merged by their logsumexps";
  let description = [{
    `first` and `second` (`[batch, heads, seq, dim]`) are the results of the
    same queries attending to two disjoint sets of keys, with their
    logsumexps (`[batch, heads, seq]`, -inf where a query saw no key); the
    result is what attending to both sets at once gives, with its
    logsumexp, computed in f32 as FlashAttention and ring attention merge
    blocks:

    `L = log(exp(L1) + exp(L2))`, `o = exp(L1 - L) o1 + exp(L2 - L) o2`
    (zeros and -inf where neither saw a key).

    `gate` (optional, `tensor<1xf32>`): when it holds 0, `second` counts as
    unseen (its logsumexp -inf): a causal ring step whose keys are later
    than every query of this rank, known only at run time from the rank.
    The merge's gradient reaches both partials and their logsumexps (and
    so the attention that produced them, through its logsumexp).

    ```mlir
    %o, %l = attn.merge_partials %o1, %l1, %o2, %l2
        : (tensor<1x4x256x32xf32>, tensor<1x4x256xf32>,
           tensor<1x4x256x32xf32>, tensor<1x4x256xf32>)
        -> (tensor<1x4x256x32xf32>, tensor<1x4x256xf32>)
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$first,
      RankedTensorOf<[F32]>:$first_logsumexp, RankedTensorOf<[F32]>:$second,
      RankedTensorOf<[F32]>:$second_logsumexp,
      Optional<RankedTensorOf<[F32]>>:$gate);
  let results = (outs RankedTensorOf<[F32]>:$result,
      RankedTensorOf<[F32]>:$logsumexp);
  let assemblyFormat = [{
    $first `,` $first_logsumexp `,` $second `,` $second_logsumexp
    (`gate` $gate^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Model-level ops
//===----------------------------------------------------------------------===//

def Attn_ParamOp : Attn_Op<"param", [Pure]> {
  let summary = "a named model parameter (weight)";
  let description = [{
    Produces the weight called `name`. The compiled artifact lists every
    parameter by name, shape and dtype, and the runtime binds it from a
    weights file (`.safetensors`) by that name. Two `attn.param` ops with the
    same name denote the same weight (tied weights).

    With `state`, the value is optimizer state rather than a weight (Adam's
    moments, its step count): it starts at zero when the module is loaded,
    or at `initial` where given (a training hyper-parameter such as
    `optimizer.lr`, which a trainer may set between steps), is kept by the
    loaded module across calls, and is read from a weights file only when
    the file holds it (resuming from a checkpoint).

    ```mlir
    %wq = attn.param "layers.0.attn.wq" : tensor<128x128xf32>
    %lr = attn.param "optimizer.lr" state {initial = 1.0e-3 : f32} : tensor<f32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Attn_UnitFlag:$state,
      OptionalAttr<F32Attr>:$initial);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Attn_EmbeddingOp : Attn_Op<"embedding", [Pure,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "token embedding lookup";
  let description = [{
    `result[b, s, :] = table[tokens[b, s], :]` for `tokens: [batch, seq]`
    and `table: [vocab, d_model]`. When `tokens` is a function input, a token
    outside `[0, vocab)` is a run-time error (the runtime checks the input
    before the call); a token computed inside the model is clamped into
    range, so it can never read outside the table.
  }];
  let arguments = (ins Attn_TokenTensor:$tokens, Attn_FloatTensor:$table);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat =
      "$tokens `,` $table attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Attn_SinusoidalEncodingOp : Attn_Op<"sinusoidal_encoding", [Pure]> {
  let summary = "sinusoidal encodings of positions 0 .. n - 1";
  let description = [{
    The fixed position encodings of Transformer-XL (and of the original
    Transformer), `[n, d]` f32 with `d` even. Row `t` encodes position, or
    distance, `t`: first the sines, then the cosines, as
    kimiyoung/transformer-xl concatenates them. For `i < d/2`:

    ```
    result[t, i]       = sin(angle(t, i))
    result[t, d/2 + i] = cos(angle(t, i))
    angle(t, i) = f32(t · f32(10000^(-2i/d)))
    ```

    The angle is the f32 product of the position and the frequency rounded
    to f32, as frameworks compute it: beyond a few thousand positions that
    rounding, not the sine, limits what an encoding resolves. For
    `attn.relative_attention`, project it per head into `pos`.

    ```mlir
    %r = attn.sinusoidal_encoding : tensor<256x64xf32>
    ```
  }];
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Attn_LayerNormOp : Attn_Op<"layer_norm", [Pure,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "layer normalisation over the last dimension";
  let description = [{
    `(x - mean(x)) / sqrt(var(x) + epsilon) * gamma + beta` over the last
    dimension, with the biased variance. `gamma` and `beta` have the size of
    that dimension.
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$gamma,
      Attn_FloatTensor:$beta,
      DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_LinearOp : Attn_Op<"linear", [Pure,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "affine projection of the last dimension";
  let description = [{
    `result = input · weight + bias` for `input: [..., in]`,
    `weight: [in, out]` and the optional `bias: [out]`.
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$weight,
      Optional<Attn_FloatTensor>:$bias);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_CompressOp : Attn_Op<"compress", [Pure,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["expandForDifferentiation"]>]> {
  let summary = "compressive memory: a 1-D convolution of kernel = stride = rate";
  let description = [{
    The Compressive Transformer's compression (Rae et al. 2019; its best
    function, lucidrains/compressive-transformer-pytorch's `ConvCompress`):
    `x` `[batch, length, d]` with `length` a multiple of `rate` becomes
    `[batch, length / rate, d_out]`,

    ```
    result[b, t] = bias + sum_{r < rate} x[b, t * rate + r] · weight[r]
    ```

    with `weight` `[rate, d, d_out]` and `bias` `[d_out]`. A model compresses
    the memory it evicts into its compressed memory, a FIFO carried between
    segments like the memory (docs/design.md §3). It is a projection of each
    group of `rate` rows: it lowers, and is differentiated, as `attn.linear`
    of `x` viewed as `[batch, length / rate, rate * d]`.

    ```mlir
    %c = attn.compress %old, %w, %b {rate = 4 : i64}
        : (tensor<1x64x64xf32>, tensor<4x64x64xf32>, tensor<64xf32>)
        -> tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$weight,
      Attn_FloatTensor:$bias, I64Attr:$rate);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The same computation as reshapes and an attn.linear, built at `b`.
    ::mlir::Value buildAsLinear(::mlir::OpBuilder &b);
  }];
}

def Attn_StopGradientOp : Attn_Op<"stop_gradient",
    [Pure, AllTypesMatch<["input", "result"]>,
     DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "the identity, through which no gradient flows";
  let description = [{
    Returns its operand. `attn-generate-train-step` treats the result as a
    constant: nothing upstream of it gets a gradient through it (PyTorch's
    `detach`). The Compressive Transformer's attention-reconstruction loss
    detaches the queries, the evicted memory and the key and value weights,
    so that it trains the compressor only.

    ```mlir
    %qd = attn.stop_gradient %q : tensor<1x4x64x16xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Attn_MultiHeadAttentionOp : Attn_Op<"multi_head_attention",
    [SingleBlock, RecursiveMemoryEffects,
     DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["expandForDifferentiation"]>]> {
  let summary = "multi-head self-attention block";
  let description = [{
    For `input: [batch, seq, d_model]`, projects queries, keys and values
    (`input · weight`), splits them into `heads` heads of
    `[batch, heads, seq, head_dim]`, runs the attention form in `body` on each
    head, merges the heads and projects the result with `output` weight.

    `body` receives the per-head queries, keys and values and yields the
    per-head attention result. Without a `key` weight the block is shared-QK
    (Reformer): `body` then receives `(query_key, value)`. The attention
    passes rewrite the op inside `body`, so the block keeps its projections
    whatever form its attention takes.

    ```mlir
    %y = attn.multi_head_attention %x, query %wq, value %wv, output %wo
        {heads = 4 : i64}
        : (tensor<1x128x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
           tensor<64x64xf32>) -> tensor<1x128x64xf32> {
    ^bb0(%qk: tensor<1x4x128x16xf32>, %v: tensor<1x4x128x16xf32>):
      %o = attn.attention %qk, %qk, %v {shared_qk}
          : (tensor<1x4x128x16xf32>, tensor<1x4x128x16xf32>,
             tensor<1x4x128x16xf32>) -> tensor<1x4x128x16xf32>
      attn.yield %o : tensor<1x4x128x16xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input,
      Attn_FloatTensor:$query_weight,
      Optional<Attn_FloatTensor>:$key_weight,
      Attn_FloatTensor:$value_weight,
      Attn_FloatTensor:$output_weight,
      I64Attr:$heads);
  let results = (outs Attn_FloatTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $input `,` `query` $query_weight `,` (`key` $key_weight^ `,`)?
    `value` $value_weight `,` `output` $output_weight attr-dict `:`
    functional-type(operands, results) $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// True when queries and keys share one projection (Reformer).
    bool isSharedQK() { return !getKeyWeight(); }
  }];
}

def Attn_FeedForwardOp : Attn_Op<"feed_forward", [Pure,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "position-wise feed-forward layer, optionally chunked";
  let description = [{
    `act(input · up_weight + up_bias) · down_weight + down_bias` for
    `input: [batch, seq, d_model]`, `up_weight: [d_model, d_ff]` and
    `down_weight: [d_ff, d_model]`. `gelu` is the exact (erf) GELU.

    `chunks` (default 1) splits the `batch * seq` positions into that many
    slices computed one after another, so only a
    `[batch * seq / chunks, d_ff]` intermediate is live at a time
    (Reformer's chunked feed-forward). The math does not depend on
    `chunks`; the floats may, by rounding, since a chunk's rows can take
    another vectorised path (a tail of fewer rows than a register tile).
  }];
  let arguments = (ins Attn_ActivationAttr:$activation,
      Attn_FloatTensor:$input,
      Attn_FloatTensor:$up_weight, Attn_FloatTensor:$up_bias,
      Attn_FloatTensor:$down_weight, Attn_FloatTensor:$down_bias,
      DefaultValuedAttr<I64Attr, "1">:$chunks);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    custom<EnumKeyword>($activation) $input `,` $up_weight `,` $up_bias `,` $down_weight `,`
    $down_bias attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_ResidualOp : Attn_Op<"residual",
    [SingleBlock, RecursiveMemoryEffects, AllTypesMatch<["input", "result"]>,
     DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["expandForDifferentiation"]>]> {
  let summary = "residual block: x + F(x)";
  let description = [{
    `result = input + F(input)` where `F` is `body`, a single block taking
    one argument of the input's type and yielding a value of that type.

    ```mlir
    %y = attn.residual %x : tensor<1x128x64xf32> {
    ^bb0(%a: tensor<1x128x64xf32>):
      %f = attn.layer_norm %a, %g, %b : (...) -> tensor<1x128x64xf32>
      attn.yield %f : tensor<1x128x64xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$input attr-dict `:` type($input) $body";
  let hasRegionVerifier = 1;
}

def Attn_ReversibleOp : Attn_Op<"reversible",
    [SingleBlock, RecursiveMemoryEffects,
     AllTypesMatch<["x1", "y1"]>, AllTypesMatch<["x2", "y2"]>,
     DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["expandForDifferentiation"]>]> {
  let summary = "reversible residual block (RevNet)";
  let description = [{
    `y1 = x1 + F(x2)`, `y2 = x2 + G(y1)`, with `F` and `G` the regions `f`
    and `g`. Inputs can be recomputed from outputs (`x2 = y2 - G(y1)`,
    `x1 = y1 - F(x2)`), so training need not store activations per layer.
    `f` takes an argument of `x2`'s type and yields `x1`'s type; `g` takes
    `y1` (of `x1`'s type) and yields `x2`'s type.
  }];
  let arguments = (ins Attn_FloatTensor:$x1, Attn_FloatTensor:$x2);
  let results = (outs Attn_FloatTensor:$y1, Attn_FloatTensor:$y2);
  let regions = (region SizedRegion<1>:$f, SizedRegion<1>:$g);
  let assemblyFormat = [{
    $x1 `,` $x2 attr-dict `:` type($x1) `,` type($x2) `f` $f `g` $g
  }];
  let hasRegionVerifier = 1;
}

def Attn_SoftmaxCrossEntropyOp : Attn_Op<"softmax_cross_entropy", [Pure,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "mean softmax cross-entropy of logits against labels";
  let description = [{
    `mean over positions p of (logsumexp(logits[p, :]) - logits[p, labels[p]])`
    for `logits: [..., vocab]` and integer `labels` of the leading shape. The
    result is a 0-d tensor. When `labels` is a function input, a label
    outside `[0, vocab)` is a run-time error; a computed label is clamped.

    With `weights` (the labels' shape), the mean is weighted:
    `sum_p w_p ce_p / sum_p w_p`, so a loss can count only some positions
    (zero weights for padding, or for the half of a sequence that is not
    predicted). Weights that sum to zero give a NaN loss.
  }];
  let arguments = (ins Attn_FloatTensor:$logits, Attn_TokenTensor:$labels,
      Optional<Attn_FloatTensor>:$weights);
  let results = (outs Attn_FloatTensor:$loss);
  let assemblyFormat = [{
    $logits `,` $labels (`,` $weights^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_YieldOp : Attn_Op<"yield", [Pure, ReturnLike, Terminator,
    ParentOneOf<["AttentionOp", "AttentionBackwardOp", "RingAttentionOp",
                 "RingAttentionBackwardOp", "MultiHeadAttentionOp", "ResidualOp",
                 "ReversibleOp"]>]> {
  let summary = "yields the value of an attn block's region";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

include "dialects/Attn/IR/AttnTrainingOps.td"
include "dialects/Attn/IR/AttnCollectiveOps.td"

#endif // LCC_DIALECT_ATTN_IR_ATTNOPS
