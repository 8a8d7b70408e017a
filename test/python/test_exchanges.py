"""Exchanges among ranks (docs/attn-dialect.md, attn.all_to_all and
attn.ring_shift): under mpirun each rank gets what the others send it, and
the train step's gradients flow back through the transposed exchanges, as
one process simulating every rank with torch computes them. Run by ctest
as python/pytest; the jobs skip without mpirun."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import lcc

EXCHANGES = """
func.func @forward(%x: tensor<<P>x3x4xf32>) -> (tensor<<P>x3x4xf32>, tensor<<P>x3x4xf32>, tensor<<P>x3x4xf32>) {
  %a = attn.all_to_all %x : tensor<<P>x3x4xf32>
  %s = attn.ring_shift %x by 1 : tensor<<P>x3x4xf32>
  %t = attn.ring_shift %a by -3 : tensor<<P>x3x4xf32>
  return %a, %s, %t : tensor<<P>x3x4xf32>, tensor<<P>x3x4xf32>, tensor<<P>x3x4xf32>
}
"""

# Rank r's x is r * 100 + 0, 1, 2, ...: every element says where it began.
FORWARD = """
import sys
import numpy as np
import lcc
p, r = lcc.ranks(), lcc.rank()
module = lcc.load(lcc.compile(open(sys.argv[1]).read()))
xs = [np.arange(p * 12, dtype=np.float32).reshape(p, 3, 4) + 100 * q
      for q in range(p)]
a, s, t = module["forward"](xs[r])
exchanged = [np.stack([xs[j][q] for j in range(p)]) for q in range(p)]
np.testing.assert_array_equal(a, exchanged[r])
np.testing.assert_array_equal(s, xs[(r - 1) % p])
np.testing.assert_array_equal(t, exchanged[(r + 3) % p])
print("rank", r, "of", p, "exchanged")
"""

# Logits that cross ranks twice: rank r's loss reads every rank's weights.
LOSS = """
func.func @loss(%x: tensor<2x3x4xf32>, %labels: tensor<2x3xi32>) -> tensor<f32> {
  %w = attn.param "w" : tensor<2x3x4xf32>
  %h = arith.mulf %x, %w : tensor<2x3x4xf32>
  %a = attn.all_to_all %h : tensor<2x3x4xf32>
  %s = attn.ring_shift %a by 1 : tensor<2x3x4xf32>
  %y = arith.mulf %s, %x : tensor<2x3x4xf32>
  %l = attn.softmax_cross_entropy %y, %labels
      : (tensor<2x3x4xf32>, tensor<2x3xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
"""

TRAIN = """
import sys
import numpy as np
import lcc
source, data, out = sys.argv[1:4]
module = lcc.load(lcc.compile(open(source).read(), train=True,
                              optimizer="sgd", lr=0.5))
module.init_params(seed=3)
r = lcc.rank()
x, labels = np.load(data + "/x.npy"), np.load(data + "/labels.npy")
start = np.array(module.params["w"])
losses = [float(module.train_step(x[r], labels[r])) for step in range(3)]
if r == 0:
    np.savez(out, start=start, w=np.array(module.params["w"]),
             losses=np.array(losses))
"""

MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")


def run_job(ranks, *arguments):
    subprocess.run(["mpirun", "--oversubscribe", "-np", str(ranks),
                    sys.executable, *map(str, arguments)],
                   env=MPI_ENV, check=True)


def test_one_rank_exchanges_with_itself():
    module = lcc.load(lcc.compile(EXCHANGES.replace("<P>", "1")))
    x = np.arange(12, dtype=np.float32).reshape(1, 3, 4)
    for result in module["forward"](x):
        np.testing.assert_array_equal(result, x)


def test_all_to_all_needs_one_rank_per_block():
    module = lcc.load(lcc.compile(EXCHANGES.replace("<P>", "2")))
    with pytest.raises(ValueError, match=r"has one block per rank of a group "
                       r"of 2, but this job has 1 rank: run it under mpirun "
                       r"-np 2 \(or a multiple\)"):
        module["forward"](np.zeros((2, 3, 4), np.float32))


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun")
@pytest.mark.parametrize("ranks", [2, 4])
def test_ranks_exchange_blocks_and_pass_around_the_ring(tmp_path, ranks):
    source = tmp_path / "exchanges.mlir"
    source.write_text(EXCHANGES.replace("<P>", str(ranks)))
    script = tmp_path / "forward.py"
    script.write_text(FORWARD)
    run_job(ranks, script, source)


def reference_train(x, labels, start, steps, lr):
    """Both ranks in one process: rank r's loss, the mean over ranks
    (data parallelism averages), SGD on the one weight they share."""
    torch = pytest.importorskip("torch")
    w = torch.tensor(start, requires_grad=True)
    xs = [torch.tensor(x[r]) for r in range(2)]
    losses = []
    for _ in range(steps):
        h = [xs[r] * w for r in range(2)]
        a = [torch.stack([h[j][q] for j in range(2)]) for q in range(2)]
        s = [a[(q - 1) % 2] for q in range(2)]
        rank_losses = [
            torch.nn.functional.cross_entropy(
                (s[r] * xs[r]).reshape(-1, 4),
                torch.tensor(labels[r], dtype=torch.long).reshape(-1))
            for r in range(2)]
        loss = sum(rank_losses) / 2
        losses.append(float(loss))
        w.grad = None
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
    return w.detach().numpy(), np.array(losses)


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun")
def test_gradients_flow_back_through_the_exchanges(tmp_path):
    rng = np.random.default_rng(11)
    np.save(tmp_path / "x.npy", rng.uniform(-2, 2, (2, 2, 3, 4)).astype(np.float32))
    np.save(tmp_path / "labels.npy", rng.integers(0, 4, (2, 2, 3)).astype(np.int32))
    (tmp_path / "loss.mlir").write_text(LOSS)
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    run_job(2, script, tmp_path / "loss.mlir", tmp_path, tmp_path / "two.npz")
    two = np.load(tmp_path / "two.npz")
    w, losses = reference_train(np.load(tmp_path / "x.npy"),
                                np.load(tmp_path / "labels.npy"),
                                two["start"], steps=3, lr=0.5)
    np.testing.assert_allclose(two["w"], w, rtol=1e-5, atol=1e-6)
    # The train step reports the mean of the ranks' losses.
    np.testing.assert_allclose(two["losses"], losses, rtol=1e-5)
    assert not np.allclose(two["w"], two["start"])


# A decoder layer over 16 positions, 2 heads, learned positions.
DECODER = """
func.func @loss(%tokens: tensor<1x16xi32>, %labels: tensor<1x16xi32>) -> tensor<f32> {
  %table = attn.param "embed" : tensor<12x8xf32>
  %x = attn.embedding %tokens, %table : (tensor<1x16xi32>, tensor<12x8xf32>) -> tensor<1x16x8xf32>
  %pos = attn.param "pos" : tensor<1x16x8xf32>
  %x0 = arith.addf %x, %pos : tensor<1x16x8xf32>
  %wq = attn.param "wq" : tensor<8x8xf32>
  %wk = attn.param "wk" : tensor<8x8xf32>
  %wv = attn.param "wv" : tensor<8x8xf32>
  %wo = attn.param "wo" : tensor<8x8xf32>
  %h = attn.multi_head_attention %x0, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x16x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x16x8xf32> {
  ^bb0(%q: tensor<1x2x16x4xf32>, %k: tensor<1x2x16x4xf32>, %v: tensor<1x2x16x4xf32>):
    %o = attn.attention %q, %k, %v {causal = true}
        : (tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>) -> tensor<1x2x16x4xf32>
    attn.yield %o : tensor<1x2x16x4xf32>
  }
  %head = attn.param "head" : tensor<8x12xf32>
  %logits = attn.linear %h, %head : (tensor<1x16x8xf32>, tensor<8x12xf32>) -> tensor<1x16x12xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x16x12xf32>, tensor<1x16xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
"""

# Transformer-XL's attention over the segment alone: relative positions
# and biases, one slice per head.
RELATIVE = """
func.func @loss(%tokens: tensor<1x16xi32>, %labels: tensor<1x16xi32>) -> tensor<f32> {
  %table = attn.param "embed" : tensor<12x8xf32>
  %x = attn.embedding %tokens, %table : (tensor<1x16xi32>, tensor<12x8xf32>) -> tensor<1x16x8xf32>
  %wq = attn.param "wq" : tensor<8x8xf32>
  %p = attn.linear %x, %wq : (tensor<1x16x8xf32>, tensor<8x8xf32>) -> tensor<1x16x8xf32>
  %q = attn.split_heads %p {heads = 2 : i64} : (tensor<1x16x8xf32>) -> tensor<1x2x16x4xf32>
  %pos = attn.param "pos" : tensor<2x16x4xf32>
  %u = attn.param "u" : tensor<2x4xf32>
  %w = attn.param "w" : tensor<2x4xf32>
  %o = attn.relative_attention %q, %q, %q, %pos, %u, %w
      : (tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x16x4xf32>
  %y = attn.merge_heads %o : (tensor<1x2x16x4xf32>) -> tensor<1x16x8xf32>
  %head = attn.param "head" : tensor<8x12xf32>
  %logits = attn.linear %y, %head : (tensor<1x16x8xf32>, tensor<8x12xf32>) -> tensor<1x16x12xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x16x12xf32>, tensor<1x16xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
"""

# Each rank passes its share of the positions (context parallelism).
SHARES = """
import sys
import numpy as np
import lcc
source, data, out = sys.argv[1:4]
p, r = lcc.ranks(), lcc.rank()
module = lcc.load(lcc.compile(open(source).read(), train=True,
                              optimizer="sgd", lr=0.5,
                              context_parallel=p if p > 1 else None))
module.init_params(seed=3)
x, labels = np.load(data + "/x.npy"), np.load(data + "/labels.npy")
x, labels = (lcc.position_share(a, p, r) for a in (x, labels))
losses = [float(module["loss"](x, labels))]
losses += [float(module.train_step(x, labels)) for step in range(3)]
if r == 0:
    np.savez(out, losses=np.array(losses),
             **{k: v for k, v in module.params.items()})
"""


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun")
@pytest.mark.parametrize("model", [DECODER, RELATIVE],
                         ids=["learned-positions", "relative"])
def test_ranks_sharing_one_sequence_train_as_one_process(tmp_path, model):
    rng = np.random.default_rng(7)
    np.save(tmp_path / "x.npy", rng.integers(0, 12, (1, 16)).astype(np.int32))
    np.save(tmp_path / "labels.npy",
            rng.integers(0, 12, (1, 16)).astype(np.int32))
    (tmp_path / "decoder.mlir").write_text(model)
    script = tmp_path / "shares.py"
    script.write_text(SHARES)
    subprocess.run([sys.executable, str(script), str(tmp_path / "decoder.mlir"),
                    str(tmp_path), str(tmp_path / "one.npz")],
                   env=MPI_ENV, check=True)
    run_job(2, script, tmp_path / "decoder.mlir", tmp_path,
            tmp_path / "two.npz")
    one, two = np.load(tmp_path / "one.npz"), np.load(tmp_path / "two.npz")
    np.testing.assert_allclose(two["losses"], one["losses"], rtol=1e-5)
    assert sorted(two.files) == sorted(one.files)
    for name in one.files:
        np.testing.assert_allclose(two[name], one[name], rtol=1e-5, atol=1e-6)
    assert not np.allclose(one["losses"][0], one["losses"][-1])


# Each rank passes the whole sequence: its share is cut for it and the
# logits come back whole, as lcc-run takes and writes them; shares in give
# shares out; a mix is refused.
WHOLE = r"""
import sys
import numpy as np
import pytest
import lcc
source, tokens = sys.argv[1:3]
p, r = lcc.ranks(), lcc.rank()
text = open(source).read()
one = lcc.load(lcc.compile(text))
split = lcc.load(lcc.compile(text, context_parallel=2))
one.init_params(seed=3)
for name, value in one.params.items():
    split.params[name] = value
tokens = np.load(tokens)
expected = one["forward"](tokens)
whole = split["forward"](tokens)
np.testing.assert_allclose(whole, expected, rtol=1e-5, atol=1e-5)
share = split["forward"](lcc.position_share(tokens, 2, r % 2))
np.testing.assert_allclose(share, lcc.position_share(expected, 2, r % 2),
                           rtol=1e-5, atol=1e-5)
with pytest.raises(ValueError, match=r"\[1, 300\]: each of the 2 ranks "
                   r"takes its share of the whole \[1, 512\] \(lcc "
                   r"--context-parallel\), or this rank's share \[1, 256\]"):
    split["forward"](np.zeros((1, 300), np.int32))
labels = np.roll(tokens, -1, axis=1)
np.testing.assert_allclose(split["loss"](tokens, labels),
                           one["loss"](tokens, labels), rtol=1e-5)
with pytest.raises(ValueError, match=r"input 0 'tokens' of loss is whole and "
                   r"input 1 'labels' of loss this rank's share: give every "
                   r"input that holds the sequence whole, or every one as the "
                   r"share"):
    split["loss"](tokens, lcc.position_share(labels, 2, r % 2))
print("rank", r, "of", p, "whole")
"""


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun")
@pytest.mark.parametrize("ranks", [2, 4])
def test_whole_sequences_are_cut_and_gathered(tmp_path, ranks):
    tokens = np.random.default_rng(5).integers(0, 256, (1, 512))
    np.save(tmp_path / "tokens.npy", tokens.astype(np.int32))
    script = tmp_path / "whole.py"
    script.write_text(WHOLE)
    run_job(ranks, script,
            os.path.join(os.environ["LCC_SOURCE_DIR"],
                         "models/transformer-tiny.mlir"),
            tmp_path / "tokens.npy")


def test_position_share_is_two_chunks_in_zigzag_order():
    x = np.arange(16).reshape(1, 16)
    assert lcc.position_share(x, 2, 0).tolist() == [[0, 1, 2, 3, 12, 13, 14, 15]]
    assert lcc.position_share(x, 2, 1).tolist() == [[4, 5, 6, 7, 8, 9, 10, 11]]
    assert lcc.position_share(x, 1, 0).tolist() == x.tolist()
    with pytest.raises(ValueError, match="12 positions on axis 1 are not 8 "
                       "equal chunks"):
        lcc.position_share(np.zeros((1, 12)), 4, 0)
