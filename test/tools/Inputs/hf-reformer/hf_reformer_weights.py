"""Hugging Face Reformer checkpoints for lcc-import's tests.

As a module (test/python/test_hf_reformer.py): random_weights(config) is a
ReformerModelWithLMHead state dict in Hugging Face's names and layout
(torch Linear weights [out, in]), write_safetensors() writes one.

As a tool (test/tools/lcc-import.test):
  hf_reformer_weights.py CONFIG OUT [--extra=NAME] [--drop=NAME]
      [--transpose=NAME]          a model.safetensors for CONFIG, edited
  hf_reformer_weights.py --check HF LCC
                                  each tensor of HF in LCC, the same values
                                  or transposed; prints the counts
"""

import argparse
import json
import struct
import sys

import numpy as np


def random_weights(config, seed=0):
    """The state dict of random values; layer norms and biases too, so that
    a dropped one shows."""
    rng = np.random.default_rng(seed)
    hidden, ff = config["hidden_size"], config["feed_forward_size"]
    heads = config["num_attention_heads"] * config["attention_head_size"]
    vocab = config["vocab_size"]

    def normal(*shape, std=0.05):
        return rng.normal(0.0, std, shape).astype(np.float32)

    def norm(size, prefix):
        return {prefix + ".weight": 1 + normal(size, std=0.1),
                prefix + ".bias": normal(size, std=0.1)}

    w = {"reformer.embeddings.word_embeddings.weight": normal(vocab, hidden)}
    (a0, a1), (d0, d1) = config["axial_pos_shape"], config["axial_pos_embds_dim"]
    positions = "reformer.embeddings.position_embeddings.weights."
    w[positions + "0"] = normal(a0, 1, d0, std=0.5)
    w[positions + "1"] = normal(1, a1, d1, std=0.5)
    for i, kind in enumerate(config["attn_layers"]):
        layer = "reformer.encoder.layers.%d." % i
        w.update(norm(hidden, layer + "attention.layer_norm"))
        self = layer + "attention.self_attention."
        names = ["query_key", "value"] if kind == "lsh" else \
            ["query", "key", "value"]
        for name in names:
            w[self + name + ".weight"] = normal(heads, hidden, std=0.1)
        w[layer + "attention.output.dense.weight"] = normal(hidden, heads)
        w.update(norm(hidden, layer + "feed_forward.layer_norm"))
        w[layer + "feed_forward.dense.dense.weight"] = normal(ff, hidden)
        w[layer + "feed_forward.dense.dense.bias"] = normal(ff)
        w[layer + "feed_forward.output.dense.weight"] = normal(hidden, ff)
        w[layer + "feed_forward.output.dense.bias"] = normal(hidden)
    w.update(norm(2 * hidden, "reformer.encoder.layer_norm"))
    w["lm_head.decoder.weight"] = normal(vocab, 2 * hidden)
    w["lm_head.bias"] = normal(vocab)
    return w


def write_safetensors(path, tensors):
    """A .safetensors file of f32 tensors (the format's header, by hand)."""
    header, offset, blobs = {}, 0, []
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    length = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    body = data[8 + length:]
    return {name: np.frombuffer(body[e["data_offsets"][0]:
                                     e["data_offsets"][1]],
                                dtype="<f4").reshape(e["shape"])
            for name, e in header.items()}


def check(hf_path, lcc_path):
    hf, ours = read_safetensors(hf_path), read_safetensors(lcc_path)
    transposed = 0
    for name, value in hf.items():
        if name not in ours:
            sys.exit("%s: not in %s" % (name, lcc_path))
        got = ours[name]
        if got.shape == value.shape and np.array_equal(got, value):
            continue
        if value.ndim == 2 and np.array_equal(got, value.T):
            transposed += 1
            continue
        sys.exit("%s: other values" % name)
    print("%d tensors; %d transposed" % (len(hf), transposed))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        check(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("out")
    parser.add_argument("--extra", action="append", default=[])
    parser.add_argument("--drop", action="append", default=[])
    parser.add_argument("--transpose", action="append", default=[])
    args = parser.parse_args()
    with open(args.config) as f:
        weights = random_weights(json.load(f))
    for name in args.extra:
        weights[name] = np.zeros((1,), np.float32)
    for name in args.drop:
        del weights[name]
    for name in args.transpose:
        weights[name] = weights[name].T
    write_safetensors(args.out, weights)


if __name__ == "__main__":
    main()
