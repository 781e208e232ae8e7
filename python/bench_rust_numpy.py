"""A `ReadwriteTensor<f64>` argument against rust-numpy's `PyReadwriteArray<f64>` (BENCHMARKS.md,
issue 37): what a pyo3 author coming from rust-numpy compares. Which extension publishes
rust-numpy's borrow table decides both costs, so each order runs in a fresh process:

- `rust-numpy-first`: a rust-numpy argument borrows first, and publishes rust-numpy's own table;
  our `ReadwriteTensor` of a NumPy array then takes rust-numpy's borrow as well as ours.
- `ours-first`: our `ReadwriteTensor` borrows first, and publishes the table over our registry;
  rust-numpy's borrows are then registry borrows.

    pip install ./python ./python/examples/tensor-ops
    .venv/bin/python python/bench_rust_numpy.py

Each pair is timed in alternation, 31 rounds of 20 000 calls (medians, and the median of the
rounds' ratios), as python/bench.py times its rows. A benchmark: it asserts nothing.
"""
import os
import statistics
import subprocess
import sys
import timeit

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

REPEATS = 31
NUMBER = 20_000


def measure(order):
    import numpy as np
    import tensor_ops

    x = np.ones(1000, np.float64)
    first, second = (tensor_ops.numpy_element_count_readwrite, tensor_ops.element_count_readwrite)
    if order == "ours-first":
        first, second = second, first
    first(x)
    second(x)
    names = dict(ours=tensor_ops.element_count_readwrite,
                 theirs=tensor_ops.numpy_element_count_readwrite, x=x)
    ours, theirs = [], []
    for round_ in range(REPEATS):
        pairs = ((ours, "ours(x)"), (theirs, "theirs(x)"))
        for runs, statement in pairs if round_ % 2 == 0 else pairs[::-1]:
            runs.append(timeit.timeit(statement, number=NUMBER, globals=names) / NUMBER * 1e9)
    ratio = statistics.median(o / t for o, t in zip(ours, theirs))
    print(f"| {order} | {statistics.median(ours):.0f} | {statistics.median(theirs):.0f} | "
          f"{ratio:.2f}x |")


def main():
    if len(sys.argv) > 1:
        measure(sys.argv[1])
        return
    print("| who publishes rust-numpy's table | `ReadwriteTensor<f64>` (ns) | "
          "rust-numpy `PyReadwriteArray<f64>` (ns) | ratio |")
    print("|---|---:|---:|---:|")
    for order in ("rust-numpy-first", "ours-first"):
        subprocess.run([sys.executable, __file__, order], check=True)


if __name__ == "__main__":
    main()
