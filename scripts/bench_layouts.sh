#!/usr/bin/env bash
# An A/B of the wheel's two export rows (`ours.__dlpack__(max_version=(1, 3))` and
# `np.from_dlpack(ours)`, each against NumPy's own, alternating in one process) that code layout
# cannot decide. The same source built from another directory lays its code out differently
# (path dependencies' metadata hashes change symbol names, and with them LLVM's order), and on
# this machine that alone moves these rows by up to 10% (BENCHMARKS.md, issue 37, fourth round):
# more than most changes worth measuring. So each revision is built from K source directories,
# each build timed in N fresh processes, builds and revisions alternating; a change is real when
# its builds' medians all move.
#
#   scripts/bench_layouts.sh [--builds K] [--runs N] REV...   # defaults: 3 builds, 4 runs
#
# Worktrees and installs live under target/layouts/ (the wheel's fat-LTO build, about two
# minutes each on 2 cores); both are reused when present. Needs the test command's .venv.
set -euo pipefail

builds=3
runs=4
while [ $# -gt 0 ]; do
  case "$1" in
    --builds) builds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { sed -n '2,14p' "$0"; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
python=$root/.venv/bin/python
layouts=$root/target/layouts
mkdir -p "$layouts"

# Installs at paths of equal length (the install path moves the rows too): 12-digit revisions.
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
    installs+=("$site")
  done
done

measure='
import os, statistics, sys, timeit
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
  for site in "${installs[@]}"; do
    OPENBLAS_NUM_THREADS=1 PYTHONPATH=$site "$python" -c "$measure" |
      sed "s|^|$(basename "$site") |" >>"$results"
  done
done
"$python" - "$results" <<'EOF'
import collections, statistics, sys
ratios = collections.defaultdict(list)
for line in open(sys.argv[1]):
    site, rest = line.split(" ", 1)
    row, ratio = rest.rsplit(" ", 1)
    ratios[(site.removeprefix("site-"), row)].append(float(ratio))
print("| build | row | median of the processes' ratios to NumPy | range |")
print("|---|---|---:|---|")
for (build, row), values in sorted(ratios.items(), key=lambda item: (item[0][1], item[0][0])):
    print(f"| {build} | `{row}` | {statistics.median(values):.3f}x | "
          f"{min(values):.3f}x–{max(values):.3f}x |")
EOF
