//===- AttnInterfaces.td - what passes ask of an op ---*- tablegen -*-===//
//
// The passes that rewrite a model for training, recomputation or the exact
// reference ask an op these interfaces, never its name: an attention form
// added by a plugin attaches them to its own ops (as external models) and
// is then trained, made reversible and turned back into dense attention
// like a built-in one (docs/architecture.md, "Forms and interfaces").
//
//===----------------------------------------------------------------------===//

#ifndef LCC_DIALECT_ATTN_IR_ATTNINTERFACES
#define LCC_DIALECT_ATTN_IR_ATTNINTERFACES

include "mlir/IR/OpBase.td"

def Attn_AttentionFormInterface : OpInterface<"AttentionFormInterface"> {
  let cppNamespace = "::lcc::attn";
  let description = [{
    An op that computes attention (dense, or one of the long-context forms):
    what `--reversible` pairs with the feed-forward after it, what
    `--attention=dense` undoes, what `attn-chunk-ff`'s attention-chunks
    may split, and how `attn-context-parallel` splits it across ranks.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the attn.attention this op
        stands for (the dense attention it approximates, or the masked one it
        equals), sets `description` to what that is for the remark
        ("the dense attention it approximates"), and returns its result; null
        when the op is dense attention already or stands for none.
      }],
      "::mlir::Value", "buildDenseAttention",
      (ins "::mlir::OpBuilder &":$builder, "std::string &":$description),
      [{}], [{ return {}; }]>,
    InterfaceMethod<[{
        How many rows (batch x heads) the op's lowering can attend in groups,
        one group after another, to bound its memory; 0 when it runs tile by
        tile already and groups would save nothing.
      }],
      "int64_t", "getChunkableRows", (ins), [{}], [{ return 0; }]>,
    InterfaceMethod<[{
        The groups the op attends its rows in (1: all at once).
      }],
      "int64_t", "getRowChunks", (ins), [{}], [{ return 1; }]>,
    InterfaceMethod<[{
        Makes the op attend its rows in `chunks` groups (1 <= chunks <=
        getChunkableRows()).
      }],
      "void", "setRowChunks", (ins "int64_t":$chunks), [{}],
      [{ llvm_unreachable("setRowChunks on a form that has no row groups"); }]>,
    InterfaceMethod<[{
        How attn-context-parallel splits the op over the ranks that each
        hold a share of the sequence. HeadsOverRanks (DeepSpeed-Ulysses):
        its sequence operands ([batch, heads, seq, dim]) are exchanged
        all-to-all so that each rank holds the whole sequence of a share of
        the heads, the op runs on those, and its results go back; a form
        whose rows are independent per head needs nothing else, and every
        form may use it. KeysAroundRing (ring attention): each rank keeps
        its queries and passes its keys and values around the ring of
        ranks, the partial results merged by their logsumexps; dense
        attention uses it (its regions see each block at its positions),
        and a form whose buildDenseAttention is exactly itself (a masked
        attention whose block table skips what the form skips: the
        local-attention plugin's windows) may declare it: it then runs as
        that attention does; so may a form that attendsAtQueryOffset
        (relative and adaptive-span attention): each step then attends
        chunk pairs with it.
      }],
      "::lcc::attn::SequenceSplit", "getSequenceSplit", (ins), [{}],
      [{ return ::lcc::attn::SequenceSplit::HeadsOverRanks; }]>,
    InterfaceMethod<[{
        Whether the op places its queries among its keys by an optional
        last operand `query_offset` (a 0-d i32: query i at key position
        query_offset + i, its distances counted from there), and has a
        backward op named as it with `_backward` that takes the op's other
        operands, its result, its second result (the row statistic the
        backward recomputes from), the result's gradient and the offset,
        with the op's attributes, and returns a gradient per operand but
        the offset. Ring attention (KeysAroundRing) then attends chunk
        pairs of the sequence with the op: relative and adaptive-span
        attention.
      }],
      "bool", "attendsAtQueryOffset", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<[{
        Whether a query sees no key after its own position: by default the
        op's `causal` flag.
      }],
      "bool", "isCausal", (ins), [{}], [{
        auto flag = $_op->template getAttrOfType<::mlir::BoolAttr>("causal");
        return flag && flag.getValue();
      }]>,
    InterfaceMethod<[{
        The operands that hold one slice per head along their leading
        dimension (adaptive span's z, routed attention's centroids): under
        HeadsOverRanks each rank takes its heads' slices.
      }],
      "void", "getPerHeadOperands",
      (ins "::llvm::SmallVectorImpl<unsigned> &":$operands), [{}],
      [{ return; }]>,
  ];
}

def Attn_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::lcc::attn";
  let description = [{
    An op attn-generate-train-step differentiates: its vector-Jacobian rule
    turns the gradients of its results into gradients of its operands,
    usually by building the op's backward op (whose lowering is registered
    like the forward's). A block op (a residual or multi-head block) is
    differentiated as the ops it expands to; an attention expands to the one
    that also returns the softmax statistics its backward reads. Upstream
    ops (arith, math, tensor, linalg) get the interface as external models
    (UpstreamGradients.cpp).
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the ops this op is
        differentiated as (a block's body inlined, an attention that also
        returns its row statistics) and returns the values that replace its
        results; empty when it is differentiated as it is.
      }],
      "::llvm::SmallVector<::mlir::Value>", "expandForDifferentiation",
      (ins "::mlir::OpBuilder &":$builder), [{}], [{ return {}; }]>,
    InterfaceMethod<[{
        The rule: given `resultGradients` (one per result, null where a result
        has none, at least one not null), builds at the builder's insertion
        point the gradient of each operand into `operandGradients` (sized to
        the operands, null where an operand gets none). By default the op
        has no rule of its own (it expands).
      }],
      "::mlir::LogicalResult", "buildVectorJacobianProduct",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGradients,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients),
      [{}], [{
        return $_op->emitOpError(
            "is differentiated as the ops it expands to, not by itself");
      }]>,
    InterfaceMethod<[{
        The operands whose parameters must stay in [0, 1]: the optimizer
        clamps them back after each update (adaptive span's z).
      }],
      "void", "getUnitIntervalOperands",
      (ins "::llvm::SmallVectorImpl<unsigned> &":$operands), [{}],
      [{ return; }]>,
    InterfaceMethod<[{
        The operand the op trains by a rule of its own instead of by its
        gradient, which it never gets (routed attention's centroids: their
        moving average toward the queries and keys routed to them), with
        what to call it and its rule in messages; a null operand when the op
        has none. The train step requires it to be an attn.param that no
        other op trains and that the loss is not differentiated by.
      }],
      "::lcc::attn::SelfTrainedOperand", "getSelfTrainedOperand", (ins),
      [{}], [{ return {}; }]>,
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the new value of the
        operand getSelfTrainedOperand names, moved with `decay` (lcc
        --centroid-decay).
      }],
      "::mlir::Value", "buildSelfTrainedUpdate",
      (ins "::mlir::OpBuilder &":$builder, "double":$decay), [{}],
      [{ return {}; }]>,
  ];
}

#endif // LCC_DIALECT_ATTN_IR_ATTNINTERFACES
