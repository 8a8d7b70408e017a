#!/usr/bin/env python3
"""npy-join.py --shape=D0,D1,... OUT.npy IN.npy...: the data of the inputs
(all f32 or all i32), one after the other, as one .npy of the given shape
(their element counts must add up to it). Tests use it to stack segments,
or to put a memory before a segment when the batch is 1."""
import struct
import sys


def read(path):
    """(descr, data) of a C-order '<f4' or '<i4' .npy file."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit("npy-join: %s is not a .npy file" % path)
    if data[6] == 1:
        length, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        length, start = struct.unpack("<I", data[8:12])[0], 12
    header = data[start:start + length].decode("latin1")
    descr = "<f4" if "'<f4'" in header else "<i4" if "'<i4'" in header \
        else None
    if not descr or "'fortran_order': False" not in header:
        sys.exit("npy-join: %s is not C-order f32 or i32" % path)
    return descr, data[start + length:]


def main():
    if len(sys.argv) < 4 or not sys.argv[1].startswith("--shape="):
        sys.exit(__doc__)
    shape = [int(d) for d in sys.argv[1][len("--shape="):].split(",")]
    parts = [read(path) for path in sys.argv[3:]]
    descrs = set(descr for descr, _ in parts)
    if len(descrs) != 1:
        sys.exit("npy-join: the inputs' dtypes differ")
    descr = descrs.pop()
    body = b"".join(data for _, data in parts)
    count = 1
    for d in shape:
        count *= d
    if len(body) != 4 * count:
        sys.exit("npy-join: the inputs hold %d values, the shape %d" %
                 (len(body) // 4, count))
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape))
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(sys.argv[2], "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1") + body)


if __name__ == "__main__":
    main()
