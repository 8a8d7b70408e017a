"""Ranks from Python (docs/python.md, "Ranks"): under mpirun every module
joins the job, and two ranks at batch 1 train as one process at batch 2.
Run by ctest as python/pytest; the job's part skips without mpirun."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import lcc

# A linear classifier at batch <B>.
LINEAR = """
func.func @loss(%x: tensor<<B>x8x16xf32>, %labels: tensor<<B>x8xi32>) -> tensor<f32> {
  %w = attn.param "proj.weight" : tensor<16x10xf32>
  %b = attn.param "proj.bias" : tensor<10xf32>
  %y = attn.linear %x, %w, %b
      : (tensor<<B>x8x16xf32>, tensor<16x10xf32>, tensor<10xf32>) -> tensor<<B>x8x10xf32>
  %l = attn.softmax_cross_entropy %y, %labels
      : (tensor<<B>x8x10xf32>, tensor<<B>x8xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
"""

# Each rank r of P takes rows r*B .. (r+1)*B-1 of every P*B.
TRAIN = """
import sys
import numpy as np
import lcc
source, data, out = sys.argv[1:4]
module = lcc.load(lcc.compile(open(source).read(), train=True,
                              optimizer="sgd", lr=0.5))
module.init_params(seed=3)
x, labels = np.load(data + "/x.npy"), np.load(data + "/labels.npy")
r, p = lcc.rank(), lcc.ranks()
batch = x.shape[0] // 4 // p
losses = []
for step in range(4):
    rows = slice(step * p * batch + r * batch, step * p * batch + (r + 1) * batch)
    losses.append(float(module.train_step(x[rows], labels[rows])))
if r == 0:
    np.savez(out, losses=np.array(losses), **{k: v for k, v in module.params.items()})
"""


def test_one_process_is_a_job_of_one():
    assert lcc.rank() == 0 and lcc.ranks() == 1


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun")
def test_two_ranks_train_as_one_process_at_twice_the_batch(tmp_path):
    rng = np.random.default_rng(5)
    np.save(tmp_path / "x.npy", rng.uniform(-1, 1, (8, 8, 16)).astype(np.float32))
    np.save(tmp_path / "labels.npy", rng.integers(0, 10, (8, 8)).astype(np.int32))
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    for batch in (1, 2):
        (tmp_path / ("b%d.mlir" % batch)).write_text(
            LINEAR.replace("<B>", str(batch)))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    subprocess.run([sys.executable, str(script), str(tmp_path / "b2.mlir"),
                    str(tmp_path), str(tmp_path / "one.npz")],
                   env=env, check=True)
    subprocess.run(["mpirun", "--oversubscribe", "-np", "2", sys.executable,
                    str(script), str(tmp_path / "b1.mlir"), str(tmp_path),
                    str(tmp_path / "two.npz")], env=env, check=True)
    one, two = np.load(tmp_path / "one.npz"), np.load(tmp_path / "two.npz")
    np.testing.assert_allclose(two["losses"], one["losses"], rtol=1e-5)
    for name in ("proj.weight", "proj.bias"):
        np.testing.assert_allclose(two[name], one[name], rtol=1e-5, atol=1e-6)
    # Training moved the weights: the comparison is not of two starts.
    assert not np.allclose(one["losses"][0], one["losses"][-1])
