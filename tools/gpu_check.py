#!/usr/bin/env python3
"""The two halves of tools/gpu-check.sh.

prepare (here, where lcc is built): compiles every numerics case (each
test/e2e model, each bundled model, with the flags of their tests) for
--target=cpu,cuda, makes its inputs and weights, runs it on the CPU and on the
CUDA emulator (the GPU kernels on this CPU, with memcheck and racecheck),
keeps the CPU results and the emulator's error against them; compiles the timing cases (attention forms at 4K-64K tokens)
and the FlashAttention comparison (bf16 attention forward and backward at
FlashAttention's benchmark shapes, d 64 and 128, 1K-16K, causal and not) for
--target=cuda. Everything
goes to one folder, carried to the GPU machine.

run (on the GPU machine): runs every case on the GPU with lcc-run
--device=cuda, compares the numerics cases with the CPU results (lcc-compare:
max |gpu - cpu| / max |cpu|) beside the emulator's error against the same
CPU results, makes the timing cases' inputs (lcc-testdata)
and prints one table, then the FlashAttention comparison: TFLOP/s measured,
the kernel report's bound and the published FA2/FA3 figures.

estimate (here, no GPU): prints the kernel report's H100 bound of each
attention form at FlashAttention's shapes as a table (docs/benchmarks.md).
"""

import json
import os
import re
import shutil
import subprocess
import sys

# The relative error (max |gpu - cpu| / max |cpu|) each form must stay
# under. Dense and sparse attention and the other ops are exact up to float
# rounding; LSH and routed attention hash and route with argmax and top-k,
# where a rounding difference can move a token to another bucket.
# bf16 attention rounds its probabilities and result to bf16 (2^-9 of the
# largest element), and the CPU's dot products and the GPU's loops sum in
# different orders.
TOLERANCE = {"exact": 1e-5, "hashed": 1e-3, "bf16": 1e-2}

NUMERICS = [
    # (name, source, lcc flags, kind)
    ("reformer-tiny", "models/reformer-tiny.mlir", [], "exact"),
    ("transformer-tiny", "models/transformer-tiny.mlir", [], "exact"),
    ("reformer-tiny-lsh", "models/reformer-tiny.mlir", ["--attention=lsh"],
     "hashed"),
    ("transformer-tiny-routed", "models/transformer-tiny.mlir",
     ["--attention=routed"], "hashed"),
    ("attention-to-sparse", "test/e2e/attention.mlir",
     ["--attention=sparse", "--sparse-pattern=fixed", "--sparse-stride=16",
      "--sparse-summary=4", "--sparse-block=16"], "exact"),
    ("attention-bf16", "test/e2e/Inputs/attention-bf16.mlir", [], "bf16"),
    # Mixed precision: relative attention's content and band products on
    # bf16 pairs, shared-QK keys normalised in f32 and rounded.
    ("transformer-xl-tiny-bf16", "models/transformer-xl-tiny.mlir",
     ["--attention-precision=bf16"], "bf16"),
    ("reformer-tiny-bf16", "models/reformer-tiny.mlir",
     ["--attention-precision=bf16"], "bf16"),
    # LSH chunks' products on bf16 pairs; tokens hashed widened to f32.
    ("reformer-tiny-lsh-bf16", "models/reformer-tiny.mlir",
     ["--attention=lsh", "--attention-precision=bf16"], "bf16"),
    # Routed attention's products on bf16 pairs, with given centroids: a
    # whole routed model's k-means amplifies bf16's rounding (its result
    # moves by a third when only its weights are rounded to bf16), so the
    # GPU's sums, in another order than the CPU's, route other tokens.
    ("routed-given-centroids-bf16",
     "test/e2e/Inputs/routed-given-centroids.mlir",
     ["--attention-precision=bf16"], "bf16"),
    # Relative attention over a memory, and sines of angles up to 127.
    ("transformer-xl-tiny", "models/transformer-xl-tiny.mlir", [], "exact"),
    # Adaptive span's weighed flash loop; compress, slices and stop_gradient.
    ("adaptive-span-tiny", "models/adaptive-span-tiny.mlir", [], "exact"),
    ("compressive-tiny", "models/compressive-tiny.mlir", [], "exact"),
]

# name, heads, seq, head_dim, shared q/k, lcc flags
TIMING = [
    ("dense 4K", 8, 4096, 64, False, []),
    ("dense 16K", 8, 16384, 64, False, []),
    ("sparse-fixed 16K", 8, 16384, 64, False,
     ["--attention=sparse", "--sparse-pattern=fixed", "--sparse-stride=128",
      "--sparse-summary=16"]),
    ("sparse-strided 16K", 8, 16384, 64, False,
     ["--attention=sparse", "--sparse-pattern=strided",
      "--sparse-stride=128"]),
    ("lsh-4 16K", 8, 16384, 64, True, ["--attention=lsh"]),
    ("lsh-4 64K", 8, 65536, 64, True, ["--attention=lsh"]),
    ("routed 16K", 8, 16384, 64, False, ["--attention=routed"]),
]

# The FlashAttention comparison: bf16 attention forward at FlashAttention's
# benchmark shapes (batch * seq = 16K tokens, heads * head_dim = 2048), its
# FLOPs counted as FlashAttention counts them (4 B H S^2 D, halved causal).
FLASH = [(dim, seq, causal) for dim in (64, 128) for seq in (1024, 4096, 16384)
         for causal in (False, True)]

# The published H100 SXM forward speeds at those shapes (fp16, TFLOP/s over
# seq 512-16K; the FlashAttention-3 paper's figures, as collected in
# ../shared/references/compilers-and-gpu.md).
PUBLISHED = {(64, False): "FA2 282-324, FA3 333-497",
             (64, True): "FA2 180-299, FA3 197-473",
             (128, False): "FA2 309-370, FA3 467-648",
             (128, True): "FA2 191-335, FA3 292-616"}
# The backward's (FLOPs counted as 2.5 times the forward's, as
# FlashAttention counts them); the paper gives d 128 only.
PUBLISHED_BACKWARD = {128: "FA2 214-322, FA3 316-561"}

# The other forms, for the model estimate only: (name, dtype, lcc flags).
ESTIMATED_FORMS = [
    ("sparse-fixed", "bf16", ["--attention=sparse", "--sparse-pattern=fixed",
                              "--sparse-stride=128", "--sparse-summary=16"]),
    ("sparse-strided", "bf16", ["--attention=sparse",
                                "--sparse-pattern=strided",
                                "--sparse-stride=128"]),
    ("lsh-4", "f32", ["--attention=lsh"]),
    ("lsh-4", "bf16", ["--attention=lsh"]),
    ("routed", "f32", ["--attention=routed"]),
    ("routed", "bf16", ["--attention=routed"]),
]


def flash_shape(dim, seq):
    """(batch, heads) of FlashAttention's benchmarks for `dim` and `seq`."""
    return max(1, 16384 // seq), 2048 // dim


def flash_flops(batch, heads, seq, dim, causal, backward=False):
    forward = 4.0 * batch * heads * seq * seq * dim / (2 if causal else 1)
    return 2.5 * forward if backward else forward


def flash_name(dim, seq, causal, backward=False):
    return "flash%s d%d %dK%s" % (" bwd" if backward else "", dim, seq // 1024,
                                  " causal" if causal else "")


def sh(args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError("%s failed:\n%s%s" % (" ".join(args), result.stdout,
                                                 result.stderr))
    return result.stdout


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def inputs_of(lcc, source, flags):
    """(shape, dtype, valid range) of each input, from the linalg signature:
    arguments without attn.param are inputs."""
    text = sh([lcc, source, "--emit=linalg"] + flags)
    match = re.search(r"func\.func @\w+\((.*?)\) ->", text)
    inputs = []
    for arg in re.split(r", (?=%arg)", match.group(1)):
        if not arg or "attn.param" in arg:  # no inputs at all, a parameter
            continue
        shape, dtype = re.search(r"tensor<([0-9x]*)x?(f32|bf16|i32)>",
                                 arg).groups()
        shape = [int(d) for d in shape.split("x") if d]
        bounds = re.search(r"attn.valid_range = array<i64: (-?\d+), (-?\d+)>",
                           arg)
        inputs.append((shape, dtype,
                       (int(bounds.group(1)), int(bounds.group(2)))
                       if bounds else None))
    return inputs


def attention_source(heads, seq, dim, shared, batch=1, dtype="f32",
                     causal=False):
    t = "tensor<%dx%dx%dx%dx%s>" % (batch, heads, seq, dim, dtype)
    if causal:
        return ("func.func @forward(%%q: %s, %%k: %s, %%v: %s) -> %s {\n"
                "  %%0 = attn.attention %%q, %%k, %%v {causal = true}"
                " : (%s, %s, %s) -> %s\n"
                "  return %%0 : %s\n}\n" % ((t,) * 9))
    if shared:
        return ("func.func @forward(%%qk: %s, %%v: %s) -> %s {\n"
                "  %%0 = attn.attention %%qk, %%qk, %%v {shared_qk}"
                " : (%s, %s, %s) -> %s\n"
                "  return %%0 : %s\n}\n" % ((t,) * 8))
    return ("func.func @forward(%%q: %s, %%k: %s, %%v: %s) -> %s {\n"
            "  %%0 = attn.attention %%q, %%k, %%v : (%s, %s, %s) -> %s\n"
            "  return %%0 : %s\n}\n" % ((t,) * 9))


def attention_backward_source(heads, seq, dim, batch, dtype, causal):
    """attn.attention_backward alone: the forward's q, k, v, result and
    f32 logsumexp and the result's gradient in, dq, dk, dv out."""
    t = "tensor<%dx%dx%dx%dx%s>" % (batch, heads, seq, dim, dtype)
    lse = "tensor<%dx%dx%dxf32>" % (batch, heads, seq)
    return ("func.func @backward(%%q: %s, %%k: %s, %%v: %s, %%o: %s, "
            "%%lse: %s, %%do: %s) -> (%s, %s, %s) {\n"
            "  %%dq, %%dk, %%dv = attn.attention_backward %%q, %%k, %%v, %%o, "
            "%%lse, %%do%s : (%s, %s, %s, %s, %s, %s) -> (%s, %s, %s)\n"
            "  return %%dq, %%dk, %%dv : %s, %s, %s\n}\n" %
            ((t,) * 4 + (lse, t) + (t,) * 3 +
             (" {causal = true}" if causal else "",) + (t,) * 4 + (lse, t) +
             (t,) * 6))


def model_microseconds(lcc, source, flags):
    """The kernel report's H100 bound of the model's kernels, summed (us),
    and the bound that takes most of that time."""
    report = json.loads(sh([lcc, source, "--target=cuda",
                            "--emit=kernel-report-json", "-o", "-"] + flags))
    total, by_bound, exact = 0.0, {}, True
    for kernel in report["kernels"]:
        h100 = kernel["roofline"]["h100"]
        total += h100["microseconds"]
        by_bound[h100["bound"]] = (by_bound.get(h100["bound"], 0.0) +
                                   h100["microseconds"])
        exact = exact and kernel["flops_exact"]
    return (total, max(by_bound, key=by_bound.get) if by_bound else "-",
            exact)


def write_source(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def flash_microseconds(lcc, path, dim, seq, causal, backward=False):
    """The H100 bound of bf16 attention (or its backward) at
    FlashAttention's shape (its non-causal model written to `path`). The
    report counts a causal kernel's key loop, whose trip count depends on
    the query tile, once; a causal launch visits about half the tile pairs
    of the non-causal one (the diagonal's besides), so its bound is taken
    as half the non-causal's."""
    batch, heads = flash_shape(dim, seq)
    source = (attention_backward_source(heads, seq, dim, batch, "bf16", False)
              if backward else
              attention_source(heads, seq, dim, False, batch, "bf16", False))
    micro, bound, _ = model_microseconds(lcc, write_source(path, source), [])
    return (micro / 2 if causal else micro), bound


def estimate(bin_dir, out):
    """Prints the model-estimated speed of each attention form on an H100,
    from the kernel report: no GPU, a bound and not a measurement."""
    lcc = os.path.join(bin_dir, "lcc")
    os.makedirs(out, exist_ok=True)
    source = os.path.join(out, "model.mlir")
    print("| form | dtype | d | seq | B x H | H100 bound ms | dense-equivalent "
          "TFLOP/s | bound by | published (H100, fp16) |")
    print("|---|---|---:|---:|---|---:|---:|---|---|")
    for dim, seq, causal in FLASH:
        batch, heads = flash_shape(dim, seq)
        micro, bound = flash_microseconds(lcc, source, dim, seq, causal)
        print("| dense%s | bf16 | %d | %d | %d x %d | %.2f | %.0f | %s | %s |"
              % (" causal" if causal else "", dim, seq, batch, heads,
                 micro / 1e3,
                 flash_flops(batch, heads, seq, dim, causal) / micro / 1e6,
                 bound, PUBLISHED[(dim, causal)]))
    for dim, seq, causal in FLASH:
        batch, heads = flash_shape(dim, seq)
        micro, bound = flash_microseconds(lcc, source, dim, seq, causal,
                                          backward=True)
        print("| dense%s backward | bf16 | %d | %d | %d x %d | %.2f | %.0f | "
              "%s | %s |" % (" causal" if causal else "", dim, seq, batch,
                             heads, micro / 1e3,
                             flash_flops(batch, heads, seq, dim, causal, True)
                             / micro / 1e6, bound,
                             PUBLISHED_BACKWARD.get(dim, "-")))
    # '~': some kernel's loop has a trip count the report cannot know (a
    # block table's, buckets', clusters'), counted by its bound or once.
    for name, dtype, flags in ESTIMATED_FORMS:
        for seq in (4096, 16384):
            batch, heads = flash_shape(64, seq)
            micro, bound, exact = model_microseconds(
                lcc, write_source(source, attention_source(
                    heads, seq, 64, name == "lsh-4", batch, dtype)), flags)
            print("| %s | %s | 64 | %d | %d x %d | %s%.2f | %.0f | %s | - |" % (
                name, dtype, seq, batch, heads, "" if exact else "~",
                micro / 1e3,
                flash_flops(batch, heads, seq, 64, False) / micro / 1e6,
                bound))


def max_error(bin_dir, workdir, results, reference, outputs):
    """The largest lcc-compare rel_err of results/result<i>.npy against
    reference/result<i>.npy (inf where it prints none)."""
    compare = os.path.join(bin_dir, "lcc-compare")
    error = 0.0
    for i in range(outputs):
        compared = subprocess.run(
            [compare, "%s/result%d.npy" % (results, i),
             "%s/result%d.npy" % (reference, i)],
            cwd=workdir, capture_output=True, text=True)
        match = re.search(r"rel_err: (\S+)", compared.stdout)
        error = max(error, float(match.group(1)) if match else float("inf"))
    return error


def prepare(root, bin_dir, out):
    lcc, run = os.path.join(bin_dir, "lcc"), os.path.join(bin_dir, "lcc-run")
    testdata = os.path.join(bin_dir, "lcc-testdata")
    cases = []
    numerics = list(NUMERICS)
    for name in sorted(os.listdir(os.path.join(root, "test/e2e"))):
        if name.endswith(".mlir"):
            kind = ("hashed" if name.startswith(("lsh", "routed")) else
                    "exact")
            numerics.append((name[:-5], "test/e2e/" + name, [], kind))
    for seed, (name, source, flags, kind) in enumerate(numerics, start=1):
        case = os.path.join(out, slug(name))
        os.makedirs(os.path.join(case, "cpu"), exist_ok=True)
        source = os.path.join(root, source)
        lcm = os.path.join(case, "model.lcm")
        sh([lcc, source, "--target=cpu,cuda", "-o", lcm] + flags)
        args = []
        for i, (shape, dtype, bounds) in enumerate(inputs_of(lcc, source,
                                                             flags)):
            path = os.path.join(case, "input%d.npy" % i)
            cmd = [testdata, "--output=" + path,
                   "--shape=" + ",".join(map(str, shape)),
                   "--dtype=" + dtype, "--seed=%d" % (100 * seed + i)]
            if dtype == "i32":
                low, high = bounds if bounds else (0, 9)
                cmd.append("--uniform=%d,%d" % (low, high + 1))
            sh(cmd)
            args.append("--input=" + os.path.basename(path))
        params = os.path.join(case, "params.safetensors")
        sh([run, lcm, "--init-params=" + params, "--seed=%d" % seed])
        args.append("--params=params.safetensors")
        report = json.loads(sh([run, "model.lcm", "--output-dir=cpu", "--warmup=1",
                                "--repeat=3", "--report=json"] + args,
                               cwd=case))
        # The same GPU kernels on the CUDA emulator, checked, against the
        # CPU: the GPU's results are then compared with the CPU's, so the
        # table relates all three. Only the error travels (the carried folder
        # must stay under the device tool's 64 MiB).
        os.makedirs(os.path.join(case, "emu"), exist_ok=True)
        sh([run, "model.lcm", "--device=cuda-emulator",
            "--check=memcheck,racecheck", "--output-dir=emu"] + args, cwd=case)
        outputs = len(report["outputs"])
        emu_error = max_error(bin_dir, case, "emu", "cpu", outputs)
        shutil.rmtree(os.path.join(case, "emu"))
        cases.append({"name": name, "dir": slug(name), "kind": kind,
                      "args": args, "cpu_ms": report["mean_ms"],
                      "outputs": outputs, "emu_error": emu_error})
    for name, heads, seq, dim, shared, flags in TIMING:
        case = os.path.join(out, slug(name))
        os.makedirs(case, exist_ok=True)
        source = write_source(os.path.join(case, "model.mlir"),
                              attention_source(heads, seq, dim, shared))
        sh([lcc, source, "--target=cuda", "-o",
            os.path.join(case, "model.lcm")] + flags)
        shape = [1, heads, seq, dim]
        cases.append({"name": name, "dir": slug(name), "kind": "timing",
                      "inputs": [(shape, "f32", i)
                                 for i in range(2 if shared else 3)]})
    for backward in (False, True):
        for dim, seq, causal in FLASH:
            cases.append(prepare_flash(lcc, out, dim, seq, causal, backward))
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
    print("prepared %d cases in %s" % (len(cases), out))


def prepare_flash(lcc, out, dim, seq, causal, backward):
    """A FlashAttention comparison case: bf16 attention (or its backward
    alone) at FlashAttention's shape, compiled for cuda."""
    name = flash_name(dim, seq, causal, backward)
    case = os.path.join(out, slug(name))
    os.makedirs(case, exist_ok=True)
    batch, heads = flash_shape(dim, seq)
    shape = [batch, heads, seq, dim]
    if backward:
        text = attention_backward_source(heads, seq, dim, batch, "bf16", causal)
        # The same bf16 block (seed 0) serves as q, k, v, o and do: only the
        # time is read.
        inputs = ([(shape, "bf16", 0)] * 4 + [(shape[:3], "f32", 4)] +
                  [(shape, "bf16", 0)])
    else:
        text = attention_source(heads, seq, dim, False, batch, "bf16", causal)
        inputs = [(shape, "bf16", i) for i in range(3)]
    source = write_source(os.path.join(case, "model.mlir"), text)
    sh([lcc, source, "--target=cuda", "-o", os.path.join(case, "model.lcm")])
    micro, _ = flash_microseconds(lcc, os.path.join(case, "estimate.mlir"),
                                  dim, seq, causal, backward)
    return {"name": name, "dir": slug(name), "kind": "flash",
            "backward": backward, "inputs": inputs,
            "flops": flash_flops(batch, heads, seq, dim, causal, backward),
            "model_ms": micro / 1e3,
            "published": (PUBLISHED_BACKWARD.get(dim, "-") if backward else
                          PUBLISHED[(dim, causal)])}


def run_cases(bin_dir, out):
    run = os.path.join(bin_dir, "lcc-run")
    testdata = os.path.join(bin_dir, "lcc-testdata")
    with open(os.path.join(out, "cases.json")) as f:
        cases = json.load(f)
    rows, failures, flash = [], 0, []
    for case in cases:
        workdir = os.path.join(out, case["dir"])
        args = list(case.get("args", []))
        if case["kind"] in ("timing", "flash"):
            # Each input is (shape, dtype, seed); equal ones share a file.
            made = {}
            for i, (shape, dtype, seed) in enumerate(case["inputs"]):
                key = (tuple(shape), dtype, seed)
                if key not in made:
                    made[key] = "input%d.npy" % i
                    sh([testdata, "--output=" + os.path.join(workdir,
                                                             made[key]),
                        "--shape=" + ",".join(map(str, shape)),
                        "--seed=%d" % seed, "--dtype=" + dtype])
                args.append("--input=" + made[key])
        os.makedirs(os.path.join(workdir, "gpu"), exist_ok=True)
        result = subprocess.run(
            [run, "model.lcm", "--device=cuda", "--output-dir=gpu",
             "--warmup=1", "--repeat=3", "--report=json"] + args,
            cwd=workdir, capture_output=True, text=True)
        if result.returncode != 0:
            failures += 1
            lines = (result.stderr.strip() or "no message").splitlines()
            rows.append((case["name"], case["kind"], "-", "-",
                         case.get("cpu_ms"), None, None, case.get("emu_error"),
                         "FAILED: " + lines[-1][:70]))
            continue
        report = json.loads(result.stdout)
        error, emu_error, status = None, case.get("emu_error"), "timed"
        if case["kind"] == "flash":
            flash.append((case, report["median_ms"]))
        if case["kind"] not in ("timing", "flash"):
            # The GPU against the CPU; the emulator's run of the same kernels
            # was compared with the CPU when the cases were prepared.
            error = max_error(bin_dir, workdir, "gpu", "cpu", case["outputs"])
            ok = error <= TOLERANCE[case["kind"]]
            failures += not ok
            status = "ok" if ok else "MISMATCH"
        rows.append((case["name"], case["kind"], report.get("device_arch", "-"),
                     report.get("device_name", "-"), case.get("cpu_ms"),
                     report["mean_ms"], error, emu_error, status,
                     report.get("peak_bytes")))
    print("%-28s %-7s %10s %10s %11s %11s %10s  %s" %
          ("case", "kind", "cpu ms", "gpu ms", "gpu-cpu", "emu-cpu",
           "peak MiB", "status"))
    for row in rows:
        name, kind, _, _, cpu_ms, gpu_ms, error, emu_error, status = row[:9]
        peak = row[9] if len(row) > 9 else None
        print("%-28s %-7s %10s %10s %11s %11s %10s  %s" % (
            name, kind, "%.2f" % cpu_ms if cpu_ms else "-",
            "%.3f" % gpu_ms if gpu_ms else "-",
            "%.2e" % error if error is not None else "-",
            "%.2e" % emu_error if emu_error is not None else "-",
            "%.1f" % (peak / 2**20) if peak else "-", status))
    if flash:
        # FLOPs as FlashAttention counts them, so the columns compare.
        print("\n%-28s %10s %12s %12s  %s" % (
            "bf16 attention", "gpu ms", "TFLOP/s", "model bound",
            "published H100 fp16 TFLOP/s"))
        for case, ms in flash:
            print("%-28s %10.3f %12.1f %12.1f  %s" % (
                case["name"], ms, case["flops"] / (ms * 1e-3) / 1e12,
                case["flops"] / (case["model_ms"] * 1e-3) / 1e12,
                case["published"]))
    device = next((r for r in rows if r[2] != "-"), None)
    if device:
        print("device: %s (%s)" % (device[3], device[2]))
    print("%d passed, %d failed" % (len(rows) - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    mode, bin_dir, out = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "estimate":
        estimate(bin_dir, out)
    elif mode == "prepare":
        prepare(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                bin_dir, out)
    else:
        sys.exit(run_cases(bin_dir, out))
