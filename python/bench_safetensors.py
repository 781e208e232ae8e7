"""Loading a multi-gigabyte safetensors file into NumPy (BENCHMARKS.md): through
``dlpack_abi.safetensors`` (a memory map, zero-copy) against the reference ``safetensors``
package's ``safetensors.numpy.load_file`` (reads every tensor into memory), side by side.

    pip install ./python
    .venv/bin/python python/bench_safetensors.py [GiB]       # default 2

Generates the file (float32 tensors of 32 MiB, as a model's layers) in a temporary directory,
then runs each loader in a fresh child process, interleaved, three times, and reports the median
of: the time to have every tensor as a NumPy array ("load"), the time to also read every byte
once (a sum over each array: "load + read"), and the child's peak resident set size. The file is
in the page cache (it was just written; the first child of each kind reads it warm too), so the
times are memory, not disk. Mapped file pages count in the RSS once touched, as the copies do.
A benchmark, not a test: it asserts only that both loaders see the same sums.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

TENSOR_BYTES = 32 << 20
ROUNDS = 3

CHILD = r"""
import json, resource, sys, time
import numpy as np
path, loader = sys.argv[1], sys.argv[2]
start = time.perf_counter()
if loader == "dlpack_abi":
    import dlpack_abi.safetensors
    arrays = {k: np.from_dlpack(t) for k, t in dlpack_abi.safetensors.load(path).items()}
else:
    import safetensors.numpy
    arrays = safetensors.numpy.load_file(path)
loaded = time.perf_counter()
rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
total = sum(float(a.sum(dtype=np.float64)) for a in arrays.values())
read = time.perf_counter()
print(json.dumps({"load": loaded - start, "read": read - start, "total": total,
                  "rss_loaded_kib": rss_loaded,
                  "rss_peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def write_file(path, gib):
    """A safetensors file of `gib` GiB of float32 tensors, written as the format says (8 bytes of
    header length, the JSON header padded to 8, the data), streaming one tensor at a time."""
    count = max(1, int(gib * (1 << 30)) // TENSOR_BYTES)
    elements = TENSOR_BYTES // 4
    header = {f"layer.{i}.weight": {"dtype": "F32", "shape": [elements // 1024, 1024],
                                    "data_offsets": [i * TENSOR_BYTES, (i + 1) * TENSOR_BYTES]}
              for i in range(count)}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    rng = np.random.default_rng(0)
    block = rng.standard_normal(elements, dtype=np.float32)
    with open(path, "wb") as out:
        out.write(len(text).to_bytes(8, "little"))
        out.write(text)
        for i in range(count):
            (block + np.float32(i)).tofile(out)
    return count


def run(path, loader):
    done = subprocess.run([sys.executable, "-c", CHILD, path, loader], check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout)


def main():
    gib = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "model.safetensors")
        count = write_file(path, gib)
        size = os.path.getsize(path)
        print(f"{size / (1 << 30):.2f} GiB, {count} float32 tensors of {TENSOR_BYTES >> 20} MiB")
        results = {"dlpack_abi": [], "safetensors": []}
        for _ in range(ROUNDS):
            for loader in results:
                results[loader].append(run(path, loader))
        totals = {loader: {r["total"] for r in runs} for loader, runs in results.items()}
        assert totals["dlpack_abi"] == totals["safetensors"], totals
        median = {loader: {key: statistics.median(r[key] for r in runs)
                           for key in ("load", "read", "rss_loaded_kib", "rss_peak_kib")}
                  for loader, runs in results.items()}
        ours, theirs = median["dlpack_abi"], median["safetensors"]
        print("| loader | load (s) | load + read (s) | peak RSS after load (MiB) | peak RSS (MiB) |")
        print("|---|---|---|---|---|")
        for name, m in (("dlpack_abi.safetensors (mmap)", ours),
                        ("safetensors.numpy.load_file", theirs)):
            print(f"| {name} | {m['load']:.4f} | {m['read']:.3f} | "
                  f"{m['rss_loaded_kib'] / 1024:.0f} | {m['rss_peak_kib'] / 1024:.0f} |")
        print(f"| ours / theirs | {ours['load'] / theirs['load']:.4f}x | "
              f"{ours['read'] / theirs['read']:.2f}x | "
              f"{ours['rss_loaded_kib'] / theirs['rss_loaded_kib']:.3f}x | "
              f"{ours['rss_peak_kib'] / theirs['rss_peak_kib']:.2f}x |")


if __name__ == "__main__":
    main()
