"""lcc from Python: compile attn models, run and train them on numpy arrays.

    import lcc
    artifact = lcc.compile("models/transformer-tiny.mlir", train=True, lr=3e-4)
    module = lcc.load(artifact)              # device="cpu"
    module.init_params(seed=1)               # or module.load_params(path)
    logits = module["forward"](tokens)       # numpy in, numpy out
    loss = module.train_step(tokens, labels)

`lcc.compile` runs the `lcc` compiler (the same flags, with underscores);
the runtime runs in this process. Inputs are numpy arrays or anything with
`__dlpack__` (a torch tensor); results are numpy arrays
(`torch.from_dlpack(result)` takes them without a copy). docs/python.md
has the whole API.
"""

import atexit
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import MutableMapping

import numpy as np

from . import _runtime

__all__ = ["compile", "load", "import_hf_reformer", "rank", "ranks",
           "Artifact", "Module", "Diagnostic", "CompileError", "LccError"]


class LccError(RuntimeError):
    """An error of the runtime: its one-line message (a missing file, a
    corrupted module, a device that cannot run it, ...)."""


_runtime.set_error_type(LccError)
# MPI, where mpirun launched this process, is finalised at exit.
atexit.register(_runtime.leave_job)


def rank():
    """This process's rank in the job mpirun launched (0 alone). Under
    `mpirun -np P python3 script.py`, every module's train_step averages
    its loss and gradients over the P ranks: give rank r the r-th share of
    each batch (docs/python.md, "Ranks")."""
    return _runtime.rank()


def ranks():
    """The ranks of the job mpirun launched; 1 for one process alone."""
    return _runtime.ranks()


def position_share(array, parts, part, axis=1):
    """Share `part` of `parts` of `array`'s positions along `axis`, as a
    module compiled with context_parallel=parts takes it on rank `part`:
    chunks part and 2 * parts - 1 - part of 2 * parts equal chunks, in
    order (zigzag: causal attention's work the same on every rank)."""
    array = np.asarray(array)
    length = array.shape[axis]
    if parts < 1 or not 0 <= part < parts:
        raise ValueError("position_share: part %d of %d parts" % (part, parts))
    if length % (2 * parts):
        raise ValueError(
            "position_share: %d positions on axis %d are not %d equal "
            "chunks (2 per rank)" % (length, axis, 2 * parts))
    chunks = np.split(array, 2 * parts, axis=axis)
    return np.concatenate([chunks[part], chunks[2 * parts - 1 - part]],
                          axis=axis)



class Diagnostic:
    """One diagnostic of lcc: severity ("error", "remark", ...), the
    source position it names (file, line, column; None where it names
    none) and the message."""

    _LINE = re.compile(r"^lcc: (error|warning|remark|note): "
                       r"(?:(?P<file>[^:\s]+):(?P<line>\d+):(?P<col>\d+): )?"
                       r"(?P<message>.*)$")

    def __init__(self, severity, message, file=None, line=None, column=None):
        self.severity = severity
        self.message = message
        self.file = file
        self.line = line
        self.column = column

    @classmethod
    def parse(cls, text):
        match = cls._LINE.match(text)
        if not match:
            return None
        line = match.group("line")
        return cls(match.group(1), match.group("message"), match.group("file"),
                   int(line) if line else None,
                   int(match.group("col")) if line else None)

    def __str__(self):
        where = ("%s:%d:%d: " % (self.file, self.line, self.column)
                 if self.file else "")
        return "%s: %s%s" % (self.severity, where, self.message)

    __repr__ = __str__


class CompileError(Exception):
    """lcc refused the model: `diagnostics` holds each of its diagnostics
    (errors with their source positions, and the remarks before them)."""

    def __init__(self, diagnostics, text):
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.severity == "error"]
        super().__init__(str(errors[0]) if errors else text.strip())


class Artifact:
    """A compiled model: the bytes of an .lcm file, and the remarks lcc made
    while compiling it."""

    def __init__(self, data, remarks=()):
        self.data = bytes(data)
        self.remarks = list(remarks)

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self.data)

    def __repr__(self):
        return "<lcc.Artifact of %d bytes>" % len(self.data)


def _tool(name):
    """The lcc tool `name` (lcc, lcc-import): beside the lcc of
    $LCC_COMPILER, beside the package's build or installation, else on the
    PATH."""
    given = os.environ.get("LCC_COMPILER")
    if given:
        return os.path.join(os.path.dirname(given), name) \
            if name != "lcc" else given
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "..", "..", "bin", name),
                      os.path.join(here, "..", "..", "..", "..", "bin", name)):
        if os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    found = shutil.which(name)
    if not found:
        raise LccError("lcc: no %s found beside the package or on the PATH "
                       "(set LCC_COMPILER to lcc's path)" % name)
    return found


def _compiler():
    """The lcc executable: $LCC_COMPILER, the one this package was built
    or installed with, else lcc on the PATH."""
    return _tool("lcc")


def _flags(options):
    """lcc's flags for keyword options: lsh_hashes=4 is --lsh-hashes=4,
    train=True is --train, a list repeats the flag."""
    flags = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            flags.append(flag)
        elif isinstance(value, (list, tuple)):
            flags.extend("%s=%s" % (flag, v) for v in value)
        else:
            flags.append("%s=%s" % (flag, value))
    return flags


def compile(source, *, target="cpu", **options):
    """Compiles `source` (MLIR text, or the path of a .mlir file) with lcc:
    keyword options are lcc's flags with underscores (attention="lsh",
    lsh_hashes=4, train=True, optimizer="adam", lr=3e-4, reversible=True,
    ff_chunks=4, load_plugin=[...]). Returns an Artifact; a model lcc
    refuses raises CompileError with lcc's diagnostics."""
    with tempfile.TemporaryDirectory(prefix="lcc-") as work:
        path = source
        is_text = "\n" in source or not os.path.exists(source)
        if is_text:
            path = os.path.join(work, "model.mlir")
            with open(path, "w") as f:
                f.write(source)
        output = os.path.join(work, "model.lcm")
        command = [_compiler(), path, "-o", output, "--target=" + target]
        command += _flags(options)
        run = subprocess.run(command, capture_output=True, text=True)
        diagnostics = [d for d in map(Diagnostic.parse,
                                      run.stderr.splitlines()) if d]
        if run.returncode != 0:
            raise CompileError(diagnostics, run.stderr)
        with open(output, "rb") as f:
            return Artifact(f.read(), [d for d in diagnostics
                                       if d.severity != "error"])


def import_hf_reformer(directory, seq_len, *, params=None, batch=1, seed=0):
    """A Hugging Face Reformer language model (`directory` holds its
    config.json, and model.safetensors if it has weights) as attn IR for
    sequences of `seq_len` tokens: returns the model's text, which
    lcc.compile takes. With `params` (a path), also writes the weights
    there in lcc's layout: the checkpoint's, converted, or fresh ones
    initialised as config.json says (from `seed`). A config lcc cannot
    honour raises LccError naming the field (lcc-import's message)."""
    with tempfile.TemporaryDirectory(prefix="lcc-") as work:
        output = os.path.join(work, "model.mlir")
        command = [_tool("lcc-import"), "hf-reformer", str(directory),
                   "--seq-len=%d" % seq_len, "-o", output,
                   "--batch=%d" % batch, "--seed=%d" % seed]
        if params is not None:
            command.append("--params=%s" % params)
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            lines = [line for line in run.stderr.splitlines() if line]
            raise LccError(lines[-1] if lines else
                           "lcc-import failed with status %d" % run.returncode)
        with open(output) as f:
            return f.read()


def _as_array(value):
    """A numpy view of an input: numpy arrays as they are, objects with
    __dlpack__ (torch tensors) without a copy where numpy can."""
    if value is None or isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__dlpack__"):
        return np.from_dlpack(value)
    return np.asarray(value)


class Function:
    """One function of a module: call it with its inputs in order."""

    def __init__(self, module, name):
        self._module = module
        self.name = name

    @property
    def signature(self):
        """{"inputs": [...], "outputs": [...]}, each {"name", "dtype",
        "shape"}."""
        return self._module._session.signature(self.name)

    def __call__(self, *inputs):
        """The results: one numpy array, or a tuple of several."""
        results = self._module._session.call(
            self.name, [_as_array(x) for x in inputs])
        return results[0] if len(results) == 1 else tuple(results)

    def carry(self, result, input):
        """Makes each call's result `result` the next call's input `input`,
        kept on the device: pass None for that input (a Transformer-XL's
        memories across segments)."""
        self._module._session.carry(self.name, result, input)

    def report(self):
        """Calls, mean time, arena and peak bytes, and every command's time
        and FLOPs, summed over the calls so far."""
        return self._module._session.report(self.name)

    def __repr__(self):
        return "<lcc.Function %s>" % self.name


class Parameters(MutableMapping):
    """A module's parameters by name, as numpy arrays (copies); assigning
    one copies it to the device. Optimizer state (Adam's moments, the
    hyper-parameters optimizer.lr, ...) is among them."""

    def __init__(self, session):
        self._session = session

    def _names(self):
        return [p[0] for p in self._session.parameters()]

    def __getitem__(self, name):
        return self._session.get_parameter(name)

    def __setitem__(self, name, value):
        if name not in self._names():
            raise KeyError("the module has no parameter '%s'" % name)
        self._session.set_parameter(name, _as_array(value))

    def __delitem__(self, name):
        raise TypeError("a module's parameters cannot be removed")

    def __iter__(self):
        return iter(self._names())

    def __len__(self):
        return len(self._names())


class Module:
    """A compiled module loaded on a device."""

    def __init__(self, artifact, device="cpu", threads=0):
        if isinstance(artifact, Artifact):
            self._session = _runtime.Session("", artifact.data, device, threads)
        else:
            self._session = _runtime.Session(os.fspath(artifact), b"", device,
                                             threads)
        self.params = Parameters(self._session)

    @property
    def functions(self):
        return self._session.functions()

    @property
    def device(self):
        return self._session.device_name()

    def __getitem__(self, name):
        if name not in self.functions:
            raise KeyError("the module has no function '%s'; it has %s" %
                           (name, ", ".join(self.functions)))
        return Function(self, name)

    def load_params(self, path):
        """Binds every weight from a .safetensors file (a checkpoint also
        restores the optimizer state)."""
        self._session.load_parameters(os.fspath(path))

    def save_params(self, path):
        """Writes every parameter, optimizer state included: a checkpoint."""
        self._session.save_parameters(os.fspath(path))

    def init_params(self, seed=0):
        """Fresh weights, those `lcc-run --init-params --seed` writes."""
        self._session.initialize_parameters(seed)

    def train_step(self, *batch):
        """One step of the compiled train step (`lcc.compile(...,
        train=True)`) on a batch of the loss function's arguments: the
        parameters are updated on the device; returns the loss."""
        if "train_step" not in self.functions:
            raise LccError("the module has no train_step: compile it with "
                           "train=True")
        results = self._session.call("train_step",
                                     [_as_array(x) for x in batch])
        return float(results[0])

    def generate(self, prompt, max_new_tokens, *, temperature=None,
                 top_k=None, top_p=None, seed=0, end_token=None,
                 recompute=False):
        """Tokens after `prompt` (int32 [batch, length], the model's batch)
        from a module compiled with `decode=True` (prefill, then one cached
        decode step per token) or from a model whose `forward` carries
        memories (Transformer-XL, adaptive span, compressive: segment by
        segment, the memories carried), as lcc-generate runs them
        (docs/generation.md).
        Greedy unless `temperature`, `top_k` or `top_p` asks for sampling
        (from `seed`); `end_token` ends a sequence. Returns prompt and new
        tokens, int32 [batch, length + new]; `last_generation` holds the
        timings."""
        if "decode_step" not in self.functions and not self._carries():
            raise LccError("the module has no decode_step: compile it with "
                           "decode=True (a model whose forward carries "
                           "memories generates without it)")
        if top_p is not None and not 0 < top_p <= 1:
            raise ValueError("top_p must be in (0, 1], got %r" % (top_p,))
        if temperature is not None and temperature < 0:
            raise ValueError("temperature must be >= 0, got %r" %
                             (temperature,))
        tokens, self.last_generation = self._session.generate(
            np.asarray(_as_array(prompt), dtype=np.int32), int(max_new_tokens),
            -1.0 if temperature is None else float(temperature),
            int(top_k or 0), 1.0 if top_p is None else float(top_p),
            int(seed), -1 if end_token is None else int(end_token),
            bool(recompute))
        return tokens

    def _carries(self):
        """Whether `forward` carries memories: input i > 0 has the shape
        of result i, as lcc-generate finds them."""
        if "forward" not in self.functions:
            return False
        signature = self["forward"].signature
        inputs, outputs = signature["inputs"], signature["outputs"]
        return len(inputs) > 1 and len(outputs) >= len(inputs) and all(
            inputs[i]["shape"] == outputs[i]["shape"]
            for i in range(1, len(inputs)))

    def __repr__(self):
        return "<lcc.Module on %s: %s>" % (self.device,
                                           ", ".join(self.functions))


def load(artifact, device="cpu", threads=0):
    """A module on `device` ("cpu", "cuda", "cuda-emulator") from an
    Artifact or the path of an .lcm file; `threads` of the cpu device (0:
    the CPUs the process may run on)."""
    return Module(artifact, device, threads)
