#!/usr/bin/env bash
# An A/B of the wheel's two export rows (`ours.__dlpack__(max_version=(1, 3))` and
# `np.from_dlpack(ours)`, each against NumPy's own, alternating in one process) that where the
# machine places the extension in memory cannot decide. The same bytes copied to a new file (new
# page-cache pages, so new physical addresses for its code and data) move these rows by up to
# 20% on the development machine, consistently across processes (BENCHMARKS.md, issue 37, fourth
# round): more than most changes worth measuring, and the reason one build's figures can be a
# fluke. So each revision's extension is copied to C fresh files, each copy timed in N fresh
# processes, copies and revisions alternating (and, with --builds K, built from K source
# directories, which also changes the code's layout); a change is real when the distributions
# move, not one figure.
#
#   scripts/bench_layouts.sh [--builds K] [--copies C] [--runs N] REV...
#                                               # defaults: 1 build, 6 copies, 2 runs each
#
# Worktrees, builds and copies live under target/layouts/ (the wheel's fat-LTO build, a minute
# or two each on 2 cores); builds are reused when present, copies made fresh. Needs the test
# command's .venv.
set -euo pipefail

builds=1
copies=6
runs=2
while [ $# -gt 0 ]; do
  case "$1" in
    --builds) builds=$2; shift 2 ;;
    --copies) copies=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { sed -n '2,18p' "$0"; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
python=$root/.venv/bin/python
layouts=$root/target/layouts
mkdir -p "$layouts"

# Builds and copies at paths of equal length: 12-digit revisions.
installs=()
for rev in "$@"; do
  short=$(git -C "$root" rev-parse --short=12 "$rev")
  for k in $(seq 1 "$builds"); do
    source=$layouts/src-$short-$k
    site=$layouts/site-$short-$k
    if [ ! -f "$site/.complete" ]; then
      [ -d "$source" ] || git -C "$root" worktree add -q --detach "$source" "$short"
      echo "building $short ($k of $builds) ..." >&2
      (cd "$source" && PATH="$root/.venv/bin:$PATH" CARGO_TARGET_DIR=$source/target \
        "$python" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
        --target "$site" ./python) >"$layouts/build-$short-$k.log" 2>&1 ||
        { echo "build failed: $layouts/build-$short-$k.log" >&2; exit 1; }
      touch "$site/.complete"
    fi
    for c in $(seq 1 "$copies"); do
      copy=$layouts/copy-$short-$k-$c
      rm -rf "$copy"
      mkdir -p "$copy"
      cp -r "$site/dlpack_abi" "$copy/"
      installs+=("$copy")
    done
  done
done

measure='
import os, statistics, timeit
os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np
import dlpack_abi
ours = dlpack_abi.Tensor.from_dlpack(np.arange(1000, dtype=np.float32))
array = np.arange(1000, dtype=np.float32)
names = dict(mv=(1, 3), f=ours.__dlpack__, g=array.__dlpack__, fd=np.from_dlpack, ours=ours,
             array=array)
for row, mine, peer in (("__dlpack__", "f(max_version=mv)", "g(max_version=mv)"),
                        ("np.from_dlpack(ours)", "fd(ours)", "fd(array)")):
    o, p = [], []
    for r in range(15):
        pair = ((o, mine), (p, peer)) if r % 2 == 0 else ((p, peer), (o, mine))
        for runs, statement in pair:
            runs.append(timeit.timeit(statement, number=20000, globals=names))
    print(row, statistics.median(x / y for x, y in zip(o, p)))
'
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for run in $(seq 1 "$runs"); do
  for copy in "${installs[@]}"; do
    OPENBLAS_NUM_THREADS=1 PYTHONPATH=$copy "$python" -c "$measure" |
      sed "s|^|$(basename "$copy") |" >>"$results"
  done
done
"$python" - "$results" <<'SUMMARY'
import collections, statistics, sys
processes = collections.defaultdict(list)
copies = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    copy, rest = line.split(" ", 1)
    row, ratio = rest.rsplit(" ", 1)
    revision = copy.removeprefix("copy-").split("-")[0]
    processes[(revision, row)].append(float(ratio))
    copies[(revision, row)][copy].append(float(ratio))
print("| revision | row | median of all processes' ratios to NumPy | each copy's median, sorted |")
print("|---|---|---:|---|")
for (revision, row), values in sorted(processes.items(), key=lambda item: (item[0][1], item[0][0])):
    medians = sorted(statistics.median(v) for v in copies[(revision, row)].values())
    print(f"| {revision} | `{row}` | {statistics.median(values):.3f}x | "
          + " ".join(f"{m:.2f}" for m in medians) + " |")
SUMMARY
