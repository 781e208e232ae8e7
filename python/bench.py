"""Python-side exchange benchmark (BENCHMARKS.md): NumPy's own DLPack exchange as the baseline,
and apache-tvm-ffi's import of the same NumPy array as the peer doing our job, measured in the
same run, reported as ratios of medians.

    .venv/bin/python python/bench.py
"""
import statistics
import sys
import timeit

import numpy as np
import tvm_ffi

import dlpack_abi

REPEATS = 15
NUMBER = 20_000


def per_call_ns(statement):
    runs = timeit.repeat(statement, repeat=REPEATS, number=NUMBER)
    return statistics.median(runs) / NUMBER * 1e9


def main():
    rows = []
    capsules = []
    for shape in [(1,), (1000,), (1000, 1000)]:
        array = np.ones(shape, dtype=np.float32)
        ours = dlpack_abi.Tensor.from_dlpack(array)
        numpy_export = per_call_ns(lambda: np.from_dlpack(array))
        our_export = per_call_ns(lambda: np.from_dlpack(ours))
        our_import = per_call_ns(lambda: dlpack_abi.Tensor.from_dlpack(array))
        peer_import = per_call_ns(lambda: tvm_ffi.from_dlpack(array))
        rows.append((shape, numpy_export, our_export, our_import, peer_import))
        # The producer side alone: a versioned capsule made and dropped unconsumed.
        capsules.append((
            shape,
            per_call_ns(lambda: array.__dlpack__(max_version=(1, 3))),
            per_call_ns(lambda: ours.__dlpack__(max_version=(1, 3))),
        ))
    print(f"numpy {np.__version__}, apache-tvm-ffi {tvm_ffi.__version__}, "
          f"python {sys.version.split()[0]}; median ns per call")
    print("| shape | `np.from_dlpack(numpy)` (ns) | `np.from_dlpack(ours)` (ns) | "
          "`Tensor.from_dlpack(numpy)` (ns) | `tvm_ffi.from_dlpack(numpy)` (ns) | "
          "ours-to-NumPy / NumPy | NumPy-to-ours / NumPy | NumPy-to-ours / tvm-ffi |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for shape, base, export, imported, peer in rows:
        print(f"| {shape} | {base:.0f} | {export:.0f} | {imported:.0f} | {peer:.0f} | "
              f"{export / base:.2f}x | {imported / base:.2f}x | {imported / peer:.2f}x |")
    print()
    print("| shape | NumPy's `__dlpack__(max_version=(1, 3))` (ns) | ours (ns) | ours / NumPy |")
    print("|---|---:|---:|---:|")
    for shape, numpy_capsule, our_capsule in capsules:
        print(f"| {shape} | {numpy_capsule:.0f} | {our_capsule:.0f} | "
              f"{our_capsule / numpy_capsule:.2f}x |")


if __name__ == "__main__":
    main()
