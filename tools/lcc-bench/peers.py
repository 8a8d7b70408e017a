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


# The decode benchmark's model in torch, generating with a static key and
# value cache per layer as Hugging Face's StaticCache does (written at the
# position, read up to it): prefill on the prompt, then one token at a
# time, greedy. With a stride, strided sparse attention (Sparse
# Transformer: key j visible to query i <= j iff i - j < stride or
# stride divides i - j): prefill masks the scores a block of queries at a
# time, and a step gathers the band and one key per earlier stride from
# the caches. Prints the prefill ms and the median ms per token.
TORCH_DECODE = """
import sys, time, torch
F = torch.nn.functional
layers, seq, d, ff, heads, vocab, prompt, new, threads, stride = map(
    int, sys.argv[1:11])
torch.set_num_threads(threads)
torch.manual_seed(0)
hd = d // heads
def w(*shape): return torch.randn(*shape) * shape[0] ** -0.5
P = [dict(n1=(torch.ones(d), torch.zeros(d)), wq=w(d, d), wk=w(d, d),
          wv=w(d, d), wo=w(d, d), n2=(torch.ones(d), torch.zeros(d)),
          w1=w(d, ff), b1=torch.zeros(ff), w2=w(ff, d), b2=torch.zeros(d))
     for _ in range(layers)]
embed, head = torch.randn(vocab, d), w(d, vocab)
final = (torch.ones(d), torch.zeros(d))
cache = [(torch.zeros(1, heads, seq, hd), torch.zeros(1, heads, seq, hd))
         for _ in range(layers)]
def split(x): return x.view(1, -1, heads, hd).transpose(1, 2)
def attend_pattern(q, kc, vc, t):
    keys = torch.cat([torch.arange(t % stride, max(t - stride + 1, 0), stride),
                      torch.arange(max(t - stride + 1, 0), t + 1)])
    s = q @ kc[:, :, keys].transpose(-1, -2) * hd ** -0.5
    return torch.softmax(s, -1) @ vc[:, :, keys]
def attend_masked(q, kc, vc, first):
    n = q.shape[2]
    gap = (torch.arange(first, first + n)[:, None] -
           torch.arange(first + n)[None, :])
    hidden = (gap < 0) | ((gap >= stride) & (gap % stride != 0))
    s = q @ kc[:, :, :first + n].transpose(-1, -2) * hd ** -0.5
    return torch.softmax(s.masked_fill(hidden, float("-inf")), -1) @ \
        vc[:, :, :first + n]
def forward(tokens, start):
    x = embed[tokens]
    n = x.shape[1]
    for p, (kc, vc) in zip(P, cache):
        h = F.layer_norm(x, (d,), *p["n1"])
        q, k, v = split(h @ p["wq"]), split(h @ p["wk"]), split(h @ p["wv"])
        kc[:, :, start:start + n] = k
        vc[:, :, start:start + n] = v
        if stride and n == 1:
            o = attend_pattern(q, kc, vc, start)
        elif stride:
            o = torch.cat([attend_masked(q[:, :, i:i + 1024], kc, vc,
                                         start + i) for i in range(0, n, 1024)],
                          2)
        else:
            keys, values = kc[:, :, :start + n], vc[:, :, :start + n]
            s = q @ keys.transpose(-1, -2) * hd ** -0.5
            if n > 1:  # prefill: each query sees the keys up to its own
                s = s.masked_fill(torch.ones(n, start + n, dtype=torch.bool)
                                  .triu(start + 1), float("-inf"))
            o = torch.softmax(s, -1) @ values
        x = x + o.transpose(1, 2).reshape(1, n, d) @ p["wo"]
        h = F.layer_norm(x, (d,), *p["n2"])
        x = x + F.gelu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return F.layer_norm(x, (d,), *final) @ head
with torch.inference_mode():
    tokens = torch.randint(0, vocab, (1, prompt))
    t = time.perf_counter()
    logits = forward(tokens, 0)
    prefill = (time.perf_counter() - t) * 1e3
    token = logits[:, -1:].argmax(-1)
    times = []
    for i in range(new):
        t = time.perf_counter()
        logits = forward(token, prompt + i)
        token = logits[:, -1:].argmax(-1)
        times.append(time.perf_counter() - t)
times.sort()
print(prefill, times[len(times) // 2] * 1e3)
"""


# The LSH model of the decode benchmark (shared-QK, 4 rounds, buckets of
# 64) generating in torch as Hugging Face's cached Reformer does: each step
# hashes its token, stable-sorts the cached buckets with it per round,
# takes its chunk and the one before it (wrapping within the round) from
# the cached keys and values, attends there and combines the rounds by
# their logsumexps. Random weights and rotations: a timing peer, not the
# same numbers. Prints the prefill ms (the prompt's keys, values and
# buckets) and the median ms per token.
TORCH_LSH_DECODE = """
import sys, time, torch
F = torch.nn.functional
layers, seq, d, ff, heads, vocab, prompt, new, threads = map(int, sys.argv[1:10])
torch.set_num_threads(threads)
torch.manual_seed(0)
hd, rounds, bucket = d // heads, 4, 64
nb = max(2, 2 * ((seq + 2 * bucket - 1) // (2 * bucket)))
def w(*shape): return torch.randn(*shape) * shape[0] ** -0.5
P = [dict(n1=(torch.ones(d), torch.zeros(d)), wqk=w(d, d), wv=w(d, d),
          wo=w(d, d), n2=(torch.ones(d), torch.zeros(d)), w1=w(d, ff),
          b1=torch.zeros(ff), w2=w(ff, d), b2=torch.zeros(d),
          rot=torch.randn(hd, rounds, nb // 2)) for _ in range(layers)]
embed, head = torch.randn(vocab, d), w(d, vocab)
final = (torch.ones(d), torch.zeros(d))
cache = [dict(k=torch.zeros(heads, seq, hd), v=torch.zeros(heads, seq, hd),
              b=torch.zeros(heads, rounds, seq, dtype=torch.long))
         for _ in range(layers)]
def split(x): return x.view(-1, heads, hd).transpose(0, 1)
def buckets(x, rot):  # x [heads, n, hd] -> [heads, rounds, n]
    r = torch.einsum("hnd,drb->hrnb", x, rot)
    return torch.cat([r, -r], -1).argmax(-1)
def attend(c, q, t):
    n = t + 1
    order = torch.sort(c["b"][:, :, :n] * n + torch.arange(n), -1).indices
    place = (order == t).int().argmax(-1)  # [heads, rounds]
    start = (place // bucket - 1) * bucket
    idx = (start.unsqueeze(-1) + torch.arange(2 * bucket)) % n
    tok = torch.gather(order, 2, idx)  # [heads, rounds, 2 bucket]
    k = F.normalize(c["k"][torch.arange(heads)[:, None, None], tok], dim=-1)
    v = c["v"][torch.arange(heads)[:, None, None], tok]
    s = torch.einsum("hd,hrkd->hrk", q[:, 0], k) * hd ** -0.5
    s = s.masked_fill(tok == t, -1e5)
    lse = torch.logsumexp(s, -1, keepdim=True)
    o = torch.einsum("hrk,hrkd->hrd", torch.exp(s - lse), v)
    share = torch.softmax(lse, 1)
    return (o * share).sum(1)  # [heads, hd]
def step(token, t):
    x = embed[token]
    for p, c in zip(P, cache):
        h = F.layer_norm(x, (d,), *p["n1"])
        qk, v = split(h @ p["wqk"]), split(h @ p["wv"])
        c["k"][:, t] = qk[:, 0]
        c["v"][:, t] = v[:, 0]
        c["b"][:, :, t] = buckets(qk, p["rot"])[:, :, 0]
        o = attend(c, qk, t)
        x = x + o.reshape(1, d) @ p["wo"]
        h = F.layer_norm(x, (d,), *p["n2"])
        x = x + F.gelu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return F.layer_norm(x, (d,), *final) @ head
with torch.inference_mode():
    tokens = torch.randint(0, vocab, (prompt,))
    t0 = time.perf_counter()
    x = embed[tokens]  # the prompt's caches: one pass, no attention kept
    for p, c in zip(P, cache):
        h = F.layer_norm(x, (d,), *p["n1"])
        qk, v = split(h @ p["wqk"]), split(h @ p["wv"])
        c["k"][:, :prompt], c["v"][:, :prompt] = qk, v
        c["b"][:, :, :prompt] = buckets(qk, p["rot"])
    prefill = (time.perf_counter() - t0) * 1e3
    token = tokens[-1:]
    times = []
    for i in range(new):
        t0 = time.perf_counter()
        token = step(token, prompt + i).argmax(-1)
        times.append(time.perf_counter() - t0)
times.sort()
print(prefill, times[len(times) // 2] * 1e3)
"""


# Transformer-XL tiny (2 layers, d_model 64, 4 heads, d_ff 256, segments of
# 64 after memories of 64) generating in torch one token at a time over
# per-layer key and value caches: each step attends to the memory and the
# segment so far (the previous segment's positions, then its own) with the
# relative position term, as Hugging Face's TransfoXL steps with its mems
# (here the keys and values of the earlier positions kept rather than
# recomputed from hidden states). Random weights: a timing peer. Prints
# the prefill ms and the median ms per token.
TORCH_TXL_DECODE = """
import sys, time, torch, math
F = torch.nn.functional
seq, prompt, new, threads = map(int, sys.argv[1:5])
torch.set_num_threads(threads)
torch.manual_seed(0)
layers, d, heads, ff, vocab, S = 2, 64, 4, 256, 256, 64
hd = d // heads
total = prompt + new
def w(*shape): return torch.randn(*shape) * shape[0] ** -0.5
P = [dict(wq=w(d, d), wk=w(d, d), wv=w(d, d), wr=w(d, d), wo=w(d, d),
          u=torch.randn(heads, hd) * 0.1, v=torch.randn(heads, hd) * 0.1,
          n1=(torch.ones(d), torch.zeros(d)), w1=w(d, ff), b1=torch.zeros(ff),
          w2=w(ff, d), b2=torch.zeros(d), n2=(torch.ones(d), torch.zeros(d)))
     for _ in range(layers)]
embed, head = torch.randn(vocab, d), w(d, vocab)
pos = torch.arange(2 * S).float()
inv = 1 / (10000 ** (torch.arange(0, d, 2).float() / d))
enc = torch.cat([torch.sin(pos[:, None] * inv), torch.cos(pos[:, None] * inv)], -1)
R = [(enc @ p["wr"]).view(2 * S, heads, hd).transpose(0, 1) for p in P]
# Keys and values from position -S (the first segment's zero memory) on.
K = [torch.zeros(heads, total + S, hd) for _ in P]
V = [torch.zeros(heads, total + S, hd) for _ in P]
def step(token, t):
    x = embed[token]  # [1, d]
    first = (t // S - 1) * S  # the memory's first position
    for p, r, k, v in zip(P, R, K, V):
        q = (x @ p["wq"]).view(heads, hd)
        k[:, t + S] = (x @ p["wk"]).view(heads, hd)
        v[:, t + S] = (x @ p["wv"]).view(heads, hd)
        keys, values = k[:, first + S:t + S + 1], v[:, first + S:t + S + 1]
        dist = torch.arange(t - first, -1, -1)
        s = (torch.einsum("hd,hkd->hk", q + p["u"], keys) +
             torch.einsum("hd,hkd->hk", q + p["v"], r[:, dist])) / math.sqrt(hd)
        o = torch.einsum("hk,hkd->hd", torch.softmax(s, -1), values)
        x = F.layer_norm(x + o.reshape(1, d) @ p["wo"], (d,), *p["n1"])
        x = F.layer_norm(x + F.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"],
                         (d,), *p["n2"])
    return x @ head
with torch.inference_mode():
    tokens = torch.randint(0, vocab, (prompt,))
    t0 = time.perf_counter()
    for t in range(prompt - 1):  # the prompt through the steps
        step(tokens[t:t + 1], t)
    prefill = (time.perf_counter() - t0) * 1e3
    token = tokens[-1:]
    times = []
    for i in range(new):
        t0 = time.perf_counter()
        token = step(token, prompt - 1 + i).argmax(-1)
        times.append(time.perf_counter() - t0)
times.sort()
print(prefill, times[len(times) // 2] * 1e3)
"""


# reformer-pytorch's ReformerLM train step, transcribed from its source
# (lucidrains/reformer-pytorch: reformer_pytorch.py, reversible.py) with
# its defaults for everything lcc-bench's stack does not set: shared-QK
# LSH attention (fresh random rotations at every hashing, the buckets
# hashed again and the cached ones used in the reversible backward, keys
# normalised, one chunk looked back, self and causal masks, the rounds
# combined by their logsumexps, rotary position embedding on qk), pre-norm
# blocks, the feed-forward in `chunks` chunks along the sequence, the
# reversible two-stream stack (no activations kept; each block recomputed
# in the backward with its RNG state restored) or, not reversible, the same
# blocks under autograd; final norm, vocabulary head, cross-entropy, Adam.
# reformer-pytorch is not a Debian package: this is its algorithm on
# Debian's torch, not its code. Prints the median ms per step after one
# warm-up step and the peak resident MiB over the process's
# size once the model exists.
TORCH_REFORMER_TRAIN = """
import math, resource, sys, time, torch
nn, F = torch.nn, torch.nn.functional
(layers, seq, d, ff, heads, vocab, chunks, reversible, relu, repeat,
 threads) = map(int, sys.argv[1:12])
torch.set_num_threads(threads)
torch.manual_seed(0)
hd, rounds, bucket = d // heads, int(sys.argv[12]), int(sys.argv[13])

def rotate_pairs(x):
    x = x.view(*x.shape[:-1], -1, 2)
    return torch.stack((-x[..., 1], x[..., 0]), -1).flatten(-2)

inv_freq = 1.0 / 10000 ** (torch.arange(0, hd, 2).float() / hd)
angles = torch.arange(seq).float()[:, None] * inv_freq[None, :]
sin = angles.sin().repeat_interleave(2, -1)
cos = angles.cos().repeat_interleave(2, -1)

class LSHSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.toqk = nn.Linear(d, d, bias=False)
        self.tov = nn.Linear(d, d, bias=False)
        self.to_out = nn.Linear(d, d)
        self.cached = None

    def hash(self, qk):
        nb = seq // bucket
        rot = torch.randn(1, hd, rounds, nb // 2).expand(qk.shape[0], -1, -1, -1)
        r = torch.einsum("btf,bfhi->bhti", qk, rot)
        b = torch.cat([r, -r], -1).argmax(-1)
        b = b + (torch.arange(rounds) * nb).view(1, -1, 1)
        return b.reshape(qk.shape[0], -1)

    def attend(self, qk, v, buckets):
        bh, t, e = qk.shape
        ticker = torch.arange(rounds * t).unsqueeze(0).expand_as(buckets)
        _, order = (t * buckets + ticker % t).sort(-1)
        sticker = ticker.gather(-1, order)
        _, undo = sticker.sort(-1)
        qk = qk * cos + rotate_pairs(qk) * sin
        st = sticker % t
        sqk = qk.gather(1, st[:, :, None].expand(-1, -1, e))
        sv = v.gather(1, st[:, :, None].expand(-1, -1, e))
        n = rounds * (t // bucket)
        bq_t = st.view(bh, n, -1)
        bq = sqk.view(bh, n, -1, e)
        bv = sv.view(bh, n, -1, e)
        back = lambda x: torch.cat([x, torch.cat([x[:, -1:], x[:, :-1]], 1)], 2)
        bk, bv, bkv_t = back(F.normalize(bq, p=2, dim=-1)), back(bv), back(bq_t)
        dots = torch.einsum("bhie,bhje->bhij", bq, bk) * e ** -0.5
        dots.masked_fill_(bq_t[:, :, :, None] < bkv_t[:, :, None, :],
                          -torch.finfo(dots.dtype).max)
        dots.masked_fill_(bq_t[:, :, :, None] == bkv_t[:, :, None, :], -5e4)
        lse = torch.logsumexp(dots, -1, keepdim=True)
        bo = torch.einsum("buij,buje->buie", torch.exp(dots - lse), bv)
        o = bo.reshape(bh, -1, e).gather(1, undo[:, :, None].expand(-1, -1, e))
        logits = lse.reshape(bh, -1).gather(1, undo)
        o = o.view(bh, rounds, t, e)
        logits = logits.view(bh, rounds, t, 1)
        share = torch.exp(logits - torch.logsumexp(logits, 1, keepdim=True))
        return (o * share).sum(1)

    def forward(self, x, reverse):
        b, t, _ = x.shape
        split = lambda y: y.view(b, t, heads, hd).transpose(1, 2).reshape(b * heads, t, hd)
        qk, v = split(self.toqk(x)), split(self.tov(x))
        buckets = self.hash(qk)
        if reverse:
            buckets = self.cached
        else:
            self.cached = buckets
        out = self.attend(qk, v, buckets)
        return self.to_out(out.view(b, heads, t, hd).transpose(1, 2).reshape(b, t, d))

class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1, self.w2 = nn.Linear(d, ff), nn.Linear(ff, d)
        self.act = nn.ReLU() if relu else nn.GELU()

    def forward(self, x):
        return torch.cat([self.w2(self.act(self.w1(c)))
                          for c in x.chunk(chunks, dim=-2)], dim=-2)

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm, self.attn = nn.LayerNorm(d), LSHSelfAttention()
        self.ff_norm, self.ff = nn.LayerNorm(d), FeedForward()

    def f(self, x, reverse=False, rng=None):
        if rng is None:
            self.rng = torch.get_rng_state()
            return self.attn(self.attn_norm(x), reverse)
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(rng)
            return self.attn(self.attn_norm(x), reverse)

    def g(self, x, rng=None):
        if rng is None:
            self.g_rng = torch.get_rng_state()
            return self.ff(self.ff_norm(x))
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(rng)
            return self.ff(self.ff_norm(x))

class ReversibleStack(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, blocks):
        for blk in blocks:
            x1, x2 = x.chunk(2, dim=2)
            y1 = x1 + blk.f(x2)
            x = torch.cat([y1, x2 + blk.g(y1)], dim=2)
        ctx.y, ctx.blocks = x.detach(), blocks
        return x

    @staticmethod
    def backward(ctx, dy):
        y = ctx.y
        for blk in reversed(ctx.blocks):
            y1, y2 = y.chunk(2, dim=2)
            dy1, dy2 = dy.chunk(2, dim=2)
            with torch.enable_grad():
                y1.requires_grad = True
                gy1 = blk.g(y1, rng=blk.g_rng)
                torch.autograd.backward(gy1, dy2)
            with torch.no_grad():
                x2 = y2 - gy1
                dx1 = dy1 + y1.grad
            with torch.enable_grad():
                x2.requires_grad = True
                fx2 = blk.f(x2, reverse=True, rng=blk.rng)
                torch.autograd.backward(fx2, dx1, retain_graph=True)
            with torch.no_grad():
                y = torch.cat([y1 - fx2, x2.detach()], dim=2)
                dy = torch.cat([dx1, dy2 + x2.grad], dim=2)
        return dy, None

class ReformerLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block() for _ in range(layers))
        self.norm, self.out = nn.LayerNorm(d), nn.Linear(d, vocab)

    def forward(self, tokens):
        x = self.emb(tokens)
        x = torch.cat([x, x], dim=-1)
        if reversible:
            x = ReversibleStack.apply(x, self.blocks)
        else:
            for blk in self.blocks:
                x1, x2 = x.chunk(2, dim=2)
                y1 = x1 + blk.f(x2)
                x = torch.cat([y1, x2 + blk.g(y1)], dim=2)
        x = torch.stack(x.chunk(2, dim=-1)).mean(dim=0)
        return self.out(self.norm(x))

model = ReformerLM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
tokens = torch.randint(0, vocab, (1, seq))
labels = torch.randint(0, vocab, (1, seq))
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
base = rss()
def step():
    loss = F.cross_entropy(model(tokens).view(-1, vocab), labels.view(-1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()
step()
times = []
for _ in range(repeat):
    t0 = time.perf_counter(); last = step(); times.append(time.perf_counter() - t0)
if not math.isfinite(last):
    sys.exit("the transcription's loss is %r" % last)
times.sort()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
print(times[len(times) // 2] * 1e3, peak / 2 ** 20)
"""


def torch_reformer_step(python, opts, layers, reversible, heads, vocab):
    """The torch transcription of reformer-pytorch's train step at lcc-bench's
    stack configuration: (median ms per step, peak MiB over the model)."""
    args = [python, "-c", TORCH_REFORMER_TRAIN] + [str(x) for x in (
        layers, opts.seq, opts.d_model, opts.d_ff, heads, vocab,
        max(opts.ff_chunks, 1), int(reversible),
        int(opts.activation == "relu"), opts.repeat,
        len(pinned(opts.threads)),
        opts.lsh_hashes, opts.lsh_bucket_size)]
    median, peak = map(float, run_pinned(
        args, opts.threads, numpy_env(opts.threads)).split())
    return median, peak

def torch_python():
    """A python3 with torch, or None."""
    return python_with("torch")


def torch_decode_ms(python, opts, seq, prompt, form="dense", stride=0):
    """The torch transcription's (prefill ms, median ms per token) for
    `form`: dense (a static cache), sparse (strided, `stride`: the static
    cache's pattern keys gathered), lsh (Hugging Face's cached Reformer
    step) or transformer-xl (one token over per-layer key and value
    caches)."""
    if form == "transformer-xl":
        args = [TORCH_TXL_DECODE, str(seq), str(prompt), str(opts.new_tokens),
                str(opts.threads)]
    else:
        args = [TORCH_LSH_DECODE if form == "lsh" else TORCH_DECODE,
                str(opts.layers), str(seq), str(opts.d_model), str(opts.d_ff),
                str(opts.heads), "256", str(prompt), str(opts.new_tokens),
                str(opts.threads)]
        if form != "lsh":
            args.append(str(stride))
    out = run_pinned([python, "-c"] + args, opts.threads,
                     numpy_env(opts.threads))
    prefill, step = map(float, out.split())
    return prefill, step


def python_with(module):
    """A python3 that can import `module` (Debian's first), or None."""
    for python in ("/usr/bin/python3", sys.executable):
        if python and subprocess.run(
                [python, "-c", "import " + module],
                capture_output=True).returncode == 0:
            return python
    return None


def numpy_python():
    """A python3 with numpy, or None."""
    return python_with("numpy")


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
