//===- LocalOps.td - the local dialect ---------------------*- tablegen -*-===//
//
// Local attention, as lucidrains' local-attention computes it, and its
// backward.
//
//===----------------------------------------------------------------------===//

#ifndef LOCAL_OPS
#define LOCAL_OPS

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Local_Dialect : Dialect {
  let name = "local";
  let summary = "windowed local attention (an lcc plugin)";
  let cppNamespace = "::local";
}

def Local_AttentionOp : Op<Local_Dialect, "attention", [Pure]> {
  let summary = "attention within windows of the sequence";
  let description = [{
    Splits the sequence into windows of `window` positions; a query in
    window `w` attends to the keys of windows `w - look_backward` to
    `w + look_forward` (and, if `causal`, to keys `j <= i` only). Operands
    are `[batch, heads, seq, head_dim]` (value `[batch, heads, seq, v_dim]`)
    with one `seq` for queries and keys; `scale` defaults to
    `1/sqrt(head_dim)`. With a second result, the op also returns each
    query's logsumexp of its visible scores `[batch, heads, seq]`, which
    `local.attention_backward` reads (training adds it).

    ```mlir
    %o = local.attention %q, %k, %v {window = 128 : i64, look_backward = 1 : i64}
        : (tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>,
           tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
      AnyRankedTensor:$value,
      I64Attr:$window,
      DefaultValuedAttr<I64Attr, "1">:$look_backward,
      DefaultValuedAttr<I64Attr, "0">:$look_forward,
      DefaultValuedAttr<BoolAttr, "false">:$causal,
      OptionalAttr<F32Attr>:$scale);
  let results = (outs AnyRankedTensor:$result,
      Optional<AnyRankedTensor>:$logsumexp);
  let assemblyFormat =
      "$query `,` $key `,` $value attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Local_AttentionBackwardOp
    : Op<Local_Dialect, "attention_backward", [Pure]> {
  let summary = "the gradients of local.attention";
  let description = [{
    Given the forward's operands, its `result` and `logsumexp` and the
    result's gradient `result_grad`, returns the gradients of the query, key
    and value: FlashAttention-2's backward over the tiles the forward
    visits, with the forward's attributes.
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
      AnyRankedTensor:$value, AnyRankedTensor:$result,
      AnyRankedTensor:$logsumexp, AnyRankedTensor:$result_grad,
      I64Attr:$window,
      DefaultValuedAttr<I64Attr, "1">:$look_backward,
      DefaultValuedAttr<I64Attr, "0">:$look_forward,
      DefaultValuedAttr<BoolAttr, "false">:$causal,
      OptionalAttr<F32Attr>:$scale);
  let results = (outs AnyRankedTensor:$query_grad, AnyRankedTensor:$key_grad,
      AnyRankedTensor:$value_grad);
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // LOCAL_OPS
