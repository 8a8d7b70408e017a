#!/usr/bin/env python3
"""Runs the commands of a Markdown tutorial and checks what it shows.

  run-doc-commands.py DOC.md --cwd=DIR --scratch=DIR [--env=NAME=VALUE]...
                      [--path=DIR]...

In DOC.md:
- every ```console block holds commands (lines starting "$ ", continued by
  a trailing backslash) and, after each, lines of its output: each shown
  line must appear in the command's output (stdout and stderr), in order,
  a line "..." standing for any lines;
- every ```cpp, ```mlir or ```cmake block right after a line
  "<!-- from PATH -->" must appear verbatim in PATH (relative to --cwd).

The commands run in one bash, in order, from --cwd, with the --env
variables set and each --path folder appended to PATH (with ccache as the
compiler launcher of CMake builds where there is one); the first that fails, or whose output lacks a shown line,
fails the run with the command, its output and what was missing.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys


def parse(text):
    commands, excerpts = [], []
    lines = text.splitlines()
    i = 0
    source = None
    while i < len(lines):
        line = lines[i]
        match = re.match(r"<!-- from (\S+) -->", line.strip())
        if match:
            source = match.group(1)
            i += 1
            continue
        fence = re.match(r"```(\w+)", line)
        if not fence:
            if line.strip():
                source = None
            i += 1
            continue
        kind = fence.group(1)
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        if kind == "console":
            commands.extend(console_commands(body))
        elif source:
            excerpts.append((source, "\n".join(body)))
        source = None
    return commands, excerpts


def console_commands(body):
    commands = []
    j = 0
    while j < len(body):
        line = body[j]
        if not line.startswith("$ "):
            if commands:
                commands[-1][1].append(line)
            j += 1
            continue
        command = line[2:]
        while command.endswith("\\") and j + 1 < len(body):
            j += 1
            command = command[:-1] + "\n" + body[j]
        commands.append((command, []))
        j += 1
    return commands


def shown_lines_missing(shown, output):
    """The first shown line not found in order in output, or None."""
    out = output.splitlines()
    k = 0
    for want in shown:
        want = want.strip()
        if not want or want == "...":
            continue
        while k < len(out) and want not in out[k]:
            k += 1
        if k == len(out):
            return want
        k += 1
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("doc")
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("--path", action="append", default=[])
    args = parser.parse_args()
    with open(args.doc) as f:
        commands, excerpts = parse(f.read())
    if not commands:
        sys.exit("run-doc-commands: no ```console commands in " + args.doc)

    for path, excerpt in excerpts:
        with open(os.path.join(args.cwd, path)) as f:
            if excerpt not in f.read():
                sys.exit("run-doc-commands: %s: an excerpt is not in %s "
                         "(any more):\n%s" % (args.doc, path, excerpt))

    os.makedirs(args.scratch, exist_ok=True)
    script = ["set -u"]
    for folder in args.path:
        script.append("export PATH=\"$PATH\":%s" % shlex_quote(folder))
    if shutil.which("ccache"):
        script.append("export CMAKE_CXX_COMPILER_LAUNCHER=ccache")
    for name_value in args.env:
        name, value = name_value.split("=", 1)
        script.append("export %s=%s" % (name, shlex_quote(value)))
    for n, (command, _) in enumerate(commands):
        out = os.path.join(args.scratch, "out.%d" % n)
        script.append("{ %s\n} > %s 2>&1 || { echo %d > %s/failed; exit 1; }"
                      % (command, out, n, args.scratch))
    with open(os.path.join(args.scratch, "commands.sh"), "w") as f:
        f.write("\n".join(script) + "\n")
    failed_marker = os.path.join(args.scratch, "failed")
    if os.path.exists(failed_marker):
        os.remove(failed_marker)
    subprocess.run(["bash", os.path.join(args.scratch, "commands.sh")],
                   cwd=args.cwd)

    for n, (command, shown) in enumerate(commands):
        out_path = os.path.join(args.scratch, "out.%d" % n)
        output = open(out_path).read() if os.path.exists(out_path) else ""
        if os.path.exists(failed_marker) and \
                int(open(failed_marker).read()) == n:
            sys.exit("run-doc-commands: command %d failed:\n$ %s\n%s"
                     % (n + 1, command, output))
        missing = shown_lines_missing(shown, output)
        if missing is not None:
            sys.exit("run-doc-commands: the output of command %d lacks the "
                     "line the tutorial shows:\n  %s\n$ %s\n%s"
                     % (n + 1, missing, command, output))
    print("%d commands run, %d excerpts checked" %
          (len(commands), len(excerpts)))


def shlex_quote(value):
    import shlex
    return shlex.quote(value)


if __name__ == "__main__":
    main()
