"""The Arrow PyCapsule interface with pyarrow, both directions, and the DLPack bridge."""
import gc

import numpy as np
import pyarrow as pa
import pytest

import dlpack_abi
from dlpack_abi import ArrowArray, ArrowStream, Tensor


def buffer_address(array):
    return array.buffers()[1].address + array.offset * array.type.bit_width // 8


def test_pyarrow_reads_our_tensor_through_both_array_dunders():
    ours = dlpack_abi.ramp(5)
    via_device = pa.array(ours)  # __arrow_c_device_array__
    assert via_device.type == pa.float32()
    assert via_device.to_pylist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert buffer_address(via_device) == ours.data_ptr
    schema, array = ours.__arrow_c_array__()
    via_cpu = pa.Array._import_from_c_capsule(schema, array)
    assert buffer_address(via_cpu) == ours.data_ptr


def test_device_kwargs_rule():
    ours = dlpack_abi.ramp(2)
    ours.__arrow_c_device_array__(future_option=None)
    with pytest.raises(NotImplementedError):
        ours.__arrow_c_device_array__(future_option=1)


def test_pyarrow_array_into_rust_and_back():
    source = pa.array([1, 2, None, 4], pa.int64()).slice(1)
    ours = ArrowArray.from_arrow(source)  # via pyarrow's __arrow_c_device_array__
    assert len(ours) == 3 and ours.device == (1, -1) and ours.format == "l"
    for _ in range(2):  # each export is independent
        again = pa.array(ours)
        assert again.to_pylist() == [2, None, 4]
        assert again.buffers()[1].address == source.buffers()[1].address
    assert pa.DataType._import_from_c_capsule(ours.__arrow_c_schema__()) == pa.int64()
    with pytest.raises(ValueError, match="fields"):
        ours.__arrow_c_array__(requested_schema=pa.struct([("a", pa.int64())]).__arrow_c_schema__())


def test_nested_and_dictionary_arrays_round_trip():
    nested = pa.array([{"x": 1, "y": [1.0, 2.0]}, {"x": 2, "y": []}])
    assert pa.array(ArrowArray.from_arrow(nested)).equals(nested)
    dictionary = pa.array(["a", "b", "a"]).dictionary_encode()
    assert pa.array(ArrowArray.from_arrow(dictionary)).equals(dictionary)


def test_fixed_shape_tensor_to_numpy_zero_copy():
    values = np.arange(24, dtype=np.float32)
    tensor_type = pa.fixed_shape_tensor(pa.float32(), [3, 4])
    storage = pa.FixedSizeListArray.from_arrays(pa.array(values), 12)
    arrow_tensor = pa.ExtensionArray.from_storage(tensor_type, storage)
    ours = Tensor.from_arrow(arrow_tensor)
    assert ours.shape == (2, 3, 4)
    seen = np.from_dlpack(ours)
    np.testing.assert_array_equal(seen, values.reshape(2, 3, 4))
    assert seen.ctypes.data == storage.values.buffers()[1].address
    assert not seen.flags.writeable  # Arrow data is immutable


def test_tensor_to_fixed_shape_tensor_in_pyarrow():
    data = np.arange(12.0).reshape(2, 2, 3)
    ours = Tensor.from_dlpack(data)
    seen = pa.array(ours)
    assert isinstance(seen.type, pa.FixedShapeTensorType)
    assert seen.type.shape == [2, 3]
    np.testing.assert_array_equal(seen.to_numpy_ndarray(), data)
    assert seen.storage.values.buffers()[1].address == data.ctypes.data


def test_our_fixed_shape_tensor_is_pyarrows_canonical_type():
    # The bridge's field: metadata {"shape":[2,3]} and a non-nullable item (what arrow-rs's
    # FixedShapeTensor needs); pyarrow imports it as its own canonical type.
    data = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    schema_capsule, _ = Tensor.from_dlpack(data).__arrow_c_array__()
    field = pa.Field._import_from_c_capsule(schema_capsule)
    assert field.type == pa.fixed_shape_tensor(pa.float32(), [2, 3])
    seen = pa.array(Tensor.from_dlpack(data))
    assert seen.type == pa.fixed_shape_tensor(pa.float32(), [2, 3])
    np.testing.assert_array_equal(seen.to_numpy_ndarray(), data)


def test_pyarrows_permuted_tensor_becomes_strides():
    # pyarrow writes "permutation" and a nullable item: both read. Logical dimension i is
    # physical dimension permutation[i] of the row-major cell.
    values = np.arange(48, dtype=np.float32)
    storage = pa.FixedSizeListArray.from_arrays(pa.array(values), 24)
    tensor_type = pa.fixed_shape_tensor(
        pa.float32(), [2, 3, 4], dim_names=["C", "H", "W"], permutation=[2, 0, 1]
    )
    ours = Tensor.from_arrow(pa.ExtensionArray.from_storage(tensor_type, storage))
    assert ours.shape == (2, 4, 2, 3)
    seen = np.from_dlpack(ours)
    np.testing.assert_array_equal(seen, values.reshape(2, 2, 3, 4).transpose(0, 3, 1, 2))
    assert seen.strides == (96, 4, 48, 16)
    assert seen.ctypes.data == storage.values.buffers()[1].address
    # pyarrow agrees in two dimensions (in three, pyarrow 26.0.1's own strides alias elements).
    square = pa.FixedSizeListArray.from_arrays(pa.array(values[:12]), 6)
    transposed = pa.ExtensionArray.from_storage(
        pa.fixed_shape_tensor(pa.float32(), [2, 3], permutation=[1, 0]), square
    )
    np.testing.assert_array_equal(
        np.from_dlpack(Tensor.from_arrow(transposed)), transposed.to_numpy_ndarray()
    )


def test_streams_both_directions():
    stream = dlpack_abi.int64_stream([[1, 2], [3]])
    chunked = pa.chunked_array(stream)
    assert chunked.to_pylist() == [1, 2, 3]
    with pytest.raises(ValueError, match="already exported"):
        stream.__arrow_c_stream__()
    refused = dlpack_abi.int64_stream([[5]])
    with pytest.raises(ValueError, match="fields"):
        refused.__arrow_c_stream__(pa.struct([("a", pa.int64())]).__arrow_c_schema__())
    assert pa.chunked_array(refused).to_pylist() == [5]  # a refused request consumed nothing
    failing = dlpack_abi.int64_stream([[1]], error="disk on fire")
    with pytest.raises(OSError, match="disk on fire"):
        pa.chunked_array(failing)
    table = pa.table({"a": [1, 2, 3]})
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
    passed = pa.RecordBatchReader.from_stream(ArrowStream.from_arrow(reader))
    assert passed.read_all().equals(table)


def test_refuses_objects_without_the_interface():
    with pytest.raises(TypeError):
        ArrowArray.from_arrow([1, 2, 3])
    # Data DLPack cannot describe: BufferError, as the DLPack Python spec names it.
    with pytest.raises(BufferError, match="nulls|null"):
        Tensor.from_arrow(pa.array([1.0, None]))
    gc.collect()


def test_duckdb_queries_our_streams():
    """DuckDB reads a stream's schema first (`__arrow_c_schema__`, or else it consumes the stream
    for it), then the stream: a SQL query over our streams returns the right rows."""
    import duckdb  # pinned in scripts/test.sh: a missing one fails, it is never skipped
    table = pa.table({"a": [1, 2, 3], "b": ["x", None, "z"]})
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
    ours = ArrowStream.from_arrow(reader)
    schema = pa.schema(ours)  # the schema alone leaves the stream in place
    assert schema.names == ["a", "b"]
    con = duckdb.connect()
    rows = con.sql("select a, b from ours order by a").fetchall()
    assert rows == [(1, "x"), (2, None), (3, "z")]
    with pytest.raises(ValueError, match="already exported"):
        ours.__arrow_c_schema__()


def test_a_pyfunction_takes_pyarrow_and_returns_arrow_readable_tensors():
    result = dlpack_abi.scale(pa.array([1.0, 2.0, 3.0]), 2.0)  # pyarrow's __dlpack__
    assert pa.array(result).to_pylist() == [2.0, 4.0, 6.0]  # our __arrow_c_device_array__


def test_pyfunctions_take_and_return_any_arrow_value():
    nested = pa.array([[1, 2], None, [3]], type=pa.list_(pa.int64()))
    back = dlpack_abi.arrow_passthrough(nested)  # pyarrow in, ours out
    assert isinstance(back, ArrowArray) and pa.array(back).equals(nested)
    table = pa.table({"a": [1, 2, 3, 4]})
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=3))
    assert dlpack_abi.count_rows(reader) == 4
    assert dlpack_abi.count_rows(dlpack_abi.int64_stream([[1, 2], [3]])) == 3
    with pytest.raises(OSError, match="disk on fire") as raised:
        dlpack_abi.count_rows(dlpack_abi.int64_stream([[1]], error="disk on fire"))
    assert raised.value.errno == 5  # EIO, the producer's code
    with pytest.raises(TypeError):
        dlpack_abi.count_rows([1, 2, 3])
