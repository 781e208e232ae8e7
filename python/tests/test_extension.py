"""`tensor_ops` (python/examples/tensor-ops): an extension module written as a pyo3 author would,
with dlpack-abi's public API only, exchanging with NumPy, pyarrow, tvm-ffi and JAX."""
import gc

import jax.numpy as jnp
import numpy as np
import pyarrow as pa
import pytest
import tvm_ffi

import dlpack_abi
from conftest import float64_layouts
import tensor_ops
from tensor_ops import Grid, Ramp


def read_only(array):
    array.flags.writeable = False
    return array


INPUTS = {
    **float64_layouts(),
    "read-only": read_only(np.arange(4.0)),
    "float32": np.arange(5, dtype=np.float32)[::2],
}


@pytest.mark.parametrize("name, wrap", [
    (name, wrap) for wrap in ("numpy", "tvm_ffi", "jax") for name in INPUTS
    # tvm-ffi refuses to import read-only NumPy arrays (its own limit), so it has none to pass.
    if (name, wrap) != ("read-only", "tvm_ffi")
])
def test_scale_takes_any_producer_in_any_layout(name, wrap):
    source = INPUTS[name]
    if wrap == "tvm_ffi":
        argument = tvm_ffi.from_dlpack(source)  # tvm-ffi's tensor, through its exchange table
    elif wrap == "jax":
        source = source.astype(np.float32)  # JAX without x64 has no float64 arrays
        argument = jnp.asarray(source)
    else:
        argument = source
    result = tensor_ops.scale(argument, 2.0)
    seen = np.from_dlpack(result)
    np.testing.assert_array_equal(seen, 2 * source)
    assert seen.dtype == source.dtype and seen.shape == source.shape
    assert seen.flags.writeable, "a fresh result is writable"


def test_scale_takes_pyarrow_arrays():
    result = tensor_ops.scale(pa.array([1.0, 2.0, 3.0]), 3.0)  # pyarrow's __dlpack__
    assert np.from_dlpack(result).tolist() == [3.0, 6.0, 9.0]


@pytest.mark.parametrize("consumer", ["numpy", "tvm_ffi", "jax", "pyarrow"])
def test_every_consumer_reads_the_result(consumer):
    result = tensor_ops.scale(np.arange(4, dtype=np.float32), 0.5)
    if consumer == "numpy":
        values = np.from_dlpack(result)
    elif consumer == "tvm_ffi":
        values = np.from_dlpack(tvm_ffi.from_dlpack(result))
    elif consumer == "jax":
        values = np.asarray(jnp.from_dlpack(result))
    else:
        values = pa.array(result).to_numpy()  # through __arrow_c_array__
    assert values.tolist() == [0.0, 0.5, 1.0, 1.5]


def test_every_error_is_a_python_exception(producer):
    with pytest.raises(TypeError, match="float32 or float64, not int64"):
        tensor_ops.scale(np.arange(3), 1.0)
    with pytest.raises(TypeError):
        tensor_ops.scale([1.0, 2.0], 1.0)  # not a DLPack producer
    with pytest.raises(TypeError):
        tensor_ops.scale(np.arange(3.0), "two")
    malformed = producer.capsule([1.0], ndim=-1)
    with pytest.raises(BufferError, match="ndim"):  # refused by validation, left unconsumed
        tensor_ops.scale(malformed, 1.0)
    del malformed  # its own destructor deletes it, once
    gc.collect()
    assert producer.deleted == 1
    capsule = np.arange(2.0).__dlpack__(max_version=(1, 3))
    assert np.from_dlpack(tensor_ops.scale(capsule, 3.0)).tolist() == [0.0, 3.0]
    with pytest.raises(ValueError, match="already consumed"):
        tensor_ops.scale(capsule, 3.0)  # a capsule is consumed once


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "float32", "float64"])
def test_norm_reads_every_dtype_that_converts_exactly(dtype):
    x = np.array([[0, 3], [0, 4]], dtype=dtype).T[::-1]  # strided: transposed and reversed
    assert tensor_ops.norm(x) == 5.0
    assert tensor_ops.norm(np.zeros((0, 2), dtype=dtype)) == 0.0


def test_norm_refuses_int64_and_names_what_it_takes():
    message = ("DLTensor.dtype is int64, but only int8, uint8, int16, uint16, int32, uint32, "
               "float32, float64 are supported here")
    with pytest.raises(TypeError) as error:
        tensor_ops.norm(np.arange(3, dtype=np.int64))
    assert str(error.value) == message


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_double_keeps_the_dtype_in_any_layout(dtype):
    source = np.arange(6, dtype=dtype).reshape(2, 3).T[::-1]
    seen = np.from_dlpack(tensor_ops.double(source))
    np.testing.assert_array_equal(seen, 2 * source)
    assert seen.dtype == dtype and seen.shape == (3, 2)


def test_double_refuses_int8_with_the_dtypes_it_takes():
    with pytest.raises(TypeError) as error:
        tensor_ops.double(np.arange(3, dtype=np.int8))
    assert str(error.value) == "DLTensor.dtype is int8, but only float32, float64 are supported here"


def test_the_class_is_the_authors_own():
    assert Grid.__module__ == "tensor_ops" and Grid.__name__ == "Grid"


PROTOCOL = ["__dlpack__", "__dlpack_device__", "__dlpack_c_exchange_api__",
            "__arrow_c_device_array__", "__arrow_c_array__"]


def test_the_attribute_adds_the_protocol_to_the_authors_own_block():
    """`#[dlpack_exporter]` above the class's own `#[pymethods]` block: the protocol's dunders
    and the author's constructor, methods and getters, all on one class."""
    for cls in (Grid, Ramp):
        for name in PROTOCOL:
            assert name in vars(cls), (cls, name)
    for cls, getter in ((Grid, "live_exports"), (Ramp, "length")):
        assert type(vars(cls)[getter]).__name__ == "getset_descriptor", (cls, getter)
    ramp = Ramp(5)
    assert ramp.length == 5 and ramp.total() == 10  # the author's own getter and method
    seen = np.from_dlpack(ramp)
    assert seen.tolist() == [0, 1, 2, 3, 4] and seen.dtype == np.int64
    assert seen.flags.writeable, "a fresh vector per export goes out writable"
    seen[0] = 7
    assert np.from_dlpack(ramp).tolist() == [0, 1, 2, 3, 4], "each export is a fresh vector"
    assert ramp.__dlpack_device__() == (1, 0)
    assert pa.array(ramp).to_pylist() == [0, 1, 2, 3, 4]  # __arrow_c_array__
    assert dlpack_abi.Tensor.from_dlpack(ramp).shape == (5,)  # through Ramp's exchange table
    with pytest.raises(ValueError, match="negative"):
        Ramp(-1)


def test_the_class_exports_itself_zero_copy_and_read_only():
    grid = Grid(2, 3)
    seen = np.from_dlpack(grid)
    assert seen.tolist() == [[0, 1, 2], [3, 4, 5]] and seen.dtype == np.float64
    assert not seen.flags.writeable, "shared values go out read-only"
    again = np.from_dlpack(grid)
    assert again.ctypes.data == seen.ctypes.data
    assert grid.live_exports == 2
    copied = np.from_dlpack(grid, copy=True)
    assert copied.flags.writeable and copied.ctypes.data != seen.ctypes.data
    assert grid.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError, match="READ_ONLY"):
        grid.__dlpack__()  # a legacy capsule cannot say read-only
    with pytest.raises(BufferError, match="None for CPU"):
        grid.__dlpack__(max_version=(1, 3), stream=1)
    with pytest.raises(BufferError, match="cannot export"):
        grid.__dlpack__(max_version=(1, 3), dl_device=(2, 0))
    del seen, again
    gc.collect()
    assert grid.live_exports == 0


def test_every_export_of_the_class_is_released_exactly_once():
    grid = Grid(3, 2)
    unconsumed = grid.__dlpack__(max_version=(1, 3))
    consumed = grid.__dlpack__(max_version=(1, 3))
    assert grid.live_exports == 2
    array = np.from_dlpack(_Capsule(consumed))
    with pytest.raises(ValueError, match="incorrect name"):
        np.from_dlpack(_Capsule(consumed))  # consumed once: renamed used_dltensor_versioned
    del unconsumed  # the capsule's destructor releases an export never consumed
    gc.collect()
    assert grid.live_exports == 1
    del array, consumed
    gc.collect()
    assert grid.live_exports == 0


class _Capsule:
    """Hands NumPy a capsule made before: what `np.from_dlpack` calls `__dlpack__` for."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def test_the_stream_hook_sees_what_each_path_asks_for():
    grid = Grid(1, 2)
    assert grid.last_stream is None
    np.from_dlpack(grid)  # __dlpack__ with no stream: a CPU tensor has none to order on
    assert grid.last_stream == "Unspecified"
    grid.__arrow_c_device_array__()  # an Arrow export must be ready for any use: the host's
    assert grid.last_stream == "Host"
    dlpack_abi.Tensor.from_dlpack(grid)  # the exchange table: ready on its current work stream
    assert grid.last_stream == "Unspecified", "a CPU class names no work stream"
    np.from_dlpack(grid, copy=True)  # the host makes the copy
    assert grid.last_stream == "Host"
    np.from_dlpack(grid)
    with pytest.raises(BufferError, match="None for CPU"):
        grid.__dlpack__(max_version=(1, 3), stream=-1)  # refused before the hook runs
    assert grid.last_stream == "Unspecified"


def test_the_class_table_refuses_objects_of_another_type():
    import ctypes

    from conftest import DLManagedTensorVersioned, exchange_table

    table = exchange_table(Grid)
    assert (table.major, table.minor) == (1, 3)
    assert table.dltensor_from_py_object_no_sync is None  # NULL: use the owning export
    export = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object,
                               ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)))(
        table.managed_tensor_from_py_object_no_sync)
    out = ctypes.POINTER(DLManagedTensorVersioned)()
    with pytest.raises(TypeError):
        export(np.arange(3.0), ctypes.byref(out))
    grid = Grid(1, 2)
    assert export(grid, ctypes.byref(out)) == 0 and grid.live_exports == 1
    out.contents.deleter(out)
    assert grid.live_exports == 0


def test_a_panicking_exporter_raises_on_every_path():
    panicking = dlpack_abi.dlpack_abi._PanickingExporter()  # private: not re-exported
    for attempt in (lambda: panicking.__dlpack__(max_version=(1, 3)),
                    lambda: np.from_dlpack(panicking),
                    lambda: dlpack_abi.Tensor.from_dlpack(panicking),  # its exchange table
                    lambda: panicking.__arrow_c_device_array__()):
        with pytest.raises(BaseException, match="the exporter failed"):
            attempt()


def test_consumers_use_the_class_exchange_table():
    grid = Grid(2, 2)
    before = dlpack_abi.counts()
    ours = dlpack_abi.Tensor.from_dlpack(grid)  # through Grid's own table: no Python call
    assert dlpack_abi.counts()["foreign_exchange_imports"] == before["foreign_exchange_imports"] + 1
    assert ours.shape == (2, 2) and ours.readonly
    via_tvm = tvm_ffi.from_dlpack(grid)
    assert via_tvm.data_ptr() == ours.data_ptr
    assert np.from_dlpack(via_tvm).tolist() == [[0.0, 1.0], [2.0, 3.0]]
    del ours, via_tvm
    gc.collect()
    assert grid.live_exports == 0


def test_the_class_reaches_arrow_and_jax_refuses_it_cleanly():
    grid = Grid(2, 3)
    tensors = pa.array(grid)  # __arrow_c_array__: one fixed_shape_tensor row per grid row
    assert tensors.type.extension_name == "arrow.fixed_shape_tensor"
    assert tensors.to_numpy_ndarray().tolist() == [[0, 1, 2], [3, 4, 5]]
    schema, device_array = grid.__arrow_c_device_array__()
    assert "arrow_device_array" in repr(device_array)
    del tensors, schema, device_array
    # JAX 0.10.2 asks for legacy capsules only, which cannot say read-only: refused, not
    # handed out writable.
    with pytest.raises(BufferError, match="READ_ONLY"):
        jnp.from_dlpack(grid)
    gc.collect()
    assert grid.live_exports == 0


def test_docstrings_are_python_not_rust():
    """What ``help()`` shows: reST literals, no Rust markdown (links, code fences, paths)."""
    import inspect
    import re

    seen = 0
    for module in (dlpack_abi, tensor_ops):
        for name, value in vars(module).items():
            if name.startswith("_") or not callable(value):
                continue
            members = [value] + [member for _, member in inspect.getmembers(value)
                                 if inspect.isclass(value)]
            for member in members:
                doc = inspect.getdoc(member) or ""
                if getattr(member, "__module__", None) not in (None, module.__name__,
                                                               "dlpack_abi", "tensor_ops"):
                    continue
                seen += 1
                assert "```" not in doc and "](" not in doc and "::" not in doc, (name, doc)
                assert not re.search(r"(?<!`)`[^`\n]+`(?!`)", doc), (name, doc)
    assert seen > 20


def test_an_arrow_rs_record_batch_reaches_pyarrow_through_the_device_interface():
    """A RecordBatch built in arrow-rs, exported by us as a C device array (which arrow-rs
    cannot do), imported by pyarrow's device capsule import."""
    exported = tensor_ops.record_batch(5)
    schema, array = exported.__arrow_c_device_array__()
    batch = pa.RecordBatch._import_from_c_device_capsule(schema, array)
    assert batch.schema.names == ["id", "name"]
    assert batch.column("id").to_pylist() == [0, 1, 2, 3, 4]
    assert batch.column("name").to_pylist() == [None, "row 1", "row 2", None, "row 4"]
    assert pa.record_batch(exported).equals(batch)  # the public entry point, same data


def test_an_arrow_rs_reader_reaches_pyarrow_and_device_stream_consumers():
    stream = tensor_ops.batches(3, 4, device=False)
    table = pa.RecordBatchReader.from_stream(stream).read_all()  # __arrow_c_stream__
    assert table.num_rows == 12 and table.column("id").to_pylist() == list(range(12))
    with pytest.raises(ValueError):
        stream.__arrow_c_stream__()  # one consumer
    # pyarrow 26 imports no device streams from Python; our consumer reads the device variant.
    assert dlpack_abi.count_rows(tensor_ops.batches(3, 4)) == 12
