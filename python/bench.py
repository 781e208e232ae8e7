"""Python-side exchange benchmark (BENCHMARKS.md): the speed goals of issues 16 and 31 as ratios
measured in the same run, against NumPy's own exchange (the baseline), apache-tvm-ffi (the peer
consumer) or nanobind's `nb::ndarray` argument (the peer extension).

    pip install ./python ./python/examples/tensor-ops   # per-interpreter builds (or: --features abi3)
    .venv/bin/python python/bench.py

The nanobind peer (python/bench_nanobind) is built on first use with nanobind's own tools
(scikit-build-core and CMake, pinned, fetched from PyPI by pip's build isolation) into
target/bench-nanobind/, never into the venv; its rows say "not built" when that fails, as the
`tensor_ops` rows do without the example extension.

Each pair of statements is timed in alternation, REPEATS rounds of NUMBER calls each, so that a
change of the machine's load falls on both: the figures are the medians of the rounds, the
ratio the median of the rounds' ratios. A benchmark, not a test: it asserts nothing, and the
machine's load moves absolute figures more than ratios.
"""
import hashlib
import os
import re
import statistics
import subprocess
import sys
import timeit
from pathlib import Path

# OpenBLAS's idle worker threads spin on this 2-core machine and take time from the one measured.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import tvm_ffi  # noqa: E402
from tvm_ffi.core import DLTensorTestWrapper  # noqa: E402

import dlpack_abi  # noqa: E402
from dlpack_abi import Tensor  # noqa: E402

try:
    import tensor_ops  # noqa: E402
except ImportError:
    tensor_ops = None

# Short rounds, many of them: a round seldom straddles a change of the machine's load.
REPEATS = 31
NUMBER = 20_000
ROOT = Path(__file__).resolve().parents[1]
NANOBIND_SOURCE = ROOT / "python" / "bench_nanobind"
NANOBIND_FILES = ("pyproject.toml", "CMakeLists.txt", "ext.cpp")


def paired(ours, peer, names):
    """Medians of `ours` and `peer` in ns per call, and the median of their per-round ratios."""
    ours_runs, peer_runs = [], []
    for round_ in range(REPEATS):
        first, second = (ours_runs, ours), (peer_runs, peer)
        for runs, statement in (first, second) if round_ % 2 == 0 else (second, first):
            runs.append(timeit.timeit(statement, number=NUMBER, globals=names) / NUMBER * 1e9)
    ratio = statistics.median(o / p for o, p in zip(ours_runs, peer_runs))
    return statistics.median(ours_runs), statistics.median(peer_runs), ratio


def build():
    path = dlpack_abi.__file__ if dlpack_abi.__file__.endswith(".so") else (
        dlpack_abi.dlpack_abi.__file__)
    return "abi3 wheel" if path.endswith(".abi3.so") else "per-interpreter build"


def nanobind_module():
    """`bench_nanobind`, built with pip into a folder of target/ named after its sources and
    this interpreter (so that a change of either builds it again), or None if it cannot be."""
    digest = hashlib.sha256(sys.version.encode())
    for name in NANOBIND_FILES:
        digest.update((NANOBIND_SOURCE / name).read_bytes())
    site = ROOT / "target" / "bench-nanobind" / digest.hexdigest()[:16]
    if not (site / "complete").exists():
        print(f"building the nanobind peer into {site} ...", file=sys.stderr)
        built = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade",
             "--target", str(site), str(NANOBIND_SOURCE)])
        if built.returncode != 0:
            print("the nanobind peer did not build: its rows say 'not built'", file=sys.stderr)
            return None
        (site / "complete").touch()
    sys.path.insert(0, str(site))
    import bench_nanobind
    return bench_nanobind


def main():
    array = np.ones(1000, dtype=np.float32)
    doubles = np.ones(1000, dtype=np.float64)
    ours = Tensor.from_dlpack(array)
    # A tensor whose type has an exchange table (tvm-ffi's Tensor itself has none).
    peer = DLTensorTestWrapper(tvm_ffi.from_dlpack(array))
    nanobind = nanobind_module()
    # Callables bound once, so that no side pays an attribute lookup the other does not.
    names = dict(ours_from_dlpack=Tensor.from_dlpack, peer_from_dlpack=tvm_ffi.from_dlpack,
                 np_from_dlpack=np.from_dlpack, array=array, doubles=doubles, ours=ours,
                 peer=peer)
    for name, module, attribute in (
            ("ours_count", tensor_ops, "element_count"),
            ("ours_count_readwrite", tensor_ops, "element_count_readwrite"),
            ("nanobind_count", nanobind, "element_count"),
            ("nanobind_count_f64", nanobind, "element_count_f64")):
        names[name] = getattr(module, attribute, None)
    rows = []

    def row(goal, ours_statement, peer_statement, target):
        needed = [name for name in ("ours_count", "ours_count_readwrite", "nanobind_count",
                                    "nanobind_count_f64")
                  if name in ours_statement + peer_statement and names[name] is None]
        if needed:
            rows.append((goal, None, None, None, target))
        else:
            rows.append((goal, *paired(ours_statement, peer_statement, names), target))

    row("`Tensor.from_dlpack(numpy)` / `tvm_ffi.from_dlpack(numpy)`",
        "ours_from_dlpack(array)", "peer_from_dlpack(array)", "<= 1")
    row("`np.from_dlpack(ours)` / `np.from_dlpack(numpy)`",
        "np_from_dlpack(ours)", "np_from_dlpack(array)", "<= 1")
    row("`ours.__dlpack__(max_version=(1, 3))` / NumPy's",
        "ours.__dlpack__(max_version=(1, 3))", "array.__dlpack__(max_version=(1, 3))", "<= 1")
    row("`Tensor.from_dlpack(x)` through `x`'s exchange table, minus an empty method call on `x`",
        "ours_from_dlpack(peer)", "peer.__dlpack_device__()", "<= 80 ns above")
    row("`element_count(numpy)`: a `VersionedTensor` argument / nanobind's `nb::ndarray<>`",
        "ours_count(array)", "nanobind_count(array)", "<= 1")
    row("`element_count(numpy float64)`: a `VersionedTensor` argument / nanobind's "
        "`nb::ndarray<double, nb::c_contig, nb::device::cpu>`",
        "ours_count(doubles)", "nanobind_count_f64(doubles)", "<= 1")
    row("`element_count_readwrite(numpy float64)`: a `ReadwriteTensor<f64>` argument (borrow "
        "registered and checked) / nanobind's `nb::ndarray<double, nb::c_contig, nb::device::cpu>`",
        "ours_count_readwrite(doubles)", "nanobind_count_f64(doubles)", "<= 1")

    pinned = re.search(r'"nanobind==([^"]+)"', (NANOBIND_SOURCE / "pyproject.toml").read_text())
    nanobind_version = f"nanobind {pinned.group(1)}" if nanobind else "no nanobind"
    print(f"{build()}; numpy {np.__version__}, apache-tvm-ffi {tvm_ffi.__version__}, "
          f"{nanobind_version}, python {sys.version.split()[0]}; median ns per call of "
          f"{REPEATS} alternating rounds of {NUMBER} calls, float32 x 1000 unless named")
    print("| goal | ours (ns) | baseline or peer (ns) | result | goal |")
    print("|---|---:|---:|---:|---|")
    for goal, measured, baseline, ratio, target in rows:
        if measured is None:
            print(f"| {goal} | not built | | | {target} |")
            continue
        result = (f"{measured - baseline:.0f} ns above" if "above" in target
                  else f"{ratio:.2f}x")
        print(f"| {goal} | {measured:.0f} | {baseline:.0f} | {result} | {target} |")


if __name__ == "__main__":
    main()
