#!/usr/bin/env python3
"""The differential model fuzzer: random valid attn models, compiled by lcc
and run by lcc-run, against the double-precision reference.

Each seed makes one model: a random stack of the model-level ops and the
attention forms, on random shapes (ragged sequences, batch > 1, head_dim 1,
seq 1), with chunked feed-forwards, LSH attention in groups of rows
(`chunks`, the same result) and skip connections that keep earlier values
alive. The model is written twice: as attn IR (model.mlir) and as the
JSON graph of the math it means (graph.json, see test/reference/Graph.h),
which lcc-reference evaluates. Forms the generator makes exact (LSH with two
buckets, routed attention with one cluster and a full window) appear in the
graph as the dense attention they equal and are held to the same tolerance.
Approximate forms (general LSH and routing) are run too; the results that
depend on them must be finite, nothing more. Transformer-XL's relative
attention (a memory of sk - sq keys, clamp_len, same_length) and adaptive
span (a memory, z in [0, 1), max_span, ramp, causal or not) are checked
exactly, as the graph ops relative_attention and adaptive_span_attention.

A random model can be ill-conditioned (nearly equal features under a layer
norm, sharp softmaxes, saturating tanh), so that f32 rounding alone moves its
output by more than 1e-5. When a result misses 1e-5, the reference is run
twice more: on the model perturbed at the scale of f32 rounding (every input
and weight moved by a relative 2^-23 at most), and with every node's results
rounded to f32 as compiled code stores them (lcc-reference --round-to-f32);
the result passes if its error is within 10x the larger change, and the run
lists such seeds. A real bug
(wrong data, a clobbered buffer) is orders of magnitude beyond either.

  model-fuzz.py --bin=build/bin --seeds=1-40            a fixed set
  model-fuzz.py --bin=build/bin --fresh=5               5 new seeds, printed
  model-fuzz.py --bin=build/bin --count=2000 --jobs=2   a long run

With --attention-precision=bf16 (or f16) each model is also compiled with
its attention in the half type (lcc --attention-precision) and its
results held to the f32 compiled model's: within 3e-2 (f16 5e-3) of the
largest element, or, for an ill-conditioned model, within 10x its
sensitivity to f32 rounding scaled up to the half type's (2^15 for bf16,
2^12 for f16). A model the compiler refuses to compute in half (odd
head_dim, no attention it can take) is checked in f32 alone.

A failing seed keeps its directory (model, graph, inputs, weights and the
tool's output) under --work and is printed with the command that reproduces
it. The last line is "N passed, N failed". Only the Python standard library
is used.
"""

import argparse
import json
import math
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

RTOL = 1e-5
# How far from the rounded f32 value a compiled elementwise op or reduction
# may land (lcc's exp and tanh are polynomial approximations a few ulps from
# libm's): the conditioning run stores every intermediate this far off.
PERTURB_ULPS = 4
# --attention-precision: how far the half model's results may be from the
# f32 model's (relative to the largest element), and the half type's
# rounding over f32's (2^-8 and 2^-11 against 2^-23), which scales a model's
# sensitivity to f32 rounding up to its sensitivity to the half type's.
HALF_RTOL = {"bf16": 3e-2, "f16": 5e-3}
HALF_ROUNDING_RATIO = {"bf16": 2.0 ** 15, "f16": 2.0 ** 12}


# ---------------------------------------------------------------------------
# Files: .npy and .safetensors, written here so the fuzzer needs nothing else
# ---------------------------------------------------------------------------

def npy_bytes(shape, dtype, values):
    descr = "<f4" if dtype == "f32" else "<i4"
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, dims)
    total = (10 + len(header) + 1 + 63) // 64 * 64
    header = header + " " * (total - 10 - len(header) - 1) + "\n"
    code = "f" if dtype == "f32" else "i"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode("latin1") + struct.pack("<%d%s" % (len(values), code),
                                                  *values))


def safetensors_bytes(tensors):
    header, data, offset = {}, [], 0
    for name in sorted(tensors):
        shape, values = tensors[name]
        raw = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [offset, offset + len(raw)]}
        data.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(data)


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def jittered(values, jitter):
    if jitter is None:
        return values
    return [x * (1 + jitter.uniform(-1, 1) * 2.0**-23) for x in values]


# ---------------------------------------------------------------------------
# The model generator
# ---------------------------------------------------------------------------

class Value:
    """An SSA value of the model: its name in the IR and in the graph."""

    def __init__(self, name, shape, dtype="f32", approximate=False):
        self.name, self.shape, self.dtype = name, list(shape), dtype
        self.approximate = approximate

    @property
    def ssa(self):
        return "%" + self.name

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype)


def tensor_type(shape, dtype="f32"):
    dims = "".join("%dx" % d for d in shape)
    return "tensor<%s%s>" % (dims, dtype)


class Scope:
    """The IR lines and graph nodes of one block (the function or a region)."""

    def __init__(self, indent):
        self.lines, self.nodes, self.indent = [], [], indent

    def emit(self, text):
        self.lines.append("  " * self.indent + text)


class ModelGenerator:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        # Mask and score regions draw from their own stream, so that adding
        # them left every other choice of a seed's model as it was.
        self.mask_rng = random.Random(seed * 7919 + 17)
        # LSH's row groups too (they leave the result as it is).
        self.chunk_rng = random.Random(seed * 7919 + 29)
        # And LSH's factorized hashing.
        self.hash_rng = random.Random(seed * 7919 + 31)
        # And Transformer-XL's relative attention.
        self.relative_rng = random.Random(seed * 7919 + 37)
        # And adaptive span.
        self.span_rng = random.Random(seed * 7919 + 41)
        self.seed = seed
        self.counter = 0
        self.params = {}  # name -> (shape, kind)
        self.inputs = []  # (Value, data description)
        self.scopes = [Scope(2)]

    # -- naming and emission ------------------------------------------------

    def fresh(self, shape, dtype="f32", approximate=False):
        self.counter += 1
        return Value("v%d" % self.counter, shape, dtype, approximate)

    @property
    def scope(self):
        return self.scopes[-1]

    def node(self, op, args, results, **attrs):
        entry = {"op": op, "args": [a.name for a in args],
                 "results": [r.name for r in results]}
        entry.update(attrs)
        self.scope.nodes.append(entry)
        return entry

    # -- choices -------------------------------------------------------------

    def chance(self, p):
        return self.rng.random() < p

    def pick(self, *choices):
        return self.rng.choice(choices)

    def seq_length(self):
        # Odd lengths pad tiles; multiples of 4 and 8 split into zigzag
        # shares over 2 and 4 ranks (--context-parallel).
        return self.pick(1, 2, 3, 4, 5, 7, 8, 12, 13, 16, 24, 31, 33, 63, 64,
                         65, 96, 100, 127, 128, 129, 150)

    # -- ops -----------------------------------------------------------------

    def layer_norm(self, x, prefix):
        d = x.shape[-1]
        if d == 2:
            # Over two features a norm's output is +-a / sqrt(a^2 + eps)
            # for half their difference a: when a is tiny, f32's rounding
            # of their mean (inside the op, where no node-level estimate of
            # conditioning reaches) moves it by |mean| / |a| ulps. That is
            # f32's answer, not lcc's error; leave such norms out.
            return x
        g = self.param_value(prefix, "gamma", [d])
        b = self.param_value(prefix, "beta", [d])
        out = self.fresh(x.shape, approximate=x.approximate)
        attrs = {}
        text = ""
        if self.chance(0.3):
            attrs["epsilon"] = self.pick(1e-5, 1e-3, 0.1)
        if attrs:
            text = " {epsilon = %e : f32}" % attrs["epsilon"]
        self.scope.emit("%s = attn.layer_norm %s, %s, %s%s : (%s, %s, %s) -> %s"
                        % (out.ssa, x.ssa, g.ssa, b.ssa, text, x.type, g.type,
                           b.type, out.type))
        self.node("layer_norm", [x, g.graph, b.graph], [out], **attrs)
        return out

    def linear(self, x, prefix, width=None):
        d = x.shape[-1]
        width = width or d
        w = self.param_value(prefix, "weight", [d, width])
        args, types = [x.ssa, w.ssa], [x.type, w.type]
        graph = [x, w.graph]
        if self.chance(0.6):
            b = self.param_value(prefix, "bias", [width])
            args.append(b.ssa)
            types.append(b.type)
            graph.append(b.graph)
        out = self.fresh(x.shape[:-1] + [width], approximate=x.approximate)
        self.scope.emit("%s = attn.linear %s : (%s) -> %s" % (
            out.ssa, ", ".join(args), ", ".join(types), out.type))
        self.node("linear", graph, [out])
        return out

    def feed_forward(self, x, prefix):
        d = x.shape[-1]
        dff = self.pick(1, 3, 8, 16, 33, 64)
        act = self.pick("relu", "gelu")
        w1 = self.param_value(prefix, "w1", [d, dff])
        b1 = self.param_value(prefix, "b1", [dff])
        w2 = self.param_value(prefix, "w2", [dff, d])
        b2 = self.param_value(prefix, "b2", [d])
        seq = x.shape[1]
        chunks = 1
        if self.chance(0.6):
            chunks = self.rng.randint(1, min(seq, 8))
        text = " {chunks = %d : i64}" % chunks if chunks > 1 else ""
        out = self.fresh(x.shape, approximate=x.approximate)
        self.scope.emit(
            "%s = attn.feed_forward %s %s, %s, %s, %s, %s%s : (%s, %s, %s, %s, "
            "%s) -> %s" % (out.ssa, act, x.ssa, w1.ssa, b1.ssa, w2.ssa, b2.ssa,
                           text, x.type, w1.type, b1.type, w2.type, b2.type,
                           out.type))
        self.node("feed_forward", [x, w1.graph, b1.graph, w2.graph, b2.graph],
                  [out], activation=act)
        return out

    def param_value(self, prefix, kind, shape):
        init = {"gamma": "gamma", "beta": "small", "bias": "small",
                "b1": "small", "b2": "small", "table": "normal",
                "positions": "normal", "span": "unit"}.get(kind, "weight")
        name = "%s.%s" % (prefix, kind)
        self.params[name] = (list(shape), init)
        value = self.fresh(shape)
        self.scope.emit('%s = attn.param "%s" : %s' % (value.ssa, name,
                                                       value.type))
        value.graph = Value(name, shape)
        return value

    def mask_and_score(self, prefix, sq, sk, heads):
        """Random mask and score regions, as IR lines, and the names the
        reference knows them by (test/reference/Masks.h); None when absent."""
        r = self.mask_rng
        mask = score = None
        lines = []
        n = [0]

        def v(text):
            n[0] += 1
            name = "%%%s_%d" % (prefix, n[0])
            lines.append("    %s = %s" % (name, text))
            return name

        def const(c):
            return v("arith.constant %d : index" % c)

        def absdiff(i, j):
            d = v("arith.subi %s, %s : index" % (i, j))
            e = v("arith.subi %s, %s : index" % (j, i))
            return v("arith.maxsi %s, %s : index" % (d, e))

        def lt(x, y, pred="slt"):
            return v("arith.cmpi %s, %s, %s : index" % (pred, x, y))

        def either(*xs):
            out = xs[0]
            for x in xs[1:]:
                out = v("arith.ori %s, %s : i1" % (out, x))
            return out

        def arith(depth, leaves):
            """A random index expression over `leaves` (IR name, expression
            name) and constants, divisions by zero and by -1 included: its
            IR value and its expression for the reference (Expressions.h)."""
            pick = r.random()
            if depth == 0 or pick < 0.25:
                if r.random() < 0.6:
                    return r.choice(leaves)
                c = r.choice([0, 0, -1, 1, 2, 3, 7, r.randint(-20, 40),
                              -2**63, 64])
                return const(c), str(c)
            if pick < 0.35:
                cond = arith_compare(depth - 1, leaves)
                (x, ex), (y, ey) = (arith(depth - 1, leaves),
                                    arith(depth - 1, leaves))
                return (v("arith.select %s, %s, %s : index" % (cond[0], x, y)),
                        "(select %s %s %s)" % (cond[1], ex, ey))
            op = r.choice(["addi", "subi", "muli", "divsi", "divui", "remsi",
                           "remui", "ceildivsi", "ceildivui", "floordivsi",
                           "divsi", "remsi", "maxsi", "minui", "andi", "xori",
                           "shli", "shrsi", "shrui"])
            (x, ex), (y, ey) = arith(depth - 1, leaves), arith(depth - 1,
                                                               leaves)
            return (v("arith.%s %s, %s : index" % (op, x, y)),
                    "(%s %s %s)" % (op, ex, ey))

        def arith_compare(depth, leaves):
            pred = r.choice(["eq", "ne", "slt", "sle", "sgt", "sge", "ult",
                             "ule", "ugt", "uge"])
            (x, ex), (y, ey) = arith(depth, leaves), arith(depth, leaves)
            return (v("arith.cmpi %s, %s, %s : index" % (pred, x, y)),
                    "(%s %s %s)" % (pred, ex, ey))

        i, j = "%%%s_i" % prefix, "%%%s_j" % prefix
        if r.random() < 0.5:
            kind = r.choice(["sliding", "longformer", "bigbird", "documents",
                             "lag", "arith", "arith", "arith", "arith"])
            if kind == "arith":
                leaves = [(i, "i"), (j, "j"), ("%%%s_b" % prefix, "b"),
                          ("%%%s_h" % prefix, "h")]
                yes, expression = arith_compare(r.randint(1, 3), leaves)
                if r.random() < 0.5:
                    # Or a window, so that most rows see some key.
                    w = r.randint(1, 8)
                    yes = either(yes, lt(absdiff(i, j), const(w)))
                    expression = ("(ori %s (slt (maxsi (subi i j) (subi j i))"
                                  " %d))" % (expression, w))
                mask = "expr:" + expression
            elif kind == "sliding":
                w = r.randint(1, max(sq, sk))
                mask = "sliding:%d" % w
                yes = lt(absdiff(i, j), const(w))
            elif kind == "longformer":
                w, g = r.randint(1, max(sq, sk)), r.randint(0, 4)
                mask = "longformer:%d,%d" % (w, g)
                yes = either(lt(absdiff(i, j), const(w)), lt(i, const(g)),
                             lt(j, const(g)))
            elif kind == "bigbird":
                blk, g, rr, sd = (r.randint(1, 16), r.randint(0, 2),
                                  r.randint(0, 101), r.randint(0, 50))
                mask = "bigbird:%d,%d,%d,%d" % (blk, g, rr, sd)
                qb = v("arith.divui %s, %s : index" % (i, const(blk)))
                kb = v("arith.divui %s, %s : index" % (j, const(blk)))
                x = v("arith.muli %s, %s : index" % (qb, const(31)))
                y = v("arith.muli %s, %s : index" % (kb, const(17)))
                h = v("arith.addi %s, %s : index" % (
                    v("arith.addi %s, %s : index" % (x, y)), const(sd)))
                bucket = v("arith.remui %s, %s : index" % (h, const(101)))
                yes = either(
                    v("arith.cmpi sle, %s, %s : index" % (absdiff(qb, kb),
                                                          const(1))),
                    lt(qb, const(g)), lt(kb, const(g)),
                    lt(bucket, const(rr), "ult"))
            elif kind == "documents":
                lengths = [r.randint(1, max(1, sk // 2))
                           for _ in range(r.randint(1, 4))]
                mask = "documents:" + ",".join(str(x) for x in lengths)
                def doc(p):
                    total, end = None, 0
                    for length in lengths:
                        end += length
                        past = v("arith.cmpi uge, %s, %s : index" % (
                            p, const(end)))
                        wide = v("arith.extui %s : i1 to i64" % past)
                        total = wide if total is None else v(
                            "arith.addi %s, %s : i64" % (total, wide))
                    return total
                yes = v("arith.cmpi eq, %s, %s : i64" % (doc(i), doc(j)))
            else:
                lag = r.randint(0, 3)
                mask = "lag:%d" % lag
                shifted = v("arith.addi %s, %s : index" % (j, const(lag)))
                yes = v("arith.cmpi sle, %s, %s : index" % (shifted, i))
            lines.append("    attn.yield %s : i1" % yes)
            mask_lines = (["mask {", "  ^bb0(%%%s_b: index, %%%s_h: index, "
                           "%s: index, %s: index):" % (prefix, prefix, i, j)]
                          + lines + ["  }"])
        else:
            mask_lines = []
        lines = []
        if r.random() < 0.35:
            s_ = "%%%s_s" % prefix
            hh = "%%%s_sh" % prefix
            si, sj = "%%%s_si" % prefix, "%%%s_sj" % prefix
            kind = r.random()
            if kind < 0.4:
                # s + (E rem 9) / 4: region arithmetic, divisions included,
                # kept small so that f32 and the double reference agree.
                leaves = [(si, "i"), (sj, "j"), ("%%%s_sb" % prefix, "b"),
                          (hh, "h")]
                e, ee = arith(r.randint(1, 3), leaves)
                small = v("arith.remsi %s, %s : index" % (e, const(9)))
                wide = v("arith.index_cast %s : index to i64" % small)
                bias = v("arith.mulf %s, %s : f32" % (
                    v("arith.sitofp %s : i64 to f32" % wide),
                    v("arith.constant 2.5e-01 : f32")))
                out = v("arith.addf %s, %s : f32" % (s_, bias))
                score = "expr:(addf s (mulf (sitofp (remsi %s 9)) 0.25))" % ee
            elif kind < 0.65:
                score = "alibi"
                h1 = v("arith.addi %s, %s : index" % (hh, const(1)))
                h64 = v("arith.index_cast %s : index to i64" % h1)
                hf = v("arith.sitofp %s : i64 to f32" % h64)
                rate = v("arith.constant %.9e : f32" % (-8.0 * math.log(2.0)
                                                        / heads))
                slope = v("math.exp %s : f32" % v(
                    "arith.mulf %s, %s : f32" % (hf, rate)))
                d = v("arith.index_cast %s : index to i64" % v(
                    "arith.subi %s, %s : index" % (sj, si)))
                df = v("arith.sitofp %s : i64 to f32" % d)
                out = v("arith.addf %s, %s : f32" % (
                    s_, v("arith.mulf %s, %s : f32" % (slope, df))))
            else:
                cap = r.randint(1, 30)
                score = "softcap:%d" % cap
                c = v("arith.constant %d.0 : f32" % cap)
                t = v("math.tanh %s : f32" % v("arith.divf %s, %s : f32" % (
                    s_, c)))
                out = v("arith.mulf %s, %s : f32" % (t, c))
            lines.append("    attn.yield %s : f32" % out)
            score_lines = (["score {", "  ^bb0(%s: f32, %%%s_sb: index, "
                            "%s: index, %s: index, %s: index):" % (
                                s_, prefix, hh, si, sj)] + lines + ["  }"])
        else:
            score_lines = []
        return mask, score, mask_lines + score_lines

    def relative_attention(self, q, k, v):
        """Transformer-XL attention: the first sk - sq keys are a memory;
        the distance encodings and biases are parameters."""
        r = self.relative_rng
        b, h, sq, dh = q.shape
        sk = k.shape[2]
        out = self.fresh([b, h, sq, v.shape[3]],
                         approximate=q.approximate or k.approximate or
                         v.approximate)
        prefix = "rel%d" % self.counter
        pos = self.param_value(prefix, "positions", [h, sk, dh])
        u = self.param_value(prefix, "bias", [h, dh])
        w = self.param_value(prefix + ".r", "bias", [h, dh])
        attrs, graph_attrs = [], {}
        if r.random() < 0.3:
            graph_attrs["clamp_len"] = r.randint(0, sk)
        if r.random() < 0.3:
            graph_attrs["same_length"] = r.randint(1, sk)
        if r.random() < 0.3:
            graph_attrs["scale"] = r.choice([0.25, 0.5, 2.0])
        for name, value in sorted(graph_attrs.items()):
            attrs.append("%s = %s" % (name, "%e : f32" % value
                                      if name == "scale" else
                                      "%d : i64" % value))
        self.scope.emit(
            "%s = attn.relative_attention %s, %s, %s, %s, %s, %s%s : (%s, %s, "
            "%s, %s, %s, %s) -> %s" % (
                out.ssa, q.ssa, k.ssa, v.ssa, pos.ssa, u.ssa, w.ssa,
                " {%s}" % ", ".join(attrs) if attrs else "", q.type, k.type,
                v.type, pos.type, u.type, w.type, out.type))
        self.node("relative_attention",
                  [q, k, v, pos.graph, u.graph, w.graph], [out], **graph_attrs)
        return out

    def adaptive_span_attention(self, q, k, v):
        """Adaptive span: the first sk - sq keys are a memory; z (one per
        head, in [0, 1)) is a parameter."""
        r = self.span_rng
        b, h, sq, dh = q.shape
        sk = k.shape[2]
        out = self.fresh([b, h, sq, v.shape[3]],
                         approximate=q.approximate or k.approximate or
                         v.approximate)
        z = self.param_value("span%d" % self.counter, "span", [h])
        graph_attrs = {"max_span": r.randint(1, 2 * sk),
                       "ramp": r.randint(1, 40)}
        if r.random() < 0.7:
            graph_attrs["causal"] = True
        if r.random() < 0.3:
            graph_attrs["scale"] = r.choice([0.25, 0.5, 2.0])
        attrs = []
        for name, value in sorted(graph_attrs.items()):
            attrs.append("%s = %s" % (name, "%e : f32" % value
                                      if name == "scale" else "true"
                                      if name == "causal" else
                                      "%d : i64" % value))
        self.scope.emit(
            "%s = attn.adaptive_span_attention %s, %s, %s, %s {%s} : (%s, %s, "
            "%s, %s) -> %s" % (
                out.ssa, q.ssa, k.ssa, v.ssa, z.ssa, ", ".join(attrs),
                q.type, k.type, v.type, z.type, out.type))
        self.node("adaptive_span_attention", [q, k, v, z.graph], [out],
                  **graph_attrs)
        return out

    def attention_form(self, q, k, v, shared_qk, top_level=False):
        """An attention op on per-head tensors; returns (result, exact)."""
        b, h, sq, dh = q.shape
        sk = k.shape[2]
        if top_level and not shared_qk and sk >= sq and \
                self.relative_rng.random() < 0.3:
            return self.relative_attention(q, k, v)
        if top_level and not shared_qk and sk >= sq and \
                self.span_rng.random() < 0.25:
            return self.adaptive_span_attention(q, k, v)
        causal = self.chance(0.5) and sq == sk
        out = self.fresh([b, h, sq, v.shape[3]])
        types = "(%s, %s, %s) -> %s" % (q.type, k.type, v.type, out.type)
        forms = ["dense"]
        if sq == sk:
            forms += ["sparse", "sparse"]
        if shared_qk:
            forms += ["lsh_exact", "lsh"]
        else:
            forms += ["routed_exact", "routed"]
        form = self.rng.choice(forms)
        scale = None
        if form in ("dense", "sparse") and self.chance(0.3):
            scale = self.pick(0.25, 0.5, 1.0, 2.0)
        attrs = []
        if causal:
            attrs.append("causal = true")
        if scale is not None:
            attrs.append("scale = %e : f32" % scale)
        graph_attrs = {"causal": causal}
        if scale is not None:
            graph_attrs["scale"] = scale
        approximate = q.approximate or k.approximate or v.approximate
        if form == "dense":
            if shared_qk:
                attrs.append("shared_qk")
                graph_attrs["shared_qk"] = True
            mask, score, regions = self.mask_and_score(
                out.ssa[1:] + "r", sq, sk, h)
            if mask:
                graph_attrs["mask"] = mask
            if score:
                graph_attrs["score"] = score
            self.scope.emit("%s = attn.attention %s, %s, %s {%s} : %s%s" % (
                out.ssa, q.ssa, k.ssa, v.ssa, ", ".join(attrs), types,
                (" " + regions[0]) if regions else ""))
            for line in regions[1:]:
                self.scope.emit(line)
            self.node("attention", [q, k, v], [out], **graph_attrs)
        elif form == "sparse":
            pattern = self.pick("fixed", "strided")
            stride = self.rng.randint(1, sq)
            # Whole windows (a stride dividing seq) take the lowering's
            # two parts where the stride is small beside the block.
            windows = [d for d in range(1, sq // 2 + 1) if sq % d == 0]
            if windows and self.chance(0.5):
                stride = self.rng.choice(windows)
            block = self.pick(1, 4, 16, 32, 64)
            attrs += ["block = %d : i64" % block, "stride = %d : i64" % stride]
            graph_attrs.update(pattern=pattern, stride=stride)
            if pattern == "fixed":
                summary = self.rng.randint(1, stride)
                attrs.append("summary = %d : i64" % summary)
                graph_attrs["summary"] = summary
            self.scope.emit("%s = attn.sparse_attention %s %s, %s, %s {%s} : %s"
                            % (out.ssa, pattern, q.ssa, k.ssa, v.ssa,
                               ", ".join(attrs), types))
            self.node("sparse_attention", [q, k, v], [out], **graph_attrs)
        elif form in ("lsh_exact", "lsh"):
            hashes = self.rng.randint(1, 4)
            if form == "lsh_exact":
                # Two chunks a round. One round: each chunk sees itself and
                # the other one. More: a round's first chunk looks back at
                # the previous round's last, so the real tokens must all be
                # in the first chunk (the second is padding).
                bucket = min(sq, (sq + 1) // 2 + self.rng.randint(0, 3))
                if hashes > 1:
                    bucket = sq
            else:
                bucket = self.rng.randint(1, max(1, sq // 2))
                approximate = True
            attrs += ["n_hashes = %d : i64" % hashes,
                      "bucket_size = %d : i64" % bucket,
                      "seed = %d : i64" % self.rng.randint(0, 99)]
            buckets = 2 * -(-sq // (2 * bucket))
            if form == "lsh" and buckets % 4 == 0 and \
                    self.hash_rng.random() < 0.5:
                attrs.append("factorized_hash")
            rows = q.shape[0] * q.shape[1]
            if rows > 1 and self.chunk_rng.random() < 0.5:
                attrs.append("chunks = %d : i64" %
                             self.chunk_rng.randint(2, rows))
            types = "(%s, %s) -> %s" % (q.type, v.type, out.type)
            self.scope.emit("%s = attn.lsh_attention %s, %s {%s} : %s" % (
                out.ssa, q.ssa, v.ssa, ", ".join(attrs), types))
            graph_attrs["shared_qk"] = True
            self.node("attention", [q, q, v], [out], **graph_attrs)
        else:
            if form == "routed_exact":
                clusters, window = 1, sk
            else:
                clusters = self.rng.randint(1, sk)
                window = self.rng.randint(1, sk)
                approximate = True
            attrs += ["clusters = %d : i64" % clusters,
                      "window = %d : i64" % window]
            if self.chance(0.5):
                attrs.append("seed = %d : i64" % self.rng.randint(0, 99))
            self.scope.emit("%s = attn.routed_attention %s, %s, %s {%s} : %s" % (
                out.ssa, q.ssa, k.ssa, v.ssa, ", ".join(attrs), types))
            self.node("attention", [q, k, v], [out], **graph_attrs)
        out.approximate = approximate
        return out

    def multi_head_attention(self, x, prefix):
        bsz, seq, d = x.shape
        heads = self.pick(*[h for h in (1, 2, 3, 4) if d % h == 0])
        dh = d // heads
        shared = self.chance(0.4)
        wq = self.param_value(prefix, "wq", [d, d])
        wk = None if shared else self.param_value(prefix, "wk", [d, d])
        wv = self.param_value(prefix, "wv", [d, d])
        wo = self.param_value(prefix, "wo", [d, d])
        out = self.fresh(x.shape)
        operands = "%s, query %s, %svalue %s, output %s" % (
            x.ssa, wq.ssa, "" if shared else "key %s, " % wk.ssa, wv.ssa,
            wo.ssa)
        types = [x.type, wq.type] + ([] if shared else [wk.type]) + [
            wv.type, wo.type]
        self.scope.emit(
            "%s = attn.multi_head_attention %s {heads = %d : i64} : (%s) -> %s "
            "{" % (out.ssa, operands, heads, ", ".join(types), out.type))
        head_shape = [bsz, heads, seq, dh]
        region = self.open_region()
        args = [self.fresh(head_shape, approximate=x.approximate)
                for _ in range(2 if shared else 3)]
        self.scope.emit("^bb0(%s):" % ", ".join(
            "%s: %s" % (a.ssa, a.type) for a in args))
        if shared:
            o = self.attention_form(args[0], args[0], args[1], True)
        else:
            o = self.attention_form(args[0], args[1], args[2], False)
        self.scope.emit("attn.yield %s : %s" % (o.ssa, o.type))
        self.close_region(region, args, [o])
        self.scopes[-1].lines.append("  " * self.scope.indent + "}")
        graph_args = [x, wq.graph] + ([] if shared else [wk.graph]) + [
            wv.graph, wo.graph]
        self.node("multi_head_attention", graph_args, [out], heads=heads,
                  regions=[region.graph])
        out.approximate = o.approximate
        return out

    def open_region(self):
        scope = Scope(self.scope.indent + 1)
        self.scopes.append(scope)
        return scope

    def close_region(self, scope, args, results):
        self.scopes.pop()
        self.scope.lines.extend(scope.lines)
        scope.graph = {"args": [a.name for a in args], "nodes": scope.nodes,
                       "yield": [r.name for r in results]}

    def sublayer(self, x, prefix):
        """A block body: norm then attention or feed-forward, or one op."""
        choice = self.pick("mha", "ff", "norm_mha", "norm_ff", "linear")
        if choice.startswith("norm_"):
            x = self.layer_norm(x, prefix + ".norm")
            choice = choice[5:]
        if choice == "mha":
            return self.multi_head_attention(x, prefix + ".attn")
        if choice == "ff":
            return self.feed_forward(x, prefix + ".ff")
        return self.linear(x, prefix + ".proj")

    def residual(self, x, prefix):
        out = self.fresh(x.shape)
        self.scope.emit("%s = attn.residual %s : %s {" % (out.ssa, x.ssa,
                                                          x.type))
        region = self.open_region()
        a = self.fresh(x.shape, approximate=x.approximate)
        self.scope.emit("^bb0(%s: %s):" % (a.ssa, a.type))
        y = self.sublayer(a, prefix)
        self.scope.emit("attn.yield %s : %s" % (y.ssa, y.type))
        self.close_region(region, [a], [y])
        self.scope.lines.append("  " * self.scope.indent + "}")
        self.node("residual", [x], [out], regions=[region.graph])
        out.approximate = y.approximate
        return out

    def reversible(self, x1, x2, prefix):
        y1, y2 = self.fresh(x1.shape), self.fresh(x2.shape)
        name = "r%d" % self.counter
        self.scope.emit("%%%s:2 = attn.reversible %s, %s : %s, %s f {" % (
            name, x1.ssa, x2.ssa, x1.type, x2.type))
        graphs, approximate = [], x1.approximate or x2.approximate
        for i, which in enumerate(("f", "g")):
            if i == 1:
                self.scope.lines.append("  " * self.scope.indent + "} g {")
            region = self.open_region()
            a = self.fresh(x1.shape, approximate=approximate)
            self.scope.emit("^bb0(%s: %s):" % (a.ssa, a.type))
            y = self.sublayer(a, "%s.%s" % (prefix, which))
            approximate = approximate or y.approximate
            self.scope.emit("attn.yield %s : %s" % (y.ssa, y.type))
            self.close_region(region, [a], [y])
            graphs.append(region.graph)
        self.scope.lines.append("  " * self.scope.indent + "}")
        # The IR names both results %rN#0, %rN#1; the graph names them yN.
        self.scope.emit("%s = arith.addf %%%s#0, %%%s#1 : %s" % (
            y1.ssa, name, name, x1.type))
        y1.approximate = y2.approximate = approximate
        self.node("reversible", [x1, x2], [Value(name + "_0", x1.shape),
                                           Value(name + "_1", x2.shape)],
                  regions=graphs)
        self.node("add", [Value(name + "_0", x1.shape),
                          Value(name + "_1", x2.shape)], [y1])
        return y1

    def elementwise(self, a, b):
        op = self.pick("add", "add", "mul", "maximum")
        mlir = {"add": "arith.addf", "mul": "arith.mulf",
                "maximum": "arith.maximumf"}[op]
        out = self.fresh(a.shape, approximate=a.approximate or b.approximate)
        self.scope.emit("%s = %s %s, %s : %s" % (out.ssa, mlir, a.ssa, b.ssa,
                                                 a.type))
        self.node(op, [a, b], [out])
        return out

    def concat_project(self, a, b, prefix):
        """concat(a, b) along the features, projected back to d_model."""
        shape = a.shape[:-1] + [a.shape[-1] + b.shape[-1]]
        out = self.fresh(shape, approximate=a.approximate or b.approximate)
        self.scope.emit("%s = tensor.concat dim(%d) %s, %s : (%s, %s) -> %s" % (
            out.ssa, len(shape) - 1, a.ssa, b.ssa, a.type, b.type, out.type))
        self.node("concat", [a, b], [out], dim=len(shape) - 1)
        return self.linear(out, prefix, a.shape[-1])

    def positions(self, x):
        """x + a [seq, d_model] table broadcast over the batch."""
        table = self.param_value("embed", "positions", x.shape[1:])
        wide = self.fresh(x.shape)
        empty = self.fresh(x.shape)
        self.scope.emit("%s = tensor.empty() : %s" % (empty.ssa, x.type))
        self.scope.emit(
            "%s = linalg.broadcast ins(%s : %s) outs(%s : %s) dimensions = "
            "[0]" % (wide.ssa, table.ssa, table.type, empty.ssa, x.type))
        self.node("broadcast", [table.graph], [wide], shape=x.shape)
        out = self.fresh(x.shape, approximate=x.approximate)
        self.scope.emit("%s = arith.addf %s, %s : %s" % (out.ssa, x.ssa,
                                                         wide.ssa, x.type))
        self.node("add", [x, wide], [out])
        return out

    def tanh(self, a):
        out = self.fresh(a.shape, approximate=a.approximate)
        self.scope.emit("%s = math.tanh %s : %s" % (out.ssa, a.ssa, a.type))
        self.node("tanh", [a], [out])
        return out

    # -- whole models --------------------------------------------------------

    def add_input(self, shape, dtype="f32", high=None):
        value = self.fresh(shape, dtype)
        self.inputs.append((value, high))
        return value

    def activation_stack(self, x, layers):
        """Blocks on [batch, seq, d_model]; every value stays available for
        a later skip connection, the pattern that keeps buffers alive."""
        live = [x]
        for layer in range(layers):
            prefix = "l%d" % layer
            kind = self.pick("residual", "residual", "sublayer", "reversible",
                             "skip", "tanh", "norm")
            if kind == "residual":
                x = self.residual(x, prefix)
            elif kind == "sublayer":
                x = self.sublayer(x, prefix)
            elif kind == "reversible":
                x = self.reversible(x, self.rng.choice(live), prefix)
            elif kind == "skip" and len(live) > 1:
                if self.chance(0.25):
                    x = self.concat_project(x, self.rng.choice(live[:-1]),
                                            prefix + ".mix")
                else:
                    x = self.elementwise(x, self.rng.choice(live[:-1]))
            elif kind == "tanh":
                x = self.tanh(x)
            else:
                x = self.layer_norm(x, prefix + ".norm")
            live.append(x)
        return x, live

    def generate(self):
        kind = self.pick("activations", "activations", "language", "heads")
        bsz = self.pick(1, 1, 2, 3)
        seq = self.seq_length()
        outputs = []
        if kind == "heads":
            heads, dh = self.pick(1, 2, 3), self.pick(1, 2, 4, 8, 16, 17, 32)
            sk = seq if self.chance(0.7) else self.seq_length()
            q = self.add_input([bsz, heads, seq, dh])
            k = self.add_input([bsz, heads, sk, dh])
            v = self.add_input([bsz, heads, sk, self.pick(dh, 1, 8)])
            shared = sk == seq and v.shape[3] == dh and self.chance(0.4)
            o = self.attention_form(q, q if shared else k, v, shared,
                                    top_level=True)
            outputs.append(o)
            if self.chance(0.5):
                o2 = self.attention_form(q, q if shared else k, v, shared,
                                         top_level=True)
                outputs.append(self.elementwise(o, o2))
        else:
            d = self.pick(1, 2, 4, 6, 8, 12, 16, 32)
            if kind == "language":
                vocab = self.pick(2, 7, 50)
                tokens = self.add_input([bsz, seq], "i32", vocab)
                table = self.param_value("embed", "table", [vocab, d])
                x = self.fresh([bsz, seq, d])
                self.scope.emit("%s = attn.embedding %s, %s : (%s, %s) -> %s"
                                % (x.ssa, tokens.ssa, table.ssa, tokens.type,
                                   table.type, x.type))
                self.node("embedding", [tokens, table.graph], [x])
                if self.chance(0.5):
                    x = self.positions(x)
            else:
                x = self.add_input([bsz, seq, d])
            x, live = self.activation_stack(x, self.rng.randint(1, 5))
            outputs.append(x)
            if self.chance(0.4):
                outputs.append(self.rng.choice(live))
            if kind == "language" and self.chance(0.7):
                logits = self.linear(x, "lm_head", vocab)
                outputs = [logits]
                if self.chance(0.5):
                    labels = self.add_input([bsz, seq], "i32", vocab)
                    loss = self.fresh([], approximate=logits.approximate)
                    self.scope.emit(
                        "%s = attn.softmax_cross_entropy %s, %s : (%s, %s) -> %s"
                        % (loss.ssa, logits.ssa, labels.ssa, logits.type,
                           labels.type, loss.type))
                    self.node("softmax_cross_entropy", [logits, labels], [loss])
                    outputs.append(loss)
        self.outputs = outputs
        return self

    def module_text(self):
        args = ", ".join("%s: %s" % (v.ssa, v.type) for v, _ in self.inputs)
        results = ", ".join(o.type for o in self.outputs)
        lines = ["// model-fuzz seed %d" % self.seed, "module {",
                 "  func.func @forward(%s) -> (%s) {" % (args, results)]
        lines += self.scopes[0].lines
        lines.append("    return %s : %s" % (
            ", ".join(o.ssa for o in self.outputs), results))
        lines += ["  }", "}"]
        return "\n".join(lines) + "\n"

    def graph(self):
        return {"inputs": [{"name": v.name, "shape": v.shape,
                            "dtype": v.dtype} for v, _ in self.inputs],
                "nodes": self.scopes[0].nodes,
                "outputs": [o.name for o in self.outputs]}

    def data(self, rng, jitter=None):
        """The .npy inputs and the weights file; with `jitter` (a Random),
        every float is moved by a relative 2^-23 at most: the same model,
        perturbed at the scale of f32 rounding."""
        inputs = []
        for value, high in self.inputs:
            n = count(value.shape)
            if value.dtype == "i32":
                values = [rng.randrange(high) for _ in range(n)]
            else:
                values = jittered([rng.gauss(0, 1) for _ in range(n)], jitter)
            inputs.append(npy_bytes(value.shape, value.dtype, values))
        weights = {}
        for name, (shape, init) in self.params.items():
            n = count(shape)
            if init == "weight":
                sd = 1 / math.sqrt(shape[0])
                values = [rng.gauss(0, sd) for _ in range(n)]
            elif init == "gamma":
                values = [1 + 0.1 * rng.gauss(0, 1) for _ in range(n)]
            elif init == "small":
                values = [0.1 * rng.gauss(0, 1) for _ in range(n)]
            elif init == "unit":
                values = [rng.random() for _ in range(n)]
            else:
                values = [rng.gauss(0, 1) for _ in range(n)]
            weights[name] = (shape, jittered(values, jitter))
        return inputs, safetensors_bytes(weights)


# ---------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------

# mpirun as root (CI runs as root), its shared-memory transport without
# the kernel's cross-memory attach (absent in containers).
MPIRUN_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                  OMPI_MCA_btl_vader_single_copy_mechanism="none")


def run_tool(command, directory, timeout, env=None):
    try:
        done = subprocess.run(command, cwd=directory, capture_output=True,
                              text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout
    output = (done.stdout + done.stderr).strip()
    if done.returncode < 0:
        return done.returncode, "killed by signal %d: %s" % (-done.returncode,
                                                            output[-2000:])
    return done.returncode, output


def relative_error(output):
    for line in output.splitlines():
        if line.startswith("rel_err:"):
            return float(line.split()[1])
    return float("nan")


def read_npy_f32(path):
    with open(path, "rb") as f:
        raw = f.read()
    length = struct.unpack("<H", raw[8:10])[0]
    body = raw[10 + length:]
    return struct.unpack("<%df" % (len(body) // 4), body)


def check_seed(seed, args):
    directory = os.path.join(args.work, "seed-%d" % seed)
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    model = ModelGenerator(seed).generate()
    with open(os.path.join(directory, "model.mlir"), "w") as f:
        f.write(model.module_text())
    with open(os.path.join(directory, "graph.json"), "w") as f:
        json.dump(model.graph(), f, indent=1)
    data_seed = seed * 7919 + 1
    inputs, weights = model.data(random.Random(data_seed))
    input_files = []
    for i, data in enumerate(inputs):
        input_files.append("input%d.npy" % i)
        with open(os.path.join(directory, input_files[-1]), "wb") as f:
            f.write(data)
    with open(os.path.join(directory, "weights.safetensors"), "wb") as f:
        f.write(weights)

    tool = lambda name: os.path.join(os.path.abspath(args.bin), name)
    os.makedirs(os.path.join(directory, "out"))
    os.makedirs(os.path.join(directory, "ref"))
    steps = [
        ("lcc", [tool("lcc"), "model.mlir", "-o", "model.lcm"]),
        ("lcc-run", [tool("lcc-run"), "model.lcm",
                     "--params=weights.safetensors", "--output-dir=out",
                     "--threads=1"] +
         ["--input=" + f for f in input_files]),
        ("lcc-reference", [tool("lcc-reference"), "--graph=graph.json",
                           "--params=weights.safetensors", "--output-dir=ref"]
         + ["--input=" + f for f in input_files]),
    ]
    for name, command in steps:
        status, output = run_tool(command, directory, args.timeout)
        if status != 0:
            return seed, "%s failed (%s): %s" % (
                name, "status %s" % status if status is not None else "hang",
                output.splitlines()[-1] if output else ""), False
    conditioned = False
    for i, out in enumerate(model.outputs):
        actual = os.path.join(directory, "out", "result%d.npy" % i)
        if out.approximate:
            values = read_npy_f32(actual)
            if not all(math.isfinite(x) for x in values):
                return seed, "result%d (approximate form) is not finite" % i, \
                    False
            continue
        reference = os.path.join(directory, "ref", "result%d.npy" % i)
        status, output = run_tool(
            [tool("lcc-compare"), actual, reference, "--rtol=%g" % RTOL],
            directory, args.timeout)
        if status == 0:
            continue
        # A random model may be ill-conditioned (nearly equal features under
        # a layer norm, sharp softmaxes, saturating tanh): then f32 rounding
        # alone moves the output more than 1e-5. The reference says how much,
        # twice: run on the model perturbed at that scale (every float by
        # 2^-23 at most), and run with every intermediate stored in f32 the
        # way compiled code may produce it (rounded, then off by up to
        # PERTURB_ULPS ulps, as a compiled tanh or exp may be). Within 10x
        # of the larger, the error is the model's, not lcc's.
        error = relative_error(output)
        sensitivity = max(
            reference_sensitivity(model, data_seed, i, directory, input_files,
                                  tool, args),
            rounding_sensitivity(i, directory, input_files, tool, args))
        if not math.isfinite(error) or error > max(RTOL, 10 * sensitivity):
            return seed, ("result%d differs from the reference: rel_err "
                          "%.3e, the model's own sensitivity to f32 rounding "
                          "%.3e" % (i, error, sensitivity)), False
        conditioned = True
    if args.context_parallel > 1:
        failure = check_context_parallel(directory, model, input_files, tool,
                                         args)
        if failure:
            return seed, failure, False
    if args.attention_precision:
        failure = check_half_precision(directory, model, data_seed,
                                       input_files, tool, args)
        if failure:
            return seed, failure, False
    if not args.keep:
        shutil.rmtree(directory)
    return seed, None, conditioned


def refusal_reason(output):
    """The kind of a compiler's refusal to split a model: its error line
    without the model's positions, numbers and op names, so that refusals
    for one reason count together."""
    line = next((l for l in output.splitlines() if "error" in l),
                output.strip().splitlines()[-1] if output.strip() else "")
    line = line.split("error: ", 1)[-1]
    line = re.sub(r"'[^']*'", "'OP'", line)
    return re.sub(r"[0-9]+", "N", line)


def compile_variant(directory, tool, args, flag, lcm, refusal_words,
                    refusals):
    """lcc on the model with `flag`, into `lcm`: True when it compiled;
    None when the compiler refused it (an error line naming one of
    `refusal_words`, and no internal error), the reason added to
    `refusals`; else what failed."""
    status, output = run_tool([tool("lcc"), "model.mlir", "-o", lcm, flag],
                              directory, args.timeout)
    if status == 0:
        return True
    refused = any(word in output for word in refusal_words)
    if refused and "internal error" not in output:
        refusals.append(refusal_reason(output))
        return None
    return "lcc %s failed: %s" % (
        flag, output.splitlines()[-1] if output else "")


def check_context_parallel(directory, model, input_files, tool, args):
    """The model compiled with --context-parallel=P and run by P ranks
    under mpirun gives one process's results (rtol 1e-5); a model the
    compiler refuses to split (its error names context parallelism) is
    skipped. A seed checked is added to args.split_seeds."""
    ranks = args.context_parallel
    compiled = compile_variant(
        directory, tool, args, "--context-parallel=%d" % ranks, "split.lcm",
        ("context parallel", "--context-parallel"), args.split_refusals)
    if compiled is not True:
        return compiled
    os.makedirs(os.path.join(directory, "split"))
    status, output = run_tool(
        ["mpirun", "--oversubscribe", "-np", str(ranks), tool("lcc-run"),
         "split.lcm", "--params=weights.safetensors", "--output-dir=split",
         "--threads=1"] + ["--input=" + f for f in input_files],
        directory, args.timeout, MPIRUN_ENV)
    if status != 0:
        return "mpirun -np %d lcc-run failed: %s" % (
            ranks, output.splitlines()[-1] if output else "")
    for i, out in enumerate(model.outputs):
        if out.approximate:
            continue
        status, output = run_tool(
            [tool("lcc-compare"), os.path.join("split", "result%d.npy" % i),
             os.path.join("out", "result%d.npy" % i), "--rtol=%g" % RTOL],
            directory, args.timeout)
        if status != 0:
            return ("result%d over %d ranks differs from one process's: %s"
                    % (i, ranks, output.strip().splitlines()[-1]))
    args.split_seeds.append(directory)
    return None


def check_half_precision(directory, model, data_seed, input_files, tool,
                         args):
    """The model compiled with --attention-precision gives the f32 compiled
    model's results to the half type's rounding (HALF_RTOL, or 10x the
    model's sensitivity to f32 rounding scaled to the half type's); a model
    the compiler refuses to compute in half is skipped. A seed checked is
    added to args.half_seeds."""
    precision = args.attention_precision
    compiled = compile_variant(
        directory, tool, args, "--attention-precision=" + precision,
        "half.lcm", ("attention-precision", "in pairs"), args.half_refusals)
    if compiled is not True:
        return compiled
    os.makedirs(os.path.join(directory, "half"))
    status, output = run_tool(
        [tool("lcc-run"), "half.lcm", "--params=weights.safetensors",
         "--output-dir=half", "--threads=1"] +
        ["--input=" + f for f in input_files], directory, args.timeout)
    if status != 0:
        return "lcc-run of the %s model failed: %s" % (
            precision, output.splitlines()[-1] if output else "")
    bound = HALF_RTOL[precision]
    for i, out in enumerate(model.outputs):
        if out.approximate:
            continue
        status, output = run_tool(
            [tool("lcc-compare"), os.path.join("half", "result%d.npy" % i),
             os.path.join("out", "result%d.npy" % i), "--rtol=%g" % bound],
            directory, args.timeout)
        if status == 0:
            continue
        error = relative_error(output)
        sensitivity = HALF_ROUNDING_RATIO[precision] * reference_sensitivity(
            model, data_seed, i, directory, input_files, tool, args)
        if not math.isfinite(error) or error > max(bound, 10 * sensitivity):
            return ("result%d with %s attention differs from f32's: rel_err "
                    "%.3e, the model's sensitivity to %s rounding %.3e" %
                    (i, precision, error, precision, sensitivity))
    args.half_seeds.append(directory)
    return None


def reference_sensitivity(model, data_seed, index, directory, input_files,
                          tool, args):
    """rel_err between the reference on the model and on the model with
    every float moved by a relative 2^-23 at most."""
    jitter_dir = os.path.join(directory, "jitter")
    if not os.path.isdir(jitter_dir):
        os.makedirs(os.path.join(jitter_dir, "ref"))
        inputs, weights = model.data(random.Random(data_seed),
                                     random.Random(data_seed + 17))
        for name, data in zip(input_files, inputs):
            with open(os.path.join(jitter_dir, name), "wb") as f:
                f.write(data)
        with open(os.path.join(jitter_dir, "weights.safetensors"), "wb") as f:
            f.write(weights)
        status, _ = run_tool(
            [tool("lcc-reference"), "--graph=../graph.json",
             "--params=weights.safetensors", "--output-dir=ref"] +
            ["--input=" + f for f in input_files], jitter_dir, args.timeout)
        if status != 0:
            return float("nan")
    _, output = run_tool(
        [tool("lcc-compare"),
         os.path.join(jitter_dir, "ref", "result%d.npy" % index),
         os.path.join(directory, "ref", "result%d.npy" % index), "--rtol=1"],
        directory, args.timeout)
    return relative_error(output)


def rounding_sensitivity(index, directory, input_files, tool, args):
    """rel_err between the reference and the reference that stores every
    node's results in f32 off by up to PERTURB_ULPS ulps."""
    rounded = os.path.join(directory, "rounded")
    if not os.path.isdir(rounded):
        os.makedirs(rounded)
        status, _ = run_tool(
            [tool("lcc-reference"), "--graph=graph.json",
             "--params=weights.safetensors", "--output-dir=rounded",
             "--perturb-ulps=%d" % PERTURB_ULPS] +
            ["--input=" + f for f in input_files],
            directory, args.timeout)
        if status != 0:
            return float("nan")
    _, output = run_tool(
        [tool("lcc-compare"), os.path.join(rounded, "result%d.npy" % index),
         os.path.join(directory, "ref", "result%d.npy" % index), "--rtol=1"],
        directory, args.timeout)
    return relative_error(output)


def print_refusals(reasons):
    """The compiler's refusals counted by reason, most common first: what
    to support next."""
    counts = {}
    for reason in reasons:
        counts[reason] = counts.get(reason, 0) + 1
    for reason, count in sorted(counts.items(), key=lambda kv: -kv[1]):
        print("  %d refused: %s" % (count, reason))


def parse_seeds(text):
    seeds = []
    for part in text.split(","):
        if "-" in part:
            low, high = part.split("-")
            seeds += range(int(low), int(high) + 1)
        elif part:
            seeds.append(int(part))
    return seeds


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--bin", required=True,
                        help="folder with lcc, lcc-run, lcc-reference, "
                             "lcc-compare")
    parser.add_argument("--seeds", default="",
                        help="seeds to run: 1-40,77 (a fixed set)")
    parser.add_argument("--fresh", type=int, default=0,
                        help="also run this many new seeds (printed)")
    parser.add_argument("--count", type=int, default=0,
                        help="run seeds from --first on, this many")
    parser.add_argument("--first", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=300,
                        help="seconds per tool run before it counts as a "
                             "hang")
    parser.add_argument("--work", default=None,
                        help="where seed directories go (default: a "
                             "temporary folder)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the directories of passing seeds too")
    parser.add_argument("--context-parallel", type=int, default=0,
                        metavar="P",
                        help="also compile each model with "
                             "--context-parallel=P and check that P ranks "
                             "under mpirun give one process's results (a "
                             "model the compiler refuses to split is "
                             "skipped)")
    parser.add_argument("--attention-precision", choices=["bf16", "f16"],
                        help="also compile each model with its attention "
                             "in this type (lcc --attention-precision) and "
                             "hold its results to the f32 model's at that "
                             "type's rounding (a model the compiler "
                             "refuses to compute in half is skipped)")
    parser.add_argument("--print-model", type=int, metavar="SEED",
                        help="print the IR of one seed and exit")
    args = parser.parse_args()
    if args.print_model is not None:
        sys.stdout.write(ModelGenerator(args.print_model).generate()
                         .module_text())
        return 0

    seeds = parse_seeds(args.seeds)
    seeds += range(args.first, args.first + args.count)
    if args.fresh:
        base = random.SystemRandom().randrange(10**6, 10**9)
        fresh = list(range(base, base + args.fresh))
        print("fresh seeds: %d-%d" % (fresh[0], fresh[-1]), flush=True)
        seeds += fresh
    if not seeds:
        parser.error("give --seeds, --count or --fresh")
    if args.work is None:
        args.work = tempfile.mkdtemp(prefix="lcc-model-fuzz-")
    os.makedirs(args.work, exist_ok=True)

    start = time.time()
    args.split_seeds = []
    args.split_refusals = []
    args.half_seeds = []
    args.half_refusals = []
    failures, conditioned = [], []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for seed, problem, widened in pool.map(lambda s: check_seed(s, args),
                                               seeds):
            if widened:
                conditioned.append(seed)
            if problem:
                failures.append(seed)
                print("FAIL seed %d: %s\n  in %s" % (
                    seed, problem, os.path.join(args.work, "seed-%d" % seed)),
                    flush=True)
    elapsed = time.time() - start
    print("%d models in %.0f s; reproduce one with: %s --bin=%s --seeds=N "
          "--work=DIR --keep" % (len(seeds), elapsed, sys.argv[0], args.bin))
    if conditioned:
        print("%d ill-conditioned (judged within 10x their sensitivity to "
              "f32 rounding): seeds %s" % (
                  len(conditioned), ",".join(str(s) for s in conditioned)))
    if args.context_parallel > 1:
        print("%d also over %d ranks (lcc --context-parallel=%d); the "
              "compiler refused to split the others" % (
                  len(args.split_seeds), args.context_parallel,
                  args.context_parallel))
        print_refusals(args.split_refusals)
    if args.attention_precision:
        print("%d also with %s attention (lcc --attention-precision=%s); "
              "the compiler refused the others" % (
                  len(args.half_seeds), args.attention_precision,
                  args.attention_precision))
        print_refusals(args.half_refusals)
    print("%d passed, %d failed" % (len(seeds) - len(failures), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
