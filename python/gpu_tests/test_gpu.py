"""Stream ordering on a real GPU (scripts/gpu-test.sh; not part of CI, which has no GPU).

Every producer here writes late: a kernel spins for SPIN cycles before it writes, on the
producer's own stream. Every consumer reads on its own non-default stream and synchronises only
that stream. The values are right only if the producer ordered its work before the consumer's
stream (``__dlpack__(stream=...)``) or the consumer waited on the producer's ``sync_event``
(Arrow), and each check runs ROUNDS times.
"""
import numpy as np
import pytest

import dlpack_abi

ext = dlpack_abi.dlpack_abi
if not hasattr(ext, "_cuda_available"):
    pytest.skip("dlpack_abi was built without the cuda feature", allow_module_level=True)
if not ext._cuda_available():
    pytest.skip("no GPU", allow_module_level=True)

N = 1 << 20
SPIN = 20_000_000  # clock cycles, about 10 ms
ROUNDS = 20

# The same late writer for CuPy: value + i after SPIN cycles.
LATE_FILL = r"""
extern "C" __global__ void late_fill(float *out, unsigned int n, float value, long long spin) {
    long long start = clock64();
    while (clock64() - start < spin) { }
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + (float)i;
}
"""


def expected(value):
    return np.arange(N, dtype=np.float32) + np.float32(value)


@pytest.fixture(scope="module")
def cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    return cupy


@pytest.fixture(scope="module")
def cupy_late(cupy):
    kernel = cupy.RawKernel(LATE_FILL, "late_fill")

    def late(value, stream):
        with stream:
            out = cupy.zeros(N, dtype=cupy.float32)
            kernel(((N + 255) // 256,), (256,), (out, np.uint32(N), np.float32(value), np.int64(SPIN)))
        return out

    return late


def test_ours_to_cupy_on_a_non_blocking_stream(cupy):
    for round in range(ROUNDS):
        tensor = ext._cuda_late_tensor(N, float(round), SPIN)
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            array = cupy.from_dlpack(tensor)  # CuPy passes stream.ptr
            host = cupy.asnumpy(array, stream=stream)
        stream.synchronize()
        np.testing.assert_array_equal(host, expected(round))


def test_ours_to_cupy_on_the_default_stream(cupy):
    for round in range(ROUNDS):
        tensor = ext._cuda_late_tensor(N, float(round), SPIN)
        array = cupy.from_dlpack(tensor)
        np.testing.assert_array_equal(cupy.asnumpy(array), expected(round))


@pytest.mark.parametrize("per_thread", [False, True])
def test_cupy_to_ours(cupy, cupy_late, per_thread):
    for round in range(ROUNDS):
        stream = cupy.cuda.Stream(non_blocking=True)
        array = cupy_late(round, stream)
        # Our consumer passes its own stream; CuPy must make it wait on `stream`.
        values = ext._cuda_read(array, per_thread=per_thread)
        np.testing.assert_array_equal(np.asarray(values, dtype=np.float32), expected(round))


def test_cupy_through_a_tensor_and_back(cupy, cupy_late):
    for round in range(ROUNDS):
        producer = cupy.cuda.Stream(non_blocking=True)
        array = cupy_late(round, producer)
        consumer = cupy.cuda.Stream(non_blocking=True)
        tensor = dlpack_abi.Tensor.from_dlpack(array, stream=consumer.ptr)
        assert tensor.__dlpack_device__() == (2, array.device.id)
        with consumer:
            again = cupy.from_dlpack(tensor)
            host = cupy.asnumpy(again, stream=consumer)
        consumer.synchronize()
        np.testing.assert_array_equal(host, expected(round))
        assert again.data.ptr == array.data.ptr, "zero-copy both ways"


def test_bad_streams_are_refused_on_cuda(cupy):
    tensor = ext._cuda_late_tensor(16, 0.0, 0)
    with pytest.raises(BufferError, match="ambiguous"):
        tensor.__dlpack__(stream=0, max_version=(1, 3))
    with pytest.raises(ValueError):
        tensor.__dlpack__(stream=-5, max_version=(1, 3))


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax", reason="JAX is not installed")
    try:
        jax.devices("gpu")
    except RuntimeError:
        pytest.skip("JAX has no GPU backend (CUDA wheels not installed)")
    return jax


def test_ours_to_jax(jax):
    for round in range(ROUNDS):
        tensor = ext._cuda_late_tensor(N, float(round), SPIN)
        array = jax.numpy.from_dlpack(tensor)
        np.testing.assert_array_equal(np.asarray(array), expected(round))


def test_jax_to_ours(jax):
    for round in range(ROUNDS):
        array = jax.numpy.arange(N, dtype=jax.numpy.float32) + np.float32(round)
        values = ext._cuda_read(array)
        np.testing.assert_array_equal(np.asarray(values, dtype=np.float32), expected(round))


def test_arrow_device_arrays_carry_a_sync_event_that_consumers_wait_on():
    for round in range(ROUNDS):
        array = ext._cuda_late_arrow(N, float(round), SPIN)
        assert array.device == (2, 0)
        values = ext._cuda_read_arrow(array)
        np.testing.assert_array_equal(np.asarray(values, dtype=np.float32), expected(round))


def test_pyarrow_cuda():
    try:
        import pyarrow.cuda  # noqa: F401
    except ImportError:
        pytest.skip("pyarrow's wheel has no CUDA support (pyarrow.cuda does not import)")
    array = ext._cuda_late_arrow(N, 1.0, SPIN)
    import pyarrow as pa
    imported = pa.Array._import_from_c_device_capsule(*array.__arrow_c_device_array__())
    assert imported.device_type == pa.DeviceAllocationType.CUDA
