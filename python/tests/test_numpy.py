"""DLPack exchange with NumPy, both directions."""
import ctypes
import gc
import sys

import numpy as np
import pytest

import dlpack_abi
from dlpack_abi import Tensor

# (numpy dtype, DLPack (code, bits, lanes)): every dtype both sides support.
DTYPES = [
    ("bool", (6, 8, 1)),
    ("int8", (0, 8, 1)), ("int16", (0, 16, 1)), ("int32", (0, 32, 1)), ("int64", (0, 64, 1)),
    ("uint8", (1, 8, 1)), ("uint16", (1, 16, 1)), ("uint32", (1, 32, 1)), ("uint64", (1, 64, 1)),
    ("float16", (2, 16, 1)), ("float32", (2, 32, 1)), ("float64", (2, 64, 1)),
    ("complex64", (5, 64, 1)), ("complex128", (5, 128, 1)),
]


@pytest.mark.parametrize("name,dtype", DTYPES)
def test_numpy_reads_our_tensor_in_place(name, dtype):
    expected = (np.arange(12) % 5).astype(name).reshape(3, 4)
    ours = Tensor.from_bytes(expected.tobytes(), dtype, [3, 4])
    seen = np.from_dlpack(ours)
    assert seen.dtype == np.dtype(name)
    assert seen.ctypes.data == ours.data_ptr
    np.testing.assert_array_equal(seen, expected)
    assert seen.flags.writeable


def test_read_only_is_respected_and_legacy_refuses_it():
    ours = dlpack_abi.ramp(4)
    seen = np.from_dlpack(ours)
    assert not seen.flags.writeable
    np.testing.assert_array_equal(seen, [0, 1, 2, 3])
    with pytest.raises(BufferError, match="legacy"):
        ours.__dlpack__()  # legacy capsule: no way to say read-only
    copied = ours.__dlpack__(copy=True)  # a legacy copy is fine: it is the consumer's
    assert PyCapsule_name(copied) == b"dltensor"


def PyCapsule_name(capsule):
    from conftest import PyCapsule_GetName
    return PyCapsule_GetName(capsule)


def test_zero_d_and_empty():
    scalar = Tensor.from_bytes(np.float64(2.5).tobytes(), (2, 64, 1), [])
    seen = np.from_dlpack(scalar)
    assert seen.shape == () and seen[()] == 2.5
    empty = Tensor.from_bytes(b"", (0, 32, 1), [0, 3])
    seen = np.from_dlpack(empty)
    assert seen.shape == (0, 3) and seen.dtype == np.int32
    back = Tensor.from_dlpack(np.zeros((0, 5)))
    assert back.shape == (0, 5) and back.tobytes() == b""


def test_legacy_only_request():
    ours = Tensor.from_bytes(np.arange(3, dtype=np.int16).tobytes(), (0, 16, 1), [3])
    capsule = ours.__dlpack__()  # max_version=None: what a legacy consumer asks for
    assert PyCapsule_name(capsule) == b"dltensor"
    old = LegacyOnly(ours)
    seen = np.from_dlpack(old)
    np.testing.assert_array_equal(seen, [0, 1, 2])
    assert seen.ctypes.data == ours.data_ptr
    # Our import: max_version first, then the legacy call; legacy data comes back read-only.
    old.attempts.clear()
    imported = Tensor.from_dlpack(old)
    assert old.attempts == [["max_version"], []]
    assert imported.data_ptr == ours.data_ptr and imported.readonly
    with pytest.raises(TypeError):  # a copy cannot be asked of a legacy producer
        Tensor.from_dlpack(old, copy=True)


class LegacyOnly:
    """A producer from before max_version: keywords are a TypeError."""

    def __init__(self, inner):
        self.inner = inner
        self.attempts = []

    def __dlpack__(self, **kwargs):
        self.attempts.append(sorted(kwargs))
        if set(kwargs) - {"stream"}:
            raise TypeError(f"unexpected keywords {sorted(kwargs)}")
        return self.inner.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


def test_copy_and_device_rules():
    ours = Tensor.from_bytes(np.arange(6.0).tobytes(), (2, 64, 1), [2, 3])
    copied = np.from_dlpack(ours, copy=True)
    assert copied.ctypes.data != ours.data_ptr and copied.flags.writeable
    np.testing.assert_array_equal(copied, np.arange(6.0).reshape(2, 3))
    assert np.from_dlpack(ours, copy=False).ctypes.data == ours.data_ptr
    assert np.from_dlpack(ours, device="cpu").ctypes.data == ours.data_ptr
    with pytest.raises(BufferError):
        ours.__dlpack__(max_version=(1, 3), dl_device=(2, 0))  # CUDA: no copy across devices
    with pytest.raises(BufferError):
        ours.__dlpack__(max_version=(1, 3), stream=1)  # CPU takes stream=None
    assert ours.__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("case", ["c", "fortran", "negative", "readonly", "sliced"])
def test_importing_numpy_arrays(case):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    array = {
        "c": base,
        "fortran": np.asfortranarray(base),
        "negative": base[::-1, ::-2],
        "readonly": base.copy(),
        "sliced": base[1:3, 2:5],
    }[case]
    if case == "readonly":
        array.flags.writeable = False
    ours = Tensor.from_dlpack(array)
    assert ours.shape == array.shape
    assert ours.strides == tuple(s // array.itemsize for s in array.strides)
    assert ours.data_ptr == array.ctypes.data
    assert ours.dtype == (2, 32, 1)
    assert ours.readonly == (case == "readonly")
    assert ours.tobytes() == array.tobytes()  # the elements, read by Rust in row-major order
    again = np.from_dlpack(ours)
    assert again.ctypes.data == array.ctypes.data
    assert again.flags.writeable == (case != "readonly")
    np.testing.assert_array_equal(again, array)


def test_rust_functions_import_and_export():
    assert dlpack_abi.total(np.array([1.5, 2.5, 4.0])) == 8.0
    with pytest.raises(BufferError, match="not contiguous"):
        dlpack_abi.total(np.arange(3.0)[::2])  # not contiguous: typed slices refuse
    with pytest.raises(TypeError, match="DLTensor.dtype is float32, but the requested type is float64"):
        dlpack_abi.total(np.arange(3, dtype=np.float32))
    with pytest.raises(TypeError, match="DLPack"):
        dlpack_abi.total([1.0, 2.0])


def test_refused_capsule_is_left_to_its_destructor(producer):
    bad = producer.capsule([1.0, 2.0], major=2)
    with pytest.raises(BufferError, match="version"):
        Tensor.from_dlpack(bad)
    assert PyCapsule_name(bad) == b"dltensor_versioned"  # untouched
    assert producer.deleted == 0  # ours never calls a deleter it does not own
    del bad
    gc.collect()
    assert producer.deleted == 1  # the producer's own destructor freed it, once
    bad = producer.capsule([1.0], ndim=-1)
    with pytest.raises(BufferError, match="ndim"):
        Tensor.from_dlpack(bad)
    del bad
    gc.collect()
    assert producer.deleted == 2
    good = producer.capsule([1.0, 2.0, 3.0])
    tensor = Tensor.from_dlpack(good)
    assert PyCapsule_name(good) == b"used_dltensor_versioned"
    with pytest.raises(ValueError, match="already consumed"):
        Tensor.from_dlpack(good)
    assert np.from_dlpack(tensor).tolist() == [1.0, 2.0, 3.0]
    del good  # renamed: the producer's destructor must not delete it
    gc.collect()
    assert producer.deleted == 2
    del tensor
    gc.collect()
    assert producer.deleted == 3  # our drop ran the deleter, once


def test_unconsumed_capsule_frees_its_tensor():
    ours = dlpack_abi.ramp(3)
    capsule = ours.__dlpack__(max_version=(1, 3))
    assert dlpack_abi.counts()["live_exports"] == 1
    del capsule
    assert dlpack_abi.counts()["live_exports"] == 0


def test_tensor_outlives_its_python_producer():
    array = np.arange(1000.0)
    refs = sys.getrefcount(array)
    ours = Tensor.from_dlpack(array)
    assert sys.getrefcount(array) > refs  # NumPy's export holds the array
    address = array.ctypes.data
    del array
    gc.collect()
    seen = np.from_dlpack(ours)
    assert seen.ctypes.data == address and seen[999] == 999.0


def test_dtypes_and_devices_read_as_python_names_them():
    ours = Tensor.from_bytes(np.arange(3, dtype=np.float32).tobytes(), (2, 32, 1), [3])
    assert repr(ours) == "Tensor(shape=(3,), dtype=float32, device=cpu:0, readonly=False)"
    frozen = Tensor.from_bytes(bytes(48), (0, 64, 1), [2, 3, 1], readonly=True)
    assert repr(frozen) == "Tensor(shape=(2, 3, 1), dtype=int64, device=cpu:0, readonly=True)"
    complex_pairs = Tensor.from_dlpack(np.zeros(2, dtype=np.complex64))
    assert "dtype=complex64" in repr(complex_pairs)


def test_our_buffers_are_64_byte_aligned():
    """Every buffer the glue allocates (from_bytes, copies) is 64-byte aligned: JAX refuses a
    zero-copy import of anything less, and it is a cache line."""
    for n in (1, 3, 17, 1000):
        assert Tensor.from_bytes(bytes(4 * n), (2, 32, 1), [n]).data_ptr % 64 == 0
    # Our copy: NumPy asks our __dlpack__ for copy=True.
    ours = Tensor.from_bytes(np.arange(6, dtype=np.float32).tobytes(), (2, 32, 1), [6])
    copied = np.from_dlpack(ours, copy=True)
    assert copied.ctypes.data != ours.data_ptr and copied.ctypes.data % 64 == 0
    assert copied.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.mark.parametrize("source", [
    np.arange(6.0).reshape(2, 3),            # contiguous
    np.arange(6.0).reshape(2, 3).T,          # transposed
    np.arange(6.0)[::-1],                    # reversed
    np.array(2.5),                           # 0-d
    np.zeros((0, 3)),                        # empty
], ids=["contiguous", "transposed", "reversed", "0-d", "empty"])
def test_a_pyfunction_takes_and_returns_tensors(source):
    result = dlpack_abi.scale(source, 2.0)
    seen = np.from_dlpack(result)
    np.testing.assert_array_equal(seen, 2.0 * source)
    assert seen.flags.writeable, "a fresh result is writable"
    seen[...] = 0  # NumPy may write it


def test_a_pyfunction_argument_takes_read_only_and_refuses_cleanly():
    frozen = np.arange(3.0)
    frozen.flags.writeable = False
    assert np.from_dlpack(dlpack_abi.scale(frozen, 1.0)).tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError, match="float32, but the requested type is float64"):
        dlpack_abi.scale(np.arange(3, dtype=np.float32), 1.0)
    with pytest.raises(TypeError):
        dlpack_abi.scale([1.0, 2.0], 1.0)  # not a DLPack producer
    capsule = np.arange(2.0).__dlpack__(max_version=(1, 3))
    assert np.from_dlpack(dlpack_abi.scale(capsule, 3.0)).tolist() == [0.0, 3.0]
    with pytest.raises(ValueError, match="already consumed"):
        dlpack_abi.scale(capsule, 3.0)  # a capsule is consumed once


def test_a_type_that_may_gain_an_exchange_table_is_asked_every_time():
    """Only types that cannot change are remembered (NumPy's ndarray, our Tensor); a Python class
    may gain `__dlpack_c_exchange_api__` later, so each import asks it again."""
    asked = []

    class Meta(type):
        def __getattr__(cls, name):
            asked.append(name)
            raise AttributeError(name)

    class Producer(metaclass=Meta):
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **kwargs):
            return self.array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    for _ in range(2):
        assert Tensor.from_dlpack(Producer(np.arange(3.0))).shape == (3,)
    assert asked.count("__dlpack_c_exchange_api__") == 2


def test_a_pyclass_of_ones_own_exports_itself():
    image = dlpack_abi.Image(2, 3)
    seen = np.from_dlpack(image)
    assert seen.tolist() == [[0, 1, 2], [3, 4, 5]] and seen.dtype == np.uint8
    assert not seen.flags.writeable  # shared pixels go out read-only
    again = np.from_dlpack(image)
    assert again.ctypes.data == seen.ctypes.data  # zero-copy, every time
    copied = np.from_dlpack(image, copy=True)
    assert copied.flags.writeable and copied.ctypes.data != seen.ctypes.data
    assert Tensor.from_dlpack(image).shape == (2, 3)
    with pytest.raises(BufferError):
        image.__dlpack__()  # legacy capsules cannot say read-only


def test_importing_our_own_tensor_shares_it():
    writable = Tensor.from_bytes(np.arange(3, dtype=np.int32).tobytes(), (0, 32, 1), [3])
    frozen = Tensor.from_bytes(bytes(12), (0, 32, 1), [3], readonly=True)
    for ours in (writable, frozen):
        again = Tensor.from_dlpack(ours)  # shared, as an export would be: no copy, same access
        assert again.data_ptr == ours.data_ptr and again.readonly == ours.readonly
        assert dlpack_abi.from_dlpack(ours).data_ptr == ours.data_ptr
        copied = Tensor.from_dlpack(ours, copy=True)
        assert copied.data_ptr != ours.data_ptr and copied.tobytes() == ours.tobytes()
    assert np.from_dlpack(Tensor.from_dlpack(writable)).flags.writeable
    assert not np.from_dlpack(Tensor.from_dlpack(frozen)).flags.writeable
