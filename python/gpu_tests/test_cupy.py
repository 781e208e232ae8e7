"""Stream ordering with CuPy on a real GPU (scripts/gpu-test.sh): CuPy producers read by our
consumers, our producers read by CuPy, and CuPy data imported for one stream and handed on to a
third stream, to Arrow and to the host.

CuPy answers ``__dlpack__(stream=c)`` by making ``c`` wait on its *current* stream (the array
API asks no more; CuPy does not know which stream wrote an array), so every export here happens
inside the producer's ``with stream:`` block. Exporting after leaving it is the user's error
(test_export_after_leaving_the_writers_stream_block_is_a_user_error).
"""
import numpy as np
import pytest

from _probe import library

cupy = library("cupy")

import dlpack_abi  # noqa: E402
from _gpu import CUDA, CUDA_MANAGED, N, ROUNDS, SPIN, cupy_writer, expected, ext  # noqa: E402


@pytest.fixture(scope="module")
def late():
    return cupy_writer(cupy)


def stream():
    return cupy.cuda.Stream(non_blocking=True)


def test_ours_to_cupy_on_a_non_blocking_stream():
    for round in range(ROUNDS):
        tensor = ext._cuda_late_tensor(N, float(round), SPIN)
        consumer = stream()
        with consumer:
            array = cupy.from_dlpack(tensor)  # CuPy passes consumer.ptr
            host = cupy.asnumpy(array, stream=consumer)
        consumer.synchronize()
        np.testing.assert_array_equal(host, expected(round))


def test_ours_to_cupy_on_the_default_stream():
    for round in range(ROUNDS):
        tensor = ext._cuda_late_tensor(N, float(round), SPIN)
        array = cupy.from_dlpack(tensor)
        np.testing.assert_array_equal(cupy.asnumpy(array), expected(round))


@pytest.mark.parametrize("per_thread", [False, True])
def test_cupy_to_ours(late, per_thread):
    for round in range(ROUNDS):
        producer = stream()
        with producer:
            array = late(round)
            # Our consumer passes its own stream; CuPy makes it wait on its current stream,
            # the producer's.
            values = ext._cuda_read(array, per_thread=per_thread)
        np.testing.assert_array_equal(np.asarray(values, dtype=np.float32), expected(round))


def test_cupy_through_a_tensor_and_back(late):
    for round in range(ROUNDS):
        producer, consumer = stream(), stream()
        with producer:
            array = late(round)
            tensor = dlpack_abi.Tensor.from_dlpack(array, stream=consumer.ptr)
        assert tensor.__dlpack_device__() == (CUDA, array.device.id)
        with consumer:
            again = cupy.from_dlpack(tensor)
            host = cupy.asnumpy(again, stream=consumer)
        consumer.synchronize()
        np.testing.assert_array_equal(host, expected(round))
        assert again.data.ptr == array.data.ptr, "zero-copy both ways"


def test_export_after_leaving_the_writers_stream_block_is_a_user_error(late):
    """Exporting after ``with producer:`` has ended orders CuPy's *then* current stream (the
    default one) before ours, not the stream that wrote the array: the read may see the
    producer's zeros, a part of its writes, or anything the pool held before, and which one
    depends on timing. Only what is guaranteed is asserted: no crash, the right size, and the
    right values once the producer's stream has been synchronised. (This is how the first GPU
    run's ``test_cupy_to_ours[True]`` and ``test_cupy_through_a_tensor_and_back`` read zeros.)"""
    producer = stream()
    with producer:
        array = late(7)
    early = ext._cuda_read(array)  # the user's error: `producer` is no longer current
    assert len(early) == N
    producer.synchronize()
    np.testing.assert_array_equal(np.asarray(ext._cuda_read(array), dtype=np.float32), expected(7))


def test_cupy_reexported_to_cupy_on_a_third_stream(late):
    """Imported for stream c while CuPy's writer p is current, read by CuPy on d: our export
    must make d wait on c (where the import made the data ready), not hand it over bare."""
    for round in range(ROUNDS):
        p, c, d = stream(), stream(), stream()
        with p:
            array = late(round)
            tensor = dlpack_abi.Tensor.from_dlpack(array, stream=c.ptr)
        with d:
            again = cupy.from_dlpack(tensor)  # CuPy passes d.ptr
            host = cupy.asnumpy(again, stream=d)
        d.synchronize()
        np.testing.assert_array_equal(host, expected(round))
        assert again.data.ptr == array.data.ptr


def test_cupy_reexported_as_an_arrow_device_array(late):
    """The same hand-over through ``__arrow_c_device_array__``: its ``sync_event`` is recorded
    on c after the import's wait, and our Arrow consumer's stream waits on it."""
    for round in range(ROUNDS):
        p, c = stream(), stream()
        with p:
            array = late(round)
            tensor = dlpack_abi.Tensor.from_dlpack(array, stream=c.ptr)
        values = ext._cuda_read_arrow(tensor)
        np.testing.assert_array_equal(np.asarray(values, dtype=np.float32), expected(round))


def managed(late, value):
    """A late write into CUDA managed memory (host-accessible: DLPack's kDLCUDAManaged)."""
    memory = cupy.cuda.malloc_managed(N * 4)
    out = cupy.ndarray((N,), dtype=cupy.float32, memptr=memory)
    return late(value, out=out)


def test_cupy_reexported_to_the_host(late):
    """Managed memory imported for c and copied to the host three ways (a CPU copy through
    ``__dlpack__(dl_device=(1, 0), copy=True)``, NumPy's ``from_dlpack(device="cpu")``, and
    ``tobytes``): the host must wait for c before it reads."""
    for round in range(ROUNDS):
        for read in ("copy", "numpy", "tobytes"):
            p, c = stream(), stream()
            with p:
                array = managed(late, round)
                tensor = dlpack_abi.Tensor.from_dlpack(array, stream=c.ptr)
            assert tensor.__dlpack_device__() == (CUDA_MANAGED, 0)
            if read == "copy":
                copy = dlpack_abi.Tensor.from_dlpack(tensor, dl_device=(1, 0), copy=True)
                assert copy.__dlpack_device__() == (1, 0)
                host = np.frombuffer(copy.tobytes(), dtype=np.float32)
            elif read == "numpy":
                host = np.from_dlpack(tensor, device="cpu")
            else:
                host = np.frombuffer(tensor.tobytes(), dtype=np.float32)
            np.testing.assert_array_equal(host, expected(round), err_msg=read)


def test_a_host_copy_of_device_memory_is_right_or_refused(late):
    """Device memory is not host-accessible: a CPU copy through our ``__dlpack__`` is refused
    with a BufferError, or (should the library learn to copy from the device) holds the right
    values. Never wrong data."""
    p, c = stream(), stream()
    with p:
        array = late(3)
        tensor = dlpack_abi.Tensor.from_dlpack(array, stream=c.ptr)
    try:
        copy = dlpack_abi.Tensor.from_dlpack(tensor, dl_device=(1, 0), copy=True)
    except BufferError:
        return
    np.testing.assert_array_equal(np.frombuffer(copy.tobytes(), dtype=np.float32), expected(3))
