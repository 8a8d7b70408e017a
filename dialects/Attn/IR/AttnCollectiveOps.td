//===- AttnCollectiveOps.td - ops among the ranks of a job -*- tablegen -*-===//
//
// Collectives: what a function computes together with the other processes
// (ranks) of a job that mpirun launched (docs/runtime.md, "Ranks"). They
// stay whole through lowering and run on the host, through the runtime's
// communicator, between the dispatches that produce and read their tensors.
// A job of one rank computes them as the identity.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COLLECTIVE_OPS
#define ATTN_COLLECTIVE_OPS

// The host program runs an op with this trait through the communicator,
// between the dispatches around it; lowering passes leave it whole.
def Attn_Collective : NativeOpTrait<"Collective"> {
  let cppNamespace = "::lcc::attn";
}

// A collective that moves bytes between ranks: the host program starts it
// and runs the commands after it while its bytes move, waiting where one
// reads them (lcc-schedule-transfers puts independent work in between).
def Attn_Transfer : NativeOpTrait<"Transfer"> {
  let cppNamespace = "::lcc::attn";
}

def Attn_ReductionKind : I32EnumAttr<"ReductionKind",
    "How a collective combines the ranks' values", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Mean", 1, "mean">
    ]> {
  let cppNamespace = "::lcc::attn";
}

def Attn_AllReduceOp : Attn_Op<"all_reduce", [Pure, Attn_Collective,
    Attn_Transfer,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "tensors combined element by element over the ranks of a job";
  let description = [{
    Result `i` is operand `i` summed (`sum`) or averaged (`mean`) element
    by element over every rank of the job, the same on every rank; on one
    rank it is the operand. Every rank must reach the same all-reduces in
    the same order, as ranks running one artifact do. The train step
    averages its loss and gradients this way (data parallelism: each rank
    a share of the batch). Its gradient is the same all-reduce of the
    results' gradients (every rank's copy of a result counts).

    ```mlir
    %r:2 = attn.all_reduce mean %loss, %grad : tensor<f32>, tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Attn_ReductionKind:$reduction,
      Variadic<RankedTensorOf<[F32]>>:$values);
  let results = (outs Variadic<RankedTensorOf<[F32]>>:$reduced);
  let assemblyFormat = [{
    $reduction $values attr-dict `:` type($values)
  }];
  let hasVerifier = 1;
}

def Attn_AllToAllOp : Attn_Op<"all_to_all", [Pure, Attn_Collective,
    Attn_Transfer,
    SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "one block of a tensor to each rank of a job, one from each";
  let description = [{
    The operand's leading dimension has one block per rank of the job (P
    blocks in a job of P ranks; the runtime refuses any other count). Rank
    r's block j becomes block r of rank j's result: the exchange that moves
    attention from a share of the sequence for every head to the whole
    sequence for a share of the heads and back (DeepSpeed-Ulysses). The
    exchange is its own transpose, so its gradient is the same exchange of
    the result's gradient. On one rank (one block) it is the identity.

    ```mlir
    %heads = attn.all_to_all %q : tensor<2x1x4x256x32xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$value);
  let results = (outs RankedTensorOf<[F32]>:$exchanged);
  let assemblyFormat = [{ $value attr-dict `:` type($value) }];
  let hasVerifier = 1;
}

def Attn_RingShiftOp : Attn_Op<"ring_shift", [Pure, Attn_Collective,
    Attn_Transfer,
    SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "a tensor passed `offset` ranks on around the ring of a job";
  let description = [{
    Rank r's result is the operand of rank (r - offset) mod P in a job of P
    ranks: each rank sends its tensor to rank (r + offset) mod P and
    receives one of the same shape, as ring attention passes blocks of keys
    and values. Its gradient passes the result's gradient back the other
    way (offset negated). On one rank it is the identity.

    ```mlir
    %kv = attn.ring_shift %k by 1 : tensor<1x4x256x32xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$value, I64Attr:$offset);
  let results = (outs RankedTensorOf<[F32]>:$shifted);
  let assemblyFormat = [{
    $value `by` $offset attr-dict `:` type($value)
  }];
  let hasVerifier = 1;
}

def Attn_RankSliceOp : Attn_Op<"rank_slice", [Pure, Attn_Collective,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "this rank's block of a tensor every rank holds";
  let description = [{
    The operand's leading dimension has one block per rank of the job (P in
    a job of P ranks; the runtime refuses any other count); rank r's result
    is block r, its leading dimension 1. Context parallelism takes each
    rank's share of the learned positions and its heads' parameters this
    way, and ring attention its blocks' positions, the tables of which
    of their key tiles a mask hides and its chunk pairs' query offsets. Its gradient is attn.rank_pad.

    ```mlir
    %mine = attn.rank_slice %pos : tensor<2x1x256x128xf32> -> tensor<1x1x256x128xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, I64, I32, I8]>:$value);
  let results = (outs RankedTensorOf<[F32, I64, I32, I8]>:$slice);
  let assemblyFormat = [{
    $value attr-dict `:` type($value) `->` type($slice)
  }];
  let hasVerifier = 1;
}

def Attn_RankPadOp : Attn_Op<"rank_pad", [Pure, Attn_Collective,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "a block put at this rank's place among zeros";
  let description = [{
    The result has one block per rank along its leading dimension (P in a
    job of P ranks; the runtime refuses any other count): block r of rank
    r's result is the operand (leading dimension 1), every other block
    zero. The transpose of attn.rank_slice, and its gradient.

    ```mlir
    %g = attn.rank_pad %d : tensor<1x1x256x128xf32> -> tensor<2x1x256x128xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$value);
  let results = (outs RankedTensorOf<[F32]>:$padded);
  let assemblyFormat = [{
    $value attr-dict `:` type($value) `->` type($padded)
  }];
  let hasVerifier = 1;
}

def Attn_RingAttentionOp : Attn_Op<"ring_attention", [Pure,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["expandForDifferentiation", "buildVectorJacobianProduct",
         "getUnitIntervalOperands"]>]> {
  let summary = "dense attention over a sequence split over the ranks";
  let description = [{
    What `attn.attention` (no shared QK) computes over the whole
    sequence, when each of `ranks` ranks holds the queries, keys and values
    of its share of the positions (`[batch, heads, seq / ranks, dim]`;
    rank r chunks r and 2P - 1 - r of 2P equal chunks, as
    `attn-context-parallel` lays shares out): ring attention. The keys and
    values pass around the ranks, each rank's queries attend each block as
    it arrives, and the partial results are merged by their logsumexps;
    with `causal`, each step attends the two chunk pairs the positions
    allow, the same work on every rank. The `mask` and `score` regions (as
    `attn.attention`'s) see positions in the whole sequence: each step's
    attention gets its queries' and its block's positions, and causality
    compares them too. `logsumexp` (optional) is each
    query's over the whole sequence. `attn-expand-ring-attention` writes
    it as `attn.attention`, `attn.ring_shift` and `attn.merge_partials`
    before lowering; its gradient, `attn.ring_attention_backward`, passes
    the keys and values around again instead of keeping every block.

    With `form` (an attention op's name) each step attends with that form
    instead: relative (Transformer-XL) and adaptive-span attention, whose
    distances count from where queries and keys sit. `form_operands` are
    its operands after query, key and value (relative's encodings and
    biases, adaptive span's z: the same on every rank) and
    `form_attributes` its attributes; `causal` says whether the form is.
    Each step attends the pairs of a query chunk and a key chunk, each as
    the form with its queries placed at the chunks' distance (its
    `query_offset`, a constant per rank cut to this rank's): causal, the
    three that come in order (a share's early chunk is before every late
    one), else all four; pairs a span hides visit no tile.

    ```mlir
    %o = attn.ring_attention %q, %k, %v {causal = true, ranks = 4 : i64}
        : (tensor<1x4x256x32xf32>, tensor<1x4x256x32xf32>,
           tensor<1x4x256x32xf32>) -> tensor<1x4x256x32xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$query,
      RankedTensorOf<[F32]>:$key, RankedTensorOf<[F32]>:$value,
      Variadic<RankedTensorOf<[F32]>>:$form_operands,
      DefaultValuedAttr<Attn_BoolFlag, "false">:$causal,
      OptionalAttr<F32Attr>:$scale, I64Attr:$ranks,
      OptionalAttr<StrAttr>:$form,
      OptionalAttr<DictionaryAttr>:$form_attributes);
  let results = (outs RankedTensorOf<[F32]>:$result,
      Optional<RankedTensorOf<[F32]>>:$logsumexp);
  let regions = (region VariadicRegion<MaxSizedRegion<1>>:$modifiers);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`form_operands` `(` $form_operands^ `)`)? attr-dict `:`
    functional-type(operands, results) custom<AttentionModifiers>($modifiers)
  }];
  let hasVerifier = 1;
}

def Attn_RingAttentionBackwardOp
    : Attn_Op<"ring_attention_backward", [Pure]> {
  let summary = "gradients of ring attention";
  let description = [{
    Given the operands and attributes of an `attn.ring_attention`, its
    `result` and `logsumexp` (over the whole sequence) and the result's
    gradient, returns the gradients with respect to the rank's queries,
    keys and values, as ring attention's backward computes them: the keys
    and values pass around the ranks again, each block's gradients come
    from the flash backward with the whole sequence's result and
    logsumexp (`attn.attention_backward`: the probabilities of a block are
    exp(s - L) with L over every key), and each block's key and value
    gradients go back to the rank that holds the block. Its regions are
    the forward's. With a `form`, each chunk pair's backward is the form's
    (its `_backward` op at the pair's query offset) and the gradients of
    `form_operands` (this rank's part of them) are the last results.
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$query,
      RankedTensorOf<[F32]>:$key, RankedTensorOf<[F32]>:$value,
      RankedTensorOf<[F32]>:$result, RankedTensorOf<[F32]>:$logsumexp,
      RankedTensorOf<[F32]>:$result_grad,
      Variadic<RankedTensorOf<[F32]>>:$form_operands,
      DefaultValuedAttr<Attn_BoolFlag, "false">:$causal,
      OptionalAttr<F32Attr>:$scale, I64Attr:$ranks,
      OptionalAttr<StrAttr>:$form,
      OptionalAttr<DictionaryAttr>:$form_attributes);
  let results = (outs RankedTensorOf<[F32]>:$query_grad,
      RankedTensorOf<[F32]>:$key_grad, RankedTensorOf<[F32]>:$value_grad,
      Variadic<RankedTensorOf<[F32]>>:$form_operand_grads);
  let regions = (region VariadicRegion<MaxSizedRegion<1>>:$modifiers);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $result `,` $logsumexp `,` $result_grad
    (`form_operands` `(` $form_operands^ `)`)? attr-dict `:`
    functional-type(operands, results) custom<AttentionModifiers>($modifiers)
  }];
  let hasVerifier = 1;
}

#endif // ATTN_COLLECTIVE_OPS
