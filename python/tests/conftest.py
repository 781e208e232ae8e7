"""Shared helpers: a foreign DLPack producer written with ctypes, with a counting deleter."""
import ctypes
import gc

import numpy as np
import pytest

import dlpack_abi


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", DELETER),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

class ExchangeTable(ctypes.Structure):
    """DLPackExchangeAPI, per dlpack.h 1.3: the header, then five function pointers."""
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("prev_api", ctypes.c_void_p)] + [
        (name, ctypes.c_void_p) for name in (
            "managed_tensor_allocator", "managed_tensor_from_py_object_no_sync",
            "managed_tensor_to_py_object_no_sync", "dltensor_from_py_object_no_sync",
            "current_work_stream")]


def exchange_table(cls=None):
    """The table behind `cls.__dlpack_c_exchange_api__` (`dlpack_abi.Tensor`'s by default)."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    cls = dlpack_abi.Tensor if cls is None else cls
    address = get(cls.__dlpack_c_exchange_api__, b"dlpack_exchange_api")
    return ExchangeTable.from_address(address)


PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
PyCapsule_IsValid = ctypes.pythonapi.PyCapsule_IsValid
PyCapsule_IsValid.restype = ctypes.c_int
PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
PyCapsule_GetName = ctypes.pythonapi.PyCapsule_GetName
PyCapsule_GetName.restype = ctypes.c_char_p
PyCapsule_GetName.argtypes = [ctypes.py_object]


class ForeignProducer:
    """A C-style producer: one f64 tensor per capsule, a deleter that counts its calls, and the
    python_spec capsule destructor (call the deleter unless the capsule was renamed)."""

    def __init__(self):
        self.deleted = 0
        self.keep = []
        self.deleter = DELETER(self._delete)
        self.destructor = DESTRUCTOR(self._destroy)
        self.live = {}

    def _delete(self, managed):
        self.deleted += 1

    def _destroy(self, capsule):
        if PyCapsule_IsValid(capsule, b"dltensor_versioned"):
            managed = self.live.pop(capsule)
            managed.deleter(ctypes.pointer(managed))

    def capsule(self, values, major=1, ndim=None, name=b"dltensor_versioned"):
        data = (ctypes.c_double * len(values))(*values)
        shape = (ctypes.c_int64 * 1)(len(values))
        strides = (ctypes.c_int64 * 1)(1)
        managed = DLManagedTensorVersioned()
        managed.version = DLPackVersion(major, 3)
        managed.deleter = self.deleter
        managed.dl_tensor = DLTensor(
            ctypes.cast(data, ctypes.c_void_p), DLDevice(1, 0), 1 if ndim is None else ndim,
            DLDataType(2, 64, 1), shape, strides, 0,
        )
        self.keep.append((data, shape, strides, managed))
        capsule = PyCapsule_New(ctypes.addressof(managed), name, self.destructor)
        self.live[id(capsule)] = managed
        return capsule


@pytest.fixture
def producer():
    return ForeignProducer()


@pytest.fixture(autouse=True)
def balanced_counts():
    """Every test leaves no export and no import of ours alive."""
    yield
    gc.collect()
    counts = dlpack_abi.counts()
    assert counts["live_exports"] == 0, counts
    assert counts["live_imports"] == 0, counts


def float64_layouts():
    """Fresh float64 arrays in the layouts every argument test covers: contiguous, transposed,
    reversed, 0-d and empty."""
    return {
        "contiguous": np.arange(6.0).reshape(2, 3),
        "transposed": np.arange(6.0).reshape(2, 3).T,
        "reversed": np.arange(6.0)[::-1],
        "0-d": np.array(2.5),
        "empty": np.zeros((0, 3)),
    }
