"""The Python package against numpy: compile, run, parameters, training,
segment carry and errors (docs/python.md). Run by ctest as python/pytest,
with PYTHONPATH=build/python."""

import os

import numpy as np
import pytest

import lcc

LINEAR = """
func.func @forward(%x: tensor<2x8x16xf32>) -> tensor<2x8x10xf32> {
  %w = attn.param "proj.weight" : tensor<16x10xf32>
  %b = attn.param "proj.bias" : tensor<10xf32>
  %y = attn.linear %x, %w, %b
      : (tensor<2x8x16xf32>, tensor<16x10xf32>, tensor<10xf32>) -> tensor<2x8x10xf32>
  return %y : tensor<2x8x10xf32>
}
func.func @loss(%x: tensor<2x8x16xf32>, %labels: tensor<2x8xi32>) -> tensor<f32> {
  %y = call @forward(%x) : (tensor<2x8x16xf32>) -> tensor<2x8x10xf32>
  %l = attn.softmax_cross_entropy %y, %labels
      : (tensor<2x8x10xf32>, tensor<2x8xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
"""

# y = x + memory; the new memory is y: carried, each call adds x again.
RUNNING_SUM = """
func.func @step(%x: tensor<4xf32>, %memory: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = arith.addf %x, %memory : tensor<4xf32>
  return %y, %y : tensor<4xf32>, tensor<4xf32>
}
"""

rng = np.random.default_rng(1234)
print("numpy seed 1234")


@pytest.fixture(scope="module")
def trained():
    artifact = lcc.compile(LINEAR, train=True, optimizer="sgd", lr=0.5)
    return lcc.load(artifact)


def test_forward_matches_numpy(trained):
    x = rng.uniform(-1, 1, (2, 8, 16)).astype(np.float32)
    w = rng.normal(0, 0.3, (16, 10)).astype(np.float32)
    b = rng.normal(0, 0.3, (10,)).astype(np.float32)
    trained.params["proj.weight"] = w
    trained.params["proj.bias"] = b
    y = trained["forward"](x)
    assert y.shape == (2, 8, 10) and y.dtype == np.float32
    np.testing.assert_allclose(y, x @ w + b, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(trained.params["proj.weight"], w)


def test_functions_and_signature(trained):
    assert {"forward", "loss", "train_step"} <= set(trained.functions)
    signature = trained["loss"].signature
    assert [i["name"] for i in signature["inputs"]] == ["x", "labels"]
    assert signature["inputs"][1] == {"name": "labels", "dtype": "i32",
                                      "shape": [2, 8]}
    assert "optimizer.lr" in trained.params
    assert trained.params["optimizer.lr"] == pytest.approx(0.5)


def test_train_step_lowers_the_loss(trained):
    trained.init_params(seed=3)
    x = rng.uniform(-1, 1, (2, 8, 16)).astype(np.float32)
    labels = rng.integers(0, 10, (2, 8)).astype(np.int32)
    first = float(trained["loss"](x, labels))
    losses = [trained.train_step(x, labels) for _ in range(10)]
    assert losses[0] == pytest.approx(first, rel=1e-6)
    assert losses[-1] < losses[0]
    # The learning rate is a value of the module: 0 stops training.
    trained.params["optimizer.lr"] = np.float32(0.0)
    before = trained.params["proj.weight"]
    trained.train_step(x, labels)
    np.testing.assert_array_equal(trained.params["proj.weight"], before)


def test_params_round_trip(trained, tmp_path):
    trained.init_params(seed=5)
    path = tmp_path / "w.safetensors"
    trained.save_params(path)
    w = trained.params["proj.weight"]
    trained.params["proj.weight"] = np.zeros_like(w)
    trained.load_params(path)
    np.testing.assert_array_equal(trained.params["proj.weight"], w)
    with pytest.raises(KeyError, match="no parameter 'nope'"):
        trained.params["nope"] = w


class DLPackOnly:
    """Stands for a torch tensor: only __dlpack__."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_inputs_and_carry():
    module = lcc.load(lcc.compile(RUNNING_SUM))
    step = module["step"]
    step.carry(1, 1)
    x = np.arange(4, dtype=np.float32)
    y, memory = step(DLPackOnly(x), np.zeros(4, np.float32))
    np.testing.assert_array_equal(y, x)
    for k in range(2, 5):
        y, _ = step(x, None)
        np.testing.assert_array_equal(y, k * x)
    report = step.report()
    assert report["calls"] == 4 and report["peak_bytes"] > 0


def _placed(shape, offset):
    """A float32 array whose data starts `offset` bytes past a multiple of
    64."""
    count = int(np.prod(shape))
    raw = np.empty(count * 4 + 64 + offset, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    return raw[start:start + count * 4].view(np.float32).reshape(shape)


def test_aligned_inputs_are_read_in_place():
    module = lcc.load(lcc.compile(LINEAR))
    forward = module["forward"]
    w = rng.normal(0, 0.3, (16, 10)).astype(np.float32)
    b = rng.normal(0, 0.3, (10,)).astype(np.float32)
    module.params["proj.weight"], module.params["proj.bias"] = w, b
    bytes_of_x = 2 * 8 * 16 * 4
    # Aligned, unaligned, aligned again: each call reads its own input,
    # wherever the one before was read from.
    for offset, copied in [(0, 0), (4, bytes_of_x), (0, bytes_of_x)]:
        x = _placed((2, 8, 16), offset)
        x[...] = rng.uniform(-1, 1, x.shape)
        np.testing.assert_allclose(forward(x), x @ w + b, rtol=1e-5,
                                   atol=1e-6)
        assert forward.report()["input_bytes_copied"] == copied
    torch = pytest.importorskip("torch")
    before = forward.report()["input_bytes_copied"]
    t = torch.rand(2, 8, 16) * 2 - 1
    np.testing.assert_allclose(forward(t), t.numpy() @ w + b, rtol=1e-5,
                               atol=1e-6)
    assert forward.report()["input_bytes_copied"] == before
    # Results go to torch without a copy.
    y = forward(t)
    y_torch = torch.from_dlpack(y)
    assert y_torch.data_ptr() == y.ctypes.data
    np.testing.assert_array_equal(y_torch.numpy(), y)
    # A strided view is made C-contiguous (a copy in Python), then read in
    # place or copied as its new home's alignment allows.
    wide = rng.uniform(-1, 1, (2, 8, 32)).astype(np.float32)
    np.testing.assert_allclose(forward(wide[:, :, ::2]),
                               wide[:, :, ::2] @ w + b, rtol=1e-5, atol=1e-6)


def test_wrong_inputs_name_the_argument(trained):
    x = np.zeros((2, 8, 15), np.float32)
    with pytest.raises(ValueError, match="'x'"):
        trained["forward"](x)
    with pytest.raises(ValueError, match="takes 1 inputs, got 2"):
        trained["forward"](x, x)
    with pytest.raises(ValueError, match="float64 has no lcc dtype"):
        trained["forward"](np.zeros((2, 8, 16)))
    with pytest.raises(KeyError, match="no function 'main'"):
        trained["main"]


def test_compile_errors_carry_locations():
    broken = LINEAR.replace("tensor<16x10xf32>, tensor<10xf32>) -> "
                            "tensor<2x8x10xf32>",
                            "tensor<16x10xf32>, tensor<10xf32>) -> "
                            "tensor<2x8x11xf32>", 1)
    with pytest.raises(lcc.CompileError) as caught:
        lcc.compile(broken)
    error = caught.value.diagnostics[0]
    assert error.severity == "error" and error.line == 7
    assert error.file.endswith("model.mlir")
    assert "'%y' expects different type" in error.message
    with pytest.raises(lcc.CompileError, match="unknown --attention value .nope."):
        lcc.compile(LINEAR, attention="nope")


def test_compile_a_bundled_model_with_options(tmp_path):
    source = os.path.join(os.environ.get("LCC_SOURCE_DIR", "."), "models",
                          "one-layer.mlir")
    artifact = lcc.compile(source, attention="lsh")
    assert any("kept dense" in r.message for r in artifact.remarks)
    artifact.save(tmp_path / "one.lcm")
    module = lcc.load(tmp_path / "one.lcm", threads=1)
    module.init_params(seed=1)
    tokens = rng.integers(0, 256, (1, 128)).astype(np.int32)
    logits = module["forward"](tokens)
    assert logits.shape == (1, 128, 256) and np.isfinite(logits).all()


def test_runtime_errors():
    with pytest.raises(lcc.LccError, match="cannot open"):
        lcc.load("/nonexistent/model.lcm")
    with pytest.raises(lcc.LccError, match="not an lcc module"):
        lcc.load(lcc.Artifact(b"\0" * 64))


def test_plugin_forms_through_load_plugin():
    """load_plugin=[...] is --load-plugin, repeated: the local-attention
    plugin's form rewrites the bundled model's attention."""
    build = os.path.dirname(os.path.dirname(os.environ["LCC_COMPILER"]))
    plugin = os.path.join(build, "lib", "lcc-local-attention.so")
    source = os.path.join(os.environ.get("LCC_SOURCE_DIR", "."), "models",
                          "one-layer.mlir")
    artifact = lcc.compile(source, attention="local", load_plugin=[plugin])
    assert any("local" in r.message for r in artifact.remarks)
    module = lcc.load(artifact)
    module.init_params(seed=2)
    tokens = rng.integers(0, 256, (1, 128)).astype(np.int32)
    assert np.isfinite(module["forward"](tokens)).all()
    with pytest.raises(lcc.CompileError, match="a plugin may add it|plugin"):
        lcc.compile(source, attention="local")


def test_devices():
    """A --target=cuda artifact on the CUDA emulator gives the CPU's
    logits; a device lcc does not know is a ValueError naming it."""
    source = os.path.join(os.environ.get("LCC_SOURCE_DIR", "."), "models",
                          "one-layer.mlir")
    gpu = lcc.load(lcc.compile(source, target="cuda"), device="cuda-emulator")
    cpu = lcc.load(lcc.compile(source))
    assert gpu.device == "CUDA emulator"
    tokens = rng.integers(0, 256, (1, 128)).astype(np.int32)
    for module in (gpu, cpu):
        module.init_params(seed=4)
    expected = cpu["forward"](tokens)
    np.testing.assert_allclose(gpu["forward"](tokens), expected, rtol=1e-5,
                               atol=1e-5 * np.abs(expected).max())
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        lcc.load(lcc.compile(LINEAR), device="tpu")
