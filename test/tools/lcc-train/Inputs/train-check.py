#!/usr/bin/env python3
"""Checks what lcc-train writes, for the lit tests beside this folder.

  train-check.py report REPORT.json --steps=N [--evals=K] [--decreasing]
      [--eval-decreasing] [--ranks=P]
      the --report=json object has exactly the documented fields, N losses,
      K eval losses; with --decreasing the last loss is below the first,
      with --eval-decreasing the last eval loss below the first; with
      --ranks=P (P > 1) also the fields of a job of P ranks
  train-check.py dump FILE.safetensors
      one line per tensor: name, dtype, shape and its values (%.9g)
  train-check.py same-loss REPORT.json RESULT.npy
      the last eval loss of the report equals the f32 loss in RESULT.npy
      (lcc-run of the loss function with the checkpoint), or the mean of
      the losses it stacks (lcc-run --segments: one per eval batch)
  train-check.py at-most PARAMS.safetensors NAME BOUND
      every value of tensor NAME is at most BOUND (prints them)
  train-check.py fill IN.safetensors NAME VALUE OUT.safetensors
      IN with every value of tensor NAME (f32) set to VALUE
  train-check.py sgd-step BEFORE.safetensors GRADIENTS.safetensors
      AFTER.safetensors [--lr=F] [--weight-decay=F] [--grad-clip=F]
      after one step of --optimizer=sgd, each parameter p is
      p - lr (c g + wd p) (up to f32 rounding), c the clipping factor
      min(1, clip / (|g| + 1e-6)) of the gradients' global norm (1 without
      --grad-clip); by default lr 1: exactly p less its gradient
  train-check.py adam-steps BEFORE.safetensors G1.safetensors
      G2.safetensors AFTER.safetensors --lr=F --beta1=F --beta2=F
      --epsilon=F [--weight-decay=F]
      two steps of torch.optim.AdamW from BEFORE, with the gradients G1
      (at BEFORE) and G2 (after the first step), replayed in double: AFTER
      holds the result
  train-check.py same-params A.safetensors B.safetensors [--rtol=R]
      A and B hold the same weights and Adam state, equal to R (default
      1e-5) relative to the largest value of each tensor (the optimizer.*
      state may differ: one module may accumulate gradients)
  train-check.py same-losses A.json B.json [--rtol=R]
      the reports' step losses agree to R (default 1e-5)
  train-check.py plot FILE.svg --steps=N --evals=K [--first=S]
      FILE is well-formed SVG whose loss line has a point per step (steps
      S.. from left to right) and whose eval loss has K points
  train-check.py schedule REPORT.json --lr=F --steps=T [--warmup=W]
      [--min-lr=F] [--schedule=constant|linear|cosine] [--first=S]
      the report's "lr" list is the schedule docs/runtime.md defines, its
      entries steps S.. (default 1) of a run of T steps
  train-check.py toy PARAMS.safetensors X.npy WEIGHT.npy REPORT.json
      --steps=N [--eval-x=X.npy --eval-weight=W.npy] [--eval-every=K]
      [--shuffle-seed=S]
      replays lcc-train on lcm-testgen's train.lcm (the toy model of
      test/runtime/TestModules.h) in double precision: every step's batch
      (B = 4 rows from s*B, wrapping; with --shuffle-seed, those positions
      of each pass's permutation, computed here as DataOrder.h states it)
      and loss, and every eval loss
  train-check.py drop FILE.safetensors NAME OUT.safetensors
      FILE without tensor NAME, still marked a checkpoint
  train-check.py continues REPORT.json WHOLE.json
      the losses of REPORT are exactly the last ones of WHOLE

Plain Python 3 (no numpy): the files are small.
"""

import argparse
import json
import math
import struct
import sys


def fail(message):
    print("train-check: " + message)
    sys.exit(1)


DTYPES = {"F32": ("f", 4), "I32": ("i", 4), "I64": ("q", 8)}
NPY = {"<f4": "f", "<i4": "i", "<i8": "q"}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    start = 8 + size
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        code, width = DTYPES[entry["dtype"]]
        begin, end = entry["data_offsets"]
        count = (end - begin) // width
        values = struct.unpack("<%d%s" % (count, code),
                               data[start + begin:start + end])
        tensors[name] = (entry["dtype"], entry["shape"], list(values))
    return tensors


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        fail(path + " is not a .npy file")
    major = data[6]
    if major == 1:
        (size,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (size,) = struct.unpack("<I", data[8:12])
        start = 12
    header = data[start:start + size].decode("latin1")
    fields = eval(header)  # a Python dict literal, as numpy writes it
    code = NPY[fields["descr"]]
    shape = list(fields["shape"])
    count = 1
    for dim in shape:
        count *= dim
    width = 8 if code == "q" else 4
    body = data[start + size:start + size + width * count]
    return shape, list(struct.unpack("<%d%s" % (count, code), body))


def near(a, b, rtol):
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


def report(args):
    with open(args.file) as f:
        result = json.load(f)
    fields = {"steps", "loss", "eval_loss", "eval_steps", "ms_per_step",
              "peak_bytes"}
    # A module whose train_step reads optimizer.lr also reports each step's;
    # a job of several ranks (mpirun) its ranks' memory and traffic.
    ranks = {"ranks", "peak_bytes_per_rank", "sent_bytes_per_rank"}
    if args.ranks > 1:
        fields = fields | ranks
    if set(result) != fields and set(result) != fields | {"lr"}:
        fail("report fields %s, expected %s" % (sorted(result), sorted(fields)))
    if args.ranks > 1:
        if result["ranks"] != args.ranks:
            fail("report of %r ranks, expected %d" % (result["ranks"],
                                                      args.ranks))
        for key in ("peak_bytes_per_rank", "sent_bytes_per_rank"):
            values = result[key]
            if len(values) != args.ranks or not all(
                    isinstance(v, int) and v > 0 for v in values):
                fail("%s %r" % (key, values))
        if result["peak_bytes_per_rank"][0] != result["peak_bytes"]:
            fail("peak_bytes is not rank 0's")
    if result["steps"] != args.steps or len(result["loss"]) != args.steps:
        fail("report of %d steps with %d losses, expected %d" %
             (result["steps"], len(result["loss"]), args.steps))
    if args.evals is not None and len(result["eval_loss"]) != args.evals:
        fail("%d eval losses, expected %d" % (len(result["eval_loss"]),
                                             args.evals))
    if len(result["eval_steps"]) != len(result["eval_loss"]):
        fail("eval_steps and eval_loss differ in length")
    if result["eval_steps"][-1:] != [args.steps]:
        fail("the last evaluation is not after the last step")
    for value in result["loss"] + result["eval_loss"]:
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            fail("loss %r is not a finite number" % (value,))
    if not isinstance(result["ms_per_step"], (int, float)) or \
            result["ms_per_step"] < 0:
        fail("ms_per_step %r" % (result["ms_per_step"],))
    if not isinstance(result["peak_bytes"], int) or result["peak_bytes"] <= 0:
        fail("peak_bytes %r" % (result["peak_bytes"],))
    if args.decreasing and not result["loss"][-1] < result["loss"][0]:
        fail("the loss went from %r to %r" % (result["loss"][0],
                                              result["loss"][-1]))
    evals = result["eval_loss"]
    if args.eval_decreasing and not (len(evals) > 1 and evals[-1] < evals[0]):
        fail("the eval loss went %r" % (evals,))
    print("report ok: %d steps, %d evaluations" % (result["steps"],
                                                   len(result["eval_loss"])))


def dump(args):
    for name, (dtype, shape, values) in read_safetensors(args.file).items():
        print("%s %s %s %s" % (name, dtype, shape,
                               " ".join("%.9g" % v for v in values)))


def at_most(args):
    tensors = read_safetensors(args.file)
    if args.name not in tensors:
        fail("%s holds no tensor '%s'" % (args.file, args.name))
    values = tensors[args.name][2]
    print("%s: %s" % (args.name, " ".join("%.6g" % v for v in values)))
    above = [v for v in values if not v <= args.bound]
    if above:
        fail("%s has %d values above %g" % (args.name, len(above), args.bound))


def write_safetensors(path, tensors, metadata=None):
    """Writes TENSORS (name: (dtype, shape, values)) as .safetensors."""
    header, blobs, offset = {}, [], 0
    for name, (dtype, shape, values) in sorted(tensors.items()):
        code, width = DTYPES[dtype]
        blob = struct.pack("<%d%s" % (len(values), code), *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def fill(args):
    tensors = read_safetensors(args.file)
    if args.name not in tensors or tensors[args.name][0] != "F32":
        fail("%s holds no f32 tensor '%s'" % (args.file, args.name))
    dtype, shape, values = tensors[args.name]
    tensors[args.name] = (dtype, shape, [args.value] * len(values))
    write_safetensors(args.out, tensors)


def same_loss(args):
    with open(args.report) as f:
        expected = json.load(f)["eval_loss"][-1]
    shape, values = read_npy(args.result)
    if len(shape) > 1 or not values:
        fail("%s holds %s, not a loss or a stack of them" % (args.result, shape))
    # lcc-train sums the batches' losses in order, in double.
    mean = sum(values) / len(values)
    if not near(mean, expected, 1e-6):
        fail("lcc-run computes %r, the report says %r" % (mean, expected))
    print("same loss")


def gradient_pairs(before, gradients, after):
    """(name, values before, gradient, values after) of each parameter."""
    for name, (_, shape, values) in before.items():
        if name not in gradients or name not in after:
            fail("no gradient or no new value of %s" % name)
        if gradients[name][1] != shape or after[name][1] != shape:
            fail("%s: shapes %s, %s, %s" % (name, shape, gradients[name][1],
                                            after[name][1]))
        yield name, values, gradients[name][2], after[name][2]


def clip_factor(gradients, names, clip):
    if not clip:
        return 1.0
    norm = math.sqrt(sum(g * g for name in names
                         for g in gradients[name][2]))
    return min(1.0, clip / (norm + 1e-6))


def sgd_step(args):
    before = read_safetensors(args.before)
    gradients = read_safetensors(args.gradients)
    after = read_safetensors(args.after)
    c = clip_factor(gradients, before, args.grad_clip)
    for name, p0, g, p1 in gradient_pairs(before, gradients, after):
        for i, (b, d, a) in enumerate(zip(p0, g, p1)):
            expected = b - args.lr * (c * d + args.weight_decay * b)
            if not near(a, expected, 1e-6):
                fail("%s[%d]: %r - %r (%r c + %r p) = %r, after the step %r" %
                     (name, i, b, args.lr, d, args.weight_decay, expected, a))
    if args.lr == 1.0 and args.weight_decay == 0 and not args.grad_clip:
        print("each parameter moved by minus its gradient")
    else:
        print("each parameter moved by -%g (%.6g g + %g p)" %
              (args.lr, c, args.weight_decay))


def adam_steps(args):
    before = read_safetensors(args.before)
    g1 = read_safetensors(args.g1)
    g2 = read_safetensors(args.g2)
    after = read_safetensors(args.after)
    b1, b2, eps, lr, wd = (args.beta1, args.beta2, args.epsilon, args.lr,
                           args.weight_decay)
    worst = 0.0
    for name, p0, first, p2 in gradient_pairs(before, g1, after):
        second = g2[name][2]
        for i in range(len(p0)):
            p, m, v = p0[i], 0.0, 0.0
            for t, g in ((1, first[i]), (2, second[i])):
                p *= 1 - lr * wd
                m = b1 * m + (1 - b1) * g
                v = b2 * v + (1 - b2) * g * g
                p -= lr / (1 - b1 ** t) * m / (
                    math.sqrt(v) / math.sqrt(1 - b2 ** t) + eps)
            # Relative to the step's size: the update, not the weight.
            error = abs(p2[i] - p) / max(lr, abs(p - p0[i]))
            worst = max(worst, error)
            if error > 1e-4:
                fail("%s[%d]: two AdamW steps give %r, after them %r" %
                     (name, i, p, p2[i]))
    print("two AdamW steps replayed (beta1 %g, beta2 %g, eps %g)" % (b1, b2, eps))


def same_params(args):
    def compared(path):
        return {name: value for name, value in read_safetensors(path).items()
                if not name.startswith("optimizer.")}
    a = compared(args.a)
    b = compared(args.b)
    if sorted(a) != sorted(b):
        fail("tensors %s and %s" % (sorted(a), sorted(b)))
    worst = 0.0
    for name, (_, shape, values) in a.items():
        if b[name][1] != shape:
            fail("%s: shapes %s and %s" % (name, shape, b[name][1]))
        scale = max([1e-30] + [abs(v) for v in values])
        for i, (x, y) in enumerate(zip(values, b[name][2])):
            error = abs(x - y) / scale
            worst = max(worst, error)
            if error > args.rtol:
                fail("%s[%d]: %r and %r" % (name, i, x, y))
    print("same %d tensors (worst relative difference %.1e)" % (len(a), worst))


def same_losses(args):
    with open(args.a) as f:
        a = json.load(f)["loss"]
    with open(args.b) as f:
        b = json.load(f)["loss"]
    if len(a) != len(b):
        fail("%d and %d losses" % (len(a), len(b)))
    for step, (x, y) in enumerate(zip(a, b), 1):
        if not near(x, y, args.rtol):
            fail("step %d: loss %r and %r" % (step, x, y))
    print("same %d losses" % len(a))


def plot(args):
    import xml.etree.ElementTree as ElementTree
    svg = "{http://www.w3.org/2000/svg}"
    try:
        root = ElementTree.parse(args.file).getroot()
    except ElementTree.ParseError as error:
        fail("%s is not well-formed: %s" % (args.file, error))
    groups = {g.get("class"): g for g in root.iter(svg + "g")}
    if set(groups) != {"loss", "eval-loss"}:
        fail("groups %s" % sorted(groups))

    def points(group):
        line = group.find(svg + "polyline")
        return [tuple(map(float, p.split(",")))
                for p in line.get("points").split()]

    loss = points(groups["loss"])
    xs = [x for x, _ in loss]
    if len(loss) != args.steps or xs != sorted(xs) or len(set(xs)) != len(xs):
        fail("%d loss points, x %s" % (len(loss), xs))
    circles = list(groups["eval-loss"].iter(svg + "circle"))
    if len(points(groups["eval-loss"])) != args.evals or \
            len(circles) != args.evals:
        fail("%d eval points" % len(circles))
    labels = [t.text for t in root.iter(svg + "text")]
    if str(args.first) not in labels or \
            str(args.first + args.steps - 1) not in labels:
        fail("step labels %s" % labels)
    print("plot ok: %d loss points (steps %d-%d), %d eval points" % (
        len(loss), args.first, args.first + args.steps - 1, args.evals))


def schedule_lr(args, step):
    peak, low, warmup, total = args.lr, args.min_lr, args.warmup, args.steps
    if step <= warmup:
        return peak * step / warmup
    if args.schedule == "constant" or total <= warmup:
        return peak
    progress = min(1.0, (step - warmup) / (total - warmup))
    if args.schedule == "linear":
        return peak - (peak - low) * progress
    return low + (peak - low) * (1 + math.cos(math.pi * progress)) / 2


def schedule(args):
    with open(args.report) as f:
        rates = json.load(f)["lr"]
    for i, rate in enumerate(rates):
        step = args.first + i
        expected = schedule_lr(args, step)
        if not near(rate, expected, 1e-6):
            fail("step %d trained at lr %r, the schedule says %r" %
                 (step, rate, expected))
    print("lr of steps %d-%d as scheduled: %s" % (
        args.first, args.first + len(rates) - 1,
        " ".join("%.4g" % r for r in rates)))


MASK = (1 << 64) - 1


def split_mix64(state):
    """One SplitMix64 number and the next state (DataOrder.cpp)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31), state


def permutation(seed, epoch, n):
    """The rows of pass `epoch` under --shuffle --seed=SEED, as
    tools/lcc-train/DataOrder.h states them, written again here."""
    state = seed ^ (((epoch + 1) * 0x9E3779B97F4A7C15) & MASK)
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        limit = MASK - MASK % (i + 1)
        while True:
            r, state = split_mix64(state)
            if r < limit:
                break
        j = r % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def toy(args):
    w = read_safetensors(args.params)["w"][2]
    x_shape, x = read_npy(args.x)
    _, weight = read_npy(args.weight)
    rows, batch = x_shape[0], 4
    passes = {}

    def row_at(position, n):
        if args.shuffle_seed is None:
            return position % n
        epoch = position // n
        if epoch not in passes:
            passes[epoch] = permutation(args.shuffle_seed, epoch, n)
        return passes[epoch][position % n]

    def batch_at(xs, ws, start, n, shuffled=False):
        picked = [row_at(start + r, n) if shuffled else (start + r) % n
                  for r in range(batch)]
        return ([xs[16 * r:16 * r + 16] for r in picked],
                [ws[r] for r in picked])

    def loss(xb, wb, w):
        return sum(wb[b] * (xb[b][j] - w[j]) ** 2
                   for b in range(batch) for j in range(16)) / 64

    eval_x, eval_weight, eval_rows = x, weight, rows
    if args.eval_x:
        eval_shape, eval_x = read_npy(args.eval_x)
        _, eval_weight = read_npy(args.eval_weight)
        eval_rows = eval_shape[0]
    losses, evals = [], []
    for s in range(1, args.steps + 1):
        xb, wb = batch_at(x, weight, (s - 1) * batch, rows, shuffled=True)
        losses.append(loss(xb, wb, w))
        w = [w[j] - 4 * 2 / 64 * sum(wb[b] * (w[j] - xb[b][j])
                                     for b in range(batch))
             for j in range(16)]
        if s == args.steps or (args.eval_every and s % args.eval_every == 0):
            count = eval_rows // batch
            evals.append(sum(loss(*batch_at(eval_x, eval_weight, b * batch,
                                            eval_rows), w)
                             for b in range(count)) / count)
    with open(args.report) as f:
        result = json.load(f)
    for what, expected, actual in (("loss", losses, result["loss"]),
                                   ("eval_loss", evals, result["eval_loss"])):
        if len(expected) != len(actual):
            fail("%d %s values, expected %d" % (len(actual), what,
                                               len(expected)))
        for i, (e, a) in enumerate(zip(expected, actual)):
            if not near(a, e, 1e-5):
                fail("%s[%d] is %r, the replay gives %r" % (what, i, a, e))
    print("replayed %d steps and %d evaluations" % (len(losses), len(evals)))


def drop(args):
    """Writes FILE without tensor NAME (a damaged checkpoint)."""
    tensors = read_safetensors(args.file)
    if args.name not in tensors:
        fail("%s holds no tensor '%s'" % (args.file, args.name))
    del tensors[args.name]
    write_safetensors(args.out, tensors,
                      {"lcc.checkpoint": "damaged by train-check.py"})


def continues(args):
    """The losses of REPORT are the last ones of WHOLE, exactly."""
    with open(args.report) as f:
        part = json.load(f)["loss"]
    with open(args.whole) as f:
        whole = json.load(f)["loss"]
    if part != whole[len(whole) - len(part):]:
        fail("the resumed losses %s are not the last %d of %s" %
             (part, len(part), whole))
    print("continues: %d losses" % len(part))


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("report")
    p.add_argument("file")
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--evals", type=int)
    p.add_argument("--decreasing", action="store_true")
    p.add_argument("--eval-decreasing", action="store_true")
    p.add_argument("--ranks", type=int, default=1)
    p = commands.add_parser("dump")
    p.add_argument("file")
    p = commands.add_parser("at-most")
    p.add_argument("file")
    p.add_argument("name")
    p.add_argument("bound", type=float)
    p = commands.add_parser("fill")
    p.add_argument("file")
    p.add_argument("name")
    p.add_argument("value", type=float)
    p.add_argument("out")
    p = commands.add_parser("same-loss")
    p.add_argument("report")
    p.add_argument("result")
    p = commands.add_parser("sgd-step")
    p.add_argument("before")
    p.add_argument("gradients")
    p.add_argument("after")
    p.add_argument("--lr", type=float, default=1.0)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--grad-clip", type=float, default=0.0)
    p = commands.add_parser("adam-steps")
    for name in ("before", "g1", "g2", "after"):
        p.add_argument(name)
    for name in ("--lr", "--beta1", "--beta2", "--epsilon"):
        p.add_argument(name, type=float, required=True)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p = commands.add_parser("same-params")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rtol", type=float, default=1e-5)
    p = commands.add_parser("same-losses")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rtol", type=float, default=1e-5)
    p = commands.add_parser("plot")
    p.add_argument("file")
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--evals", type=int, required=True)
    p.add_argument("--first", type=int, default=1)
    p = commands.add_parser("schedule")
    p.add_argument("report")
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--min-lr", type=float, default=0.0)
    p.add_argument("--schedule", default="constant")
    p.add_argument("--first", type=int, default=1)
    p = commands.add_parser("toy")
    p.add_argument("params")
    p.add_argument("x")
    p.add_argument("weight")
    p.add_argument("report")
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--eval-x")
    p.add_argument("--eval-weight")
    p.add_argument("--eval-every", type=int, default=0)
    p.add_argument("--shuffle-seed", type=int)
    p = commands.add_parser("drop")
    p.add_argument("file")
    p.add_argument("name")
    p.add_argument("out")
    p = commands.add_parser("continues")
    p.add_argument("report")
    p.add_argument("whole")
    args = parser.parse_args()
    {"report": report, "dump": dump, "at-most": at_most, "fill": fill, "same-loss": same_loss,
     "sgd-step": sgd_step, "adam-steps": adam_steps, "schedule": schedule,
     "same-params": same_params, "same-losses": same_losses, "plot": plot,
     "toy": toy, "drop": drop,
     "continues": continues}[args.command](args)


if __name__ == "__main__":
    main()
