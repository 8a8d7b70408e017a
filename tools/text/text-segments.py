#!/usr/bin/env python3
"""A text as consecutive segments, for training a model with a memory.

Reads FILE... (bytes, concatenated in order), and writes, as .npy in DIR:
  tokens.npy       [N, LENGTH] i32, segment s is bytes s*LENGTH ..;
  labels.npy       [N, LENGTH] i32, the byte after each token;
  eval-tokens.npy  and eval-labels.npy, the same for the last
                   --eval-segments segments (the end of the text), which
                   the training files then leave out.
Rows are in text order, so that lcc-train --carry feeds each segment the
memories of the one before (batch 1). Tokens are bytes: a vocabulary of
256, as the bundled models have.
"""
import argparse
import os
import struct
import sys


def write_npy(path, shape, values):
    """A C-order little-endian .npy (v1.0) of '<i4' values."""
    header = "{'descr': '<i4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(str(d) for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path + ".tmp", "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        out.write(header.encode("latin1"))
        out.write(struct.pack("<%di" % len(values), *values))
    os.replace(path + ".tmp", path)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--length", type=int, required=True,
                        help="tokens per segment (the model's segment)")
    parser.add_argument("--eval-segments", type=int, default=0,
                        help="segments at the end kept for evaluation")
    parser.add_argument("--out", required=True, metavar="DIR")
    args = parser.parse_args()
    text = b""
    for name in args.files:
        try:
            with open(name, "rb") as f:
                text += f.read()
        except OSError as e:
            sys.exit("text-segments.py: error: %s: %s" % (name, e.strerror))
    if args.length < 1:
        sys.exit("text-segments.py: error: --length must be >= 1")
    segments = (len(text) - 1) // args.length
    if args.eval_segments < 0 or segments - args.eval_segments < 1:
        sys.exit("text-segments.py: error: %d bytes make %d segments of %d; "
                 "%d for evaluation leave none to train on"
                 % (len(text), segments, args.length, args.eval_segments))
    os.makedirs(args.out, exist_ok=True)
    train = segments - args.eval_segments
    for prefix, first, count in (("", 0, train),
                                 ("eval-", train, args.eval_segments)):
        if count == 0:
            continue
        start, end = first * args.length, (first + count) * args.length
        write_npy(os.path.join(args.out, prefix + "tokens.npy"),
                  (count, args.length), list(text[start:end]))
        write_npy(os.path.join(args.out, prefix + "labels.npy"),
                  (count, args.length), list(text[start + 1:end + 1]))
    print("%d bytes: %d training segments of %d, %d for evaluation"
          % (len(text), train, args.length, args.eval_segments))


if __name__ == "__main__":
    main()
