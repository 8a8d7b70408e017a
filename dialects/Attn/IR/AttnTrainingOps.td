//===- AttnTrainingOps.td - ops of the train step ----------*- tablegen -*-===//
//
// What attn-generate-train-step writes: the backward of each model op (its
// vector-Jacobian product, one op per forward op so every form keeps an
// efficient lowering of its own), the head split and merge that a
// multi-head block is differentiated through, the optimizer updates and the
// write of a parameter's new value. Included by AttnOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_DIALECT_ATTN_IR_ATTNTRAININGOPS
#define LCC_DIALECT_ATTN_IR_ATTNTRAININGOPS

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

def Attn_AttentionBackwardOp : Attn_Op<"attention_backward", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "gradients of dense, masked or score-modified attention";
  let description = [{
    Given the operands of an `attn.attention` (its `positions` too) with the
    same attributes and regions, its `result` `o`, its `logsumexp` `L` and the gradient of the
    loss with respect to the result `do`, returns the gradients with respect
    to query, key and value (FlashAttention-2's backward):

    `p_ij = exp(s_ij - L_i)`, `dv_j = sum_i p_ij do_i`,
    `ds_ij = p_ij (do_i · v_j - do_i · o_i)`, `dq_i = sum_j ds_ij ∂s_ij/∂q_i`,
    `dk_j = sum_i ds_ij ∂s_ij/∂k_j`,

    where `s` is the scaled, modified score (the score region is
    differentiated too). Probabilities are recomputed tile by tile, never
    stored, and key tiles the mask hides are skipped as in the forward.

    With `shared_qk` there is no key gradient result: the keys are the
    normalised queries, and their gradient is folded into the query's
    (through the normalisation; the -1e5 self score is a constant).

    `logsumexp_grad` (optional, `[batch, heads, q_seq]`) is the gradient
    with respect to the forward's logsumexp, when something read it (ring
    attention's merge of partial results): since `∂L_i/∂s_ij = p_ij`, it
    adds `p_ij dL_i` to `ds_ij`, i.e. `ds_ij = p_ij (do_i · v_j - do_i · o_i
    + dL_i)`.
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
      Attn_FloatTensor:$value, Attn_FloatTensor:$result,
      Attn_FloatTensor:$logsumexp, Attn_FloatTensor:$result_grad,
      Optional<Attn_FloatTensor>:$logsumexp_grad,
      Variadic<RankedTensorOf<[I64]>>:$positions,
      DefaultValuedAttr<Attn_BoolFlag, "false">:$causal,
      OptionalAttr<F32Attr>:$scale,
      Attn_UnitFlag:$shared_qk);
  let results = (outs Attn_FloatTensor:$query_grad,
      Optional<Attn_FloatTensor>:$key_grad, Attn_FloatTensor:$value_grad);
  let regions = (region VariadicRegion<MaxSizedRegion<1>>:$modifiers);
  let assemblyFormat =
      "$query `,` $key `,` $value `,` $result `,` $logsumexp `,` $result_grad (`,` $logsumexp_grad^)? (`positions` `(` $positions^ `)`)? attr-dict `:` functional-type(operands, results) custom<AttentionModifiers>($modifiers)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The mask region, or null when the op has none.
    ::mlir::Region *getMaskRegion();
    /// The score region, or null when the op has none.
    ::mlir::Region *getScoreRegion();
    /// Where the queries sit in the whole sequence, or null.
    ::mlir::Value getQueryPositions() {
      return getPositions().empty() ? ::mlir::Value() : getPositions()[0];
    }
    /// Where the keys sit in the whole sequence, or null.
    ::mlir::Value getKeyPositions() {
      return getPositions().empty() ? ::mlir::Value() : getPositions()[1];
    }
  }];
}

def Attn_RelativeAttentionBackwardOp
    : Attn_Op<"relative_attention_backward", [Pure]> {
  let summary = "gradients of Transformer-XL relative attention";
  let description = [{
    Given the operands and attributes of an `attn.relative_attention`, its
    `result` `o`, its `logsumexp` `L` and the gradient of the loss with
    respect to the result `do`, returns the gradients with respect to all
    six operands. With `s_ij` the score, `t` the (clamped) distance,
    `p_ij = exp(s_ij - L_i)` and `ds_ij = p_ij (do_i · v_j - do_i · o_i)`:

    `dv_j = sum_i p_ij do_i`, `dk_j = sum_i ds_ij (q_i + u) scale`,
    `dq_i = sum_j ds_ij (k_j + pos[t]) scale`,
    `dpos[t] = sum over the pairs at distance t of ds_ij (q_i + w) scale`,
    `du = sum_i sum_j ds_ij k_j scale`, `dw = sum_i sum_j ds_ij pos[t] scale`
    (`du`, `dw` and `dpos` summed over the batch too).

    With `query_offset`, the queries sit where the forward's did.

    The lowering is the flash backward: probabilities are recomputed tile
    by tile from `L`, never stored. The position term's gradient is read
    along each tile pair's band of distances, as the forward wrote it.
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
      Attn_FloatTensor:$value, Attn_FloatTensor:$pos, Attn_FloatTensor:$u,
      Attn_FloatTensor:$w, Attn_FloatTensor:$result,
      Attn_FloatTensor:$logsumexp, Attn_FloatTensor:$result_grad,
      Optional<0DTensorOf<[I32]>>:$query_offset,
      OptionalAttr<F32Attr>:$scale,
      OptionalAttr<I64Attr>:$clamp_len,
      OptionalAttr<I64Attr>:$same_length);
  let results = (outs Attn_FloatTensor:$query_grad,
      Attn_FloatTensor:$key_grad, Attn_FloatTensor:$value_grad,
      Attn_FloatTensor:$pos_grad, Attn_FloatTensor:$u_grad,
      Attn_FloatTensor:$w_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $pos `,` $u `,` $w `,` $result `,`
    $logsumexp `,` $result_grad
    (`query_offset` `(` $query_offset^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_AdaptiveSpanAttentionBackwardOp
    : Attn_Op<"adaptive_span_attention_backward", [Pure]> {
  let summary = "gradients of adaptive-span attention";
  let description = [{
    Given the operands and attributes of an `attn.adaptive_span_attention`,
    its `result` `o`, its `log_normalizer` `N` and the gradient of the loss
    with respect to the result `do`, returns the gradients with respect to
    `query`, `key`, `value` and `z`. With `e_ij = exp(s_ij - N_i)` over the
    visible keys, `a'_ij = e_ij m(x)`, `dP_ij = do_i · v_j` and
    `D_i = do_i · o_i`:

    `dv_j = sum_i a'_ij do_i`,
    `ds_ij = e_ij (m(x) (dP_ij - D_i) - 1e-8 D_i)`,
    `dq_i = sum_j ds_ij k_j scale`, `dk_j = sum_i ds_ij q_i scale`,
    `dz_h = (max_span / ramp) sum over the ramp (span_h <= x < span_h + ramp)
    of e_ij (dP_ij - D_i)`, summed over the batch and queries. At a
    whole-number span, where a key sits on a kink of the ramp (`x = span_h`,
    where m reaches 1, or `x = span_h + ramp`, where it leaves 0), `dz` is
    the derivative from below, as `torch.clamp`'s is at `x = span_h`.

    With `query_offset`, the queries sit where the forward's did.

    The lowering is the flash backward: weights are recomputed tile by tile
    from `N`, never stored, and the tiles the forward skipped are skipped.
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
      Attn_FloatTensor:$value, Attn_FloatTensor:$z, Attn_FloatTensor:$result,
      Attn_FloatTensor:$log_normalizer, Attn_FloatTensor:$result_grad,
      Optional<0DTensorOf<[I32]>>:$query_offset,
      I64Attr:$max_span,
      DefaultValuedAttr<I64Attr, "32">:$ramp,
      DefaultValuedAttr<Attn_BoolFlag, "false">:$causal,
      OptionalAttr<F32Attr>:$scale);
  let results = (outs Attn_FloatTensor:$query_grad,
      Attn_FloatTensor:$key_grad, Attn_FloatTensor:$value_grad,
      Attn_FloatTensor:$z_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $z `,` $result `,` $log_normalizer `,`
    $result_grad (`query_offset` `(` $query_offset^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_LSHAttentionBackwardOp : Attn_Op<"lsh_attention_backward", [Pure]> {
  let summary = "gradients of Reformer LSH attention";
  let description = [{
    Given the operands and attributes of an `attn.lsh_attention`, its
    `result` and the gradient of the loss with respect to it, returns the
    gradients with respect to `query_key` and `value`. Tokens are hashed and
    sorted exactly as the forward did (the same rotations, from `seed`):
    hashing is piecewise constant, so it has no gradient, and gradients flow
    through the sort as a gather. Within each chunk the softmax attention is
    differentiated from its recomputed probabilities, and the combination
    of rounds by their logsumexp exactly (its gradient reaches each round's
    output and logsumexp). The keys are the normalised queries, so the key
    gradient is part of the query_key gradient.
  }];
  let arguments = (ins Attn_FloatTensor:$query_key, Attn_FloatTensor:$value,
      Attn_FloatTensor:$result, Attn_FloatTensor:$result_grad,
      I64Attr:$n_hashes,
      I64Attr:$bucket_size,
      DefaultValuedAttr<Attn_BoolFlag, "false">:$causal,
      DefaultValuedAttr<I64Attr, "0">:$seed,
      OptionalAttr<F32Attr>:$scale,
      DefaultValuedAttr<I64Attr, "1">:$chunks,
      Attn_UnitFlag:$factorized_hash,
      OptionalAttr<I64Attr>:$n_buckets);
  let results = (outs Attn_FloatTensor:$query_key_grad,
      Attn_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $query_key `,` $value `,` $result `,` $result_grad attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_RoutedAttentionBackwardOp
    : Attn_Op<"routed_attention_backward", [Pure]> {
  let summary = "gradients of Routing Transformer routed attention";
  let description = [{
    Given the operands and attributes of an `attn.routed_attention` and the
    gradient of the loss with respect to its result, returns the gradients
    with respect to query, key and value. The routing (centroids, each
    query's cluster, each cluster's window of keys) is recomputed exactly
    as the forward did: it is piecewise constant, so it is not
    differentiated, and the centroids get no gradient (training moves them
    by `attn.routed_centroid_update`). Gradients flow through the attended
    keys: each query's softmax over its cluster's window is differentiated
    from its recomputed probabilities, and a key in several windows sums
    what each gives it.
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
      Attn_FloatTensor:$value, Optional<Attn_FloatTensor>:$centroids,
      Attn_FloatTensor:$result_grad,
      I64Attr:$clusters,
      I64Attr:$window,
      DefaultValuedAttr<Attn_BoolFlag, "false">:$causal,
      DefaultValuedAttr<I64Attr, "0">:$seed,
      OptionalAttr<F32Attr>:$scale);
  let results = (outs Attn_FloatTensor:$query_grad,
      Attn_FloatTensor:$key_grad, Attn_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`centroids` $centroids^)? `,` $result_grad
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_MergePartialsBackwardOp
    : Attn_Op<"merge_partials_backward", [Pure]> {
  let summary = "gradients of a merge of partial attention results";
  let description = [{
    Given the operands of an `attn.merge_partials`, its results `o` and `L`
    and their gradients `do` and `dL`, returns the gradients with respect
    to the two partials and their logsumexps. With `w1 = exp(L1 - L)` and
    `w2 = exp(L2 - L)` (0 for a gated-off second):

    `do1 = w1 do`, `dL1 = w1 (dL + do · (o1 - o))`, and the same for the
    second.
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$first,
      RankedTensorOf<[F32]>:$first_logsumexp, RankedTensorOf<[F32]>:$second,
      RankedTensorOf<[F32]>:$second_logsumexp, RankedTensorOf<[F32]>:$result,
      RankedTensorOf<[F32]>:$logsumexp, RankedTensorOf<[F32]>:$result_grad,
      RankedTensorOf<[F32]>:$logsumexp_grad,
      Optional<RankedTensorOf<[F32]>>:$gate);
  let results = (outs RankedTensorOf<[F32]>:$first_grad,
      RankedTensorOf<[F32]>:$first_logsumexp_grad,
      RankedTensorOf<[F32]>:$second_grad,
      RankedTensorOf<[F32]>:$second_logsumexp_grad);
  let assemblyFormat = [{
    $first `,` $first_logsumexp `,` $second `,` $second_logsumexp `,`
    $result `,` $logsumexp `,` $result_grad `,` $logsumexp_grad
    (`gate` $gate^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_EmbeddingBackwardOp : Attn_Op<"embedding_backward", [Pure]> {
  let summary = "gradient of an embedding table";
  let description = [{
    `table_grad[v, :] = sum over positions p with tokens[p] == v of
    result_grad[p, :]` for `tokens: [batch, seq]` and `result_grad:
    [batch, seq, d_model]`; the result has the table's shape. A token
    outside the table is clamped, as in the forward.
  }];
  let arguments = (ins Attn_TokenTensor:$tokens,
      Attn_FloatTensor:$result_grad);
  let results = (outs Attn_FloatTensor:$table_grad);
  let assemblyFormat =
      "$tokens `,` $result_grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Attn_LayerNormBackwardOp : Attn_Op<"layer_norm_backward", [Pure]> {
  let summary = "gradients of layer normalisation";
  let description = [{
    For `y = x̂ · gamma + beta`, `x̂ = (x - mean) / sqrt(var + epsilon)` over
    the last dimension of size `n`: `dgamma = sum over rows of dy · x̂`,
    `dbeta = sum over rows of dy`, and with `g = dy · gamma`,
    `dx = (g - mean(g) - x̂ · mean(g · x̂)) / sqrt(var + epsilon)`.
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$gamma,
      Attn_FloatTensor:$result_grad,
      DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Attn_FloatTensor:$input_grad,
      Attn_FloatTensor:$gamma_grad, Attn_FloatTensor:$beta_grad);
  let assemblyFormat = [{
    $input `,` $gamma `,` $result_grad attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_LinearBackwardOp : Attn_Op<"linear_backward", [Pure]> {
  let summary = "gradients of an affine projection";
  let description = [{
    For `y = x · w + b` with `x: [..., in]`, `w: [in, out]`:
    `dx = dy · wᵀ`, `dw = sum over the leading positions of xᵀ dy` and, when
    the `bias_grad` result is present, `db = sum over positions of dy`.
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$weight,
      Attn_FloatTensor:$result_grad);
  let results = (outs Attn_FloatTensor:$input_grad,
      Attn_FloatTensor:$weight_grad, Optional<Attn_FloatTensor>:$bias_grad);
  let assemblyFormat = [{
    $input `,` $weight `,` $result_grad attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_FeedForwardBackwardOp : Attn_Op<"feed_forward_backward", [Pure]> {
  let summary = "gradients of a feed-forward layer, chunked as its forward";
  let description = [{
    The gradients of `attn.feed_forward` (same activation, weights and
    `chunks`) with respect to its input and its four weights. The hidden
    activations are recomputed chunk by chunk rather than stored, so the
    backward holds one `[batch * seq / chunks, d_ff]` intermediate at a
    time, as the forward does; the weight gradients are summed over chunks.

    `with_output %down_bias` also gives the feed-forward's result, each
    chunk's from the hidden activations its backward recomputes: a
    reversible block's backward recomputes the feed-forward's result and
    differentiates it at once (attn-generate-train-step fuses the two), so
    the hidden activations are computed once, not twice.
  }];
  let arguments = (ins Attn_ActivationAttr:$activation,
      Attn_FloatTensor:$input,
      Attn_FloatTensor:$up_weight, Attn_FloatTensor:$up_bias,
      Attn_FloatTensor:$down_weight, Attn_FloatTensor:$result_grad,
      Optional<Attn_FloatTensor>:$down_bias,
      DefaultValuedAttr<I64Attr, "1">:$chunks);
  let results = (outs Attn_FloatTensor:$input_grad,
      Attn_FloatTensor:$up_weight_grad, Attn_FloatTensor:$up_bias_grad,
      Attn_FloatTensor:$down_weight_grad, Attn_FloatTensor:$down_bias_grad,
      Optional<Attn_FloatTensor>:$output);
  let assemblyFormat = [{
    custom<EnumKeyword>($activation) $input `,` $up_weight `,` $up_bias `,`
    $down_weight `,` $result_grad (`with_output` $down_bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_SoftmaxCrossEntropyBackwardOp
    : Attn_Op<"softmax_cross_entropy_backward", [Pure]> {
  let summary = "gradient of the softmax cross-entropy loss";
  let description = [{
    `logits_grad[p, c] = loss_grad · w_p / sum(w) · (softmax(logits[p])_c -
    [c == labels[p]])`, with `w` the weights of the forward (1 when absent)
    and `loss_grad` a 0-d tensor.
  }];
  let arguments = (ins Attn_FloatTensor:$logits, Attn_TokenTensor:$labels,
      Optional<Attn_FloatTensor>:$weights, Attn_FloatTensor:$loss_grad);
  let results = (outs Attn_FloatTensor:$logits_grad);
  let assemblyFormat = [{
    $logits `,` $labels `,` ($weights^ `,`)? `loss_grad` $loss_grad attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Heads
//===----------------------------------------------------------------------===//

def Attn_SplitHeadsOp : Attn_Op<"split_heads", [Pure,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "[batch, seq, heads * head_dim] as [batch, heads, seq, head_dim]";
  let description = [{
    The head layout of a projection: `result[b, h, s, e] = input[b, s,
    h * head_dim + e]`. A multi-head block is its projections, a split, its
    attention form, a merge and its output projection; the train step
    differentiates it in those steps.
  }];
  let arguments = (ins Attn_FloatTensor:$input, I64Attr:$heads);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat =
      "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Attn_MergeHeadsOp : Attn_Op<"merge_heads", [Pure,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
        ["buildVectorJacobianProduct"]>]> {
  let summary = "[batch, heads, seq, head_dim] as [batch, seq, heads * head_dim]";
  let description = [{
    The inverse of `attn.split_heads`: `result[b, s, h * head_dim + e] =
    input[b, h, s, e]`.
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat =
      "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

def Attn_RoutedCentroidUpdateOp : Attn_Op<"routed_centroid_update", [Pure]> {
  let summary = "the exponential moving average of a routed attention's centroids";
  let description = [{
    The Routing Transformer's k-means step on its centroids `[heads,
    clusters, head_dim]`, given the `query` and `key` `[batch, heads, seq,
    head_dim]` that an `attn.routed_attention` routed with them. Every unit
    query and unit key joins its nearest (unit) centroid, as the routing
    does; a cluster's target is the normalised sum of its members over the
    batch (norm floored at 1e-12), or the centroid itself when it has none.
    The result is `decay · centroid + (1 - decay) · target`. In a job of
    several ranks (data parallelism) the batch is every rank's: the
    members' sums and counts add up over the ranks before the target.
  }];
  let arguments = (ins Attn_FloatTensor:$centroids, Attn_FloatTensor:$query,
      Attn_FloatTensor:$key, F32Attr:$decay);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $centroids `,` $query `,` $key attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_ClipByGlobalNormOp : Attn_Op<"clip_by_global_norm", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "gradients scaled so that their global L2 norm is at most max_norm";
  let description = [{
    With `n = sqrt(sum over every gradient of its squared elements)`, every
    gradient is multiplied by `min(1, max_norm / (n + 1e-6))`
    (torch.nn.utils.clip_grad_norm_). `max_norm` is a 0-d tensor, a value
    the train step reads at run time (`optimizer.grad_clip`); at 0 or below
    the gradients pass unchanged. With `scale` (0-d), the gradients are
    multiplied by it first: the mean of gradients summed over
    micro-batches (`optimizer.gradient_scale`, 1/K for K of them).

    ```mlir
    %c:2 = attn.clip_by_global_norm %g0, %g1 max_norm %max
        : (tensor<4x4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4x4xf32>, tensor<4xf32>)
    ```
  }];
  let arguments = (ins Variadic<Attn_FloatTensor>:$gradients,
      Attn_FloatTensor:$max_norm, Optional<Attn_FloatTensor>:$scale);
  let results = (outs Variadic<Attn_FloatTensor>:$clipped);
  let assemblyFormat = [{
    $gradients `max_norm` $max_norm (`scale` $scale^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_SGDUpdateOp : Attn_Op<"sgd_update", [Pure,
    AllTypesMatch<["param", "gradient", "result"]>,
    AllTypesMatch<["lr", "weight_decay"]>]> {
  let summary = "one step of stochastic gradient descent";
  let description = [{
    `result = param - lr · (gradient + weight_decay · param)`
    (torch.optim.SGD without momentum; with `weight_decay = 0`, exactly
    `param - lr · gradient`). `lr` and `weight_decay` are 0-d tensors,
    values the train step reads at run time (`optimizer.lr`, ...).
  }];
  let arguments = (ins Attn_FloatTensor:$param, Attn_FloatTensor:$gradient,
      Attn_FloatTensor:$lr, Attn_FloatTensor:$weight_decay);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $param `,` $gradient `lr` $lr `weight_decay` $weight_decay attr-dict
    `:` type($result) `,` type($lr)
  }];
  let hasVerifier = 1;
}

def Attn_AdamUpdateOp : Attn_Op<"adam_update", [Pure,
    AllTypesMatch<["param", "gradient", "moment1", "moment2", "result",
                   "new_moment1", "new_moment2"]>,
    AllTypesMatch<["step", "lr", "beta1", "beta2", "epsilon",
                   "weight_decay"]>]> {
  let summary = "one step of Adam, or AdamW with weight decay";
  let description = [{
    torch.optim.AdamW's update at step `t` (the 0-d `step`, counted from 1):
    `p' = p - lr · weight_decay · p`, `m' = beta1 m + (1 - beta1) g`,
    `v' = beta2 v + (1 - beta2) g²`, and
    `result = p' - lr · (m' / (1 - beta1^t)) / (sqrt(v' / (1 - beta2^t)) + epsilon)`.
    With `weight_decay = 0` it is torch.optim.Adam. The hyper-parameters
    are 0-d tensors like `step`, values the train step reads at run time
    (`optimizer.lr`, `optimizer.beta1`, ...), so a trainer changes them
    between steps without recompiling.

    ```mlir
    %p, %m, %v = attn.adam_update %w, %g, %m0, %v0 step %t lr %lr
        beta1 %b1 beta2 %b2 epsilon %eps weight_decay %wd
        : tensor<4x4xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$param, Attn_FloatTensor:$gradient,
      Attn_FloatTensor:$moment1, Attn_FloatTensor:$moment2,
      Attn_FloatTensor:$step, Attn_FloatTensor:$lr, Attn_FloatTensor:$beta1,
      Attn_FloatTensor:$beta2, Attn_FloatTensor:$epsilon,
      Attn_FloatTensor:$weight_decay);
  let results = (outs Attn_FloatTensor:$result,
      Attn_FloatTensor:$new_moment1, Attn_FloatTensor:$new_moment2);
  let assemblyFormat = [{
    $param `,` $gradient `,` $moment1 `,` $moment2 `step` $step `lr` $lr
    `beta1` $beta1 `beta2` $beta2 `epsilon` $epsilon
    `weight_decay` $weight_decay attr-dict `:` type($result) `,` type($step)
  }];
  let hasVerifier = 1;
}

def Attn_AssignOp : Attn_Op<"assign", [MemoryEffects<[MemWrite]>]> {
  let summary = "writes the new value of a parameter";
  let description = [{
    After the calling function returns, the parameter (or optimizer state)
    called `name` holds `value`; every read of it in the function sees the
    old value. The loaded module keeps the new value for the next call.

    ```mlir
    attn.assign "layers.0.attn.wq", %new : tensor<128x128xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Attn_FloatTensor:$value);
  let assemblyFormat = "$name `,` $value attr-dict `:` type($value)";
}

#endif // LCC_DIALECT_ATTN_IR_ATTNTRAININGOPS
