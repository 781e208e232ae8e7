"""The glue's own cost of a device import, on the CPU: `Tensor.from_dlpack` of a model GPU array
(`dlpack_abi._ModelGpu`, python/src/model.rs; needs a build with `--features model`) through its
exchange table, with the producer working on the legacy default stream (PyTorch's usual case).
The model's runtime stands in for CUDA's, so this measures the glue around the device calls,
not them (BENCHMARKS.md, "The CUDA import from PyTorch"). Median of 21 rounds of 20 000 calls.

    MATURIN_PEP517_ARGS="--features model" pip install ./python && python python/bench_model_import.py
"""
import statistics
import time

import dlpack_abi

ext = dlpack_abi.dlpack_abi
if not hasattr(ext, "_ModelGpu"):
    raise SystemExit("this build has no model GPU: build the wheel with --features model")
gpu = ext._ModelGpu(streams=4)
gpu.current = 0  # the producer's current work stream: the legacy default stream
array = gpu.array(16, 1.0, 0)
gpu.drain()
from_dlpack = dlpack_abi.Tensor.from_dlpack


def run(n):
    for _ in range(n):
        from_dlpack(array)


rounds = []
for _ in range(21):
    start = time.perf_counter_ns()
    run(20_000)
    rounds.append((time.perf_counter_ns() - start) / 20_000)
print(f"Tensor.from_dlpack(model GPU array) through its exchange table: "
      f"{statistics.median(rounds):.1f} ns (median of 21 rounds of 20 000 calls)")
gpu.close()
