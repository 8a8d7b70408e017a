"""lcc-import hf-reformer against Hugging Face's ReformerModelWithLMHead.

The reference is a transcription, in torch, of the eval forward of
transformers' models/reformer/modeling_reformer.py (written here from its
algorithm, not copied): embeddings with axial positions, reversible layers
of LSHSelfAttention or LocalSelfAttention and chunked feed-forward, the two
streams concatenated and normalised, the LM head. It runs on the same
random weights, given to the importer in Hugging Face's names and layout
(model.safetensors), so the conversion is under test too.

LSH draws its random rotations at every call in Hugging Face; here both
sides hash with the rotations lcc compiles for each layer (drawn from the
layer's seed as test/reference/Reference.h documents, the same for every
head), so that the comparison is exact up to float rounding.

The transcription computes in double, hashing in f32 as both sides do.
In f32 Hugging Face's result carries a rounding of its own: it combines
the hash rounds by exp(lse - logsumexp(lse)), and a token that sees only
itself in every round (the first tokens of a causal model) has lse near
the self score -1e5, where an f32 logsumexp is off by up to half of 2^-7,
so the weights sum to 1 only within 0.4%. lcc normalises the weights; the
double transcription states the algorithm, not torch's f32 rounding.

The configurations: google/reformer-crime-and-punishment's config.json as
published, and google/reformer-enwik8's with its layer pattern, hashing (4
rounds into 512 buckets), chunk lengths and axial shape but a narrower
width (hidden 256, 8 heads of 16, feed-forward 512 instead of 1024, 8 of
128 and 4096: 149M parameters would make this a minutes-long test).
"""

import json
import math
import os
import sys

import numpy as np
import pytest
import torch

import lcc

SOURCE = os.environ["LCC_SOURCE_DIR"]
CONFIGS = os.path.join(SOURCE, "test", "tools", "Inputs", "hf-reformer")
sys.path.insert(0, CONFIGS)
from hf_reformer_weights import random_weights, write_safetensors  # noqa: E402


def read_config(name, **changes):
    with open(os.path.join(CONFIGS, name, "config.json")) as f:
        config = json.load(f)
    config.update(changes)
    return config


def enwik8_narrow(**changes):
    return read_config("enwik8", hidden_size=256, attention_head_size=16,
                       feed_forward_size=512, axial_pos_embds_dim=[64, 192],
                       **changes)


def lsh_rotations(head_dim, hashes, columns, seed):
    """attn.lsh_attention's rotations [head_dim, hashes, columns]:
    splitmix64 from `seed`, Box-Muller, rounded to f32 (Reference.h)."""
    mask = (1 << 64) - 1
    state = seed & mask

    def next_u64():
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    values = []
    for _ in range(head_dim * hashes * columns):
        u1 = ((next_u64() >> 11) + 0.5) * 2.0 ** -53
        u2 = ((next_u64() >> 11) + 0.5) * 2.0 ** -53
        values.append(math.sqrt(-2.0 * math.log(u1)) *
                      math.cos(2.0 * math.pi * u2))
    return torch.tensor(np.array(values, dtype=np.float32).reshape(
        head_dim, hashes, columns))


class HFReformer:
    """ReformerModelWithLMHead's eval forward, step by step."""

    def __init__(self, config, weights, seq_len, buckets, rotations):
        self.c = config
        self.w = {k: torch.from_numpy(v).double() for k, v in weights.items()}
        self.seq_len = seq_len
        self.buckets = buckets      # [n] or [n1, n2]
        self.rotations = rotations  # layer -> [head_dim, hashes, columns]
        self.heads = config["num_attention_heads"]
        self.d = config["attention_head_size"]
        self.causal = config["is_decoder"]

    def layer_norm(self, x, prefix):
        return torch.nn.functional.layer_norm(
            x, x.shape[-1:], self.w[prefix + ".weight"],
            self.w[prefix + ".bias"], self.c["layer_norm_eps"])

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.d).transpose(1, 2)

    def merge(self, x):
        b, _, s, _ = x.shape
        return x.transpose(1, 2).reshape(b, s, self.heads * self.d)

    @staticmethod
    def look_adjacent(x, before):
        """Each chunk with the `before` chunks before it, around the end
        (_look_adjacent with no chunks after)."""
        return torch.cat([torch.roll(x, -i, dims=2)
                          for i in range(-before, 1)], dim=3)

    def embeddings(self, tokens):
        s = self.seq_len
        words = self.w["reformer.embeddings.word_embeddings.weight"][tokens]
        w0 = self.w["reformer.embeddings.position_embeddings.weights.0"]
        w1 = self.w["reformer.embeddings.position_embeddings.weights.1"]
        a1 = w1.shape[1]
        p = torch.arange(s)
        positions = torch.cat([w0[p // a1, 0], w1[0, p % a1]], dim=-1)
        return words + positions

    def masked(self, dots, query_pos, key_pos, self_mask):
        if self.causal:
            dots = dots.masked_fill(
                query_pos[..., :, None] < key_pos[..., None, :], -1e9)
        if self_mask:
            dots = dots.masked_fill(
                query_pos[..., :, None] == key_pos[..., None, :], -1e5)
        return dots

    @staticmethod
    def unit_keys(x):
        # _len_and_dim_norm: x * rsqrt(mean(x^2) + 1e-6) / sqrt(d)
        d = x.shape[-1]
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) / \
            math.sqrt(d)

    def hash_buckets(self, qk, layer):
        """[B, heads, hashes, S] buckets, each round's offset by its
        index times the bucket count."""
        rotations = self.rotations[layer]
        hashes = rotations.shape[1]
        per_head = rotations.unsqueeze(0).expand(self.heads, *rotations.shape)
        # In f32, as Hugging Face and lcc hash.
        rotated = torch.einsum("bmtd,mdhr->bmhtr", qk.float(), per_head)
        buckets, product, column = None, 1, 0
        for factor in self.buckets:
            part = rotated[..., column:column + factor // 2]
            column += factor // 2
            index = torch.argmax(torch.cat([part, -part], dim=-1), dim=-1)
            buckets = index if buckets is None else buckets + product * index
            product *= factor
        offsets = torch.arange(hashes).view(1, 1, hashes, 1) * product
        return buckets + offsets, hashes

    def lsh_attention(self, qk, v, layer):
        s, chunk = self.seq_len, self.c["lsh_attn_chunk_length"]
        positions = torch.arange(s)
        if s <= chunk:
            dots = qk @ self.unit_keys(qk).transpose(-1, -2)
            dots = self.masked(dots, positions, positions, True)
            return torch.softmax(dots, -1) @ v
        buckets, hashes = self.hash_buckets(qk, layer)
        b = qk.shape[0]
        flat = buckets.reshape(b, self.heads, hashes * s)
        order = torch.argsort(flat * (hashes * s) +
                              torch.arange(hashes * s), dim=-1)
        undo = torch.argsort(order, dim=-1)
        pos = order % s
        qk_s = torch.gather(qk, 2, pos[..., None].expand(-1, -1, -1, self.d))
        v_s = torch.gather(v, 2, pos[..., None].expand(-1, -1, -1, self.d))
        chunks = hashes * s // chunk

        def chunked(x):
            return x.reshape(b, self.heads, chunks, chunk, *x.shape[3:])

        queries = chunked(qk_s)
        keys = self.look_adjacent(chunked(self.unit_keys(qk_s)), 1)
        values = self.look_adjacent(chunked(v_s), 1)
        query_pos = chunked(pos)
        key_pos = self.look_adjacent(query_pos, 1)
        dots = self.masked(queries @ keys.transpose(-1, -2), query_pos,
                           key_pos, True)
        lse = torch.logsumexp(dots, -1, keepdim=True)
        out = (torch.exp(dots - lse) @ values).reshape(b, self.heads,
                                                       hashes * s, self.d)
        lse = lse.reshape(b, self.heads, hashes * s)
        out = torch.gather(out, 2, undo[..., None].expand(-1, -1, -1, self.d))
        lse = torch.gather(lse, 2, undo)
        if hashes == 1:
            return out
        out = out.reshape(b, self.heads, hashes, s, self.d)
        lse = lse.reshape(b, self.heads, hashes, s, 1)
        weights = torch.exp(lse - torch.logsumexp(lse, dim=2, keepdim=True))
        return (out * weights).sum(dim=2)

    def local_attention(self, q, k, v):
        s, chunk = self.seq_len, self.c["local_attn_chunk_length"]
        k = k / math.sqrt(self.d)
        positions = torch.arange(s)
        if s <= chunk:
            dots = self.masked(q @ k.transpose(-1, -2), positions, positions,
                               False)
            return torch.softmax(dots, -1) @ v
        before = self.c["local_num_chunks_before"]
        b, chunks = q.shape[0], s // chunk

        def chunked(x):
            return x.reshape(b, self.heads, chunks, chunk, *x.shape[3:])

        query_pos = positions.view(1, 1, chunks, chunk)
        key_pos = self.look_adjacent(query_pos, before)
        dots = chunked(q) @ self.look_adjacent(chunked(k),
                                               before).transpose(-1, -2)
        dots = self.masked(dots, query_pos, key_pos, False)
        out = torch.softmax(dots, -1) @ self.look_adjacent(chunked(v), before)
        return out.reshape(b, self.heads, s, self.d)

    def attention(self, x, i):
        layer = "reformer.encoder.layers.%d.attention." % i
        self_ = layer + "self_attention."
        x = self.layer_norm(x, layer + "layer_norm")
        v = self.split(x @ self.w[self_ + "value.weight"].T)
        if self.c["attn_layers"][i] == "lsh":
            qk = self.split(x @ self.w[self_ + "query_key.weight"].T)
            out = self.lsh_attention(qk, v, i)
        else:
            q = self.split(x @ self.w[self_ + "query.weight"].T)
            k = self.split(x @ self.w[self_ + "key.weight"].T)
            out = self.local_attention(q, k, v)
        return self.merge(out) @ self.w[layer + "output.dense.weight"].T

    def feed_forward(self, x, i):
        layer = "reformer.encoder.layers.%d.feed_forward." % i
        x = self.layer_norm(x, layer + "layer_norm")
        x = x @ self.w[layer + "dense.dense.weight"].T + \
            self.w[layer + "dense.dense.bias"]
        x = torch.relu(x) if self.c["hidden_act"] == "relu" else \
            torch.nn.functional.gelu(x)
        return x @ self.w[layer + "output.dense.weight"].T + \
            self.w[layer + "output.dense.bias"]

    def logits(self, tokens):
        with torch.no_grad():
            x2 = self.embeddings(torch.from_numpy(tokens).long())
            x1 = x2
            for i in range(len(self.c["attn_layers"])):
                x1 = x1 + self.attention(x2, i)
                x2 = x2 + self.feed_forward(x1, i)
            z = self.layer_norm(torch.cat([x1, x2], dim=-1),
                                "reformer.encoder.layer_norm")
            return (z @ self.w["lm_head.decoder.weight"].T +
                    self.w["lm_head.bias"]).numpy()


def lsh_attributes(model_text, layer):
    """n_buckets, factorized and seed of layer `layer`'s attn.lsh_attention
    in the imported model."""
    text = model_text.split("// layer %d:" % layer, 1)[1]
    line = text[text.index("attn.lsh_attention"):].split("\n", 1)[0]

    def integer(name):
        return int(line.split(name + " = ", 1)[1].split(" ", 1)[0])

    return integer("n_buckets"), "factorized_hash" in line, integer("seed")


def hash_factors(count):
    """lcc's factorized bucket pair (n1, n2): n1 the largest even divisor
    with n1^2 <= count whose cofactor is even."""
    first = max(f for f in range(2, math.isqrt(count) + 1, 2)
                if count % f == 0 and (count // f) % 2 == 0)
    return [first, count // first]


def rotations_of(config, model_text):
    """Per LSH layer, the rotations lcc hashes with, and the buckets."""
    rotations, buckets = {}, None
    for i, kind in enumerate(config["attn_layers"]):
        if kind != "lsh" or "attn.lsh_attention" not in \
                model_text.split("// layer %d:" % i, 1)[1].split(
                    "// layer", 1)[0]:
            continue
        count, factorized, seed = lsh_attributes(model_text, i)
        buckets = hash_factors(count) if factorized else [count]
        columns = sum(n // 2 for n in buckets)
        rotations[i] = lsh_rotations(config["attention_head_size"],
                                     config["num_hashes"], columns, seed)
    return rotations, buckets


def import_and_run(tmp_path, config, seq_len, batch=2):
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text(json.dumps(config))
    weights = random_weights(config, seed=seq_len)
    write_safetensors(checkpoint / "model.safetensors", weights)
    params = tmp_path / "weights.safetensors"
    text = lcc.import_hf_reformer(checkpoint, seq_len, params=params,
                                  batch=batch, seed=3)
    module = lcc.load(lcc.compile(text))
    module.load_params(params)
    rng = np.random.default_rng(seq_len)
    tokens = rng.integers(0, config["vocab_size"], (batch, seq_len),
                          dtype=np.int32)
    ours = module["forward"](tokens)
    rotations, buckets = rotations_of(config, text)
    reference = HFReformer(config, weights, seq_len, buckets,
                           rotations).logits(tokens)
    return ours, reference


CASES = {
    # Factorized hashing ([64, 128]: 8192 buckets), 1 round, local and
    # LSH chunks of 64, 32 of them.
    "crime-and-punishment-2048": (lambda: read_config("crime-and-punishment"),
                                  2048),
    # Not causal: local chunk 0 looks back at the last chunk.
    "crime-and-punishment-encoder-512": (
        lambda: read_config("crime-and-punishment", is_decoder=False), 512),
    # 4 rounds into 512 buckets, 4 chunks of 256 each: a round's first
    # chunk looks back at the previous round's last.
    "enwik8-narrow-1024": (enwik8_narrow, 1024),
    # LSH over one chunk (256): full shared-QK attention; local chunked.
    "enwik8-narrow-256": (enwik8_narrow, 256),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_logits_equal_hugging_face(tmp_path, case):
    make, seq_len = CASES[case]
    ours, reference = import_and_run(tmp_path, make(), seq_len)
    scale = np.abs(reference).max()
    np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=2e-5 * scale)


def test_fresh_weights_follow_the_config(tmp_path):
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    config = read_config("crime-and-punishment", initializer_range=0.5)
    (checkpoint / "config.json").write_text(json.dumps(config))
    params = tmp_path / "fresh.safetensors"
    text = lcc.import_hf_reformer(checkpoint, 128, params=params)
    module = lcc.load(lcc.compile(text))
    module.load_params(params)
    p = module.params
    word = p["reformer.embeddings.word_embeddings.weight"]
    assert word.shape == (320, 256)
    assert abs(word.std() - 0.5) < 0.01
    axial = p["reformer.embeddings.position_embeddings.weights.1"]
    assert abs(axial.std() - 1.0) < 0.02
    assert (p["reformer.encoder.layer_norm.weight"] == 1).all()
    assert (p["lm_head.bias"] == 0).all()
    # A torch Linear's [out, in] weight is held [in, out].
    assert p["lm_head.decoder.weight"].shape == (512, 320)


def test_imported_model_trains(tmp_path):
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text(
        json.dumps(read_config("crime-and-punishment")))
    params = tmp_path / "fresh.safetensors"
    text = lcc.import_hf_reformer(checkpoint, 256, params=params)
    module = lcc.load(lcc.compile(text, train=True, optimizer="adam",
                                  lr=3e-3))
    module.load_params(params)
    rng = np.random.default_rng(7)
    tokens = rng.integers(0, 320, (1, 257), dtype=np.int32)
    losses = [module.train_step(tokens[:, :-1], tokens[:, 1:])
              for _ in range(12)]
    assert all(math.isfinite(loss) for loss in losses)
    # Learning one batch by heart: from about ln 320 = 5.8 to well below.
    assert losses[-1] < 0.5 * losses[0], losses


def test_a_field_lcc_cannot_honour_is_an_error(tmp_path):
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    config = read_config("crime-and-punishment", hidden_act="gelu_new")
    (checkpoint / "config.json").write_text(json.dumps(config))
    with pytest.raises(lcc.LccError, match="hidden_act: 'gelu_new'"):
        lcc.import_hf_reformer(checkpoint, 128)
