//===- ReformerModel.cpp - a Reformer language model in attn IR -----------===//

#include "ReformerModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace lcc::import;

namespace {

/// `tensor<AxBx...xT>`.
std::string tensorType(llvm::ArrayRef<int64_t> shape,
                       llvm::StringRef element = "f32") {
  std::string text = "tensor<";
  for (int64_t size : shape)
    text += std::to_string(size) + "x";
  return text + element.str() + ">";
}

/// Writes the model one piece at a time, each a named step.
class ReformerWriter {
public:
  ReformerWriter(const ReformerConfig &c,
                 const std::vector<ReformerParameter> &parameters,
                 const ReformerModelOptions &options, llvm::raw_ostream &os)
      : c(c), parameters(parameters), options(options), os(os) {
    int64_t b = options.batch, s = c.seqLen;
    act = tensorType({b, s, c.hiddenSize});
    head = tensorType({b, c.heads, s, c.headSize});
  }

  void header();
  void forward();
  void loss();

private:
  /// `%ssa = attn.param "name" : type` at `indent`.
  std::string param(const std::string &name, llvm::StringRef ssa,
                    llvm::StringRef indent);
  std::string positionEmbeddings();
  std::string axialPositions();
  std::string layer(int64_t i, const std::string &input);
  void attentionRegion(int64_t i);
  void feedForwardRegion(int64_t i);
  void localWindowMask();
  std::string attentionAttributes(bool extra);

  const ReformerConfig &c;
  const std::vector<ReformerParameter> &parameters;
  const ReformerModelOptions &options;
  llvm::raw_ostream &os;
  std::string act, head;
};

void ReformerWriter::header() {
  os << "// A Hugging Face Reformer language model (ReformerModelWithLMHead),\n"
     << "// imported by `lcc-import hf-reformer` from " << options.source
     << "\n// for sequences of " << c.seqLen << " tokens, batch "
     << options.batch << ": " << c.layers() << " reversible layers (";
  for (auto [i, kind] : llvm::enumerate(c.attnLayers))
    os << (i ? ", " : "") << kind;
  os << "), hidden " << c.hiddenSize << ", " << c.heads << " heads of "
     << c.headSize << ", feed-forward " << c.feedForwardSize << " ("
     << c.hiddenAct << "), vocabulary " << c.vocabSize << ", "
     << (c.isDecoder ? "causal" : "not causal") << ".\n";
  if (llvm::is_contained(c.forms, ReformerAttention::LSH))
    os << "// LSH layers: " << c.numHashes << " hash rounds into "
       << c.lshBuckets << " buckets"
       << (c.lshFactorized ? " (hashed factorized)" : "") << ", chunks of "
       << c.lshChunkLength << "; the rotations are drawn from each op's "
       << "seed (shared\n// by the heads; Hugging Face draws them per head "
          "at every call).\n";
  if (llvm::is_contained(c.forms, ReformerAttention::Local))
    os << "// Local layers: chunks of " << c.localChunkLength
       << " that see themselves and " << c.localChunksBefore
       << " chunk(s) before, wrapping around the sequence as Hugging Face's "
          "do.\n";
  os << "// Parameters keep Hugging Face's names; a torch Linear's [out, in] "
        "weight is\n// held [in, out].\n"
     << "// Input: token ids [" << options.batch << ", " << c.seqLen
     << "] i32. Output: logits [" << options.batch << ", " << c.seqLen << ", "
     << c.vocabSize << "].\n";
}

std::string ReformerWriter::param(const std::string &name, llvm::StringRef ssa,
                                  llvm::StringRef indent) {
  const ReformerParameter &parameter = parameterNamed(parameters, name);
  os << indent << "%" << ssa << " = attn.param \"" << name
     << "\" : " << tensorType(parameter.shape) << "\n";
  return "%" + ssa.str();
}

/// Axial position embeddings (AxialPositionEmbeddings): position p is
/// [weights.0[p / A1], weights.1[p % A1]], the two broadcast over the
/// other axis, concatenated, flattened and cut to the sequence; only the
/// rows of weights.0 the sequence reaches are read.
std::string ReformerWriter::axialPositions() {
  const char *in = "    ";
  std::string prefix = "reformer.embeddings.position_embeddings.";
  int64_t a0 = c.axialPosShape[0], a1 = c.axialPosShape[1];
  int64_t d0 = c.axialPosEmbdsDim[0], d1 = c.axialPosEmbdsDim[1];
  int64_t rows = (c.seqLen + a1 - 1) / a1, hidden = c.hiddenSize;
  os << in << "// Axial position embeddings: position p is [weights.0[p / "
     << a1 << "], weights.1[p % " << a1 << "]].\n";
  std::string w0 = param(prefix + "weights.0", "axial0", in);
  std::string w1 = param(prefix + "weights.1", "axial1", in);
  if (rows < a0) {
    os << in << "%axial0_rows = tensor.extract_slice " << w0 << "[0, 0, 0] ["
       << rows << ", 1, " << d0 << "] [1, 1, 1] : " << tensorType({a0, 1, d0})
       << " to " << tensorType({rows, 1, d0}) << "\n";
    w0 = "%axial0_rows";
  }
  os << in << "%axial0_flat = tensor.collapse_shape " << w0
     << " [[0, 1], [2]] : " << tensorType({rows, 1, d0}) << " into "
     << tensorType({rows, d0}) << "\n"
     << in << "%axial1_flat = tensor.collapse_shape " << w1
     << " [[0, 1], [2]] : " << tensorType({1, a1, d1}) << " into "
     << tensorType({a1, d1}) << "\n";
  auto broadcast = [&](llvm::StringRef name, llvm::StringRef from,
                       int64_t width, llvm::ArrayRef<int64_t> fromShape,
                       int64_t dimension) {
    std::string type = tensorType({rows, a1, width});
    os << in << "%" << name << "_init = tensor.empty() : " << type << "\n"
       << in << "%" << name << " = linalg.broadcast ins(" << from << " : "
       << tensorType(fromShape) << ") outs(%" << name << "_init : " << type
       << ") dimensions = [" << dimension << "]\n";
  };
  broadcast("grid0", "%axial0_flat", d0, {rows, d0}, 1);
  broadcast("grid1", "%axial1_flat", d1, {a1, d1}, 0);
  os << in << "%grid = tensor.concat dim(2) %grid0, %grid1 : ("
     << tensorType({rows, a1, d0}) << ", " << tensorType({rows, a1, d1})
     << ") -> " << tensorType({rows, a1, hidden}) << "\n"
     << in << "%position_table = tensor.collapse_shape %grid [[0, 1], [2]] : "
     << tensorType({rows, a1, hidden}) << " into "
     << tensorType({rows * a1, hidden}) << "\n";
  if (rows * a1 == c.seqLen)
    return "%position_table";
  os << in << "%positions = tensor.extract_slice %position_table[0, 0] ["
     << c.seqLen << ", " << hidden
     << "] [1, 1] : " << tensorType({rows * a1, hidden}) << " to "
     << tensorType({c.seqLen, hidden}) << "\n";
  return "%positions";
}

/// The embeddings: tokens plus positions, broadcast over the batch.
std::string ReformerWriter::positionEmbeddings() {
  const char *in = "    ";
  std::string words =
      param("reformer.embeddings.word_embeddings.weight", "word_table", in);
  os << in << "%words = attn.embedding %tokens, " << words << " : ("
     << tensorType({options.batch, c.seqLen}, "i32") << ", "
     << tensorType({c.vocabSize, c.hiddenSize}) << ") -> " << act << "\n";
  std::string positions;
  if (c.axialPosEmbds) {
    positions = axialPositions();
  } else {
    positions = param("reformer.embeddings.position_embeddings.embedding."
                      "weight",
                      "position_table", in);
    if (c.maxPositionEmbeddings > c.seqLen) {
      os << in << "%positions = tensor.extract_slice " << positions
         << "[0, 0] [" << c.seqLen << ", " << c.hiddenSize
         << "] [1, 1] : " << tensorType({c.maxPositionEmbeddings, c.hiddenSize})
         << " to " << tensorType({c.seqLen, c.hiddenSize}) << "\n";
      positions = "%positions";
    }
  }
  os << in << "%positions_init = tensor.empty() : " << act << "\n"
     << in << "%positions_wide = linalg.broadcast ins(" << positions << " : "
     << tensorType({c.seqLen, c.hiddenSize})
     << ") outs(%positions_init : " << act << ") dimensions = [0]\n"
     << in << "%embedded = arith.addf %words, %positions_wide : " << act
     << "\n";
  return "%embedded";
}

std::string ReformerWriter::attentionAttributes(bool extra) {
  std::string text = c.isDecoder ? "causal = true" : "";
  if (extra && !text.empty())
    text += ", ";
  return text;
}

/// Query chunk i / C sees key chunk j / C when it is the same chunk or one
/// of the `before` chunks before it, counted around the sequence's end
/// (Hugging Face's _look_adjacent rolls the chunks).
void ReformerWriter::localWindowMask() {
  const char *in = "          ";
  int64_t chunks = c.localChunks;
  os << "            mask {\n"
     << "            ^bb0(%b: index, %h: index, %i: index, %j: index):\n"
     << in << "// key chunk - query chunk, modulo the " << chunks << " chunks\n"
     << in << "%chunk = arith.constant " << c.localChunkLength << " : index\n"
     << in << "%chunks = arith.constant " << chunks << " : index\n"
     << in << "%query_chunk = arith.divui %i, %chunk : index\n"
     << in << "%key_chunk = arith.divui %j, %chunk : index\n"
     << in << "%ahead = arith.addi %key_chunk, %chunks : index\n"
     << in << "%difference = arith.subi %ahead, %query_chunk : index\n"
     << in << "%offset = arith.remui %difference, %chunks : index\n"
     << in << "%zero = arith.constant 0 : index\n"
     << in << "%first_before = arith.constant " << chunks - c.localChunksBefore
     << " : index\n"
     << in << "%own = arith.cmpi eq, %offset, %zero : index\n"
     << in << "%before = arith.cmpi uge, %offset, %first_before : index\n"
     << in << "%visible = arith.ori %own, %before : i1\n"
     << in << "attn.yield %visible : i1\n"
     << "            }\n";
}

/// F: layer norm, self-attention of the layer's kind, output projection.
void ReformerWriter::attentionRegion(int64_t i) {
  const char *in = "      ";
  std::string layer = llvm::formatv("reformer.encoder.layers.{0}.", i).str();
  std::string self = layer + "attention.self_attention.";
  ReformerAttention form = c.forms[i];
  bool lsh =
      form == ReformerAttention::LSH || form == ReformerAttention::LSHFull;
  os << "    f {\n    ^bb0(%a: " << act << "):\n";
  std::string gamma = param(layer + "attention.layer_norm.weight", "n_g", in);
  std::string beta = param(layer + "attention.layer_norm.bias", "n_b", in);
  os << in << "%n = attn.layer_norm %a, " << gamma << ", " << beta
     << " {epsilon = " << llvm::formatv("{0:e}", c.layerNormEps)
     << " : f32} : (" << act << ", " << tensorType({c.hiddenSize}) << ", "
     << tensorType({c.hiddenSize}) << ") -> " << act << "\n";
  std::string weights = lsh ? param(self + "query_key.weight", "w_qk", in)
                            : param(self + "query.weight", "w_q", in);
  std::string keys = lsh ? "" : param(self + "key.weight", "w_k", in);
  std::string values = param(self + "value.weight", "w_v", in);
  std::string out = param(layer + "attention.output.dense.weight", "w_o", in);
  std::string projection = tensorType({c.hiddenSize, c.allHeadSize()});
  os << in << "%h = attn.multi_head_attention %n, query " << weights << ", "
     << (lsh ? "" : "key " + keys + ", ") << "value " << values << ", output "
     << out << " {heads = " << c.heads << " : i64} : (" << act << ", "
     << projection << ", " << (lsh ? "" : projection + ", ") << projection
     << ", " << tensorType({c.allHeadSize(), c.hiddenSize}) << ") -> " << act
     << " {\n";
  const char *body = "        ";
  std::string two = "(" + head + ", " + head + ") -> " + head;
  std::string three = "(" + head + ", " + head + ", " + head + ") -> " + head;
  switch (form) {
  case ReformerAttention::LSH: {
    uint64_t seed = c.hashSeed ? *c.hashSeed : options.seed + i;
    os << "    ^bb0(%qk: " << head << ", %v: " << head << "):\n"
       << body << "// LSHSelfAttention: keys are the unit queries, scores "
       << "unscaled\n"
       << body << "%o = attn.lsh_attention %qk, %v {n_hashes = " << c.numHashes
       << " : i64, bucket_size = " << c.lshChunkLength
       << " : i64, n_buckets = " << c.lshBuckets << " : i64, "
       << attentionAttributes(true) << "seed = " << seed
       << " : i64, scale = 1.0 : f32"
       << (c.lshFactorized ? ", factorized_hash" : "") << "} : " << two << "\n";
    break;
  }
  case ReformerAttention::LSHFull:
    os << "    ^bb0(%qk: " << head << ", %v: " << head << "):\n"
       << body << "// LSHSelfAttention over one chunk: full shared-QK "
       << "attention, scores unscaled\n"
       << body << "%o = attn.attention %qk, %qk, %v {"
       << attentionAttributes(true)
       << "shared_qk, scale = 1.0 : f32} : " << three << "\n";
    break;
  case ReformerAttention::Local:
  case ReformerAttention::LocalFull: {
    os << "    ^bb0(%q: " << head << ", %k: " << head << ", %v: " << head
       << "):\n";
    std::string attributes = attentionAttributes(false);
    os << body
       << (form == ReformerAttention::Local
               ? "// LocalSelfAttention: chunks with look-back\n"
               : "// LocalSelfAttention over one chunk: full attention\n")
       << body << "%o = attn.attention %q, %k, %v "
       << (attributes.empty() ? "" : "{" + attributes + "} ") << ": " << three
       << "\n";
    if (form == ReformerAttention::Local)
      localWindowMask();
    break;
  }
  }
  os << body << "attn.yield %o : " << head << "\n"
     << in << "}\n"
     << in << "attn.yield %h : " << act << "\n"
     << "    }";
}

/// G: layer norm and the feed-forward block.
void ReformerWriter::feedForwardRegion(int64_t i) {
  const char *in = "      ";
  std::string layer =
      llvm::formatv("reformer.encoder.layers.{0}.feed_forward.", i).str();
  int64_t hidden = c.hiddenSize, width = c.feedForwardSize;
  os << " g {\n    ^bb0(%a: " << act << "):\n";
  std::string gamma = param(layer + "layer_norm.weight", "n_g", in);
  std::string beta = param(layer + "layer_norm.bias", "n_b", in);
  os << in << "%n = attn.layer_norm %a, " << gamma << ", " << beta
     << " {epsilon = " << llvm::formatv("{0:e}", c.layerNormEps)
     << " : f32} : (" << act << ", " << tensorType({hidden}) << ", "
     << tensorType({hidden}) << ") -> " << act << "\n";
  std::string w1 = param(layer + "dense.dense.weight", "w1", in);
  std::string b1 = param(layer + "dense.dense.bias", "b1", in);
  std::string w2 = param(layer + "output.dense.weight", "w2", in);
  std::string b2 = param(layer + "output.dense.bias", "b2", in);
  os << in << "%h = attn.feed_forward " << c.hiddenAct << " %n, " << w1 << ", "
     << b1 << ", " << w2 << ", " << b2 << " : (" << act << ", "
     << tensorType({hidden, width}) << ", " << tensorType({width}) << ", "
     << tensorType({width, hidden}) << ", " << tensorType({hidden}) << ") -> "
     << act << "\n"
     << in << "attn.yield %h : " << act << "\n"
     << "    }\n";
}

/// Layer i: X1 += F(X2), then X2 += G(X1) (ReformerLayer).
std::string ReformerWriter::layer(int64_t i, const std::string &input) {
  std::string result = llvm::formatv("%layer{0}", i).str();
  std::string x1 = i == 0 ? input : llvm::formatv("%layer{0}#0", i - 1).str();
  std::string x2 = i == 0 ? input : llvm::formatv("%layer{0}#1", i - 1).str();
  os << "    // layer " << i << ": " << c.attnLayers[i] << "\n"
     << "    " << result << ":2 = attn.reversible " << x1 << ", " << x2 << " : "
     << act << ", " << act << "\n";
  attentionRegion(i);
  feedForwardRegion(i);
  return result;
}

void ReformerWriter::forward() {
  int64_t b = options.batch, s = c.seqLen, hidden = c.hiddenSize;
  std::string logits = tensorType({b, s, c.vocabSize});
  std::string wide = tensorType({b, s, 2 * hidden});
  os << "module {\n  func.func @forward(%tokens: " << tensorType({b, s}, "i32")
     << ") -> " << logits << " {\n";
  std::string x = positionEmbeddings();
  std::string last;
  for (int64_t i = 0; i < c.layers(); ++i)
    last = layer(i, x);
  const char *in = "    ";
  os << in << "// The attention stream, then the feed-forward one, "
     << "normalised together.\n"
     << in << "%streams = tensor.concat dim(2) " << last << "#0, " << last
     << "#1 : (" << act << ", " << act << ") -> " << wide << "\n";
  std::string gamma =
      param("reformer.encoder.layer_norm.weight", "final_g", in);
  std::string beta = param("reformer.encoder.layer_norm.bias", "final_b", in);
  os << in << "%normed = attn.layer_norm %streams, " << gamma << ", " << beta
     << " {epsilon = " << llvm::formatv("{0:e}", c.layerNormEps)
     << " : f32} : (" << wide << ", " << tensorType({2 * hidden}) << ", "
     << tensorType({2 * hidden}) << ") -> " << wide << "\n";
  std::string weight = param("lm_head.decoder.weight", "lm_weight", in);
  std::string bias = param("lm_head.bias", "lm_bias", in);
  os << in << "%logits = attn.linear %normed, " << weight << ", " << bias
     << " : (" << wide << ", " << tensorType({2 * hidden, c.vocabSize}) << ", "
     << tensorType({c.vocabSize}) << ") -> " << logits << "\n"
     << in << "return %logits : " << logits << "\n  }\n";
}

void ReformerWriter::loss() {
  std::string tokens = tensorType({options.batch, c.seqLen}, "i32");
  std::string logits = tensorType({options.batch, c.seqLen, c.vocabSize});
  os << "  // The training objective: the mean cross-entropy of forward's "
        "logits against\n"
     << "  // `labels` (the next tokens). `lcc --train` differentiates it.\n"
     << "  func.func @loss(%tokens: " << tokens << ", %labels: " << tokens
     << ") -> tensor<f32> {\n"
     << "    %logits = call @forward(%tokens) : (" << tokens << ") -> "
     << logits << "\n"
     << "    %l = attn.softmax_cross_entropy %logits, %labels : (" << logits
     << ", " << tokens << ") -> tensor<f32>\n"
     << "    return %l : tensor<f32>\n  }\n}\n";
}

} // namespace

std::string lcc::import::writeReformerModel(
    const ReformerConfig &config,
    const std::vector<ReformerParameter> &parameters,
    const ReformerModelOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ReformerWriter writer(config, parameters, options, os);
  writer.header();
  writer.forward();
  writer.loss();
  return text;
}
