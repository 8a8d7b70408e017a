//===- AttnBase.td - attn dialect definition and attributes -*- tablegen -*-===//
//
// The attn dialect: transformer models and the attention forms of the
// efficient-transformer literature, as a dataflow graph on tensors.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_DIALECT_ATTN_IR_ATTNBASE
#define LCC_DIALECT_ATTN_IR_ATTNBASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::lcc::attn";
  let summary = "Transformer models and long-context attention forms";
  let description = [{
    The `attn` dialect describes transformer models as a dataflow graph on
    tensors. It has two layers of ops:

    * Attention ops on `[batch, heads, seq, head_dim]` tensors: dense
      `attn.attention` and the long-context forms the compiler rewrites it
      into (`attn.lsh_attention`, `attn.sparse_attention`,
      `attn.routed_attention`). Their semantics are fixed in docs/design.md §3.
    * Model-level ops on `[batch, seq, d_model]` activations: embedding,
      layer norm, linear, multi-head attention block, feed-forward, residual
      and reversible blocks, softmax cross-entropy. Weights enter the graph
      through `attn.param`, which names them so a runtime can load them by
      name.
  }];
  let useDefaultAttributePrinterParser = 1;
}

def Attn_SparsePattern : I32EnumAttr<"SparsePattern",
    "Sparse Transformer attention pattern", [
      I32EnumAttrCase<"Strided", 0, "strided">,
      I32EnumAttrCase<"Fixed", 1, "fixed">
    ]> {
  let cppNamespace = "::lcc::attn";
  let genSpecializedAttr = 0;
}
def Attn_SparsePatternAttr
    : EnumAttr<Attn_Dialect, Attn_SparsePattern, "sparse_pattern">;

def Attn_Activation : I32EnumAttr<"Activation",
    "Feed-forward activation function", [
      I32EnumAttrCase<"Relu", 0, "relu">,
      I32EnumAttrCase<"Gelu", 1, "gelu">
    ]> {
  let cppNamespace = "::lcc::attn";
  let genSpecializedAttr = 0;
}
def Attn_ActivationAttr
    : EnumAttr<Attn_Dialect, Attn_Activation, "activation">;

// The flags of attn ops parse in both spellings, bare (`{causal}`) and with
// a value (`{shared_qk = true}`), so that the wrong one reaches the
// verifier (AttnKnownAttributes), which names the right one, instead of
// failing in the parser with a constraint message. A flag written with a
// value (`causal = true`):
def Attn_BoolFlag : Attr<Or<[CPred<"::llvm::isa<::mlir::BoolAttr>($_self)">,
                             CPred<"::llvm::isa<::mlir::UnitAttr>($_self)">]>,
                         "bool attribute"> {
  let storageType = [{ ::mlir::Attribute }];
  let returnType = [{ bool }];
  let valueType = I1;
  let constBuilderCall = "$_builder.getBoolAttr($0)";
  let convertFromStorage = "::lcc::attn::flagValue($_self)";
}
// A flag written bare (`shared_qk`):
def Attn_UnitFlag : Attr<Or<[CPred<"::llvm::isa<::mlir::UnitAttr>($_self)">,
                             CPred<"::llvm::isa<::mlir::BoolAttr>($_self)">]>,
                         "unit attribute"> {
  let storageType = [{ ::mlir::Attribute }];
  let constBuilderCall =
      "(($0) ? ::mlir::Attribute($_builder.getUnitAttr()) : ::mlir::Attribute())";
  let convertFromStorage = "::lcc::attn::flagValue($_self)";
  let returnType = "bool";
  let defaultValue = "false";
  let valueType = NoneType;
  let isOptional = 1;
}

// Every attn op refuses an attribute it does not define, naming the nearest
// one it has, and a flag in the wrong spelling (AttnKnownAttributes.h).
def Attn_KnownAttributes : NativeOpTrait<"AttnKnownAttributes"> {
  let cppNamespace = "::lcc::attn";
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, !listconcat(traits, [Attn_KnownAttributes])>;

// Element types of activations and weights: f32 first, half types later.
def Attn_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Attn_TokenTensor : RankedTensorOf<[I32, I64]>;

#endif // LCC_DIALECT_ATTN_IR_ATTNBASE
