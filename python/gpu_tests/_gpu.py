"""What the GPU tests share: the extension's CUDA helpers (feature ``cuda``), the sizes, the
expected values, and the late writers of CuPy and PyTorch.

Importing this skips the importing test module (with the reason) when dlpack_abi was built
without the ``cuda`` feature or the CUDA driver sees no GPU; scripts/gpu-test.sh counts those
skips as failures where ``nvidia-smi`` sees a GPU.

Every producer writes late: a kernel spins for SPIN cycles (about 10 ms) before it writes, on
the producer's own stream. Every consumer reads on its own stream and synchronises only that
stream (or, for host reads, waits on what it was handed). The values are right only if each
hand-over ordered the producer's work before the consumer's, and each check runs ROUNDS times.
"""
import numpy as np
import pytest

import dlpack_abi

ext = dlpack_abi.dlpack_abi
if not hasattr(ext, "_cuda_available"):
    pytest.skip("dlpack_abi was built without the cuda feature (maturin build --features cuda)",
                allow_module_level=True)
if not ext._cuda_available():
    pytest.skip("no GPU: the CUDA driver does not load or sees no device", allow_module_level=True)

N = 1 << 20
SPIN = 20_000_000  # clock cycles, about 10 ms
ROUNDS = 20

# DLPack's device types.
CUDA, CUDA_MANAGED = 2, 13


def expected(value):
    return np.arange(N, dtype=np.float32) + np.float32(value)


def counts():
    """``dlpack_abi.counts()``: the GPU wheel is built with ``counters`` (gpu-test.sh builds it
    with ``--features abi3,cuda,counters``); a wheel without it fails the tests that need it."""
    assert hasattr(dlpack_abi, "counts"), "dlpack_abi was built without the counters feature"
    return dlpack_abi.counts()


# CuPy's late writer, compiled with NVRTC: value + i after SPIN cycles.
LATE_FILL = r"""
extern "C" __global__ void late_fill(float *out, unsigned int n, float value, long long spin) {
    long long start = clock64();
    while (clock64() - start < spin) { }
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + (float)i;
}
"""


def cupy_writer(cupy):
    """``late(value, out=None)``: on CuPy's *current* stream, ``out`` (a new zeroed float32
    array of N by default) is written with ``value + i`` after SPIN cycles; returns it."""
    kernel = cupy.RawKernel(LATE_FILL, "late_fill")

    def late(value, out=None):
        if out is None:
            out = cupy.zeros(N, dtype=cupy.float32)
        else:
            out.fill(0)
        kernel(((N + 255) // 256,), (256,), (out, np.uint32(N), np.float32(value), np.int64(SPIN)))
        return out

    return late


def torch_writer(torch):
    """``late(value)``: on PyTorch's *current* stream, a new zeroed float32 tensor of N is
    written with ``value + i`` after SPIN cycles (``torch.cuda._sleep``, then one ``add``
    kernel: the late writer is PyTorch's own, in Python, no CuPy needed); returns it."""
    base = torch.arange(N, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()

    def late(value):
        out = torch.zeros(N, dtype=torch.float32, device="cuda")
        torch.cuda._sleep(SPIN)
        torch.add(base, value, out=out)
        return out

    return late
