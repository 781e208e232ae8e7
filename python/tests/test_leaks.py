"""100 000 round trips with NumPy and pyarrow (also through `#[pyfunction]` argument and return
types) keep memory flat and the counts balanced."""
import gc
import resource

import numpy as np
import pyarrow as pa

import dlpack_abi
from dlpack_abi import ArrowArray, Tensor

ROUNDS = 100_000


def rss_kib():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() // 1024


def test_round_trips_keep_memory_flat():
    array = np.arange(1000.0)
    arrow = pa.array(np.arange(1000, dtype=np.int64))
    allocated = pa.total_allocated_bytes()

    def one_round():
        ours = Tensor.from_dlpack(array)  # NumPy -> Rust
        back = np.from_dlpack(ours)  # Rust -> NumPy
        assert back.ctypes.data == array.ctypes.data
        bridged = pa.array(ArrowArray.from_arrow(arrow))  # pyarrow -> Rust -> pyarrow
        assert bridged.buffers()[1].address == arrow.buffers()[1].address
        # The #[pyfunction] argument and return types, both ways.
        assert np.from_dlpack(dlpack_abi.scale(array, 1.0)).shape == (1000,)
        passed = pa.array(dlpack_abi.arrow_passthrough(arrow))
        assert passed.buffers()[1].address == arrow.buffers()[1].address

    for _ in range(1000):  # warm up allocator pools
        one_round()
    gc.collect()
    start = rss_kib()
    for _ in range(ROUNDS):
        one_round()
    gc.collect()
    grown = rss_kib() - start
    counts = dlpack_abi.counts()
    assert counts["live_exports"] == 0 and counts["live_imports"] == 0, counts
    assert pa.total_allocated_bytes() == allocated
    # 100 000 leaked exports would be well over 10 MiB (one allocation each, 100+ bytes).
    assert grown < 4096, f"RSS grew by {grown} KiB over {ROUNDS} round trips"
