//===- Passes.td - lcc passes ------------------------------*- tablegen -*-===//
//
// Every lcc pass but the attention forms' rewrites (each in its form's
// folder, forms/<form>/Passes.td): one definition here, one .cpp file of
// the same name, one lit test in test/passes/ named after the flag.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_PASSES
#define LCC_PASSES_PASSES

include "mlir/Pass/PassBase.td"

def SelectForm : Pass<"attn-select-form", "mlir::ModuleOp"> {
  let summary = "choose each attention's form by a cost model (--attention=auto)";
  let description = [{
    Decides, per `attn.attention`, between keeping it dense and rewriting
    it to one of the registered attention forms named by `forms` (default
    `lsh`; a plugin's form once loaded), and emits a remark with the choice
    and the estimates behind it. Besides the options below, it takes the
    flags of the registered forms under lcc's names (`lsh-hashes`,
    `lsh-bucket-size`, `lsh-hash`, `lsh-threshold`, ...): a chosen form is
    built as they say. The policy:

    * Each candidate form estimates the op's FLOPs and bytes, or says why
      it does not apply. The op takes the candidate with the fewest FLOPs,
      provided that is fewer than dense attention's and its bytes fit
      `memory-budget` (0: no budget); otherwise it stays dense and the
      remark gives each candidate's reason.
    * An op with a mask or score region stays dense: only dense (flash)
      attention honours them.
    * Sparse and routed attention register no estimate, so they are never
      chosen automatically: their patterns change which tokens a model
      sees, a modelling decision (`--attention=sparse|routed`).
    * LSH applies to shared-QK attention only (it hashes one set of vectors
      as both queries and keys). A sequence shorter than `lsh-threshold`
      (default 4096) stays dense: measured on this project's CPU code, LSH-4
      and dense attention take about the same time at 1024 tokens, and
      users of every LSH implementation report LSH slower below a few
      thousand tokens. Dense FLOPs are `4 * batch * heads * seq^2 *
      head_dim` (halved if causal); LSH FLOPs are `batch * heads * n_hashes
      * (seq * head_dim * n_buckets + 8 * seq * bucket_size * head_dim)`
      (hashing and the chunks with look-back). Bytes count the operands and
      result, plus for LSH the per-round outputs and the bucket, sort and
      inverse indices. Dense attention's flash form needs no seq^2 buffer,
      so its bytes are the operands and result only.
  }];
  let options = [
    ListOption<"forms", "forms", "std::string",
               "Registered forms auto may choose (default: lsh)">,
    Option<"memoryBudget", "memory-budget", "int64_t",
           /*default=*/"::lcc::knobs::kMemoryBudget.defaultValue",
           "Bytes an attention may use (0: no limit)">,
    Option<"seed", "seed", "int64_t",
           /*default=*/"::lcc::knobs::kSeed.defaultValue",
           "Seed of the first chosen attention's randomness">,
    Option<"formOptions", "form-options", "std::string", /*default=*/"\"\"",
           "Options of a chosen plugin form, in pass-option syntax">,
  ];
}

def InsertReversible : Pass<"attn-insert-reversible", "mlir::ModuleOp"> {
  let summary = "make stacks of residual blocks reversible (RevNet)";
  let description = [{
    Reformer's reversible layers (docs/design.md §4, `lcc --reversible`). In
    each function, a stack of `attn.residual` blocks that each feed only
    the next, alternating an attention block (its body holds attention of
    any form) and a feed-forward block (its body holds an
    `attn.feed_forward`), becomes a stack of `attn.reversible` blocks, F
    the attention body and G the feed-forward body: `y1 = x1 + F(x2)`,
    `y2 = x2 + G(y1)`. The stack's input enters both streams and the
    streams leave it as their mean, `(y1 + y2) * 0.5`, as reformer-pytorch
    merges them. This is a different network from the residual one (the
    reversible form of it), so the pass runs only when asked; each stack
    rewritten or kept gets a remark, a kept one naming the op that stopped
    it. Blocks written as `attn.reversible` are kept. The train step
    (`attn-generate-train-step`) then recomputes each block's inputs from
    its outputs instead of storing its activations.

    Before:

    ```mlir
    %a = attn.residual %x : tensor<1x64x16xf32> { ... attention ... }
    %y = attn.residual %a : tensor<1x64x16xf32> { ... attn.feed_forward ... }
    ```

    After:

    ```mlir
    %r:2 = attn.reversible %x, %x : tensor<1x64x16xf32>, tensor<1x64x16xf32>
      f { ... attention ... } g { ... attn.feed_forward ... }
    %s = arith.addf %r#0, %r#1 : tensor<1x64x16xf32>
    %y = arith.mulf %s, %half : tensor<1x64x16xf32>
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def ExpandRingAttention : Pass<"attn-expand-ring-attention",
                               "mlir::ModuleOp"> {
  let summary = "write ring attention out in exchanges and attention on blocks";
  let description = [{
    The first pass of lowering to linalg: each `attn.ring_attention` (what
    `attn-context-parallel` makes of dense attention) becomes the ring's
    steps: the keys and values passed one rank on (`attn.ring_shift`),
    `attn.attention` on each block with its logsumexp, and the partial
    results merged (`attn.merge_partials`); causal attention on the zigzag
    shares attends two chunk pairs a step, the pair a rank's own chosen by
    `attn.gate_select` on a per-rank constant (`attn.rank_slice`). A ring
    with a form (relative, adaptive span) attends each step's chunk pairs
    as that form, its queries placed at the chunks' distance (the form's
    `query_offset`, a per-rank constant). Each
    `attn.ring_attention_backward` passes the keys and values around again
    and runs `attn.attention_backward` (the form's backward) on each block
    with the whole sequence's result and logsumexp, sending each block's
    key and value gradients back to the rank that holds it.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::tensor::TensorDialect"];
}

def ContextParallel : Pass<"attn-context-parallel", "mlir::ModuleOp"> {
  let summary = "split one sequence over the ranks of a job";
  let description = [{
    Context parallelism (`lcc --context-parallel=P`, docs/training.md):
    every function that attends takes rank r's share of the positions
    (chunks r and 2P - 1 - r of 2P equal chunks: zigzag, so that causal
    attention's work is the same on every rank) of each argument [B, L,
    ...] that holds the sequence, and returns its share of each result
    that holds it (arguments and results marked `attn.split_dim`, which the
    artifact records). Its blocks are flattened as for the train step; the
    ops that work position by position run on the share as they are;
    learned positions [1, L, width] are cut to the share (attn.rank_slice);
    every attention form is split as its AttentionFormInterface says
    (getSequenceSplit). Dense attention (with its regions), relative and
    adaptive-span attention run as ring attention: keys and values passed
    around the ranks (attn.ring_shift), each block's partial result merged
    by the logsumexps (attn.merge_partials). Every other form, and every
    form with
    `over-heads`, is split over the heads (DeepSpeed-Ulysses): its
    sequence operands exchanged all-to-all for the whole sequence of the
    rank's H / P heads, its per-head operands cut to them, and its results
    exchanged back. A cross-entropy loss, the mean over the share's
    positions, is averaged over the ranks (attn.all_reduce), so that every
    rank holds the whole sequence's loss and the train step's gradients,
    averaged over the ranks, are the whole sequence's. The sequence must
    divide by 2P and the heads of an attention split over them by P;
    anything else that reads the
    positions (memories of earlier segments, a mask reading the head
    number, a weighted loss, an op that mixes positions) is an error
    naming it. One rank changes nothing.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"1",
           "Ranks the sequence is split over">,
    Option<"overHeads", "over-heads", "bool", /*default=*/"false",
           "Split every attention over the heads, dense attention too">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def ChunkFeedForward : Pass<"attn-chunk-ff", "mlir::ModuleOp"> {
  let summary = "run every feed-forward in chunks of positions";
  let description = [{
    Reformer's feed-forward chunking (docs/design.md §4, `lcc --ff-chunks=N`):
    every `attn.feed_forward` gets `chunks = N`, so its `batch * seq`
    positions run in N chunks and the `[positions / N, d_ff]` intermediate
    exists for one chunk at a time, in the forward and in the train step's
    backward (which recomputes each chunk's hidden activations). The
    memory planner gives every chunk's intermediate the same bytes. The
    result is unchanged but for rounding. More chunks than a sequence's
    positions is an error; a feed-forward written with another chunk count
    gets a remark.

    With `attention-chunks` (`lcc --attention-chunks=N`), every
    `attn.lsh_attention` gets `chunks = N` too: its `batch * heads` rows
    are hashed, sorted and attended in N groups one after another, forward
    and backward, so its sorted copies and per-round outputs exist for one
    group at a time (Reformer's attention chunking; the result is the same
    bit for bit). Dense, sparse and routed attention already work tile by
    tile and are left alone. More chunks than rows is an error.
  }];
  let options = [
    Option<"chunks", "chunks", "int64_t",
           /*default=*/"::lcc::knobs::kFeedForwardChunks.defaultValue",
           "Chunks of positions per feed-forward (0: as written)">,
    Option<"attentionChunks", "attention-chunks", "int64_t",
           /*default=*/"::lcc::knobs::kAttentionChunks.defaultValue",
           "Groups of batch * heads rows per LSH attention (0: as written)">,
  ];
}

def GenerateTrainStep : Pass<"attn-generate-train-step", "mlir::ModuleOp"> {
  let summary = "differentiate a loss function into a train step";
  let description = [{
    Reverse-mode differentiation at the attn level (docs/design.md §4, §6). The
    function named `function` (default `loss`), whose first result is a 0-d
    f32 loss, is differentiated with respect to every `attn.param` it uses:
    its blocks are flattened (residual blocks inlined, a
    multi-head block split into projections, `attn.split_heads`, its
    attention, `attn.merge_heads` and the output projection), every
    attention saves its logsumexp, and the ops are visited last to first,
    each emitting its backward op (`attn.attention_backward`,
    `attn.linear_backward`, ...). A reversible block is differentiated as
    RevNet does (`recompute-reversible`, the default): its inputs are
    recomputed from its outputs, `x2 = y2 - G(y1)`, `x1 = y1 - F(x2)`, the
    outputs being the next block's recomputed inputs, and its regions are
    cloned on them (marked `lcc.recomputed`) and differentiated there, so no
    activation of a block lives from the forward into the backward. Hashing
    and routing replay identically: they depend only on their inputs and
    seeds. Sparse attention is differentiated as the
    masked attention it equals; LSH and routed attention recompute their
    hashing or routing in their backward (`attn.lsh_attention_backward`,
    `attn.routed_attention_backward`), which is not differentiated.

    A routed attention's centroids get no gradient: when they are an
    `attn.param`, `train_step` moves them by the Routing Transformer's
    exponential moving average (`attn.routed_centroid_update`, decay
    `centroid-decay`) of the unit queries and keys assigned to each.

    The new function `train_step` takes the loss function's arguments,
    clips the gradients by their global norm (while `optimizer.grad_clip`
    > 0), applies `sgd` (`p -= lr * g`) or `adam` (torch.optim.Adam, AdamW
    with `weight-decay`; its moments `adam.m.NAME`, `adam.v.NAME` and step
    count `adam.step` are `attn.param {state}`), writes every new value with
    `attn.assign` and returns the loss, then the loss function's other
    results: state such as a Transformer-XL's new memories, which is not
    differentiated (gradients stop at a memory, an argument). With
    `emit-gradients`, a function `FUNC_gradients` returning the loss and
    every gradient (results named after their parameters) is kept too. Every other function is left as
    it is.

    The hyper-parameters are not constants of the code but state of their
    own, 0-d `attn.param {state, initial = ...}` that start at the pass's
    options: `optimizer.lr`, `optimizer.weight_decay`,
    `optimizer.grad_clip`, and Adam's `optimizer.beta1`, `optimizer.beta2`,
    `optimizer.epsilon`. A trainer sets them between steps (lcc-train's
    `--lr` and schedule) without recompiling.

    With `accumulate-gradients`, `accumulate_step` (the train step's
    arguments and results) adds the gradients of its batch to state
    `optimizer.accumulated.NAME`, updating nothing else, and `train_step`
    updates with `(its own gradients + the accumulated ones) *
    optimizer.gradient_scale` (1/K after K-1 accumulate_steps; starts at
    1) and sets the sums back to zero.

    Before:

    ```mlir
    func.func @loss(%x: tensor<2x8x16xf32>, %labels: tensor<2x8xi32>) -> tensor<f32> {
      %w = attn.param "w" : tensor<16x4xf32>
      %y = attn.linear %x, %w : (...) -> tensor<2x8x4xf32>
      %l = attn.softmax_cross_entropy %y, %labels : (...) -> tensor<f32>
      return %l : tensor<f32>
    }
    ```

    After (`optimizer=sgd lr=0.1`), beside `@loss`:

    ```mlir
    func.func @train_step(%x: tensor<2x8x16xf32>, %labels: tensor<2x8xi32>) -> tensor<f32> {
      ... the forward, then
      %dy = attn.softmax_cross_entropy_backward %y, %labels, loss_grad %one : ...
      %dx, %dw = attn.linear_backward %x, %w, %dy : ...
      %lr = attn.param "optimizer.lr" {initial = 1.000000e-01 : f32, state} : tensor<f32>
      %wd = attn.param "optimizer.weight_decay" {initial = 0.000000e+00 : f32, state} : tensor<f32>
      %clip = attn.param "optimizer.grad_clip" {initial = 0.000000e+00 : f32, state} : tensor<f32>
      %g = attn.clip_by_global_norm %dw max_norm %clip : ...
      %new = attn.sgd_update %w, %g lr %lr weight_decay %wd : tensor<16x4xf32>, tensor<f32>
      attn.assign "w", %new : tensor<16x4xf32>
      return %l : tensor<f32>
    }
    ```
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"loss\"",
           "The function to differentiate; its first result is the loss">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adam\"",
           "sgd or adam">,
    Option<"lr", "lr", "double",
           /*default=*/"::lcc::knobs::kLearningRate.defaultValue",
           "Learning rate">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "Adam's first-moment decay">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "Adam's second-moment decay">,
    Option<"epsilon", "epsilon", "double", /*default=*/"1e-8",
           "Adam's denominator floor">,
    Option<"weightDecay", "weight-decay", "double",
           /*default=*/"::lcc::knobs::kWeightDecay.defaultValue",
           "Decoupled weight decay (AdamW); L2 decay for sgd">,
    Option<"gradClip", "grad-clip", "double",
           /*default=*/"::lcc::knobs::kGradClip.defaultValue",
           "Clip gradients to this global L2 norm; 0 does not clip">,
    Option<"centroidDecay", "centroid-decay", "double",
           /*default=*/"::lcc::knobs::kCentroidDecay.defaultValue",
           "Decay of the moving average that trains routed attention's "
           "centroids">,
    Option<"emitGradients", "emit-gradients", "bool", /*default=*/"false",
           "Also keep FUNC_gradients, returning the loss and every gradient">,
    Option<"accumulateGradients", "accumulate-gradients", "bool",
           /*default=*/"false",
           "Also add accumulate_step, which sums the gradients of a batch "
           "into optimizer state that train_step's update then includes: "
           "gradient accumulation over micro-batches (one more buffer the "
           "size of the parameters)">,
    Option<"recomputeReversible", "recompute-reversible", "bool",
           /*default=*/"true",
           "Recompute each reversible block's inputs from its outputs in the "
           "backward (false: store its activations, as any block)">,
    Option<"gradientBucketBytes", "gradient-bucket-bytes", "int64_t",
           /*default=*/"4 << 20",
           "Over ranks, average the gradients in buckets of about this many "
           "bytes, each as soon as the backward has computed it, so that it "
           "is reduced while the backward goes on (0: one all-reduce after "
           "the backward)">,
  ];
}

def GenerateDecodeStep : Pass<"attn-generate-decode-step", "mlir::ModuleOp"> {
  let summary = "compile a causal model into prefill and a cached decode step";
  let description = [{
    Generation without recomputing the sequence (docs/generation.md, `lcc
    --decode`). From `function` (default `forward`: tokens `[B, L]` i32 to
    logits `[B, L, V]`), whose blocks are flattened as for the train step,
    two functions beside it:

    * `prefill(tokens [B, L]) -> logits [B, L, V]`: the forward, which
      also writes every attention's keys and values, `[B, H, L, d]`, to
      caches that are state of the module (`attn.param
      "decode.cache.N.key" {state}`, `.value`; the loaded module keeps them
      between calls);
    * `decode_step(token [B, 1] i32, position [1, 1] i32) -> logits [B, 1,
      V]`: the model at one position: each op runs on the one new token,
      learned positions are read at `position`, and each attention writes
      the new key and value to row `position` of its caches and attends
      over rows `0..position` of them (flash attention from the query's
      position: only the key tiles up to it are read).

    The caches hold `max-cache` positions (0: L; more than L only for a
    model without learned positions), in whole key tiles; the position's
    valid range is theirs. A prompt shorter than L is padded, its padding
    overwritten by the decode steps that follow (causal attention never
    lets a position see a later one). Each attention is cached as its form
    says (the registry's fillDecodeCaches / buildDecodeStep: dense, sparse,
    LSH, routed with trained centroids); relative and adaptive-span
    attention over [memory; segment] cache the memory's keys and values
    before the segment's.

    A function that carries memories (`forward(tokens, memories...) ->
    (logits, next memories...)`, Transformer-XL) keeps them as prefill's
    inputs; the step returns the logits and its row of each next memory
    that is per position (`<memory>.row`), computing only what those need.
    What the step reads that weights alone compute is computed by prefill
    and cached (`decode.cache.invariant.N`). An attention without a cached
    form, or an op that mixes positions, is one error naming it.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"forward\"",
           "The causal model function: tokens [B, L] i32 -> logits [B, L, V]">,
    Option<"maxCache", "max-cache", "int64_t", /*default=*/"0",
           "Positions the caches hold; 0: the function's sequence length">,
  ];
}

def HalfPrecisionAttention : Pass<"attn-half-precision-attention",
                                  "mlir::ModuleOp"> {
  let summary = "compute f32 attention in bf16 or f16 (mixed precision)";
  let description = [{
    `lcc --attention-precision=bf16|f16`: the attention cores of an f32
    model compute in a half type while everything else (parameters,
    projections, feed-forwards, norms, the loss, the optimizer and its
    state) stays f32, as PyTorch's autocast runs FlashAttention. Runs
    after the train and decode steps are made, so the forward and its
    backward are rewritten alike: each `attn.attention` (shared-QK too: its
    keys, the unit queries, normalised in f32 and rounded),
    `attn.sparse_attention`, `attn.adaptive_span_attention`,
    `attn.relative_attention`, `attn.lsh_attention` and
    `attn.routed_attention` on f32 and their backward ops get their tensor
    operands (relative attention's encodings and biases and routed
    attention's centroids too) rounded to the half type
    (`arith.truncf`) and compute in it (products on half pairs with f32
    sums, softmax and logsumexp in f32, the probabilities and score
    gradients rounded for their products, FlashAttention-2's way); their
    tensor results are widened back (`arith.extf`). The logsumexp (adaptive span's log
    normaliser), the span `z` and its gradient stay f32.

    Mask and score regions keep working on f32 scores. Attention the half
    lowering does not compute (ring attention) stays f32; the pass says so in one warning
    naming the first such op and how many there are. A model with no
    attention it can rewrite is an error.

    Before:

    ```mlir
    %o = attn.attention %q, %k, %v : (tensor<1x2x64x16xf32>, ...) -> tensor<1x2x64x16xf32>
    ```

    After:

    ```mlir
    %qh = arith.truncf %q : tensor<1x2x64x16xf32> to tensor<1x2x64x16xbf16>
    ...
    %oh = attn.attention %qh, %kh, %vh : (tensor<1x2x64x16xbf16>, ...) -> tensor<1x2x64x16xbf16>
    %o = arith.extf %oh : tensor<1x2x64x16xbf16> to tensor<1x2x64x16xf32>
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "The half type attention computes in: bf16 or f16">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def LowerToLinalg : Pass<"attn-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "lower attn ops to linalg, tensor, arith, math and scf";
  let description = [{
    Rewrites every op of the attn dialect into upstream ops on tensors:

    * `attn.param` becomes a function argument carrying its name in the
      `attn.param` argument attribute, so the artifact writer can bind it by
      name; two params of one name share one argument.
    * Block ops (`attn.residual`, `attn.reversible`,
      `attn.multi_head_attention`) are inlined; the head split and merge of
      the attention block are folded into its projections, which contract
      `[batch, seq, d_model]` with a `[d_model, heads, head_dim]` view of the
      weight directly, so no transpose is materialised.
    * `attn.attention` becomes the tiled online-softmax (flash) form: an
      `scf.forall` over (batch, heads, query tiles) whose body walks the key
      tiles with an `scf.for`, keeping the running row maximum, row sum and
      accumulator. Only a `query-tile x key-tile` block of scores exists at a
      time, so memory is O(seq), never O(seq²). Causal attention stops at the
      last key tile a query tile can see. A sequence that is not a multiple of
      the tile is padded, and the padded keys are masked.
    * `attn.feed_forward` with `chunks > 1` computes the batch * seq
      positions in that many slices of rows, one after another, so only one
      slice's `[rows, d_ff]` activations need to be live at a time.

    * `attn.sparse_attention` is lowered as the masked attention it equals:
      its pattern becomes a mask region, whose block table (tiles of
      `block` queries and keys) skips every key tile the pattern hides from
      a whole query tile and leaves unmasked the tiles it shows whole.
      Where a small stride shows a key in every tile (fixed: a stride of
      at most twice the block; strided: any) over whole windows (bf16:
      each part's key tile even), it is split into two parts over keys
      that fill whole tiles, each masked flash attention with its
      logsumexp, combined by them: fixed, each window's own keys and the
      summary columns gathered into a key set (the query's own window
      hidden there); strided, the band |i - j| < stride and each residue
      mod stride as a head of its own (less the query itself). A remark
      says which, or why not.

    * The ops of every other registered attention form (a plugin's) are
      lowered by the patterns the form registers.

    * `attn.lsh_attention` (Reformer) becomes four parallel steps over
      `[batch * heads, seq, dim]` views: hashing (argmax over the
      projections onto rotations drawn at compile time from `seed`),
      a stable counting sort by bucket per (row, round) with its inverse,
      attention within chunks of `bucket_size` sorted tokens and the
      previous chunk over gathered rows (self score -1e5, causal and padding
      masks, per-row logsumexp), and a combine that undoes the sort and
      weights the rounds by their logsumexp. A seq that is not a multiple of
      `2 * bucket_size` is padded; padded tokens get a bucket of their own.

    * `attn.routed_attention` (Routing Transformer) becomes: centroids (the
      operand, unit-normalised, or three k-means iterations over the unit
      queries and keys from keys picked with `seed`), each query's nearest
      centroid, each cluster's `window` nearest keys (the window-th largest
      cosine found by bisection, ties by position), queries sorted by
      cluster, tiles of 64 sorted queries attending cluster by cluster to
      their clusters' keys with the dense scores, and an inverse gather. A
      query whose window holds no visible key (causal) gets zeros.

    An op that no pattern lowers (dynamic shapes) fails the pass with an
    error naming it.

    Before:

    ```mlir
    %o = attn.attention %q, %k, %v {causal = true}
        : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>,
           tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32>
    ```

    After (abridged):

    ```mlir
    %o = scf.forall (%b, %h, %t) in (1, 8, 16) shared_outs(%out = %init) {
      %qt = tensor.extract_slice %q[%b, %h, %t * 64, 0] [1, 1, 64, 64] [1, 1, 1, 1]
      %r:3 = scf.for %kt = %c0 to %last step %c1
          iter_args(%max = %m0, %sum = %l0, %acc = %a0) -> (...) {
        %s = linalg.generic ... // q kᵀ for one 64 x 64 block
        ...                     // mask, running max, exp, rescale, p v
      }
      ...
      scf.forall.in_parallel { tensor.parallel_insert_slice ... }
    }
    ```
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect"
  ];
  let options = [
    Option<"queryTile", "query-tile", "int64_t",
           /*default=*/"::lcc::knobs::kQueryTile.defaultValue",
           "Queries per tile of the flash attention form (0: 64)">,
    Option<"keyTile", "key-tile", "int64_t",
           /*default=*/"::lcc::knobs::kKeyTile.defaultValue",
           "Keys per tile of the flash attention form (0: 64)">,
  ];
}

#endif // LCC_PASSES_PASSES
