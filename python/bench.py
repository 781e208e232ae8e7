"""Python-side exchange benchmark (BENCHMARKS.md): each of issue 16's four speed goals as a ratio
of medians measured in the same run, against NumPy's own exchange (the baseline) or
apache-tvm-ffi (the peer consumer).

    pip install ./python                 # the per-interpreter build (or: --features abi3)
    .venv/bin/python python/bench.py

A benchmark, not a test: it asserts nothing, and the machine's load moves absolute figures more
than ratios.
"""
import os
import statistics
import sys
import timeit

# OpenBLAS's idle worker threads spin on this 2-core machine and take time from the one measured.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import tvm_ffi  # noqa: E402
from tvm_ffi.core import DLTensorTestWrapper  # noqa: E402

import dlpack_abi  # noqa: E402
from dlpack_abi import Tensor  # noqa: E402

REPEATS = 15
NUMBER = 50_000


def per_call_ns(statement, **names):
    runs = timeit.repeat(statement, repeat=REPEATS, number=NUMBER, globals=names)
    return statistics.median(runs) / NUMBER * 1e9


def build():
    path = dlpack_abi.__file__ if dlpack_abi.__file__.endswith(".so") else (
        dlpack_abi.dlpack_abi.__file__)
    return "abi3 wheel" if path.endswith(".abi3.so") else "per-interpreter build"


def main():
    array = np.ones(1000, dtype=np.float32)
    ours = Tensor.from_dlpack(array)
    # A tensor whose type has an exchange table (tvm-ffi's Tensor itself has none).
    peer = DLTensorTestWrapper(tvm_ffi.from_dlpack(array))
    # Callables bound once, so that no side pays an attribute lookup the other does not.
    names = dict(ours_from_dlpack=Tensor.from_dlpack, peer_from_dlpack=tvm_ffi.from_dlpack,
                 np_from_dlpack=np.from_dlpack, array=array, ours=ours, peer=peer)
    time = lambda statement: per_call_ns(statement, **names)  # noqa: E731
    rows = []

    ours_import = time("ours_from_dlpack(array)")
    peer_import = time("peer_from_dlpack(array)")
    rows.append(("`Tensor.from_dlpack(numpy)` / `tvm_ffi.from_dlpack(numpy)`",
                 ours_import, peer_import, "<= 1"))

    ours_export = time("np_from_dlpack(ours)")
    numpy_exchange = time("np_from_dlpack(array)")
    rows.append(("`np.from_dlpack(ours)` / `np.from_dlpack(numpy)`",
                 ours_export, numpy_exchange, "<= 1"))

    ours_capsule = time("ours.__dlpack__(max_version=(1, 3))")
    numpy_capsule = time("array.__dlpack__(max_version=(1, 3))")
    rows.append(("`ours.__dlpack__(max_version=(1, 3))` / NumPy's",
                 ours_capsule, numpy_capsule, "<= 1"))

    through_table = time("ours_from_dlpack(peer)")
    empty_call = time("peer.__dlpack_device__()")
    rows.append(("`Tensor.from_dlpack(x)` through `x`'s exchange table, minus an empty method "
                 "call on `x`", through_table, empty_call, "<= 80 ns above"))

    print(f"{build()}; numpy {np.__version__}, apache-tvm-ffi {tvm_ffi.__version__}, "
          f"python {sys.version.split()[0]}; median ns per call, {REPEATS} x {NUMBER} calls, "
          f"float32 x 1000")
    print("| goal | ours (ns) | baseline or peer (ns) | result | goal |")
    print("|---|---:|---:|---:|---|")
    for goal, measured, baseline, target in rows:
        result = (f"{measured - baseline:.0f} ns above" if "above" in target
                  else f"{measured / baseline:.2f}x")
        print(f"| {goal} | {measured:.0f} | {baseline:.0f} | {result} | {target} |")


if __name__ == "__main__":
    main()
