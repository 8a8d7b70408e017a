#!/usr/bin/env python3
"""lcc-bench: compile and run lcc workloads, print a table of measurements.

  lcc-bench attention [--seq=1024,4096,8192,16384] [--heads=8]
                      [--head-dim=64] [--batch=1] [--causal] [--repeat=3]
                      [--threads=N] [--device=cpu|cuda-emulator]
                      [--check=memcheck,racecheck]
                      [--form=dense|sparse-strided|sparse-fixed|lsh|routed|
                              sliding-window] [--window=N]
                      [--lsh-hashes=N] [--lsh-bucket-size=N]
                      [--lsh-hash=plain|factorized|auto]
                      [--routed-clusters=N] [--routed-window=N]
                      [--sparse-stride=N] [--sparse-summary=N]
                      [--sparse-block=N] [--query-tile=N] [--key-tile=N]
                      [--peer-up-to=N] [--no-peer]
  lcc-bench masks     [--seq=4096,16384,65536] [--heads=8] [--head-dim=64]
                      [--window=256] [--global=16] [--causal] [--repeat=3]
                      [--threads=N] [--dense-up-to=N]
  lcc-bench models    [--repeat=5] [--threads=N]
  lcc-bench decode    [--seq=1024,4096,16384] [--forms=dense,sparse,lsh]
                      [--layers=2] [--d-model=256] [--d-ff=1024] [--heads=4]
                      [--new-tokens=64] [--recompute-tokens=2] [--repeat=3]
                      [--threads=1] [--recompute-up-to=N] [--peer-up-to=N]
                      [--no-peer]
  lcc-bench depth     [--layers=2,4,8,16] [--seq=4096] [--d-model=256]
                      [--d-ff=1024] [--form=lsh|dense] [--ff-chunks=N]
                      [--activation=gelu|relu] [--attention-chunks=N]
                      [--repeat=2] [--threads=N] [--rounds=1] [--no-peer]
  lcc-bench ff-chunks [--chunks=1,4,16] [--layers=1] [--seq=16384]
                      [--d-model=256] [--d-ff=4096] [--reversible]
                      [--activation=gelu|relu] [--attention-chunks=N]
                      [--repeat=2] [--threads=N]
  lcc-bench profile   [--layers=2] [--seq=4096] [--d-model=256] [--d-ff=1024]
                      [--form=lsh|dense] [--plain] [--ff-chunks=16]
                      [--activation=gelu|relu] [--attention-chunks=N]
                      [--repeat=2] [--threads=1] [--no-peer]
  lcc-bench train     [--seq=1024,4096,16384] [--forms=dense,lsh]
                      [--d-model=128] [--d-ff=512] [--lsh-hashes=4]
                      [--lsh-bucket-size=64] [--repeat=3] [--threads=N]
  lcc-bench data-parallel [--ranks=1,2,4] [--batch=4] [--seq=4096]
                      [--layers=2] [--d-model=128] [--d-ff=512] [--form=lsh]
                      [--steps=3]
  lcc-bench context-parallel [--ranks=1,2,4] [--seq=16384] [--layers=2]
                      [--d-model=128] [--d-ff=512]
                      [--form=lsh|dense|ring|window|relative|adaptive-span]
                      [--window=1024]
                      [--over-heads] [--steps=2]
  lcc-bench relative  [--segment=512] [--memory=0,512,2048] [--heads=8]
                      [--head-dim=64] [--batch=1] [--clamp-len=N]
                      [--repeat=3] [--threads=N] [--no-peer] [--backward]

attention: scaled dot-product attention, f32 (or --dtype=bf16), one model per
sequence length,
compiled with lcc for the CPU (for a sparse form: lcc --attention=sparse with
the given pattern; for lsh: shared-QK attention compiled with
--attention=lsh; for sliding-window: attn.attention with a mask region
|i - j| < --window, whose hidden key tiles are skipped) and run with lcc-run
on random inputs.
Reports compile time (each configuration compiled once), the median and
the minimum time per call over --repeat calls (each one lcc-run of a
warm-up call and a timed one), the
runtime's peak bytes (inputs, outputs, parameters and the planned arena) and
the attention FLOP rate (4 * batch * heads * seq^2 * head_dim, halved when
causal; for sparse and masked forms this is the dense-equivalent rate, so it shows
the speed-up over dense directly). When a python3 with numpy is installed
(Debian: python3-numpy libopenblas0-pthread), the same run measures the
ceiling, OpenBLAS sgemm 2048^3, before every lcc call and the peer, numpy +
OpenBLAS dense attention of the same shape (up to --peer-up-to tokens),
after it: 'of sgemm' is the median of each call's rate over the ceiling
measured just before it, 'vs numpy' the median of the peer's time over
lcc's, so a machine whose speed drifts between calls moves both sides of
each ratio together. 'stolen %' is the median share of the pinned CPUs'
time that a hypervisor gave to other machines during each lcc-run (the
steal column of /proc/stat; 0 on bare metal): a run that reads high there
was measured on a busy host. --threads=N pins lcc-run,
the ceiling and the peer to the first N CPUs this process may use, with N
threads each (OpenBLAS too), and the header says which.

masks: mask and score regions against dense attention of the same shape,
interleaved per sequence length: dense, ALiBi (a score region), a sliding
window |i - j| < --window and Longformer (the window plus --global global
tokens). Reports time per call, peak bytes, the fraction of (query, key)
tile pairs the mask leaves to visit (from lcc's remark, measured from the
block table), and the speed-up over dense (for ALiBi: its cost over dense).
Dense and ALiBi run only up to --dense-up-to tokens (default: every length).

models: every model in models/, with fresh weights: compile time, number of
dispatches, arena bytes, peak bytes and time per call.

train: the bundled Reformer (models/reformer-tiny.mlir: 2 reversible
layers, 4 heads, vocab 256) at each --seq, --d-model and --d-ff (the model's
text with its sizes replaced), compiled with lcc --train --optimizer=adam,
dense or with --attention=lsh: compile time, time per train_step call (a
forward, a backward and the Adam update) and peak bytes.

depth: a pre-norm decoder of --layers residual (attention, feed-forward)
pairs (shared-QK causal attention, LSH-4 by default, a GELU feed-forward
(--activation=relu for ReLU; tables before 2026-12-05 ran ReLU), 4
heads, vocab 256), compiled with --train --optimizer=adam as it is
("plain") and with --reversible: compile time, time per train_step and
peak bytes, and the peak's growth per layer over the previous depth. With
LSH and python3-torch, the peer: reformer-pytorch's ReformerLM train step
(the same sizes, LSH, chunks and activation, causal, Adam; reversible or
not as the row) transcribed to torch, pinned and threaded as lcc-run; it
runs after each of --rounds runs of lcc's step, and 'lcc / peer' is the
median of the rounds' ratios. Its peak is the resident growth once the
model exists (lcc's is the runtime's peak bytes).

ff-chunks: the same model (--layers, default 1) compiled with each
--ff-chunks value: time per train_step and peak bytes.

profile: where one train_step of the depth model goes (defaults:
reformer-pytorch's ReformerLM configuration, --layers=2, reversible, LSH-4,
--ff-chunks=16, GELU; --plain for no reversible blocks), by model op: its
commands, ms per step, share of the step, GFLOP (as lcc counted them from
each dispatch's ops) and GFLOP/s, and with numpy the fraction of OpenBLAS
sgemm's rate on the same CPUs (measured before and after the step, the
mean of the two), pinned to the first --threads CPUs.

relative: Transformer-XL attention (attn.relative_attention) of a --segment
of queries over each --memory length plus the segment: time per segment and
peak bytes, beside dense attention of the same queries and keys without a
mask (the content term alone, so the ratio is what the position term
costs) and, with numpy, the peer: Transformer-XL attention computed as
kimiyoung/transformer-xl does (full score matrices, _rel_shift). With
--backward: the forward and backward of each (lcc --train's loss_gradients
of a cross-entropy over the result, every operand a parameter) instead, and
their ratios to the forward and to dense attention's forward and backward.

Measurements come from lcc-run --report=json; nothing is estimated.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(os.path.realpath(__file__))
SOURCE = "@LCC_SOURCE_DIR@"
sys.path.insert(0, BIN)
from lcc_bench_peers import (numpy_attention_ms, numpy_python,  # noqa: E402
                             torch_decode_ms, torch_python,
                             numpy_relative_ms, pinned, run_pinned,
                             sgemm_ceiling, torch_reformer_step)


def tool(name):
    return os.path.join(BIN, name)


def run(args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("lcc-bench: error: %s failed: %s" %
                 (os.path.basename(args[0]), result.stderr.strip()))
    return result.stdout


def compile_model(source, output, flags=(), cache_dir=None):
    seconds, _ = compile_model_with_remarks(source, output, flags, cache_dir)
    return seconds


def compile_model_with_remarks(source, output, flags=(), cache_dir=None):
    """Compile time and lcc's stderr (its remarks). Compiled with the kernel
    cache `cache_dir`, by default an empty one: a cold compile, whatever
    the user's cache holds."""
    with tempfile.TemporaryDirectory() as empty:
        args = [tool("lcc"), source, "-o", output,
                "--cache-dir=" + (cache_dir or empty)] + list(flags)
        start = time.perf_counter()
        result = subprocess.run(args, capture_output=True, text=True)
        seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit("lcc-bench: error: lcc failed: %s" % result.stderr.strip())
    return seconds, result.stderr


def report(lcm, inputs, params, repeat, threads, workdir, device=()):
    """lcc-run's report, pinned to the first `threads` CPUs (all: 0);
    `device`: lcc-run's device flags (default: the cpu device)."""
    args = [tool("lcc-run"), lcm, "--report=json", "--warmup=1",
            "--repeat=%d" % repeat, "--output-dir=%s" % workdir]
    args += ["--input=%s" % i for i in inputs]
    if params:
        args.append("--params=%s" % params)
    if device:
        args += list(device)
    elif threads:
        args.append("--threads=%d" % threads)
    return json.loads(run_pinned(args, threads))


def interleaved(rounds, measures):
    """Each of `measures` (a callable, or None for none) called once per
    round, in turn: the lists of their results. On a machine whose speed
    drifts within minutes, what is compared is measured in the same
    minutes."""
    results = [[] for _ in measures]
    for _ in range(rounds):
        for measure, out in zip(measures, results):
            if measure:
                out.append(measure())
    return results


def cpu_ticks(cpus):
    """{cpu: (stolen, total)} clock ticks of `cpus` from /proc/stat; empty
    where the kernel reports none."""
    ticks = {}
    try:
        with open("/proc/stat") as f:
            for line in f:
                name, *fields = line.split()
                if name[3:].isdigit() and int(name[3:]) in cpus:
                    counts = [int(x) for x in fields[:8]]
                    ticks[int(name[3:])] = (counts[7] if len(counts) > 7
                                            else 0, sum(counts))
    except OSError:
        pass
    return ticks


def with_stolen_share(cpus, measure):
    """`measure`'s report, with "stolen": the share of its CPUs' time the
    hypervisor gave to other machines while it ran (None if unknown)."""
    before = cpu_ticks(cpus)
    result = measure()
    after = cpu_ticks(cpus)
    stolen = sum(after[c][0] - before[c][0] for c in before if c in after)
    total = sum(after[c][1] - before[c][1] for c in before if c in after)
    result["stolen"] = stolen / total if total else None
    return result


def median(values):
    return statistics.median(values) if values else None


def window_mask_lines(window):
    """The ops of a mask region computing %near = |i - j| < window."""
    return ("      ^bb0(%%b: index, %%h: index, %%i: index, %%j: index):\n"
            "        %%d = arith.subi %%i, %%j : index\n"
            "        %%e = arith.subi %%j, %%i : index\n"
            "        %%distance = arith.maxsi %%d, %%e : index\n"
            "        %%w = arith.constant %d : index\n"
            "        %%near = arith.cmpi slt, %%distance, %%w : index\n"
            % window)


def sliding_window_mask(window):
    """The mask region of a sliding window: |i - j| < window."""
    return ("\n      mask {\n" + window_mask_lines(window) +
            "        attn.yield %near : i1\n"
            "      }")


def longformer_mask(window, global_tokens):
    """|i - j| < window, or i or j among the first global_tokens."""
    return ("\n      mask {\n" + window_mask_lines(window) +
            "        %%g = arith.constant %d : index\n"
            "        %%gq = arith.cmpi slt, %%i, %%g : index\n"
            "        %%gk = arith.cmpi slt, %%j, %%g : index\n"
            "        %%global = arith.ori %%gq, %%gk : i1\n"
            "        %%visible = arith.ori %%near, %%global : i1\n"
            "        attn.yield %%visible : i1\n"
            "      }" % global_tokens)


def alibi_score(heads):
    """ALiBi: s + m_h (j - i), m_h = 2^(-8 (h + 1) / heads)."""
    return ("\n      score {\n"
            "      ^bb0(%%s: f32, %%b: index, %%h: index, %%i: index, "
            "%%j: index):\n"
            "        %%one = arith.constant 1 : index\n"
            "        %%h1 = arith.addi %%h, %%one : index\n"
            "        %%h64 = arith.index_cast %%h1 : index to i64\n"
            "        %%hf = arith.sitofp %%h64 : i64 to f32\n"
            "        %%rate = arith.constant %.9g : f32\n"
            "        %%exponent = arith.mulf %%hf, %%rate : f32\n"
            "        %%slope = math.exp %%exponent : f32\n"
            "        %%d = arith.subi %%j, %%i : index\n"
            "        %%d64 = arith.index_cast %%d : index to i64\n"
            "        %%df = arith.sitofp %%d64 : i64 to f32\n"
            "        %%bias = arith.mulf %%slope, %%df : f32\n"
            "        %%t = arith.addf %%s, %%bias : f32\n"
            "        attn.yield %%t : f32\n"
            "      }" % (-8.0 * 0.6931471805599453 / heads))


def attention_model(batch, heads, seq, dim, causal, shared_qk, mask="",
                    dtype="f32", key_seq=None):
    """Attention of `seq` queries over `key_seq` keys (default: `seq`)."""
    t = "tensor<%dx%dx%dx%dx%s>" % (batch, heads, seq, dim, dtype)
    k = "tensor<%dx%dx%dx%dx%s>" % (batch, heads, key_seq or seq, dim, dtype)
    attrs = [a for a, on in (("causal = true", causal),
                             ("shared_qk", shared_qk)) if on]
    attrs = " {%s}" % ", ".join(attrs) if attrs else ""
    if shared_qk:
        return ("func.func @forward(%%qk: %s, %%v: %s) -> %s {\n"
                "  %%0 = attn.attention %%qk, %%qk, %%v%s : (%s, %s, %s) -> %s\n"
                "  return %%0 : %s\n}\n" % (t, t, t, attrs, t, t, t, t, t))
    return ("func.func @forward(%%q: %s, %%k: %s, %%v: %s) -> %s {\n"
            "  %%0 = attn.attention %%q, %%k, %%v%s : (%s, %s, %s) -> %s%s\n"
            "  return %%0 : %s\n}\n" % (t, k, k, t, attrs, t, k, k, t, mask,
                                         t))


def mib(n):
    return n / float(1 << 20)


def bench_attention(opts):
    flags = []
    lsh = opts.form == "lsh"
    if lsh:
        flags = ["--attention=lsh", "--lsh-hashes=%d" % opts.lsh_hashes,
                 "--lsh-bucket-size=%d" % opts.lsh_bucket_size,
                 "--lsh-hash=" + opts.lsh_hash]
    elif opts.form == "routed":
        flags = ["--attention=routed"]
        if opts.routed_clusters:
            flags.append("--routed-clusters=%d" % opts.routed_clusters)
        if opts.routed_window:
            flags.append("--routed-window=%d" % opts.routed_window)
    elif opts.form in ("dense", "sliding-window"):
        pass
    else:
        flags = ["--attention=sparse",
                 "--sparse-pattern=" + opts.form.split("-")[1],
                 "--sparse-block=%d" % opts.sparse_block]
        if opts.sparse_stride:
            flags.append("--sparse-stride=%d" % opts.sparse_stride)
        if opts.sparse_summary:
            flags.append("--sparse-summary=%d" % opts.sparse_summary)
    if opts.query_tile:
        flags.append("--query-tile=%d" % opts.query_tile)
    if opts.key_tile:
        flags.append("--key-tile=%d" % opts.key_tile)
    device = ()
    if opts.device == "cuda-emulator":
        # The GPU kernels on the CUDA emulator, which runs on one thread.
        flags.append("--target=cuda")
        device = ("--device=cuda-emulator",
                  "--check=" + (opts.check or "none"))
        opts.threads = 1
    print("%s attention, %s, batch %d, %d heads, head_dim %d, %s, "
          "%d threads on CPUs %s %s" %
          (opts.form, opts.dtype, opts.batch, opts.heads, opts.head_dim,
           "causal" if opts.causal else "non-causal",
           len(pinned(opts.threads)),
           ",".join(map(str, pinned(opts.threads))), " ".join(flags)))
    python = None if opts.no_peer else numpy_python()
    if python:
        _, core = sgemm_ceiling(python, opts.threads)
        print("ceiling: OpenBLAS sgemm 2048^3 (numpy, kernel %s, same CPUs "
              "and threads), run before every lcc call; peer: numpy + "
              "OpenBLAS f32 dense attention (up to --peer-up-to=%d tokens), "
              "run after it; 'of sgemm' and 'vs numpy' are medians of the "
              "calls' own ratios" % (core, opts.peer_up_to))
    else:
        print("no ceiling or peer: no python3 with numpy (apt install "
              "python3-numpy libopenblas0-pthread)" if not opts.no_peer
              else "no ceiling or peer (--no-peer)")
    print("| seq | compile s | ms/call (median) | min ms | peak MiB | "
          "arena MiB | GFLOP/s | sgemm GFLOP/s | of sgemm | numpy ms | "
          "vs numpy | stolen % |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for seq in opts.seq:
        with tempfile.TemporaryDirectory() as work:
            model = os.path.join(work, "attention.mlir")
            with open(model, "w") as f:
                mask = (sliding_window_mask(opts.window)
                        if opts.form == "sliding-window" else "")
                f.write(attention_model(opts.batch, opts.heads, seq,
                                        opts.head_dim, opts.causal, lsh, mask,
                                        opts.dtype))
            lcm = os.path.join(work, "attention.lcm")
            seconds = compile_model(model, lcm, flags)
            shape = "%d,%d,%d,%d" % (opts.batch, opts.heads, seq,
                                     opts.head_dim)
            inputs = []
            for name in ("qk", "v") if lsh else ("q", "k", "v"):
                path = os.path.join(work, name + ".npy")
                run([tool("lcc-testdata"), "--output=" + path,
                     "--shape=" + shape, "--seed=%d" % len(inputs),
                     "--dtype=" + opts.dtype])
                inputs.append(path)
            with_peer = python and seq <= opts.peer_up_to
            ceilings, calls, peers = interleaved(opts.repeat, [
                (lambda: sgemm_ceiling(python, opts.threads)[0])
                if python else None,
                lambda: with_stolen_share(
                    pinned(opts.threads),
                    lambda: report(lcm, inputs, None, 1, opts.threads, work,
                                   device)),
                (lambda: numpy_attention_ms(python, opts, seq, 1)[0])
                if with_peer else None])
            flops = 4.0 * opts.batch * opts.heads * seq * seq * opts.head_dim
            if opts.causal:
                flops /= 2
            times = [c["median_ms"] for c in calls]
            rates = [flops / (ms * 1e6) for ms in times]
            fraction = median([r / g for r, g in zip(rates, ceilings)])
            speedup = median([p / ms for ms, p in zip(times, peers)])
            stolen = [c["stolen"] for c in calls if c["stolen"] is not None]
            print("| %d | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s "
                  "| %s | %s | %s |" %
                  (seq, seconds, median(times), min(times),
                   mib(calls[-1]["peak_bytes"]),
                   mib(calls[-1]["arena_bytes"]),
                   flops / (median(times) * 1e6),
                   "%.1f" % median(ceilings) if ceilings else "-",
                   "%.2f" % fraction if ceilings else "-",
                   "%.1f" % median(peers) if peers else "-",
                   "%.2fx" % speedup if peers else "-",
                   "%.0f" % (100 * median(stolen)) if stolen else "-"))
            sys.stdout.flush()


def relative_types(batch, heads, segment, memory, dim):
    """The types of q, k, v, pos, u and w."""
    keys = segment + memory
    q = "tensor<%dx%dx%dx%dxf32>" % (batch, heads, segment, dim)
    k = "tensor<%dx%dx%dx%dxf32>" % (batch, heads, keys, dim)
    pos = "tensor<%dx%dx%dxf32>" % (heads, keys, dim)
    bias = "tensor<%dx%dxf32>" % (heads, dim)
    return [q, k, k, pos, bias, bias]


def relative_model(batch, heads, segment, memory, dim, clamp_len):
    q, k, _, pos, bias, _ = relative_types(batch, heads, segment, memory, dim)
    attrs = " {clamp_len = %d : i64}" % clamp_len if clamp_len else ""
    return ("func.func @forward(%%q: %s, %%k: %s, %%v: %s, %%pos: %s, "
            "%%u: %s, %%w: %s) -> %s {\n"
            "  %%0 = attn.relative_attention %%q, %%k, %%v, %%pos, %%u, %%w%s"
            " : (%s, %s, %s, %s, %s, %s) -> %s\n"
            "  return %%0 : %s\n}\n" % (q, k, k, pos, bias, bias, q, attrs,
                                         q, k, k, pos, bias, bias, q, q))


def span_model(batch, heads, segment, memory, dim, max_span, ramp,
               z_constant=None):
    """@forward(q, k, v, z) of one adaptive-span attention; with
    `z_constant`, z is that constant of the model instead of an input."""
    keys = segment + memory
    q = "tensor<%dx%dx%dx%dxf32>" % (batch, heads, segment, dim)
    k = "tensor<%dx%dx%dx%dxf32>" % (batch, heads, keys, dim)
    z = "tensor<%dxf32>" % heads
    if z_constant is None:
        args, z_def = "%%q: %s, %%k: %s, %%v: %s, %%z: %s" % (q, k, k, z), ""
    else:
        args = "%%q: %s, %%k: %s, %%v: %s" % (q, k, k)
        z_def = "  %%z = arith.constant dense<%r> : %s\n" % (z_constant, z)
    return ("func.func @forward(%s) -> %s {\n%s"
            "  %%0 = attn.adaptive_span_attention %%q, %%k, %%v, %%z "
            "{max_span = %d : i64, ramp = %d : i64, causal = true}"
            " : (%s, %s, %s, %s) -> %s\n"
            "  return %%0 : %s\n}\n" % (args, q, z_def, max_span, ramp,
                                         q, k, k, z, q, q))


def span_gradients_report(opts, memory, keys, z, work):
    """loss_gradients of one adaptive-span attention whose q, k and v are
    parameters and whose z is a constant: its forward and backward."""
    b, h, l, d = opts.batch, opts.heads, opts.segment, opts.head_dim
    q_t, k_t = ("tensor<%dx%dx%dx%dxf32>" % (b, h, n, d) for n in (l, keys))
    return gradients_report(
        as_loss(span_model(b, h, l, memory, d, keys, opts.ramp, z),
                [("q", q_t), ("k", k_t), ("v", k_t)],
                "tensor<%dx%dx%dxi32>" % (b, h, l)),
        (b, h, l), d, opts.repeat, opts.threads, work)


def bench_span(opts):
    b, h, l, d = opts.batch, opts.heads, opts.segment, opts.head_dim
    print("adaptive-span attention, f32, batch %d, %d heads, head_dim %d, "
          "segment %d, causal, ramp %d, max_span = the keys, %d threads on "
          "CPUs %s" % (b, h, d, l, opts.ramp, len(pinned(opts.threads)),
                       ",".join(map(str, pinned(opts.threads)))))
    print("every head at the same z (span = z * max_span); beside it: dense "
          "attention of the same queries and keys without a mask")
    if opts.backward:
        print("--backward: forward and backward (loss_gradients of a "
              "cross-entropy over the result; q, k, v parameters, z fixed "
              "in the model), and dense attention's forward and backward")
    print("| memory | keys | z | span | ms/segment (median) | min ms | "
          "peak MiB | vs z = 1 | dense ms | vs dense |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for memory in opts.memory:
        keys = l + memory
        with tempfile.TemporaryDirectory() as work:
            files = {}
            for seed, (name, shape) in enumerate(
                    [("q", (b, h, l, d)), ("k", (b, h, keys, d)),
                     ("v", (b, h, keys, d))]):
                files[name] = os.path.join(work, name + ".npy")
                run([tool("lcc-testdata"), "--output=" + files[name],
                     "--shape=" + ",".join(map(str, shape)),
                     "--seed=%d" % seed])
            model = os.path.join(work, "span.mlir")
            with open(model, "w") as f:
                f.write(span_model(b, h, l, memory, d, keys, opts.ramp))
            lcm = os.path.join(work, "span.lcm")
            compile_model(model, lcm)
            dense_model = os.path.join(work, "dense.mlir")
            with open(dense_model, "w") as f:
                f.write(attention_model(b, h, l, d, False, False,
                                        key_seq=keys))
            dense_lcm = os.path.join(work, "dense.lcm")
            compile_model(dense_model, dense_lcm)
            if opts.backward:
                q_t, k_t = ("tensor<%dx%dx%dx%dxf32>" % (b, h, n, d)
                            for n in (l, keys))
                dense = gradients_report(
                    as_loss(attention_model(b, h, l, d, False, False,
                                            key_seq=keys),
                            [("q", q_t), ("k", k_t), ("v", k_t)],
                            "tensor<%dx%dx%dxi32>" % (b, h, l)),
                    (b, h, l), d, opts.repeat, opts.threads, work)
            else:
                dense = report(dense_lcm,
                               [files["q"], files["k"], files["v"]], None,
                               opts.repeat, opts.threads, work)
            rows = []
            for z in opts.z:
                if opts.backward:
                    rows.append((z, span_gradients_report(
                        opts, memory, keys, z, work)))
                    continue
                zfile = os.path.join(work, "z.npy")
                run([tool("lcc-testdata"), "--output=" + zfile,
                     "--shape=%d" % h, "--fill=%g" % z])
                rows.append((z, report(lcm, [files["q"], files["k"],
                                             files["v"], zfile],
                                       None, opts.repeat, opts.threads,
                                       work)))
            whole = dict(rows).get(1.0)
            for z, r in rows:
                print("| %d | %d | %g | %g | %.1f | %.1f | %.1f | %s | %.1f | "
                      "%.2fx |" %
                      (memory, keys, z, z * keys, r["median_ms"], r["min_ms"],
                       mib(r["peak_bytes"]),
                       "%.2fx" % (r["median_ms"] / whole["median_ms"])
                       if whole else "-",
                       dense["median_ms"],
                       r["median_ms"] / dense["median_ms"]))
                sys.stdout.flush()


def as_loss(forward_text, operands, labels):
    """A @forward(operands...) -> tensor<B x H x L x D> model as @loss(labels)
    whose operands are parameters and whose loss is the cross-entropy of
    the attention's rows (D classes): its gradients are every operand's."""
    head, body = forward_text.split("{\n", 1)
    result = head.rsplit("->", 1)[1].strip()
    lines = ["func.func @loss(%%labels: %s) -> tensor<f32> {" % labels]
    for name, type_ in operands:
        lines.append('  %%%s = attn.param "%s" : %s' % (name, name, type_))
    lines.append(body.split("  return")[0].rstrip())
    lines.append("  %%l = attn.softmax_cross_entropy %%0, %%labels : (%s, %s) "
                 "-> tensor<f32>" % (result, labels))
    lines.append("  return %l : tensor<f32>\n}\n")
    return "\n".join(lines)


def gradients_report(text, labels_shape, classes, repeat, threads, work):
    """Compiles a @loss(labels) model with --train --emit-gradients and
    times loss_gradients (forward and backward): lcc-run's report."""
    source = os.path.join(work, "loss.mlir")
    with open(source, "w") as f:
        f.write(text)
    lcm = os.path.join(work, "loss.lcm")
    compile_model(source, lcm, ["--train", "--emit-gradients"])
    params = os.path.join(work, "loss-weights.safetensors")
    labels = os.path.join(work, "labels.npy")
    run([tool("lcc-run"), lcm, "--init-params=" + params, "--seed=1"])
    run([tool("lcc-testdata"), "--output=" + labels,
         "--shape=" + ",".join(map(str, labels_shape)), "--dtype=i32",
         "--uniform=0,%d" % classes, "--seed=7"])
    args = [tool("lcc-run"), lcm, "--function=loss_gradients",
            "--report=json", "--warmup=1", "--repeat=%d" % repeat,
            "--params=" + params, "--input=" + labels,
            "--output-dir=" + work]
    if threads:
        args.append("--threads=%d" % threads)
    return json.loads(run_pinned(args, threads))


def bench_relative(opts):
    print("relative (Transformer-XL) attention, f32, batch %d, %d heads, "
          "head_dim %d, segment %d, %d threads on CPUs %s" %
          (opts.batch, opts.heads, opts.head_dim, opts.segment,
           len(pinned(opts.threads)), ",".join(map(str, pinned(opts.threads)))))
    python = None if opts.no_peer or opts.backward else numpy_python()
    if opts.backward:
        print("--backward: forward and backward (loss_gradients of a "
              "cross-entropy over the result; every operand a parameter), "
              "beside the forward alone and dense attention's forward and "
              "backward over the same keys")
        print("| memory | keys | fwd+bwd ms (median) | peak MiB | vs forward | "
              "dense fwd+bwd ms | vs dense |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
    else:
        print("beside it: dense attention of the same queries and keys "
              "without a mask (the content term alone); peer: numpy + "
              "OpenBLAS Transformer-XL attention as kimiyoung/transformer-xl "
              "computes it (full score matrices, _rel_shift)" if python else
              "beside it: dense attention of the same queries and keys; no "
              "peer")
        print("| memory | keys | ms/segment (median) | min ms | peak MiB | "
              "dense ms | vs dense | numpy ms | vs numpy |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    b, h, l, d = opts.batch, opts.heads, opts.segment, opts.head_dim
    for memory in opts.memory:
        keys = l + memory
        with tempfile.TemporaryDirectory() as work:
            shapes = {"q": (b, h, l, d), "k": (b, h, keys, d),
                      "v": (b, h, keys, d), "pos": (h, keys, d),
                      "u": (h, d), "w": (h, d)}
            files = {}
            for seed, (name, shape) in enumerate(shapes.items()):
                files[name] = os.path.join(work, name + ".npy")
                run([tool("lcc-testdata"), "--output=" + files[name],
                     "--shape=" + ",".join(map(str, shape)),
                     "--seed=%d" % seed])
            timings = {}
            for name, text, inputs in (
                    ("relative", relative_model(b, h, l, memory, d,
                                                opts.clamp_len),
                     ["q", "k", "v", "pos", "u", "w"]),
                    # The same queries and keys, no mask: the content term.
                    ("dense", attention_model(b, h, l, d, False, False,
                                              key_seq=keys),
                     ["q", "k", "v"])):
                model = os.path.join(work, name + ".mlir")
                with open(model, "w") as f:
                    f.write(text)
                lcm = os.path.join(work, name + ".lcm")
                compile_model(model, lcm)
                timings[name] = report(lcm, [files[i] for i in inputs], None,
                                       opts.repeat, opts.threads, work)
            r, dense = timings["relative"], timings["dense"]
            if opts.backward:
                labels = "tensor<%dx%dx%dxi32>" % (b, h, l)
                types = relative_types(b, h, l, memory, d)
                names = ["q", "k", "v", "pos", "u", "w"]
                both = gradients_report(
                    as_loss(relative_model(b, h, l, memory, d,
                                           opts.clamp_len),
                            zip(names, types), labels),
                    (b, h, l), d, opts.repeat, opts.threads, work)
                dense_both = gradients_report(
                    as_loss(attention_model(b, h, l, d, False, False,
                                            key_seq=keys),
                            zip(names[:3], types[:3]), labels),
                    (b, h, l), d, opts.repeat, opts.threads, work)
                print("| %d | %d | %.1f | %.1f | %.2fx | %.1f | %.2fx |"
                      % (memory, keys, both["median_ms"],
                         mib(both["peak_bytes"]),
                         both["median_ms"] / r["median_ms"],
                         dense_both["median_ms"],
                         both["median_ms"] / dense_both["median_ms"]))
                sys.stdout.flush()
                continue
            peer = numpy_relative_ms(python, opts, memory) if python else None
            print("| %d | %d | %.1f | %.1f | %.1f | %.1f | %.2fx | %s | %s |"
                  % (memory, keys, r["median_ms"], r["min_ms"],
                     mib(r["peak_bytes"]), dense["median_ms"],
                     r["median_ms"] / dense["median_ms"],
                     "%.1f" % peer[0] if peer else "-",
                     "%.2fx" % (peer[0] / r["median_ms"]) if peer else "-"))
            sys.stdout.flush()

def tiles_visited(remarks):
    """The percentage of (query, key) tile pairs lcc's remark says the
    mask visits."""
    match = re.search(r"mask visits \d+ of \d+ \(query, key\) tile pairs "
                      r"\(([0-9.]+)%\)",
                      remarks)
    return match.group(1) + "%" if match else "100%"


def bench_masks(opts):
    forms = [("dense", ""), ("alibi", alibi_score(opts.heads)),
             ("sliding-window %d" % opts.window,
              sliding_window_mask(opts.window)),
             ("longformer %d + %d" % (opts.window, opts.glob),
              longformer_mask(opts.window, opts.glob))]
    print("masks, f32, batch 1, %d heads, head_dim %d, %s, %d threads" %
          (opts.heads, opts.head_dim,
           "causal" if opts.causal else "non-causal",
           opts.threads or os.cpu_count()))
    print("| seq | form | compile s | ms/call | peak MiB | tile pairs "
          "visited | vs dense |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for seq in opts.seq:
        dense_ms = None
        with tempfile.TemporaryDirectory() as work:
            shape = "1,%d,%d,%d" % (opts.heads, seq, opts.head_dim)
            inputs = []
            for name in ("q", "k", "v"):
                path = os.path.join(work, name + ".npy")
                run([tool("lcc-testdata"), "--output=" + path,
                     "--shape=" + shape, "--seed=%d" % len(inputs),
                     "--dtype=" + opts.dtype])
                inputs.append(path)
            for name, region in forms:
                unmasked = name in ("dense", "alibi")
                if unmasked and opts.dense_up_to and seq > opts.dense_up_to:
                    print("| %d | %s | - | not run (--dense-up-to=%d) | - | "
                          "- | - |" % (seq, name, opts.dense_up_to))
                    continue
                model = os.path.join(work, "attention.mlir")
                with open(model, "w") as f:
                    f.write(attention_model(1, opts.heads, seq, opts.head_dim,
                                            opts.causal, False, region))
                lcm = os.path.join(work, "attention.lcm")
                seconds, remarks = compile_model_with_remarks(model, lcm)
                r = report(lcm, inputs, None, opts.repeat, opts.threads, work)
                ms = r["mean_ms"]
                if name == "dense":
                    dense_ms = ms
                    versus = "1.00x"
                elif dense_ms is None:
                    versus = "-"
                elif name == "alibi":
                    versus = "%+.1f%%" % (100.0 * (ms / dense_ms - 1))
                else:
                    versus = "%.2fx faster" % (dense_ms / ms)
                print("| %d | %s | %.2f | %.1f | %.1f | %s | %s |" %
                      (seq, name, seconds, ms, mib(r["peak_bytes"]),
                       tiles_visited(remarks), versus))
                sys.stdout.flush()


def bench_models(opts):
    models_dir = os.path.join(SOURCE, "models")
    print("| model | compile s | dispatches | arena MiB | peak MiB | "
          "ms/call |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in sorted(os.listdir(models_dir)):
        if not name.endswith(".mlir"):
            continue
        with tempfile.TemporaryDirectory() as work:
            lcm = os.path.join(work, "model.lcm")
            seconds = compile_model(os.path.join(models_dir, name), lcm)
            params = os.path.join(work, "weights.safetensors")
            run([tool("lcc-run"), lcm, "--init-params=" + params, "--seed=1"])
            tokens = os.path.join(work, "tokens.npy")
            shape, vocab = token_shape(os.path.join(models_dir, name))
            run([tool("lcc-testdata"), "--output=" + tokens,
                 "--shape=" + shape, "--dtype=i32",
                 "--uniform=0,%d" % vocab, "--seed=2"])
            # Further f32 inputs (Transformer-XL's memories) start at zero.
            inputs = [tokens]
            for i, state in enumerate(state_shapes(
                    os.path.join(models_dir, name))):
                inputs.append(os.path.join(work, "state%d.npy" % i))
                run([tool("lcc-testdata"), "--output=" + inputs[-1],
                     "--shape=" + state, "--fill=0"])
            r = report(lcm, inputs, params, opts.repeat, opts.threads, work)
            dispatches = sum(1 for c in r["commands"]
                             if c["kind"] == "dispatch")
            print("| %s | %.2f | %d | %.1f | %.1f | %.1f |" %
                  (name[:-5], seconds, dispatches, mib(r["arena_bytes"]),
                   mib(r["peak_bytes"]), r["mean_ms"]))
            sys.stdout.flush()


def token_shape(model):
    """The [batch, seq] of a bundled model's token input and its vocabulary
    (rows of its embedding table), from its source."""
    with open(model) as f:
        text = f.read()
    match = re.search(r"@forward\(%\w+: tensor<(\d+)x(\d+)xi32>", text)
    vocab = re.search(r'"embed.tokens" : tensor<(\d+)x', text)
    if not match or not vocab:
        sys.exit("lcc-bench: error: %s does not start with token ids "
                 "tensor<BxSxi32> into an \"embed.tokens\" table" % model)
    return "%s,%s" % match.groups(), int(vocab.group(1))


def state_shapes(model):
    """The shapes ("AxB" as "A,B") of @forward's f32 arguments after its
    tokens: memories carried between segments."""
    with open(model) as f:
        text = f.read()
    signature = re.search(r"func\.func @forward\(([^)]*)\)", text).group(1)
    return [shape.replace("x", ",") for shape in
            re.findall(r"tensor<([0-9x]+)xf32>", signature)]


def reformer_variant(seq, d_model, d_ff):
    """models/reformer-tiny.mlir with another sequence length, d_model and
    d_ff (4 heads of d_model / 4), by replacing its sizes in the text."""
    with open(os.path.join(SOURCE, "models", "reformer-tiny.mlir")) as f:
        text = f.read()
    head = d_model // 4
    for old, new in [("1x1024x256xf32", "1x<S>x<LOGITS>"),
                     ("1x1024x128", "1x<S>x<D>"),
                     ("1x4x1024x32", "1x4x<S>x<H>"),
                     ("1x1024xi32", "1x<S>xi32"),
                     ("128x128", "<D>x<D>"), ("128x512", "<D>x<F>"),
                     ("512x128", "<F>x<D>"), ("tensor<512xf32>", "tensor<<F>xf32>"),
                     ("tensor<128xf32>", "tensor<<D>xf32>"),
                     ("256x128", "256x<D>"), ("128x256", "<D>x256")]:
        text = text.replace(old, new)
    for key, value in [("<LOGITS>", "256xf32"), ("<S>", str(seq)),
                       ("<D>", str(d_model)), ("<F>", str(d_ff)),
                       ("<H>", str(head))]:
        text = text.replace(key, value)
    return text


def window_mask(window):
    """The lines of a mask region that shows each query the `window` keys
    up to it (none when `window` is 0)."""
    if not window:
        return []
    return ["      mask {",
            "      ^bb0(%rb: index, %rh: index, %ri: index, %rj: index):",
            "        %rd = arith.subi %ri, %rj : index",
            "        %%rw = arith.constant %d : index" % window,
            "        %near = arith.cmpi ult, %rd, %rw : index",
            "        attn.yield %near : i1",
            "      }"]


def distance_form_lines(form, prefix, heads, seq, head_dim, hx, window):
    """The lines of a relative (Transformer-XL: learned encodings of every
    distance, the content and position biases) or adaptive-span (a learned
    span per head up to `window`, ramp 32) causal attention of %q, %k, %v."""
    if form == "relative":
        pos = "tensor<%dx%dx%dxf32>" % (heads, seq, head_dim)
        bias = "tensor<%dx%dxf32>" % (heads, head_dim)
        return [
            '      %%pos = attn.param "%s.attn.pos" : %s' % (prefix, pos),
            '      %%u = attn.param "%s.attn.r_w_bias" : %s' % (prefix, bias),
            '      %%w = attn.param "%s.attn.r_r_bias" : %s' % (prefix, bias),
            "      %%o = attn.relative_attention %%q, %%k, %%v, %%pos, %%u, "
            "%%w : (%s, %s, %s, %s, %s, %s) -> %s" % (hx, hx, hx, pos, bias,
                                                     bias, hx)]
    z = "tensor<%dxf32>" % heads
    return [
        '      %%z = attn.param "%s.attn.span" : %s' % (prefix, z),
        "      %%o = attn.adaptive_span_attention %%q, %%k, %%v, %%z "
        "{max_span = %d : i64, ramp = 32 : i64, causal = true} : "
        "(%s, %s, %s, %s) -> %s" % (window, hx, hx, hx, z, hx)]


# residual_stack_model's heads and vocabulary unless a workload sets them;
# lcc-bench depth gives its peer the same.
STACK_HEADS, STACK_VOCAB = 4, 256


def residual_stack_model(layers, seq, d_model, d_ff, activation,
                         heads=STACK_HEADS, vocab=STACK_VOCAB,
                         shared_qk=True, forward=False, batch=1,
                         window=0, distance_form=None):
    """A pre-norm decoder of `layers` residual (attention, feed-forward)
    pairs: shared-QK causal attention (what LSH hashes; with `shared_qk`
    false, queries and keys of their own), a feed-forward of `activation`
    (gelu or relu), a final norm and the vocabulary head, with @loss the
    mean next-token cross-entropy (with `forward`, @forward returning the
    logits). lcc --reversible makes it the Reformer's reversible stack.
    Each call takes `batch` rows. With `window`, the attention has a mask
    region: each query sees the `window` keys up to it. With
    `distance_form` ("relative" or "adaptive-span"; queries and keys of
    their own), the attention is that form (distance_form_lines)."""
    d, f, s, h = d_model, d_ff, seq, d_model // heads
    b = batch
    x = "tensor<%dx%dx%dxf32>" % (b, s, d)
    hx = "tensor<%dx%dx%dx%dxf32>" % (b, heads, s, h)
    logits = "tensor<%dx%dx%dxf32>" % (b, s, vocab)
    tokens = "tensor<%dx%dxi32>" % (b, s)
    signature = ("@forward(%%tokens: %s) -> %s" % (tokens, logits)
                 if forward else
                 "@loss(%%tokens: %s, %%labels: %s) -> tensor<f32>"
                 % (tokens, tokens))
    projections = ["wqk", "wv", "wo"] if shared_qk else ["wq", "wk", "wv",
                                                         "wo"]
    operands = ("query %wqk, value %wv, output %wo" if shared_qk else
                "query %wq, key %wk, value %wv, output %wo")
    arguments = ("%%qk: %s, %%v: %s" % (hx, hx) if shared_qk else
                 "%%q: %s, %%k: %s, %%v: %s" % (hx, hx, hx))
    attend = ("%%o = attn.attention %%qk, %%qk, %%v {causal = true, "
              "shared_qk} : (%s, %s, %s) -> %s" % (hx, hx, hx, hx)
              if shared_qk else
              "%%o = attn.attention %%q, %%k, %%v {causal = true} : "
              "(%s, %s, %s) -> %s" % (hx, hx, hx, hx))
    lines = [
        "func.func %s {" % signature,
        '  %%table = attn.param "embed.tokens" : tensor<%dx%dxf32>' % (vocab, d),
        "  %%x0 = attn.embedding %%tokens, %%table : (%s, "
        "tensor<%dx%dxf32>) -> %s" % (tokens, vocab, d, x)]

    def norm(prefix):
        return [
            '    %%g = attn.param "%s.gamma" : tensor<%dxf32>' % (prefix, d),
            '    %%b = attn.param "%s.beta" : tensor<%dxf32>' % (prefix, d),
            "    %%n = attn.layer_norm %%a, %%g, %%b : (%s, tensor<%dxf32>, "
            "tensor<%dxf32>) -> %s" % (x, d, d, x)]

    value = "%x0"
    for l in range(layers):
        p = "layers.%d" % l
        lines += ["  %%a%d = attn.residual %s : %s {" % (l, value, x),
                  "  ^bb0(%%a: %s):" % x] + norm(p + ".attn_norm")
        for w in projections:
            lines.append('    %%%s = attn.param "%s.attn.%s" : '
                         'tensor<%dx%dxf32>' % (w, p, w, d, d))
        weights = ", ".join(["tensor<%dx%dxf32>" % (d, d)] * len(projections))
        lines += [
            "    %%h = attn.multi_head_attention %%n, %s {heads = %d : i64} : "
            "(%s, %s) -> %s {" % (operands, heads, x, weights, x),
            "    ^bb0(%s):" % arguments] + (
                distance_form_lines(distance_form, p, heads, s, h, hx, window)
                if distance_form else
                ["      " + attend] + window_mask(window)) + [
            "      attn.yield %%o : %s" % hx,
            "    }",
            "    attn.yield %%h : %s" % x,
            "  }",
            "  %%f%d = attn.residual %%a%d : %s {" % (l, l, x),
            "  ^bb0(%%a: %s):" % x] + norm(p + ".ff_norm") + [
            '    %%w1 = attn.param "%s.ff.w1" : tensor<%dx%dxf32>' % (p, d, f),
            '    %%b1 = attn.param "%s.ff.b1" : tensor<%dxf32>' % (p, f),
            '    %%w2 = attn.param "%s.ff.w2" : tensor<%dx%dxf32>' % (p, f, d),
            '    %%b2 = attn.param "%s.ff.b2" : tensor<%dxf32>' % (p, d),
            "    %%h = attn.feed_forward %s %%n, %%w1, %%b1, %%w2, %%b2 : "
            "(%s, tensor<%dx%dxf32>, tensor<%dxf32>, tensor<%dx%dxf32>, "
            "tensor<%dxf32>) -> %s" % (activation, x, d, f, f, f, d, d, x),
            "    attn.yield %%h : %s" % x,
            "  }"]
        value = "%%f%d" % l
    lines += [
        '  %%g = attn.param "final_norm.gamma" : tensor<%dxf32>' % d,
        '  %%b = attn.param "final_norm.beta" : tensor<%dxf32>' % d,
        "  %%n = attn.layer_norm %s, %%g, %%b : (%s, tensor<%dxf32>, "
        "tensor<%dxf32>) -> %s" % (value, x, d, d, x),
        '  %%w = attn.param "lm_head.weight" : tensor<%dx%dxf32>' % (d, vocab),
        "  %%logits = attn.linear %%n, %%w : (%s, tensor<%dx%dxf32>) -> %s"
        % (x, d, vocab, logits)]
    if forward:
        lines += ["  return %%logits : %s" % logits, "}"]
    else:
        lines += [
            "  %%l = attn.softmax_cross_entropy %%logits, %%labels : (%s, "
            "%s) -> tensor<f32>" % (logits, tokens),
            "  return %l : tensor<f32>",
            "}"]
    return "\n".join(lines) + "\n"


def train_step_report(source_text, seq, flags, repeat, threads, pin=False,
                      warm=None):
    """Compiles a @loss(tokens, labels) model with --train and `flags` and
    times its train_step on random tokens (with `pin`, on the first
    `threads` CPUs): (compile s, lcc-run's report). The compile is cold
    (an empty kernel cache); with `warm` (a list), the time of compiling
    it again from the kernels the first compile cached is appended to it."""
    seconds, reports, _ = timed_train_step(source_text, seq, flags, repeat,
                                           threads, pin, warm)
    return seconds, reports[0]


def timed_train_step(source_text, seq, flags, repeat, threads, pin=False,
                     warm=None, rounds=1, alongside=None):
    """train_step_report's compile, then `rounds` runs of the step, each
    followed by a call of `alongside` (a peer measured in the same
    minutes, or None): (compile s, lcc-run's reports, alongside's
    results)."""
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, "model.mlir")
        with open(source, "w") as f:
            f.write(source_text)
        lcm = os.path.join(work, "model.lcm")
        cache = os.path.join(work, "kernel-cache")
        train_flags = ["--train", "--optimizer=adam"] + flags
        seconds = compile_model(source, lcm, train_flags, cache)
        if warm is not None:
            warm.append(compile_model(source, lcm, train_flags, cache))
        params = os.path.join(work, "weights.safetensors")
        run([tool("lcc-run"), lcm, "--init-params=" + params, "--seed=1"])
        inputs = []
        for i, name in enumerate(["tokens", "labels"]):
            inputs.append(os.path.join(work, name + ".npy"))
            run([tool("lcc-testdata"), "--output=" + inputs[-1],
                 "--shape=1,%d" % seq, "--dtype=i32", "--uniform=0,256",
                 "--seed=%d" % (2 + i)])
        args = [tool("lcc-run"), lcm, "--function=train_step",
                "--report=json", "--warmup=1", "--repeat=%d" % repeat,
                "--params=" + params, "--output-dir=" + work]
        args += ["--input=" + i for i in inputs]
        if threads:
            args.append("--threads=%d" % threads)
        reports, others = interleaved(rounds, [
            lambda: json.loads(run_pinned(args, threads) if pin
                               else run(args)), alongside])
        return seconds, reports, others


def generate_report(lcm, params, prompt, new_tokens, threads, recompute):
    """lcc-generate's JSON report for `new_tokens` greedy tokens after the
    prompt file `prompt`, pinned to the first `threads` CPUs."""
    args = [tool("lcc-generate"), lcm, "--params=" + params,
            "--prompt-tokens=" + prompt, "--max-new-tokens=%d" % new_tokens,
            "--report=json", "--threads=%d" % threads]
    if recompute:
        args.append("--recompute")
    return json.loads(run_pinned(args, threads))


DECODE_FORMS = {"dense": [], "sparse": ["--attention=sparse"],
                "lsh": ["--attention=lsh"],
                # The bundled model, generated segment by segment through
                # its memories: a prefill per segment, a step per token.
                "transformer-xl": None}


def bench_decode(opts):
    """Generation by form and cache length: prefill, then each new token
    through the cached decode step, against recomputing the sequence per
    token (up to --recompute-up-to) and a torch transcription's cached
    generation (dense and strided sparse up to --peer-up-to; LSH as
    Hugging Face's cached Reformer steps; Transformer-XL one token over key
    and value caches); the rounds interleaved, medians."""
    torch = None if opts.no_peer else torch_python()
    print("| form | seq (cache) | prefill ms | ms/token cached | tokens/s | "
          "ms/token recomputed | recomputed / cached | peak MiB cached | "
          "torch prefill ms | torch ms/token | lcc / torch per token |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for form in opts.forms:
        if form not in DECODE_FORMS:
            sys.exit("lcc-bench: error: unknown decode form '%s'; expected "
                     "one of %s" % (form, ", ".join(DECODE_FORMS)))
        for seq in opts.seq:
            bench_decode_row(opts, form, seq, torch)


def sparse_stride(seq):
    """lcc's default sparse stride: the power of two nearest sqrt(seq)."""
    root = round(seq ** 0.5)
    power = 1
    while power * 2 <= root:
        power *= 2
    return power if root - power <= power * 2 - root else power * 2


def bench_decode_row(opts, form, seq, torch):
    """One row of bench_decode: `form`'s model at `seq` positions."""
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, "model.mlir")
        lcm = os.path.join(work, "model.lcm")
        if DECODE_FORMS[form] is None:
            compile_model(os.path.join(SOURCE, "models", form + "-tiny.mlir"),
                          lcm, ["--decode"])
        else:
            with open(source, "w") as f:
                f.write(residual_stack_model(
                    opts.layers, seq, opts.d_model, opts.d_ff, "gelu",
                    heads=opts.heads, shared_qk=form == "lsh", forward=True))
            flags = DECODE_FORMS[form]
            if form == "sparse":  # strided, the stride the peer takes too
                flags = flags + ["--sparse-pattern=strided",
                                 "--sparse-stride=%d" % sparse_stride(seq)]
            compile_model(source, lcm, ["--decode"] + flags)
        params = os.path.join(work, "weights.safetensors")
        run([tool("lcc-run"), lcm, "--init-params=" + params, "--seed=1"])
        prompt = os.path.join(work, "prompt.npy")
        length = seq - opts.new_tokens - 1
        run([tool("lcc-testdata"), "--output=" + prompt,
             "--shape=1,%d" % length, "--dtype=i32", "--uniform=0,256",
             "--seed=2"])
        recompute = seq <= opts.recompute_up_to
        # The dense and sparse peers' prefill builds the seq x seq scores;
        # the LSH and Transformer-XL peers' run at any length.
        peer_runs = torch and (form not in ("dense", "sparse") or
                               seq <= opts.peer_up_to)
        cached, recomputed, peer = [], [], []
        for _ in range(opts.repeat):
            cached.append(generate_report(lcm, params, prompt,
                                          opts.new_tokens, opts.threads,
                                          False))
            if recompute:
                recomputed.append(generate_report(
                    lcm, params, prompt, opts.recompute_tokens, opts.threads,
                    True))
            if peer_runs:
                peer.append(torch_decode_ms(
                    torch, opts, seq, length, form,
                    sparse_stride(seq) if form == "sparse" else 0))
        prefill = median([r["prefill_ms"] for r in cached])
        step = median([r["ms_per_token"] for r in cached])
        row = "| %s | %d | %.1f | %.3f | %.0f |" % (form, seq, prefill, step,
                                                  1e3 / step)
        if recomputed:
            again = median([r["ms_per_token"] for r in recomputed])
            row += " %.1f | %.0fx |" % (again, again / step)
        else:
            row += " - | - |"
        row += " %.1f |" % mib(max(r["peak_bytes"] for r in cached))
        if peer:
            peer_prefill = median([p[0] for p in peer])
            peer_step = median([p[1] for p in peer])
            row += " %.1f | %.3f | %.2f |" % (peer_prefill, peer_step,
                                              step / peer_step)
        else:
            row += " - | - | - |"
        print(row)
        sys.stdout.flush()


def form_flags(form, opts):
    if form == "lsh":
        return ["--attention=lsh", "--lsh-hashes=%d" % opts.lsh_hashes,
                "--lsh-bucket-size=%d" % opts.lsh_bucket_size]
    if form != "dense":
        sys.exit("lcc-bench: error: unknown train form '%s'; expected "
                 "dense or lsh" % form)
    return []


def stack_flags(opts, reversible, ff_chunks):
    """lcc's flags for residual_stack_model: the attention form, reversible
    blocks, `ff_chunks` feed-forward chunks and --attention-chunks."""
    flags = form_flags(opts.form, opts)
    if reversible:
        flags.append("--reversible")
    if ff_chunks:
        flags.append("--ff-chunks=%d" % ff_chunks)
    if opts.attention_chunks:
        flags.append("--attention-chunks=%d" % opts.attention_chunks)
    return flags


def bench_depth(opts):
    """The train step by depth, plain and reversible; with --form=lsh, the
    torch transcription of reformer-pytorch's step alongside, round by
    round, and lcc's time over the peer's per round (median)."""
    python = (None if opts.no_peer or opts.form != "lsh" else
              torch_python())
    print("train step of residual_stack_model(L, %d, %d, %d, %s), lcc %s; "
          "%d thread(s); %d round(s) of %d steps; peer: %s" % (
              opts.seq, opts.d_model, opts.d_ff, opts.activation,
              " ".join(stack_flags(opts, True, opts.ff_chunks)),
              len(pinned(opts.threads)), opts.rounds, opts.repeat,
              "reformer-pytorch's train step transcribed to torch (Adam), "
              "pinned as lcc" if python else
              "none (%s)" % ("--no-peer" if opts.no_peer else
                             "--form is not lsh" if opts.form != "lsh"
                             else "no python3 with torch")))
    print("| layers | variant | compile s (cold) | compile s (warm) | "
          "ms/step | peak MiB | MiB/layer over previous | peer ms/step | "
          "peer peak MiB | lcc / peer |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    previous = {}
    for layers in opts.layers:
        for variant in ["plain", "reversible"]:
            reversible = variant == "reversible"
            flags = stack_flags(opts, reversible, opts.ff_chunks)
            text = residual_stack_model(layers, opts.seq, opts.d_model,
                                        opts.d_ff, opts.activation)
            warm = []
            peer = (lambda: torch_reformer_step(
                python, opts, layers, reversible, STACK_HEADS,
                STACK_VOCAB)) if python else None
            seconds, reports, peers = timed_train_step(
                text, opts.seq, flags, opts.repeat, opts.threads, pin=True,
                warm=warm, rounds=opts.rounds, alongside=peer)
            step = median([r["mean_ms"] for r in reports])
            peak = mib(max(r["peak_bytes"] for r in reports))
            growth = ""
            if variant in previous:
                last_layers, last_peak = previous[variant]
                growth = "%.1f" % ((peak - last_peak) / (layers - last_layers))
            previous[variant] = (layers, peak)
            peer_cells = "- | - | -"
            if peers:
                peer_cells = "%.0f | %.1f | %.2f" % (
                    median([p[0] for p in peers]), max(p[1] for p in peers),
                    median([r["mean_ms"] / p[0]
                            for r, p in zip(reports, peers)]))
            print("| %d | %s | %.1f | %.1f | %.0f | %.1f | %s | %s |" %
                  (layers, variant, seconds, warm[0], step, peak, growth,
                   peer_cells))
            sys.stdout.flush()


def bench_ff_chunks(opts):
    print("| ff-chunks | d_ff | seq | compile s | ms/step | peak MiB |")
    print("|---:|---:|---:|---:|---:|---:|")
    for chunks in opts.chunks:
        flags = stack_flags(opts, opts.reversible, chunks)
        text = residual_stack_model(opts.layers, opts.seq, opts.d_model,
                                    opts.d_ff, opts.activation)
        seconds, r = train_step_report(text, opts.seq, flags, opts.repeat,
                                       opts.threads)
        print("| %d | %d | %d | %.1f | %.0f | %.1f |" %
              (chunks, opts.d_ff, opts.seq, seconds, r["mean_ms"],
               mib(r["peak_bytes"])))
        sys.stdout.flush()


def model_op_of(command):
    """A command's model op: its name without the function and the index
    lcc numbers commands with ("train_step_970_layers.0.ff" ->
    "layers.0.ff"); commands of no named op (the optimizer's updates,
    copies of results) by kind."""
    match = re.match(r"^[a-z_]+?_[0-9]+_(.+)$", command["name"])
    if match:
        return match.group(1)
    return "(copies)" if command["kind"] == "copy" else "(other dispatches)"


def bench_profile(opts):
    flags = stack_flags(opts, not opts.plain, opts.ff_chunks)
    text = residual_stack_model(opts.layers, opts.seq, opts.d_model,
                                opts.d_ff, opts.activation)
    python = None if opts.no_peer else numpy_python()
    rates = [sgemm_ceiling(python, opts.threads)[0]] if python else []
    seconds, r = train_step_report(text, opts.seq, flags, opts.repeat,
                                   opts.threads, pin=True)
    if python:
        rates.append(sgemm_ceiling(python, opts.threads)[0])
    ceiling = sum(rates) / len(rates) if rates else None
    print("train_step of %d layers, seq %d, d_model %d, d_ff %d, %s; lcc %s; "
          "%d thread(s) on CPUs %s; compiled in %.1f s; %.0f ms per step "
          "(mean of %d), peak %.1f MiB" %
          (opts.layers, opts.seq, opts.d_model, opts.d_ff, opts.activation,
           " ".join(flags), len(pinned(opts.threads)),
           ",".join(map(str, pinned(opts.threads))), seconds, r["mean_ms"],
           opts.repeat, mib(r["peak_bytes"])))
    print("ceiling: OpenBLAS sgemm 2048^3 %s" %
          ("%.1f GFLOP/s (mean of %s)" %
           (ceiling, " and ".join("%.1f" % x for x in rates))
           if ceiling else "not measured (%s)" %
           ("--no-peer" if opts.no_peer else "no python3 with numpy")))
    groups = {}
    for command in r["commands"]:
        op = model_op_of(command)
        key = (op, "" if op.startswith("(") else command.get("location", ""))
        g = groups.setdefault(key, [0, 0.0, 0.0])
        g[0] += 1
        g[1] += command["mean_ms"]
        g[2] += command.get("flops", 0.0)
    total = sum(g[1] for g in groups.values())
    print("| model op | source | commands | ms | share | GFLOP | GFLOP/s | "
          "of sgemm |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for (op, location), (count, ms, flops) in sorted(
            groups.items(), key=lambda kv: -kv[1][1]):
        rate = flops / ms / 1e6 if ms > 0 and flops else None
        print("| %s | %s | %d | %.1f | %.1f%% | %s | %s | %s |" %
              (op, os.path.basename(location) or "-", count, ms,
               100 * ms / total if total else 0,
               "%.2f" % (flops / 1e9) if flops else "-",
               "%.1f" % rate if rate else "-",
               "%.2f" % (rate / ceiling) if rate and ceiling else "-"))
    flops = sum(g[2] for g in groups.values())
    print("| all | | %d | %.1f | 100%% | %.2f | %.1f | %s |" %
          (sum(g[0] for g in groups.values()), total, flops / 1e9,
           flops / total / 1e6 if total else 0,
           "%.2f" % (flops / total / 1e6 / ceiling) if ceiling and total
           else "-"))


def bench_train(opts):
    print("| seq | d_model | form | compile s | ms/step | tokens/s | "
          "peak MiB |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    for seq in opts.seq:
        for form in opts.forms.split(","):
            seconds, r = train_step_report(
                reformer_variant(seq, opts.d_model, opts.d_ff), seq,
                form_flags(form, opts), opts.repeat, opts.threads)
            print("| %d | %d | %s | %.1f | %.0f | %.0f | %.1f |" %
                  (seq, opts.d_model,
                   form if form == "dense" else "lsh-%d" % opts.lsh_hashes,
                   seconds, r["mean_ms"], seq / r["mean_ms"] * 1000,
                   mib(r["peak_bytes"])))
            sys.stdout.flush()


def bench_data_parallel(opts):
    """`mpirun -np P lcc-train` of one job batch over P ranks, each rank's
    model compiled at batch / P rows: memory and traffic per rank."""
    mpirun_env()
    print("| ranks | rows/rank | peak MiB/rank | bytes sent/step/rank | "
          "ring all-reduce bytes/step/rank | ms/step |")
    print("|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as work:
        data = token_data(work, opts.batch * opts.steps, opts.seq)
        params = os.path.join(work, "weights.safetensors")
        for ranks in opts.ranks:
            if opts.batch % ranks:
                sys.exit("lcc-bench: error: --batch=%d is not a multiple of "
                         "%d ranks" % (opts.batch, ranks))
            rows = opts.batch // ranks
            source = os.path.join(work, "model-%d.mlir" % ranks)
            with open(source, "w") as f:
                f.write(residual_stack_model(
                    opts.layers, opts.seq, opts.d_model, opts.d_ff, "gelu",
                    batch=rows))
            lcm = os.path.join(work, "model-%d.lcm" % ranks)
            compile_model(source, lcm, ["--train", "--optimizer=adam"] +
                          form_flags(opts.form, opts))
            r = json.loads(train_over_ranks(lcm, data, params, opts.steps,
                                            ranks).stdout)
            peaks = r.get("peak_bytes_per_rank", [r["peak_bytes"]])
            sent = r.get("sent_bytes_per_rank", [0])[0] / opts.steps
            # A ring all-reduce sends 2 (P - 1) / P of the tensor per rank.
            ring = 2 * (ranks - 1) / ranks * sent
            print("| %d | %d | %.1f | %.0f | %.0f | %.0f |" %
                  (ranks, rows, mib(max(peaks)), sent, ring, r["ms_per_step"]))
            sys.stdout.flush()
        print("\n(weights file %.2f MiB. Bytes sent per step: the loss and "
              "the gradients a rank gives to the all-reduce, plus its share "
              "of the start-up checks and evaluation spread over the steps; "
              "a ring all-reduce moves 2 (P - 1) / P of that per rank.)" %
              mib(os.path.getsize(params)))


def mpirun_env():
    """mpirun, and the environment its jobs run in (as root, oversubscribed
    on this machine's cores)."""
    mpirun = shutil.which("mpirun")
    if not mpirun:
        sys.exit("lcc-bench: error: this workload needs mpirun "
                 "(tools/setup.sh installs Open MPI)")
    return mpirun, dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                        OMPI_MCA_btl_vader_single_copy_mechanism="none")


def token_data(work, rows, seq):
    """--data files of `rows` random token and label rows of `seq`."""
    data = []
    for i, name in enumerate(["tokens", "labels"]):
        data.append(os.path.join(work, name + ".npy"))
        run([tool("lcc-testdata"), "--output=" + data[-1],
             "--shape=%d,%d" % (rows, seq), "--dtype=i32", "--uniform=0,256",
             "--seed=%d" % (2 + i)])
    return data


def train_over_ranks(lcm, data, params, steps, ranks, check=True):
    """`mpirun -np ranks lcc-train` of `lcm` from `params` (written from
    it first when missing): the finished process."""
    mpirun, env = mpirun_env()
    if not os.path.exists(params):
        run([tool("lcc-run"), lcm, "--init-params=" + params])
    args = [mpirun, "--oversubscribe", "-np", str(ranks),
            tool("lcc-train"), lcm, "--data=" + ",".join(data),
            "--params=" + params, "--steps=%d" % steps,
            "--threads=1", "--report=json"]
    return subprocess.run(args, env=env, check=check, capture_output=True,
                          text=True)


def bench_context_parallel(opts):
    """One sequence over P ranks (lcc --context-parallel=P): `mpirun -np P
    lcc-train` of one row, memory and traffic per rank against the volume
    its exchanges should send. --form=lsh and dense (shared QK) split the
    attention over the heads (all-to-all); --form=ring is dense attention
    with queries and keys of their own, which runs as ring attention, and
    --form=window that attention with a mask region (each query the
    --window keys up to it), around the ring with each rank's block
    table; --form=relative and adaptive-span (spans up to --window) run
    around the ring in chunk pairs."""
    mpirun_env()
    print("| ranks | tokens/rank | peak MiB/rank | bytes sent/step/rank | "
          "expected bytes/step/rank | ms/step |")
    print("|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as work:
        data = token_data(work, opts.steps, opts.seq)
        source = os.path.join(work, "model.mlir")
        with open(source, "w") as f:
            distance_form = (opts.form if opts.form in ("relative",
                                                        "adaptive-span")
                             else None)
            f.write(residual_stack_model(opts.layers, opts.seq, opts.d_model,
                                         opts.d_ff, "gelu",
                                         shared_qk=opts.form in ("lsh",
                                                                 "dense"),
                                         window=opts.window
                                         if opts.form in ("window",
                                                          "adaptive-span")
                                         else 0,
                                         distance_form=distance_form))
        params = os.path.join(work, "weights.safetensors")
        ring = opts.form in ("ring", "window", "relative", "adaptive-span")
        flags = form_flags("dense" if ring else opts.form, opts)
        for ranks in opts.ranks:
            lcm = os.path.join(work, "model-%d.lcm" % ranks)
            compile_model(source, lcm, ["--train", "--optimizer=adam"] +
                          flags +
                          (["--context-parallel=%d" % ranks]
                           if ranks > 1 else []) +
                          (["--context-parallel-over-heads"]
                           if ranks > 1 and opts.over_heads else []))
            result = train_over_ranks(lcm, data, params, opts.steps, ranks,
                                      check=False)
            if result.returncode != 0:
                print("| %d | %d | (failed: %s) | | | |" %
                      (ranks, opts.seq // ranks,
                       result.stderr.strip().splitlines()[-1]))
                continue
            r = json.loads(result.stdout)
            peaks = r.get("peak_bytes_per_rank", [r["peak_bytes"]])
            sent = r.get("sent_bytes_per_rank", [0])[0] / opts.steps
            # Per layer: shared QK and V exchanged to heads, the output
            # back; the backward sends their gradients the other way; the
            # run's closing evaluation of its rows (one a step) exchanges
            # the forward's three again. Each exchange keeps 1/P of a
            # rank's [seq / P, d_model] f32 share. The gradients' average
            # sends every gradient once.
            # Queries of their own (--form=ring) add theirs: 12 a layer.
            # Ring attention instead passes keys and values on P - 1 times
            # in the forward, again in the backward with their gradients
            # back, and in the evaluation: 8 (P - 1) shares.
            share = opts.seq // ranks * opts.d_model * 4
            if ring and not opts.over_heads:
                exchanged = 8 * (ranks - 1)
            else:
                exchanged = (12 if ring else 9) * (ranks - 1) / ranks
            expected = (opts.layers * exchanged * share +
                        (os.path.getsize(params) if ranks > 1 else 0))
            print("| %d | %d | %.1f | %.0f | %.0f | %.0f |" %
                  (ranks, opts.seq // ranks, mib(max(peaks)), sent, expected,
                   r["ms_per_step"]))
            sys.stdout.flush()
        print("\n(weights file %.2f MiB. Expected bytes sent per step and "
              "rank: over the heads, the train step's all-to-alls of the "
              "attention's operands and results and of their gradients, 6 a "
              "layer of (P - 1) / P of a rank's [seq / P, d_model] f32 share "
              "(8 with queries of their own), the closing evaluation's 3 (4) "
              "a layer (one row a step); ring attention, keys and values "
              "passed on P - 1 times a layer in the forward, again in the "
              "backward with their gradients back, and in the evaluation (8 "
              "(P - 1) shares); and the gradients' "
              "all-reduce (the weights' bytes); measured adds the losses and "
              "start-up checks.)" % mib(os.path.getsize(params)))


def add_stack_arguments(parser):
    """The options of residual_stack_model's workloads besides its sizes,
    chunks and threads."""
    parser.add_argument("--form", default="lsh")
    parser.add_argument("--activation", choices=["gelu", "relu"],
                        default="gelu",
                        help="the feed-forward's (default gelu, as "
                        "reformer-pytorch's FeedForward)")
    parser.add_argument("--attention-chunks", type=int, default=0)
    parser.add_argument("--lsh-hashes", type=int, default=4)
    parser.add_argument("--lsh-bucket-size", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=2)


def main():
    parser = argparse.ArgumentParser(
        prog="lcc-bench", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1])
    sub = parser.add_subparsers(dest="workload", required=True)
    a = sub.add_parser("attention", help="dense attention by sequence length")
    a.add_argument("--seq", default="1024,4096,8192,16384",
                   type=lambda s: [int(x) for x in s.split(",")])
    a.add_argument("--heads", type=int, default=8)
    a.add_argument("--head-dim", type=int, default=64)
    a.add_argument("--batch", type=int, default=1)
    a.add_argument("--causal", action="store_true")
    a.add_argument("--dtype", choices=["f32", "bf16"], default="f32",
                   help="element type of q, k, v and the result (bf16: "
                   "products on bf16 pairs, f32 accumulation and softmax)")
    a.add_argument("--repeat", type=int, default=3)
    a.add_argument("--threads", type=int, default=0)
    a.add_argument("--device", choices=["cpu", "cuda-emulator"],
                   default="cpu",
                   help="cuda-emulator: compile for cuda and run the GPU "
                   "kernels on the CUDA emulator (one thread)")
    a.add_argument("--check", default="",
                   help="with --device=cuda-emulator: the emulator's checks "
                   "(memcheck,racecheck; default none)")
    a.add_argument("--form", default="dense",
                   choices=["dense", "sparse-strided", "sparse-fixed", "lsh",
                            "routed", "sliding-window"])
    a.add_argument("--window", type=int, default=256,
                   help="keys on each side of sliding-window attention "
                        "(a mask region: |i - j| < N)")
    a.add_argument("--routed-clusters", type=int, default=0)
    a.add_argument("--routed-window", type=int, default=0)
    a.add_argument("--lsh-hashes", type=int, default=4)
    a.add_argument("--lsh-bucket-size", type=int, default=64)
    a.add_argument("--sparse-stride", type=int, default=0)
    a.add_argument("--sparse-summary", type=int, default=0)
    a.add_argument("--sparse-block", type=int, default=64)
    a.add_argument("--peer-up-to", type=int, default=16384,
                   help="longest sequence numpy's dense peer runs (it "
                        "holds a seq x seq score matrix)")
    a.add_argument("--no-peer", action="store_true",
                   help="measure neither the sgemm ceiling nor the peer")
    a.add_argument("--lsh-hash", default="auto",
                   choices=["plain", "factorized", "auto"])
    a.add_argument("--query-tile", type=int, default=0)
    a.add_argument("--key-tile", type=int, default=0)
    k = sub.add_parser("masks", help="mask and score regions against dense")
    k.add_argument("--seq", default="4096,16384,65536",
                   type=lambda s: [int(x) for x in s.split(",")])
    k.add_argument("--heads", type=int, default=8)
    k.add_argument("--head-dim", type=int, default=64)
    k.add_argument("--window", type=int, default=256)
    k.add_argument("--global", dest="glob", type=int, default=16)
    k.add_argument("--causal", action="store_true")
    k.add_argument("--repeat", type=int, default=3)
    k.add_argument("--threads", type=int, default=0)
    k.add_argument("--dense-up-to", type=int, default=0,
                   help="longest seq dense and ALiBi run at (0: all)")
    g = sub.add_parser("decode", help="generation: prefill and the cached "
                       "decode step by cache length, against recomputing")
    g.add_argument("--seq", default="1024,4096,16384",
                   type=lambda s: [int(x) for x in s.split(",")])
    g.add_argument("--layers", type=int, default=2)
    g.add_argument("--d-model", type=int, default=256)
    g.add_argument("--d-ff", type=int, default=1024)
    g.add_argument("--heads", type=int, default=4)
    g.add_argument("--new-tokens", type=int, default=64,
                   help="tokens generated after a prompt that leaves room "
                        "for them")
    g.add_argument("--recompute-tokens", type=int, default=2,
                   help="tokens generated recomputing the sequence")
    g.add_argument("--repeat", type=int, default=3)
    g.add_argument("--threads", type=int, default=1)
    g.add_argument("--no-peer", action="store_true",
                   help="skip the torch transcription's cached generation")
    g.add_argument("--forms", default="dense,sparse,lsh",
                   type=lambda s: s.split(","),
                   help="attention forms: dense, sparse (strided), lsh "
                        "(shared QK, 4 hashes, buckets of 64), "
                        "transformer-xl (the bundled tiny model, segment by "
                        "segment; seq is then the text's length)")
    g.add_argument("--recompute-up-to", type=int, default=16384,
                   help="longest seq generation is also recomputed at")
    g.add_argument("--peer-up-to", type=int, default=16384,
                   help="longest seq the dense and sparse torch "
                        "transcriptions run at (their prefill builds the seq "
                        "x seq scores)")
    m = sub.add_parser("models", help="the bundled models")
    m.add_argument("--repeat", type=int, default=5)
    m.add_argument("--threads", type=int, default=0)
    t = sub.add_parser("train", help="the Reformer's train step")
    t.add_argument("--seq", default="1024,4096,16384",
                   type=lambda s: [int(x) for x in s.split(",")])
    t.add_argument("--forms", default="dense,lsh")
    t.add_argument("--d-model", type=int, default=128)
    t.add_argument("--d-ff", type=int, default=512)
    t.add_argument("--lsh-hashes", type=int, default=4)
    t.add_argument("--lsh-bucket-size", type=int, default=64)
    t.add_argument("--repeat", type=int, default=3)
    t.add_argument("--threads", type=int, default=0)
    dp = sub.add_parser("data-parallel", help="memory and traffic per rank "
                        "of mpirun -np P lcc-train")
    dp.add_argument("--ranks", default="1,2,4",
                    type=lambda s: [int(x) for x in s.split(",")])
    dp.add_argument("--batch", type=int, default=4,
                    help="rows of the job's batch, split over the ranks")
    dp.add_argument("--seq", type=int, default=4096)
    dp.add_argument("--layers", type=int, default=2)
    dp.add_argument("--d-model", type=int, default=128)
    dp.add_argument("--d-ff", type=int, default=512)
    dp.add_argument("--form", default="lsh")
    dp.add_argument("--lsh-hashes", type=int, default=4)
    dp.add_argument("--lsh-bucket-size", type=int, default=64)
    dp.add_argument("--steps", type=int, default=3)
    cp = sub.add_parser("context-parallel", help="memory and traffic per "
                        "rank of one sequence over P ranks")
    cp.add_argument("--ranks", default="1,2,4",
                    type=lambda s: [int(x) for x in s.split(",")])
    cp.add_argument("--seq", type=int, default=16384)
    cp.add_argument("--layers", type=int, default=2)
    cp.add_argument("--d-model", type=int, default=128)
    cp.add_argument("--d-ff", type=int, default=512)
    cp.add_argument("--form", default="lsh", choices=["lsh", "dense",
                                                       "ring", "window",
                                                       "relative",
                                                       "adaptive-span"],
                    help="lsh or dense (shared QK): split over the heads; "
                    "ring: dense attention with keys of its own, ring "
                    "attention; window: that attention masked to --window "
                    "keys, ring attention with a block table per rank; "
                    "relative, adaptive-span (spans up to --window): "
                    "those forms, ring attention in chunk pairs "
                    "(default lsh)")
    cp.add_argument("--window", type=int, default=1024,
                    help="--form=window's keys a query sees (default 1024)")
    cp.add_argument("--over-heads", action="store_true",
                    help="lcc --context-parallel-over-heads: --form=ring's "
                    "or window's attention split over the heads instead")
    cp.add_argument("--lsh-hashes", type=int, default=4)
    cp.add_argument("--lsh-bucket-size", type=int, default=64)
    cp.add_argument("--steps", type=int, default=2)
    r = sub.add_parser("depth", help="train step by depth, plain and "
                       "reversible")
    r.add_argument("--layers", default="2,4,8,16",
                   type=lambda v: [int(x) for x in v.split(",")])
    r.add_argument("--seq", type=int, default=4096)
    r.add_argument("--d-model", type=int, default=256)
    r.add_argument("--d-ff", type=int, default=1024)
    r.add_argument("--ff-chunks", type=int, default=0)
    add_stack_arguments(r)
    r.add_argument("--threads", type=int, default=0)
    r.add_argument("--rounds", type=int, default=1,
                   help="times each step this often, the peer after each")
    r.add_argument("--no-peer", action="store_true",
                   help="no reformer-pytorch transcription alongside")
    c = sub.add_parser("ff-chunks", help="train step by feed-forward chunks")
    c.add_argument("--chunks", default="1,4,16",
                   type=lambda v: [int(x) for x in v.split(",")])
    c.add_argument("--layers", type=int, default=1)
    c.add_argument("--seq", type=int, default=16384)
    c.add_argument("--d-model", type=int, default=256)
    c.add_argument("--d-ff", type=int, default=4096)
    c.add_argument("--reversible", action="store_true")
    add_stack_arguments(c)
    c.add_argument("--threads", type=int, default=0)
    p = sub.add_parser("profile", help="where a train step goes, by model "
                       "op")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--seq", type=int, default=4096)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--d-ff", type=int, default=1024)
    p.add_argument("--plain", action="store_true",
                   help="no reversible blocks")
    p.add_argument("--ff-chunks", type=int, default=16)
    add_stack_arguments(p)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-peer", action="store_true",
                   help="no sgemm ceiling")
    x = sub.add_parser("relative", help="Transformer-XL attention by memory "
                       "length")
    x.add_argument("--segment", type=int, default=512)
    x.add_argument("--memory", default="0,512,2048",
                   type=lambda v: [int(m) for m in v.split(",")])
    x.add_argument("--heads", type=int, default=8)
    x.add_argument("--head-dim", type=int, default=64)
    x.add_argument("--batch", type=int, default=1)
    x.add_argument("--clamp-len", type=int, default=0)
    x.add_argument("--repeat", type=int, default=3)
    x.add_argument("--threads", type=int, default=0)
    x.add_argument("--no-peer", action="store_true")
    x.add_argument("--backward", action="store_true",
                   help="time the forward and backward (lcc --train) "
                   "instead of the forward against numpy")
    a = sub.add_parser("span", help="adaptive-span attention's time by "
                       "its span")
    a.add_argument("--segment", type=int, default=512)
    a.add_argument("--memory", default="512,2048",
                   type=lambda v: [int(m) for m in v.split(",")])
    a.add_argument("--z", default="0,0.125,0.25,0.5,1",
                   type=lambda v: [float(z) for z in v.split(",")],
                   help="spans as fractions of max_span (= the keys)")
    a.add_argument("--ramp", type=int, default=32)
    a.add_argument("--backward", action="store_true",
                   help="time the forward and backward (lcc --train) of "
                   "each z instead of the forward")
    a.add_argument("--heads", type=int, default=8)
    a.add_argument("--head-dim", type=int, default=64)
    a.add_argument("--batch", type=int, default=1)
    a.add_argument("--repeat", type=int, default=3)
    a.add_argument("--threads", type=int, default=0)
    opts = parser.parse_args()
    if opts.workload == "attention":
        bench_attention(opts)
    elif opts.workload == "masks":
        bench_masks(opts)
    elif opts.workload == "train":
        bench_train(opts)
    elif opts.workload == "depth":
        if opts.rounds < 1:
            sys.exit("lcc-bench: error: --rounds must be at least 1, got %d"
                     % opts.rounds)
        bench_depth(opts)
    elif opts.workload == "decode":
        bench_decode(opts)
    elif opts.workload == "ff-chunks":
        bench_ff_chunks(opts)
    elif opts.workload == "profile":
        bench_profile(opts)
    elif opts.workload == "relative":
        bench_relative(opts)
    elif opts.workload == "span":
        bench_span(opts)
    elif opts.workload == "data-parallel":
        bench_data_parallel(opts)
    elif opts.workload == "context-parallel":
        bench_context_parallel(opts)
    else:
        bench_models(opts)


if __name__ == "__main__":
    main()
