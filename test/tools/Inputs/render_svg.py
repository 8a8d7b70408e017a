#!/usr/bin/env python3
"""Renders an SVG lcc wrote in headless Chromium and says what is drawn.

  render_svg.py FILE.svg [--chromium=PATH]

Chromium (Debian's chromium) screenshots the file in a window 40 pixels
wider and taller than the SVG's own width and height; the PNG is decoded
here (standard library only) and one line printed:

  rendered W x H: N ink pixels, C colours, ink at the right edge: E

"ink" is any pixel that is not white. A picture that draws nothing has no
ink; text that runs past the SVG's width is cut at its right edge, which
then has ink in its last columns (E > 0): nothing lcc draws reaches its
own edge.
"""

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib


def png_pixels(path):
    """(width, height, rows of RGBA bytes) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("render_svg: %s is not a PNG" % path)
    at, chunks, header = 8, [], None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        at += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        sys.exit("render_svg: unexpected PNG format %s" % (header,))
    step = 4 if colour == 6 else 3
    raw = zlib.decompress(b"".join(chunks))
    stride = width * step
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - step] if i >= step else 0
            up = previous[i]
            corner = previous[i - step] if i >= step else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                guess = left if pa <= pb and pa <= pc else \
                    up if pb <= pc else corner
                line[i] = (line[i] + guess) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, step, rows


def svg_size(path):
    with open(path) as f:
        head = f.read(2000)
    match = re.search(r'<svg[^>]*\bwidth="([0-9.]+)"[^>]*\bheight="([0-9.]+)"',
                      head)
    if not match:
        sys.exit("render_svg: %s has no <svg width height>" % path)
    return int(float(match.group(1))), int(float(match.group(2)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("svg")
    parser.add_argument("--chromium", default=shutil.which("chromium") or
                        "/usr/bin/chromium")
    args = parser.parse_args()
    width, height = svg_size(args.svg)
    with tempfile.TemporaryDirectory() as work:
        shot = os.path.join(work, "shot.png")
        subprocess.run(
            [args.chromium, "--headless", "--no-sandbox", "--disable-gpu",
             "--hide-scrollbars", "--user-data-dir=" + work,
             "--window-size=%d,%d" % (width + 40, height + 40),
             "--screenshot=" + shot, "file://" + os.path.abspath(args.svg)],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            timeout=120)
        _, _, step, rows = png_pixels(shot)
    ink, colours, edge = 0, set(), 0
    for y in range(min(height, len(rows))):
        row = rows[y]
        for x in range(width):
            pixel = row[x * step:x * step + 3]
            if pixel != b"\xff\xff\xff":
                ink += 1
                colours.add(pixel)
                if x >= width - 2:
                    edge += 1
    print("rendered %d x %d: %d ink pixels, %d colours, ink at the right "
          "edge: %d" % (width, height, ink, len(colours), edge))


if __name__ == "__main__":
    main()
