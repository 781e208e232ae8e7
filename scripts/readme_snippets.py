#!/usr/bin/env python3
"""Runs the README's quick starts that are not Rust doctests.

- A block after an ``<!-- excerpt: PATH -->`` line must appear in PATH, line for line (so an
  excerpt of a file the test command builds cannot drift from it).
- Every ``c`` block with a ``main`` is compiled with ``cc -std=c11 -Wall -Wextra -Werror
  -pedantic`` against ``include/`` and run; it must exit 0.

The Rust blocks run as doctests (``src/lib.rs`` includes the README) and the Python ones as
doctests of the Python suite (``python/tests/test_docs.py``). Usage: ``readme_snippets.py
[FILE.md ...]`` (default ``README.md``); exits 1 on the first failure, naming it.
"""

import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\S*)\s*$")
EXCERPT = re.compile(r"^<!-- excerpt: (\S+) -->$")


def blocks(text):
    """Yields (line number, info, body lines, excerpt path or None)."""
    lines = text.splitlines()
    excerpt = None
    i = 0
    while i < len(lines):
        marker = EXCERPT.match(lines[i])
        if marker:
            excerpt = marker.group(1)
            i += 1
            continue
        fence = FENCE.match(lines[i])
        if not fence or fence.group(1) == "":
            if lines[i].strip():
                excerpt = None
            i += 1
            continue
        start, info, body = i + 1, fence.group(1), []
        i += 1
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        i += 1
        yield start, info, body, excerpt
        excerpt = None


def contains(haystack, needle):
    n = len(needle)
    return any(haystack[k : k + n] == needle for k in range(len(haystack) - n + 1))


def run_c(body, where):
    with tempfile.TemporaryDirectory() as tmp:
        source, binary = os.path.join(tmp, "quickstart.c"), os.path.join(tmp, "quickstart")
        with open(source, "w") as out:
            out.write("\n".join(body) + "\n")
        cc = os.environ.get("CC", "cc")
        flags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Iinclude"]
        subprocess.run([cc, *flags, source, "-o", binary], check=True)
        result = subprocess.run([binary], capture_output=True, text=True)
        print(f"{where}: C quick start ran (exit {result.returncode}): {result.stdout.strip()}")
        return result.returncode == 0


def main():
    files = sys.argv[1:] or ["README.md"]
    checked = 0
    for path in files:
        text = open(path, encoding="utf-8").read()
        for line, info, body, excerpt in blocks(text):
            where = f"{path}:{line}"
            if excerpt is not None:
                source = open(excerpt, encoding="utf-8").read().splitlines()
                if not contains(source, body):
                    print(f"{where}: the excerpt is not in {excerpt} (update one or the other)")
                    return 1
                checked += 1
            elif info == "c" and any(re.match(r"int main\(", l) for l in body):
                if not run_c(body, where):
                    print(f"{where}: the C quick start failed")
                    return 1
                checked += 1
    print(f"{checked} quick starts checked (excerpts and C programs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
