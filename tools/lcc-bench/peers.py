"""What lcc-bench measures lcc against, in the same run: the ceiling
(OpenBLAS sgemm through numpy) and the peers (numpy + OpenBLAS dense and
Transformer-XL attention), each pinned and threaded as lcc-run is."""
import os
import subprocess
import sys


# The ceiling and the peer run in a python3 that has numpy (Debian's
# python3-numpy, with OpenBLAS from libopenblas0-pthread): one process
# per measurement, pinned and threaded as lcc-run is.
NUMPY_SGEMM = """
import ctypes, glob, sys, time, numpy as np
n, repeat = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n), dtype=np.float32)
b = rng.standard_normal((n, n), dtype=np.float32)
c = a @ b
# A ceiling from a kernel that computes wrongly is no ceiling.
rows = slice(0, 16)
exact = a[rows].astype(np.float64) @ b.astype(np.float64)
if np.max(np.abs(c[rows] - exact)) > 1e-3 * np.max(np.abs(exact)):
    sys.exit("OpenBLAS sgemm gives wrong results on this CPU")
times = []
for _ in range(repeat):
    t = time.perf_counter(); a @ b; times.append(time.perf_counter() - t)
core = "?"
for path in glob.glob("/usr/lib/x86_64-linux-gnu/openblas*/libopenblas*.so*"):
    try:
        lib = ctypes.CDLL(path)
        lib.openblas_get_corename.restype = ctypes.c_char_p
        core = lib.openblas_get_corename().decode()
        break
    except (OSError, AttributeError):
        pass
print(2.0 * n ** 3 / sorted(times)[len(times) // 2] / 1e9, core)
"""

# The end of each peer program: attention() once to warm up, then timed
# --repeat times; prints the median and the minimum in ms.
TIMED_ATTENTION = """
attention()
times = []
for _ in range(repeat):
    t = time.perf_counter(); attention(); times.append(time.perf_counter() - t)
times.sort()
print(times[len(times) // 2] * 1e3, times[0] * 1e3)
"""

NUMPY_ATTENTION = """
import sys, time, numpy as np
b, h, s, d, causal, repeat = map(int, sys.argv[1:7])
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal((b, h, s, d), dtype=np.float32)
           for _ in range(3))
scale = np.float32(1.0 / np.sqrt(d))
hidden = np.triu(np.ones((s, s), dtype=bool), 1) if causal else None
def attention():
    out = np.empty_like(q)
    for i in range(b):
        for j in range(h):
            p = (q[i, j] @ k[i, j].T) * scale
            if causal:
                p[hidden] = -np.inf
            p -= p.max(axis=1, keepdims=True)
            np.exp(p, out=p)
            p /= p.sum(axis=1, keepdims=True)
            out[i, j] = p @ v[i, j]
    return out
""" + TIMED_ATTENTION


# Transformer-XL's attention as kimiyoung/transformer-xl computes it, in
# numpy: the content and position scores as full [segment, keys] matrices,
# the position scores shifted by the pad-and-view _rel_shift, the causal
# mask over the memory, the softmax.
NUMPY_RELATIVE = """
import sys, time, numpy as np
b, h, l, m, d, repeat = map(int, sys.argv[1:7])
k_len = l + m
rng = np.random.default_rng(0)
q = rng.standard_normal((b, h, l, d), dtype=np.float32)
k, v = (rng.standard_normal((b, h, k_len, d), dtype=np.float32)
        for _ in range(2))
pos = rng.standard_normal((h, k_len, d), dtype=np.float32)
u, w = (rng.standard_normal((h, d), dtype=np.float32) for _ in range(2))
scale = np.float32(1.0 / np.sqrt(d))
hidden = np.triu(np.ones((l, k_len), dtype=bool), 1 + m)
def rel_shift(x):
    padded = np.concatenate([np.zeros((l, 1), x.dtype), x], axis=1)
    return padded.reshape(k_len + 1, l)[1:].reshape(l, k_len)
def attention():
    out = np.empty((b, h, l, d), np.float32)
    for i in range(b):
        for j in range(h):
            r = pos[j][::-1]  # positions k_len - 1 .. 0
            ac = (q[i, j] + u[j]) @ k[i, j].T
            bd = rel_shift((q[i, j] + w[j]) @ r.T)
            p = (ac + bd) * scale
            p[hidden] = -np.inf
            p -= p.max(axis=1, keepdims=True)
            np.exp(p, out=p)
            p /= p.sum(axis=1, keepdims=True)
            out[i, j] = p @ v[i, j]
    return out
""" + TIMED_ATTENTION


def numpy_python():
    """A python3 with numpy, or None."""
    for python in ("/usr/bin/python3", sys.executable):
        if python and subprocess.run(
                [python, "-c", "import numpy"],
                capture_output=True).returncode == 0:
            return python
    return None


def pinned(threads):
    """The CPUs a run of `threads` threads is pinned to (all: 0)."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[:threads] if threads else cpus


def run_pinned(args, threads, env=None):
    cpus = pinned(threads)
    result = subprocess.run(args, capture_output=True, text=True, env=env,
                            preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    if result.returncode != 0:
        sys.exit("lcc-bench: error: %s failed: %s" %
                 (os.path.basename(args[0]), result.stderr.strip()))
    return result.stdout


def numpy_env(threads):
    env = dict(os.environ)
    count = str(threads or len(pinned(0)))
    env.update(OPENBLAS_NUM_THREADS=count, OMP_NUM_THREADS=count)
    # Some machines pin OpenBLAS to an older core (OPENBLAS_CORETYPE=Haswell
    # on an AVX-512 CPU halves sgemm): the ceiling and the peer are the
    # kernels OpenBLAS picks for this CPU, checked by the sgemm run.
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    return env


def sgemm_ceiling(python, threads):
    """OpenBLAS sgemm 2048^3 (GFLOP/s, the median of 3 calls; kernel name),
    pinned as lcc runs."""
    rate, core = run_pinned([python, "-c", NUMPY_SGEMM, "2048", "3"], threads,
                            numpy_env(threads)).split()
    return float(rate), core


def numpy_attention_ms(python, opts, seq, repeat):
    """numpy dense attention's (median, min) ms per call over `repeat`
    calls."""
    out = run_pinned([python, "-c", NUMPY_ATTENTION, str(opts.batch),
                      str(opts.heads), str(seq), str(opts.head_dim),
                      str(int(opts.causal)), str(repeat)],
                     opts.threads, numpy_env(opts.threads))
    median, low = map(float, out.split())
    return median, low


def numpy_relative_ms(python, opts, memory):
    """numpy Transformer-XL attention's (median, min) ms per segment."""
    out = run_pinned([python, "-c", NUMPY_RELATIVE, str(opts.batch),
                      str(opts.heads), str(opts.segment), str(memory),
                      str(opts.head_dim), str(opts.repeat)],
                     opts.threads, numpy_env(opts.threads))
    median, low = map(float, out.split())
    return median, low
