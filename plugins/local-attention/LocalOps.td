//===- LocalOps.td - the local dialect ---------------------*- tablegen -*-===//
//
// One op: local attention, as lucidrains' local-attention computes it.
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
    `1/sqrt(head_dim)`.

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
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$query `,` $key `,` $value attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // LOCAL_OPS
