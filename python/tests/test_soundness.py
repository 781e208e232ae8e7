"""Regressions from the soundness review, through Python: each test failed before its fix."""
import ctypes
import math

import pyarrow as pa
import pytest

import dlpack_abi
from conftest import (DELETER, DLDataType, DLDevice, DLManagedTensorVersioned, DLPackVersion,
                      DLTensor, exchange_table)

# The exchange API's functions take Python objects: call them holding the GIL (PYFUNCTYPE),
# so that an exception they set is raised here.
SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
ALLOCATE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLTensor),
                            ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)),
                            ctypes.c_void_p, SET_ERROR)
DLTENSOR_FROM_PY_OBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object,
                                            ctypes.POINTER(DLTensor))

Py_DecRef = ctypes.pythonapi.Py_DecRef
Py_DecRef.argtypes = [ctypes.c_void_p]


def to_py_object(managed):
    """`managed_tensor_to_py_object_no_sync`: the new `Tensor` (its reference now Python's)."""
    out = ctypes.c_void_p()
    table = exchange_table()
    function = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLManagedTensorVersioned),
                                 ctypes.POINTER(ctypes.c_void_p))
    assert function(table.managed_tensor_to_py_object_no_sync)(managed, ctypes.byref(out)) == 0
    tensor = ctypes.cast(out, ctypes.py_object).value  # a second reference
    Py_DecRef(out)  # the one the function returned
    return tensor


libc = ctypes.CDLL(None)
libc.malloc_usable_size.restype = ctypes.c_size_t
libc.malloc_usable_size.argtypes = [ctypes.c_void_p]


def described_bytes(code, bits, lanes, shape):
    """Bytes a tensor describes, by the spec: packed below 8 bits, else per element rounded up."""
    count = math.prod(shape)
    if bits * lanes < 8:
        return (count * bits * lanes + 7) // 8
    return count * ((bits * lanes + 7) // 8)


@pytest.mark.parametrize("code, bits, lanes, shape", [
    (0, 12, 1, [1000]),     # int12: 2 bytes each; packing bits across elements gave 1500
    (0, 12, 1, [10]),       # the review's example: 20 bytes (16 were allocated)
    (16, 6, 2, [1000]),     # FP6 x2: 12 bits, 2 bytes each
    (1, 4, 1, [1001]),      # uint4: packed, 501 bytes
    (2, 32, 1, [25, 40]),   # float32 control
])
def test_the_allocator_returns_tensors_that_are_fully_writable(code, bits, lanes, shape):
    table = exchange_table()
    allocate = ALLOCATE(table.managed_tensor_allocator)
    extents = (ctypes.c_int64 * len(shape))(*shape)
    prototype = DLTensor(None, DLDevice(1, 0), len(shape), DLDataType(code, bits, lanes),
                         extents, None, 0)
    out = ctypes.POINTER(DLManagedTensorVersioned)()
    errors = []
    set_error = SET_ERROR(lambda ctx, kind, message: errors.append((kind, message)))
    assert allocate(ctypes.byref(prototype), ctypes.byref(out), None, set_error) == 0, errors
    managed = out.contents
    tensor = managed.dl_tensor
    assert list(tensor.shape[:tensor.ndim]) == shape
    size = described_bytes(code, bits, lanes, shape)
    # Every byte the tensor describes lies in the allocation (glibc's usable size bounds it),
    # and writing all of them is fine.
    assert libc.malloc_usable_size(tensor.data) >= size
    assert (tensor.data or 0) % 64 == 0, "our allocations are 64-byte aligned (JAX needs it)"
    ctypes.memset(tensor.data + tensor.byte_offset, 0xAB, size)
    # Handed to our own importer, the tensor validates and reads back what was written.
    ours = to_py_object(out)
    assert ours.nbytes == size and ours.tobytes() == b"\xab" * size


def test_the_allocator_refuses_invalid_dtypes_through_set_error():
    table = exchange_table()
    extents = (ctypes.c_int64 * 1)(4)
    prototype = DLTensor(None, DLDevice(1, 0), 1, DLDataType(2, 32, 0), extents, None, 0)
    out = ctypes.POINTER(DLManagedTensorVersioned)()
    errors = []
    set_error = SET_ERROR(lambda ctx, kind, message: errors.append((kind, message)))
    status = ALLOCATE(table.managed_tensor_allocator)(ctypes.byref(prototype), ctypes.byref(out),
                                                      None, set_error)
    assert status == -1 and not out
    assert errors == [(b"ValueError", b"invalid dtype, negative extent or size overflow")]


def test_from_bytes_refuses_data_shorter_than_the_tensor_it_describes():
    # int12 x 10 is 20 bytes; 15 bytes (packed bits) used to be accepted, and read past the copy.
    with pytest.raises(ValueError, match="outside the buffer's 15 bytes"):
        dlpack_abi.Tensor.from_bytes(bytes(15), (0, 12, 1), [10])
    tensor = dlpack_abi.Tensor.from_bytes(bytes(range(20)), (0, 12, 1), [10])
    assert tensor.nbytes == 20 and tensor.tobytes() == bytes(range(20))
    with pytest.raises(ValueError, match="outside the buffer"):
        dlpack_abi.Tensor.from_bytes(bytes(8), (2, 32, 1), [2], strides=[-1])


class PaddedProducer:
    """One padded FP4 tensor (one element per byte), with a counting deleter."""

    def __init__(self):
        self.deleted = 0
        self.deleter = DELETER(self._delete)
        self.data = (ctypes.c_uint8 * 4)(1, 2, 3, 4)
        self.shape = (ctypes.c_int64 * 1)(4)
        self.strides = (ctypes.c_int64 * 1)(1)
        self.managed = DLManagedTensorVersioned()
        self.managed.version = DLPackVersion(1, 3)
        self.managed.deleter = self.deleter
        self.managed.flags = 4  # IS_SUBBYTE_TYPE_PADDED
        self.managed.dl_tensor = DLTensor(ctypes.cast(self.data, ctypes.c_void_p), DLDevice(1, 0),
                                          1, DLDataType(17, 4, 1), self.shape, self.strides, 0)

    def _delete(self, managed):
        self.deleted += 1


def test_a_padded_tensor_has_no_bare_dltensor():
    table = exchange_table()
    producer = PaddedProducer()
    tensor = to_py_object(ctypes.pointer(producer.managed))
    assert not tensor.readonly and tensor.flags == 4 and tensor.nbytes == 4
    # A bare DLTensor has no flags: padded elements would be read as packed ones.
    bare = DLTensor()
    with pytest.raises(BufferError, match="IS_SUBBYTE_TYPE_PADDED"):
        DLTENSOR_FROM_PY_OBJECT(table.dltensor_from_py_object_no_sync)(tensor, ctypes.byref(bare))
    # The managed export keeps the flag.
    again = dlpack_abi.Tensor.from_dlpack(tensor)
    assert again.flags & 4 and again.tobytes() == bytes([1, 2, 3, 4])
    del tensor, again
    assert producer.deleted == 1


class ArrowArrayBase(ctypes.Structure):
    pass


ArrowArrayBase._fields_ = [
    ("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("buffers", ctypes.c_void_p), ("children", ctypes.c_void_p), ("dictionary", ctypes.c_void_p),
    ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p),
]


class ArrowDeviceArray(ctypes.Structure):
    _fields_ = [("array", ArrowArrayBase), ("device_id", ctypes.c_int64),
                ("device_type", ctypes.c_int32), ("sync_event", ctypes.c_void_p),
                ("reserved", ctypes.c_int64 * 3)]


class OnlyDeviceArrays:
    """A producer with `__arrow_c_device_array__` only, whose CPU arrays may carry an event."""

    def __init__(self, source, event=None):
        self.source, self.event = source, event

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        schema, array = self.source.__arrow_c_device_array__(requested_schema)
        if self.event is not None:
            get = ctypes.pythonapi.PyCapsule_GetPointer
            get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
            raw = ArrowDeviceArray.from_address(get(array, b"arrow_device_array"))
            raw.sync_event = ctypes.addressof(self.event)
        return schema, array


def test_a_pending_sync_event_is_not_dropped_by_the_cpu_fallback():
    source = dlpack_abi.ArrowArray.from_arrow(pa.array([1, 2, None, 4], pa.int64()))
    assert dlpack_abi.sum_int64(OnlyDeviceArrays(source)) == 7
    event = ctypes.c_uint64(0)  # stands for a cudaEvent_t nobody has waited on
    with pytest.raises(BufferError, match="pending sync_event"):
        dlpack_abi.sum_int64(OnlyDeviceArrays(source, event))
    # Refused and released: the autouse fixture checks that no export stays alive.


def test_a_stream_survives_a_capsule_that_cannot_be_made():
    _testcapi = pytest.importorskip("_testcapi")
    failures = 0
    for nth in range(40):
        stream = dlpack_abi.int64_stream([[1, 2], [3]])
        try:
            _testcapi.set_nomemory(nth, nth + 1)
            try:
                capsule = stream.__arrow_c_stream__()
            finally:
                _testcapi.remove_mem_hooks()
        except MemoryError:
            failures += 1
            # Nothing was handed out: the stream is still here, whole.
            assert pa.chunked_array(stream).to_pylist() == [1, 2, 3], nth
        else:
            assert pa.chunked_array(_Capsule(capsule)).to_pylist() == [1, 2, 3], nth
    assert failures > 0, "no allocation of the export was made to fail"


class _Capsule:
    """Offers an already exported stream capsule to pyarrow."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __arrow_c_stream__(self, requested_schema=None):
        return self.capsule


def test_an_exception_in_flight_survives_a_capsule_destructor():
    """A capsule that dies while an exception propagates (a temporary the eval loop drops) runs
    its destructor, which deletes the export and leaves the exception as it was."""
    import numpy as np

    tensor = dlpack_abi.Tensor.from_dlpack(np.arange(3.0))
    with pytest.raises(KeyError):
        {}[tensor.__dlpack__(max_version=(1, 3))]  # the capsule is a key never found
    assert dlpack_abi.counts()["live_exports"] == 0


# A capsule name must outlive the capsule: kept here for the life of the module.
_FOREIGN_NAME = ctypes.create_string_buffer(b"someone_elses_name")


def test_a_capsule_renamed_by_a_stranger_is_reported_not_deleted(monkeypatch):
    """A capsule whose name is neither ours nor the consumed one holds a pointer we cannot trust:
    its destructor reports it (unraisable) and leaves the tensor alone. The report names the
    destructor, not the dying capsule: with the capsule as its object (the python_spec reference
    code's choice) the hook's arguments destroyed it a second time, and this test crashed."""
    import sys

    import numpy as np

    reported = []  # what the hook saw, as text: keeping its arguments would keep their objects
    monkeypatch.setattr(sys, "unraisablehook",
                        lambda args: reported.append((str(args.exc_value), str(args.object))))
    tensor = dlpack_abi.Tensor.from_dlpack(np.arange(3.0))
    capsule = tensor.__dlpack__(max_version=(1, 3))
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    rename = ctypes.pythonapi.PyCapsule_SetName
    rename.restype, rename.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_void_p]
    address = get(capsule, b"dltensor_versioned")
    assert rename(capsule, ctypes.addressof(_FOREIGN_NAME)) == 0
    del capsule
    assert reported == [("PyCapsule_GetPointer called with incorrect name",
                         "a DLPack capsule's destructor")]
    assert dlpack_abi.counts()["live_exports"] == 1  # left alone: release it ourselves
    managed = DLManagedTensorVersioned.from_address(address)
    managed.deleter(ctypes.cast(address, ctypes.POINTER(DLManagedTensorVersioned)))
