"""lcc --decode (docs/generation.md): prefill and every decode step equal
the full forward at the same positions. Models: the bundled
transformer-tiny (learned positions, residual blocks, 512 tokens), the
bundled Reformer with dense shared-QK attention (reversible blocks, 1024
tokens), mask and score regions, sparse attention (fixed and strided) and
random models of test_gradient_accuracy.py's family (residual or
reversible blocks, batch 1 with learned positions or batch 2 without), with
fresh weights and tokens; each step is fed the forward's own token at its
position (teacher forcing), so that the logits compare position by
position. LSH and routed attention (trained centroids) against the
forward compiled at the length of the tokens so far; models with memories
step by step through their segments, and generating segment by segment
without --decode. A fresh seed per run, printed;
LCC_DECODE_SEED replays one."""

import os
import re

import numpy as np
import pytest

import lcc
from test_gradient_accuracy import model_source

SOURCE = os.environ.get("LCC_SOURCE_DIR", ".")


def relative(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def fresh_rng(offset=0):
    """A generator from a fresh seed (LCC_DECODE_SEED replays one), printed."""
    seed = int(os.environ.get("LCC_DECODE_SEED",
                              np.random.SeedSequence().entropy % 2**32))
    print(f"LCC_DECODE_SEED={seed}")
    return np.random.default_rng(seed + offset)


def check_decode(module, rng, prompt, steps):
    """Prefill on `prompt` tokens, then `steps` decode steps, against the
    forward on the whole sequence."""
    batch, length = module["forward"].signature["inputs"][0]["shape"]
    vocab = module["forward"].signature["outputs"][0]["shape"][2]
    tokens = rng.integers(0, vocab, (batch, length)).astype(np.int32)
    full = module["forward"](tokens)
    padded = tokens.copy()
    padded[:, prompt:] = 0  # what follows the prompt is not seen
    before = module["prefill"](padded)
    assert relative(before[:, :prompt], full[:, :prompt]) <= 1e-6
    worst = 0.0
    for position in range(prompt, min(length, prompt + steps)):
        logits = module["decode_step"](tokens[:, position:position + 1],
                                       np.array([[position]], np.int32))
        assert logits.shape == (batch, 1, vocab)
        worst = max(worst, relative(logits[:, 0], full[:, position]))
    assert worst <= 1e-5, worst
    return worst


def test_transformer_tiny_decodes_as_its_forward():
    rng = fresh_rng()
    module = lcc.load(lcc.compile(
        os.path.join(SOURCE, "models", "transformer-tiny.mlir"), decode=True))
    module.init_params(int(rng.integers(0, 2**31)))
    prompt = int(rng.integers(1, 400))
    print("prompt", prompt, "worst", check_decode(module, rng, prompt, 24))
    # The last position too: the caches full.
    print("end", check_decode(module, rng, 508, 4))


def test_reformer_tiny_decodes_as_its_forward():
    """Shared-QK attention (keys the unit queries, a token's score with
    itself -1e5) in reversible blocks, 1024 positions; the first position
    too, where a token sees only itself."""
    rng = fresh_rng()
    module = lcc.load(lcc.compile(
        os.path.join(SOURCE, "models", "reformer-tiny.mlir"), decode=True))
    module.init_params(int(rng.integers(0, 2**31)))
    print("start", check_decode(module, rng, 1, 3))
    prompt = int(rng.integers(2, 1000))
    print("prompt", prompt, "worst", check_decode(module, rng, prompt, 8))


@pytest.mark.parametrize("model,options", [
    ("test/tools/Inputs/decode/masked.mlir", {}),
    ("models/transformer-tiny.mlir",
     {"attention": "sparse", "sparse_pattern": "strided"}),
    ("models/transformer-tiny.mlir",
     {"attention": "sparse", "sparse_pattern": "fixed"})])
def test_masked_and_sparse_attention_decode_as_their_forward(model, options):
    """A mask region (a window of keys) and a score region (ALiBi) evaluated
    at the step's position, and sparse attention as the masked attention it
    equals."""
    rng = fresh_rng()
    module = lcc.load(lcc.compile(os.path.join(SOURCE, model), decode=True,
                                  **options))
    module.init_params(int(rng.integers(0, 2**31)))
    length = module["forward"].signature["inputs"][0]["shape"][1]
    prompt = int(rng.integers(1, length - 12))
    print("prompt", prompt, "worst", check_decode(module, rng, prompt, 12))


@pytest.mark.parametrize("batch", [1, 2])
def test_random_models_decode_as_their_forward(batch):
    rng = fresh_rng(batch)
    config = {"seq": int(rng.choice([64, 128])), "d_model": 32,
              "heads": int(rng.choice([2, 4])), "d_ff": 64, "vocab": 40,
              "layers": int(rng.integers(1, 4)),
              "reversible": bool(rng.integers(0, 2)), "causal": True,
              "activation": str(rng.choice(["gelu", "relu"])),
              "batch": batch}
    print(config)
    module = lcc.load(lcc.compile(model_source(config, forward=True),
                                  decode=True))
    module.init_params(int(rng.integers(0, 2**31)))
    prompt = int(rng.integers(1, config["seq"] - 8))
    print("worst", check_decode(module, rng, prompt, 8))


def test_a_longer_cache_decodes_past_the_forwards_length(tmp_path):
    """--max-cache beyond the forward's 48 positions (a model without
    learned positions): prefill fills 48 rows, the steps go on to the
    caches' end, each equal to the same model's forward compiled at that
    length; greedy generation past 48 makes the tokens that recomputing
    with the longer forward makes."""
    rng = fresh_rng()
    path = os.path.join(SOURCE, "test/tools/Inputs/decode/batch2.mlir")
    capacity = int(rng.integers(65, 140))
    module = lcc.load(lcc.compile(path, decode=True, max_cache=capacity))
    longer = tmp_path / "longer.mlir"
    with open(path) as f:
        longer.write_text(f.read().replace("x48x", "x%dx" % capacity)
                          .replace("x48xi32", "x%dxi32" % capacity))
    whole = lcc.load(lcc.compile(str(longer), decode=True))
    module.init_params(int(rng.integers(0, 2**31)))
    module.save_params(str(tmp_path / "w.safetensors"))
    whole.load_params(str(tmp_path / "w.safetensors"))
    tokens = rng.integers(0, 32, (2, capacity)).astype(np.int32)
    full = whole["forward"](tokens)
    prompt = int(rng.integers(1, 48))
    padded = tokens[:, :48].copy()
    padded[:, prompt:] = 0
    before = module["prefill"](padded)
    assert relative(before[:, :prompt], full[:, :prompt]) <= 1e-6
    worst = 0.0
    for position in range(prompt, capacity):
        logits = module["decode_step"](tokens[:, position:position + 1],
                                       np.array([[position]], np.int32))
        worst = max(worst, relative(logits[:, 0], full[:, position]))
    print("capacity", capacity, "prompt", prompt, "worst", worst)
    assert worst <= 1e-5, worst
    with pytest.raises(ValueError, match="outside the valid range"):
        module["decode_step"](tokens[:, :1],
                              np.array([[capacity]], np.int32))
    new = capacity - prompt
    cached = module.generate(tokens[:, :prompt], new)
    assert cached.shape == (2, capacity)
    assert module.last_generation["new_tokens"] == new
    np.testing.assert_array_equal(
        whole.generate(tokens[:, :prompt], new, recompute=True), cached)


def check_steps_against_prefix_forwards(model, tmp_path, capacity=64):
    """`model` (test/tools/Inputs/decode/, 64 positions, two sequences, a
    vocabulary of 32), compiled with --decode and --max-cache=`capacity`:
    from a random prompt, the step at t equals the model's forward compiled
    at t + 1 tokens at its last position, at random positions; below 8
    tokens, where those forwards cannot be compiled, its dense form's
    forward (`attention="dense"`)."""
    rng = fresh_rng()
    path = os.path.join(SOURCE, "test/tools/Inputs/decode", model)
    with open(path) as f:
        text = f.read()
    module = lcc.load(lcc.compile(path, decode=True, max_cache=capacity))
    module.init_params(int(rng.integers(0, 2**31)))
    weights = str(tmp_path / "w.safetensors")
    module.save_params(weights)
    tokens = rng.integers(0, 32, (2, capacity)).astype(np.int32)
    prompt = int(rng.integers(1, 12))
    checked = set(rng.choice(np.arange(max(prompt, 8), capacity - 1), 5,
                             replace=False))
    checked.add(capacity - 1)
    dense = lcc.load(lcc.compile(path, attention="dense"))
    dense.load_params(weights)
    whole = dense["forward"](tokens[:, :64])
    padded = tokens[:, :64].copy()
    padded[:, prompt:] = 0
    module["prefill"](padded)
    worst = 0.0
    for t in range(prompt - 1, capacity):
        logits = module["decode_step"](tokens[:, t:t + 1],
                                       np.array([[t]], np.int32))[:, 0]
        if t < 8:
            expected = whole[:, t]
        elif t in checked:
            prefix = tmp_path / ("prefix%d.mlir" % (t + 1))
            prefix.write_text(text.replace("x64x", "x%dx" % (t + 1))
                              .replace("x64xi32", "x%dxi32" % (t + 1)))
            forward = lcc.load(lcc.compile(str(prefix)))
            forward.load_params(weights)
            expected = forward["forward"](tokens[:, :t + 1])[:, t]
        else:
            continue
        worst = max(worst, relative(logits, expected))
    print("prompt", prompt, "checked", sorted(checked), "worst", worst)
    assert worst <= 1e-5, worst


@pytest.mark.parametrize("capacity", [64, 100])
def test_lsh_decodes_as_its_forward_over_the_tokens_so_far(tmp_path,
                                                           capacity):
    """LSH attention (3 rounds, buckets of 8, n_buckets 8 given): the sort
    sees the tokens so far only; below one bucket every round's two chunks
    hold all of them, so the step equals dense attention. With
    --max-cache=100, past the 64 positions prefill runs too."""
    check_steps_against_prefix_forwards("lsh.mlir", tmp_path, capacity)


def test_routed_decodes_as_its_forward_over_the_tokens_so_far(tmp_path):
    """Routed attention with trained centroids (4 clusters, windows of 8):
    the window chosen among the tokens so far; below a window of tokens
    every token is in it, and the step equals dense attention."""
    check_steps_against_prefix_forwards("routed.mlir", tmp_path)


def test_lsh_with_buckets_from_the_length_decodes_its_last_position(
        tmp_path):
    """Without n_buckets (the count follows from the model's length), the
    step at the last position sorts the whole sequence as the forward
    does."""
    rng = fresh_rng()
    path = os.path.join(SOURCE, "test/tools/Inputs/decode/lsh.mlir")
    with open(path) as f:
        text = f.read().replace(" n_buckets = 8 : i64,", "")
    source = tmp_path / "lsh.mlir"
    source.write_text(text)
    module = lcc.load(lcc.compile(str(source), decode=True))
    module.init_params(int(rng.integers(0, 2**31)))
    tokens = rng.integers(0, 32, (2, 64)).astype(np.int32)
    full = module["forward"](tokens)
    prompt = int(rng.integers(1, 60))
    padded = tokens.copy()
    padded[:, prompt:] = 0
    module["prefill"](padded)
    for t in range(prompt, 64):
        logits = module["decode_step"](tokens[:, t:t + 1],
                                       np.array([[t]], np.int32))
    error = relative(logits[:, 0], full[:, 63])
    print("prompt", prompt, "last", error)
    assert error <= 1e-5, error


def test_stacked_lsh_steps_read_only_the_tokens_so_far():
    """The bundled Reformer with --attention=lsh, two reversible layers:
    a lower layer's cached rows are its steps' (each attending over the
    tokens up to it), so no full forward gives the steps (its earlier
    positions sort with later tokens). From a one-token prompt, whose
    prefill row sees only itself, the steps must not depend on what fills
    the caches after the position: two prefills with other padding give
    the same logits, bit for bit."""
    rng = fresh_rng()
    module = lcc.load(lcc.compile(
        os.path.join(SOURCE, "models", "reformer-tiny.mlir"), decode=True,
        attention="lsh"))
    module.init_params(int(rng.integers(0, 2**31)))
    tokens = rng.integers(0, 256, (1, 1024)).astype(np.int32)
    runs = []
    for padding in (np.zeros_like(tokens), tokens[:, ::-1].copy()):
        padding[:, 0] = tokens[:, 0]
        module["prefill"](padding)
        runs.append([module["decode_step"](tokens[:, t:t + 1],
                                           np.array([[t]], np.int32))
                     for t in range(1, 80)])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
    assert np.isfinite(runs[0][-1]).all()


@pytest.mark.parametrize("model", ["transformer-xl-tiny", "adaptive-span-tiny",
                                   "compressive-tiny"])
def test_memory_models_generate_segment_by_segment(model):
    """A model whose forward carries memories generates without --decode:
    each token from its segment's forward with the memories the segments
    before it left. Greedy across several 64-token segments: the tokens
    equal recomputing every segment from the first for each token, and
    each is the argmax of the forward run segment by segment over the
    whole text, the memories carried in Python (teacher forcing)."""
    rng = fresh_rng()
    module = lcc.load(lcc.compile(os.path.join(SOURCE, "models",
                                               model + ".mlir")))
    module.init_params(int(rng.integers(0, 2**31)))
    prompt = rng.integers(0, 256, (1, int(rng.integers(1, 100))))
    prompt = prompt.astype(np.int32)
    tokens = module.generate(prompt, 150)
    assert tokens.shape == (1, prompt.shape[1] + 150)
    np.testing.assert_array_equal(
        module.generate(prompt, 150, recompute=True), tokens)
    signature = module["forward"].signature
    memories = [np.zeros(i["shape"], np.float32)
                for i in signature["inputs"][1:]]
    text = np.zeros((1, -(-tokens.shape[1] // 64) * 64), np.int32)
    text[:, :tokens.shape[1]] = tokens
    logits = []
    for start in range(0, text.shape[1], 64):
        results = module["forward"](text[:, start:start + 64], *memories)
        logits.append(results[0])
        memories = list(results[1:1 + len(memories)])
    logits = np.concatenate(logits, axis=1)
    chosen = logits[0, prompt.shape[1] - 1:tokens.shape[1] - 1].argmax(-1)
    np.testing.assert_array_equal(chosen, tokens[0, prompt.shape[1]:])


@pytest.mark.parametrize("model", ["transformer-xl-tiny", "adaptive-span-tiny",
                                   "compressive-tiny", "transformer-xl-clamped"])
def test_memory_models_decode_as_their_forward(model, tmp_path):
    """--decode on a model that carries memories: each segment's prefill
    takes the memories the one before left and caches their keys and
    values; a step at each place in the segment equals the forward's logits
    there and returns its rows of the per-position memories, which with
    prefill's memories computed from memories alone (the compressive
    memory's) equal the forward's next memories. Three segments, teacher
    forced, the first from a random prompt; then greedy generation with
    the steps equals recomputing every segment."""
    rng = fresh_rng()
    source = os.path.join(SOURCE, "models", model + ".mlir")
    if model == "transformer-xl-clamped":
        # Transformer-XL with clamp_len and same_length: distances past 40
        # share an encoding, and no key is 80 or more positions back.
        with open(os.path.join(SOURCE, "models", "transformer-xl-tiny.mlir")) as f:
            text = f.read()
        text = re.sub(r"(attn\.relative_attention [^\n]*)\n",
                      r"\1 {clamp_len = 40 : i64, same_length = 80 : i64}\n",
                      text)
        assert text.count("same_length") == 2
        source = str(tmp_path / "clamped.mlir")
        with open(source, "w") as f:
            f.write(text)
    module = lcc.load(lcc.compile(source, decode=True))
    module.init_params(int(rng.integers(0, 2**31)))
    signature = module["prefill"].signature
    step_outputs = [o["name"] for o in module["decode_step"].signature[
        "outputs"]]
    names = [i["name"] for i in signature["inputs"][1:]]
    assert step_outputs == ["logits"] + [n + ".row" for n in names
                                         if n.startswith("mem")]
    memories = [np.zeros(i["shape"], np.float32)
                for i in signature["inputs"][1:]]
    text = rng.integers(0, 256, (1, 192)).astype(np.int32)
    prompt = int(rng.integers(1, 64))
    worst = 0.0
    for start in range(0, 192, 64):
        segment = text[:, start:start + 64]
        full = module["forward"](segment, *memories)
        known = prompt if start == 0 else 0
        padded = segment.copy()
        padded[:, known:] = 0
        before = module["prefill"](padded, *memories)
        nexts = [np.array(m) for m in before[1:1 + len(memories)]]
        for row in range(known, 64):
            results = module["decode_step"](segment[:, row:row + 1],
                                            np.array([[row]], np.int32))
            worst = max(worst, relative(results[0][:, 0], full[0][:, row]))
            for name, rows in zip(step_outputs[1:], results[1:]):
                nexts[names.index(name[:-4])][:, row] = rows[:, 0]
        for ours, theirs in zip(nexts, full[1:1 + len(memories)]):
            assert relative(ours, theirs) <= 1e-5
        memories = list(full[1:1 + len(memories)])
    assert worst <= 1e-5, worst
    print("prompt", prompt, "worst", worst)
    prompt_tokens = text[:, :int(rng.integers(1, 100))]
    tokens = module.generate(prompt_tokens, 150)
    np.testing.assert_array_equal(
        module.generate(prompt_tokens, 150, recompute=True), tokens)


def test_a_cache_is_no_checkpoint_state(tmp_path):
    """Weights saved from a decode module hold no caches, and a checkpoint
    of the train step (Adam state, no caches) binds to it."""
    source = os.path.join(SOURCE, "models", "transformer-tiny.mlir")
    trained = lcc.load(lcc.compile(source, train=True, optimizer="adam"))
    trained.init_params(3)
    trained.save_params(str(tmp_path / "checkpoint.safetensors"))
    module = lcc.load(lcc.compile(source, decode=True))
    module.load_params(str(tmp_path / "checkpoint.safetensors"))
    module.save_params(str(tmp_path / "weights.safetensors"))
    import json
    with open(tmp_path / "weights.safetensors", "rb") as f:
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
    assert not [n for n in header if n.startswith("decode.cache.")]
    assert "embed.tokens" in header


def test_generate_runs_lcc_generates_loop(tmp_path):
    """Module.generate: greedy with caches equals recomputing; top_k=1 is
    greedy; a seed repeats its samples; the end token stops; the caches
    filling stops; the errors."""
    source = os.path.join(SOURCE, "models", "transformer-tiny.mlir")
    module = lcc.load(lcc.compile(source, decode=True))
    module.init_params(5)
    rng = np.random.default_rng(6)  # fixed: argmax ties would differ
    prompt = rng.integers(0, 256, (1, 21)).astype(np.int32)
    greedy = module.generate(prompt, 24)
    assert greedy.shape == (1, 45) and greedy.dtype == np.int32
    assert (greedy[:, :21] == prompt).all()
    assert module.last_generation["new_tokens"] == 24
    np.testing.assert_array_equal(module.generate(prompt, 24,
                                                  recompute=True), greedy)
    np.testing.assert_array_equal(module.generate(prompt, 24, top_k=1,
                                                  seed=9), greedy)
    a = module.generate(prompt, 24, temperature=1.0, top_p=0.9, seed=1)
    b = module.generate(prompt, 24, temperature=1.0, top_p=0.9, seed=1)
    np.testing.assert_array_equal(a, b)
    end = int(greedy[0, 23])
    first = int(np.argmax(greedy[0, 21:] == end))
    ended = module.generate(prompt, 24, end_token=end)
    np.testing.assert_array_equal(ended, greedy[:, :21 + first + 1])
    full = module.generate(rng.integers(0, 256, (1, 510)).astype(np.int32), 9)
    assert full.shape == (1, 512) and module.last_generation["caches_full"]
    with pytest.raises(ValueError, match="the model takes 1 to 512"):
        module.generate(np.zeros((1, 513), np.int32), 4)
    with pytest.raises(ValueError, match=r"expected int32 tokens \[1, length\]"):
        module.generate(np.zeros((2, 5), np.int32), 4)
    with pytest.raises(ValueError, match="top_p"):
        module.generate(prompt, 4, top_p=0)
    plain = lcc.load(lcc.compile(source))
    with pytest.raises(lcc.LccError, match="decode=True"):
        plain.generate(prompt, 4)
