"""Stream and event ordering on every producer path, proven on the CPU with a fake device
producer (``dlpack_abi._RecordingDevice``) whose ordering hook records what it was asked.

The rules: the array API's ``stream`` table (python_spec, reference §6.2), ``dl_device`` on the
CPU implying a producer-side sync (§6.1), the exchange API's ``no_sync`` exports and
``current_work_stream`` (§7), and Arrow's ``sync_event``: a pointer to the event object, owned
by the array until its release (CDeviceDataInterface, reference §5.4).
"""
import ctypes

import numpy as np
import pytest

import dlpack_abi
from conftest import DLManagedTensorVersioned, exchange_table

CUDA, CUDA_MANAGED, ROCM, CPU = 2, 13, 10, 1
Recording = dlpack_abi.dlpack_abi._RecordingDevice  # private: not re-exported

# (device type, stream, what the hook is asked) for the values the table accepts.
ACCEPTED = [
    (CUDA, None, "ready_on:unspecified"),
    (CUDA, -1, "ready_on:no_sync"),
    (CUDA, 1, "ready_on:legacy_default"),
    (CUDA, 2, "ready_on:per_thread_default"),
    (CUDA, 0x5000, "ready_on:handle:20480"),
    (CUDA_MANAGED, 7, "ready_on:handle:7"),
    (ROCM, 0, "ready_on:legacy_default"),
    (ROCM, 3, "ready_on:handle:3"),
    (CPU, None, "ready_on:unspecified"),
]

# (device type, stream, exception, message fragment) for the values it refuses.
REFUSED = [
    (CUDA, 0, BufferError, "ambiguous"),
    (CUDA, -2, ValueError, "neither -1"),
    (ROCM, 1, BufferError, "not supported"),
    (ROCM, 2, BufferError, "not supported"),
    (CPU, 1, BufferError, "None for CPU"),
    (CPU, -1, BufferError, "None for CPU"),
]


def producers(device_type, **kwargs):
    """The two producer paths over one recorder: the exporter class itself, and a ``Tensor``
    that carries its hook."""
    device = Recording([1.0, 2.0, 3.0], device_type, **kwargs)
    return device, [device, device.tensor()]


@pytest.mark.parametrize("device_type,stream,asked", ACCEPTED)
def test_the_hook_is_asked_for_the_consumers_stream(device_type, stream, asked):
    device, paths = producers(device_type)
    for producer in paths:
        capsule = producer.__dlpack__(stream=stream, max_version=(1, 3))
        del capsule
        log = device.take_log()
        if stream == -1 and producer is not device:
            assert log == [], "a Tensor's hook is not called for stream=-1"
        else:
            assert log == [asked]


@pytest.mark.parametrize("device_type,stream,error,fragment", REFUSED)
def test_bad_stream_values_raise_before_the_hook_runs(device_type, stream, error, fragment):
    device, paths = producers(device_type)
    for producer in paths:
        with pytest.raises(error, match=fragment):
            producer.__dlpack__(stream=stream, max_version=(1, 3))
    assert device.take_log() == []


@pytest.mark.parametrize("stream,error,fragment", [
    (2**64, ValueError, "out of range"),
    (2**63, ValueError, "out of range"),
    (-(2**63) - 1, ValueError, "out of range"),
    ("7", TypeError, "must be an int or None"),
    (1.5, TypeError, "must be an int or None"),
])
def test_values_that_are_not_stream_integers_raise(stream, error, fragment):
    device, paths = producers(CUDA)
    for producer in paths:
        with pytest.raises(error, match=fragment):
            producer.__dlpack__(stream=stream, max_version=(1, 3))
    assert device.take_log() == []


def test_a_stream_the_producer_cannot_order_on_is_a_buffer_error():
    device, paths = producers(CUDA, refuse=["per_thread_default"])
    for producer in paths:
        with pytest.raises(BufferError, match="cannot order its data on the per-thread default"):
            producer.__dlpack__(stream=2, max_version=(1, 3))
        producer.__dlpack__(stream=1, max_version=(1, 3))
    assert device.take_log() == ["ready_on:legacy_default"] * 2


def test_a_failing_runtime_is_a_runtime_error():
    device, paths = producers(CUDA, refuse=["runtime"])
    for producer in paths:
        with pytest.raises(RuntimeError, match="cuStreamWaitEvent failed with error 400"):
            producer.__dlpack__(stream=5, max_version=(1, 3))
        with pytest.raises(RuntimeError, match="cuEventRecord failed with error 700"):
            producer.__arrow_c_device_array__()
    assert device.take_log() == []


def test_a_consumer_passes_its_stream_on_import():
    device, paths = producers(CUDA)
    for producer in paths:
        imported = dlpack_abi.Tensor.from_dlpack(producer, stream=0x7777)
        assert imported.__dlpack_device__() == (CUDA, 0)
        assert device.take_log() == ["ready_on:handle:30583"]
        with pytest.raises(BufferError, match="ambiguous"):
            dlpack_abi.Tensor.from_dlpack(producer, stream=0)
    # A Tensor shared with from_dlpack keeps its producer's hook.
    shared = dlpack_abi.Tensor.from_dlpack(paths[1])
    assert device.take_log() == []
    shared.__dlpack__(stream=9, max_version=(1, 3))
    assert device.take_log() == ["ready_on:handle:9"]


def test_a_copy_to_the_cpu_waits_for_the_host():
    # Managed memory is host-accessible: a copy to the CPU is possible, made by the host.
    device, paths = producers(CUDA_MANAGED)
    for producer in paths:
        copy = np.from_dlpack(producer, device="cpu", copy=True)
        assert copy.tolist() == [1.0, 2.0, 3.0]
        assert device.take_log() == ["ready_on:host"]
        with pytest.raises(BufferError, match="stream must be None"):
            producer.__dlpack__(stream=5, dl_device=(CPU, 0), max_version=(1, 3))
    assert device.take_log() == []
    # Device memory the host cannot read has no copy to the CPU, and no hook call.
    device, paths = producers(CUDA)
    for producer in paths:
        with pytest.raises(BufferError):
            producer.__dlpack__(dl_device=(CPU, 0), copy=True, max_version=(1, 3))
    assert device.take_log() == []


class ArrowDeviceArray(ctypes.Structure):
    """The C struct, to read what a consumer reads: the ArrowArray's 80 bytes (LP64), then the
    device fields."""
    _fields_ = [("array", ctypes.c_byte * 80), ("device_id", ctypes.c_int64),
                ("device_type", ctypes.c_int32), ("sync_event", ctypes.c_void_p),
                ("reserved", ctypes.c_int64 * 3)]


def device_struct(capsule):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return ArrowDeviceArray.from_address(get(capsule, b"arrow_device_array"))


def test_arrow_device_exports_carry_the_producers_event_until_release():
    device, paths = producers(CUDA)
    for producer in paths:
        schema, array = producer.__arrow_c_device_array__()
        raw = device_struct(array)
        assert (raw.device_type, raw.device_id) == (CUDA, 0)
        assert raw.sync_event, "a pending export carries an event"
        # A pointer to the event object (the spec's cudaEvent_t*), not the handle itself.
        assert ctypes.c_size_t.from_address(raw.sync_event).value == Recording.EVENT_HANDLE
        log = device.take_log()
        assert log[0] == "record_event"
        # The exporter is asked for data without a sync (the consumer waits on the event); a
        # Tensor's hook is not called for it.
        assert log[1:] == (["ready_on:no_sync"] if producer is device else [])
        del schema, array
        assert device.take_log() == ["event_dropped"], "released with the array, once"


def test_arrow_device_arrays_imported_keep_the_event_until_dropped():
    device, paths = producers(CUDA)
    for producer in paths:
        imported = dlpack_abi.ArrowArray.from_arrow(producer)
        assert imported.device == (CUDA, 0)
        device.take_log()
        del imported
        assert device.take_log() == ["event_dropped"]


def test_arrow_cpu_exports_wait_for_the_host():
    device, paths = producers(CPU)
    for producer in paths:
        schema, array = producer.__arrow_c_array__()
        del schema, array
        assert device.take_log()[-1] == "ready_on:host"
    # A CPU array carries no event: the hook's event is refused, and nothing leaks.
    with pytest.raises(BufferError, match="sync_event"):
        device.__arrow_c_device_array__()
    assert device.take_log() == ["record_event", "ready_on:no_sync", "event_dropped"]


def test_the_exchange_api_exports_ready_on_the_work_stream_it_names():
    device, paths = producers(CUDA)
    table = exchange_table(Recording)
    stream = ctypes.c_void_p(1)
    current = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32,
                               ctypes.POINTER(ctypes.c_void_p))(table.current_work_stream)
    assert current(CUDA, 0, ctypes.byref(stream)) == 0
    assert stream.value == 0xC0FFEE
    tensor_table = exchange_table()
    current = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32,
                               ctypes.POINTER(ctypes.c_void_p))(tensor_table.current_work_stream)
    assert current(CUDA, 0, ctypes.byref(stream)) == 0
    assert stream.value is None, "a Tensor runs no device work: NULL"

    for producer, own in ((device, table), (paths[1], tensor_table)):
        export = ctypes.CFUNCTYPE(
            ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned))
        )(own.managed_tensor_from_py_object_no_sync)
        out = ctypes.POINTER(DLManagedTensorVersioned)()
        assert export(producer, ctypes.byref(out)) == 0
        assert out.contents.dl_tensor.device.device_type == CUDA
        out.contents.deleter(out)
        # The exporter's hook is asked for the stream its class names (0xC0FFEE); the Tensor
        # carries the same hook and names the legacy default stream (NULL).
        expected = "ready_on:handle:12648430" if producer is device else "ready_on:legacy_default"
        assert device.take_log() == [expected]


def test_an_imported_device_array_re_exports_its_event():
    device, _ = producers(CUDA)
    imported = dlpack_abi.ArrowArray.from_arrow(device)
    device.take_log()
    for _ in range(2):
        schema, array = imported.__arrow_c_device_array__()
        raw = device_struct(array)
        assert ctypes.c_size_t.from_address(raw.sync_event).value == Recording.EVENT_HANDLE
        del schema, array
    assert device.take_log() == [], "the event lives while any export does"
    del imported
    assert device.take_log() == ["event_dropped"]


def test_a_tensor_is_not_made_of_an_array_with_a_pending_event():
    device, paths = producers(CUDA)
    for producer in paths:
        with pytest.raises(BufferError, match="pending sync_event"):
            dlpack_abi.Tensor.from_arrow(producer)
        assert device.take_log()[-1] == "event_dropped", "refused and released"
