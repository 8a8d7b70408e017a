#!/usr/bin/env python3
"""The Reformer duplication task, end to end (paper Table 2).

Trains models/duplication.mlir with full attention and with LSH-1/2/4, then
evaluates every checkpoint with full attention and LSH-1/2/4/8 (evaluation
hashes with another seed than training: the weights are the same, the
rotations are not) and prints the accuracy table: the share of the second
w's tokens predicted exactly (argmax of the logits). Uses the tools of a
build (--bin, default build/bin) and writes everything under --work-dir.

The model is models/duplication.mlir (8 sequences of 256 tokens, vocab 33,
d_model 128, d_ff 256), or with --length, --vocab, --d-model and --d-ff
that model with those sizes (4 heads of d_model / 4; the paper's setting is
--length=1024 --vocab=128 --d-model=256).

  tools/duplication/run.py --steps=2000 --work-dir=/tmp/duplication
"""
import argparse
import array
import importlib
import json
import os
import re
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
make_data = importlib.import_module("make-data")
ROOT = os.path.dirname(os.path.dirname(HERE))
MODEL = os.path.join(ROOT, "models", "duplication.mlir")
BATCH, LENGTH, VOCAB, D_MODEL, D_FF = 8, 256, 33, 128, 256
TRAIN_FORMS = ["full", "lsh-1", "lsh-2", "lsh-4"]
EVAL_FORMS = ["full", "lsh-1", "lsh-2", "lsh-4", "lsh-8"]


def model_variant(length, vocab, d_model, d_ff):
    """models/duplication.mlir with other sizes: each tensor type's shape is
    one of the model's, replaced by the same shape at the new sizes."""
    B, L, V, D, F, H = BATCH, LENGTH, VOCAB, D_MODEL, D_FF, D_MODEL // 4
    sizes = {"B": BATCH, "L": length, "V": vocab, "D": d_model, "F": d_ff,
             "H": d_model // 4}
    shapes = {(B, L): "BL", (B, L, D): "BLD", (B, L, V): "BLV",
              (B, 4, L, H): "B4LH", (V, D): "VD", (D, V): "DV", (D, D): "DD",
              (D, F): "DF", (F, D): "FD", (D,): "D", (F,): "F", (V,): "V",
              (): ""}

    def resize(match):
        dims = tuple(int(d) for d in match.group(1).split("x") if d)
        if dims not in shapes:
            sys.exit("run.py: error: %s has a shape that no size names" %
                     match.group(0))
        new = [str(sizes[c]) if c in sizes else c for c in shapes[dims]]
        return "tensor<%s%s>" % ("".join(d + "x" for d in new),
                                 match.group(2))

    with open(MODEL) as f:
        return re.sub(r"tensor<((?:\d+x)*)([a-z]\w*)>", resize, f.read())


def threads_flag(args):
    return ["--threads=%d" % args.threads] if args.threads else []


def form_flags(form, seed, bucket_size):
    if form == "full":
        return []
    return ["--attention=lsh", "--lsh-hashes=" + form.split("-")[1],
            "--lsh-bucket-size=%d" % bucket_size, "--seed=%d" % seed]


def run(command, log):
    with open(log, "a") as out:
        out.write("$ " + " ".join(command) + "\n")
        out.flush()
        result = subprocess.run(command, stdout=subprocess.PIPE,
                                stderr=out, text=True)
        out.write(result.stdout)
    if result.returncode:
        sys.exit("run.py: error: '%s' failed (see %s)" % (command[0], log))
    return result.stdout


def read_npy(path):
    """The values of a little-endian .npy of '<f4' or '<i4'."""
    with open(path, "rb") as f:
        data = f.read()
    length = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + length].decode("latin1")
    values = array.array("f" if "<f4" in header else "i")
    values.frombytes(data[10 + length:])
    return values


def accuracy(args, lcm, checkpoint, eval_dir, log):
    """Share of weighted positions whose argmax is the label."""
    tokens = read_npy(os.path.join(eval_dir, "tokens.npy"))
    labels = read_npy(os.path.join(eval_dir, "labels.npy"))
    weights = read_npy(os.path.join(eval_dir, "weights.npy"))
    length, vocab = args.length, args.vocab
    rows = len(tokens) // length
    right = counted = 0
    batch_dir = os.path.join(args.work_dir, "batch")
    os.makedirs(batch_dir, exist_ok=True)
    for first in range(0, rows - BATCH + 1, BATCH):
        # One batch of the eval rows as its own .npy.
        part = tokens[first * length:(first + BATCH) * length]
        path = os.path.join(batch_dir, "tokens.npy")
        make_data.write_npy(path, "<i4", (BATCH, length), list(part))
        run([os.path.join(args.bin, "lcc-run"), lcm, "--function=forward",
             "--input=" + path, "--params=" + checkpoint,
             "--output-dir=" + batch_dir] + threads_flag(args), log)
        logits = read_npy(os.path.join(batch_dir, "result0.npy"))
        for p in range(BATCH * length):
            at = first * length + p
            if weights[at] == 0:
                continue
            row = logits[p * vocab:(p + 1) * vocab]
            counted += 1
            right += int(max(range(vocab), key=row.__getitem__) == labels[at])
    return right / counted


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--lr", default="1e-3")
    parser.add_argument("--train-rows", type=int, default=4096)
    parser.add_argument("--eval-rows", type=int, default=64)
    parser.add_argument("--train-forms", default=",".join(TRAIN_FORMS))
    parser.add_argument("--length", type=int, default=LENGTH)
    parser.add_argument("--vocab", type=int, default=VOCAB,
                        help="symbols 1..vocab-1 (0 separates)")
    parser.add_argument("--d-model", type=int, default=D_MODEL)
    parser.add_argument("--d-ff", type=int, default=D_FF)
    parser.add_argument("--lsh-bucket-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=0,
                        help="threads of lcc-train and lcc-run (default all)")
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()
    if (args.length < 4 or args.length % 2 or args.vocab < 2 or
            args.d_model < 4 or args.d_model % 4 or args.d_ff < 1):
        sys.exit("run.py: error: expected an even --length >= 4, --vocab >= "
                 "2, --d-model a multiple of 4 and --d-ff >= 1")
    os.makedirs(args.work_dir, exist_ok=True)
    log = os.path.join(args.work_dir, "log.txt")
    model = os.path.join(args.work_dir, "duplication.mlir")
    with open(model, "w") as f:
        f.write(model_variant(args.length, args.vocab, args.d_model,
                              args.d_ff))
    data = {}
    for name, rows, seed in [("train", args.train_rows, 1),
                             ("eval", args.eval_rows, 2)]:
        data[name] = os.path.join(args.work_dir, name)
        run([sys.executable, os.path.join(HERE, "make-data.py"),
             "--rows=%d" % rows, "--length=%d" % args.length,
             "--symbols=%d" % (args.vocab - 1), "--seed=%d" % seed,
             "--output-dir=" + data[name]], log)
    files = lambda d: ",".join(os.path.join(d, f) for f in
                               ["tokens.npy", "labels.npy", "weights.npy"])
    eval_lcm = {}
    for form in EVAL_FORMS:
        eval_lcm[form] = os.path.join(args.work_dir, "eval-%s.lcm" % form)
        run([os.path.join(args.bin, "lcc"), model, "-o", eval_lcm[form]] +
            form_flags(form, 1000, args.lsh_bucket_size), log)
    results = []
    for form in args.train_forms.split(","):
        lcm = os.path.join(args.work_dir, "train-%s.lcm" % form)
        checkpoint = os.path.join(args.work_dir, "train-%s.safetensors" % form)
        run([os.path.join(args.bin, "lcc"), model, "--train",
             "--optimizer=adam", "--lr=" + args.lr, "--grad-clip=1", "-o",
             lcm] + form_flags(form, 0, args.lsh_bucket_size), log)
        start = time.time()
        report = json.loads(run(
            [os.path.join(args.bin, "lcc-train"), lcm,
             "--data=" + files(data["train"]),
             "--eval-data=" + files(data["eval"]), "--seed=0",
             "--steps=%d" % args.steps, "--eval-every=%d" % max(1, args.steps // 4),
             "--checkpoint=" + checkpoint, "--report=json"] +
            threads_flag(args), log))
        seconds = time.time() - start
        row = {"train": form, "steps": args.steps, "seconds": round(seconds, 1),
               "ms_per_step": report["ms_per_step"],
               "final_loss": report["loss"][-1],
               "eval_loss": report["eval_loss"][-1]}
        for eval_form in EVAL_FORMS:
            row[eval_form] = accuracy(args, eval_lcm[eval_form], checkpoint,
                                      data["eval"], log)
        results.append(row)
        print(json.dumps(row), flush=True)
    print("\n| train \\ eval | " + " | ".join(EVAL_FORMS) +
          " | steps | wall | ms/step | eval loss |")
    print("| --- " * (len(EVAL_FORMS) + 5) + "|")
    for row in results:
        print("| %s | %s | %d | %.0f s | %.0f | %.3f |" % (
            row["train"],
            " | ".join("%.1f%%" % (100 * row[f]) for f in EVAL_FORMS),
            row["steps"], row["seconds"], row["ms_per_step"], row["eval_loss"]))


if __name__ == "__main__":
    main()
