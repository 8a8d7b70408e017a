//===- ModelTest.cpp - The bundled models end to end ----------------------===//

#include "TestUtil.h"

#include <cmath>

using namespace lcc::reference;

namespace {

/// Random weights of every parameter in `shapes`: matrices N(0, 1/in),
/// gammas near 1, vectors and embeddings small or unit normal.
Weights randomWeights(const std::map<std::string, Shape> &shapes,
                      SplitMix64 &rng) {
  Weights weights;
  for (const auto &[name, shape] : shapes) {
    bool isGamma = name.find("gamma") != std::string::npos;
    Tensor t = randomTensor(
        shape, rng, shape.size() == 2 ? 1 / std::sqrt(double(shape[0])) : 0.1);
    if (isGamma)
      for (double &x : t.data)
        x += 1.0;
    if (name.rfind("embed.", 0) == 0)
      t = randomTensor(shape, rng);
    weights[name] = t;
  }
  return weights;
}

Tensor randomTokens(int64_t seq, int64_t vocab, SplitMix64 &rng) {
  Tensor tokens({1, seq});
  for (double &t : tokens.data)
    t = static_cast<double>(rng.integer(0, vocab));
  return tokens;
}

/// A small configuration for structural tests.
TinyModelConfig smallConfig() {
  TinyModelConfig c;
  c.layers = 2;
  c.dModel = 8;
  c.heads = 2;
  c.dFF = 16;
  c.vocab = 11;
  c.seq = 12;
  return c;
}

TEST(TransformerTiny, FullSizeRunsWithoutNaN) {
  TinyModelConfig c = transformerTinyConfig();
  EXPECT_EQ(c.seq, 512);
  SplitMix64 rng(10);
  Weights w = randomWeights(transformerTinyParams(c), rng);
  EXPECT_EQ(w.size(), 2u + 2 * 12 + 4); // every attn.param of the .mlir
  Tensor logits = transformerTiny(w, randomTokens(512, 256, rng));
  EXPECT_EQ(shapeToString(logits.shape), "[1, 512, 256]");
  EXPECT_TRUE(allFinite(logits));
}

TEST(ReformerTiny, FullSizeRunsWithoutNaN) {
  TinyModelConfig c = reformerTinyConfig();
  EXPECT_EQ(c.seq, 1024);
  SplitMix64 rng(11);
  Weights w = randomWeights(reformerTinyParams(c), rng);
  EXPECT_EQ(w.size(), 2u + 2 * 11 + 4); // no attn.wk: shared-QK
  EXPECT_EQ(w.count("layers.0.attn.wk"), 0u);
  Tensor logits = reformerTiny(w, randomTokens(1024, 256, rng));
  EXPECT_EQ(shapeToString(logits.shape), "[1, 1024, 256]");
  EXPECT_TRUE(allFinite(logits));
}

/// Zeroing every block's last projection makes each block's body return 0.
void zeroBlockOutputs(Weights &w, const TinyModelConfig &c) {
  for (int64_t l = 0; l < c.layers; ++l) {
    std::string pre = "layers." + std::to_string(l) + ".";
    for (const char *name : {"attn.wo", "ff.w2", "ff.b2"})
      for (double &x : w[pre + name].data)
        x = 0;
  }
}

Tensor embedded(const Weights &w, const Tensor &tokens) {
  return add(embedding(tokens, w.at("embed.tokens")), w.at("embed.positions"));
}

Tensor lmHead(const Weights &w, const Tensor &x) {
  return linear(layerNorm(x, w.at("final_norm.gamma"), w.at("final_norm.beta")),
                w.at("lm_head.weight"), &w.at("lm_head.bias"));
}

TEST(TransformerTiny, ResidualsCarryTheEmbedding) {
  // Blocks whose body is 0 leave x unchanged: logits = head(embed + pos).
  TinyModelConfig c = smallConfig();
  SplitMix64 rng(12);
  Weights w = randomWeights(transformerTinyParams(c), rng);
  zeroBlockOutputs(w, c);
  Tensor tokens = randomTokens(c.seq, c.vocab, rng);
  expectTensorNear(transformerTiny(w, tokens, c),
                   lmHead(w, embedded(w, tokens)), 1e-12);
}

TEST(ReformerTiny, StreamsAreSummedBeforeTheNorm) {
  // F = G = 0: both streams stay x0 and the head sees x0 + x0.
  TinyModelConfig c = smallConfig();
  SplitMix64 rng(13);
  Weights w = randomWeights(reformerTinyParams(c), rng);
  zeroBlockOutputs(w, c);
  Tensor tokens = randomTokens(c.seq, c.vocab, rng);
  Tensor x0 = embedded(w, tokens);
  expectTensorNear(reformerTiny(w, tokens, c), lmHead(w, add(x0, x0)), 1e-12);
}

TEST(ReformerTiny, MatchesTheOpsComposedByHand) {
  // One layer, written out: y1 = x0 + F(x0), y2 = x0 + G(y1), head(y1 + y2).
  TinyModelConfig c = smallConfig();
  c.layers = 1;
  SplitMix64 rng(14);
  Weights w = randomWeights(reformerTinyParams(c), rng);
  Tensor tokens = randomTokens(c.seq, c.vocab, rng);
  Tensor x0 = embedded(w, tokens);
  Tensor n1 = layerNorm(x0, w["layers.0.attn_norm.gamma"],
                        w["layers.0.attn_norm.beta"]);
  Tensor qk = splitHeads(linear(n1, w["layers.0.attn.wq"]), c.heads);
  Tensor v = splitHeads(linear(n1, w["layers.0.attn.wv"]), c.heads);
  Tensor att = attention(qk, qk, v, true, std::nullopt, true);
  Tensor y1 = add(x0, linear(mergeHeads(att), w["layers.0.attn.wo"]));
  Tensor n2 =
      layerNorm(y1, w["layers.0.ff_norm.gamma"], w["layers.0.ff_norm.beta"]);
  Tensor y2 = add(x0, feedForward(n2, w["layers.0.ff.w1"], w["layers.0.ff.b1"],
                                  w["layers.0.ff.w2"], w["layers.0.ff.b2"],
                                  Activation::Relu));
  expectTensorNear(reformerTiny(w, tokens, c), lmHead(w, add(y1, y2)), 1e-12);
}

TEST(TransformerTiny, MatchesTheOpsComposedByHand) {
  // One layer: x1 = x0 + MHA(LN(x0)); x2 = x1 + FF(LN(x1)); head(x2).
  TinyModelConfig c = smallConfig();
  c.layers = 1;
  SplitMix64 rng(15);
  Weights w = randomWeights(transformerTinyParams(c), rng);
  Tensor tokens = randomTokens(c.seq, c.vocab, rng);
  Tensor x0 = embedded(w, tokens);
  Tensor n1 = layerNorm(x0, w["layers.0.attn_norm.gamma"],
                        w["layers.0.attn_norm.beta"]);
  Tensor q = splitHeads(linear(n1, w["layers.0.attn.wq"]), c.heads);
  Tensor k = splitHeads(linear(n1, w["layers.0.attn.wk"]), c.heads);
  Tensor v = splitHeads(linear(n1, w["layers.0.attn.wv"]), c.heads);
  Tensor x1 = add(
      x0, linear(mergeHeads(attention(q, k, v, true)), w["layers.0.attn.wo"]));
  Tensor n2 =
      layerNorm(x1, w["layers.0.ff_norm.gamma"], w["layers.0.ff_norm.beta"]);
  Tensor x2 = add(x1, feedForward(n2, w["layers.0.ff.w1"], w["layers.0.ff.b1"],
                                  w["layers.0.ff.w2"], w["layers.0.ff.b2"],
                                  Activation::Gelu));
  expectTensorNear(transformerTiny(w, tokens, c), lmHead(w, x2), 1e-12);
}

TEST(Models, AreCausal) {
  // Changing token t leaves the logits of every earlier position unchanged
  // (bit for bit) and changes position t's.
  TinyModelConfig c = smallConfig();
  SplitMix64 rng(16);
  Weights tw = randomWeights(transformerTinyParams(c), rng);
  Weights rw = randomWeights(reformerTinyParams(c), rng);
  Tensor tokens = randomTokens(c.seq, c.vocab, rng);
  Tensor changed = tokens;
  const int64_t t = 7;
  changed.data[t] = std::fmod(changed.data[t] + 1, double(c.vocab));
  for (bool reformer : {false, true}) {
    auto run = [&](const Tensor &tok) {
      return reformer ? reformerTiny(rw, tok, c) : transformerTiny(tw, tok, c);
    };
    Tensor a = run(tokens), b = run(changed);
    for (int64_t p = 0; p < c.seq; ++p) {
      bool same = true;
      for (int64_t o = 0; o < c.vocab; ++o)
        same = same && a.at({0, p, o}) == b.at({0, p, o});
      EXPECT_EQ(same, p < t)
          << (reformer ? "reformer" : "transformer") << " position " << p;
    }
  }
}

TEST(Models, ReportMissingAndMisshapenParameters) {
  TinyModelConfig c = smallConfig();
  SplitMix64 rng(17);
  Weights w = randomWeights(transformerTinyParams(c), rng);
  Tensor tokens = randomTokens(c.seq, c.vocab, rng);

  Weights missing = w;
  missing.erase("layers.1.attn.wk");
  EXPECT_EQ(errorOf([&] { transformerTiny(missing, tokens, c); }),
            "transformer-tiny: missing parameter 'layers.1.attn.wk' "
            "(expected shape [8, 8])");

  Weights wrong = w;
  wrong["lm_head.bias"] = Tensor({12});
  EXPECT_EQ(errorOf([&] { transformerTiny(wrong, tokens, c); }),
            "transformer-tiny: parameter 'lm_head.bias': expected shape "
            "[11], got [12]");

  // The reformer has no key weight; a transformer's weights lack nothing it
  // needs, and extra weights are ignored.
  EXPECT_EQ(errorOf([&] { reformerTiny(w, tokens, c); }), "");

  EXPECT_NE(errorOf([&] {
              transformerTiny(w, Tensor({1, 5}), c);
            }).find("tokens: expected shape [1, 12]"),
            std::string::npos);
}

} // namespace
