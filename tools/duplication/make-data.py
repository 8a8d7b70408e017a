#!/usr/bin/env python3
"""The Reformer duplication task's data (Kitaev et al. 2020, section 5).

Each row is a sequence `0 w 0 w` of LENGTH tokens, w of LENGTH/2 - 1
symbols drawn uniformly from 1..SYMBOLS. Writes, as .npy in DIR:
  tokens.npy  [ROWS, LENGTH] i32, the sequences;
  labels.npy  [ROWS, LENGTH] i32, the next token (0 after the last);
  weights.npy [ROWS, LENGTH] f32, 1 where the next token is in the second
              w (the positions the loss and the accuracy count), else 0.
Python's own random module seeded with --seed: the same flags write the
same files.
"""
import argparse
import os
import random
import struct
import sys


def write_npy(path, dtype, shape, values):
    """A C-order little-endian .npy (v1.0) of '<i4' or '<f4' values."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        dtype, ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""))
    # The header, its newline included, pads to a multiple of 64 bytes.
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    code = "i" if dtype == "<i4" else "f"
    with open(path + ".tmp", "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        out.write(header.encode("latin1"))
        out.write(struct.pack("<%d%s" % (len(values), code), *values))
    os.replace(path + ".tmp", path)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--length", type=int, default=256)
    parser.add_argument("--symbols", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-dir", required=True)
    args = parser.parse_args()
    if args.rows < 1 or args.length < 4 or args.length % 2 or args.symbols < 1:
        sys.exit("make-data.py: error: expected --rows >= 1, an even "
                 "--length >= 4 and --symbols >= 1")
    rng = random.Random(args.seed)
    half = args.length // 2
    tokens, labels, weights = [], [], []
    for _ in range(args.rows):
        w = [rng.randint(1, args.symbols) for _ in range(half - 1)]
        row = [0] + w + [0] + w
        tokens += row
        labels += row[1:] + [0]
        # Position t predicts token t + 1; the second w is tokens half+1..end.
        weights += [1.0 if half <= t < args.length - 1 else 0.0
                    for t in range(args.length)]
    os.makedirs(args.output_dir, exist_ok=True)
    shape = (args.rows, args.length)
    write_npy(os.path.join(args.output_dir, "tokens.npy"), "<i4", shape, tokens)
    write_npy(os.path.join(args.output_dir, "labels.npy"), "<i4", shape, labels)
    write_npy(os.path.join(args.output_dir, "weights.npy"), "<f4", shape, weights)


if __name__ == "__main__":
    main()
