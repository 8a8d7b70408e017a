#!/usr/bin/env python3
"""npy-join.py --shape=D0,D1,... OUT.npy IN.npy...: the f32 data of the
inputs, one after the other, as one .npy of the given shape (their element
counts must add up to it). Tests use it to stack segments, or to put a
memory before a segment when the batch is 1."""
import struct
import sys


def read_f32(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit("npy-join: %s is not a .npy file" % path)
    if data[6] == 1:
        length, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        length, start = struct.unpack("<I", data[8:12])[0], 12
    header = data[start:start + length].decode("latin1")
    if "'<f4'" not in header or "'fortran_order': False" not in header:
        sys.exit("npy-join: %s is not C-order f32" % path)
    return data[start + length:]


def main():
    if len(sys.argv) < 4 or not sys.argv[1].startswith("--shape="):
        sys.exit(__doc__)
    shape = [int(d) for d in sys.argv[1][len("--shape="):].split(",")]
    body = b"".join(read_f32(path) for path in sys.argv[3:])
    count = 1
    for d in shape:
        count *= d
    if len(body) != 4 * count:
        sys.exit("npy-join: the inputs hold %d values, the shape %d" %
                 (len(body) // 4, count))
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        "".join("%d, " % d for d in shape))
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(sys.argv[2], "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1") + body)


if __name__ == "__main__":
    main()
