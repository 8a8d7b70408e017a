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

def Attn_ReductionKind : I32EnumAttr<"ReductionKind",
    "How a collective combines the ranks' values", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Mean", 1, "mean">
    ]> {
  let cppNamespace = "::lcc::attn";
}

def Attn_AllReduceOp : Attn_Op<"all_reduce", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "tensors combined element by element over the ranks of a job";
  let description = [{
    Result `i` is operand `i` summed (`sum`) or averaged (`mean`) element
    by element over every rank of the job, the same on every rank; on one
    rank it is the operand. Every rank must reach the same all-reduces in
    the same order, as ranks running one artifact do. The train step
    averages its loss and gradients this way (data parallelism: each rank
    a share of the batch).

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

#endif // ATTN_COLLECTIVE_OPS
