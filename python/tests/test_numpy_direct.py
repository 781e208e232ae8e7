"""Issue 37: a NumPy 2.1+ array is imported by reading the array itself, not by calling its
``__dlpack__`` (what made a ``VersionedTensor`` argument cost 1.2x nanobind's). That path must
hand over exactly the tensor NumPy's own export does, or leave the decision to NumPy: a property
over arrays of every dtype, layout and flag holds the two imports to the same tensor (shape,
strides, dtype, device, data, flags) or the same refusal, and the counter proves which arrays
took the direct path, so that the property cannot pass by comparing the slow path with itself."""
import platform
import sys
import sysconfig

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dlpack_abi
from dlpack_abi import Tensor

if (tuple(int(part) for part in np.__version__.split(".")[:2]) < (2, 1)
        or platform.python_implementation() != "CPython"
        or sysconfig.get_config_var("Py_GIL_DISABLED")):
    pytest.skip("the direct path is NumPy 2.1+'s on CPython with a GIL", allow_module_level=True)

# Built-in, native-order dtypes the direct path takes; every other goes through `__dlpack__`.
DIRECT = ["?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"]
# NumPy refuses most of these itself (longdouble, non-native order, datetimes, objects, strings,
# void, structured); "<f4"/"=i2" are the native order spelled out (normalized by NumPy).
THROUGH_DLPACK = ["g", "G", ">f4", ">i8", ">c8", "M8[s]", "m8[ms]", "O", "S3", "U2", "V4",
                  "i1,i1"]
NATIVE_SPELLED = ["<f4" if sys.byteorder == "little" else ">f4", "=i2"]
INLINE_NDIM = 4

# The first import of a type notes whether it is NumPy's `ndarray`; the direct path runs from the
# next one on.
Tensor.from_dlpack(np.zeros(1))


def direct_imports():
    return dlpack_abi.counts()["numpy_direct_imports"]


def outcome(make):
    """What an import gives: the tensor's fields, or the refusal's type and message."""
    try:
        tensor = make()
    except Exception as error:  # noqa: BLE001 - the refusal itself is compared
        return ("refused", type(error), str(error))
    return ("tensor", tensor.shape, tensor.strides, tensor.dtype, tensor.__dlpack_device__(),
            tensor.data_ptr, tensor.readonly, tensor.flags)


def takes_direct_path(array):
    """The direct path's conditions, restated from the outside."""
    if type(array) is not np.ndarray or array.ndim > INLINE_NDIM:
        return False
    base = array.base
    while isinstance(base, np.ndarray):
        base = base.base
    if type(base).__name__ == "PyCapsule":
        return False  # `np.from_dlpack`'s memory: NumPy asks the capsule for the device
    dtype = array.dtype
    if not dtype.isnative or dtype.kind not in "biufc" or dtype.char in "gG":
        return False
    return all(stride % dtype.itemsize == 0 for stride in array.strides)


@st.composite
def arrays(draw):
    dtype = np.dtype(draw(st.sampled_from(DIRECT + THROUGH_DLPACK + NATIVE_SPELLED)))
    shape = draw(st.lists(st.integers(0, 4), min_size=0, max_size=INLINE_NDIM + 2))
    array = np.zeros(shape, dtype=dtype)
    # A view: every dimension sliced with a step (reversed ones included), maybe transposed.
    index = tuple(slice(draw(st.integers(0, 1)), None, draw(st.sampled_from([1, 2, -1, -2])))
                  for _ in shape)
    array = array[index + (Ellipsis,)]  # (an array even when 0-d)
    if array.ndim > 1 and draw(st.booleans()):
        array = array.transpose(draw(st.permutations(range(array.ndim))))
    layout = draw(st.sampled_from(["view", "unaligned", "field", "readonly", "subclass",
                                   "from_dlpack"]))
    if layout == "unaligned" and dtype.kind in "biufc" and dtype.itemsize > 1:
        # Elements one byte off their alignment.
        array = np.frombuffer(bytearray(dtype.itemsize * 5 + 1), dtype=dtype, offset=1,
                              count=5)
    elif layout == "field" and dtype.kind in "biufc":
        # A field of a record: strides that are not whole elements (5 bytes for 4-byte data).
        records = np.zeros(6, dtype=[("x", dtype), ("pad", "u1")])
        array = records["x"]
    elif layout == "readonly":
        array.flags.writeable = False
    elif layout == "from_dlpack" and dtype in [np.dtype(name) for name in DIRECT]:
        # Memory NumPy imported through DLPack (its base a capsule), seen through a view.
        array = np.from_dlpack(array)[...]
    elif layout == "subclass":
        array = array.view(np.recarray if dtype.names else np.memmap)
    return array


@settings(max_examples=400, deadline=None)
@given(arrays())
def test_the_direct_path_hands_over_what_numpys_export_does(array):
    before = direct_imports()
    direct = outcome(lambda: Tensor.from_dlpack(array))
    took = direct_imports() - before
    through_dlpack = outcome(lambda: Tensor.from_dlpack(array.__dlpack__(max_version=(1, 3))))
    assert direct == through_dlpack
    assert took == int(takes_direct_path(array)), (array.dtype, array.shape, array.strides)
    if took:
        assert direct[0] == "tensor"


@pytest.mark.parametrize("dtype", DIRECT)
def test_every_direct_dtype_is_read_as_numpy_exports_it(dtype):
    array = np.arange(6).astype(dtype).reshape(2, 3)[:, ::-2]
    before = direct_imports()
    direct = Tensor.from_dlpack(array)
    assert direct_imports() == before + 1
    through = Tensor.from_dlpack(array.__dlpack__(max_version=(1, 3)))
    assert outcome(lambda: direct) == outcome(lambda: through)
    np.testing.assert_array_equal(np.from_dlpack(direct), array)


def test_the_array_is_held_until_the_tensor_is_dropped():
    array = np.arange(4.0)
    references = sys.getrefcount(array)
    tensor = Tensor.from_dlpack(array)
    assert sys.getrefcount(array) == references + 1
    base = np.from_dlpack(tensor)
    np.testing.assert_array_equal(base, [0.0, 1.0, 2.0, 3.0])
    del tensor, base
    assert sys.getrefcount(array) == references  # given back by the deleter


def test_a_reshape_in_place_after_the_import_does_not_change_the_tensor():
    # The extents and strides are copied at the import, as NumPy's export copies them.
    array = np.arange(6.0)
    tensor = Tensor.from_dlpack(array)
    array.shape = (2, 3)
    assert tensor.shape == (6,) and tensor.strides == (1,)


def test_arguments_keep_numpys_refusals():
    # `tensor_ops` has its own copy of the glue (and of its counters): its arguments take the
    # same path, which python/bench.py times.
    tensor_ops = pytest.importorskip("tensor_ops")
    for _ in range(2):  # the first call notes the type, the second reads the array
        assert tensor_ops.element_count(np.ones((2, 3), np.float32)) == 6
    with pytest.raises(BufferError, match="native byte order"):
        tensor_ops.element_count(np.ones(3, ">f4"))
    readonly = np.ones(3)
    readonly.flags.writeable = False
    with pytest.raises(BufferError, match="READ_ONLY"):
        tensor_ops.scale_(readonly, 2.0)
