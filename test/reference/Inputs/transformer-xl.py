#!/usr/bin/env python3
"""Transformer-XL's relative attention as kimiyoung/transformer-xl computes
it (RelPartialLearnableMultiHeadAttn with _rel_shift, clamp_len and
same_length), in plain Python on small random inputs, so that a test can
hold lcc-reference's relative_attention (the formula of docs/design.md §3)
to it.

Writes q, k, v, pos, u, w and the result (kimiyoung.npy) into --output-dir,
f32, in attn.relative_attention's layout: q [B, H, Lq, D], k, v
[B, H, Lk, D], pos [H, Lk, D] (pos[h, t]: distance t), u, w [H, D].
"""
import argparse
import math
import os
import random
import struct


def write_npy(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        "".join("%d, " % d for d in shape))
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%df" % len(values), *values))


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def rel_shift(x, rows, cols):
    """kimiyoung's _rel_shift on a [rows, cols] matrix (a flat row-major
    list): pad a zero column in front, view as [cols + 1, rows], drop the
    first row, view as [rows, cols]."""
    padded = []
    for i in range(rows):
        padded += [0.0] + x[i * cols:(i + 1) * cols]
    return padded[rows:]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--qlen", type=int, required=True)
    p.add_argument("--mlen", type=int, required=True)
    p.add_argument("--dim", type=int, default=4)
    p.add_argument("--clamp-len", type=int, default=-1)
    p.add_argument("--same-length", action="store_true")
    p.add_argument("--mem-len", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--output-dir", required=True)
    a = p.parse_args()
    rng = random.Random(a.seed)
    B, H, qlen, D = a.batch, a.heads, a.qlen, a.dim
    klen = qlen + a.mlen

    def draw(n):
        return [f32(rng.gauss(0, 1)) for _ in range(n)]

    q, k, v = draw(B * H * qlen * D), draw(B * H * klen * D), draw(
        B * H * klen * D)
    pos, u, w = draw(H * klen * D), draw(H * D), draw(H * D)
    # The reference's positions run from klen - 1 down to 0; clamp_len caps
    # them before the encoding (pos_seq.clamp_(max=clamp_len)).
    pos_seq = [klen - 1 - j for j in range(klen)]
    if a.clamp_len >= 0:
        pos_seq = [min(t, a.clamp_len) for t in pos_seq]
    # dec_attn_mask, with same_length as the reference builds it.
    hidden = [[j >= 1 + a.mlen + i for j in range(klen)] for i in range(qlen)]
    if a.same_length:
        mask_len = klen - a.mem_len
        shift = qlen - mask_len if mask_len > 0 else qlen
        hidden = [[hidden[i][j] or j <= i - shift for j in range(klen)]
                  for i in range(qlen)]
    scale = 1 / math.sqrt(D)
    out = []
    for b in range(B):
        for h in range(H):
            def row(t, s, i):
                base = ((b * H + h) * s + i) * D
                return t[base:base + D]

            def dot(x, y):
                return sum(p * r for p, r in zip(x, y))
            head_pos = [pos[(h * klen + t) * D:(h * klen + t + 1) * D]
                        for t in range(klen)]
            r_head_k = [head_pos[t] for t in pos_seq]
            ac, bd = [], []
            for i in range(qlen):
                qi = row(q, qlen, i)
                rw = [x + y for x, y in zip(qi, u[h * D:(h + 1) * D])]
                rr = [x + y for x, y in zip(qi, w[h * D:(h + 1) * D])]
                ac += [dot(rw, row(k, klen, j)) for j in range(klen)]
                bd += [dot(rr, r_head_k[j]) for j in range(klen)]
            bd = rel_shift(bd, qlen, klen)
            for i in range(qlen):
                scores = [(ac[i * klen + j] + bd[i * klen + j]) * scale
                          for j in range(klen)]
                m = max(s for j, s in enumerate(scores) if not hidden[i][j])
                e = [0.0 if hidden[i][j] else math.exp(s - m)
                     for j, s in enumerate(scores)]
                total = sum(e)
                for d in range(D):
                    out.append(sum(e[j] / total * row(v, klen, j)[d]
                                   for j in range(klen)))
    o = a.output_dir
    write_npy(os.path.join(o, "q.npy"), [B, H, qlen, D], q)
    write_npy(os.path.join(o, "k.npy"), [B, H, klen, D], k)
    write_npy(os.path.join(o, "v.npy"), [B, H, klen, D], v)
    write_npy(os.path.join(o, "pos.npy"), [H, klen, D], pos)
    write_npy(os.path.join(o, "u.npy"), [H, D], u)
    write_npy(os.path.join(o, "w.npy"), [H, D], w)
    write_npy(os.path.join(o, "kimiyoung.npy"), [B, H, qlen, D], out)


if __name__ == "__main__":
    main()
