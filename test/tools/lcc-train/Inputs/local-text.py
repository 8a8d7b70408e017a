#!/usr/bin/env python3
"""Writes N bytes of text whose every letter is fixed by the two before it.

  local-text.py N OUT

Letters a..p; byte t + 1 = (byte t + byte t - 1) mod 16 after two random
ones, restarted from two random letters every 61 bytes: a model predicts
it from the last two tokens, so attention needs only a span of 1.
"""

import random
import sys


def main():
    count, out = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(7)
    letters = []
    while len(letters) < count:
        run = [rng.randrange(16), rng.randrange(16)]
        while len(run) < 61:
            run.append((run[-1] + run[-2]) % 16)
        letters.extend(run)
    with open(out, "wb") as f:
        f.write(bytes(ord("a") + x for x in letters[:count]))


if __name__ == "__main__":
    main()
