"""Python-side exchange benchmark (BENCHMARKS.md): NumPy's own DLPack exchange as the baseline,
measured in the same run, reported as ratios of medians.

    .venv/bin/python python/bench.py
"""
import statistics
import sys
import timeit

import numpy as np

import dlpack_abi

REPEATS = 15
NUMBER = 20_000


def per_call_ns(statement):
    runs = timeit.repeat(statement, repeat=REPEATS, number=NUMBER)
    return statistics.median(runs) / NUMBER * 1e9


def main():
    rows = []
    for shape in [(1,), (1000,), (1000, 1000)]:
        array = np.ones(shape, dtype=np.float32)
        ours = dlpack_abi.Tensor.from_dlpack(array)
        numpy_export = per_call_ns(lambda: np.from_dlpack(array))
        our_export = per_call_ns(lambda: np.from_dlpack(ours))
        our_import = per_call_ns(lambda: dlpack_abi.Tensor.from_dlpack(array))
        rows.append((shape, numpy_export, our_export, our_import))
    print(f"numpy {np.__version__}, python {sys.version.split()[0]}; median ns per call")
    print("| shape | `np.from_dlpack(numpy)` (ns) | `np.from_dlpack(ours)` (ns) | "
          "`Tensor.from_dlpack(numpy)` (ns) | ours-to-NumPy / NumPy | NumPy-to-ours / NumPy |")
    print("|---|---:|---:|---:|---:|---:|")
    for shape, base, export, imported in rows:
        print(f"| {shape} | {base:.0f} | {export:.0f} | {imported:.0f} | "
              f"{export / base:.2f}x | {imported / base:.2f}x |")


if __name__ == "__main__":
    main()
