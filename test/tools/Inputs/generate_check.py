"""Checks lcc-generate's output for lcc-generate.test.

  generate_check.py shape TOKENS.npy PROMPT.npy --new=N
      TOKENS is i32 [batch, prompt + N] and begins with PROMPT
  generate_check.py end-token LCC_GENERATE MODEL.lcm WEIGHTS PROMPT.npy
      with --end-token set to the third token greedy decoding makes, the
      output stops right after it
  generate_check.py differ A.npy B.npy
      the two hold different tokens
"""

import subprocess
import sys
import tempfile

import numpy as np


def main():
    what = sys.argv[1]
    if what == "shape":
        tokens, prompt = np.load(sys.argv[2]), np.load(sys.argv[3])
        new = int(sys.argv[4].split("=")[1])
        assert tokens.dtype == np.int32, tokens.dtype
        assert tokens.shape == (prompt.shape[0], prompt.shape[1] + new), \
            tokens.shape
        assert (tokens[:, :prompt.shape[1]] == prompt).all()
    elif what == "end-token":
        tool, model, weights, prompt = sys.argv[2:6]
        with tempfile.TemporaryDirectory() as work:
            def generate(*extra):
                out = f"{work}/out.npy"
                subprocess.run([tool, model, f"--params={weights}",
                                f"--prompt-tokens={prompt}",
                                "--max-new-tokens=10", f"--output={out}",
                                *extra], check=True, capture_output=True)
                return np.load(out)
            p = np.load(prompt).shape[1]
            greedy = generate()
            end = int(greedy[0, p + 2])
            first = int(np.argmax(greedy[0, p:] == end))
            ended = generate(f"--end-token={end}")
            assert ended.shape == (1, p + first + 1), (ended.shape, first)
            assert (ended == greedy[:, :p + first + 1]).all()
    elif what == "differ":
        assert (np.load(sys.argv[2]) != np.load(sys.argv[3])).any()
    print("ok")


if __name__ == "__main__":
    main()
